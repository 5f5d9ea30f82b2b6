//! Codex CLI 0.169.0's screen grammar against every real capture in
//! `fixtures/providers/codex/snapshots/` (and `shared/`): each capture says
//! what it must be read as (`_expect`), styled runs included. Combined with
//! the hooks, no capture is idle evidence unless a hook ended the turn; a
//! selection list or dialog never is, whatever the hooks said; and a reply
//! streaming with its `Working` line gone (the streaming hole) is never
//! idle while the hooks say the turn runs.

mod support;

use std::time::Duration;

use ding::core::protocol::{ActivityState, Composer};
use ding::providers::codex::activity::{Heard, HookActivity, combine};
use ding::providers::codex::screen::{Screen, read};
use ding::pty::wire::Snapshot;
use serde_json::Value;
use support::provider_fixtures::{
    check_a_notice_glued_to_a_draft, check_every_capture, snapshot_named,
};

const DIRS: [&str; 2] = [
    "fixtures/providers/codex/snapshots",
    "fixtures/providers/codex/snapshots/shared",
];

fn captures() -> Vec<(String, Value)> {
    DIRS.iter()
        .flat_map(|dir| support::fixture_files::json_values(dir))
        .collect()
}

fn snapshot(capture: &Value) -> Snapshot {
    serde_json::from_value(capture.clone()).expect("a snapshot")
}

fn heard(activity: HookActivity) -> Heard {
    Heard {
        activity,
        since: Duration::from_secs(60),
        delivery_waiting: None,
    }
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
        |expect, snapshot| {
            let fresh = read(snapshot).fresh;
            (expect["fresh"]
                .as_bool()
                .is_some_and(|wanted| wanted != fresh))
            .then(|| format!("read fresh={fresh}"))
        },
    );
}

/// The guarantee that matters most: only a capture of a ready, empty
/// composer can become idle evidence (which could lead to terminal input),
/// and only once a hook ended the turn.
#[test]
fn only_a_ready_empty_capture_after_a_turn_ended_is_idle_with_an_empty_composer() {
    for (name, capture) in captures() {
        let view = read(&snapshot(&capture));
        let ready_empty =
            capture["_expect"]["screen"] == "ready" && capture["_expect"]["composer"] == "empty";
        for activity in [
            HookActivity::Active,
            HookActivity::Child,
            HookActivity::AwaitingApproval,
            HookActivity::Ended,
            HookActivity::Idle,
        ] {
            let reading = combine(view, heard(activity));
            let idle_empty =
                reading.state == ActivityState::Idle && reading.composer == Composer::Empty;
            let expected = ready_empty && activity == HookActivity::Idle;
            assert_eq!(
                idle_empty, expected,
                "{name} after {activity:?}: {reading:?}"
            );
        }
    }
}

/// The streaming hole: mid-reply, with the `Working` line gone, the screen
/// reads exactly like an idle one; only the hooks tell them apart.
#[test]
fn a_streaming_reply_looks_ready_and_is_idle_only_after_the_turn_ended() {
    let streaming: Vec<(String, Value)> = captures()
        .into_iter()
        .filter(|(_, capture)| capture["_expect"]["streaming"] == true)
        .collect();
    assert_eq!(streaming.len(), 2, "the captures of the hole");
    for (name, capture) in streaming {
        let view = read(&snapshot(&capture));
        assert_eq!(
            (view.screen, view.composer),
            (Screen::Ready, Composer::Empty),
            "{name}"
        );
        let during = combine(view, heard(HookActivity::Active));
        assert_eq!(during.state, ActivityState::Active, "{name}: {during:?}");
        // No hook heard since the adapter started: a conversation on screen
        // may be streaming, so it is not vouched for either.
        let unheard = combine(view, heard(HookActivity::Unheard));
        assert_eq!(unheard.state, ActivityState::Unknown, "{name}");
    }
}

/// Styles decide, not text alone: without its styled runs the placeholder
/// reads as typed text, and a selection list is still never an empty
/// composer (its footer or its hidden cursor say so).
#[test]
fn without_their_styled_runs_no_capture_reads_as_an_empty_composer() {
    for (name, capture) in captures() {
        let mut bare = snapshot(&capture);
        bare.runs.clear();
        let view = read(&bare);
        assert_ne!(
            (view.screen, view.composer),
            (Screen::Ready, Composer::Empty),
            "{name} without styles"
        );
        if capture["_expect"]["screen"] == "dialog" {
            assert_ne!(view.composer, Composer::Empty, "{name}");
        }
    }
}

/// The notice the capture's paste typed into the composer after a draft.
const PASTED_NOTICE: &str = "[ding] 1 unread inbox message in /home/agent/rp/runs/cx-s2/inbox/new: 20261201T062201830066Z-12de-3d75f09a.md. Read each file, then archive it: ding archive cx-s2 FILE";

fn capture(name: &str) -> Snapshot {
    snapshot_named(captures(), name)
}

