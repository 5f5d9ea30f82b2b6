//! The sidecar killed (SIGKILL, by itself: `DING_CRASH_AT`, see
//! `src/sidecar/crash_point.rs`) at each named point of a transaction,
//! restarted, and the outcome checked against the spec's crash windows
//! (§6 "Consequences after a restart", §6.1):
//!
//! * no file is lost and FIFO is kept: every file is still listed unread,
//!   in filename order, and rings (or stays owned) after the restart;
//! * a file is rung twice only when the crash fell between the PTY write
//!   and the journal write (`after-pty-write`, `before-journal-rename`);
//! * staged and hook-owned files are not rung again (same incarnation);
//! * a claim granted and journaled but never answered leaves its files
//!   hook-owned: not rung, and surfaced by the next claim for the backlog.
//!
//! Every test ends with a probe: one more file, whose ring must name it
//! alone, so that no repeated ring can still be on its way unseen.

mod support;

use std::fs;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use support::sidecar_agent::*;

/// Stops the running sidecar cleanly (SIGTERM), leaving the PTY host.
fn stop_sidecar(agent: &Agent) {
    let pid = agent.sidecar_pid().expect("sidecar pid");
    kill(Pid::from_raw(pid), Signal::SIGTERM).expect("stop the sidecar");
    wait_for("the sidecar to stop", || !process_alive(pid));
}

/// `ding up` with the sidecar armed at `point`; returns once that sidecar
/// has killed itself there. (`ding up` itself may succeed, or report that
/// the sidecar exited, when the point comes before its first answer.)
fn crash_at(agent: &Agent, point: &str) {
    let _ = agent.ding_with_env(&[("DING_CRASH_AT", point)], &["up", "agent.kdl"]);
    let pid = agent
        .sidecar_pid()
        .expect("the armed sidecar wrote its pid");
    wait_for(&format!("the sidecar to kill itself at {point}"), || {
        !process_alive(pid)
    });
    let log = fs::read_to_string(agent.paths().sidecar_log()).expect("log");
    let armed = log
        .rfind("crash-point-armed")
        .unwrap_or_else(|| panic!("no crash-point-armed in the log:\n{log}"));
    assert!(log[armed..].contains(point), "{}", &log[armed..]);
    assert!(
        !log[armed..].contains("sidecar-stopped"),
        "the sidecar stopped rather than died: {}",
        &log[armed..]
    );
}

/// `ding up` after a crash: adopts the PTY host (same incarnation), starts
/// a fresh sidecar.
fn restart(agent: &Agent) {
    let printed = agent.up(&[]);
    assert!(printed.contains("pty host adopted"), "{printed}");
    assert!(printed.contains("sidecar started"), "{printed}");
}

/// The rings the harness received so far, each as its notice's text.
fn rings(agent: &Agent) -> Vec<String> {
    notices(&parse_out(&agent.out()))
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Waits until the harness received `count` rings; returns them.
fn wait_rings(agent: &Agent, count: usize) -> Vec<String> {
    agent.wait_out(&format!("{count} rings"), |chunks| {
        notices(chunks).len() >= count
    });
    rings(agent)
}

/// Which of `names` a notice names, in the order it names them.
fn named<'a>(ring: &str, names: &[&'a str]) -> Vec<&'a str> {
    let mut found: Vec<(usize, &str)> = names
        .iter()
        .filter_map(|name| ring.find(&format!(" {name}")).map(|at| (at, *name)))
        .collect();
    found.sort();
    found.into_iter().map(|(_, name)| name).collect()
}

