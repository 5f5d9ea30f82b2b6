//! The real Gemini CLI 0.61.0 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation, run by the same scenario
//! runner as `make eval` (`ding::eval::scenario`): idle with the person
//! typing or pressing Esc around DING's act (row 4), a draft (5), a dialog
//! (6), a message during a turn's command (3) and a burst (7). Each row
//! runs the aggressive arm and asserts what it must do there, then the
//! careful arm on the same seed, which must meet the acceptance bar. Gemini
//! CLI has no native idle path: its careful arm is the typed notice under
//! the input fence. A printed seed replays a trial (`DING_EVAL_SEED`).

mod support;

use ding::eval::arm::Arm;
use ding::eval::row::Row;
use support::real_pane::*;

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_gemini_cli_with_one_model_call() {
    exact_idle_row("gemini");
}

#[test]
fn row_5_the_aggressive_arm_glues_the_notice_to_a_draft_in_progress_on_gemini_cli() {
    draft_row("gemini");
}

#[test]
fn row_6_the_aggressive_arm_answers_an_open_dialog_on_gemini_cli() {
    dialog_row("gemini");
}

/// Rows the aggressive arm runs without harm to the person (a message in a
/// running turn, a burst at idle): both arms deliver everything, and the
/// careful arm meets the bar.
fn delivered_by_both(row: Row) {
    let seed = smoke_seed();
    let facts = smoke_trial("gemini", row, Arm::Aggressive, seed);
    let m = ran(&facts);
    assert_eq!(m.lost, 0, "{:?}", m.messages);
    careful_meets_the_bar("gemini", row, seed, m);
    passed(&facts);
}

#[test]
fn row_3_a_message_during_a_running_command_reaches_gemini_cli() {
    delivered_by_both(Row::DuringTurn);
}

#[test]
fn row_7_a_burst_reaches_gemini_cli() {
    delivered_by_both(Row::Burst);
}
