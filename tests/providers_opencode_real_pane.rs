//! The real OpenCode 1.18.33 TUI, model-free, under `ding up`, run by the
//! same scenario runner as `make eval` (`ding-eval trial`). OpenCode has
//! no provider yet, so only the aggressive arm runs here: this is the
//! check that the evaluation's harness folder (its scratch home, its Chat
//! Completions wire format and its pane) drives the real TUI end to end.
//! A printed seed replays a trial (`DING_EVAL_SEED`).

mod support;

use support::real_pane::*;

/// Row 3 (a message while the model's command runs, or right after the
/// person's Return): the typist's prompt starts a session whose title
/// request is logged apart and is no model call, the message reaches the
/// model, and nothing else is asked of the model server.
#[test]
fn row_3_a_message_during_a_turn_reaches_opencode_and_its_title_is_no_model_call() {
    let seed = smoke_seed();
    let facts = smoke_trial("opencode", row::DURING_TURN, AGGRESSIVE, seed);
    let m = ran(&facts);
    let messages = m["messages"].as_array().expect("messages");
    assert!(
        messages
            .iter()
            .all(|message| message["delivered"] == true || message["garbled"] == true),
        "{}",
        m["messages"]
    );
    assert_eq!(m["calls"]["titles"], 1, "{}", m["calls"]);
    assert_eq!(m["calls"]["other"], 0, "{}", m["calls"]);
    assert!(
        m["calls"]["turnCalls"].as_u64() >= Some(2),
        "{}",
        m["calls"]
    );
    passed(&facts);
}