fn states(status: &Value) -> Vec<(String, String)> {
    status["engine"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap_or("?").to_string(),
                m["state"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

fn journal(agent: &Agent) -> Option<Value> {
    let text = fs::read_to_string(agent.paths().journal()).ok()?;
    Some(serde_json::from_str(&text).expect("journal JSON"))
}

fn journal_tmp(agent: &Agent) -> Option<Value> {
    let mut path = agent.paths().journal().into_os_string();
    path.push(".tmp");
    let text = fs::read_to_string(path).ok()?;
    Some(serde_json::from_str(&text).expect("journal tmp JSON"))
}

/// Drops a last file and waits for the ring that names it alone: proves
/// that nothing else was still due to ring. Returns every ring so far.
fn probe(agent: &Agent, rings_before: usize) -> Vec<String> {
    agent.drop_message("m9.md", "probe");
    let all = wait_rings(agent, rings_before + 1);
    assert_eq!(all.len(), rings_before + 1, "{all:#?}");
    assert_eq!(
        named(&all[rings_before], &["m1.md", "m2.md", "m3.md", "m9.md"]),
        ["m9.md"],
        "{all:#?}"
    );
    all
}

/// An aggressive agent whose harness records what it receives, up and
/// recording, with its sidecar stopped and `names` waiting in `new/`, so
/// that the next sidecar's first transaction names them all.
fn agent_with_waiting(name: &str, names: &[&str]) -> Agent {
    let agent = Agent::new(name, &aggressive_decl(name, RECORDING_HARNESS));
    agent.up_recording();
    stop_sidecar(&agent);
    for name in names {
        agent.drop_message(name, name);
    }
    agent
}

/// Restarts, and checks that `m1.md` and `m2.md` ring once, together and
/// in FIFO order, after the `rings_before` rings the harness already got,
/// and that both are staged and nothing else rings.
fn restart_and_ring_both(agent: &Agent, rings_before: usize) {
    restart(agent);
    let all = wait_rings(agent, rings_before + 1);
    assert_eq!(
        named(&all[rings_before], &["m1.md", "m2.md"]),
        ["m1.md", "m2.md"]
    );
    agent.wait_status("both staged", |s| {
        states(s)
            == [
                ("m1.md".into(), "staged".into()),
                ("m2.md".into(), "staged".into()),
            ]
    });
    probe(agent, rings_before + 1);
}

/// Before the PTY write: nothing reached the terminal, nothing was
/// journaled; after the restart both files ring once, in FIFO order.
#[test]
fn killed_before_the_pty_write_rings_each_file_once_after_the_restart() {
    let agent = agent_with_waiting("beforewrite", &["m1.md", "m2.md"]);
    crash_at(&agent, "before-pty-write");
    assert!(rings(&agent).is_empty(), "{:?}", rings(&agent));
    assert!(journal(&agent).is_none_or(|j| journal_owned(&j, "staged").is_empty()));

    restart_and_ring_both(&agent, 0);
}

/// After the PTY write, before its reply was handled: the one window in
/// which a file may ring twice. It does, once more, and only that.
#[test]
fn killed_after_the_pty_write_rings_again_once_the_documented_window() {
    let agent = agent_with_waiting("afterwrite", &["m1.md", "m2.md"]);
    crash_at(&agent, "after-pty-write");
    let before = wait_rings(&agent, 1);
    assert_eq!(before.len(), 1);
    assert!(journal(&agent).is_none_or(|j| journal_owned(&j, "staged").is_empty()));

    restart_and_ring_both(&agent, 1);
}

/// The new journal written as `journal.json.tmp` but not renamed: the
/// reply was never journaled, so this is still the window between the PTY
/// write and the journal write. The leftover tmp file is not read.
#[test]
fn killed_before_the_journal_rename_rings_again_and_ignores_the_tmp_file() {
    let agent = agent_with_waiting("beforerename", &["m1.md", "m2.md"]);
    crash_at(&agent, "before-journal-rename");
    assert_eq!(wait_rings(&agent, 1).len(), 1);
    let tmp = journal_tmp(&agent).expect("the unrenamed journal");
    assert_eq!(journal_owned(&tmp, "staged"), ["m1.md", "m2.md"]);
    assert!(journal(&agent).is_none_or(|j| journal_owned(&j, "staged").is_empty()));

    restart_and_ring_both(&agent, 1);
}

/// Renamed, the directory not yet fsynced: the journal in place says both
/// files were rung, so the restart rings neither.
#[test]
fn killed_after_the_journal_rename_rings_nothing_again() {
    let agent = agent_with_waiting("afterrename", &["m1.md", "m2.md"]);
    crash_at(&agent, "after-journal-rename");
    assert_eq!(wait_rings(&agent, 1).len(), 1);
    let saved = journal(&agent).expect("the renamed journal");
    assert_eq!(journal_owned(&saved, "staged"), ["m1.md", "m2.md"]);

    restart(&agent);
    agent.wait_status("both staged, restored", |s| {
        s["ptyConnected"] == true && states(s).iter().all(|(_, state)| state == "staged")
    });
    probe(&agent, 1);
}

/// Killed while listing `new/` at start: the journal is untouched, the
/// staged file stays staged, and the two files that arrived while no
/// sidecar ran ring once, together, in FIFO order.
#[test]
fn killed_mid_scan_loses_nothing_and_repeats_nothing() {
    let agent = Agent::new("midscan", &aggressive_decl("midscan", RECORDING_HARNESS));
    agent.up_recording();
    agent.drop_message("m1.md", "m1");
    wait_rings(&agent, 1);
    agent.wait_status("m1 staged", |s| {
        states(s) == [("m1.md".into(), "staged".into())]
    });
    stop_sidecar(&agent);
    let saved = journal(&agent).expect("journal");
    agent.drop_message("m2.md", "m2");
    agent.drop_message("m3.md", "m3");

    crash_at(&agent, "mid-scan");
    assert_eq!(journal(&agent), Some(saved), "the journal changed");
    assert_eq!(rings(&agent).len(), 1);

    restart(&agent);
    let all = wait_rings(&agent, 2);
    assert_eq!(
        named(&all[1], &["m1.md", "m2.md", "m3.md"]),
        ["m2.md", "m3.md"]
    );
    let status = agent.wait_status("all staged", |s| {
        states(s).iter().all(|(_, state)| state == "staged")
    });
    assert_eq!(message_names(&status), ["m1.md", "m2.md", "m3.md"]);
    probe(&agent, 2);
}

/// A claim granted and journaled, the sidecar killed before its answer
/// was written: the hook heard nothing (it injects nothing), and the
/// journal names the file in doubt (no hook said it printed it). The
/// sidecar started again does not restore it: it is pending, and rung with
/// the rest, once.
#[test]
fn killed_after_a_claim_is_journaled_the_file_in_doubt_is_pending_again() {
    let agent = Agent::new(
        "claimcrash",
        &careful_decl_with_adapter("claimcrash", DRAWING_HARNESS, RECORDING_ADAPTER, ""),
    );
    agent.up_recording();
    agent.wait_adapter_up();
    stop_sidecar(&agent);
    agent.drop_message("m1.md", "m1");
    agent.drop_message("m2.md", "m2");

    let _ = agent.ding_with_env(
        &[("DING_CRASH_AT", "after-claim-journaled")],
        &["up", "agent.kdl"],
    );
    let first = agent.wait_adapter_up();
    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    agent.feed(first, &agent.claim(1, &["m1.md"]));
    wait_for("the sidecar to kill itself after the claim", || {
        !process_alive(sidecar)
    });
    assert!(
        agent.claims_answered(first).is_empty(),
        "the answer was written: {:?}",
        agent.downlink(first)
    );
    let saved = journal(&agent).expect("the claim was journaled");
    assert_eq!(journal_owned(&saved, "hook-owned"), ["m1.md"]);
    assert_eq!(saved["inDoubt"], json!(["m1.md"]), "{saved}");

    restart(&agent);
    let second = agent.wait_adapter_up();
    agent.wait_status("m1 and m2 pending", |s| {
        states(s)
            == [
                ("m1.md".into(), "pending".into()),
                ("m2.md".into(), "pending".into()),
            ]
    });
    agent.feed(
        second,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(second);
    let all = wait_rings(&agent, 1);
    assert_eq!(
        named(&all[0], &["m1.md", "m2.md"]),
        ["m1.md", "m2.md"],
        "{all:#?}"
    );
    assert_eq!(rings(&agent).len(), 1, "{:?}", rings(&agent));
}

/// A point that is not one is a mistake in a test: the sidecar refuses to
/// start rather than run a test that checks nothing, and `ding up` says so.
#[test]
fn an_unknown_crash_point_stops_the_start() {
    let agent = Agent::new("badpoint", &aggressive_decl("badpoint", SLEEPING_HARNESS));
    let out = agent.ding_with_env(&[("DING_CRASH_AT", "mid-sacn")], &["up", "agent.kdl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        stderr.contains("DING_CRASH_AT=\"mid-sacn\" names no crash point"),
        "{stderr}"
    );
}
