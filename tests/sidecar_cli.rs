//! The sidecar's CLI end to end: `ding up` adopting and reporting drift,
//! `ding status --json` and its schema (running and stopped), and a burst of
//! 20,000 arrivals all accounted for in FIFO order.

mod support;

use std::fs;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::sidecar_agent::*;

fn status_json(agent: &Agent) -> Value {
    serde_json::from_str(&agent.ding_ok(&["status", &agent.name, "--json"]))
        .expect("status is JSON")
}

/// `ding status NAME ARGS`, which must exit with `code` (0 running, 3 not);
/// its stdout.
fn status_exiting(agent: &Agent, code: i32, args: &[&str]) -> String {
    let mut all = vec!["status", agent.name.as_str()];
    all.extend_from_slice(args);
    let out = agent.ding(&all);
    assert_eq!(out.status.code(), Some(code), "{out:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn a_burst_of_20000_arrivals_is_all_accounted_for_in_fifo_order() {
    const COUNT: usize = 20_000;
    let agent = Agent::new(
        "burst",
        &careful_decl("burst", RECORDING_HARNESS, "adapter-silence \"1h\""),
    );
    agent.up_recording();
    agent.wait_adapter_up();
    let inbox = agent.path("inbox/burst");
    let names: Vec<String> = (0..COUNT).map(|i| format!("msg-{i:05}.md")).collect();
    // The sidecar is stopped during the burst, so the kernel's inotify
    // queue (max_queued_events, 16,384 by default) overflows and the
    // sidecar must rescan; it also keeps the burst fast on a busy machine.
    let sidecar = Pid::from_raw(agent.sidecar_pid().expect("sidecar pid"));
    kill(sidecar, Signal::SIGSTOP).expect("stop the sidecar");
    // Arrival order is a permutation of name order (7919 is prime to
    // 20,000), so FIFO order must come from the names, not from events.
    let burst = (0..COUNT).try_for_each(|k| {
        let name = &names[k * 7919 % COUNT];
        fs::write(inbox.join("tmp").join(name), name)?;
        fs::rename(inbox.join("tmp").join(name), inbox.join("new").join(name))
    });
    kill(sidecar, Signal::SIGCONT).expect("continue the sidecar");
    burst.expect("write the burst");
    // No adapter evidence: nothing may ring, so every file stays listed,
    // held for evidence once the burst's gather has closed.
    let status = agent.wait_status_every(
        Duration::from_millis(500),
        Duration::from_secs(90),
        "20,000 unread, gathered",
        |s| {
            s["engine"]["unread"] == COUNT
                && s["engine"]["messages"][0]["hold"]["code"] != "gathering"
        },
    );
    assert_eq!(message_names(&status), names, "FIFO order");
    let messages = status["engine"]["messages"].as_array().expect("messages");
    let unheld = messages
        .iter()
        .find(|m| m["state"] != "pending" || m["hold"]["code"] != "no-evidence");
    assert_eq!(unheld, None, "every file is pending and held for evidence");
    assert_eq!(status["lines"].as_array().map(Vec::len), Some(COUNT));
    assert_eq!(agent.out(), b"", "nothing rang without evidence");
}

#[test]
fn up_adopts_reports_drift_without_restarting_and_replace_restarts() {
    let agent = Agent::new("drift", &careful_decl("drift", RECORDING_HARNESS, ""));
    let printed = agent.up(&[]);
    assert!(printed.contains("pty host started"), "{printed}");
    assert!(printed.contains("sidecar started"), "{printed}");
    let (sidecar, pty) = (agent.sidecar_pid(), agent.pty_pid());
    assert!(sidecar.is_some() && pty.is_some());
    let fingerprint = agent.status()["fingerprint"].clone();

    let printed = agent.up(&[]);
    assert!(printed.contains("pty host adopted"), "{printed}");
    assert!(
        printed.contains("sidecar adopted;")
            || printed.ends_with("sidecar adopted\n")
            || printed.contains("sidecar adopted\n"),
        "{printed}"
    );
    assert!(!printed.contains("DRIFT"), "{printed}");
    assert_eq!((agent.sidecar_pid(), agent.pty_pid()), (sidecar, pty));

    // Edit the adapter command: drift, reported by field, nothing restarted.
    let edited = fs::read_to_string(agent.declaration())
        .expect("read")
        .replace(
            r#""$ST_HOOKS/adapter.sh""#,
            r#""$ST_HOOKS/adapter.sh" "--v2""#,
        );
    agent.write_declaration(&edited);
    let printed = agent.up(&[]);
    assert!(printed.contains("DRIFT"), "{printed}");
    assert!(printed.contains("ding.adapter.command"), "{printed}");
    assert!(printed.contains("--v2"), "{printed}");
    assert_eq!((agent.sidecar_pid(), agent.pty_pid()), (sidecar, pty));
    let status = status_json(&agent);
    assert_eq!(status["fingerprint"], fingerprint, "still the old sidecar");
    assert_eq!(
        status["drift"]["sidecar"][0]["field"], "ding.adapter.command",
        "{status}"
    );
    assert_eq!(status["drift"]["harness"], Value::Array(Vec::new()));
    let human = agent.ding_ok(&["status", "drift"]);
    assert!(human.contains("ding.adapter.command"), "{human}");

    let printed = agent.up(&["--replace"]);
    assert!(printed.contains("sidecar replaced"), "{printed}");
    let replaced = agent.sidecar_pid();
    assert!(replaced.is_some() && replaced != sidecar, "new sidecar pid");
    assert!(!process_alive(sidecar.expect("pid")), "old sidecar stopped");
    assert_eq!(agent.pty_pid(), pty, "the harness keeps running");
    let status = status_json(&agent);
    assert_ne!(status["fingerprint"], fingerprint);
    assert_eq!(status["declaredFingerprint"], status["fingerprint"]);
    assert_eq!(status["drift"]["sidecar"], Value::Array(Vec::new()));
    assert_eq!(status["adapterCommand"][2], "--v2");
}

/// `value[key]` exists and satisfies `check`.
fn field<'a>(value: &'a Value, key: &str, check: fn(&Value) -> bool) -> &'a Value {
    let found = &value[key];
    assert!(
        check(found),
        "`{key}` missing or of the wrong type in {value}"
    );
    found
}

