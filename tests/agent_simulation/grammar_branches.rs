//! Model screens for the branches of the providers' screen grammars that
//! no capture reaches (issue 38, item 3): each is a real capture of
//! `fixtures/providers/<provider>/`, changed the smallest way the real
//! harness could draw it, and each reads as its branch and fails closed
//! (never a ready, empty composer a notice could go into).
//! `every_grammar_branch_is_reached_by_a_capture_or_a_named_model_screen`
//! names them.

use ding::adapter::screen::Screen;
use ding::core::protocol::Composer;
use ding::pty::wire::Snapshot;

/// A capture of `fixtures/providers/`, as a snapshot.
fn capture(relative: &str) -> Snapshot {
    let path = format!(
        "{}/fixtures/providers/{relative}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the capture");
    serde_json::from_str(&text).expect("a snapshot")
}

/// Claude Code in bash mode: `!` typed at the start of the empty
/// composer puts `!` where the prompt `❯` was, and what is typed next runs
/// as a shell command (`idle-empty.json` with that one glyph changed; no
/// capture shows the mode). Between the two rules, the row after the
/// upper one does not start with the prompt.
pub fn claude_composer_without_the_prompt() -> Snapshot {
    let mut snapshot = capture("claude/screens/idle-empty.json");
    let row = claude_composer_row(&snapshot);
    snapshot.rows[row] = snapshot.rows[row].replacen('\u{276f}', "!", 1);
    snapshot
}

/// The row of Claude Code's composer: the one its `❯` prompt begins.
fn claude_composer_row(snapshot: &Snapshot) -> usize {
    snapshot
        .rows
        .iter()
        .position(|row| row.starts_with('\u{276f}'))
        .expect("the composer row")
}

/// Claude Code's composer holding a keyword it colours, each letter its
/// own colour (`ultrathink`, as Claude Code highlights it; no capture
/// shows it): `draft.json` with `ultrathink` typed in place of its
/// draft. No default-style text, a style the grammar does not know: the
/// composer is not readable.
pub fn claude_composer_not_readable() -> Snapshot {
    use ding::pty::wire::{Colour, Run};
    let mut snapshot = capture("claude/screens/draft.json");
    let row = claude_composer_row(&snapshot);
    let word = "ultrathink";
    snapshot.rows[row] = format!("\u{276f}\u{a0}{word}");
    let row = u16::try_from(row).expect("a row");
    snapshot.runs.retain(|run| run.row != row);
    let rainbow = [196, 208, 226, 46, 51, 21, 201];
    for (i, letter) in word.chars().enumerate() {
        snapshot.runs.push(Run {
            row,
            col: 2 + u16::try_from(i).expect("a column"),
            text: letter.to_string(),
            fg: Some(Colour::Index(rainbow[i % rainbow.len()])),
            ..Run::default()
        });
    }
    let end = 2 + u16::try_from(word.len()).expect("a column");
    snapshot.runs.push(Run {
        row,
        col: end,
        text: " ".into(),
        inverse: true,
        ..Run::default()
    });
    snapshot.cursor.col = end;
    snapshot
}

/// Gemini CLI's empty composer drawn without its cursor cell, as its
/// input prompt draws the placeholder when it does not hold the focus
/// (no capture shows it): `idle-empty.json` with the inverse cell before
/// the placeholder drawn plain. The placeholder's words alone cannot be
/// told from typing.
pub fn gemini_composer_not_readable() -> Snapshot {
    let mut snapshot = capture("gemini/snapshots/idle-empty.json");
    for run in &mut snapshot.runs {
        if run.inverse && run.text == " " {
            run.inverse = false;
        }
    }
    snapshot
}

/// Codex with its cursor above the composer (`idle-empty-placeholder.json`
/// with the cursor one row up, on the blank row over the composer): as a
/// frame caught while Codex writes history above its viewport, the cursor
/// not yet moved back. No composer row is at or above the cursor.
pub fn codex_cursor_above_the_composer() -> Snapshot {
    let mut snapshot = capture("codex/snapshots/idle-empty-placeholder.json");
    snapshot.cursor.row -= 1;
    snapshot
}

