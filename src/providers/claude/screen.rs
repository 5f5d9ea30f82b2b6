//! Claude Code 2.1.328's screen, read from one PTY snapshot: is a turn
//! running, is a dialog open, and does the composer hold human text?
//!
//! Every pattern here is named after the capture that shows it, in
//! `fixtures/providers/claude/screens/` (each capture carries the reading
//! it must get; `tests/providers_claude_screens.rs` checks them all):
//!
//! * **Composer** (`idle-empty.json`): the row between the two bottom-most
//!   full-width `─` rules starts with the prompt `❯` and U+00A0. The drawn
//!   cursor is an inverse cell; the hardware cursor is hidden. Once the
//!   session has a name, the top rule ends with it, `── NAME ─`
//!   (`eval-idle-renamed-session.json`).
//! * **Idle** (`idle-empty.json`, `idle-after-turn.json`): the prompt is in
//!   the default style and the footer below the rules does not say
//!   `esc to interrupt`.
//! * **Busy** (`busy-tool-running.json`, `busy-tool-running-16-colors.json`):
//!   the prompt is styled (grey fg 246 in 256 colours, dim fg 7 in 16) and
//!   the footer says `esc to interrupt`.
//! * **Typed text** (`draft.json`, `busy-draft.json`) is in the default
//!   style; a **placeholder** (`busy-queued.json`: `Press up to edit queued
//!   messages`) is dim, its first letter under the inverse cursor cell.
//! * **Dialogs and menus** (`permission-dialog.json`,
//!   `choice-menu-model.json`, `eval-plan-approval.json`,
//!   `eval-picker-config.json`): the rules vanish; the question
//!   `Do you want to proceed?`, a selected row `❯ 1. Yes` (indented), or a
//!   footer with `Esc to cancel`, `Esc to close` or `Esc to go back`. Any of
//!   them wins over everything else. (The question menu of
//!   `eval-choice-menu.json` puts its selected `❯ 1.` at col 0, where the
//!   composer's prompt is, between rules: only its footer tells it apart.)
//!
//! * **A typed notice** (`earlier-draft-plus-pasted-notice.json`): pasted
//!   text is in the default style, wrapped at word boundaries with its
//!   continuation rows indented two columns; a paste longer than 800
//!   characters (or of more than two lines) is drawn as the placeholder
//!   `[Pasted text #N]` (`[Pasted text #N +K lines]`), which does not say
//!   what it holds ([`composer_content`]).
//!
//! Anything else is unrecognized: `unknown`, never idle and never empty.

use crate::adapter::screen::{ComposerContent, is_styled, run_at};
pub use crate::adapter::screen::{Screen, View};
use crate::core::protocol::Composer;
use crate::pty::wire::Snapshot;

/// The composer's prompt glyph.
const PROMPT: char = '\u{276f}';
/// The rule above and below the composer.
const RULE: char = '\u{2500}';
/// What Claude Code draws after the prompt.
const NBSP: char = '\u{a0}';

/// Reads one snapshot of Claude Code's screen.
pub fn read(snapshot: &Snapshot) -> View {
    let unrecognized = |why| View::new(Screen::Unrecognized, Composer::Unknown, why);
    if let Some(why) = dialog(snapshot) {
        if crate::mutation::planted(crate::mutation::Mutation::DialogReadsIdle) {
            return View::ready(Composer::Empty);
        }
        return View::new(Screen::Dialog, Composer::Unknown, why);
    }
    let Some((top, bottom)) = composer_rules(snapshot) else {
        return unrecognized("no composer between two rules");
    };
    // `composer_rules` finds a row between the two rules.
    let first = top + 1;
    if !snapshot
        .rows
        .get(first)
        .is_some_and(|row| row.starts_with(PROMPT))
    {
        return unrecognized("composer row without the prompt");
    }
    let composer = composer(snapshot, first, bottom);
    let footer = snapshot
        .rows
        .get(bottom + 1)
        .map(String::as_str)
        .unwrap_or("");
    let prompt_styled = run_at(snapshot, first, 0).is_some_and(is_styled);
    if prompt_styled || footer.contains("esc to interrupt") {
        return View::new(Screen::Busy, composer, "a turn is running");
    }
    View::ready(composer)
}

