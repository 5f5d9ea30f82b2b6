//! Codex CLI 0.169.0's screen, read from one PTY snapshot: is a selection
//! list or dialog open, does the screen show a turn running, and does the
//! composer hold human text?
//!
//! Every pattern is named after a capture in
//! `fixtures/providers/codex/snapshots/` (each carries the reading it must
//! get; `tests/providers_codex_screens.rs` checks them all):
//!
//! * **Selection lists and dialogs** (`approval-dialog.json`,
//!   `edit-approval-dialog.json`, `plan-approval-dialog.json`,
//!   `picker-model.json`, `hooks-review-modal.json`, `hooks-browser.json`,
//!   `slash-menu.json`): a row whose col-0 run starts with `›` and is
//!   **bold and inverse**. It is
//!   the same glyph as the composer's prompt, so this is read first, and
//!   wins over everything. The approval footer `Press enter to confirm or
//!   esc to cancel` and the modals' `esc skip` / `esc close` / `esc back`
//!   footers say the same.
//! * **Composer** (`idle-empty-placeholder.json`, `draft.json`): the last
//!   row, at or above the visible hardware cursor, whose col-0 run is `›`
//!   bold, neither inverse nor dim. Earlier prompts above it are history.
//!   Empty: the cursor at col 2 of that row, nothing after the prompt but
//!   one **dim** run (the placeholder `Ask Codex to do anything`; the style
//!   decides, not the words), and a blank row below. Typed or pasted text
//!   is in the default style (`draft.json`, `after-paste.json`), also when
//!   it wraps onto the cursor's row (`enter-as-newline-raw.json`).
//! * **Busy lines** (`busy.json`, `busy-command-running.json`,
//!   `busy-queued.json`, `busy-draft.json`): `esc to interrupt` (the
//!   `Working` line, and `Messages to be submitted after next tool call`),
//!   a queued `↳` line, the footer `tab to queue message`. The composer row
//!   itself looks the same busy or idle.
//! * **A prompt just submitted**: the last block of rows above the composer
//!   is a prompt (`› ...`), with no reply, `Worked for`, interruption or
//!   compaction line after it yet: a turn is starting, whatever else shows.
//!
//! What the screen cannot show: while the model streams a reply, the
//! `Working` line vanishes and the screen looks ready
//! (`busy-streaming-looks-idle.json`). So **ready is not idle**: only the
//! hooks can say a turn ended (`activity.rs`). `fresh` (no prompt or reply
//! above the composer) is the one state in which no turn can have run.
//!
//! * **A typed notice** (`shared/draft-plus-pasted-notice.json`): pasted
//!   text is in the default style, wrapped at the character with its
//!   continuation rows indented two columns, the cursor after its last
//!   character; a paste of more than 1,000 characters is drawn as the
//!   placeholder `[Pasted Content N chars]`, N its length in characters
//!   ([`composer_content`]).
//!
//! * **A dumb terminal** (`term-dumb-question.json`): under `TERM=dumb`
//!   Codex asks `Continue anyway? [y/N]:` before its interface: unrecognized,
//!   with the cause as the reason. Without colour (`NO_COLOR`,
//!   `no-color-*.json`) it keeps the bold and dim read here: nothing
//!   changes.
//!
//! Anything else is unrecognized: `unknown`, never idle and never empty.
//! Among those: a model's question (`choice-dialog.json`, its selected row
//! at col 2, the cursor hidden) and the `/resume` browser
//! (`picker-resume.json`, no composer row).

use crate::adapter::Reading;
pub use crate::adapter::screen::Screen;
use crate::adapter::screen::{ComposerContent, is_styled, ready_because, run_at};
use crate::core::protocol::Composer;
use crate::pty::wire::Snapshot;

/// The composer's prompt glyph (also the selection mark of every list).
const PROMPT: char = '\u{203a}';

