//! Codex CLI 0.169.0's screen as the evaluation's typist reads it, and the
//! keys it presses there (the `eval::pane::Pane` seam). Read from the
//! captures in `fixtures/providers/codex/snapshots/`.
//!
//! * The composer is the row whose `›` at column 0 is bold (history rows
//!   draw a dim `› `, an approval dialog's selected option is bold and
//!   inverse across the row). It is empty when the rest of the row is the
//!   dim placeholder (`Ask Codex to do anything`).
//! * Busy: a status line with `esc to interrupt` (`• Working (2s • esc to
//!   interrupt)`). The composer row looks the same while busy.
//! * An approval dialog: the footer `Press enter to confirm or esc to
//!   cancel`, the selected option `› N.`. Return takes the selected option
//!   (the default is `1. Yes, proceed`), Esc declines.
//! * `codex resume --last` resumes the most recent session.

use crate::eval::pane::{Dialog, Pane, shows};
use crate::pty::wire::Snapshot;

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

impl Pane for CodexPane {
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
        if !shows(screen, "Press enter to confirm or esc to cancel") {
            return None;
        }
        let selected = screen.rows.iter().find_map(|row| {
            let (number, _) = row.strip_prefix(PROMPT)?.split_once('.')?;
            number.parse().ok()
        });
        Some(Dialog { selected })
    }

    fn answer(&self, consent: bool) -> &'static [u8] {
        if consent { b"\r" } else { b"\x1b" }
    }

    fn resume(&self, argv: &[String]) -> Vec<String> {
        let mut resumed = argv[..1.min(argv.len())].to_vec();
        resumed.extend(["resume".to_string(), "--last".to_string()]);
        resumed.extend(argv.iter().skip(1).cloned());
        resumed
    }

    fn compact_command(&self) -> &'static str {
        "/compact"
    }

    fn clear_command(&self) -> &'static str {
        "/clear"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::pane::fixtures::{self, reads};
    use crate::eval::pane::{Reading, read};

    fn capture(name: &str) -> Snapshot {
        fixtures::capture("codex/snapshots", name)
    }

    const CASES: [(&str, Reading); 16] = [
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
    ];

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
