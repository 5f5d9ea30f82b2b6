//! Every process an agent starts stops with `ding down`, checked by pid: an
//! adapter that ignores SIGTERM, the grandchild it forked, an adapter a
//! killed sidecar left behind, and a harness and adapter started by a
//! `ding up` that inherited the stopping signals ignored. (That a blocked
//! mask is undone too is `signals`' own unit test: `ding up` cannot pass a
//! blocked mask on, since std clears it in the children it spawns.)

mod support;

use std::fs;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::sidecar_agent::*;

/// An adapter that ignores SIGTERM and forks a grandchild that ignores it
/// too; both record their pids and then only sleep.
const STUBBORN_ADAPTER: &str = r#"trap '' TERM
sh -c 'echo $$ > "$FEEDS/grandchild.pid.tmp"; mv "$FEEDS/grandchild.pid.tmp" "$FEEDS/grandchild.pid"; exec sleep 600' &
exec sleep 600
"#;

fn stubborn_agent(name: &str) -> Agent {
    let agent = Agent::new(
        name,
        &careful_decl_with_adapter(
            name,
            SLEEPING_HARNESS,
            r#"command "sh" "$ST_HOOKS/stubborn.sh""#,
            "",
        ),
    );
    fs::write(agent.path("hooks/stubborn.sh"), STUBBORN_ADAPTER).expect("adapter script");
    agent
}

fn grandchild(agent: &Agent) -> i32 {
    let path = agent.path("feeds/grandchild.pid");
    wait_for("the grandchild to start", || path.exists());
    fs::read_to_string(&path)
        .expect("grandchild pid")
        .trim()
        .parse()
        .expect("a pid")
}

#[test]
fn down_stops_an_adapter_that_ignores_sigterm_and_the_grandchild_it_forked() {
    let agent = stubborn_agent("stubborn");
    agent.up(&[]);
    let adapter = agent.wait_adapter_up();
    let grandchild = grandchild(&agent);
    assert!(process_alive(adapter) && process_alive(grandchild));

    let printed = agent.ding_ok(&["down", "stubborn"]);
    assert!(
        printed.contains("sidecar") && printed.contains("stopped"),
        "the sidecar stopped by itself, within its grace: {printed}"
    );
    assert!(!process_alive(adapter), "adapter {adapter} survived");
    assert!(
        !process_alive(grandchild),
        "grandchild {grandchild} survived"
    );
    assert_eq!(agent.processes(), Vec::<i32>::new(), "nothing is left");
}

#[test]
fn down_ends_the_adapter_group_a_killed_sidecar_left_behind() {
    let agent = stubborn_agent("orphan");
    agent.up(&[]);
    let adapter = agent.wait_adapter_up();
    let grandchild = grandchild(&agent);
    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9 the sidecar");
    wait_for("the sidecar to die", || !process_alive(sidecar));
    assert!(process_alive(adapter), "orphaned, as a crash leaves it");

    let printed = agent.ding_ok(&["down", "orphan"]);
    assert!(
        printed.contains(&format!("process group {adapter}) killed")),
        "{printed}"
    );
    assert!(!process_alive(adapter), "adapter {adapter} survived");
    assert!(
        !process_alive(grandchild),
        "grandchild {grandchild} survived"
    );
}

/// Standard signals 1..=31 (the C library keeps two real-time signals of
/// its own, which some sandboxes show as ignored).
const STANDARD: u64 = 0x7fff_ffff;

#[test]
fn every_process_starts_clean_even_when_ding_up_inherits_ignored_signals() {
    let name = "hostile";
    let agent = Agent::new(
        name,
        &careful_decl_with_adapter(name, SLEEPING_HARNESS, r#"command "sleep" "600""#, ""),
    );
    // As `nohup`, a supervisor or a shell's `trap '' TERM` might leave it:
    // an ignored signal stays ignored across exec.
    let out = agent.ding_under(
        &["sh", "-c", "trap '' TERM HUP INT CHLD; exec \"$@\"", "sh"],
        &["up", "agent.kdl"],
    );
    assert!(out.status.success(), "{out:?}");
    let adapter = agent.wait_adapter_up();
    let harness = match agent.pty().status().expect("pty status").child {
        ding::pty::wire::ChildState::Running { pid } => pid,
        other => panic!("harness not running: {other:?}"),
    };
    for (what, pid) in [("harness", harness), ("adapter", adapter)] {
        let (blocked, ignored) = signal_masks(pid);
        assert_eq!(
            blocked & STANDARD,
            0,
            "{what} starts with blocked {blocked:x}"
        );
        assert_eq!(
            ignored & STANDARD,
            0,
            "{what} starts with ignored {ignored:x}"
        );
    }
    // The host and the sidecar block their signals (they read them through
    // a signalfd) but must not ignore them: an ignored signal never arrives.
    let stopping = [
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGCHLD,
    ]
    .into_iter()
    .map(signal_bit)
    .fold(0, |all, bit| all | bit);
    for (what, pid) in [
        ("pty host", agent.pty_pid().expect("pty pid")),
        ("sidecar", agent.sidecar_pid().expect("sidecar pid")),
    ] {
        let (_, ignored) = signal_masks(pid);
        assert_eq!(ignored & stopping, 0, "{what} ignores {ignored:x}");
    }

    // SIGTERM to the harness is acted on, not left pending or ignored.
    kill(Pid::from_raw(harness), Signal::SIGTERM).expect("signal the harness");
    wait_for("the harness to die of SIGTERM", || !process_alive(harness));

    let printed = agent.ding_ok(&["down", name]);
    assert!(
        !printed.contains("killed"),
        "each stopped on SIGTERM: {printed}"
    );
    assert!(!process_alive(adapter), "adapter {adapter} survived");
    assert_eq!(agent.processes(), Vec::<i32>::new(), "nothing is left");
}

/// SIGTERM stops the typing: the sidecar finishes the delivery in flight
/// (its reply is journaled) and starts no other, however much work waits.
#[test]
fn a_stopping_sidecar_types_nothing_new() {
    let agent = Agent::new("stopping", &aggressive_decl("stopping", RECORDING_HARNESS));
    agent.up_recording();
    for n in 0..40 {
        agent.drop_message(&format!("{n:04}.md"), "work");
    }
    agent.wait_out("two rings", |chunks| {
        chunks
            .iter()
            .filter(|chunk| matches!(chunk, Chunk::Notice(_)))
            .count()
            >= 2
    });
    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    let rings = |out: &[u8]| {
        parse_out(out)
            .iter()
            .filter(|chunk| matches!(chunk, Chunk::Notice(_)))
            .count()
    };
    let before = rings(&agent.out());
    kill(Pid::from_raw(sidecar), Signal::SIGTERM).expect("SIGTERM the sidecar");
    wait_for("the sidecar to stop", || !process_alive(sidecar));
    let after = rings(&agent.out());
    assert!(
        after <= before + 1,
        "only the ring in flight may land after SIGTERM: {before} before, {after} after"
    );
    let unread = fs::read_dir(agent.path("inbox/stopping/new"))
        .expect("new/")
        .count();
    // Nobody archives here: every file stays in new/, rung or not.
    assert_eq!(unread, 40, "nothing was lost");
}
