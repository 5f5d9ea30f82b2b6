//! Codex CLI 0.169.0's screen as the evaluation's typist reads it, and the
//! keys it presses there (the `pane::Pane` seam of the evaluation). Read from the
//! captures in `fixtures/providers/codex/snapshots/`.
//!
//! * The composer is the row whose `›` at column 0 is bold (history rows
//!   draw a dim `› `, an approval dialog's selected option is bold and
//!   inverse across the row). It is empty when the rest of the row is the
//!   dim placeholder (`Ask Codex to do anything`).
//! * Busy: a status line with `esc to interrupt` (`• Working (2s • esc to
//!   interrupt)`). The composer row looks the same while busy.
//! * A dialog or list that takes the keys, by its footer
//!   ([`DIALOG_FOOTERS`]): a command's or a file change's approval (`Press
//!   enter to confirm or esc to cancel`, `eval-permission-dialog.json`,
//!   `edit-approval-dialog.json`), a question with options
//!   (`request_user_input`: `enter to submit answer`,
//!   `choice-dialog.json`), Plan mode's `Implement this plan?` and the
//!   pickers `/model`, `/permissions`, `/review` (`enter select · esc
//!   back`, `plan-approval-dialog.json`, `picker-*.json`), the `/resume`
//!   browser (`esc exit`). The selected option is the bold and inverse row
//!   that starts with `›` (at col 0, at col 2 in a question), `› N.`.
//!   Return takes it, Esc declines, cancels the question (it interrupts the
//!   turn) or closes the list without changing anything.
//! * Which dialogs the mock model can open in the evaluation's setup
//!   (manual mode, Default collaboration mode): a command's approval
//!   (`mock:permission`) and a file change's (`mock:edit`, Codex's
//!   interception of an `apply_patch` heredoc). A question
//!   (`request_user_input`) and a plan approval work only in Plan mode,
//!   so the typist types `/plan` first (`setup_command`). The picker is
//!   `/permissions`: one level, Return keeps the current mode, Esc closes
//!   it, and its selected option is the current mode (`4. Read Only
//!   (current)` in manual mode), not 1. (`/model` and `/review` open a
//!   second list on Return, and `/model` would switch the model.)
//! * `codex resume --last` resumes the most recent session.

use crate::pane::{Dialog, DialogKind, Keys, Pane, Resume, shows};
use ding::pty::wire::Snapshot;

pub struct CodexPane;

pub static PANE: CodexPane = CodexPane;

const PROMPT: &str = "› ";

/// The composer's row: its index and what follows the prompt.
fn composer(screen: &Snapshot) -> Option<(usize, &str)> {
    screen
        .rows
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, row)| {
            let text = row.strip_prefix(PROMPT)?;
            let bold_prompt = screen.runs.iter().any(|run| {
                usize::from(run.row) == index
                    && run.col == 0
                    && run.text.starts_with('›')
                    && run.bold
                    && !run.inverse
                    && !run.dim
            });
            bold_prompt.then_some((index, text))
        })
}

/// Footers of the dialogs and lists that take every key (see the module
/// comment for which shows which).
const DIALOG_FOOTERS: [&str; 4] = [
    "Press enter to confirm or esc to cancel",
    "enter to submit answer",
    "enter select · esc back",
    "esc exit",
];

/// The number of the selected option: the bold and inverse run that starts
/// with `›` (a list draws it at col 0, a question at col 2), `› N. ...`.
fn selected_option(screen: &Snapshot) -> Option<u32> {
    screen
        .runs
        .iter()
        .filter(|run| run.bold && run.inverse && run.col <= 2)
        .find_map(|run| {
            let rest = run.text.strip_prefix('›')?.trim_start();
            let (number, _) = rest.split_once('.')?;
            number.parse().ok()
        })
}

/// What a person types into Codex 0.169.0.
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
    picker_command: Some("/permissions"),
    // A question (`request_user_input`) and a proposed plan's approval
    // exist only in Plan mode.
    setup_command: Some(("/plan", &[DialogKind::Choice, DialogKind::PlanApproval])),
    // `enter confirm · esc skip`: skip leaves that hook untrusted and goes
    // on (Return would open the hooks browser).
    startup_keys: &[b"\x1b"],
    resume: Resume::Subcommand(&["resume", "--last"]),
    compact_command: "/compact",
    clear_command: "/clear",
    // Ctrl+C at a composer that holds text clears it (at an empty one it
    // would begin to quit).
    empty_composer_keys: b"\x03",
};

