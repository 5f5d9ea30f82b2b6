//! The real Codex CLI 0.169.0 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation (rows 4, 5 and 6), run by
//! the same trial runner as `make eval` (`ding-eval trial`). Each
//! row runs the aggressive arm and asserts the baseline the evaluation
//! issue measured by hand (rows 5 and 6 only under `make test-real`),
//! then the careful arm on the same seed, which must meet the acceptance
//! bar. Codex's background `codex app-server` daemon outlives the
//! TUI; the runner ends it by pid with every other process of the trial,
//! and the test checks that none is left. A printed seed replays a trial
//! (`DING_EVAL_SEED`).

mod support;

use std::time::Duration;

use ding::pty::wire::Snapshot;
use support::real_pane::*;
use support::sidecar_agent::Agent;

/// Codex 0.169.0 empty composer: the prompt `› ` followed by a dim
/// placeholder and nothing else on the row (an approval dialog's selected
/// row also starts with `› `, but bold and inverse, never dim).
fn empty_composer(snapshot: &Snapshot) -> bool {
    snapshot.rows.iter().enumerate().any(|(row, text)| {
        let Some(placeholder) = text.strip_prefix("› ") else {
            return false;
        };
        !placeholder.is_empty()
            && snapshot.runs.iter().any(|run| {
                usize::from(run.row) == row && run.col == 2 && run.dim && run.text == placeholder
            })
    })
}

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_codex_with_one_model_call() {
    exact_idle_row("codex");
}

/// `ding down`, then every `codex app-server` under this `CODEX_HOME` that
/// outlived the TUI (Codex's own daemon: the default policy runs Codex as a
/// user does), ended by its pid.
fn down_and_end_the_daemon(agent: &Agent, codex_home: &std::path::Path) {
    agent.ding_ok(&["down", &agent.name]);
    let outlived = end_leftovers("CODEX_HOME", codex_home, "app-server", Duration::ZERO);
    eprintln!("codex app-server processes left after ding down, ended: {outlived:?}");
    wait_until("no codex app-server left", Duration::from_secs(10), || {
        processes_with("CODEX_HOME", codex_home, "app-server")
            .is_empty()
            .then_some(())
    });
}

/// Row 5: the careful arm keeps the person's draft whole; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it glues its notice to the draft.
#[test]
fn row_5_a_message_while_a_draft_is_in_progress_on_codex() {
    draft_row("codex");
}

/// Row 6: the careful arm never answers the dialog; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it does.
#[test]
fn row_6_a_message_while_an_approval_dialog_is_open_on_codex() {
    dialog_row("codex");
}

/// The measurement the careful policy is compared with: a burst of five
/// messages at idle under the default policy, on the same binary. Every
/// message reaches the model; the counts (model calls of turns, notices
/// DING typed and their bytes) are printed for the record
/// (docs/providers/codex.md).
#[test]
#[ignore = "a measurement for the record: make test-real"]
fn a_burst_of_five_under_the_default_policy_is_measured() {
    let binary = harness_binary("DING_HARNESS_CODEX");
    let agent = Agent::new("codex-burst", "");
    let model = ModelServer::start("openai", &agent.path("model"));
    prepare_harness(&agent, "codex", &binary, &model);
    let codex_home = agent.path("home/.codex");
    up_until_empty_composer(&agent, &model, empty_composer);
    let names = send_burst(&agent, 5);
    for name in &names {
        wait_carrying(&model, name);
    }
    wait_screen(&agent, "idle after the last notice", |snapshot| {
        empty_composer(snapshot) && !shows(snapshot, "esc to interrupt")
    });
    report("aggressive default, burst of five", &agent, &model);
    eprintln!("{}", summary(&model.requests()));
    let writes = pty_writes(&agent);
    assert!(writes.deliveries >= 1, "the default policy types notices");
    down_and_end_the_daemon(&agent, &codex_home);
}
