//! The sidecar end to end, delivering: real `ding up` agents (PTY host,
//! harness, sidecar, scripted adapter) in private temp trees, messages
//! renamed into `new/`, and the bytes that reached the harness checked
//! exactly. Waiting is always polling with a deadline, never a fixed sleep.

mod support;

use std::fs;
use std::time::Instant;

use ding::pty::transport::WireStep;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::sidecar_agent::*;

/// The transcript events of the demo agent so far.
fn transcript(agent: &Agent) -> Vec<Value> {
    fs::read_to_string(agent.path("transcript.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn has_event(events: &[Value], event: &str) -> bool {
    events.iter().any(|e| e["event"] == event)
}

fn states(status: &Value) -> Vec<String> {
    status["engine"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["state"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// Under the aggressive policy the sidecar runs no adapter: its status says
/// so and it has no child process at all.
fn assert_no_adapter(agent: &Agent) {
    let status = agent.status();
    assert_eq!(status["engine"]["adapter"]["state"], "disabled", "{status}");
    assert!(status["adapterPid"].is_null(), "{status}");
    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    assert_eq!(children_of(sidecar), Vec::<i32>::new(), "sidecar children");
}

#[test]
fn aggressive_rings_a_renamed_message_while_the_demo_agent_is_busy() {
    let agent = Agent::new(
        "busy",
        &aggressive_decl(
            "busy",
            r#"command "ding" "demo-agent" "--transcript" "transcript.jsonl" "--turn-ms" "60000""#,
        ),
    );
    agent.up(&[]);
    agent.wait_screen("demo-agent  ready");
    agent.ding_ok(&["intervene", "busy", "start a long turn"]);
    wait_for("the demo agent to start a turn", || {
        has_event(&transcript(&agent), "turn-start")
    });

    let dropped = Instant::now();
    agent.drop_message("0001-task.md", "please look");
    wait_for("the notice to reach the busy agent", || {
        transcript(&agent).iter().any(|e| {
            e["event"] == "queued"
                && e["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("0001-task.md"))
        })
    });
    let latency = dropped.elapsed();
    let events = transcript(&agent);
    assert!(
        !has_event(&events, "turn-end"),
        "the agent was not busy when the notice arrived: {events:?}"
    );
    let queued = events
        .iter()
        .find(|e| e["event"] == "queued")
        .expect("queued");
    assert_eq!(
        queued["pasted"], true,
        "the notice comes as a paste: {queued}"
    );
    assert!(
        queued["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[ding] 1 unread inbox message in ")),
        "{queued}"
    );
    assert!(latency.as_secs() < 10, "rang after {latency:?}");
    assert_no_adapter(&agent);
}

#[test]
fn aggressive_rings_with_the_exact_transport_and_runs_no_adapter() {
    let agent = Agent::new("plain", &aggressive_decl("plain", RECORDING_HARNESS));
    agent.up_recording();
    agent.drop_message("20260101T000000000000Z-a.md", "one");
    let chunks = agent.wait_out("one ring", |chunks| notices(chunks).len() == 1);
    let [Chunk::Notice(text)] = chunks.as_slice() else {
        panic!("expected exactly one ring and nothing else: {chunks:?}");
    };
    let new_dir = agent.new_dir();
    assert_eq!(
        *text,
        format!(
            "[ding] 1 unread inbox message in {}: 20260101T000000000000Z-a.md. Read each file, then archive it: ding archive plain FILE",
            new_dir.display()
        )
    );
    let status = agent.wait_status("the ring to be staged", |s| {
        message(s, "20260101T000000000000Z-a.md").is_some_and(|m| m["state"] == "staged")
    });
    assert_eq!(status["policy"], "aggressive");
    assert_no_adapter(&agent);
}

/// A harness that records, for every read of its terminal, the monotonic
/// time in nanoseconds and the bytes in hex, one line each.
const TIMING_HARNESS: &str = r#"command "python3" "-c" "import os, sys, time, tty\ntty.setraw(0)\nsys.stdout.write('\\x1b[?2004hREADY')\nsys.stdout.flush()\nout = open('reads', 'a')\nwhile True:\n    data = os.read(0, 4096)\n    out.write('%d %s\\n' % (time.monotonic_ns(), data.hex()))\n    out.flush()""#;

#[test]
fn aggressive_waits_the_submit_delay_between_the_paste_and_return() {
    let agent = Agent::new(
        "delay",
        &format!(
            "agent \"delay\" {{\n  {TIMING_HARNESS}\n  ding {{ submit-delay \"300ms\" }}\n}}\n"
        ),
    );
    agent.up(&[]);
    agent.wait_screen("READY");
    agent.drop_message("0001.md", "one");
    let reads = || -> Vec<(u64, Vec<u8>)> {
        fs::read_to_string(agent.path("reads"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (time, hex) = line.split_once(' ')?;
                let bytes = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
                    .collect::<Option<Vec<u8>>>()?;
                Some((time.parse().ok()?, bytes))
            })
            .collect()
    };
    wait_for("the paste and the Return", || {
        reads().iter().any(|(_, bytes)| bytes.ends_with(b"\r"))
    });
    let reads = reads();
    let paste_end = reads
        .iter()
        .find(|(_, bytes)| bytes.windows(6).any(|w| w == b"\x1b[201~"))
        .map(|(at, _)| *at)
        .expect("the paste ends");
    let enter = reads
        .iter()
        .find(|(_, bytes)| bytes.ends_with(b"\r"))
        .map(|(at, _)| *at)
        .expect("the Return");
    let all: Vec<u8> = reads.iter().flat_map(|(_, bytes)| bytes.clone()).collect();
    assert_eq!(all.last(), Some(&b'\r'), "Return comes last: {all:?}");
    assert!(
        !reads.iter().any(|(_, bytes)| bytes.windows(6).any(|w| w == b"\x1b[201~") && bytes.ends_with(b"\r")),
        "the Return is not in the same read as the paste"
    );
    let gap_ms = (enter - paste_end) / 1_000_000;
    assert!(
        gap_ms >= 290,
        "Return {gap_ms} ms after the paste; the declared submit delay is 300 ms"
    );
}

#[test]
fn status_shows_the_adapters_latest_reason_escaped() {
    let agent = Agent::new("why", &careful_decl("why", RECORDING_HARNESS, ""));
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.wait_held("m1.md", "no-evidence");
    let mut line = agent.activity("idle", "nonempty", Some(agent.revision()));
    line["reason"] = Value::from("draft seen \u{1b}]52;c;aGk=\u{7}\u{202e}evil");
    agent.feed(adapter, &line);
    agent.wait_held("m1.md", "composer-nonempty");
    let shown = agent.ding_ok(&["status", "why"]);
    assert!(
        shown.contains(r"adapter says draft seen \u{1b}]52;c;aGk=\u{7}\u{202e}evil"),
        "{shown}"
    );
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{202e}'));
}

#[test]
fn careful_delivers_only_after_idle_with_an_empty_composer() {
    let agent = Agent::new(
        "careful",
        &careful_decl_with_adapter("careful", DRAWING_HARNESS, RECORDING_ADAPTER, ""),
    );
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.wait_held("m1.md", "no-evidence");
    let revision = agent.revision();

    agent.feed(adapter, &agent.activity("active", "empty", Some(revision)));
    agent.wait_held("m1.md", "not-idle");
    assert_eq!(agent.out(), b"", "input while active");

    agent.feed(adapter, &agent.activity("idle", "nonempty", Some(revision)));
    let status = agent.wait_held("m1.md", "composer-nonempty");
    assert_eq!(status["engine"]["lease"]["state"], "granted", "{status}");
    assert_eq!(agent.out(), b"", "input over a draft");

    agent.feed(adapter, &agent.activity("idle", "empty", Some(revision)));
    agent.confirm_typed(adapter);
    let chunks = agent.wait_out("the ring", |chunks| notices(chunks).len() == 1);
    assert_eq!(
        chunks.len(),
        1,
        "only the ring reached the harness: {chunks:?}"
    );
    assert!(notices(&chunks)[0].contains("m1.md"), "{chunks:?}");
    agent.wait_status("m1 staged", |s| {
        message(s, "m1.md").is_some_and(|m| m["state"] == "staged")
    });
}

#[test]
fn typist_between_lease_and_send_makes_a_conflict_with_zero_bytes_then_next_lease_delivers() {
    let agent = Agent::new(
        "typist",
        &careful_decl_with_adapter("typist", DRAWING_HARNESS, RECORDING_ADAPTER, ""),
    );
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.wait_held("m1.md", "no-evidence");

    // The adapter looks at the screen at `observed`; then a person types.
    let observed = agent.revision();
    let (typed, written) = agent
        .pty()
        .send(&[WireStep::Write(b"x".to_vec())])
        .expect("type");
    assert_eq!(written, 1);
    assert!(typed > observed);
    agent.wait_out("the keystroke", |chunks| {
        chunks == [Chunk::Other(b"x".to_vec())]
    });
    // The harness draws the key: the host's revision moves once more.
    agent.wait_screen("READYx");
    let drawn = agent.revision();
    assert!(drawn > typed);

    // Its evidence arrives after the keystroke: the send-if must lose.
    agent.feed(adapter, &agent.activity("idle", "empty", Some(observed)));
    let status = agent.wait_held("m1.md", "revision-conflict");
    let hold = &message(&status, "m1.md").expect("m1")["hold"];
    assert_eq!(hold["expected"], observed, "{hold}");
    assert_eq!(hold["actual"], drawn, "{hold}");
    assert_eq!(hold["source"], "pty", "{hold}");
    let line = status["lines"][0].as_str().expect("line");
    assert!(line.starts_with("m1.md  held: "), "{line}");
    assert_eq!(agent.out(), b"x", "a conflict writes zero bytes");

    // The next fresh lease, fenced on the current revision, delivers it.
    agent.feed(
        adapter,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(adapter);
    let chunks = agent.wait_out("the ring", |chunks| notices(chunks).len() == 1);
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    assert_eq!(chunks[0], Chunk::Other(b"x".to_vec()));
    assert!(notices(&chunks)[0].contains("m1.md"), "{chunks:?}");
}

#[test]
fn killed_adapter_holds_work_as_adapter_down_and_respawns_with_backoff() {
    let agent = Agent::new(
        "fault",
        &careful_decl_with_adapter("fault", DRAWING_HARNESS, RECORDING_ADAPTER, ""),
    );
    agent.up_recording();
    let first = agent.wait_adapter_up();
    agent.drop_message("m1.md", "first");
    agent.feed(
        first,
        &agent.activity("idle", "nonempty", Some(agent.revision())),
    );
    let status = agent.wait_held("m1.md", "composer-nonempty");
    assert_eq!(status["engine"]["lease"]["state"], "granted");

    kill(Pid::from_raw(first), Signal::SIGKILL).expect("kill the adapter");
    let down = agent.wait_status("adapter down", |s| {
        s["engine"]["adapter"]["state"] == "down"
    });
    let adapter = &down["engine"]["adapter"];
    assert!(down["adapterPid"].is_null(), "{down}");
    assert_eq!(
        message(&down, "m1.md").expect("m1")["hold"]["code"],
        "adapter-down",
        "{down}"
    );
    assert_eq!(
        down["engine"]["lease"]["state"], "ended",
        "lease ends at once"
    );
    assert_eq!(down["engine"]["lease"]["reason"]["code"], "adapter-down");
    let since = adapter["since"].as_u64().expect("since");
    let retry_at = adapter["retryAt"].as_u64().expect("retryAt");
    assert_eq!(retry_at - since, 1000, "first backoff is 1 s: {adapter}");
    assert!(
        down["lines"][0]
            .as_str()
            .is_some_and(|l| l.starts_with("m1.md  held: ")),
        "{down}"
    );

    let second = agent.wait_adapter_up();
    assert_ne!(second, first);
    let up = agent.status();
    let respawned = up["engine"]["adapter"]["since"].as_u64().expect("since");
    assert!(
        respawned >= retry_at,
        "respawned at {respawned}, due {retry_at}"
    );
    assert_eq!(
        up["engine"]["adapter"]["nextBackoffMs"], 2000,
        "backoff doubles"
    );
    // The old lease did not survive: the work waits for new evidence.
    assert_eq!(
        message(&up, "m1.md").expect("m1")["hold"]["code"],
        "no-evidence",
        "{up}"
    );
    assert_eq!(agent.out(), b"", "no input while the adapter was down");

    agent.feed(
        second,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(second);
    let chunks = agent.wait_out("the ring", |chunks| notices(chunks).len() == 1);
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    assert!(notices(&chunks)[0].contains("m1.md"));
}

#[test]
fn sigkilled_sidecar_restarts_without_loss_or_repeated_rings() {
    let agent = Agent::new(
        "crash",
        &careful_decl_with_adapter(
            "crash",
            DRAWING_HARNESS,
            RECORDING_ADAPTER,
            "notice-max-files 2",
        ),
    );
    agent.up_recording();
    let first = agent.wait_adapter_up();
    let names = ["m1.md", "m2.md", "m3.md", "m4.md", "m5.md"];
    for name in names {
        agent.drop_message(name, name);
    }
    agent.wait_status("five unread", |s| message_names(s) == names);

    agent.feed(
        first,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(first);
    let chunks = agent.wait_out("the first ring", |chunks| notices(chunks).len() == 1);
    let ring = notices(&chunks)[0].to_string();
    assert!(ring.contains("m1.md, m2.md (and 3 more)"), "{ring}");
    agent.feed(first, &agent.turn_boundary(&["m3.md"]));
    let before = agent.wait_status("m3 hook-owned", |s| {
        states(s) == ["staged", "staged", "hook-owned", "pending", "pending"]
    });

    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9 the sidecar");
    wait_for("the sidecar to die", || !process_alive(sidecar));
    // Its orphaned adapter would sit on its FIFO forever; end it too.
    let _ = kill(Pid::from_raw(first), Signal::SIGKILL);

    // Stopped: the inbox and the journal on disk still tell the truth,
    // and status says the sidecar died while the harness runs on.
    let out = agent.ding(&["status", "crash", "--json"]);
    assert_eq!(out.status.code(), Some(3), "not running: {out:?}");
    let offline: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(offline["running"], false);
    assert_eq!(offline["sidecar"]["state"], "dead", "{offline}");
    assert_eq!(offline["sidecar"]["pid"], sidecar);
    assert_eq!(offline["ptyHost"]["state"], "running");
    assert_eq!(offline["harness"]["state"], "running");
    assert_eq!(message_names(&offline), names);
    assert_eq!(
        states(&offline),
        ["staged", "staged", "hook-owned", "pending", "pending"]
    );

    let printed = agent.up(&[]);
    assert!(printed.contains("pty host adopted"), "{printed}");
    assert!(
        printed.contains(&format!("sidecar started (pid {sidecar} had died)")),
        "{printed}"
    );
    let second = agent.wait_adapter_up();
    assert_ne!(second, first);
    let after = agent.status();
    assert_ne!(after["pid"], before["pid"]);
    assert_eq!(message_names(&after), names, "no loss, FIFO kept");
    assert_eq!(
        states(&after),
        ["staged", "staged", "hook-owned", "pending", "pending"]
    );
    assert_eq!(parse_out(&agent.out()), chunks, "nothing rang on restart");

    agent.feed(
        second,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(second);
    let chunks = agent.wait_out("the second ring", |chunks| notices(chunks).len() == 2);
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    let ring = notices(&chunks)[1];
    assert!(
        ring.starts_with("[ding] 2 unread inbox messages in "),
        "{ring}"
    );
    assert!(ring.contains(": m4.md, m5.md. "), "{ring}");
    for repeated in ["m1.md", "m2.md", "m3.md"] {
        assert!(!ring.contains(repeated), "{repeated} rang again: {ring}");
    }
    agent.wait_status("all staged or hook-owned", |s| {
        states(s) == ["staged", "staged", "hook-owned", "staged", "staged"]
    });
}

/// The adapter is told the declaration's `quiet-input` (KIT-13: a parked
/// call waits for that long a quiet before it starts a turn), in
/// milliseconds, as `DING_QUIET_INPUT_MS` in its environment.
#[test]
fn the_adapter_is_told_the_declarations_quiet_input() {
    let adapter =
        r#"command "sh" "-c" "env > \"$FEEDS/adapter.env\"; exec sh \"$ST_HOOKS/adapter.sh\"""#;
    let agent = Agent::new(
        "quiet",
        &careful_decl_with_adapter(
            "quiet",
            RECORDING_HARNESS,
            adapter,
            r#"quiet-input "450ms""#,
        ),
    );
    agent.up_recording();
    agent.wait_adapter_up();
    let env = agent.path("feeds/adapter.env");
    wait_for("the adapter's environment", || {
        fs::read_to_string(&env).is_ok_and(|text| text.contains("DING_AGENT="))
    });
    let text = fs::read_to_string(&env).expect("the adapter's environment");
    assert!(
        text.lines().any(|line| line == "DING_QUIET_INPUT_MS=450"),
        "{text}"
    );
}
