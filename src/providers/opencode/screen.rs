//! OpenCode 1.18.33's screen, read from one PTY snapshot: is a turn
//! running, is a dialog open, and does the composer hold the person's
//! text?
//!
//! DING never types into OpenCode: the screen matters only to say whether
//! the native idle path may start a turn (an idle screen with an empty
//! composer and no dialog), and why not. Every pattern here is named after
//! the capture that shows it, in `fixtures/providers/opencode/snapshots/`
//! (each carries the reading it must get; `tests/providers_opencode_screens.rs`
//! checks them all; docs/providers/opencode-findings.md):
//!
//! * **Composer** (`idle-session-empty.json`, `home-startup.json`): a block
//!   whose left edge is a bar `┃` in one column (col 2 in a session, centred
//!   on the home screen), closed below by `╹` and a run of `▀`. Its last
//!   row names the agent and model (`Build · Mock Model Mock`); above it a
//!   blank row, the text rows, and a blank top row. The text starts three
//!   columns right of the bar.
//! * **Empty or not**: an empty composer in a session draws nothing; on the
//!   home screen it draws a placeholder (`Ask anything… "…"`) in the muted
//!   colour the agent row draws its `·` in. Any cell of the text rows in
//!   another colour is the person's (`idle-draft.json`, `home-draft.json`,
//!   `idle-draft-multiline.json`, `idle-draft-paste.json`: a paste folded
//!   as `[Pasted ~3 lines]`).
//! * **Busy** (`busy-empty.json`, `busy-draft.json`, `busy-esc-once.json`):
//!   the row below the block says `esc interrupt` (`esc again to
//!   interrupt` after one Esc); at idle it shows the directory or `tab
//!   agents`. In shell mode it says `esc exit shell mode` (and the agent
//!   row `Shell`: `idle-draft-after-prompt-async.json`): Return would run
//!   the composer as a command, a state DING does not act in
//!   (unrecognized).
//! * **Dialogs**: the permission dialog replaces the block (no `╹▀` row;
//!   `△ Permission required`, whose Enter allows: `dialog-permission*.json`),
//!   and so does the `question` tool's (`dialog-question.json`: its Enter
//!   answers with the highlighted option): a bar down to the last row that
//!   no `╹▀` closes;
//!   an overlay (the command palette, the session, model and agent
//!   pickers: `picker-*.json`) is a box whose title row ends in `esc`,
//!   drawn over the conversation above the block; the slash-command list
//!   (`picker-slash.json`) is a box right above the block, a bar at both its
//!   edges: Return there picks a command.
//!
//! Anything else is unrecognized: `unknown`, never idle and never empty.

use crate::adapter::screen::ComposerContent;
pub use crate::adapter::screen::{Screen, View};
use crate::core::protocol::Composer;
use crate::pty::wire::{Colour, Snapshot};

/// The composer block's left edge, its bottom corner and bottom edge.
const BAR: char = '\u{2503}';
const CORNER: char = '\u{2579}';
const EDGE: char = '\u{2580}';
/// What the permission dialog says (Enter allows).
const PERMISSION: &str = "Permission required";
/// The dialog's mark, also on its "Always allow" confirmation.
const WARNING: char = '\u{25b3}';
/// What the row below the block says in shell mode (a `!` typed first):
/// Return runs the composer as a shell command.
const SHELL_MODE: &str = "exit shell mode";
/// What the row below the block says while a turn runs.
const BUSY: [&str; 2] = ["esc interrupt", "esc again to interrupt"];
/// How an overlay's title row ends.
const OVERLAY_CLOSE: &str = "  esc";
/// How far right of the bar the text starts.
const TEXT_OFFSET: usize = 3;

/// The composer block as found on one screen.
struct Block {
    /// The bar's column.
    col: usize,
    /// The block's top row, its agent row and its `╹▀` row.
    top: usize,
    agent: usize,
    bottom: usize,
}

