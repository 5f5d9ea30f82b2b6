//! Gemini CLI 0.61.0's screen, read from one PTY snapshot: is a turn
//! running, is a dialog open, and does the composer hold human text?
//!
//! Every pattern here is named after the capture that shows it, in
//! `fixtures/providers/gemini/snapshots/` (each capture carries the reading
//! it must get; `tests/providers_gemini_screens.rs` checks them all;
//! docs/providers/gemini-findings.md, "Screen grammar"):
//!
//! * **Composer** (`idle-empty.json`): below the bottom-most full-width `─`
//!   rule, a mode row (`Shift+Tab to accept edits`), then a grey block
//!   whose prompt row is ` > ` (col 1). Col 3 onwards is the text; the
//!   drawn cursor is an inverse cell. An empty composer is the cursor cell
//!   at col 3 followed by the placeholder ` Type your message or
//!   @path/to/file`, styled. Continuation rows of a longer text are
//!   indented three columns (`enter-as-newline-pasteN.json`).
//! * **YOLO mode** (`idle-mode-yolo.json`): the prompt is `*`; the
//!   composer is the same.
//! * **Shell mode** (`shell-mode.json`): the prompt is `!`; anything typed
//!   would run as a shell command. Not a composer DING may type into:
//!   unrecognized.
//! * **Busy** (`busy-thinking.json`, `busy-streaming.json`,
//!   `busy-hooks-indicator.json`): the composer stays drawn during a turn;
//!   the status row above the rule (or the one above it, when the hooks'
//!   label pushes `? for shortcuts` down a row) starts with a braille
//!   spinner at col 1, or says `esc to cancel`. The status row's other
//!   text is no evidence: the hooks' label leaves residue there at idle
//!   (`idle-after-turn.json`: `? for shortcutsks: probe-AfterModel, …`).
//! * **Dialogs** (`dialog-shell.json`, `dialog-edit.json`,
//!   `startup-trust-folder.json`, `startup-auth-dialog.json`,
//!   `picker-model.json`, `picker-settings.json`, `rewind-after-esc-esc.json`):
//!   a box (`╭`, `│`, `╰` at col 0 or 1) replaces the composer, the rule and
//!   the footer. The session browser (`picker-resume.json`) has no box; it
//!   says `Navigate:` and `Resume: Enter`, or, with no session to show
//!   (`picker-chat.json`), `Press q to exit`. The `ask_user` question
//!   (`dialog-ask-user*.json`) and the plan approval (`dialog-plan-*.json`)
//!   are boxes too: a paste there fills their free-text option and a
//!   Return submits it as the person's answer. A selected option (`● 1.`) in a
//!   box above a composer is a dialog too, wherever it is drawn (no capture
//!   shows one: the simulation's model screen does).
//! * **A long paste** (`paste-900chars.json`, `paste-12lines.json`): over
//!   500 characters or 5 lines, the composer shows `[Pasted Text: N
//!   chars]` (`[Pasted Text: K lines]`) in place of the text, which the
//!   model still gets whole: the placeholder of N characters is the notice
//!   of that length, and one of lines says nothing of what it holds.
//!
//! * **Drawn without colour** (`mono-ci-false-*.json`,
//!   `mono-no-color-*.json`): under `CI` (any value), `FORCE_COLOR=0` or
//!   `TERM=dumb` not one style is drawn, the composer's inverse cursor cell
//!   included; under `NO_COLOR` the composer sits between two rules with
//!   no colour (`environment.rs` says which variables). The prompt glyph
//!   has no colour then, while every coloured screen draws it in the
//!   theme's accent (`idle-empty.json`: fg 183 on the block's bg 240; 16
//!   colours, `colour-term-xterm-idle.json`: fg 15 on bg 0; 24-bit,
//!   `colour-ci-false-gha-false-idle.json`). The placeholder then looks
//!   like typed text and the composer's rows cannot be told from the
//!   screen's: unrecognized, with the cause and the fix as the reason, so
//!   that `ding status` says why nothing is delivered.
//!
//! Anything else is unrecognized: `unknown`, never idle and never empty.

use crate::adapter::screen::{ComposerContent, is_styled, run_at};
pub use crate::adapter::screen::{Screen, View};
use crate::core::protocol::Composer;
use crate::pty::wire::Snapshot;