/// Footers of dialogs and modals that take every key.
const DIALOG_FOOTERS: [&str; 4] = [
    "to confirm or esc to cancel",
    "esc skip",
    "esc close",
    "esc back",
];

/// Text that shows a turn running.
const BUSY_MARKS: [&str; 2] = ["esc to interrupt", "tab to queue message"];

/// Text that shows the TUI without its app-server (findings §12): while
/// it reconnects a Return submits nothing (`Reconnecting to server… (2s)`,
/// `app-server-gone-reconnecting.json`), and a fresh thread the new server
/// does not know stays read-only for good.
const SERVER_GONE_MARKS: [&str; 3] = [
    "Reconnecting to server",
    "This conversation is unavailable",
    "This conversation is read-only or unavailable",
];

/// Codex's question before its interface when `TERM=dumb`
/// (`term-dumb-question.json`; it ends on any answer but `y`,
/// `term-dumb-refused.json`).
const DUMB_TERMINAL_MARK: &str = "TERM is set to \"dumb\"";

/// Why a dumb terminal's screen is not read (`environment.rs`).
pub const DUMB_TERMINAL: &str = "Codex does not start its interface on a dumb terminal (TERM=dumb) unless someone answers y to its question: unset TERM for `ding up`, or declare TERM=xterm-256color";

/// One snapshot's reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    pub screen: Screen,
    pub composer: Composer,
    /// No earlier prompt or reply above the composer: a session in which no
    /// turn has run (or a cleared one).
    pub fresh: bool,
    pub why: &'static str,
}

impl View {
    /// The protocol reading of the screen alone. Ready reads as idle here;
    /// `activity::combine` decides with the hooks whether it is.
    pub fn reading(self) -> Reading {
        self.screen.reading(self.composer, self.why)
    }
}

fn view(screen: Screen, composer: Composer, fresh: bool, why: &'static str) -> View {
    View {
        screen,
        composer,
        fresh,
        why,
    }
}

/// Reads one snapshot of Codex's screen.
pub fn read(snapshot: &Snapshot) -> View {
    let unrecognized = |why| view(Screen::Unrecognized, Composer::Unknown, false, why);
    if let Some(why) = dialog(snapshot) {
        if crate::mutation::planted(crate::mutation::Mutation::DialogReadsIdle) {
            return view(
                Screen::Ready,
                Composer::Empty,
                false,
                "ready, composer empty",
            );
        }
        return view(Screen::Dialog, Composer::Unknown, false, why);
    }
    if snapshot
        .rows
        .iter()
        .any(|text| text.contains(DUMB_TERMINAL_MARK))
    {
        return unrecognized(DUMB_TERMINAL);
    }
    if !snapshot.cursor.visible {
        return unrecognized("the cursor is hidden: no composer has the keys");
    }
    let server_gone = snapshot
        .rows
        .iter()
        .any(|text| SERVER_GONE_MARKS.iter().any(|mark| text.contains(mark)));
    if server_gone {
        return unrecognized("the TUI has lost its app-server: nothing it is given is sent");
    }
    let cursor_row = usize::from(snapshot.cursor.row);
    let Some(row) = composer_row(snapshot, cursor_row) else {
        return unrecognized("no composer row at or above the cursor");
    };
    let composer = composer(snapshot, row);
    let fresh = is_fresh(snapshot, row);
    let busy_mark = snapshot
        .rows
        .iter()
        .any(|text| BUSY_MARKS.iter().any(|mark| text.contains(mark)) || is_queued_line(text));
    if busy_mark {
        return view(Screen::Busy, composer, fresh, "a turn is running");
    }
    if last_block_is_a_prompt(snapshot, row) {
        return view(
            Screen::Busy,
            composer,
            fresh,
            "a prompt was just submitted: its turn is starting",
        );
    }
    view(Screen::Ready, composer, fresh, ready_because(composer))
}