/// Codex between a Return and its turn's first frame (`busy.json`, whose
/// `Working` line is not drawn yet): the submitted prompt is the last
/// block above the composer, nothing after it.
pub fn codex_prompt_just_submitted() -> Snapshot {
    let mut snapshot = capture("codex/snapshots/busy.json");
    let row = snapshot
        .rows
        .iter()
        .position(|row| row.contains("Working"))
        .expect("the Working line");
    snapshot.rows[row].clear();
    snapshot.runs.retain(|run| usize::from(run.row) != row);
    snapshot
}

/// Codex's empty composer with its cursor one row down
/// (`idle-empty-placeholder.json`, the cursor on the blank row below the
/// prompt, as a frame caught mid-redraw): the dim placeholder with the
/// cursor away from it may be a placeholder or a draft of blank lines,
/// so the composer is not readable.
pub fn codex_composer_not_readable() -> Snapshot {
    let mut snapshot = capture("codex/snapshots/idle-empty-placeholder.json");
    snapshot.cursor.row += 1;
    snapshot
}

/// Each model screen reads as its branch, and fails closed: not a ready
/// screen with an empty composer, and nothing whose content a Return could
/// be confirmed against.
#[test]
fn each_model_screen_reaches_its_branch_and_fails_closed() {
    use ding::adapter::screen::ComposerContent;
    use ding::providers::{claude, codex, gemini};

    let view = claude::screen::read(&claude_composer_without_the_prompt());
    assert_eq!(
        (view.screen, view.composer, view.why),
        (
            Screen::Unrecognized,
            Composer::Unknown,
            "composer row without the prompt"
        )
    );
    assert_eq!(
        claude::screen::composer_content(&claude_composer_without_the_prompt()),
        ComposerContent::Unreadable
    );

    let snapshot = claude_composer_not_readable();
    let view = claude::screen::read(&snapshot);
    assert_eq!(
        (view.screen, view.composer, view.why),
        (
            Screen::Ready,
            Composer::Unknown,
            "ready, composer not readable"
        )
    );
    assert_eq!(
        claude::screen::composer_content(&snapshot),
        ComposerContent::Unreadable
    );
    let snapshot = gemini_composer_not_readable();
    let view = gemini::screen::read(&snapshot);
    assert_eq!(
        (view.screen, view.composer, view.why),
        (
            Screen::Ready,
            Composer::Unknown,
            "ready, composer not readable"
        )
    );
    assert_eq!(
        gemini::screen::composer_content(&snapshot),
        ComposerContent::Unreadable
    );

    for (model, screen, why) in [
        (
            codex_cursor_above_the_composer as fn() -> Snapshot,
            Screen::Unrecognized,
            "no composer row at or above the cursor",
        ),
        (
            codex_prompt_just_submitted,
            Screen::Busy,
            "a prompt was just submitted: its turn is starting",
        ),
        (
            codex_composer_not_readable,
            Screen::Ready,
            "ready, composer not readable",
        ),
    ] {
        let snapshot = model();
        let view = codex::screen::read(&snapshot);
        assert_eq!((view.screen, view.why), (screen, why));
        assert!(
            view.screen != Screen::Ready || view.composer == Composer::Unknown,
            "{why}: {view:?}"
        );
        assert_eq!(
            codex::screen::composer_content(&snapshot),
            ComposerContent::Unreadable,
            "{why}"
        );
    }
    // The unchanged captures read otherwise: the change is what reaches
    // the branch.
    let ready = codex::screen::read(&capture("codex/snapshots/idle-empty-placeholder.json"));
    assert_eq!(ready.why, "ready, composer empty");
    let busy = codex::screen::read(&capture("codex/snapshots/busy.json"));
    assert_eq!(busy.why, "a turn is running");
    let claude = claude::screen::read(&capture("claude/screens/idle-empty.json"));
    assert_eq!(claude.why, "ready, composer empty");
    let draft = claude::screen::read(&capture("claude/screens/draft.json"));
    assert_eq!(draft.why, "ready, human text in the composer");
    let gemini = gemini::screen::read(&capture("gemini/snapshots/idle-empty.json"));
    assert_eq!(gemini.why, "ready, composer empty");
}
