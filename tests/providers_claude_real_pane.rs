//! The real Claude Code 2.1.328 TUI, model-free: `ding eval-model-server
//! --api anthropic` on loopback, a scratch home from `ding eval-harness-env
//! claude`, the harness under `ding up` with the default (aggressive)
//! policy, and one inbox message from `ding send` that must reach a model
//! request by its exact filename.

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
fn an_inbox_message_reaches_the_real_claude_code_by_its_exact_filename() {
    let binary = harness_binary("DING_HARNESS_CLAUDE");
    let agent = Agent::new("claude-pane", "");
    let model = ModelServer::start("anthropic", &agent.path("model"));
    let launch = prepare_harness(&agent, "claude", &binary, &model);
    assert_eq!(launch["env"]["ANTHROPIC_BASE_URL"], model.url().as_str());

    up_until_empty_composer(&agent, &model, empty_composer);
    let request = deliver_one_message(&agent, &model);
    assert_eq!(request["path"], "/v1/messages");
    assert_eq!(request["query"], "beta=true");

    // Shut down by pid: the agent's processes (ding down, then whatever
    // kept its runtime directory), then the model server.
    drop(agent);
    let server = model.pid();
    drop(model);
    assert!(!support::sidecar_agent::process_alive(server));
}

/// The aggressive default's cost for a burst of five at idle, for
/// comparison with `turn-boundary+fresh-idle` (one wake, one model call,
/// in `tests/providers_claude_careful_real_pane.rs`): every message
/// arrives, in as many notices and model calls as the timing makes.
#[test]
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
