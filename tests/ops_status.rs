//! What `ding status` tells people (OPS): a held message says what its
//! reason means and what to do, a fresh lease beside held work says why it
//! does not deliver (never a contradiction), a dead PTY host is reported
//! as dead beside the sidecar's state, and every key of the status document
//! and of the log is camelCase.

mod support;

use std::fs;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::sidecar_agent::*;

#[test]
fn a_held_message_says_what_to_do_and_a_fresh_lease_beside_it_says_why_it_waits() {
    let agent = Agent::new(
        "advice",
        &careful_decl("advice", RECORDING_HARNESS, "lease-cap \"1m\""),
    );
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.wait_held("m1.md", "no-evidence");
    let mut draft = agent.activity("idle", "nonempty", Some(agent.revision()));
    draft["validForMs"] = 60_000.into();
    draft["reason"] = "draft in the composer".into();
    agent.feed(adapter, &draft);
    let status = agent.wait_held("m1.md", "composer-nonempty");
    assert_eq!(status["engine"]["lease"]["freshness"], "fresh", "{status}");

    let human = agent.ding_ok(&["status", "advice"]);
    assert!(human.contains("  unread       1 (1 held)\n"), "{human}");
    assert!(
        human.contains(
            "  why held     composer-nonempty: The harness is idle, but its composer holds a draft"
        ),
        "{human}"
    );
    assert!(
        human.contains("               what to do: Send or clear the draft (`ding attach NAME`); delivery follows."),
        "{human}"
    );
    let lease = human
        .lines()
        .find(|line| line.starts_with("  lease "))
        .expect("a lease line");
    assert!(
        lease.contains("fresh, ")
            && lease.ends_with("but it does not allow delivery now: held by composer-nonempty"),
        "{lease}"
    );
    assert!(
        human.contains("  adapter says draft in the composer\n"),
        "{human}"
    );
}

/// Every object key in `value`, with where it is.
fn keys(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                found.push(format!("{at}.{key}"));
                keys(inner, &format!("{at}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for item in items {
                keys(item, &format!("{at}[]"), found);
            }
        }
        _ => {}
    }
}

fn camel_case(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_lowercase())
        && key.chars().all(|c| c.is_ascii_alphanumeric())
}

#[test]
fn every_key_of_the_status_document_and_the_log_is_camel_case() {
    let agent = Agent::new("camel", &careful_decl("camel", RECORDING_HARNESS, ""));
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.feed(
        adapter,
        &agent.activity("idle", "nonempty", Some(agent.revision())),
    );
    agent.wait_held("m1.md", "composer-nonempty");
    // An adapter that dies: its down state and backoff are in the document.
    kill(Pid::from_raw(adapter), Signal::SIGKILL).expect("kill the adapter");
    agent.wait_held("m1.md", "adapter-down");
    let out = agent.ding(&["status", "camel", "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut found = Vec::new();
    keys(&document, "", &mut found);
    assert!(found.iter().any(|k| k.ends_with(".retryAt")), "{found:?}");
    assert!(
        found
            .iter()
            .any(|k| k.ends_with(".fingerprintInput.adapterCommand")),
        "{found:?}"
    );
    for key in &found {
        let last = key.rsplit('.').next().unwrap_or_default();
        assert!(camel_case(last), "{key} in {document}");
    }
    let log = fs::read_to_string(agent.paths().sidecar_log()).expect("log");
    for line in log.lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON record");
        let mut found = Vec::new();
        keys(&record, "", &mut found);
        for key in found {
            let last = key.rsplit('.').next().unwrap_or_default();
            assert!(camel_case(last), "{key} in {line}");
        }
    }
}

#[test]
fn a_dead_pty_host_is_reported_dead_beside_the_sidecars_state() {
    let agent = Agent::new("orphan", &aggressive_decl("orphan", SLEEPING_HARNESS));
    agent.up(&[]);
    let pty = agent.pty_pid().expect("pty host");
    kill(Pid::from_raw(pty), Signal::SIGKILL).expect("kill -9 the pty host");
    wait_for("the pty host to die", || !process_alive(pty));
    let out = agent.ding(&["status", "orphan", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["ptyHost"]["state"], "dead", "{status}");
    assert_eq!(status["ptyHost"]["pid"], pty);
    assert_eq!(status["sidecar"]["state"], "running");
    assert_eq!(status["harness"]["state"], "unknown");
    let human = String::from_utf8(agent.ding(&["status", "orphan"]).stdout).expect("UTF-8");
    assert!(
        human.starts_with("agent orphan: NOT RUNNING: harness unknown, pty host dead\n"),
        "{human}"
    );
    assert!(
        human.contains(&format!("  pty host     DEAD (pid {pty} is gone")),
        "{human}"
    );
    // `ding up` starts it again and adopts the sidecar.
    let printed = agent.up(&[]);
    assert!(
        printed.contains(&format!(
            "pty host started (pid {pty} had died); sidecar adopted"
        )),
        "{printed}"
    );
    assert!(agent.ding(&["status", "orphan"]).status.success());
}
