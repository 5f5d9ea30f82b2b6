//! The real Gemini CLI 0.61.0 TUI, model-free, under `ding up`: the
//! real-pane smoke subset of the A/B evaluation, run by the same scenario
//! runner as `make eval` (`ding-eval trial`): idle with the person
//! typing or pressing Esc around DING's act (row 4), a draft (5), a dialog
//! (6), a message during a turn's command (3) and a burst (7). Each row
//! runs the aggressive arm and asserts what it must do there (rows 5 and 6
//! only under `make test-real`), then the careful arm on the same seed,
//! which must meet the acceptance bar. Gemini
//! CLI has no native idle path: its careful arm is the typed notice under
//! the input fence. A printed seed replays a trial (`DING_EVAL_SEED`).
//! And what a person's `NO_COLOR` does to it (issue 36, item 5).

mod support;

use ding::providers::gemini::screen::COLOURLESS;
use support::real_pane::*;
use support::sidecar_agent::{Agent, adapter_says, message};

/// The key is a secret by its name: it reaches the harness from the
/// environment of `ding up`, never from the declaration.
const API_KEY: (&str, &str) = ("GEMINI_API_KEY", "mock-model-key");

#[test]
fn row_4_an_inbox_message_at_exact_idle_reaches_gemini_cli_with_one_model_call() {
    exact_idle_row("gemini");
}

/// Row 5: the careful arm keeps the person's draft whole; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it glues its notice to the draft.
#[test]
fn row_5_a_message_while_a_draft_is_in_progress_on_gemini_cli() {
    draft_row("gemini");
}

/// Row 6: the careful arm never answers the dialog; with
/// `DING_REAL_PANE_BASELINE=1` (`make test-real`) the aggressive arm first
/// shows it does.
#[test]
fn row_6_a_message_while_a_dialog_is_open_on_gemini_cli() {
    dialog_row("gemini");
}

/// Rows the aggressive arm runs without harm to the person (a message in a
/// running turn, a burst at idle): it loses nothing outright, though
/// notices it typed one behind another may reach the model run together
/// into one prompt, which delivers nothing (`garbled`); the careful arm
/// delivers everything and meets the bar.
fn delivered_by_both(row: u32) {
    let seed = smoke_seed();
    let facts = smoke_trial("gemini", row, AGGRESSIVE, seed);
    let m = ran(&facts);
    let messages = m["messages"].as_array().expect("messages");
    let lost_outright = messages
        .iter()
        .filter(|message| message["delivered"] == false && message["garbled"] == false)
        .count();
    assert_eq!(lost_outright, 0, "{}", m["messages"]);
    careful_meets_the_bar("gemini", row, seed, Some(m));
    passed(&facts);
}

#[test]
fn row_3_a_message_during_a_running_command_reaches_gemini_cli() {
    delivered_by_both(row::DURING_TURN);
}

#[test]
fn row_7_a_burst_reaches_gemini_cli() {
    delivered_by_both(row::BURST);
}

/// A person's `NO_COLOR=1` where `ding up` runs makes Gemini CLI draw its
/// screen without colour, which DING cannot read: `ding check --adapters`
/// fails there, naming the variable and the fix (and passes without it);
/// started all the same, a message is held with nothing typed and `ding
/// status` names the cause, not just `activity unknown`.
#[test]
fn without_colour_the_check_fails_and_status_names_the_cause() {
    let binary = harness_binary("DING_HARNESS_GEMINI");
    let agent = Agent::new("gm-colourless", "");
    let model = ModelServer::start("gemini", &agent.path("model"));
    let launch = prepare_harness(&agent, "gemini", &binary, &model);
    let secret = API_KEY;
    compile(&agent, "gemini", &launch, "terminal", secret);
    let clean = agent.ding_unset(&["NO_COLOR"], &["check", "--adapters", "agent.kdl"]);
    assert!(clean.status.success(), "{clean:?}");
    let check = agent.ding_with_env(&[("NO_COLOR", "1")], &["check", "--adapters", "agent.kdl"]);
    let said = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "gm-colourless: adapter check FAILED: gemini: NO_COLOR=1 in the harness's environment"
        ),
        "{said}"
    );
    assert!(said.contains("env -u NO_COLOR ding up FILE"), "{said}");
    let env = format!("{}={}", secret.0, secret.1);
    let up = agent.ding_under(&["env", &env, "NO_COLOR=1"], &["up", "agent.kdl"]);
    assert!(up.status.success(), "ding up: {up:?}");
    wait_screen(&agent, "the composer drawn without colour", |snapshot| {
        shows(snapshot, "Type your message")
    });
    let name = send_message(&agent, "please look at the parser\n");
    let status = agent.wait_status("the cause named", |status| {
        held_for_a_reason(status, &name) && adapter_says(status).starts_with(COLOURLESS)
    });
    let held = message(&status, &name).expect("the message");
    assert_eq!(held["hold"]["code"], "not-idle", "{status}");
    let shown = agent.ding_ok(&["status", "gm-colourless"]);
    assert!(
        shown.contains("adapter says the screen is drawn without colour"),
        "{shown}"
    );
    assert_eq!(pty_writes(&agent).deliveries, 0, "nothing typed");
    assert!(
        !model
            .requests()
            .iter()
            .any(|request| carries(request, &name)),
        "{}",
        summary(&model.requests())
    );
}
