//! The Claude Code adapter under a real sidecar and PTY host, without the
//! real harness: it is started through the launcher `ding hooks install`
//! writes (`adapter { command "$ST_HOOKS/claude-ding-adapter" ... }`), and
//! hooks are run the way Claude Code runs them (`ding hook claude EVENT`,
//! the payload on stdin, the harness's `DING_*` environment). The harness
//! is a process that draws nothing, so the screen never reads as idle and
//! the terminal path stays closed: whatever reaches the "model" here does
//! so through a hook.

mod support;

use serde_json::{Value, json};
use support::real_pane::pty_writes;
use support::sidecar_agent::{
    Agent, SLEEPING_HARNESS, adapter_says, careful_decl_with_adapter, message,
};

/// An agent whose adapter is the installed Claude launcher, checking the
/// settings file `project/.claude/settings.local.json`.
fn agent(name: &str) -> Agent {
    let agent = Agent::new(name, "");
    let hooks = agent.path("hooks");
    agent.ding_ok(&["hooks", "install", hooks.to_str().expect("utf-8")]);
    let settings = agent.path("project/.claude/settings.local.json");
    let adapter = format!(
        r#"command "$ST_HOOKS/claude-ding-adapter" "--settings" "{}""#,
        settings.display()
    );
    agent.write_declaration(&careful_decl_with_adapter(
        name,
        SLEEPING_HARNESS,
        &adapter,
        "",
    ));
    agent
}

/// `ding compile-agent claude` for the agent's project: the hooks merged
/// into the settings file its adapter checks.
fn compile(agent: &Agent) {
    let project = agent.path("project");
    agent.ding_ok(&[
        "compile-agent",
        "claude",
        "--name",
        &agent.name,
        "--cwd",
        project.to_str().expect("utf-8"),
    ]);
}

fn hook(agent: &Agent, event: &str, payload: &Value) -> String {
    agent.run_hook("claude", event, payload)
}

#[test]
fn the_launcher_runs_the_adapter_which_reports_whether_its_hooks_are_installed() {
    let agent = agent("cl-hooks");
    agent.up(&[]);
    agent.wait_adapter_up();
    let status = agent.wait_status("the adapter's remark", |status| {
        adapter_says(status).contains("MISSING")
    });
    assert!(
        adapter_says(&status).contains("Stop(wake)"),
        "it names what is missing: {}",
        adapter_says(&status)
    );
    let human = agent.ding_ok(&["status", &agent.name]);
    assert!(
        human.contains("adapter says claude hooks MISSING"),
        "{human}"
    );
    // compile-agent writes the hooks; the next session start re-reads them.
    compile(&agent);
    let answer = hook(
        &agent,
        "SessionStart",
        &json!({"hook_event_name": "SessionStart", "source": "startup"}),
    );
    let answer: Value = serde_json::from_str(&answer).expect("SessionStart prints JSON");
    let watched = agent.path(&format!("inbox/{}/new", agent.name));
    assert_eq!(
        answer["hookSpecificOutput"]["watchPaths"],
        json!([watched.to_string_lossy()])
    );
    agent.wait_status("the hooks seen", |status| {
        adapter_says(status) == "claude hooks configured and firing"
    });
}

