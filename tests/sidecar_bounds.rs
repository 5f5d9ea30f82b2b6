//! What a misbehaving adapter or status peer can make the sidecar hold or
//! write is bounded, asserted on memory (/proc VmHWM) and on log size, never
//! on time: floods of garbage and of valid-but-repeated adapter lines, an
//! adapter line that never ends, and status peers that never read.

mod support;

use std::fs;
use std::time::Duration;

use serde_json::Value;
use support::flood::{connect_peers, memory_kib, pipeline_without_reading};
use support::sidecar_agent::*;

/// An adapter that writes `$GARBAGE_LINES` lines of garbage, then a last
/// line the test can recognise, then waits.
const GARBAGE_ADAPTER: &str = r#"read go < "$FEEDS/go"
yes 'this is not json at all, the adapter is broken: {[' | head -n "$1"
echo '{"v":1,"kind":"flood-end"}'
exec sleep 600
"#;

/// The many-askers test measures how a sidecar answers forty askers at
/// once; the floods of the other tests, run beside it, would measure the
/// machine instead. It runs alone; the others share.
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn beside_others() -> std::sync::RwLockReadGuard<'static, ()> {
    ALONE
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn garbage_agent(name: &str, lines: usize) -> Agent {
    let adapter = format!(r#"command "sh" "$ST_HOOKS/garbage.sh" "{lines}""#);
    let agent = Agent::new(
        name,
        &careful_decl_with_adapter(name, SLEEPING_HARNESS, &adapter, ""),
    );
    fs::write(agent.path("hooks/garbage.sh"), GARBAGE_ADAPTER).expect("adapter script");
    nix::unistd::mkfifo(&agent.path("feeds/go"), nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    agent
}

/// Lets the garbage adapter start its flood.
fn start_flood(agent: &Agent) {
    fs::write(agent.path("feeds/go"), "go\n").expect("start the flood");
}

fn log_size(agent: &Agent) -> u64 {
    fs::metadata(agent.paths().sidecar_log()).map_or(0, |m| m.len())
}

/// The code and detail of the hold on message `name`.
fn hold(status: &Value, name: &str) -> Value {
    message(status, name).map_or(Value::Null, |m| m["hold"].clone())
}

const GARBAGE_LINES: usize = 200_000;

#[test]
fn a_flood_of_garbage_lines_keeps_the_sidecar_memory_and_log_flat() {
    let _shared = beside_others();
    let agent = garbage_agent("garbage", GARBAGE_LINES);
    // The message is held from the start, so every line's verdict shows.
    fs::create_dir_all(agent.path("inbox/garbage/tmp")).expect("inbox");
    fs::create_dir_all(agent.path("inbox/garbage/new")).expect("inbox");
    agent.drop_message("m1.md", "waiting");
    agent.up(&[]);
    let sidecar = agent.sidecar_pid().expect("sidecar pid") as u32;
    let before_memory = memory_kib(sidecar, "VmRSS");
    let before_log = log_size(&agent);
    start_flood(&agent);
    agent.wait_status_every(
        Duration::from_millis(50),
        Duration::from_secs(120),
        "the flood's last line",
        |status| hold(status, "m1.md")["error"]["found"] == "flood-end",
    );
    let peak = memory_kib(sidecar, "VmHWM");
    let grown = log_size(&agent) - before_log;
    assert!(
        peak < before_memory + 4096,
        "memory {before_memory} -> {peak} KiB"
    );
    assert!(grown < 64 * 1024, "the log grew by {grown} bytes");
}

const ACTIVE_LINES: usize = 20_000;

#[test]
fn a_flood_of_valid_active_lines_keeps_the_log_flat() {
    let _shared = beside_others();
    let agent = Agent::new("active", &careful_decl("active", RECORDING_HARNESS, ""));
    agent.up_recording();
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "waiting");
    agent.wait_held("m1.md", "no-evidence");
    let before_log = log_size(&agent);

    let first = agent.activity("active", "empty", None);
    let start = first["sequence"].as_u64().expect("sequence");
    let mut lines: Vec<Value> = (0..ACTIVE_LINES as u64)
        .map(|i| {
            let mut line = first.clone();
            line["sequence"] = (start + i).into();
            line
        })
        .collect();
    let mut last = agent.activity("idle", "nonempty", None);
    last["sequence"] = (start + ACTIVE_LINES as u64).into();
    lines.push(last);
    agent.feed_all(adapter, &lines);
    agent.wait_status_every(
        Duration::from_millis(50),
        Duration::from_secs(60),
        "the flood's last line",
        |status| hold(status, "m1.md")["code"] == "composer-nonempty",
    );
    let grown = log_size(&agent) - before_log;
    assert!(grown < 64 * 1024, "the log grew by {grown} bytes");
}

#[test]
fn an_adapter_line_that_never_ends_is_reported_as_too_long_at_once() {
    let _shared = beside_others();
    let name = "endless";
    let agent = Agent::new(
        name,
        &careful_decl_with_adapter(
            name,
            SLEEPING_HARNESS,
            r#"command "sh" "-c" "head -c 1000000 /dev/zero | tr '\\0' x; exec sleep 600""#,
            "",
        ),
    );
    agent.up(&[]);
    agent.drop_message("m1.md", "waiting");
    let status = agent.wait_status("the endless line to be refused", |status| {
        hold(status, "m1.md")["error"]["error"] == "line-too-long"
    });
    assert_eq!(hold(&status, "m1.md")["code"], "protocol", "{status}");
}

/// Status peers that ask and never read: far more than the sidecar serves
/// at once.
const STATUS_FLOODERS: usize = 64;
/// Messages that make each status document larger than a socket buffer
/// holds, so that a peer that does not read keeps most of it queued.
const STATUS_MESSAGES: usize = 4000;

#[test]
fn status_peers_that_never_read_are_not_read_from_and_status_still_answers() {
    let _shared = beside_others();
    let agent = Agent::new(
        "peers",
        &careful_decl("peers", RECORDING_HARNESS, "adapter-silence \"1h\""),
    );
    agent.up_recording();
    agent.wait_adapter_up();
    for i in 0..STATUS_MESSAGES {
        agent.drop_message(&format!("msg-{i:05}.md"), "waiting");
    }
    let status = agent.wait_status_every(
        Duration::from_millis(100),
        Duration::from_secs(60),
        "every message listed",
        |status| status["engine"]["unread"] == STATUS_MESSAGES,
    );
    let document = status.to_string().len();
    let sidecar = agent.sidecar_pid().expect("sidecar pid") as u32;
    let before = memory_kib(sidecar, "VmRSS");

    let mut peers = connect_peers(&agent.paths().sidecar_socket(), STATUS_FLOODERS);
    let flood = 512 * 1024;
    let written = pipeline_without_reading(
        &mut peers,
        b"{\"op\":\"status\"}\n",
        flood,
        Duration::from_secs(1),
    );
    // A new asker is answered meanwhile.
    assert_eq!(agent.status()["engine"]["unread"], STATUS_MESSAGES);
    let peak = memory_kib(sidecar, "VmHWM");
    assert!(
        peak.saturating_sub(before) < 16 * 1024,
        "memory {before} -> {peak} KiB with {STATUS_FLOODERS} peers of a {document}-byte status"
    );
    assert!(
        written.iter().all(|end| end.closed || end.written < flood),
        "the sidecar kept reading after the request: {written:?}"
    );
}

/// A same-uid flood of connections that say nothing (far more than the
/// status socket holds at once) does not keep `ding status` from being
/// answered, before or while it goes on: a new connection's request is
/// read as soon as it is accepted, and the silent ones are the ones closed
/// to make room. Before, a flood evicted the asker before its request was
/// read, and `ding status` reported the sidecar as not running.
#[test]
fn a_flood_of_silent_connections_never_keeps_status_from_answering() {
    let _shared = beside_others();
    let agent = Agent::new("silent", &aggressive_decl("silent", RECORDING_HARNESS));
    agent.up_recording();
    let socket = agent.paths().sidecar_socket();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flooding = {
        let stop = stop.clone();
        let socket = socket.clone();
        std::thread::spawn(move || {
            let mut held = std::collections::VecDeque::new();
            let mut opened = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && opened < 200_000 {
                if let Ok(stream) = std::os::unix::net::UnixStream::connect(&socket) {
                    held.push_back(stream);
                    opened += 1;
                }
                // Keep the descriptors bounded: the server holds 64 anyway.
                if held.len() > 512 {
                    held.pop_front();
                }
            }
            opened
        })
    };
    for _ in 0..20 {
        let out = agent.ding_within(DEADLINE, &["status", "silent"]);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{shown}");
        assert!(shown.contains("sidecar      running"), "{shown}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let opened = flooding.join().expect("flood");
    assert!(
        opened > 64 * 20,
        "the flood was too small to test: {opened}"
    );
}

/// Many people asking at once, each reading its whole answer: every one is
/// answered in full, none is told the sidecar is not answering. Past the
/// connections it serves at once, an asker is told `busy` and asks again;
/// before, the ninth closed the oldest in the middle of its answer.
#[test]
fn many_concurrent_status_askers_are_all_answered_in_full() {
    let _alone = ALONE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let agent = Agent::new(
        "askers",
        &careful_decl("askers", RECORDING_HARNESS, "adapter-silence \"1h\""),
    );
    agent.up_recording();
    agent.wait_adapter_up();
    for i in 0..2000 {
        agent.drop_message(&format!("msg-{i:05}.md"), "waiting");
    }
    agent.wait_status_every(
        Duration::from_millis(100),
        Duration::from_secs(60),
        "every message listed",
        |status| status["engine"]["unread"] == 2000,
    );
    let askers: Vec<std::process::Child> = (0..40)
        .map(|_| {
            agent
                .command(&["status", "askers", "--json", "--all"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("ding status")
        })
        .collect();
    for asker in askers {
        let out = asker.wait_with_output().expect("ding status");
        // A status that gave up exits non-zero with the sidecar shown as
        // not answering in its document, and nothing on stderr.
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice::<Value>(&out.stdout).expect("a whole JSON document");
    }
}