/// Reads one snapshot of OpenCode's screen.
pub fn read(snapshot: &Snapshot) -> View {
    let dialog = |why| View::new(Screen::Dialog, Composer::Unknown, why);
    let Some(block) = block(snapshot) else {
        if snapshot.rows.iter().any(|row| {
            row.contains(PERMISSION) || row.trim_start_matches([' ', BAR]).starts_with(WARNING)
        }) {
            return dialog("a permission dialog (Enter would allow)");
        }
        if bar_to_the_bottom(snapshot) {
            return dialog("a dialog in place of the composer (a question: Enter would answer)");
        }
        return View::new(Screen::Unrecognized, Composer::Unknown, "no composer block");
    };
    if snapshot.rows[..block.top]
        .iter()
        .any(|row| row.trim_end().ends_with(OVERLAY_CLOSE))
    {
        return dialog("a picker or the command palette is open");
    }
    if block.top > 0 && list_above(&snapshot.rows[block.top - 1], block.col) {
        return dialog("a list above the composer (Return would pick from it)");
    }
    let composer = match content(snapshot, &block) {
        ComposerContent::Text(text) if text.trim().is_empty() => Composer::Empty,
        ComposerContent::Unreadable => Composer::Unknown,
        _ => Composer::Nonempty,
    };
    let status = snapshot
        .rows
        .get(block.bottom + 1)
        .map_or("", String::as_str);
    if status.contains(SHELL_MODE) {
        return View::new(
            Screen::Unrecognized,
            Composer::Unknown,
            "shell mode: Return would run the composer as a shell command",
        );
    }
    if BUSY.iter().any(|busy| status.contains(busy)) {
        return View::new(Screen::Busy, composer, "a turn is running");
    }
    View::ready(composer)
}

/// The bottom-most composer block: a `╹▀…` row, and above it rows with the
/// bar in the same column.
fn block(snapshot: &Snapshot) -> Option<Block> {
    let rows = &snapshot.rows;
    let (bottom, col) = rows.iter().enumerate().rev().find_map(|(index, row)| {
        let col = row.chars().position(|c| c == CORNER)?;
        let rest: String = row.chars().skip(col + 1).collect();
        let edge = !rest.is_empty() && rest.trim_end().chars().all(|c| c == EDGE);
        let margin = row.chars().take(col).all(|c| c == ' ');
        (edge && margin).then_some((index, col))
    })?;
    let has_bar = |row: &str| row.chars().nth(col) == Some(BAR);
    let agent = bottom.checked_sub(1).filter(|&row| has_bar(&rows[row]))?;
    let mut top = agent;
    while top > 0 && has_bar(&rows[top - 1]) && !list_above(&rows[top - 1], col) {
        top -= 1;
    }
    // A top row, a text row, a blank row and the agent row at least.
    (agent >= top + 3).then_some(Block {
        col,
        top,
        agent,
        bottom,
    })
}

/// Whether the screen ends in a bar that no `╹▀` row closes: a dialog
/// drawn where the composer was (`dialog-question.json`).
fn bar_to_the_bottom(snapshot: &Snapshot) -> bool {
    snapshot
        .rows
        .iter()
        .rev()
        .find(|row| !row.trim().is_empty())
        .is_some_and(|row| row.trim_start().starts_with(BAR))
}

/// Whether `row` is the last row of a box drawn right above the composer:
/// a bar in the composer's column and another further right.
fn list_above(row: &str, col: usize) -> bool {
    row.chars().nth(col) == Some(BAR) && row.chars().skip(col + 1).any(|c| c == BAR)
}

/// The colour the agent row draws its `·` in: the muted colour of a
/// placeholder.
fn muted(snapshot: &Snapshot, block: &Block) -> Option<Colour> {
    let col = snapshot.rows[block.agent]
        .chars()
        .position(|c| c == '\u{b7}')?;
    crate::adapter::screen::run_at(snapshot, block.agent, col).and_then(|run| run.fg.clone())
}

/// What the composer holds: its text rows, the placeholder (drawn in the
/// muted colour) left out.
fn content(snapshot: &Snapshot, block: &Block) -> ComposerContent {
    let Some(muted) = muted(snapshot, block) else {
        return ComposerContent::Unreadable;
    };
    let start = block.col + TEXT_OFFSET;
    let mut lines = Vec::new();
    for row in block.top + 1..block.agent - 1 {
        let line: String = snapshot.rows[row]
            .chars()
            .enumerate()
            .skip(start)
            .filter(|&(col, _)| {
                crate::adapter::screen::run_at(snapshot, row, col)
                    .is_none_or(|run| run.fg.as_ref() != Some(&muted))
            })
            .map(|(_, c)| c)
            .collect();
        lines.push(line.trim_end().to_string());
    }
    ComposerContent::Text(lines.join("\n").trim_end().to_string())
}

/// What a ready composer holds; unreadable on any other screen.
pub fn composer_content(snapshot: &Snapshot) -> ComposerContent {
    if read(snapshot).screen != Screen::Ready {
        return ComposerContent::Unreadable;
    }
    match block(snapshot) {
        Some(block) => content(snapshot, &block),
        None => ComposerContent::Unreadable,
    }
}