/// The Return of a typed notice waits for a composer that holds it and
/// nothing else: the real capture of a notice pasted after a draft holds
/// the draft too, the same screen without the draft holds the notice
/// alone, and a long paste's placeholder gives only its length.
#[test]
fn the_composer_is_read_as_the_text_it_holds_for_confirming_a_typed_notice() {
    use ding::adapter::screen::ComposerContent;
    use ding::providers::codex::screen::composer_content;

    let glued = capture("draft-plus-pasted-notice");
    check_a_notice_glued_to_a_draft(
        &glued,
        "please refactor the parser",
        PASTED_NOTICE,
        composer_content,
    );

    let mut long = capture("draft");
    let row = usize::from(long.cursor.row);
    long.rows[row] =
        long.rows[row].replace("please refactor the parser", "[Pasted Content 1200 chars]");
    assert_eq!(
        composer_content(&long),
        ComposerContent::Tail {
            hidden: 1200,
            tail: String::new()
        }
    );

    for name in ["approval-dialog", "busy-command-running"] {
        assert_eq!(
            composer_content(&capture(name)),
            ComposerContent::Unreadable,
            "{name}"
        );
    }
}

/// The dialogs Codex draws in its first seconds, after its first composer
/// frame (findings §11): a person's own untrusted hooks to review, and an
/// untrusted folder. None may be read as idle, whatever the hooks said; a
/// new screen is not idle evidence until it has settled past them
/// (`STARTUP_SETTLE`).
#[test]
fn the_startup_dialogs_are_never_idle() {
    for name in [
        "hooks-review-modal",
        "hooks-review-modal-remote",
        "hooks-review-after-notice-remote",
        "trust-folder-dialog",
    ] {
        let snapshot = capture(name);
        assert_eq!(read(&snapshot).screen, Screen::Dialog, "{name}");
        for activity in [HookActivity::Unheard, HookActivity::Idle] {
            let reading = combine(read(&snapshot), heard(activity));
            assert_ne!(
                reading.state,
                ActivityState::Idle,
                "{name} after {activity:?}"
            );
        }
    }
}

/// The dialogs a model's tool call or a person's slash command opens
/// (2026-12-04): a file change's approval, a question, Plan mode's "Implement
/// this plan?" (drawn after the turn's `Stop`, so the hooks already say
/// idle), and the pickers. None is ever idle, whatever the hooks said. The
/// question draws its selected row at col 2 and hides the cursor: it is
/// not read as a dialog, but as a screen with no composer.
#[test]
fn the_dialogs_a_tool_or_a_command_opens_are_never_idle() {
    for (name, screen) in [
        ("edit-approval-dialog", Screen::Dialog),
        ("choice-dialog", Screen::Unrecognized),
        ("plan-approval-dialog", Screen::Dialog),
        ("picker-model", Screen::Dialog),
        ("picker-permissions", Screen::Dialog),
        ("picker-review", Screen::Dialog),
        ("picker-resume", Screen::Unrecognized),
    ] {
        let snapshot = capture(name);
        let view = read(&snapshot);
        assert_eq!(view.screen, screen, "{name}");
        assert_ne!(view.composer, Composer::Empty, "{name}");
        for activity in [
            HookActivity::Unheard,
            HookActivity::Active,
            HookActivity::AwaitingApproval,
            HookActivity::Ended,
            HookActivity::Idle,
        ] {
            let reading = combine(view, heard(activity));
            assert_ne!(
                reading.state,
                ActivityState::Idle,
                "{name} after {activity:?}"
            );
        }
    }
}

/// Under `NO_COLOR` Codex 0.169.0 drops its colours but keeps the bold and
/// dim its grammar reads (`no-color-*.json`): read as in colour. Under
/// `TERM=dumb` it asks before it starts, and ends on any answer but `y`
/// (`term-dumb-*.json`): never idle, and the reason names the cause.
#[test]
fn without_colour_codex_reads_as_in_colour_and_a_dumb_terminal_names_its_cause() {
    use ding::providers::codex::screen::DUMB_TERMINAL;
    let captures = captures();
    let mut seen = 0;
    for (name, capture) in &captures {
        let snapshot = snapshot(capture);
        if name.starts_with("no-color-") {
            seen += 1;
            assert!(
                snapshot
                    .runs
                    .iter()
                    .all(|run| run.fg.is_none() && run.bg.is_none()),
                "{name} has no colour"
            );
            assert_ne!(read(&snapshot).screen, Screen::Unrecognized, "{name}");
        } else if name.starts_with("term-dumb-") {
            seen += 1;
            let view = read(&snapshot);
            assert_eq!(
                (view.screen, view.composer, view.why),
                (Screen::Unrecognized, Composer::Unknown, DUMB_TERMINAL),
                "{name}"
            );
        }
    }
    assert!(seen >= 6, "{seen}");
    let idle = snapshot_named(captures, "no-color-idle-empty");
    let view = read(&idle);
    assert_eq!(
        (view.screen, view.composer),
        (Screen::Ready, Composer::Empty)
    );
}
