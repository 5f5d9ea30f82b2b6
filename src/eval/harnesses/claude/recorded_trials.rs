//! The evaluation's minimum over trials recorded on the real Claude Code
//! 2.1.328 (`fixtures/providers/claude/eval/`): the fewest calls a person
//! would need, from the trial's records and its model server's log alone,
//! and the careful arm's calls against them.

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

/// Row 6: the message arrived while a picker the person opened at idle
/// was up; DING woke the session once the person had answered it. A
/// person would need one call after their answer, and so did DING.
#[test]
fn a_message_during_a_picker_at_idle_needs_one_call_and_the_careful_arm_made_one() {
    let trial = recorded("row6-dialog-careful-trial.json");
    let fewest = fewest_calls(&trial.records, &trial.requests);
    assert_eq!((fewest.own, fewest.extra), (0, 1));
    let m = metrics(&trial.records, &trial.requests, &[]);
    assert_eq!(m.calls.turn_calls, trial.turn_calls);
    assert_eq!((m.delivered, m.calls.turn_calls), (1, 1));
    assert!(m.calls.turn_calls <= fewest.total());
}