/// The rule above the composer.
const RULE: char = '\u{2500}';
/// The composer's prompt glyph (`*` in YOLO mode), and shell mode's.
const PROMPT: char = '>';
const YOLO_PROMPT: char = '*';
const SHELL_PROMPT: char = '!';
/// Where the composer's text starts.
const TEXT_COL: usize = 3;
/// What an empty composer shows after its cursor cell.
const PLACEHOLDER: &str = "Type your message or @path/to/file";
/// The box a dialog is drawn in.
const BOX_TOP: char = '\u{256d}';
const BOX_SIDE: char = '\u{2502}';
const BOX_BOTTOM: char = '\u{2570}';
/// A dialog's selected option.
const SELECTED: char = '\u{25cf}';
/// How many rows below the rule the prompt may be (the mode row, the
/// block's top padding).
const PROMPT_WITHIN: usize = 3;
/// How many rows above the rule may hold the spinner.
const STATUS_ROWS: usize = 2;
/// How many rows above the rule are searched for a dialog's selected option.
const DIALOG_ROWS_ABOVE: usize = 12;
/// The reason a screen drawn without colour is not read.
pub const COLOURLESS: &str = "the screen is drawn without colour, which DING cannot read (CI, NO_COLOR, FORCE_COLOR=0 or TERM=dumb in Gemini CLI's environment): unset them for `ding up` (`ding check --adapters` names which)";

/// The composer as found on one screen.
struct Found {
    rule: usize,
    prompt: usize,
    /// The rows of the composer's text, the prompt row first.
    rows: std::ops::Range<usize>,
}

/// Reads one snapshot of Gemini CLI's screen.
pub fn read(snapshot: &Snapshot) -> View {
    let view = read_screen(snapshot);
    if view.screen == Screen::Dialog
        && crate::mutation::planted(crate::mutation::Mutation::DialogReadsIdle)
    {
        return View::ready(Composer::Empty);
    }
    view
}

fn read_screen(snapshot: &Snapshot) -> View {
    let unrecognized = |why| View::new(Screen::Unrecognized, Composer::Unknown, why);
    let Some(found) = composer(snapshot) else {
        return match dialog_without_composer(snapshot) {
            Some(why) => View::new(Screen::Dialog, Composer::Unknown, why),
            None if between_rules_without_colour(snapshot) => unrecognized(COLOURLESS),
            None => unrecognized("no composer below a rule"),
        };
    };
    if dialog_above(snapshot, found.rule) {
        return View::new(
            Screen::Dialog,
            Composer::Unknown,
            "a selected option in a box above the composer",
        );
    }
    if !prompt_coloured(snapshot, found.prompt) {
        return unrecognized(COLOURLESS);
    }
    let prompt_row = &snapshot.rows[found.prompt];
    if prompt_row.chars().nth(1) == Some(SHELL_PROMPT) {
        return unrecognized("shell mode: typed text would run as a command");
    }
    let composer = match content(snapshot, &found) {
        ComposerContent::Text(text) if text.trim().is_empty() => Composer::Empty,
        ComposerContent::Text(_) | ComposerContent::Tail { .. } | ComposerContent::Paste => {
            Composer::Nonempty
        }
        ComposerContent::Unreadable => Composer::Unknown,
    };
    if busy(snapshot, found.rule) {
        return View::new(Screen::Busy, composer, "a turn is running");
    }
    View::ready(composer)
}

/// What a ready composer holds, rows joined by newlines (the placeholder
/// is nothing); unreadable on any other screen.
pub fn composer_content(snapshot: &Snapshot) -> ComposerContent {
    if read(snapshot).screen != Screen::Ready {
        return ComposerContent::Unreadable;
    }
    match composer(snapshot) {
        Some(found) => content(snapshot, &found),
        None => ComposerContent::Unreadable,
    }
}

/// A full-width rule (`─` across the row, perhaps but its last cell).
fn is_rule(row: &str, width: usize) -> bool {
    let count = row.chars().count();
    count + 1 >= width && count > 0 && row.chars().all(|c| c == RULE)
}

/// A composer's prompt row: ` > `, ` * ` or ` ! ` from col 0.
fn is_prompt_row(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next() == Some(' ')
        && matches!(chars.next(), Some(PROMPT | YOLO_PROMPT | SHELL_PROMPT))
        && matches!(chars.next(), Some(' ') | None)
}

/// Whether the prompt glyph at col 1 of `row` has a colour (a foreground or
/// a background): Gemini CLI draws it in its theme's accent, on the
/// composer block's grey, whenever it draws colour at all.
fn prompt_coloured(snapshot: &Snapshot, row: usize) -> bool {
    run_at(snapshot, row, 1).is_some_and(|run| run.fg.is_some() || run.bg.is_some())
}

/// `NO_COLOR`'s composer (`mono-no-color-idle.json`): a prompt row between
/// two full-width rules, its glyph without colour.
fn between_rules_without_colour(snapshot: &Snapshot) -> bool {
    let width = usize::from(snapshot.size.cols);
    let rows = &snapshot.rows;
    (1..rows.len().saturating_sub(1)).any(|row| {
        is_prompt_row(&rows[row])
            && is_rule(&rows[row - 1], width)
            && is_rule(&rows[row + 1], width)
            && !prompt_coloured(snapshot, row)
    })
}