#[test]
fn status_json_has_its_schema_running_and_lists_the_inbox_when_stopped() {
    let agent = Agent::new("schema", &careful_decl("schema", RECORDING_HARNESS, ""));
    agent.up_recording();
    agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.drop_message("m2.md", "second");
    agent.wait_held("m2.md", "no-evidence");

    let status = status_json(&agent);
    assert_eq!(field(&status, "agent", Value::is_string), "schema");
    assert_eq!(field(&status, "running", Value::is_boolean), true);
    assert_eq!(
        field(&status, "policy", Value::is_string),
        "turn-boundary+fresh-idle"
    );
    let fingerprint = field(&status, "fingerprint", Value::is_string);
    assert!(
        fingerprint
            .as_str()
            .is_some_and(|f| f.starts_with("sha256:"))
    );
    field(&status, "pid", Value::is_u64);
    field(&status, "adapterPid", Value::is_u64);
    let drift = field(&status, "drift", Value::is_object);
    field(drift, "sidecar", Value::is_array);
    field(drift, "harness", Value::is_array);
    for process in ["sidecar", "ptyHost"] {
        let process = field(&status, process, Value::is_object);
        assert_eq!(field(process, "state", Value::is_string), "running");
        field(process, "pid", Value::is_u64);
    }
    let harness = field(&status, "harness", Value::is_object);
    assert_eq!(field(harness, "state", Value::is_string), "running");
    field(harness, "pid", Value::is_u64);
    let engine = field(&status, "engine", Value::is_object);
    let adapter = field(engine, "adapter", Value::is_object);
    assert_eq!(field(adapter, "state", Value::is_string), "up");
    field(adapter, "pid", Value::is_u64);
    field(adapter, "nextBackoffMs", Value::is_u64);
    let lease = field(engine, "lease", Value::is_object);
    field(lease, "state", Value::is_string);
    field(lease, "freshness", Value::is_string);
    let pty = field(engine, "pty", Value::is_object);
    assert_eq!(field(pty, "reachable", Value::is_boolean), true);
    field(pty, "revision", Value::is_u64);
    let identity = field(pty, "identity", Value::is_object);
    for key in ["session", "incarnation", "generation"] {
        field(identity, key, Value::is_string);
    }
    assert_eq!(
        identity["incarnation"],
        agent.pty().status().expect("pty").incarnation
    );
    assert_eq!(field(engine, "unread", Value::is_u64), 2);
    let messages = field(engine, "messages", Value::is_array)
        .as_array()
        .expect("array");
    assert_eq!(message_names(&status), ["m1.md", "m2.md"]);
    for message in messages {
        field(message, "name", Value::is_string);
        assert_eq!(field(message, "state", Value::is_string), "pending");
        field(message, "since", Value::is_u64);
        let hold = field(message, "hold", Value::is_object);
        assert_eq!(field(hold, "code", Value::is_string), "no-evidence");
        field(hold, "source", Value::is_string);
        field(hold, "since", Value::is_u64);
    }
    let lines = field(&status, "lines", Value::is_array)
        .as_array()
        .expect("array");
    assert_eq!(lines.len(), 2);
    for (line, name) in lines.iter().zip(["m1.md", "m2.md"]) {
        let line = line.as_str().expect("line is a string");
        assert!(line.starts_with(&format!("{name}  held: ")), "{line}");
    }
    let human = agent.ding_ok(&["status", "schema"]);
    assert!(human.contains("m1.md  held: "), "{human}");

    agent.ding_ok(&["down", "schema"]);
    let stopped: Value =
        serde_json::from_str(&status_exiting(&agent, 3, &["--json"])).expect("status is JSON");
    for process in ["sidecar", "ptyHost", "harness"] {
        assert_eq!(stopped[process]["state"], "stopped", "{stopped}");
    }
    assert_eq!(field(&stopped, "running", Value::is_boolean), false);
    assert_eq!(stopped["fingerprint"], *fingerprint);
    assert_eq!(stopped["policy"], "turn-boundary+fresh-idle");
    assert_eq!(message_names(&stopped), ["m1.md", "m2.md"]);
    let lines = field(&stopped, "lines", Value::is_array);
    assert_eq!(lines.as_array().map(Vec::len), Some(2));
    let human = status_exiting(&agent, 3, &[]);
    assert!(human.starts_with("agent schema: stopped\n"), "{human}");
    assert!(human.contains("the inbox is listed from disk"), "{human}");
    assert!(
        human.contains("m1.md") && human.contains("m2.md"),
        "{human}"
    );
}

/// A declared variable reaches the harness, but its value never appears in
/// an argv (`ps` shows every process's argv to every user): `ding up`
/// hands it to the PTY host through the environment.
#[test]
fn declared_env_values_reach_the_harness_but_no_argv() {
    let agent = Agent::new(
        "envy",
        "agent \"envy\" {\n  command \"sh\" \"-c\" \"printf %s \\\"$PASSED_VALUE\\\" > seen; exec sleep 600\"\n  env { PASSED_VALUE \"not-for-ps-7f3a\" }\n}\n",
    );
    agent.up(&[]);
    wait_for("the harness to see the value", || {
        fs::read_to_string(agent.path("seen")).is_ok_and(|seen| seen == "not-for-ps-7f3a")
    });
    for pid in agent.processes() {
        let argv = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&argv).contains("not-for-ps-7f3a"),
            "pid {pid}'s argv shows the value: {}",
            String::from_utf8_lossy(&argv).replace('\0', " ")
        );
    }
}
