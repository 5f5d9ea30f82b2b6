//! OpenCode 1.18.33's screen as the evaluation's typist reads it, and the
//! keys it presses there (the `pane::Pane` seam of the evaluation). Read
//! from the real TUI under tmux (docs/providers/model-servers.md), with a
//! person's eyes; the tests below hold the rows of those screens.
//!
//! * The composer is a box of `┃` rows closed by a `╹▀▀▀…` row: a blank
//!   row, the typed rows, a blank row, and the row that names the agent and
//!   the model (`Build · Mock model Mock`). A message box above it may touch
//!   it (a prompt queued during a turn), so the typed rows are the
//!   non-blank ones right above the lower blank row. It is empty when there
//!   are none or they show the new session's placeholder (`Ask anything…`).
//! * Busy: the row below the composer says `esc interrupt` while a turn
//!   runs (`esc again to interrupt` after one Esc; a second Esc interrupts).
//! * The permission dialog replaces the composer: `△ Permission required`
//!   (`# Shell command`, `→ Edit NAME`, `← Access external directory`) with
//!   `Allow once   Allow always   Reject` and `enter confirm`. The options
//!   stand side by side with no number; `Allow once` is selected when it
//!   opens, so Enter allows (a typed notice with its Return would approve
//!   the command). Esc rejects, and the turn stops there.
//! * The `question` tool's menu replaces it too: the question, `1. Mock
//!   option one`, `2. …`, `3. Type your own answer`, and `↑↓ select  enter
//!   submit  esc dismiss`; Enter answers with option 1, Esc dismisses the
//!   question and the turn stops.
//! * A picker (`/models`: `Select model`) is drawn over the session with
//!   the composer still under it; its title row ends with `esc`, which
//!   closes it.
//! * OpenCode asks nothing at startup: no startup dialog, no startup keys.
//! * `--continue` resumes the most recent session of the project; `/new`
//!   starts a new one (there is no `/clear`); `/compact` compacts.

use crate::pane::{Dialog, DialogKind, Keys, Pane, Resume};
use ding::pty::wire::Snapshot;

pub struct OpenCodePane;

pub static PANE: OpenCodePane = OpenCodePane;

/// How the new session's placeholder starts.
const PLACEHOLDER: &str = "Ask anything";

/// The row that closes the composer's box.
fn is_composer_bottom(row: &str) -> bool {
    row.trim_start().starts_with("╹▀▀▀")
}

/// A row of a `┃` box: its text after the `┃`, trimmed.
fn box_row(row: &str) -> Option<&str> {
    row.trim_start().strip_prefix('┃').map(str::trim)
}

/// The composer's typed rows, top first, over the bottom-most `╹▀▀▀` row:
/// the non-blank `┃` rows right above the blank row over the agent and
/// model row.
fn composer(screen: &Snapshot) -> Option<Vec<&str>> {
    let bottom = screen
        .rows
        .iter()
        .rposition(|row| is_composer_bottom(row))?;
    let status = bottom.checked_sub(1)?;
    box_row(&screen.rows[status]).filter(|rest| rest.contains('·'))?;
    let padding = status.checked_sub(1)?;
    box_row(&screen.rows[padding]).filter(|rest| rest.is_empty())?;
    let mut rows: Vec<&str> = screen.rows[..padding]
        .iter()
        .rev()
        .map_while(|row| box_row(row).filter(|rest| !rest.is_empty()))
        .collect();
    rows.reverse();
    Some(rows)
}

/// A row only a dialog or a picker shows.
fn opens_dialog(row: &str) -> bool {
    row.contains("△ Permission required")
        || row.contains("enter confirm")
        || row.contains("esc dismiss")
        // A picker's title row: `Select model   …   esc`.
        || row.trim_end().ends_with("  esc")
}

/// What a person types into OpenCode 1.18.33.
const KEYS: Keys = Keys {
    consent: b"\r",
    refuse: b"\x1b",
    dialog_kinds: &[
        DialogKind::Command,
        DialogKind::FileEdit,
        DialogKind::Choice,
        DialogKind::Picker,
    ],
    picker_command: Some("/models"),
    setup_command: None,
    startup_keys: &[],
    resume: Resume::Options(&["--continue"]),
    compact_command: "/compact",
    clear_command: "/new",
    // Ctrl+C at a composer that holds text clears it (at an empty one it
    // exits).
    empty_composer_keys: b"\x03",
};

