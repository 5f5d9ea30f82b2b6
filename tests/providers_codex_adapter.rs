//! The Codex adapter and its launcher under a real sidecar and PTY host,
//! without the real harness: `ding hooks install` writes the launcher,
//! `ding compile-agent codex` the declaration, and the harness is a stand-in
//! `codex` that records its argv and draws nothing (so the screen never
//! reads as idle and the terminal path stays closed: whatever reaches the
//! "model" here does so through a hook). Hooks are run the way Codex runs
//! them: `ding hook codex EVENT`, the payload on stdin, the harness's
//! `DING_*` environment.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use ding::providers::codex::hooks::CONTEXT_CAP;
use serde_json::{Value, json};
use support::real_pane::{pty_writes, wait_until};
use support::sidecar_agent::{Agent, DEADLINE, DING, adapter_says, message};

/// A stand-in for `codex`: records its argv, one word a line, then waits.
const FAKE_CODEX: &str = "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGV_FILE\"\nexec sleep 600\n";

/// An agent compiled for the stand-in on the terminal idle path (the
/// launcher then execs it with DING's hook arguments).
fn agent(name: &str) -> Agent {
    let agent = Agent::new(name, "");
    let hooks = agent.path("hooks");
    agent.ding_ok(&["hooks", "install", hooks.to_str().expect("utf-8")]);
    let fake = agent.path("codex");
    fs::write(&fake, FAKE_CODEX).expect("fake codex");
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::create_dir(agent.path("project")).expect("project");
    let argv_file = agent.path("argv");
    agent.ding_ok(&[
        "compile-agent",
        "codex",
        "--name",
        name,
        "--cwd",
        agent.path("project").to_str().expect("utf-8"),
        "--idle-path",
        "terminal",
        "--env",
        &format!("ARGV_FILE={}", argv_file.display()),
        "--out",
        "agent.kdl",
        "--",
        fake.to_str().expect("utf-8"),
        "--no-alt-screen",
    ]);
    agent
}

fn hook(agent: &Agent, event: &str, payload: &Value) -> String {
    agent.run_hook("codex", event, payload)
}

#[test]
fn the_launcher_declares_and_trusts_the_hooks_and_the_adapter_says_so() {
    let agent = agent("cx-hooks");
    let check = agent.ding_ok(&["check", "--adapters", "agent.kdl"]);
    assert!(
        check.contains("cx-hooks: adapter: codex hooks declared and trusted per invocation by the launcher (11 hooks"),
        "{check}"
    );
    agent.up(&[]);
    agent.wait_adapter_up();
    let argv: Vec<String> = wait_until("the harness's argv", DEADLINE, || {
        let text = fs::read_to_string(agent.path("argv")).ok()?;
        text.ends_with("--no-alt-screen\n")
            .then(|| text.lines().map(String::from).collect())
    });
    // DING's hooks first, then the trust of exactly them, then the user's.
    assert_eq!(argv.len(), 2 * 12 + 1, "{argv:?}");
    assert!(
        argv[1].starts_with(&format!(
            "hooks.SessionStart=[{{hooks=[{{type=\"command\",command=\"{DING} hook codex SessionStart\""
        )),
        "{argv:?}"
    );
    assert!(argv[23].starts_with("hooks.state={"), "{argv:?}");
    assert_eq!(argv[24], "--no-alt-screen");
    let status = agent.wait_status("the launcher's report", |status| {
        adapter_says(status).contains("codex hooks declared by the launcher")
    });
    assert!(
        adapter_says(&status).contains("none has fired yet"),
        "{}",
        adapter_says(&status)
    );
    hook(
        &agent,
        "Interrupt",
        &json!({"hook_event_name": "Interrupt"}),
    );
    agent.wait_status("the hooks firing", |status| {
        adapter_says(status).ends_with("(embedded; trust not verified); firing")
    });
}