/// Unread work the terminal path holds is put into the next context by
/// the next prompt's hook, and the claim takes exactly the files the text
/// names: at most what fits Claude Code's cap whatever the names (a count
/// and a `nameBytes` budget), the rest counted and left pending for the
/// next boundary.
#[test]
fn the_next_prompt_carries_held_work_and_claims_exactly_what_it_names() {
    let agent = agent("cl-context");
    agent.up(&[]);
    agent.wait_adapter_up();
    let names: Vec<String> = (0..70)
        .map(|n| format!("20261201T0000000000{n:02}Z-{n}.md"))
        .collect();
    for name in &names {
        agent.drop_message(name, "work");
    }
    agent.wait_held(&names[69], "not-idle");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "prompt": "hello"});
    let printed = hook(&agent, "UserPromptSubmit", &prompt);
    let printed: Value = serde_json::from_str(&printed).expect("JSON");
    let context = printed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string();
    assert_eq!(
        printed["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let status = agent.status();
    for (index, name) in names.iter().enumerate() {
        let named = context.contains(&format!("- {name}\n"));
        let owned = message(&status, name).is_some_and(|m| m["state"] == "hook-owned");
        assert_eq!(
            named, owned,
            "{name}: named {named}, hook-owned {owned}\n{context}"
        );
        assert_eq!(named, index < 64, "the oldest 64 fit the cap: {name}");
    }
    assert!(context.chars().count() <= 10_000, "{}", context.len());
    assert!(context.contains("6 more unread after these"), "{context}");
    // The next boundary takes the rest; nothing was ever typed.
    let printed = hook(
        &agent,
        "PostToolUse",
        &json!({"hook_event_name": "PostToolUse"}),
    );
    for name in &names[64..] {
        assert!(printed.contains(name.as_str()), "{printed}");
    }
    assert_eq!(hook(&agent, "PostToolUse", &json!({})), "", "nothing left");
    assert_eq!(pty_writes(&agent).deliveries, 0);
}

/// `ding check --adapters` asks the adapter itself, before anything runs:
/// it fails while the hooks are missing and passes once `ding
/// compile-agent claude` has merged them.
#[test]
fn ding_check_asks_the_adapter_whether_its_hooks_are_in_place() {
    let agent = agent("cl-check");
    let before = agent.ding(&["check", "--adapters", "agent.kdl"]);
    let said = String::from_utf8_lossy(&before.stdout).into_owned();
    assert_eq!(before.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cl-check: adapter check FAILED: claude hooks MISSING"),
        "{said}"
    );
    compile(&agent);
    let after = agent.ding_ok(&["check", "--adapters", "agent.kdl"]);
    assert!(
        after.contains("cl-check: adapter: claude hooks configured in"),
        "{after}"
    );
}

/// The hooks of a harness DING did not start (no `DING_SESSION`,
/// `DING_INCARNATION`, `DING_GENERATION` in its environment) and a caller
/// that names another incarnation claim nothing: the work stays unread for
/// the harness this agent runs, and the call answers empty with exit 0.
#[test]
fn a_hook_call_without_this_harness_identity_claims_nothing() {
    let agent = agent("cl-stranger");
    agent.up(&[]);
    agent.wait_adapter_up();
    let name = "20261201T000000000001Z-a.md";
    agent.drop_message(name, "work");
    agent.wait_held(name, "not-idle");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "prompt": "hello"});
    let status = agent.pty().status().expect("pty status");
    let socket = agent.paths().runtime_dir().join("hook.sock");
    for incarnation in [None, Some("not-this-one")] {
        let mut hook = std::process::Command::new(support::sidecar_agent::DING);
        hook.args(["hook", "claude", "UserPromptSubmit"])
            .env_remove("DING_SESSION")
            .env_remove("DING_INCARNATION")
            .env_remove("DING_GENERATION")
            .env("DING_HOOK_SOCKET", &socket)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        if let Some(incarnation) = incarnation {
            hook.env("DING_SESSION", &status.session)
                .env("DING_INCARNATION", incarnation)
                .env("DING_GENERATION", &status.generation);
        }
        let mut child = hook.spawn().expect("ding hook");
        std::io::Write::write_all(
            &mut child.stdin.take().expect("stdin"),
            prompt.to_string().as_bytes(),
        )
        .expect("payload");
        let out = child.wait_with_output().expect("ding hook");
        assert!(out.status.success(), "{incarnation:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{incarnation:?}");
        let status = agent.status();
        assert_eq!(
            message(&status, name).map(|m| m["state"].clone()),
            Some(json!("pending")),
            "{incarnation:?}: {status}"
        );
    }
    // The harness this agent runs still gets it.
    let printed = hook(&agent, "UserPromptSubmit", &prompt);
    assert!(printed.contains(name), "{printed}");
}