/// What an idle composer holds: its default-style text, row after row (the
/// cursor cell counts as what it covers), or one paste placeholder. Any
/// other style in it (a placeholder hint, a highlight) is unreadable.
pub fn composer_content(snapshot: &Snapshot) -> ComposerContent {
    if read(snapshot).screen != Screen::Ready {
        return ComposerContent::Unreadable;
    }
    let Some((top, bottom)) = composer_rules(snapshot) else {
        return ComposerContent::Unreadable;
    };
    let first = top + 1;
    let mut text = String::new();
    for row in first..bottom {
        let Some(line) = snapshot.rows.get(row) else {
            return ComposerContent::Unreadable;
        };
        // The first row's prompt and its no-break space are not content.
        let skip = if row == first { 2 } else { 0 };
        for (col, c) in line.chars().enumerate().skip(skip) {
            match run_at(snapshot, row, col) {
                None => text.push(c),
                Some(run) if run.inverse && run.text.chars().count() == 1 => text.push(c),
                Some(_) if c == ' ' => text.push(c),
                Some(_) => return ComposerContent::Unreadable,
            }
        }
        text.push('\n');
    }
    if is_paste_placeholder(text.trim()) {
        ComposerContent::Paste
    } else {
        ComposerContent::Text(text)
    }
}

/// `[Pasted text #N]` or `[Pasted text #N +K lines]`, as Claude Code draws
/// a long paste.
fn is_paste_placeholder(text: &str) -> bool {
    let Some(inner) = text
        .strip_prefix("[Pasted text #")
        .and_then(|rest| rest.strip_suffix(']'))
    else {
        return false;
    };
    let (number, lines) = match inner.split_once(" +") {
        Some((number, lines)) => (number, lines.strip_suffix(" lines")),
        None => (inner, Some("0")),
    };
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits(number) && lines.is_some_and(digits)
}

/// Why the screen is a dialog or menu, if it is one.
fn dialog(snapshot: &Snapshot) -> Option<&'static str> {
    for row in &snapshot.rows {
        let trimmed = row.trim();
        if trimmed == "Do you want to proceed?" {
            return Some("a permission dialog is open");
        }
        if trimmed.contains("Esc to cancel") {
            return Some("a dialog or menu is open (Esc to cancel)");
        }
        // The footers of the settings lists (`/permissions`, `/config`).
        if trimmed.contains("Esc to close") || trimmed.contains("Esc to go back") {
            return Some("a dialog or menu is open (Esc to close)");
        }
        // A selected option: `❯ 1. Yes` (the prompt glyph indented, at col
        // 1 in a permission dialog, 3 or 4 in a plan approval, then a
        // number): never the composer, whose prompt is at col 0.
        let indent = row.len() - row.trim_start_matches(' ').len();
        if indent > 0
            && let Some(rest) = row[indent..].strip_prefix(PROMPT)
            && rest
                .trim_start()
                .split_once(". ")
                .is_some_and(|(number, _)| number.parse::<u32>().is_ok())
        {
            return Some("a selection list is open");
        }
    }
    None
}

/// The composer's rules: the bottom-most full-width rule, and the one
/// above it, which may carry the session's name.
fn composer_rules(snapshot: &Snapshot) -> Option<(usize, usize)> {
    let width = usize::from(snapshot.size.cols);
    let is_rule = |row: &String| row.chars().count() == width && row.chars().all(|c| c == RULE);
    let rows = &snapshot.rows;
    let bottom = rows.iter().rposition(is_rule)?;
    let top = rows[..bottom]
        .iter()
        .rposition(|row| is_rule(row) || is_named_rule(row, width))?;
    (bottom > top + 1).then_some((top, bottom))
}

/// A full-width rule with the session's name near its right end, as Claude
/// Code draws the composer's top rule once the session has one (`/rename
/// NAME`, or a name it asks the model for after a plan is approved):
/// `──…── NAME ─` (`eval-idle-renamed-session.json`).
fn is_named_rule(row: &str, width: usize) -> bool {
    let Some(rest) = row.strip_suffix(" \u{2500}") else {
        return false;
    };
    let Some((rule, name)) = rest.split_once(' ') else {
        return false;
    };
    row.chars().count() == width
        && !rule.is_empty()
        && rule.chars().all(|c| c == RULE)
        && !name.trim().is_empty()
        && !name.contains(RULE)
}