impl Pane for CodexPane {
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
        let text = text.trim_end();
        text.is_empty()
            || screen.runs.iter().any(|run| {
                usize::from(run.row) == row
                    && run.col == 2
                    && run.dim
                    && run.text.trim_end() == text
            })
    }

    fn busy(&self, screen: &Snapshot) -> bool {
        shows(screen, "esc to interrupt")
    }

    fn dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if !DIALOG_FOOTERS.iter().any(|footer| shows(screen, footer)) {
            return None;
        }
        Some(Dialog {
            selected: selected_option(screen),
        })
    }

    fn startup_dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        // A hook of the person's own not yet trusted (`home.rs`).
        if !shows(screen, "Hooks need review") {
            return None;
        }
        Some(Dialog {
            selected: selected_option(screen),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::fixtures::{self, reads};
    use crate::pane::{Reading, read};

    #[test]
    fn every_kind_it_names_is_read_and_the_picker_opens_with_its_command() {
        assert!(PANE.dialog_kinds().contains(&DialogKind::FileEdit));
        assert!(PANE.dialog_kinds().contains(&DialogKind::Picker));
        // A question and a plan approval need Plan mode, which the
        // evaluation's setup does not start in: the typist enters it.
        for kind in [DialogKind::Choice, DialogKind::PlanApproval] {
            assert!(PANE.dialog_kinds().contains(&kind), "{kind:?}");
            assert_eq!(PANE.setup_command(kind), Some("/plan"), "{kind:?}");
        }
        assert_eq!(PANE.setup_command(DialogKind::FileEdit), None);
        assert_eq!(PANE.picker_command(), Some("/permissions"));
        assert!(PANE.dialog(&capture("picker-permissions")).is_some());
    }

    fn capture(name: &str) -> Snapshot {
        fixtures::capture("codex/snapshots", name)
    }

    const CASES: [(&str, Reading); 27] = [
        ("idle-empty-placeholder", reads(true, true, false, None)),
        ("idle-after-turn", reads(true, true, false, None)),
        ("eval-idle-empty", reads(true, true, false, None)),
        ("eval-idle-after-turn", reads(true, true, false, None)),
        ("eval-after-decline", reads(true, true, false, None)),
        ("draft", reads(true, false, false, None)),
        ("eval-draft", reads(true, false, false, None)),
        (
            "shared/draft-plus-pasted-notice",
            reads(true, false, false, None),
        ),
        ("busy-command-running", reads(true, true, true, None)),
        ("eval-busy-command", reads(true, true, true, None)),
        ("shared/busy-slow-model", reads(true, true, true, None)),
        ("busy-queued", reads(true, true, true, None)),
        (
            "shared/busy-draft-tab-to-queue",
            reads(true, false, true, None),
        ),
        ("approval-dialog", reads(false, false, false, Some(1))),
        (
            "shared/approval-dialog-after-paste",
            reads(false, false, false, Some(1)),
        ),
        (
            "eval-permission-dialog",
            reads(false, false, false, Some(1)),
        ),
        ("edit-approval-dialog", reads(false, false, false, Some(1))),
        ("idle-after-edit-approved", reads(true, true, false, None)),
        ("idle-after-edit-cancelled", reads(true, true, false, None)),
        // The question's footer says `esc to interrupt`: its turn runs.
        ("choice-dialog", reads(false, false, true, Some(1))),
        ("idle-after-choice", reads(true, true, false, None)),
        ("plan-approval-dialog", reads(false, false, false, Some(1))),
        ("idle-after-plan-declined", reads(true, true, false, None)),
        ("picker-model", reads(false, false, false, Some(1))),
        ("picker-permissions", reads(false, false, false, Some(4))),
        ("picker-review", reads(false, false, false, Some(1))),
        // No session to resume: nothing is selected.
        (
            "picker-resume",
            Reading {
                ready: false,
                empty_composer: false,
                busy: false,
                dialog: Some(Dialog { selected: None }),
            },
        ),
    ];

    #[test]
    fn the_startup_hooks_review_is_read_and_is_not_the_composer() {
        for name in ["hooks-review-modal", "hooks-review-modal-remote"] {
            let screen = capture(name);
            assert_eq!(
                PANE.startup_dialog(&screen),
                Some(Dialog { selected: Some(1) }),
                "{name}"
            );
            assert!(!PANE.ready(&screen), "{name}");
        }
        for name in [
            "eval-idle-empty",
            "eval-permission-dialog",
            "trust-folder-dialog",
        ] {
            assert_eq!(PANE.startup_dialog(&capture(name)), None, "{name}");
        }
    }

    #[test]
    fn every_capture_reads_as_a_person_sees_it() {
        for (name, expected) in CASES {
            assert_eq!(read(&PANE, &capture(name)), expected, "{name}");
        }
    }

    #[test]
    fn resuming_puts_the_subcommand_right_after_the_binary() {
        let argv = vec!["codex".to_string(), "--flag".into()];
        assert_eq!(PANE.resume(&argv), ["codex", "resume", "--last", "--flag"]);
        assert_eq!(
            PANE.resume(&["codex".to_string()]),
            ["codex", "resume", "--last"]
        );
    }
}
