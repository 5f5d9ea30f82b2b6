//! The real Claude Code 2.1.328 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation (rows 4, 5 and 6), run by
//! the same trial runner as `make eval` (`ding-eval trial`). Each
//! row runs the aggressive arm and asserts the baseline the evaluation
//! issue measured by hand (rows 5 and 6 only under `make test-real`), then
//! the careful arm on the same seed, which must meet the acceptance bar. A
//! printed seed replays a trial (`DING_EVAL_SEED`).

mod support;

use ding::pty::wire::Snapshot;
use support::real_pane::*;
use support::sidecar_agent::Agent;

/// Claude Code 2.1.328 empty composer: a row that is the prompt `❯` alone
/// (then U+00A0, trimmed or not) between two full-width `─` rules
/// (fixtures: the captures in docs/providers/model-servers.md).
fn empty_composer(snapshot: &Snapshot) -> bool {
    let rule = |row: &String| row.starts_with("──────────");
    snapshot.rows.windows(3).any(|rows| {
        rule(&rows[0]) && rule(&rows[2]) && rows[1].trim_end_matches([' ', '\u{a0}']) == "❯"
    })
}

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_claude_code_with_one_model_call() {
    exact_idle_row("claude");
}

/// Row 5: the careful arm keeps the person's draft whole; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it glues its notice to the draft.
#[test]
fn row_5_a_message_while_a_draft_is_in_progress_on_claude_code() {
    draft_row("claude");
}

/// Row 6: the careful arm never answers the dialog; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it does.
#[test]
fn row_6_a_message_while_a_permission_dialog_is_open_on_claude_code() {
    dialog_row("claude");
}

/// The aggressive default's cost for a burst of five at idle, for
/// comparison with `turn-boundary+fresh-idle` (one wake, one model call,
/// in `tests/providers_claude_careful_real_pane.rs`): every message
/// arrives, in as many notices and model calls as the timing makes.
#[test]
#[ignore = "a measurement for the record: make test-real"]
fn the_aggressive_default_delivers_a_burst_of_five_in_several_notices() {
    let binary = harness_binary("DING_HARNESS_CLAUDE");
    let agent = Agent::new("claude-burst", "");
    let model = ModelServer::start("anthropic", &agent.path("model"));
    prepare_harness(&agent, "claude", &binary, &model);
    up_until_empty_composer(&agent, &model, empty_composer);
    let names = send_burst(&agent, 5);
    for name in &names {
        model.wait_request(&format!("a call carrying {name}"), |request| {
            carries(request, name)
        });
    }
    report("aggressive burst of five", &agent, &model);
    let writes = pty_writes(&agent);
    assert!(writes.deliveries >= 1);
}
