//! Claude Code 2.1.328's screen as the evaluation's typist reads it, and
//! the keys it presses there (the `pane::Pane` seam of the evaluation). Read from the
//! captures in `fixtures/providers/claude/screens/`, the ones its screen
//! grammar is tested on.
//!
//! * The composer is a row that starts with `❯` right below a full-width
//!   `─` rule (which ends with the session's name once it has one,
//!   `eval-idle-renamed-session`), with another rule below its last line (a
//!   long text wraps onto more rows). It is empty when nothing follows the `❯` but
//!   U+00A0, or when what follows is dim (a placeholder such as "Press up
//!   to edit queued messages").
//! * Busy: the footer says `esc to interrupt`.
//! * A dialog replaces the composer; the selected option is the bottom-most
//!   row whose `❯` is followed by a number (`❯ 1.`). Every one opens with
//!   option 1 selected; Return takes the selected option and Esc cancels:
//!   - a command permission (`eval-permission-dialog`): `Do you want to
//!     proceed?`, `❯ 1. Yes`; Esc rejects the command;
//!   - a file write (`eval-file-write-dialog`): `Do you want to create
//!     NAME?`, `❯ 1. Yes` (Return creates the file, Esc rejects it);
//!   - the question menu of `AskUserQuestion` (`eval-choice-menu`): the
//!     model's options, then `Type something.` and `Chat about this`, with
//!     the footer `Enter to select · ↑/↓ to navigate · Esc to cancel`; its
//!     `❯ 1.` is at col 0. Return answers option 1, Esc declines to answer;
//!   - the plan approval (`eval-plan-approval`): `Ready to code?`, the plan,
//!     `❯ 1. Yes, and use auto mode` (leaves plan mode for auto mode),
//!     `2. Yes, manually approve edits`, `3. Tell Claude what to change`;
//!     Esc rejects the plan and stays in plan mode. With no plan file it is
//!     the short `Exit plan mode?` (`eval-plan-exit-dialog`);
//!   - the `/model` picker (`eval-picker-model`): `Select model`, `❯ 1.
//!     Default (recommended) ✔` (the model in use); Esc keeps the model
//!     ("Kept model as …"), Return saves the same one.
//! * `--continue` resumes the most recent session of the project.
//!
//! A plan approval needs plan mode (`/plan`, or Shift-Tab twice from manual
//! mode): typed in manual mode, `mock:plan` fails with "You are not in plan
//! mode" and shows nothing, so the typist types `/plan` first
//! (`setup_command`).

use crate::pane::{Dialog, DialogKind, Keys, Pane, Resume, shows};
use ding::pty::wire::Snapshot;

pub struct ClaudePane;

pub static PANE: ClaudePane = ClaudePane;

const PROMPT: char = '❯';

fn is_rule(row: &str) -> bool {
    row.chars().count() >= 40 && row.chars().all(|c| c == '─')
}

/// The rule above the composer, which ends with the session's name once it
/// has one: `──…── NAME ─`.
fn is_top_rule(row: &str) -> bool {
    is_rule(row)
        || row.strip_suffix(" ─").is_some_and(|rest| {
            rest.split_once(' ').is_some_and(|(rule, name)| {
                rule.chars().count() >= 20
                    && rule.chars().all(|c| c == '─')
                    && !name.trim().is_empty()
                    && !name.contains('─')
            })
        })
}

/// The composer's first row: its index and what follows the prompt.
fn composer(screen: &Snapshot) -> Option<(usize, &str)> {
    let rows = &screen.rows;
    (1..rows.len()).rev().find_map(|index| {
        let text = rows[index].strip_prefix(PROMPT)?;
        if !is_top_rule(&rows[index - 1]) {
            return None;
        }
        let closed = rows[index + 1..].iter().any(|row| is_rule(row));
        closed.then_some((index, text))
    })
}

/// A row only a dialog shows: its question (a command's `Do you want to
/// proceed?`, a file's `Do you want to create NAME?`), a plan approval's
/// title, or the footer of the question menu and the `/model` picker.
fn opens_dialog(row: &str) -> bool {
    (row.starts_with("Do you want to ") && row.ends_with('?'))
        || row == "Ready to code?"
        || row == "Exit plan mode?"
        || row.contains("Esc to cancel")
}

