//! The adapter kit against a real sidecar, PTY host and demo agent: the
//! downlink's demand signal, the hook channel, claims, and the races between
//! a hook injecting work and the terminal path ringing it.
//!
//! The agent runs the demo adapter (the kit with the demo grammar). Hooks are
//! run by the test exactly as a harness would run them: `ding hook demo
//! EVENT` with the harness's `DING_*` environment (identity and hook socket).

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use support::sidecar_agent::{Agent, DING, message, wait_for};

const DEMO_HARNESS: &str = r#"command "ding" "demo-agent" "--transcript" "transcript.jsonl""#;

fn demo_agent() -> Agent {
    let declaration = format!(
        "agent \"kit\" {{\n  {DEMO_HARNESS}\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{ command \"ding\" \"demo-adapter\"; }}\n  }}\n}}\n"
    );
    let agent = Agent::new("kit", &declaration);
    agent.up(&[]);
    agent.wait_screen("demo-agent  ready");
    agent.wait_adapter_up();
    agent
}

/// `ding hook demo EVENT ARGS` as the harness would run it, with the
/// harness's identity and hook socket in its environment.
fn hook_command(agent: &Agent, event: &str, args: &[&str]) -> Command {
    let status = agent.pty().status().expect("pty status");
    let paths = agent.paths();
    let mut command = Command::new(DING);
    command
        .args(["hook", "demo", event])
        .args(args)
        .env("DING_SESSION", &status.session)
        .env("DING_INCARNATION", &status.incarnation)
        .env("DING_GENERATION", &status.generation)
        .env("DING_HOOK_SOCKET", paths.runtime_dir().join("hook.sock"))
        .stdin(Stdio::null());
    command
}