/// What the composer rows (`first` up to the rule at `bottom`) hold: human
/// text is in the default style, a placeholder is dim, the cursor cell is
/// inverse.
fn composer(snapshot: &Snapshot, first: usize, bottom: usize) -> Composer {
    let mut typed = false;
    let mut dim = false;
    let mut under_cursor = false;
    let mut other = false;
    for row in first..bottom {
        let Some(text) = snapshot.rows.get(row) else {
            return Composer::Unknown;
        };
        // The first row's prompt and its no-break space are not content.
        let skip = if row == first { 2 } else { 0 };
        for (col, c) in text.chars().enumerate().skip(skip) {
            if c == ' ' || (c == NBSP && row == first && col == 1) {
                continue;
            }
            match run_at(snapshot, row, col) {
                None => typed = true,
                Some(run) if run.inverse && run.text.chars().count() == 1 => under_cursor = true,
                Some(run) if run.dim => dim = true,
                Some(_) => other = true,
            }
        }
    }
    match (typed, dim, under_cursor, other) {
        (false, false, false, false) => Composer::Empty,
        // A placeholder: dim text, perhaps its first letter under the cursor.
        (false, true, _, false) => Composer::Empty,
        (true, _, _, _) | (false, false, true, false) => Composer::Nonempty,
        _ => Composer::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::screen::testing::{self, run};
    use crate::pty::wire::Run;

    fn snapshot(rows: &[&str], runs: Vec<Run>) -> Snapshot {
        testing::snapshot(10, rows, runs, None)
    }

    const RULE10: &str = "──────────";

    #[test]
    fn a_rule_must_span_the_whole_width() {
        let short = snapshot(&["─────", "❯\u{a0}", "─────", "  ? for shortcuts"], vec![]);
        assert_eq!(read(&short).screen, Screen::Unrecognized);
        let ok = snapshot(&[RULE10, "❯\u{a0}", RULE10, "  ? for shortcuts"], vec![]);
        assert_eq!(
            read(&ok),
            View::new(Screen::Ready, Composer::Empty, "ready, composer empty")
        );
    }

    #[test]
    fn the_top_rule_may_carry_the_session_name_the_bottom_one_not() {
        let named = "─── a b ─";
        assert_eq!(named.chars().count(), 9);
        let ok = snapshot(&[&format!("─{named}"), "❯\u{a0}", RULE10, ""], vec![]);
        assert_eq!(read(&ok).screen, Screen::Ready);
        let bottom = snapshot(&[RULE10, "❯\u{a0}", &format!("─{named}"), ""], vec![]);
        assert_eq!(read(&bottom).screen, Screen::Unrecognized);
        for odd in ["─────── x─", "───────  ─", " ───── x ─", "──── a ─ ─"]
        {
            assert_eq!(odd.chars().count(), 10);
            let odd = snapshot(&[odd, "❯\u{a0}", RULE10, ""], vec![]);
            assert_eq!(read(&odd).screen, Screen::Unrecognized, "{:?}", odd.rows[0]);
        }
    }

    #[test]
    fn a_cursor_on_a_lone_character_is_text_not_a_placeholder() {
        let inverse = Run {
            inverse: true,
            ..run(1, 2, "a")
        };
        let lone = snapshot(&[RULE10, "❯\u{a0}a", RULE10, ""], vec![inverse]);
        assert_eq!(read(&lone).composer, Composer::Nonempty);
    }

    #[test]
    fn an_indented_numbered_selection_or_a_closing_footer_is_a_dialog() {
        // A plan approval's selection is at col 3, and a settings list's
        // footer says `Esc to close`; the composer's prompt is at col 0.
        for rows in [
            [
                "   Ready to code?",
                "   ❯ 1. Yes, and use auto mode",
                "     2. No",
            ],
            [
                "  Permissions  Allow",
                "  ❯ Add a new rule…",
                "  Esc to close",
            ],
        ] {
            assert_eq!(
                read(&snapshot(&rows, vec![])).screen,
                Screen::Dialog,
                "{rows:?}"
            );
        }
        let typed = snapshot(&[RULE10, "❯\u{a0}1. do it", RULE10, ""], vec![]);
        assert_eq!(read(&typed).screen, Screen::Ready);
    }

    #[test]
    fn coloured_composer_text_is_unknown() {
        let red = Run {
            fg: Some(crate::pty::wire::Colour::Index(1)),
            ..run(1, 2, "odd")
        };
        let odd = snapshot(&[RULE10, "❯\u{a0}odd", RULE10, ""], vec![red]);
        assert_eq!(read(&odd).composer, Composer::Unknown);
    }
}
