//! The adapter kit against a real sidecar, PTY host and demo agent: the
//! downlink's demand signal, the hook channel, claims, and the races between
//! a hook injecting work and the terminal path ringing it.
//!
//! The agent runs the demo adapter (the kit with the demo grammar). Hooks are
//! run by the test exactly as a harness would run them: `ding hook demo
//! EVENT` with the harness's `DING_*` environment (identity and hook socket).

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use support::sidecar_agent::{Agent, DING, message, wait_for};

const DEMO_HARNESS: &str = r#"command "ding" "demo-agent" "--transcript" "transcript.jsonl""#;

fn demo_agent() -> Agent {
    let declaration = format!(
        "agent \"kit\" {{\n  {DEMO_HARNESS}\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{ command \"ding\" \"demo-adapter\"; }}\n  }}\n}}\n"
    );
    let agent = Agent::new("kit", &declaration);
    agent.up(&[]);
    agent.wait_screen("demo-agent  ready");
    agent.wait_adapter_up();
    agent
}

/// Runs one hook the way the harness would, returning what it printed.
fn hook(agent: &Agent, event: &str) -> String {
    let status = agent.pty().status().expect("pty status");
    let paths = agent.paths();
    let out = Command::new(DING)
        .args(["hook", "demo", event])
        .env("DING_SESSION", &status.session)
        .env("DING_INCARNATION", &status.incarnation)
        .env("DING_GENERATION", &status.generation)
        .env("DING_HOOK_SOCKET", paths.runtime_dir().join("hook.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("run ding hook");
    assert!(out.status.success(), "ding hook exits 0");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The files a hook answer names.
fn injected(answer: &str, candidates: &[String]) -> BTreeSet<String> {
    candidates
        .iter()
        .filter(|name| answer.contains(name.as_str()))
        .cloned()
        .collect()
}

/// The texts the demo agent received as pasted input (DING's notices).
fn pasted(agent: &Agent) -> String {
    std::fs::read_to_string(agent.path("transcript.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["event"] == "submitted" || event["event"] == "queued")
        .filter_map(|event| event["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn with_nothing_pending_no_evidence_is_wanted_and_none_is_sent() {
    let agent = demo_agent();
    let status = agent.status();
    assert_eq!(status["engine"]["evidence"]["wanted"], false);
    assert!(
        status["engine"]["adapter"]["lastLine"].is_null(),
        "an adapter that was not asked says nothing: {}",
        status["engine"]["adapter"]
    );
    agent.drop_message("001.md", "hello");
    // Wanted, evidence, a ring; then nothing is wanted again.
    agent.wait_status("the message rung", |status| {
        message(status, "001.md").is_some_and(|m| m["state"] == "staged")
    });
    agent.wait_status("evidence no longer wanted", |status| {
        status["engine"]["evidence"]["wanted"] == false
    });
}

#[test]
fn a_hook_claims_pending_work_and_the_terminal_never_gets_it() {
    let agent = demo_agent();
    // A draft keeps the terminal path closed while the hook runs.
    agent.ding_ok(&["intervene", "kit", "half a thought", "--no-enter"]);
    for name in ["001.md", "002.md"] {
        agent.drop_message(name, "work");
    }
    agent.wait_held("002.md", "composer-nonempty");
    let shown = agent.ding_ok(&["status", "kit"]);
    assert!(
        shown.contains("adapter says prompt ready, draft in composer"),
        "{shown}"
    );
    let answer = hook(&agent, "turn-start");
    assert!(
        answer.contains("001.md") && answer.contains("002.md"),
        "{answer}"
    );
    let status = agent.status();
    for name in ["001.md", "002.md"] {
        assert_eq!(message(&status, name).unwrap()["state"], "hook-owned");
    }
    // The human clears the draft: the agent is idle and empty, and still
    // nothing is typed, because the hook put both files into the context.
    agent.ding_ok(&["intervene", "kit", "\u{3}", "--no-enter"]);
    agent.drop_message("003.md", "later");
    agent.wait_status("003 rung", |status| {
        message(status, "003.md").is_some_and(|m| m["state"] == "staged")
    });
    let typed = pasted(&agent);
    assert!(typed.contains("003.md"), "{typed}");
    assert!(
        !typed.contains("001.md") && !typed.contains("002.md"),
        "{typed}"
    );
    // A second hook has nothing new to take.
    assert_eq!(hook(&agent, "turn-start"), "");
}

#[test]
fn a_hook_with_no_adapter_to_answer_prints_nothing_and_exits_0() {
    let out = Command::new(DING)
        .args(["hook", "demo", "turn-start"])
        .env("DING_HOOK_SOCKET", PathBuf::from("/nonexistent/hook.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("run ding hook");
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

/// Files arrive while hooks run and while the terminal path is open: every
/// file reaches the agent exactly once, by a hook or by the terminal, never
/// both and never neither.
#[test]
fn racing_hooks_and_rings_deliver_every_file_exactly_once() {
    let agent = demo_agent();
    let mut names = Vec::new();
    let mut by_hook = BTreeSet::new();
    for round in 0..12 {
        let name = format!("{round:03}.md");
        agent.drop_message(&name, "work");
        names.push(name);
        // Half the time the hook runs right after the rename, racing the
        // inbox watch and the lease the idle agent is about to give.
        if round % 2 == 0 {
            by_hook.extend(injected(&hook(&agent, "turn-end"), &names));
        }
    }
    by_hook.extend(injected(&hook(&agent, "turn-end"), &names));
    wait_for("every file owned by a hook or rung", || {
        let status = agent.status();
        names.iter().all(|name| {
            message(&status, name)
                .is_some_and(|m| m["state"] == "hook-owned" || m["state"] == "staged")
        })
    });
    wait_for("the agent to have received every ring", || {
        let typed = pasted(&agent);
        names
            .iter()
            .all(|name| by_hook.contains(name) || typed.contains(name.as_str()))
    });
    let typed = pasted(&agent);
    for name in &names {
        let rung = typed.matches(name.as_str()).count();
        let hooked = usize::from(by_hook.contains(name));
        assert_eq!(
            rung + hooked,
            1,
            "{name}: rung {rung} time(s), injected {hooked} time(s)\ntyped: {typed}"
        );
    }
}
