//! The evaluation's minimum over trials recorded on the real Claude Code
//! 2.1.328 (`fixtures/providers/claude/eval/`), one careful trial per
//! matrix row: the fewest calls a person would need, from the trial's
//! records and its model server's log alone, against the count read from
//! the trial's timeline by hand; and the careful arm's calls against them.

use std::path::Path;

use serde::Deserialize;

use crate::evidence::{Records, fewest_calls, metrics};
use crate::logs::Request;

/// One recorded trial: what it recorded, what its model server logged,
/// and the model calls of turns the trial counted.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Recorded {
    records: Records,
    requests: Vec<Request>,
    turn_calls: usize,
}

fn recorded(name: &str) -> Recorded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/claude/eval")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("the recorded trial");
    serde_json::from_str(&text).expect("a recorded trial")
}

/// The minimum of the trial recorded in `name`, checked against the
/// fewest calls read from its timeline by hand (`own` the person's work
/// needs, `extra` more for the messages); and the careful arm's calls
/// (`careful`, every message delivered) against it.
fn its_minimum_is(name: &str, own: usize, extra: usize, careful: usize) {
    let trial = recorded(name);
    let fewest = fewest_calls(&trial.records, &trial.requests);
    assert_eq!((fewest.own, fewest.extra), (own, extra), "{name}");
    let m = metrics(&trial.records, &trial.requests, &[]);
    assert_eq!(m.calls.turn_calls, trial.turn_calls, "{name}");
    assert_eq!(m.calls.turn_calls, careful, "{name}");
    assert_eq!(
        m.delivered,
        trial.records.sent.len(),
        "{name}: every message"
    );
    assert!(m.calls.turn_calls <= fewest.total(), "{name}");
}

/// Row 1: two files waited before the start; one call carries both.
#[test]
fn row_1_a_startup_backlog_of_two_needs_one_call() {
    its_minimum_is("row1-startup-backlog-careful-trial.json", 0, 1, 1);
}

/// Row 2: the person's own prompt came first (one call); the backlog
/// arrived 0.23 s after that call, past what it could carry: one more.
#[test]
fn row_2_a_resume_backlog_after_the_persons_prompt_needs_one_call_more() {
    its_minimum_is("row2-resume-backlog-careful-trial.json", 1, 1, 2);
}

/// Row 3: the message arrived while the person's command ran; the turn's
/// tool-result call (its second) carries it at no call of its own.
#[test]
fn row_3_a_message_during_a_turn_rides_its_next_call() {
    its_minimum_is("row3-during-turn-careful-trial.json", 2, 0, 2);
}

/// Row 4 (the person typing): the person's first key came 41 ms before
/// the arrival and their line went 4.9 s after it; its call carries the
/// message, so it needs none of its own.
#[test]
fn row_4_a_message_as_the_person_starts_a_line_rides_that_line() {
    its_minimum_is("row4-exact-idle-careful-trial.json", 1, 0, 1);
}

/// Row 5: a draft was in progress when the message arrived; the draft's
/// own call carries it.
#[test]
fn row_5_a_message_during_a_draft_rides_the_drafts_call() {
    its_minimum_is("row5-draft-careful-trial.json", 1, 0, 1);
}

/// Row 6: the message arrived while a picker the person opened at idle
/// was up; DING woke the session once the person had answered it. A
/// person would need one call after their answer, and so did DING.
#[test]
fn row_6_a_message_during_a_picker_at_idle_needs_one_call() {
    its_minimum_is("row6-dialog-careful-trial.json", 0, 1, 1);
}

/// Row 7: two messages 0.66 s apart at idle: a person who knew both
/// would wait for the second, one call.
#[test]
fn row_7_a_burst_of_two_needs_one_call() {
    its_minimum_is("row7-burst-careful-trial.json", 0, 1, 1);
}

/// Row 8: the adapter was killed during the person's command and the
/// message came while it was down; the turn's tool-result call carries it.
#[test]
fn row_8_a_message_while_the_adapter_is_down_rides_the_turns_next_call() {
    its_minimum_is("row8-adapter-loss-careful-trial.json", 2, 0, 2);
}

/// Row 9: the message came 0.65 s after the person's first turn, and
/// their next line began 2.3 s after it, past its window: one call of its
/// own beside the person's two (a compaction is no turn's call).
#[test]
fn row_9_a_message_around_a_compaction_needs_one_call() {
    its_minimum_is("row9-compaction-careful-trial.json", 2, 1, 3);
}

/// Row 10: as row 9, around a `/clear`.
#[test]
fn row_10_a_message_around_a_clear_needs_one_call() {
    its_minimum_is("row10-clear-careful-trial.json", 2, 1, 3);
}

/// Row 11: the harness was killed while the person's command ran, so
/// that turn has no call after the message: one call of its own, after
/// the restart.
#[test]
fn row_11_a_message_when_the_harness_crashed_needs_one_call() {
    its_minimum_is("row11-crash-careful-trial.json", 1, 1, 2);
}

/// Row 12: the supervisor's line went in 0.25 s after the message
/// arrived; its call carries the message.
#[test]
fn row_12_a_message_beside_a_supervisors_line_rides_it() {
    its_minimum_is("row12-intervention-careful-trial.json", 1, 0, 1);
}