/// What a person types into Claude Code 2.1.328.
const KEYS: Keys = Keys {
    consent: b"\r",
    refuse: b"\x1b",
    dialog_kinds: &[
        DialogKind::Command,
        DialogKind::FileEdit,
        DialogKind::Choice,
        DialogKind::PlanApproval,
        DialogKind::Picker,
    ],
    picker_command: Some("/model"),
    // `ExitPlanMode` shows its dialog only in plan mode.
    setup_command: Some(("/plan", &[DialogKind::PlanApproval])),
    startup_keys: &[b"\x1b[B", b"\r"],
    resume: Resume::Options(&["--continue"]),
    compact_command: "/compact",
    clear_command: "/clear",
    // Ctrl+C at a composer that holds text clears it (at an empty one it
    // would begin to exit).
    empty_composer_keys: b"\x03",
};

impl Pane for ClaudePane {
    fn keys(&self) -> &'static Keys {
        &KEYS
    }

    fn ready(&self, screen: &Snapshot) -> bool {
        composer(screen).is_some() && self.dialog(screen).is_none()
    }

    fn empty_composer(&self, screen: &Snapshot) -> bool {
        let Some((row, text)) = composer(screen) else {
            return false;
        };
        let typed = text.trim_start_matches(['\u{a0}', ' ']).trim_end();
        if typed.is_empty() {
            return true;
        }
        // A placeholder: every drawn character after the prompt is dim
        // (its first cell may be the drawn cursor, inverse).
        let dim: String = screen
            .runs
            .iter()
            .filter(|run| usize::from(run.row) == row && (run.dim || run.inverse))
            .map(|run| run.text.as_str())
            .collect();
        screen
            .runs
            .iter()
            .any(|run| usize::from(run.row) == row && run.dim)
            && dim.trim_end() == typed
    }

    fn busy(&self, screen: &Snapshot) -> bool {
        shows(screen, "esc to interrupt")
    }

    fn dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if !screen.rows.iter().any(|row| opens_dialog(row.trim())) {
            return None;
        }
        // From the bottom: the dialog is there, and an earlier prompt in
        // the history above it may start with a number too.
        let selected = screen.rows.iter().rev().find_map(|row| {
            let rest = row.trim_start().strip_prefix(PROMPT)?.trim_start();
            let (number, _) = rest.split_once(". ")?;
            number.parse().ok()
        });
        Some(Dialog { selected })
    }

    fn startup_dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if !shows(screen, "Is this a project you created or one you trust?") {
            return None;
        }
        // Its options are not numbered: "No, exit" comes first (and is
        // selected when it opens), "Yes, I trust this folder" second.
        let selected = screen.rows.iter().find_map(|row| {
            match row.trim_start().strip_prefix(PROMPT)?.trim() {
                "No, exit" => Some(1),
                "Yes, I trust this folder" => Some(2),
                _ => None,
            }
        });
        Some(Dialog { selected })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::fixtures::{self, reads};
    use crate::pane::{Reading, read};

    fn capture(name: &str) -> Snapshot {
        fixtures::capture("claude/screens", name)
    }

    const CASES: [(&str, Reading); 22] = [
        ("earlier-idle-empty", reads(true, true, false, None)),
        ("earlier-idle-after-turn", reads(true, true, false, None)),
        ("eval-idle-empty", reads(true, true, false, None)),
        ("eval-idle-after-turn", reads(true, true, false, None)),
        ("eval-after-decline", reads(true, true, false, None)),
        ("earlier-draft", reads(true, false, false, None)),
        ("eval-draft", reads(true, false, false, None)),
        (
            "earlier-draft-plus-pasted-notice",
            reads(true, false, false, None),
        ),
        ("earlier-busy-tool-running", reads(true, true, true, None)),
        ("eval-busy-command", reads(true, true, true, None)),
        (
            "earlier-busy-queued-dim-placeholder",
            reads(true, true, true, None),
        ),
        (
            "earlier-permission-dialog",
            reads(false, false, false, Some(1)),
        ),
        (
            "earlier-permission-dialog-after-paste",
            reads(false, false, false, Some(1)),
        ),
        (
            "eval-permission-dialog",
            reads(false, false, false, Some(1)),
        ),
        (
            "eval-file-write-dialog",
            reads(false, false, false, Some(1)),
        ),
        ("eval-choice-menu", reads(false, false, false, Some(1))),
        ("eval-plan-approval", reads(false, false, false, Some(1))),
        ("eval-plan-exit-dialog", reads(false, false, false, Some(1))),
        ("eval-picker-model", reads(false, false, false, Some(1))),
        ("eval-idle-plan-mode", reads(true, true, false, None)),
        ("eval-idle-named-session", reads(true, true, false, None)),
        ("eval-idle-renamed-session", reads(true, true, false, None)),
    ];

    #[test]
    fn every_capture_reads_as_a_person_sees_it() {
        for (name, expected) in CASES {
            assert_eq!(read(&PANE, &capture(name)), expected, "{name}");
        }
    }

    #[test]
    fn the_startup_trust_dialog_is_read_with_its_unnumbered_selection() {
        let screen = capture("trust-folder-dialog");
        assert_eq!(
            PANE.startup_dialog(&screen),
            Some(Dialog { selected: Some(1) })
        );
        assert!(!PANE.ready(&screen));
        let mut moved = screen.clone();
        for row in &mut moved.rows {
            *row = row
                .replace("❯ No, exit", "  No, exit")
                .replace("  Yes, I trust this folder", "❯ Yes, I trust this folder");
        }
        assert_eq!(
            PANE.startup_dialog(&moved),
            Some(Dialog { selected: Some(2) })
        );
        for name in [
            "eval-idle-empty",
            "eval-permission-dialog",
            "startup-after-trust",
        ] {
            assert_eq!(PANE.startup_dialog(&capture(name)), None, "{name}");
        }
    }

    #[test]
    fn a_moved_selection_is_read() {
        let mut screen = capture("eval-permission-dialog");
        for row in &mut screen.rows {
            if row.starts_with(" ❯ 1.") {
                *row = row.replacen(" ❯ 1.", "   1.", 1);
            } else if row.starts_with("   4. No") {
                *row = " ❯ 4. No".into();
            }
        }
        assert_eq!(PANE.dialog(&screen), Some(Dialog { selected: Some(4) }));
    }

    #[test]
    fn a_numbered_prompt_in_the_history_is_not_the_selection() {
        // The question menu's selection is at col 0, like an earlier
        // prompt echoed above it.
        let mut screen = capture("eval-choice-menu");
        let prompt = screen
            .rows
            .iter()
            .position(|row| row.starts_with("❯ mock:choice"))
            .expect("the echoed prompt");
        screen.rows[prompt] = "❯ 3. do the third thing".into();
        for row in &mut screen.rows[prompt + 1..] {
            if row.starts_with("❯ 1.") {
                *row = row.replacen("❯ 1.", "  1.", 1);
            } else if row.starts_with("  2.") {
                *row = row.replacen("  2.", "❯ 2.", 1);
            }
        }
        assert_eq!(PANE.dialog(&screen), Some(Dialog { selected: Some(2) }));
    }

    #[test]
    fn the_kinds_that_work_and_the_picker_command() {
        assert_eq!(
            PANE.dialog_kinds(),
            [
                DialogKind::Command,
                DialogKind::FileEdit,
                DialogKind::Choice,
                DialogKind::PlanApproval,
                DialogKind::Picker
            ]
        );
        assert_eq!(PANE.picker_command(), Some("/model"));
        assert_eq!(PANE.setup_command(DialogKind::PlanApproval), Some("/plan"));
        assert_eq!(PANE.setup_command(DialogKind::Choice), None);
    }

    #[test]
    fn resuming_continues_the_last_session() {
        let argv = vec![
            "claude".to_string(),
            "--permission-mode".into(),
            "manual".into(),
        ];
        assert_eq!(
            PANE.resume(&argv),
            ["claude", "--permission-mode", "manual", "--continue"]
        );
        assert_eq!(PANE.answer(true), b"\r");
        assert_eq!(PANE.answer(false), b"\x1b");
    }
}
