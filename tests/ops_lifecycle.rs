//! Lifecycle truth (OPS): a harness that cannot start fails `ding up` at
//! once with the real reason; a dead or exited harness is reported as such
//! by `ding status`, `ding ls` and `ding up`; `ding restart` starts a new
//! incarnation and loses nothing; `ding up FILE` starts every agent of the
//! file; the declared terminal size is the size at launch.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::sidecar_agent::*;

/// Generous: a start that fails must fail long before `ding up`'s 15 s
/// wait for a process to answer.
const PROMPT: Duration = Duration::from_secs(5);

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn status_json(agent: &Agent) -> (Option<i32>, Value) {
    let out = agent.ding(&["status", &agent.name, "--json"]);
    let document = serde_json::from_slice(&out.stdout).expect("status is JSON");
    (out.status.code(), document)
}

/// `ding up`, which must fail at once with exit status 1 and leave no
/// process behind; its output.
fn up_fails(agent: &Agent) -> String {
    let started = Instant::now();
    let out = agent.ding_within(PROMPT * 2, &["up", "agent.kdl"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(took < PROMPT, "ding up took {took:?} to fail");
    assert_eq!(agent.processes(), Vec::<i32>::new(), "left running");
    text(&out)
}

#[test]
fn a_harness_that_exits_at_once_fails_up_with_its_status_and_its_last_words() {
    let agent = Agent::new(
        "dead",
        &aggressive_decl(
            "dead",
            r#"command "sh" "-c" "echo 'config error: no model configured'; exit 3""#,
        ),
    );
    let said = up_fails(&agent);
    assert!(said.contains("the harness exited with code 3"), "{said}");
    assert!(
        said.contains("| config error: no model configured"),
        "its screen is quoted: {said}"
    );
    let (code, status) = status_json(&agent);
    assert_eq!(code, Some(3), "not running");
    assert_eq!(status["harness"]["state"], "stopped", "{status}");
    // Why it stopped stays visible until the next start, as systemd's
    // "Result: exit-code".
    let last = &status["lastExit"];
    assert_eq!(
        last["child"],
        serde_json::json!({"state": "exited", "code": 3}),
        "{status}"
    );
    assert_eq!(
        last["screen"],
        serde_json::json!(["config error: no model configured"])
    );
    let human = text(&agent.ding(&["status", &agent.name]));
    assert!(
        human.contains("last exit    the harness exited with code 3 at "),
        "{human}"
    );
    assert!(
        human.contains("| config error: no model configured"),
        "{human}"
    );
    agent.write_declaration(&aggressive_decl("dead", SLEEPING_HARNESS));
    agent.up(&[]);
    let (_, status) = status_json(&agent);
    assert_eq!(status["harness"]["state"], "running", "{status}");
    assert!(
        status.get("lastExit").is_none(),
        "cleared by the start: {status}"
    );
    agent.ding_ok(&["down", &agent.name]);
}

#[test]
fn a_harness_that_cannot_start_fails_up_at_once_naming_why_and_check_warns() {
    let agent = Agent::new(
        "nostart",
        &aggressive_decl("nostart", r#"command "my-agent-tui""#),
    );
    let said = up_fails(&agent);
    assert!(
        said.contains("`command`: program `my-agent-tui` is not found on PATH"),
        "{said}"
    );
    let check = agent.ding(&["check", "agent.kdl"]);
    assert!(check.status.success(), "a warning: {}", text(&check));
    assert!(
        text(&check).contains(
            "warning: agent `nostart`: `command`: program `my-agent-tui` is not found on PATH"
        ),
        "{}",
        text(&check)
    );

    agent.write_declaration("agent \"nostart\" {\n  command \"sh\"\n  cwd \"does/not/exist\"\n}\n");
    let said = up_fails(&agent);
    assert!(
        said.contains("`cwd` ") && said.contains("does/not/exist does not exist"),
        "{said}"
    );
    let check = text(&agent.ding(&["check", "agent.kdl"]));
    assert!(
        check.contains("warning: agent `nostart`: `cwd` ") && check.contains("does not exist"),
        "{check}"
    );

    // A file that is not executable, and one that is but is no program
    // (exec hands it to sh, which cannot run it either).
    fs::write(agent.path("plain"), "not a program\n").expect("plain");
    fs::write(agent.path("garbage"), [0u8, 1, 2, 3]).expect("garbage");
    fs::set_permissions(agent.path("garbage"), fs::Permissions::from_mode(0o755)).expect("chmod");
    agent.write_declaration("agent \"nostart\" {\n  command \"./plain\"\n}\n");
    let said = up_fails(&agent);
    assert!(said.contains("plain` is not an executable file"), "{said}");
    agent.write_declaration("agent \"nostart\" {\n  command \"./garbage\"\n}\n");
    let said = up_fails(&agent);
    assert!(
        said.contains("the harness exited with code 127") && said.contains("| ./garbage:"),
        "the failure is named: {said}"
    );
}

#[test]
fn an_exited_harness_is_reported_and_up_starts_it_again() {
    let agent = Agent::new(
        "quits",
        &aggressive_decl(
            "quits",
            r#"command "sh" "-c" "printf READY; read line; exit 5""#,
        ),
    );
    agent.up(&[]);
    agent.wait_screen("READY");
    agent.ding_ok(&["intervene", "quits", "bye"]);
    wait_for("the harness to exit", || {
        status_json(&agent).1["harness"]["state"] == "exited"
    });
    let (code, status) = status_json(&agent);
    assert_eq!(code, Some(3), "not running");
    assert_eq!(status["harness"]["code"], 5, "{status}");
    assert_eq!(status["ptyHost"]["state"], "running");
    assert_eq!(status["sidecar"]["state"], "running");
    let human = String::from_utf8(agent.ding(&["status", "quits"]).stdout).expect("UTF-8");
    assert!(
        human.starts_with("agent quits: NOT RUNNING: harness exited with code 5\n"),
        "{human}"
    );
    assert!(
        human.contains("  harness      EXITED WITH CODE 5 "),
        "{human}"
    );
    let ls = agent.ding_ok(&["ls"]);
    assert!(ls.contains("quits") && ls.contains("exited (5)"), "{ls}");

    let printed = agent.up(&[]);
    assert!(
        printed.contains("the harness had exited with code 5: started again"),
        "{printed}"
    );
    assert!(
        printed.contains("  harness      running (pid "),
        "{printed}"
    );
    assert_eq!(status_json(&agent).0, Some(0), "running again");
}

#[test]
fn restart_is_a_new_incarnation_and_loses_nothing() {
    let agent = Agent::new("again", &aggressive_decl("again", RECORDING_HARNESS));
    agent.up_recording();
    agent.drop_message("0001.md", "x");
    agent.wait_out("the first ring", |chunks| notices(chunks).len() == 1);
    let before = agent.pty().status().expect("pty status").incarnation;

    let printed = agent.ding_ok(&["restart", "again"]);
    let after = agent.pty().status().expect("pty status").incarnation;
    assert_ne!(before, after, "a new incarnation");
    assert!(
        printed.contains(&format!(
            "harness restarted (incarnation {before} -> {after})"
        )),
        "{printed}"
    );
    // The new harness is told again: what the old one was told is gone
    // with it. The message itself never left the inbox. (The ring may
    // come before the new harness asked for bracketed paste, and then
    // comes without the markers, as from any terminal: its text is
    // looked for, in what the new harness read.)
    agent.wait_screen("READY");
    wait_for("the ring into the new incarnation", || {
        String::from_utf8_lossy(&agent.out()).contains("0001.md")
    });
    assert!(agent.new_dir().join("0001.md").exists(), "nothing lost");

    agent.ding_ok(&["down", "again"]);
    let stopped = agent.ding(&["restart", "again"]);
    assert_eq!(stopped.status.code(), Some(3), "{}", text(&stopped));
    assert!(text(&stopped).contains("ding up"), "{}", text(&stopped));
    let unknown = agent.ding(&["restart", "nobody"]);
    assert_eq!(unknown.status.code(), Some(4), "{}", text(&unknown));
}

#[test]
fn up_of_a_file_starts_every_agent_and_ls_lists_them() {
    let agent = Agent::new("first", "");
    agent.write_declaration(&format!(
        "{}{}",
        aggressive_decl("first", SLEEPING_HARNESS),
        careful_decl("second", SLEEPING_HARNESS, "")
    ));
    let printed = agent.ding_ok(&["up", "agent.kdl"]);
    assert!(
        printed.contains("agent first: pty host started"),
        "{printed}"
    );
    assert!(
        printed.contains("agent second: pty host started"),
        "{printed}"
    );
    fs::write(agent.path("inbox/second/new/0001.md"), "x").expect("message");
    let ls = || -> Vec<Value> {
        serde_json::from_str(&agent.ding_ok(&["ls", "--json"])).expect("ls is JSON")
    };
    wait_for("the held message counted", || {
        ls().iter()
            .any(|a| a["agent"] == "second" && a["held"] == 1)
    });
    for summary in ls() {
        assert_eq!(summary["harness"]["state"], "running", "{summary}");
        assert_eq!(summary["ptyHost"]["state"], "running", "{summary}");
        assert_eq!(summary["sidecar"]["state"], "running", "{summary}");
    }
    let second = ls()
        .into_iter()
        .find(|a| a["agent"] == "second")
        .expect("second");
    assert_eq!(
        (second["unread"].clone(), second["held"].clone()),
        (1.into(), 1.into())
    );
    let table = agent.ding_ok(&["ls"]);
    let row = table
        .lines()
        .find(|line| line.starts_with("second "))
        .expect("a row for second");
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &columns[..6],
        ["second", "running", "running", "running", "1", "1"],
        "{table}"
    );
    assert_eq!(
        agent.ding_ok(&["status"]),
        table,
        "status without a name is ls"
    );
    agent.ding_ok(&["down", "second"]);
}

/// A file's agents start together and each one's report is kept, in the
/// file's order: one whose harness exits at once fails the command, and
/// the last line names it, while the others are up. `ding down --decl`
/// stops every agent of the file, and `ding down` of several names each.
#[test]
fn a_fleet_starts_together_and_the_last_line_names_every_agent_that_failed() {
    let agent = Agent::new("fleet-a", "");
    agent.write_declaration(&format!(
        "{}{}{}{}",
        aggressive_decl("fleet-a", SLEEPING_HARNESS),
        aggressive_decl("fleet-b", r#"command "sh" "-c" "exit 3""#),
        careful_decl("fleet-c", SLEEPING_HARNESS, ""),
        aggressive_decl("fleet-d", r#"command "sh" "-c" "exit 4""#),
    ));
    let out = agent.ding_within(PROMPT * 2, &["up", "agent.kdl"]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let a = stdout.find("agent fleet-a: pty host started");
    let c = stdout.find("agent fleet-c: pty host started");
    assert!(
        a.is_some() && c.is_some() && a < c,
        "in the file's order: {said}"
    );
    assert!(said.contains("the harness exited with code 3"), "{said}");
    assert!(said.contains("the harness exited with code 4"), "{said}");
    let last = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        last.lines().last(),
        Some("ding: 2 of 4 agents did not start: fleet-b, fleet-d"),
        "{said}"
    );
    let stopped = agent.ding_ok(&["down", "--decl", "agent.kdl"]);
    for name in ["fleet-a", "fleet-c"] {
        assert!(stopped.contains(&format!("{name}: sidecar")), "{stopped}");
    }
    assert_eq!(agent.processes(), Vec::<i32>::new(), "left running");
    let again = agent.ding(&["down", "fleet-a", "no-such-agent", "fleet-c"]);
    assert_eq!(again.status.code(), Some(4), "{}", text(&again));
    assert!(
        text(&again).contains("1 of 3 agents were not stopped: no-such-agent"),
        "{}",
        text(&again)
    );
}

/// Everything a harness starts is the PTY host's to end: a process that
/// double-forks and calls `setsid` has left the harness's process group
/// and session, and still ends when the harness restarts and with `ding
/// down`.
#[test]
fn a_process_that_left_the_harness_group_ends_with_restart_and_down() {
    let agent = Agent::new(
        "tree",
        &aggressive_decl(
            "tree",
            r#"command "sh" "-c" "(setsid sh -c 'echo $$ > \"$DING_RUNTIME_DIR/escaped.pid\"; exec sleep 600' &); echo READY; exec sleep 600""#,
        ),
    );
    let pid_file = agent.paths().runtime_dir().join("escaped.pid");
    let read_pid = || -> Option<i32> { fs::read_to_string(&pid_file).ok()?.trim().parse().ok() };
    let escaped = || -> i32 {
        wait_for("the escaped process's pid", || read_pid().is_some());
        read_pid().expect("pid")
    };
    let alive = |pid: i32| {
        fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
    };
    agent.up(&[]);
    agent.wait_screen("READY");
    let first = escaped();
    assert!(alive(first));
    let harness = agent.pty().status().expect("status").child;
    let ding::pty::wire::ChildState::Running { pid: harness } = harness else {
        panic!("the harness runs: {harness:?}");
    };
    let session = |pid: i32| nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid)));
    assert_ne!(
        session(first),
        session(harness),
        "it left the harness's session"
    );
    fs::remove_file(&pid_file).expect("remove the pid file");
    agent.ding_ok(&["restart", "tree"]);
    let second = escaped();
    assert!(!alive(first), "the old job's escaped process ended with it");
    assert!(alive(second));
    agent.ding_ok(&["down", "tree"]);
    assert!(!alive(second), "ended with ding down");
    assert_eq!(agent.processes(), Vec::<i32>::new(), "left running");
}

#[test]
fn the_declared_size_is_the_terminal_size_at_launch() {
    let agent = Agent::new("wide", "");
    agent
        .write_declaration("agent \"wide\" {\n  command \"sleep\" \"600\"\n  size \"120x40\"\n}\n");
    let printed = agent.up(&[]);
    assert!(printed.contains("terminal 120x40"), "{printed}");
    let status = agent.pty().status().expect("pty status");
    assert_eq!((status.size.cols, status.size.rows), (120, 40));
    assert_eq!(agent.pty().snapshot().expect("snapshot").rows.len(), 40);
    let check = agent.ding(&["check", "agent.kdl"]);
    assert!(check.status.success(), "{}", text(&check));
    agent.write_declaration("agent \"wide\" {\n  command \"sleep\" \"600\"\n  size \"120\"\n}\n");
    let check = agent.ding(&["check", "agent.kdl"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        text(&check).contains("`size` \"120\" is not a terminal size"),
        "{}",
        text(&check)
    );
}

#[test]
fn status_and_down_tell_not_running_from_unknown() {
    let agent = Agent::new("codes", &aggressive_decl("codes", SLEEPING_HARNESS));
    let never = agent.ding(&["status", "codes"]);
    assert_eq!(never.status.code(), Some(4), "{}", text(&never));
    let never = agent.ding(&["down", "codes"]);
    assert_eq!(never.status.code(), Some(4), "{}", text(&never));
    agent.up(&[]);
    assert_eq!(agent.ding(&["status", "codes"]).status.code(), Some(0));
    agent.ding_ok(&["down", "codes"]);
    assert_eq!(agent.ding(&["status", "codes"]).status.code(), Some(3));
    let again = agent.ding(&["down", "codes"]);
    assert_eq!(again.status.code(), Some(0), "already stopped is success");
}

/// `pty.log` is capped and rotated like the sidecar's log: a flood of
/// interventions (one log line each; before, it grew the file without
/// bound) leaves the current file and one previous generation, neither
/// much over the cap, and the rotation is logged.
#[test]
fn the_pty_host_log_is_capped_and_rotated() {
    use ding::log_file::LOG_MAX_BYTES;
    use ding::pty::transport::WireStep;
    let agent = Agent::new("flood", &aggressive_decl("flood", RECORDING_HARNESS));
    agent.up_recording();
    let log = agent.paths().pty_log();
    let mut previous = log.clone().into_os_string();
    previous.push(".1");
    let previous = std::path::PathBuf::from(previous);
    let mut pty = agent.pty();
    let mut sends = 0;
    while !previous.exists() {
        pty.send(&[WireStep::Write(b".".to_vec())]).expect("send");
        sends += 1;
        assert!(sends < 200_000, "no rotation after {sends} sends");
    }
    // One more line lands in the fresh file.
    pty.send(&[WireStep::Write(b".".to_vec())]).expect("send");
    let slack = 64 * 1024;
    let old = fs::metadata(&previous).expect("previous").len();
    let current = fs::metadata(&log).expect("current").len();
    assert!(
        (LOG_MAX_BYTES..LOG_MAX_BYTES + slack).contains(&old),
        "{old}"
    );
    assert!(current < slack, "{current}");
    let fresh = fs::read_to_string(&log).expect("pty.log");
    assert!(fresh.contains("\"event\":\"log-rotated\""), "{fresh}");
}
