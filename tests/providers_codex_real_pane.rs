//! The real Codex CLI 0.169.0 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation (rows 4, 5 and 6), run by
//! the same scenario runner as `make eval` (`ding::eval::scenario`). Each
//! row runs the aggressive arm and asserts the baseline the evaluation
//! issue measured by hand, then the careful arm on the same seed, which
//! must meet the acceptance bar, or, while Codex has no adapter, say
//! exactly that. Codex's background `codex app-server` daemon outlives the
//! TUI; the runner ends it by pid with every other process of the trial,
//! and the test checks that none is left. A printed seed replays a trial
//! (`DING_EVAL_SEED`).

mod support;

use support::real_pane::{dialog_row, draft_row, exact_idle_row};

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_codex_with_one_model_call() {
    exact_idle_row("codex");
}

#[test]
fn row_5_the_aggressive_arm_glues_the_notice_to_a_draft_in_progress_on_codex() {
    draft_row("codex");
}

#[test]
fn row_6_the_aggressive_arm_answers_an_open_approval_dialog_on_codex() {
    dialog_row("codex");
}
