//! Gemini CLI 0.61.0's screen as the evaluation's typist reads it, and the
//! keys it presses there (the `pane::Pane` seam of the evaluation). Read from the
//! captures in `fixtures/providers/gemini/snapshots/`, the ones its screen
//! grammar is tested on, but with a person's eyes, not the grammar's code.
//!
//! * The composer is the row ` > ` a few rows below the bottom-most
//!   full-width `─` rule. It is empty when it shows the placeholder `Type
//!   your message or @path/to/file`.
//! * Busy: the row above the rule says `esc to cancel`, or the hooks'
//!   label runs with a spinner.
//! * A dialog replaces the composer with a box; the selected option is the
//!   row `● N.`. Every one opens with option 1 selected; Return takes it
//!   and Esc cancels:
//!   - a command (`dialog-shell`): `Allow execution of [Shell]?`, `● 1.
//!     Allow once`; Esc rejects the command;
//!   - a file write (`dialog-edit`): `Apply this change?`, `● 1. Allow
//!     once`; Esc rejects it;
//!   - the `ask_user` question (`dialog-ask-user`): `Answer Questions`, the
//!     model's options and `Enter a custom value`, `● 1.` selected, the
//!     footer `Enter to select · ↑/↓ to navigate · Esc to cancel`; Esc
//!     cancels the turn;
//!   - the `/model` picker (`picker-model`): `Select Model`, `● 1. Auto`;
//!     Esc closes it (`(Press Esc to close)`).
//!
//! A plan approval (`dialog-plan-approval`) takes two model calls on
//! Gemini CLI (the plan written into its plans directory, then
//! `exit_plan_mode` naming it), which the mock model does not script: not
//! among the kinds row 6 samples.
//! * At startup, in a home that asks (`Setup::ask_at_startup`), the folder
//!   trust question (`startup-trust-folder`): `Do you trust the files in
//!   this folder?`, `● 1. Trust folder` selected; Return trusts it.
//! * `--resume latest` resumes the most recent session of the project.

use crate::pane::{Dialog, DialogKind, Keys, Pane, Resume, shows};
use ding::pty::wire::Snapshot;

pub struct GeminiPane;

pub static PANE: GeminiPane = GeminiPane;

const PLACEHOLDER: &str = "Type your message or @path/to/file";

fn is_rule(row: &str) -> bool {
    row.chars().count() >= 40 && row.chars().all(|c| c == '─')
}

/// The bottom-most rule's index.
fn rule(screen: &Snapshot) -> Option<usize> {
    screen.rows.iter().rposition(|row| is_rule(row))
}

/// What the composer row holds after its ` > `.
fn composer(screen: &Snapshot) -> Option<&str> {
    let rule = rule(screen)?;
    screen.rows.iter().skip(rule + 1).take(3).find_map(|row| {
        row.strip_prefix(" >")
            .filter(|rest| rest.is_empty() || rest.starts_with(' '))
    })
}

/// The option a row selects: `● N. …` inside a box.
fn selected(row: &str) -> Option<u32> {
    let rest = row.trim_start().strip_prefix('│')?.trim_start();
    let rest = rest.strip_prefix('●')?.trim_start();
    rest.split_once('.')?.0.parse().ok()
}

/// A row only a dialog shows.
fn opens_dialog(row: &str) -> bool {
    row.contains("Allow execution of")
        || row.contains("Apply this change?")
        || row.contains("Press Esc to close")
        || row.contains("Esc to close")
        || row.contains("Esc to cancel")
}

/// What a person types into Gemini CLI 0.61.0.
const KEYS: Keys = Keys {
    consent: b"\r",
    refuse: b"\x1b",
    dialog_kinds: &[
        DialogKind::Command,
        DialogKind::FileEdit,
        DialogKind::Picker,
    ],
    picker_command: Some("/model"),
    setup_command: None,
    // "1. Trust folder" is selected when it opens.
    startup_keys: &[b"\r"],
    resume: Resume::Options(&["--resume", "latest"]),
    compact_command: "/compress",
    clear_command: "/clear",
    // Ctrl+C at a composer that holds text clears it (at an empty one it
    // would begin to exit).
    empty_composer_keys: b"\x03",
};

impl Pane for GeminiPane {
    fn keys(&self) -> &'static Keys {
        &KEYS
    }

    fn ready(&self, screen: &Snapshot) -> bool {
        composer(screen).is_some() && self.dialog(screen).is_none()
    }

    fn empty_composer(&self, screen: &Snapshot) -> bool {
        composer(screen).is_some_and(|rest| rest.trim() == PLACEHOLDER || rest.trim().is_empty())
    }

    fn busy(&self, screen: &Snapshot) -> bool {
        let Some(rule) = rule(screen) else {
            return false;
        };
        screen.rows[rule.saturating_sub(2)..rule].iter().any(|row| {
            row.contains("esc to cancel")
                || row
                    .chars()
                    .nth(1)
                    .is_some_and(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
        })
    }

    fn dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if composer(screen).is_some() || !screen.rows.iter().any(|row| opens_dialog(row)) {
            return None;
        }
        Some(Dialog {
            selected: screen.rows.iter().find_map(|row| selected(row)),
        })
    }

    fn startup_dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if !shows(screen, "Do you trust the files in this folder?") {
            return None;
        }
        Some(Dialog {
            selected: screen.rows.iter().find_map(|row| selected(row)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::{self, fixtures};

    fn capture(name: &str) -> Snapshot {
        fixtures::capture("gemini/snapshots", name)
    }

    #[test]
    fn the_typist_reads_idle_busy_and_drafts() {
        for name in [
            "idle-empty",
            "idle-after-turn",
            "after-clear",
            "idle-after-esc-busy",
        ] {
            assert!(pane::idle(&PANE, &capture(name)), "{name}");
        }
        for name in [
            "busy-thinking",
            "busy-streaming",
            "busy-hooks-indicator",
            "busy-queued",
        ] {
            let screen = capture(name);
            assert!(PANE.busy(&screen), "{name}");
            assert!(!pane::idle(&PANE, &screen), "{name}");
        }
        let draft = capture("draft");
        assert!(PANE.ready(&draft));
        assert!(!PANE.empty_composer(&draft));
    }

    #[test]
    fn the_typist_sees_each_dialog_with_option_one_selected() {
        for name in [
            "dialog-shell",
            "dialog-edit",
            "dialog-ask-user",
            "picker-model",
        ] {
            let screen = capture(name);
            assert_eq!(
                PANE.dialog(&screen),
                Some(Dialog { selected: Some(1) }),
                "{name}"
            );
            assert!(!PANE.ready(&screen), "{name}");
        }
        assert_eq!(PANE.dialog(&capture("idle-empty")), None);
        let trust = capture("startup-trust-folder");
        assert_eq!(
            PANE.startup_dialog(&trust),
            Some(Dialog { selected: Some(1) })
        );
        assert_eq!(PANE.startup_dialog(&capture("idle-empty")), None);
    }

    #[test]
    fn resuming_asks_for_the_latest_session() {
        assert_eq!(
            PANE.resume(&["gemini".into()]),
            ["gemini", "--resume", "latest"]
        );
    }
}
