//! What `ding status` tells people (OPS): a held message says what its
//! reason means and what to do, a fresh lease beside held work says why it
//! does not deliver (never a contradiction), a dead PTY host is reported
//! as dead beside the sidecar's state, a sidecar of another version is
//! listed from disk with why, and every key of the status document and of
//! the log is camelCase.

mod support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::process::Command;
use std::thread;

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

/// A status of thousands of unread messages: by default counts by state,
/// the hold with what to do, and the oldest and newest few listed; `--all`
/// lists every one, and `--json` has every one, both fetched from the
/// sidecar a page at a time (more than one page here); `ding ls` counts
/// them without listing any.
#[test]
fn a_long_backlog_is_summed_up_and_paged() {
    const COUNT: usize = 4500;
    let agent = Agent::new("many", &careful_decl("many", RECORDING_HARNESS, ""));
    agent.up_recording();
    agent.wait_adapter_up();
    for n in 0..COUNT {
        agent.drop_message(&format!("{n:05}.md"), "x");
    }
    agent.wait_held(&format!("{:05}.md", COUNT - 1), "no-evidence");
    let listed = |text: &str| {
        text.lines()
            .filter(|line| line.starts_with("    0"))
            .count()
    };

    let human = agent.ding_ok(&["status", "many"]);
    assert!(
        human.contains(&format!("  unread       {COUNT} ({COUNT} held)\n")),
        "{human}"
    );
    assert!(human.contains("  why held     no-evidence: "), "{human}");
    assert_eq!(listed(&human), 10, "{human}");
    assert!(
        human.contains(&format!(
            "    (10 of {COUNT} listed: the oldest and the newest"
        )),
        "{human}"
    );
    assert!(human.contains("    00000.md  held: ") && human.contains("    04499.md  held: "));

    let every = agent.ding_ok(&["status", "many", "--all"]);
    assert_eq!(listed(&every), COUNT);
    assert!(!every.contains(" listed: "), "nothing left out");

    let json: Value =
        serde_json::from_str(&agent.ding_ok(&["status", "many", "--json"])).expect("JSON");
    let messages = json["engine"]["messages"].as_array().expect("messages");
    let names: Vec<&str> = messages
        .iter()
        .map(|message| message["name"].as_str().expect("a name"))
        .collect();
    let expected: Vec<String> = (0..COUNT).map(|n| format!("{n:05}.md")).collect();
    assert_eq!(names, expected, "every one, once, in FIFO order");
    assert_eq!(json["lines"].as_array().map(Vec::len), Some(COUNT));
    assert_eq!(json["engine"]["byState"]["pending"], COUNT);
    assert!(json["engine"].get("window").is_none(), "a whole document");

    let ls: Vec<Value> = serde_json::from_str(&agent.ding_ok(&["ls", "--json"])).expect("ls JSON");
    assert_eq!(
        (ls[0]["unread"].clone(), ls[0]["held"].clone()),
        (COUNT.into(), COUNT.into())
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

/// A sidecar that answers with a status of another version is running all
/// the same: `ding status` lists the inbox from disk and says why, and
/// `ding ls` lists the agent with why, never hiding it or guessing.
#[test]
fn a_sidecar_of_another_version_is_listed_from_disk_with_why() {
    let agent = Agent::new("older", &aggressive_decl("older", SLEEPING_HARNESS));
    agent.up(&[]);
    agent.ding_ok(&["down", "older"]);
    agent.drop_message("m1.md", "first");
    // The stand-in sidecar: a live process named by the pid file (`ding
    // down` at the end stops it), and a socket answering as an older
    // sidecar might.
    let mut stand_in = Command::new("sleep").arg("600").spawn().expect("sleep");
    let paths = agent.paths();
    fs::create_dir_all(paths.runtime_dir()).expect("runtime dir");
    fs::write(paths.sidecar_pid(), format!("{}\n", stand_in.id())).expect("pid file");
    let listener = UnixListener::bind(paths.sidecar_socket()).expect("bind");
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = String::new();
            let _ = BufReader::new(&stream).read_line(&mut request);
            let _ = stream.write_all(b"{\"agent\":\"older\",\"running\":true,\"lines\":[]}\n");
        }
    });

    let out = agent.ding(&["status", "older", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(status["sidecar"]["state"], "running", "{status}");
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(message_names(&status), ["m1.md"]);
    let why = status["sidecarStatusError"].as_str().expect("why");
    assert!(
        why.contains("not one this ding reads") && why.contains("missing field `pid`"),
        "{why}"
    );
    let human = String::from_utf8(agent.ding(&["status", "older"]).stdout).expect("UTF-8");
    assert!(
        human.contains("  (the inbox is listed from disk, with the journal's states: the sidecar's status is not one this ding reads ("),
        "{human}"
    );
    assert!(
        human.contains("    m1.md  held: sidecar not running\n"),
        "{human}"
    );

    let listed = agent.ding_ok(&["ls"]);
    let row = listed
        .lines()
        .find(|line| line.starts_with("older "))
        .expect("the agent is listed");
    assert!(
        row.contains(" running ") && row.contains("not one this ding reads"),
        "{row}"
    );
    let listed: Value = serde_json::from_str(&agent.ding_ok(&["ls", "--json"])).expect("json");
    assert_eq!(listed[0]["unread"], 1, "{listed}");
    assert!(listed[0]["sidecarStatusError"].is_string(), "{listed}");

    let _ = stand_in.kill();
    let _ = stand_in.wait();
}
