//! The evaluation's typist types through the PTY host's input path as a
//! person does: one keystroke per unconditional `send` with the default
//! origin, which the PTY host logs as an `intervention`, never as DING's
//! `delivery`; and the terminal receives exactly what it typed.

mod support;

use std::fs;
use std::time::Instant;

use ding::eval::logs::pty_inputs;
use ding::eval::rng::Rng;
use ding::eval::typist::{Pace, Typist};
use support::sidecar_agent::{Agent, Chunk, RECORDING_HARNESS, aggressive_decl};

#[test]
fn each_keystroke_is_one_send_logged_as_an_intervention_and_arrives_exactly() {
    let agent = Agent::new("typist", &aggressive_decl("typist", RECORDING_HARNESS));
    agent.up_recording();
    let mut typist = Typist::connect(&agent.paths().pty_socket()).expect("connect");
    let plan = Pace::new(&mut Rng::new(3)).line("héllo");
    typist.perform(&plan, Instant::now()).expect("type");
    agent.wait_out("what the typist typed", |chunks| {
        chunks == [Chunk::Other("héllo\r".as_bytes().to_vec())]
    });
    assert_eq!(
        typist.typed.len(),
        6,
        "one keystroke per character, then Return"
    );
    let log = fs::read_to_string(agent.paths().pty_log()).expect("pty log");
    let inputs = pty_inputs(&log);
    let sizes: Vec<u64> = inputs.iter().map(|input| input.bytes).collect();
    assert_eq!(sizes, [1, 2, 1, 1, 1, 1], "{log}");
    assert!(
        inputs
            .iter()
            .all(|input| input.event == "intervention" && input.op == "send"),
        "{log}"
    );
}
