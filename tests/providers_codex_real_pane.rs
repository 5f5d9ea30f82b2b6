//! The real Codex CLI 0.169.0 TUI, model-free: `ding eval-model-server
//! --api openai` on loopback, a scratch `CODEX_HOME` from `ding
//! eval-harness-env codex`, the harness under `ding up` with the default
//! (aggressive) policy, and one inbox message from `ding send` that must
//! reach a model request by its exact filename. Codex's background
//! `codex app-server` daemon outlives the TUI: the test ends it by pid.

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
fn an_inbox_message_reaches_the_real_codex_by_its_exact_filename() {
    let binary = harness_binary("DING_HARNESS_CODEX");
    let agent = Agent::new("codex-pane", "");
    let model = ModelServer::start("openai", &agent.path("model"));
    let launch = prepare_harness(&agent, "codex", &binary, &model);
    let codex_home = agent.path("home/.codex");
    assert_eq!(
        launch["env"]["CODEX_HOME"],
        codex_home.to_str().expect("utf-8")
    );

    up_until_empty_composer(&agent, &model, empty_composer);
    let request = deliver_one_message(&agent, &model);
    assert_eq!(request["path"], "/v1/responses");
    assert!(request["turnKey"].is_string(), "Codex names its turns");
    let writes = pty_writes(&agent);
    eprintln!(
        "aggressive default, idle: model calls {}, DING deliveries {} ({} bytes)",
        model_calls(&model.requests()),
        writes.deliveries,
        writes.delivery_bytes
    );

    // Shut down by pid: the agent's sidecar and PTY host (ding down), then
    // every `codex app-server` under this CODEX_HOME that outlived the TUI,
    // then whatever else kept the agent's runtime directory, then the
    // model server.
    agent.ding_ok(&["down", &agent.name]);
    let outlived = processes_with("CODEX_HOME", &codex_home, "app-server");
    eprintln!("codex app-server processes left after ding down: {outlived:?}");
    for pid in outlived {
        end_process(pid);
    }
    wait_until("no codex app-server left", Duration::from_secs(10), || {
        processes_with("CODEX_HOME", &codex_home, "app-server")
            .is_empty()
            .then_some(())
    });
    drop(agent);
    let server = model.pid();
    drop(model);
    assert!(!support::sidecar_agent::process_alive(server));
}

/// The measurement the careful policy is compared with: a burst of five
/// messages at idle under the default policy, on the same binary. Every
/// message reaches the model; the counts (model calls of turns, notices
/// DING typed and their bytes) are printed for the record
/// (docs/providers/codex.md).
#[test]
fn a_burst_of_five_under_the_default_policy_is_measured() {
    let binary = harness_binary("DING_HARNESS_CODEX");
    let agent = Agent::new("codex-burst", "");
    let model = ModelServer::start("openai", &agent.path("model"));
    prepare_harness(&agent, "codex", &binary, &model);
    let codex_home = agent.path("home/.codex");
    up_until_empty_composer(&agent, &model, empty_composer);
    let mut names = Vec::new();
    for n in 0..5 {
        std::fs::write(agent.path("task.md"), format!("part {n}\n")).expect("message");
        let sent = agent.ding_ok(&["send", &agent.name, "task.md", "--decl", "agent.kdl"]);
        names.push(sent.trim().to_string());
    }
    for name in &names {
        wait_carrying(&model, name);
    }
    wait_screen(&agent, "idle after the last notice", |snapshot| {
        empty_composer(snapshot) && !shows(snapshot, "esc to interrupt")
    });
    let writes = pty_writes(&agent);
    eprintln!(
        "aggressive default, burst of five: model calls {}, DING deliveries {} ({} bytes)\n{}",
        model_calls(&model.requests()),
        writes.deliveries,
        writes.delivery_bytes,
        summary(&model.requests())
    );
    assert!(writes.deliveries >= 1, "the default policy types notices");
    agent.ding_ok(&["down", &agent.name]);
    for pid in processes_with("CODEX_HOME", &codex_home, "app-server") {
        end_process(pid);
    }
    wait_until("no codex app-server left", Duration::from_secs(10), || {
        processes_with("CODEX_HOME", &codex_home, "app-server")
            .is_empty()
            .then_some(())
    });
}