/// A declaration whose harness command does not run the launcher has no
/// DING hooks at all: `ding check --adapters` says so.
#[test]
fn ding_check_fails_when_the_harness_command_does_not_run_the_launcher() {
    let agent = agent("cx-check");
    let text = fs::read_to_string(agent.declaration()).expect("declaration");
    let start = text
        .find("command \"$ST_HOOKS/codex-ding-adapter\" \"launch\"")
        .expect("launch");
    let end = start + text[start..].find('\n').expect("line end");
    agent.write_declaration(&format!(
        "{}command \"{}\"{}",
        &text[..start],
        agent.path("codex").display(),
        &text[end..]
    ));
    let out = agent.ding(&["check", "--adapters", "agent.kdl"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("cx-check: adapter check FAILED: codex hooks MISSING: the harness command"),
        "{said}"
    );
}

/// Unread work the terminal path holds is put into the next context by
/// the next prompt's hook, and the claim takes exactly the files the text
/// names: at most what fits Codex's inline cap whatever the names (a count
/// and a `nameBytes` budget), the rest counted and left pending for the
/// next boundary. `PermissionRequest` prints nothing, ever, and a
/// continuation's `Stop` never blocks again.
#[test]
fn the_next_prompt_carries_held_work_and_claims_exactly_what_it_names() {
    let agent = agent("cx-context");
    agent.up(&[]);
    agent.wait_adapter_up();
    let names: Vec<String> = (0..70)
        .map(|n| format!("20261201T0000000000{n:02}Z-{}-{n}.md", "x".repeat(60)))
        .collect();
    for name in &names {
        agent.drop_message(name, "work");
    }
    agent.wait_held(&names[69], "not-idle");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "prompt": "hello"});
    let printed: Value =
        serde_json::from_str(&hook(&agent, "UserPromptSubmit", &prompt)).expect("JSON");
    assert_eq!(
        printed["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    let context = printed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string();
    assert!(context.chars().count() <= CONTEXT_CAP, "{}", context.len());
    let status = agent.status();
    let mut named = 0;
    for name in &names {
        let in_text = context.contains(&format!("- {name}\n"));
        let owned = message(&status, name).is_some_and(|m| m["state"] == "hook-owned");
        assert_eq!(
            in_text, owned,
            "{name}: named {in_text}, hook-owned {owned}\n{context}"
        );
        named += usize::from(in_text);
    }
    assert!((1..70).contains(&named), "the cap binds: {named}");
    assert!(
        context.contains(&format!("{} more unread after these", 70 - named)),
        "{context}"
    );
    let permission = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"});
    assert_eq!(hook(&agent, "PermissionRequest", &permission), "");
    let continuation = json!({"hook_event_name": "Stop", "stop_hook_active": true});
    assert_eq!(hook(&agent, "Stop", &continuation), "", "no loop");
    // The next boundary takes more; nothing was ever typed.
    let printed = hook(
        &agent,
        "PostToolUse",
        &json!({"hook_event_name": "PostToolUse"}),
    );
    assert!(printed.contains(names[named].as_str()), "{printed}");
    assert_eq!(pty_writes(&agent).deliveries, 0);
}

/// Codex does not start its interface on a dumb terminal unless someone
/// answers its question (`fixtures/providers/codex/snapshots/term-dumb-*`):
/// `ding compile-agent codex --env TERM=dumb` is refused and writes
/// nothing, and `ding check --adapters` fails, naming the fix, where `ding
/// up` runs with `TERM=dumb` or where the declaration says it.
#[test]
fn a_dumb_terminal_is_refused_by_compile_agent_and_by_the_check() {
    let agent = agent("cx-dumb");
    let term = [("TERM", "xterm-256color")];
    let fine = agent.ding_with_env(&term, &["check", "--adapters", "agent.kdl"]);
    assert!(fine.status.success(), "{fine:?}");
    let dumb = agent.ding_with_env(&[("TERM", "dumb")], &["check", "--adapters", "agent.kdl"]);
    let said = String::from_utf8_lossy(&dumb.stdout);
    assert_eq!(dumb.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "cx-dumb: adapter check FAILED: codex: TERM=dumb in the harness's environment"
        ),
        "{said}"
    );
    assert!(said.contains("declare TERM=xterm-256color"), "{said}");
    let text = fs::read_to_string(agent.declaration()).expect("declaration");
    let declared = text.replacen("env {", "env {\n    TERM \"dumb\"", 1);
    assert_ne!(declared, text, "the declaration has an env block: {text}");
    agent.write_declaration(&declared);
    let out = agent.ding_with_env(&term, &["check", "--adapters", "agent.kdl"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let refused = agent.ding(&[
        "compile-agent",
        "codex",
        "--name",
        "other",
        "--cwd",
        agent.path("project").to_str().expect("utf-8"),
        "--env",
        "TERM=dumb",
        "--out",
        "other.kdl",
    ]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains("--env TERM=dumb: Codex then asks"), "{said}");
    assert!(!agent.path("other.kdl").exists());
}
