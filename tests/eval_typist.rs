//! The evaluation's typist types through the PTY host's input path as a
//! person does: one keystroke per unconditional `send` with the default
//! origin, which the PTY host logs as an `intervention`, never as DING's
//! `delivery`; and the terminal receives exactly what it typed. Driven
//! from outside, with `ding-eval type`, the typist of every trial.

mod support;

use std::fs;
use std::process::Command;

use serde_json::Value;
use support::sidecar_agent::{Agent, Chunk, DING_EVAL, RECORDING_HARNESS, aggressive_decl};

#[test]
fn each_keystroke_is_one_send_logged_as_an_intervention_and_arrives_exactly() {
    let agent = Agent::new("typist", &aggressive_decl("typist", RECORDING_HARNESS));
    agent.up_recording();
    let output = Command::new(DING_EVAL)
        .args(["type", "--seed", "3", "--socket"])
        .arg(agent.paths().pty_socket())
        .arg("héllo")
        .output()
        .expect("run ding-eval type");
    assert!(output.status.success(), "{output:?}");
    let typed: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(typed["text"], "héllo");
    assert_eq!(typed["submits"], true);
    agent.wait_out("what the typist typed", |chunks| {
        chunks == [Chunk::Other("héllo\r".as_bytes().to_vec())]
    });
    let keys = typed["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 6, "one keystroke per character, then Return");
    let log = fs::read_to_string(agent.paths().pty_log()).expect("pty log");
    let inputs: Vec<Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| matches!(record["event"].as_str(), Some("delivery" | "intervention")))
        .collect();
    let sizes: Vec<u64> = inputs
        .iter()
        .map(|input| input["bytes"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(sizes, [1, 2, 1, 1, 1, 1], "{log}");
    assert!(
        inputs
            .iter()
            .all(|input| input["event"] == "intervention" && input["op"] == "send"),
        "{log}"
    );
}
