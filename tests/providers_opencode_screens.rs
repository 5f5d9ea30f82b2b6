//! OpenCode 1.18.33's screen grammar against every real capture in
//! `fixtures/providers/opencode/snapshots/`: each capture says what it must
//! be read as (`_expect`), and none may be read as an idle, empty composer
//! unless it is one. DING never types into OpenCode, so an idle, empty
//! reading is what lets the native idle path start a turn.

mod support;

use ding::adapter::screen::ComposerContent;
use ding::core::protocol::Composer;
use ding::providers::opencode::screen::{composer_content, read};
use serde_json::Value;
use support::provider_fixtures::{
    check_every_capture, check_only_idle_empty_captures_read_idle_and_empty, snapshot_named,
};

fn captures() -> Vec<(String, Value)> {
    support::fixture_files::json_values("fixtures/providers/opencode/snapshots")
}

#[test]
fn every_capture_is_read_as_it_says() {
    check_every_capture(
        &captures(),
        30,
        |snapshot| {
            let view = read(snapshot);
            (view.screen, view.composer, view.why)
        },
        |_, _| None,
    );
}

/// Only a capture of an idle, empty composer yields evidence that could
/// start a turn.
#[test]
fn only_idle_empty_captures_read_as_idle_with_an_empty_composer() {
    check_only_idle_empty_captures_read_idle_and_empty(&captures(), |snapshot| {
        read(snapshot).reading()
    });
}

/// The home screen's placeholder is nothing only in its muted colour: the
/// same words with the styled runs taken away could be typed, and are not
/// read as empty.
#[test]
fn without_its_styled_runs_the_placeholder_is_not_empty() {
    let mut snapshot = snapshot_named(captures(), "home-startup");
    assert_eq!(read(&snapshot).composer, Composer::Empty);
    snapshot.runs.clear();
    assert_ne!(read(&snapshot).composer, Composer::Empty);
}

/// The composer is read as the text it holds, rows joined.
#[test]
fn the_composer_is_read_as_the_text_it_holds() {
    let draft = snapshot_named(captures(), "idle-draft");
    assert_eq!(
        composer_content(&draft),
        ComposerContent::Text("a one-line draft".into())
    );
    let lines = snapshot_named(captures(), "idle-draft-multiline");
    assert_eq!(
        composer_content(&lines),
        ComposerContent::Text("a one-line draft\nsecond line".into())
    );
    let home = snapshot_named(captures(), "home-draft");
    assert_eq!(
        composer_content(&home),
        ComposerContent::Text("a home draft".into())
    );
    let busy = snapshot_named(captures(), "busy-draft");
    assert_eq!(composer_content(&busy), ComposerContent::Unreadable);
}