impl Pane for OpenCodePane {
    fn keys(&self) -> &'static Keys {
        &KEYS
    }

    fn ready(&self, screen: &Snapshot) -> bool {
        composer(screen).is_some() && self.dialog(screen).is_none()
    }

    fn empty_composer(&self, screen: &Snapshot) -> bool {
        composer(screen).is_some_and(|rows| match rows.as_slice() {
            [] => true,
            [only] => only.starts_with(PLACEHOLDER),
            _ => false,
        })
    }

    fn busy(&self, screen: &Snapshot) -> bool {
        let Some(bottom) = screen.rows.iter().rposition(|row| is_composer_bottom(row)) else {
            return false;
        };
        screen.rows.get(bottom + 1).is_some_and(|row| {
            row.contains("esc interrupt") || row.contains("esc again to interrupt")
        })
    }

    fn dialog(&self, screen: &Snapshot) -> Option<Dialog> {
        if !screen.rows.iter().any(|row| opens_dialog(row)) {
            return None;
        }
        Some(Dialog { selected: Some(1) })
    }

    fn startup_dialog(&self, _screen: &Snapshot) -> Option<Dialog> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::{self, fixtures::reads};
    use ding::pty::wire::{Cursor, Size};

    const RULE: &str = "  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀";
    const STATUS: &str = "  ┃  Build · Mock model Mock";
    const FOOTER: &str = "   ~/project                                 1.0K  ctrl+p commands";
    const BUSY: &str = "   ⬝⬝⬝⬝⬝⬝⬝⬝  esc interrupt                 tab agents  ctrl+p commands";

    fn screen(rows: &[&str]) -> Snapshot {
        Snapshot {
            revision: 1,
            terminal: Default::default(),
            clock_ms: None,
            size: Size {
                cols: 120,
                rows: rows.len() as u16,
            },
            cursor: Cursor {
                row: 0,
                col: 0,
                visible: true,
            },
            rows: rows.iter().map(|row| row.to_string()).collect(),
            runs: Vec::new(),
            alternate_screen: true,
            bracketed_paste: true,
        }
    }

    /// A session's bottom rows: the last message, the composer holding
    /// `typed`, and `below` under it.
    fn session(typed: &str, below: &str) -> Snapshot {
        screen(&[
            "  ┃",
            "  ┃  mock:slow 6",
            "  ┃",
            "",
            "     mock reply to turn 8.",
            "",
            "     ▣  Build · Mock model · 4.6s",
            "",
            "  ┃",
            &format!("  ┃  {typed}"),
            "  ┃",
            STATUS,
            RULE,
            below,
        ])
    }

    #[test]
    fn the_typist_reads_idle_busy_and_drafts() {
        // A new session's home screen, its placeholder in the composer.
        let home = screen(&[
            "                       ┃",
            "                       ┃  Ask anything… \"Fix broken tests\"",
            "                       ┃",
            "                       ┃  Build · Mock model Mock",
            "                       ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀",
            "                                               tab agents  ctrl+p commands",
            "                             ● Tip Add $schema to your config",
            "  ~/project                                                      1.18.33",
        ]);
        assert_eq!(pane::read(&PANE, &home), reads(true, true, false, None));
        let idle = session("", FOOTER);
        assert_eq!(pane::read(&PANE, &idle), reads(true, true, false, None));
        assert!(pane::idle(&PANE, &idle));
        let draft = session("draft words here", FOOTER);
        assert_eq!(pane::read(&PANE, &draft), reads(true, false, false, None));
        assert!(pane::waiting(&PANE, &draft));
        let busy = session("", BUSY);
        assert_eq!(pane::read(&PANE, &busy), reads(true, true, true, None));
        let again = session("", &BUSY.replace("esc interrupt", "esc again to interrupt"));
        assert!(PANE.busy(&again));
        // The words in the conversation are not the bar under the composer.
        let mut quoted = session("", FOOTER);
        quoted.rows[4] = "     press esc interrupt to stop it".into();
        assert!(!PANE.busy(&quoted));
    }

    #[test]
    fn a_queued_prompt_touching_the_composer_is_not_a_draft() {
        let queued = screen(&[
            "     ▣  Build · Mock model",
            "",
            "  ┃",
            "  ┃  queued words",
            "  ┃   QUEUED",
            "  ┃",
            "  ┃",
            "  ┃",
            STATUS,
            RULE,
            BUSY,
        ]);
        assert_eq!(pane::read(&PANE, &queued), reads(true, true, true, None));
    }

    #[test]
    fn the_typist_sees_the_permission_dialog_the_question_and_the_picker() {
        let command = screen(&[
            "     $ touch /tmp/m2",
            "     ▣  Build · Mock model",
            "  ┃",
            "  ┃  △ Permission required",
            "  ┃    # Shell command",
            "  ┃",
            "  ┃  $ touch /tmp/m2",
            "  ┃",
            "  ┃   Allow once   Allow always   Reject          ctrl+f fullscreen  ⇆ select  enter confirm",
            "  ┃",
        ]);
        assert_eq!(
            pane::read(&PANE, &command),
            reads(false, false, false, Some(1))
        );
        let question = screen(&[
            "     → Asked 1 question",
            "  ┃",
            "  ┃  Which mock option should the turn take?",
            "  ┃",
            "  ┃  1. Mock option one",
            "  ┃     Pick Mock option one.",
            "  ┃  2. Mock option two",
            "  ┃     Pick Mock option two.",
            "  ┃  3. Type your own answer",
            "  ┃",
            "  ┃  ↑↓ select  enter submit  esc dismiss",
            "  ┃",
        ]);
        assert_eq!(
            pane::read(&PANE, &question),
            reads(false, false, false, Some(1))
        );
        // The picker is drawn over the session: the composer stays under it.
        let picker = screen(&[
            "  ┃                               Select model                                     esc",
            "     mock reply to turn 8.        Search",
            "                                ● Mock model",
            "  ┃  mock:permission /tmp/oc-e    Connect provider ctrl+a  Favorite ctrl+f",
            "  ┃",
            "  ┃",
            "  ┃",
            STATUS,
            RULE,
            FOOTER,
        ]);
        assert_eq!(PANE.dialog(&picker), Some(Dialog { selected: Some(1) }));
        assert!(!PANE.ready(&picker));
        assert!(!pane::waiting(&PANE, &picker));
        assert_eq!(PANE.startup_dialog(&session("", FOOTER)), None);
        assert!(PANE.startup_keys().is_empty());
    }

    #[test]
    fn resuming_continues_the_latest_session() {
        assert_eq!(
            PANE.resume(&["opencode".into()]),
            ["opencode", "--continue"]
        );
    }
}
