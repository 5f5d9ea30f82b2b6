//! Gemini CLI 0.61.0's screen grammar against every real capture in
//! `fixtures/providers/gemini/snapshots/`: each capture says what it must
//! be read as (`_expect`), and none may be read as an idle, empty composer
//! unless it is one.

mod support;

use ding::adapter::screen::ComposerContent;
use ding::core::protocol::{ActivityState, Composer};
use ding::providers::gemini::screen::{composer_content, read};
use ding::pty::wire::Snapshot;
use serde_json::Value;
use support::provider_fixtures::{
    check_every_capture, check_only_idle_empty_captures_read_idle_and_empty, snapshot_named,
};

fn captures() -> Vec<(String, Value)> {
    support::fixture_files::json_values("fixtures/providers/gemini/snapshots")
}

#[test]
fn every_capture_is_read_as_it_says() {
    check_every_capture(
        &captures(),
        40,
        |snapshot| {
            let view = read(snapshot);
            (view.screen, view.composer, view.why)
        },
        |_, _| None,
    );
}

/// Only a capture of an idle, empty composer yields evidence that could
/// lead to terminal input.
#[test]
fn only_idle_empty_captures_read_as_idle_with_an_empty_composer() {
    check_only_idle_empty_captures_read_idle_and_empty(&captures(), |snapshot| {
        read(snapshot).reading()
    });
}

/// The placeholder is nothing only in its own style: the same words with
/// the styled runs taken away could be typed, and are not read as empty.
#[test]
fn without_its_styled_runs_the_placeholder_is_not_empty() {
    let mut snapshot = snapshot_named(captures(), "idle-empty");
    assert_eq!(read(&snapshot).composer, Composer::Empty);
    snapshot.runs.clear();
    assert_ne!(read(&snapshot).composer, Composer::Empty);
}

/// The composer is read as the text it holds, wrapped rows joined, for
/// confirming a typed notice before its Return.
#[test]
fn the_composer_is_read_as_the_text_it_holds() {
    let draft = snapshot_named(captures(), "draft");
    assert_eq!(
        composer_content(&draft),
        ComposerContent::Text("please refactor the parser".into())
    );
    let lines = snapshot_named(captures(), "enter-as-newline-pasteN");
    assert_eq!(
        composer_content(&lines),
        ComposerContent::Text("paste test 7 pasteN 0ms\nsecond line\nthird line".into())
    );
    let busy = snapshot_named(captures(), "busy-draft");
    assert_eq!(composer_content(&busy), ComposerContent::Unreadable);
}

/// Under `CI` (any value), `FORCE_COLOR=0`, `TERM=dumb` or `NO_COLOR`,
/// Gemini CLI draws its screen without colour (`mono-*.json`): never read,
/// not even a draft, and the reason names the cause and the fix, for
/// `ding status`. In 16, 256 and 24-bit colour (`colour-*.json`, the
/// evaluation's `CI=false GITHUB_ACTIONS=false` among them) it is read.
#[test]
fn a_screen_drawn_without_colour_is_never_read_and_says_why() {
    use ding::adapter::Provider;
    use ding::adapter::screen::Screen;
    use ding::providers::gemini::adapter::Gemini;
    use ding::providers::gemini::screen::COLOURLESS;
    let mut mono = 0;
    let mut colour = 0;
    for (name, capture) in captures() {
        let snapshot: Snapshot = serde_json::from_value(capture).expect("a snapshot");
        let view = read(&snapshot);
        if name.starts_with("mono-") {
            mono += 1;
            assert_eq!(
                (view.screen, view.composer, view.why),
                (Screen::Unrecognized, Composer::Unknown, COLOURLESS),
                "{name}"
            );
            assert_eq!(composer_content(&snapshot), ComposerContent::Unreadable);
            // What the adapter reports, and so what `ding status` shows.
            let mut gemini = Gemini::new(None, "ding".into());
            let reading = gemini.evidence(&snapshot, ding::core::time::Time::ZERO);
            assert_eq!(reading.state, ActivityState::Unknown, "{name}");
            assert!(reading.reason.starts_with(COLOURLESS), "{name}");
        } else {
            // Every other capture was drawn in colour: none says otherwise.
            assert_ne!(view.why, COLOURLESS, "{name}");
            if name.starts_with("colour-") {
                colour += 1;
                assert_ne!(view.screen, Screen::Unrecognized, "{name}: {}", view.why);
            }
        }
    }
    assert!(mono >= 9 && colour >= 7, "{mono} {colour}");
    assert!(
        COLOURLESS.contains("NO_COLOR") && COLOURLESS.contains("CI"),
        "the reason names the variables"
    );
}

/// A paste over 500 characters or 5 lines is drawn folded
/// (`docs/providers/gemini-findings.md` 6.5): `[Pasted Text: 900 chars]`
/// is a notice of 900 characters and no other, `[Pasted Text: 12 lines]`
/// says nothing of what it holds; both are a composer that is not empty.
/// Read as text, a long notice's Return was never confirmed (found by the
/// whole-agent simulation once its files were named as senders name
/// them).
#[test]
fn a_folded_paste_is_read_as_what_its_placeholder_says() {
    use ding::adapter::screen::holds_exactly;
    let chars = snapshot_named(captures(), "paste-900chars");
    assert_eq!(read(&chars).composer, Composer::Nonempty);
    let content = composer_content(&chars);
    assert_eq!(
        content,
        ComposerContent::Tail {
            hidden: 900,
            tail: String::new()
        }
    );
    assert!(holds_exactly(&content, &"w".repeat(900)));
    assert!(!holds_exactly(&content, &"w".repeat(899)));
    let lines = snapshot_named(captures(), "paste-12lines");
    assert_eq!(read(&lines).composer, Composer::Nonempty);
    assert_eq!(composer_content(&lines), ComposerContent::Paste);
}