/// What a ready composer holds: the rows from the prompt to the cursor, in
/// the default style, or one paste placeholder that gives its length. Any
/// other style in it is unreadable.
pub fn composer_content(snapshot: &Snapshot) -> ComposerContent {
    if read(snapshot).screen != Screen::Ready {
        return ComposerContent::Unreadable;
    }
    let cursor_row = usize::from(snapshot.cursor.row);
    let Some(first) = composer_row(snapshot, cursor_row) else {
        return ComposerContent::Unreadable;
    };
    let mut text = String::new();
    let mut styled = false;
    for row in first..=cursor_row {
        let Some(line) = snapshot.rows.get(row) else {
            return ComposerContent::Unreadable;
        };
        // The prompt and the space after it are not content.
        let skip = if row == first { 2 } else { 0 };
        for (col, c) in line.chars().enumerate().skip(skip) {
            styled |= c != ' ' && run_at(snapshot, row, col).is_some_and(is_styled);
            text.push(c);
        }
        text.push('\n');
    }
    if let Some(chars) = pasted_content_chars(text.trim()) {
        return ComposerContent::Tail {
            hidden: chars,
            tail: String::new(),
        };
    }
    if styled {
        return ComposerContent::Unreadable;
    }
    ComposerContent::Text(text)
}

/// N of `[Pasted Content N chars]`, as Codex draws a long paste.
fn pasted_content_chars(text: &str) -> Option<usize> {
    let count = text
        .strip_prefix("[Pasted Content ")?
        .strip_suffix(" chars]")?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    count.parse().ok()
}

/// Why the screen is a selection list or dialog, if it is one.
fn dialog(snapshot: &Snapshot) -> Option<&'static str> {
    let selected = snapshot
        .runs
        .iter()
        .any(|run| run.col == 0 && run.bold && run.inverse && run.text.starts_with(PROMPT));
    if selected {
        return Some("a selection list or dialog is open (a selected `›` row)");
    }
    snapshot
        .rows
        .iter()
        .any(|row| DIALOG_FOOTERS.iter().any(|footer| row.contains(footer)))
        .then_some("a dialog is open (its footer says so)")
}

/// The composer's row: the last one at or above the cursor whose col-0 run
/// is the prompt, bold, neither inverse nor dim.
fn composer_row(snapshot: &Snapshot, cursor_row: usize) -> Option<usize> {
    (0..=cursor_row).rev().find(|&row| {
        snapshot
            .rows
            .get(row)
            .is_some_and(|text| text.starts_with(PROMPT))
            && run_at(snapshot, row, 0).is_some_and(|run| run.bold && !run.inverse && !run.dim)
    })
}

/// What the composer holds: empty only with the cursor right after the
/// prompt, nothing but a dim placeholder on the row, and a blank row below.
fn composer(snapshot: &Snapshot, first: usize) -> Composer {
    let cursor = (
        usize::from(snapshot.cursor.row),
        usize::from(snapshot.cursor.col),
    );
    let (mut typed, mut dim, mut other) = (false, false, false);
    for row in first..=cursor.0 {
        let Some(text) = snapshot.rows.get(row) else {
            return Composer::Unknown;
        };
        // The prompt and the space after it are not content.
        let skip = if row == first { 2 } else { 0 };
        for (col, c) in text.chars().enumerate().skip(skip) {
            if c == ' ' {
                continue;
            }
            match run_at(snapshot, row, col) {
                None => typed = true,
                Some(run) if run.dim && !run.inverse => dim = true,
                Some(run) if !is_styled(run) => typed = true,
                Some(_) => other = true,
            }
        }
    }
    if typed {
        return Composer::Nonempty;
    }
    if other {
        return Composer::Unknown;
    }
    let below_blank = snapshot
        .rows
        .get(first + 1)
        .is_none_or(|row| row.trim().is_empty());
    match (cursor == (first, 2), below_blank) {
        // Nothing but the placeholder (or nothing at all) after the prompt.
        (true, true) => Composer::Empty,
        // The cursor elsewhere with nothing visible: typed spaces or lines.
        (false, _) if !dim => Composer::Nonempty,
        _ => Composer::Unknown,
    }
}