/// The bottom-most full-width rule with a prompt row just below it.
fn composer(snapshot: &Snapshot) -> Option<Found> {
    let width = usize::from(snapshot.size.cols);
    let rule = snapshot.rows.iter().rposition(|row| is_rule(row, width))?;
    let prompt = (rule + 1..=rule + PROMPT_WITHIN).find(|&row| {
        snapshot
            .rows
            .get(row)
            .is_some_and(|text| is_prompt_row(text))
    })?;
    // The block goes on while its rows are the composer's grey (a run
    // from col 0 with a background) and indented like its text.
    let mut end = prompt + 1;
    while end < snapshot.rows.len()
        && run_at(snapshot, end, 0).is_some_and(|run| run.bg.is_some())
        && snapshot.rows[end].chars().take(TEXT_COL).all(|c| c == ' ')
    {
        end += 1;
    }
    Some(Found {
        rule,
        prompt,
        rows: prompt..end,
    })
}

/// The composer's text: from col 3 of each row, the cursor cell as what it
/// covers. The placeholder after a blank cursor cell at col 3 is no text
/// when it is styled as a placeholder and alone in the block; the same
/// words unstyled, or with more rows, cannot be told apart from typing.
fn content(snapshot: &Snapshot, found: &Found) -> ComposerContent {
    let prompt = &snapshot.rows[found.prompt];
    let from_cursor: String = prompt.chars().skip(TEXT_COL).collect();
    if from_cursor.starts_with(' ') && from_cursor.trim() == PLACEHOLDER {
        let cursor = run_at(snapshot, found.prompt, TEXT_COL).is_some_and(|run| run.inverse);
        let styled = run_at(snapshot, found.prompt, TEXT_COL + 1)
            .is_some_and(|run| is_styled(run) && !run.inverse && run.fg.is_some());
        let alone = found
            .rows
            .clone()
            .skip(1)
            .all(|row| snapshot.rows[row].trim().is_empty());
        return if cursor && styled && alone {
            ComposerContent::Text(String::new())
        } else {
            ComposerContent::Unreadable
        };
    }
    let mut lines: Vec<String> = found
        .rows
        .clone()
        .map(|row| {
            let text: String = snapshot.rows[row].chars().skip(TEXT_COL).collect();
            text.trim_end().to_string()
        })
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    if let [line] = lines.as_slice()
        && let Some(folded) = folded_paste(line)
    {
        return folded;
    }
    ComposerContent::Text(lines.join("\n"))
}

/// `[Pasted Text: N chars]` (the paste's length: the text's end is all
/// there is to compare, and it is hidden) or `[Pasted Text: K lines]`
/// (which says nothing of what it holds), as Gemini CLI folds a paste of
/// more than 500 characters or 5 lines.
fn folded_paste(line: &str) -> Option<ComposerContent> {
    let inner = line.strip_prefix("[Pasted Text: ")?.strip_suffix(']')?;
    let (count, unit) = inner.split_once(' ')?;
    if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match unit {
        "chars" => Some(ComposerContent::Tail {
            hidden: count.parse().ok()?,
            tail: String::new(),
        }),
        "lines" => Some(ComposerContent::Paste),
        _ => None,
    }
}

/// A spinner glyph (braille) at col 1, or `esc to cancel`, in the status
/// rows just above the rule.
fn busy(snapshot: &Snapshot, rule: usize) -> bool {
    (rule.saturating_sub(STATUS_ROWS)..rule).any(|row| {
        let text = &snapshot.rows[row];
        let spinner = text
            .chars()
            .nth(1)
            .is_some_and(|c| ('\u{2801}'..='\u{28ff}').contains(&c));
        spinner || text.contains("esc to cancel")
    })
}

/// A dialog that replaced the composer: a box, or the session browser.
fn dialog_without_composer(snapshot: &Snapshot) -> Option<&'static str> {
    let boxed = snapshot.rows.iter().any(|row| {
        row.chars()
            .take(2)
            .any(|c| matches!(c, BOX_TOP | BOX_SIDE | BOX_BOTTOM))
    });
    let browser = snapshot.rows.iter().any(|row| {
        (row.contains("Navigate:") && row.contains("Enter")) || row.trim() == "Press q to exit"
    });
    if browser {
        Some("a session browser")
    } else if boxed {
        Some("a dialog box in place of the composer")
    } else {
        None
    }
}

/// A box row with a selected numbered option just above the rule.
fn dialog_above(snapshot: &Snapshot, rule: usize) -> bool {
    (rule.saturating_sub(DIALOG_ROWS_ABOVE)..rule).any(|row| {
        let text = snapshot.rows[row].trim_start();
        let Some(inside) = text.strip_prefix(BOX_SIDE) else {
            return false;
        };
        let inside = inside.trim_start();
        inside.starts_with(SELECTED)
            && inside[SELECTED.len_utf8()..]
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit())
    })
}
