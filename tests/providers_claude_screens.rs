//! Claude Code 2.1.328's screen grammar against every real capture in
//! `fixtures/providers/claude/screens/`: each capture says what it must be
//! read as (`_expect`), styled runs included, and none may be read as an
//! idle, empty composer unless it is one.

mod support;

use ding::core::protocol::{ActivityState, Composer};
use ding::providers::claude::screen::read;
use ding::pty::wire::Snapshot;
use serde_json::Value;
use support::provider_fixtures::{
    check_a_notice_glued_to_a_draft, check_every_capture,
    check_only_idle_empty_captures_read_idle_and_empty, snapshot_named,
};

fn captures() -> Vec<(String, Value)> {
    support::fixture_files::json_values("fixtures/providers/claude/screens")
}

#[test]
fn every_capture_is_read_as_it_says() {
    check_every_capture(
        &captures(),
        20,
        |snapshot| {
            let view = read(snapshot);
            (view.screen, view.composer, view.why)
        },
        |_, _| None,
    );
}

/// The one guarantee that matters most: only a capture of an idle, empty
/// composer yields evidence that could lead to terminal input.
#[test]
fn only_idle_empty_captures_read_as_idle_with_an_empty_composer() {
    check_only_idle_empty_captures_read_idle_and_empty(&captures(), |snapshot| {
        read(snapshot).reading()
    });
}

/// Styles decide, not text alone: a draft and an empty composer differ
/// only in the rows, but a queued placeholder and a draft differ only in
/// their styled runs. With the runs taken away, the placeholder reads as
/// typed text, never as empty.
#[test]
fn without_its_styled_runs_a_placeholder_is_not_empty() {
    for (name, capture) in captures() {
        if !name.contains("queued") {
            continue;
        }
        let mut snapshot: Snapshot = serde_json::from_value(capture).expect("a snapshot");
        assert_eq!(read(&snapshot).composer, Composer::Empty, "{name}");
        snapshot.runs.clear();
        assert_eq!(read(&snapshot).composer, Composer::Nonempty, "{name}");
    }
}

/// The notice the capture's paste typed into the composer after a draft.
const PASTED_NOTICE: &str = "[ding] 1 unread inbox message in /home/agent/rp/runs/cl-s2/inbox/new: 20261201T061944462504Z-81d-030ebd1c.md. Read each file, then archive it: ding archive cl-s2 FILE";

fn capture(name: &str) -> Snapshot {
    snapshot_named(captures(), name)
}

/// The Return of a typed notice waits for a composer that holds it and
/// nothing else: the real capture of a notice pasted after a draft holds
/// the draft too, the same screen without the draft holds the notice
/// alone, and a long paste's placeholder says only that a paste is there.
#[test]
fn the_composer_is_read_as_the_text_it_holds_for_confirming_a_typed_notice() {
    use ding::adapter::screen::ComposerContent;
    use ding::providers::claude::screen::composer_content;

    let glued = capture("earlier-draft-plus-pasted-notice");
    check_a_notice_glued_to_a_draft(
        &glued,
        "please refactor the parser",
        PASTED_NOTICE,
        composer_content,
    );

    let mut long = capture("draft");
    let row = long
        .rows
        .iter()
        .position(|row| row.contains("please refactor"))
        .expect("the draft's row");
    long.rows[row] = long.rows[row].replace("please refactor", "[Pasted text #1 +3 lines]");
    assert_eq!(composer_content(&long), ComposerContent::Paste);
    long.rows[row] = long.rows[row].replace("[Pasted text #1 +3 lines]", "[Pasted text #x]");
    assert!(matches!(composer_content(&long), ComposerContent::Text(_)));

    // Not a ready composer: nothing is read from it.
    for name in ["permission-dialog", "busy-tool-running"] {
        assert_eq!(
            composer_content(&capture(name)),
            ComposerContent::Unreadable,
            "{name}"
        );
    }
}

/// Claude Code's folder trust question at startup ("No, exit" preselected:
/// a Return there ends the session, `claude-startup-findings.md`) and the
/// screen it leaves after such a Return: never idle.
#[test]
fn the_startup_trust_question_is_never_idle() {
    for name in ["trust-folder-dialog", "trust-folder-after-notice"] {
        let view = read(&capture(name));
        assert_ne!(
            view.reading().state,
            ActivityState::Idle,
            "{name}: {view:?}"
        );
    }
}

/// Under `NO_COLOR`, `CI`, `FORCE_COLOR=0` or `TERM=dumb` Claude Code
/// 2.1.328 draws no style but its inverse cursor cell (`monochrome-*.json`):
/// the idle composer still reads as idle and empty, a turn as busy by its
/// footer, and a draft as human text, also during a turn (whose grey
/// prompt is not drawn): it holds delivery all the same.
#[test]
fn without_colour_the_screen_is_read_as_in_colour_and_a_draft_still_holds() {
    let mut seen = 0;
    for (name, capture) in captures() {
        if !name.starts_with("monochrome-") {
            continue;
        }
        seen += 1;
        let snapshot: Snapshot = serde_json::from_value(capture.clone()).expect("a snapshot");
        let styled = snapshot.runs.iter().filter(|run| !run.inverse).count();
        assert_eq!(styled, 0, "{name} is drawn without colour");
        let reading = read(&snapshot).reading();
        let idle_empty =
            reading.state == ActivityState::Idle && reading.composer == Composer::Empty;
        assert_eq!(idle_empty, name.contains("idle"), "{name}: {reading:?}");
        if name.contains("draft") {
            assert_eq!(reading.composer, Composer::Nonempty, "{name}");
        }
    }
    assert!(seen >= 6, "{seen}");
}