/// Runs one hook the way the harness would, returning what it printed.
fn hook(agent: &Agent, event: &str) -> String {
    let out = hook_command(agent, event, &[])
        .output()
        .expect("run ding hook");
    assert!(out.status.success(), "ding hook exits 0");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Starts a hook in the background, as a harness runs its background
/// hooks.
fn spawn_hook(agent: &Agent, args: &[&str]) -> std::process::Child {
    hook_command(agent, "wake", args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ding hook")
}

/// [`spawn_hook`], then waits until the adapter has parked the call (it
/// logs each one).
fn park_hook(agent: &Agent, args: &[&str]) -> std::process::Child {
    let before = agent.parked_calls();
    let child = spawn_hook(agent, args);
    wait_for("the adapter to park the hook call", || {
        agent.parked_calls() > before
    });
    child
}

/// Waits (with a deadline, never a fixed sleep) for a background hook to
/// end; returns its exit code, stdout and stderr.
fn finished(child: std::process::Child) -> (i32, String, String) {
    let child = std::cell::RefCell::new(child);
    wait_for("the hook to be answered", || {
        child.borrow_mut().try_wait().expect("try_wait").is_some()
    });
    let out = child.into_inner().wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The files a hook answer names.
fn injected(answer: &str, candidates: &[String]) -> BTreeSet<String> {
    candidates
        .iter()
        .filter(|name| answer.contains(name.as_str()))
        .cloned()
        .collect()
}

/// The texts the demo agent received as pasted input (DING's notices).
/// Waits until the demo agent has recorded a submitted prompt holding
/// `name`: the host's `sent` (the file staged) comes before the agent has
/// read the Return and written its transcript.
fn wait_pasted(agent: &Agent, name: &str) -> String {
    wait_for(&format!("the agent to record {name} submitted"), || {
        pasted(agent).contains(name)
    });
    pasted(agent)
}

fn pasted(agent: &Agent) -> String {
    std::fs::read_to_string(agent.path("transcript.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["event"] == "submitted" || event["event"] == "queued")
        .filter_map(|event| event["text"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn with_nothing_pending_no_evidence_is_wanted_and_none_is_sent() {
    let agent = demo_agent();
    let status = agent.status();
    assert_eq!(status["engine"]["evidence"]["wanted"], false);
    assert!(
        status["engine"]["adapter"]["lastLine"].is_null(),
        "an adapter that was not asked says nothing: {}",
        status["engine"]["adapter"]
    );
    agent.drop_message("001.md", "hello");
    // Wanted, evidence, a ring; then nothing is wanted again.
    agent.wait_status("the message rung", |status| {
        message(status, "001.md").is_some_and(|m| m["state"] == "staged")
    });
    agent.wait_status("evidence no longer wanted", |status| {
        status["engine"]["evidence"]["wanted"] == false
    });
}

#[test]
fn a_hook_claims_pending_work_and_the_terminal_never_gets_it() {
    let agent = demo_agent();
    // A draft keeps the terminal path closed while the hook runs.
    agent.ding_ok(&["intervene", "kit", "half a thought", "--no-enter"]);
    for name in ["001.md", "002.md"] {
        agent.drop_message(name, "work");
    }
    agent.wait_held("002.md", "composer-nonempty");
    let shown = agent.ding_ok(&["status", "kit"]);
    assert!(
        shown.contains("adapter says prompt ready, draft in composer"),
        "{shown}"
    );
    let answer = hook(&agent, "turn-start");
    assert!(
        answer.contains("001.md") && answer.contains("002.md"),
        "{answer}"
    );
    let status = agent.status();
    for name in ["001.md", "002.md"] {
        assert_eq!(message(&status, name).unwrap()["state"], "hook-owned");
    }
    // The human clears the draft: the agent is idle and empty, and still
    // nothing is typed, because the hook put both files into the context.
    agent.ding_ok(&["intervene", "kit", "\u{3}", "--no-enter"]);
    agent.drop_message("003.md", "later");
    agent.wait_status("003 rung", |status| {
        message(status, "003.md").is_some_and(|m| m["state"] == "staged")
    });
    let typed = wait_pasted(&agent, "003.md");
    assert!(
        !typed.contains("001.md") && !typed.contains("002.md"),
        "{typed}"
    );
    // A second hook has nothing new to take.
    assert_eq!(hook(&agent, "turn-start"), "");
}

#[test]
fn a_hook_with_no_adapter_to_answer_prints_nothing_and_exits_0() {
    let out = Command::new(DING)
        .args(["hook", "demo", "turn-start"])
        .env("DING_HOOK_SOCKET", PathBuf::from("/nonexistent/hook.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("run ding hook");
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

/// Files arrive while hooks run and while the terminal path is open: every
/// file reaches the agent exactly once, by a hook or by the terminal, never
/// both and never neither.
#[test]
fn racing_hooks_and_rings_deliver_every_file_exactly_once() {
    let agent = demo_agent();
    let mut names = Vec::new();
    let mut by_hook = BTreeSet::new();
    for round in 0..12 {
        let name = format!("{round:03}.md");
        agent.drop_message(&name, "work");
        names.push(name);
        // Half the time the hook runs right after the rename, racing the
        // inbox watch and the lease the idle agent is about to give.
        if round % 2 == 0 {
            by_hook.extend(injected(&hook(&agent, "turn-end"), &names));
        }
    }
    by_hook.extend(injected(&hook(&agent, "turn-end"), &names));
    wait_for("every file owned by a hook or rung", || {
        let status = agent.status();
        names.iter().all(|name| {
            message(&status, name)
                .is_some_and(|m| m["state"] == "hook-owned" || m["state"] == "staged")
        })
    });
    wait_for("the agent to have received every ring", || {
        let typed = pasted(&agent);
        names
            .iter()
            .all(|name| by_hook.contains(name) || typed.contains(name.as_str()))
    });
    let typed = pasted(&agent);
    for name in &names {
        let rung = typed.matches(name.as_str()).count();
        let hooked = usize::from(by_hook.contains(name));
        assert_eq!(
            rung + hooked,
            1,
            "{name}: rung {rung} time(s), injected {hooked} time(s)\ntyped: {typed}"
        );
    }
}

/// A parked call (the shape of a background hook that wakes its harness)
/// is answered when work arrives: it claims exactly what it names, exits 2
/// with the work on stderr, and the terminal gets nothing.
#[test]
fn a_parked_hook_call_delivers_arriving_work_with_no_terminal_input() {
    let agent = demo_agent();
    let wake = park_hook(&agent, &[]);
    for name in ["001.md", "002.md"] {
        agent.drop_message(name, "work");
    }
    let (code, stdout, stderr) = finished(wake);
    assert_eq!(code, 2, "stdout {stdout:?} stderr {stderr:?}");
    assert!(stdout.is_empty(), "{stdout}");
    let named = injected(&stderr, &["001.md".into(), "002.md".into()]);
    let status = agent.wait_status("both owned by the hook", |status| {
        ["001.md", "002.md"]
            .iter()
            .all(|name| message(status, name).is_some_and(|m| m["state"] == "hook-owned"))
    });
    assert_eq!(named.len(), 2, "{stderr}\n{}", status["lines"]);
    assert_eq!(
        pasted(&agent),
        "",
        "no terminal input while the call was parked"
    );
}

/// At most one call per slot: a newer one replaces the older, which is
/// answered with nothing; a call is answered with nothing before its own
/// timeout; and with no call parked the terminal path delivers again.
#[test]
fn a_parked_call_is_replaced_by_a_newer_one_and_answered_before_its_timeout() {
    let agent = demo_agent();
    let older = park_hook(&agent, &[]);
    // The older one is answered once the newer reaches the adapter.
    let newer = spawn_hook(&agent, &["--timeout", "3"]);
    assert_eq!(finished(older), (0, String::new(), String::new()));
    // --timeout 3: answered with nothing about 1 s later (2 s margin).
    assert_eq!(finished(newer), (0, String::new(), String::new()));
    agent.drop_message("003.md", "later");
    agent.wait_status("003 rung by the terminal", |status| {
        message(status, "003.md").is_some_and(|m| m["state"] == "staged")
    });
    wait_pasted(&agent, "003.md");
}

/// A hook call made on the raw hook channel, as a hook that the harness
/// kills (or that crashes) makes it: the call line, then whatever the test
/// does with the connection.
fn raw_hook_call(agent: &Agent, event: &str) -> std::os::unix::net::UnixStream {
    use ding::adapter::hook_wire::{HOOK_WIRE_VERSION, HookCall};
    use ding::core::identity::Identity;
    use std::io::Write;
    let status = agent.pty().status().expect("pty status");
    let call = HookCall {
        v: HOOK_WIRE_VERSION,
        provider: "demo".into(),
        event: event.into(),
        identity: Some(Identity {
            session: status.session,
            incarnation: status.incarnation,
            generation: status.generation,
        }),
        payload: serde_json::Value::Null,
        payload_too_long: false,
        timeout_ms: Some(10_000),
    };
    let socket = agent.paths().runtime_dir().join("hook.sock");
    let mut stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    let mut line = call.to_line();
    line.push('\n');
    stream.write_all(line.as_bytes()).expect("call");
    stream
}

/// The sidecar log's `released` records, as (cause, messages).
fn releases(agent: &Agent) -> Vec<(String, Vec<String>)> {
    std::fs::read_to_string(agent.paths().sidecar_log())
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|record| record["decision"] == "released")
        .map(|record| {
            let names = record["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect();
            (record["cause"].as_str().unwrap_or("?").to_owned(), names)
        })
        .collect()
}

/// A hook that claims and closes its connection before reading the answer
/// (the harness killed it at its timeout, a Ctrl-C, a crash) gave nothing
/// to any context: the files go back to unread work, the release and its
/// reason are logged, and the terminal path rings them once it may.
/// Before, they stayed hook-owned for the rest of the incarnation.
#[test]
fn a_hook_that_goes_away_before_its_answer_gives_the_files_back() {
    let agent = demo_agent();
    agent.ding_ok(&["intervene", "kit", "half a thought", "--no-enter"]);
    agent.drop_message("001.md", "work");
    agent.wait_held("001.md", "composer-nonempty");
    let stream = raw_hook_call(&agent, "turn-start");
    drop(stream);
    // It was pending before the call too: wait for the release itself.
    wait_for("001 given back", || !releases(&agent).is_empty());
    let status = agent.status();
    assert_eq!(message(&status, "001.md").unwrap()["state"], "pending");
    let released = releases(&agent);
    assert!(
        released.iter().any(
            |(cause, names)| matches!(cause.as_str(), "hook-gone" | "no-receipt")
                && names == &["001.md"]
        ),
        "{released:?}"
    );
    // The draft goes; the file is rung like any unread work.
    agent.ding_ok(&["intervene", "kit", "\u{3}", "--no-enter"]);
    agent.wait_status("001 rung", |status| {
        message(status, "001.md").is_some_and(|m| m["state"] == "staged")
    });
    wait_pasted(&agent, "001.md");
}

/// A hook that reads its answer but never confirms passing it on (it hung,
/// or died before printing) gives its files back once the receipt deadline
/// passes; a hook that printed and confirmed keeps its files hook-owned
/// past that deadline.
#[test]
fn an_answer_never_confirmed_gives_the_files_back_after_the_receipt_deadline() {
    use std::io::{BufRead, BufReader};
    let agent = demo_agent();
    agent.ding_ok(&["intervene", "kit", "half a thought", "--no-enter"]);
    agent.drop_message("001.md", "confirmed");
    agent.wait_held("001.md", "composer-nonempty");
    let answer = hook(&agent, "turn-start");
    assert!(answer.contains("001.md"), "{answer}");

    agent.drop_message("002.md", "never confirmed");
    agent.wait_held("002.md", "composer-nonempty");
    let stream = raw_hook_call(&agent, "turn-start");
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("the answer");
    assert!(line.contains("002.md"), "{line}");
    let status = agent.status();
    assert_eq!(message(&status, "002.md").unwrap()["state"], "hook-owned");
    // Held open, no receipt: given back when the deadline passes.
    let status = agent.wait_status("002 given back", |status| {
        message(status, "002.md").is_some_and(|m| m["state"] == "pending")
    });
    assert_eq!(message(&status, "001.md").unwrap()["state"], "hook-owned");
    let released = releases(&agent);
    assert_eq!(
        released,
        [("no-receipt".to_string(), vec!["002.md".to_string()])],
        "{released:?}"
    );
    drop(stream);
}

/// An answer line with no end (a broken or hostile adapter) is read only
/// up to the answer bound: the hook prints nothing, exits 0, and stops
/// reading. Before, `ding hook` read the whole line into memory (a 2 GiB
/// answer grew it to 2.1 GB).
#[test]
fn an_endless_answer_is_no_answer_and_is_not_read_whole() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("hook.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    let server = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut call = String::new();
        reader.read_line(&mut call).expect("the call");
        let mut stream = stream;
        let chunk = vec![b'x'; 1024 * 1024];
        let mut sent = 0usize;
        // Until the hook stops reading and closes (or 256 MiB, a bound for
        // a hook that would read it all).
        while sent < 256 * 1024 * 1024 && stream.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    let out = Command::new(DING)
        .args(["hook", "demo", "turn-start"])
        .env("DING_HOOK_SOCKET", &socket)
        .stdin(Stdio::null())
        .output()
        .expect("ding hook");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "printed {} bytes", out.stdout.len());
    let sent = server.join().expect("server");
    assert!(
        sent < 64 * 1024 * 1024,
        "the hook read {sent} bytes of one answer"
    );
}