/// A `↳` line: a message queued in the TUI for the running turn.
fn is_queued_line(row: &str) -> bool {
    row.trim_start().starts_with('\u{21b3}')
}

/// Whether nothing above the composer is a prompt or a reply.
fn is_fresh(snapshot: &Snapshot, composer: usize) -> bool {
    !snapshot.rows[..composer]
        .iter()
        .any(|row| row.starts_with(PROMPT) || row.starts_with('\u{2022}'))
}

/// Whether the last block of rows above the composer (rows between blank
/// rows) starts with a prompt: a submitted prompt with nothing after it.
fn last_block_is_a_prompt(snapshot: &Snapshot, composer: usize) -> bool {
    let above = &snapshot.rows[..composer];
    let Some(last) = above.iter().rposition(|row| !row.trim().is_empty()) else {
        return false;
    };
    let start = above[..last]
        .iter()
        .rposition(|row| row.trim().is_empty())
        .map_or(0, |blank| blank + 1);
    above[start].starts_with(PROMPT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::screen::testing::{self, run};
    use crate::pty::wire::Run;

    fn snapshot(rows: &[&str], runs: Vec<Run>, cursor: (u16, u16)) -> Snapshot {
        testing::snapshot(40, rows, runs, Some(cursor))
    }

    fn prompt(row: u16) -> Run {
        Run {
            bold: true,
            ..run(row, 0, "\u{203a}")
        }
    }

    #[test]
    fn a_space_typed_after_the_prompt_is_a_draft() {
        let spaced = snapshot(
            &["", "\u{203a}  ", "", "  ? for shortcuts"],
            vec![prompt(1)],
            (1, 3),
        );
        assert_eq!(read(&spaced).composer, Composer::Nonempty);
        let empty = snapshot(
            &["", "\u{203a}", "", "  ? for shortcuts"],
            vec![prompt(1)],
            (1, 2),
        );
        let view = read(&empty);
        assert_eq!(
            (view.screen, view.composer, view.fresh),
            (Screen::Ready, Composer::Empty, true)
        );
    }

    #[test]
    fn text_under_the_empty_row_means_the_composer_is_not_empty() {
        // A draft of two lines with the cursor moved back to the first,
        // empty one: the row below holds the rest.
        let rows = ["", "\u{203a}", "  second line", "", "  ? for shortcuts"];
        let moved = snapshot(&rows, vec![prompt(1)], (1, 2));
        assert_ne!(read(&moved).composer, Composer::Empty);
    }

    #[test]
    fn a_bold_inverse_selected_row_anywhere_is_a_dialog() {
        let selected = Run {
            bold: true,
            inverse: true,
            ..run(0, 0, "\u{203a} 1. Yes, proceed (y)")
        };
        let rows = ["\u{203a} 1. Yes, proceed (y)", "\u{203a}", "", ""];
        let dialog = snapshot(&rows, vec![selected, prompt(1)], (1, 2));
        assert_eq!(read(&dialog).screen, Screen::Dialog);
        assert_eq!(read(&dialog).composer, Composer::Unknown);
    }

    #[test]
    fn a_submitted_prompt_with_nothing_after_it_is_a_turn_starting() {
        let history = Run {
            dim: true,
            ..run(0, 0, "\u{203a} ")
        };
        let rows = ["\u{203a} please look", "", "\u{203a}", "", ""];
        let starting = snapshot(&rows, vec![history.clone(), prompt(2)], (2, 2));
        assert_eq!(read(&starting).screen, Screen::Busy);
        let rows = [
            "\u{203a} please look",
            "",
            "\u{2022} done.",
            "",
            "\u{203a}",
            "",
            "",
        ];
        let answered = snapshot(&rows, vec![history, prompt(4)], (4, 2));
        let view = read(&answered);
        assert_eq!((view.screen, view.fresh), (Screen::Ready, false));
    }
}
