//! The real OpenCode 1.18.33 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation, run by the same scenario
//! runner as `make eval` (`ding-eval trial`): idle with the person typing
//! or pressing Esc around DING's act (row 4), a draft (5), a dialog (6), a
//! message during a turn's command (3) and a burst (7). The careful arm
//! must meet the acceptance bar on each and write no byte to OpenCode's
//! terminal (its plugins deliver everything); the aggressive arm's harm in
//! rows 5 and 6 is shown under `make test-real`. Row 3's aggressive arm
//! also checks that the evaluation's harness folder (its scratch home, its
//! Chat Completions wire format and its pane) drives the real TUI end to
//! end. A printed seed replays a trial (`DING_EVAL_SEED`).

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
    types_nothing(careful_meets_the_bar(
        "opencode",
        row::DURING_TURN,
        seed,
        Some(m),
    ));
    passed(&facts);
}

/// The careful arm ran, and DING wrote no byte to OpenCode's terminal.
fn types_nothing(careful: Option<serde_json::Value>) {
    let careful = careful.expect("OpenCode has a provider: the careful arm runs");
    let pty = &careful["pty"];
    assert_eq!(pty["deliveryBytes"], 0, "DING typed into OpenCode: {pty}");
    assert_eq!(pty["deliveryWrites"], 0, "DING typed into OpenCode: {pty}");
}

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_opencode_with_no_byte_typed() {
    types_nothing(exact_idle_row("opencode"));
}

/// Row 5: the careful arm keeps the person's draft whole, and their own
/// prompt carries the message; with `DING_REAL_PANE_BASELINE=1` (`make
/// test-real`) the aggressive arm first shows it glues its notice to the
/// draft.
#[test]
fn row_5_a_message_while_a_draft_is_in_progress_on_opencode() {
    types_nothing(draft_row("opencode"));
}

/// Row 6: the careful arm never answers the dialog (OpenCode's Enter
/// allows a command); with `DING_REAL_PANE_BASELINE=1` (`make test-real`)
/// the aggressive arm first shows it does.
#[test]
fn row_6_a_message_while_a_dialog_is_open_on_opencode() {
    types_nothing(dialog_row("opencode"));
}

/// Row 7: a burst at idle: every message delivered, in as few calls as
/// the fewest a person would need, with no byte typed.
#[test]
fn row_7_a_burst_reaches_opencode() {
    let seed = smoke_seed();
    types_nothing(careful_meets_the_bar("opencode", row::BURST, seed, None));
}
