//! Claude Code 2.1.328's screen as the evaluation's typist reads it, and
//! the keys it presses there (the `eval::pane::Pane` seam). Read from the
//! captures in `fixtures/providers/claude/screens/`, the ones its screen
//! grammar is tested on.
//!
//! * The composer is a row that starts with `❯` right below a full-width
//!   `─` rule, with another rule below its last line (a long text wraps
//!   onto more rows). It is empty when nothing follows the `❯` but
//!   U+00A0, or when what follows is dim (a placeholder such as "Press up
//!   to edit queued messages").
//! * Busy: the footer says `esc to interrupt`.
//! * A permission dialog replaces the composer: `Do you want to
//!   proceed?` and the options, the selected one marked ` ❯ N.`. Return
//!   takes the selected option (the default is `1. Yes`), Esc cancels.
//! * `--continue` resumes the most recent session of the project.

use crate::eval::pane::{Dialog, Pane, shows};
use crate::pty::wire::Snapshot;

pub struct ClaudePane;

pub static PANE: ClaudePane = ClaudePane;

const PROMPT: char = '❯';

fn is_rule(row: &str) -> bool {
    row.chars().count() >= 40 && row.chars().all(|c| c == '─')
}

/// The composer's first row: its index and what follows the prompt.
fn composer(screen: &Snapshot) -> Option<(usize, &str)> {
    let rows = &screen.rows;
    (1..rows.len()).rev().find_map(|index| {
        let text = rows[index].strip_prefix(PROMPT)?;
        if !is_rule(&rows[index - 1]) {
            return None;
        }
        let closed = rows[index + 1..].iter().any(|row| is_rule(row));
        closed.then_some((index, text))
    })
}

impl Pane for ClaudePane {
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
        if !screen
            .rows
            .iter()
            .any(|row| row.trim() == "Do you want to proceed?")
        {
            return None;
        }
        let selected = screen.rows.iter().find_map(|row| {
            let rest = row.trim_start().strip_prefix(PROMPT)?.trim_start();
            let (number, _) = rest.split_once('.')?;
            number.parse().ok()
        });
        Some(Dialog { selected })
    }

    fn answer(&self, consent: bool) -> &'static [u8] {
        if consent { b"\r" } else { b"\x1b" }
    }

    fn resume(&self, argv: &[String]) -> Vec<String> {
        let mut argv = argv.to_vec();
        argv.push("--continue".into());
        argv
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
        fixtures::capture("claude/screens", name)
    }

    const CASES: [(&str, Reading); 14] = [
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
    ];

    #[test]
    fn every_capture_reads_as_a_person_sees_it() {
        for (name, expected) in CASES {
            assert_eq!(read(&PANE, &capture(name)), expected, "{name}");
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
