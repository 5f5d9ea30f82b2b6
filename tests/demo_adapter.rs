//! The demo adapter against a real PTY host running the demo agent: every
//! line it writes is adapter protocol v1, and what it reports matches the
//! screen at the revision it names.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{BIN, Host, PATIENCE, write};

/// A running `ding demo-adapter`; killed (by its pid) when dropped.
struct Adapter {
    process: Child,
    lines: Receiver<String>,
    last_sequence: Option<u64>,
}

impl Adapter {
    fn start(host: &Host) -> Adapter {
        let mut process = Command::new(BIN)
            .args(["demo-adapter", "--heartbeat-ms", "100"])
            .env("DING_PTY_SOCKET", &host.socket)
            .env_remove("DING_SESSION")
            .env_remove("DING_INCARNATION")
            .env_remove("DING_GENERATION")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn demo-adapter");
        let stdout = process.stdout.take().expect("stdout");
        let (sender, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Adapter {
            process,
            lines,
            last_sequence: None,
        }
    }

    /// Reads lines, checking each, until one satisfies `wanted`.
    fn until(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no line showed {what}"),
                Err(RecvTimeoutError::Disconnected) => panic!("adapter ended before {what}"),
            };
            let value = self.check_v1(&line);
            if wanted(&value) {
                return value;
            }
        }
    }

    /// Valid protocol v1 as the sidecar's own parser reads it, an activity
    /// with every field the demo promises, and a strictly increasing sequence.
    fn check_v1(&mut self, line: &str) -> Value {
        let event = ding::core::protocol::parse_line(line.as_bytes())
            .unwrap_or_else(|err| panic!("not protocol v1 ({err}): {line}"));
        assert!(
            matches!(event.body, ding::core::protocol::Body::Activity(_)),
            "{line}"
        );
        let value: Value = serde_json::from_str(line).expect("line is JSON");
        assert_eq!(value["v"], 1, "{line}");
        assert_eq!(value["kind"], "activity", "{line}");
        for field in ["session", "incarnation", "generation", "reason"] {
            assert!(value[field].is_string(), "{field} in {line}");
        }
        let sequence = value["sequence"].as_u64().expect("sequence");
        if let Some(last) = self.last_sequence {
            assert!(sequence > last, "sequence {sequence} after {last}");
        }
        self.last_sequence = Some(sequence);
        let state = value["state"].as_str().expect("state");
        assert!(
            ["idle", "active", "child", "unknown"].contains(&state),
            "{line}"
        );
        let composer = value["composer"].as_str().expect("composer");
        assert!(
            ["empty", "nonempty", "unknown"].contains(&composer),
            "{line}"
        );
        assert!(
            value["validForMs"].as_u64().is_some_and(|ms| ms > 0),
            "{line}"
        );
        assert!(value["revision"].is_u64(), "{line}");
        value
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn demo(flags: &[&str]) -> Host {
    let mut command = vec![BIN, "demo-agent"];
    command.extend_from_slice(flags);
    let host = Host::start(&[], &command);
    // The whole first frame: header and footer.
    host.wait_screen(|s| {
        s.rows[0] == "demo-agent  ready" && s.rows.last().is_some_and(|row| !row.is_empty())
    });
    host
}

fn is(value: &Value, state: &str, composer: &str) -> bool {
    value["state"] == state && value["composer"] == composer
}

#[test]
fn adapter_reports_idle_draft_and_busy_at_the_snapshot_revision() {
    let host = demo(&["--turn-ms", "600"]);
    let status = host.client().status().expect("status");
    let mut adapter = Adapter::start(&host);

    let quiet = host.client().snapshot().expect("snapshot");
    let idle = adapter.until("idle and empty at the quiet revision", |v| {
        v["revision"] == quiet.revision
    });
    assert!(is(&idle, "idle", "empty"), "{idle}");
    assert_eq!(idle["session"], status.session.as_str());
    assert_eq!(idle["incarnation"], status.incarnation.as_str());
    assert_eq!(idle["generation"], status.generation.as_str());

    host.client().send(&[write(b"draft")]).expect("type");
    let typed = host.wait_screen(|s| s.rows[22] == "> draft");
    let draft = adapter.until("the draft's revision", |v| v["revision"] == typed.revision);
    assert!(is(&draft, "idle", "nonempty"), "{draft}");

    host.client().send(&[write(b"\r")]).expect("submit");
    let busy = adapter.until("a busy turn", |v| v["state"] == "active");
    assert_eq!(busy["reason"], "turn in progress");
    adapter.until("idle again after the turn", |v| is(v, "idle", "empty"));
}

#[test]
fn confirmation_menu_is_never_reported_idle() {
    let host = demo(&["--turn-ms", "100", "--menu-every", "1"]);
    let mut adapter = Adapter::start(&host);
    host.client().send(&[write(b"go\r")]).expect("submit");
    let menu = host.wait_screen(|s| s.rows.iter().any(|row| row == "Apply the change?"));
    let seen = adapter.until("the menu's revision", |v| v["revision"] == menu.revision);
    assert!(is(&seen, "unknown", "unknown"), "{seen}");
    assert_eq!(seen["reason"], "confirmation menu open");
    // Evidence that holds is not renewed on a heartbeat (100 ms here):
    // over ten of them, no line is idle, and once a late push of the
    // menu's own drawing has been read (the first 200 ms), no line reads a
    // revision already read: that would be a heartbeat, not a move.
    let start = Instant::now();
    let mut read = vec![menu.revision];
    while let Some(left) = Duration::from_millis(1_000).checked_sub(start.elapsed()) {
        let line = match adapter.lines.recv_timeout(left) {
            Ok(line) => adapter.check_v1(&line),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => panic!("the adapter ended"),
        };
        assert_ne!(line["state"], "idle", "{line}");
        let revision = line["revision"].as_u64().expect("a revision");
        assert!(
            start.elapsed() < Duration::from_millis(200) || !read.contains(&revision),
            "revision {revision} read again with nothing moved: {line}"
        );
        read.push(revision);
    }
}

#[test]
fn adapter_follows_a_restart_to_the_new_incarnation() {
    let host = demo(&[]);
    let mut adapter = Adapter::start(&host);
    let old = host.client().status().expect("status").incarnation;
    adapter.until("the first incarnation", |v| {
        v["incarnation"] == old.as_str()
    });
    let (new, _) = host.client().restart().expect("restart");
    assert_ne!(new, old);
    let line = adapter.until("the new incarnation idle", |v| {
        v["incarnation"] == new.as_str() && v["state"] == "idle"
    });
    assert_eq!(line["composer"], "empty");
    // From now on only the new incarnation.
    for _ in 0..3 {
        let line = adapter.until("a heartbeat", |_| true);
        assert_eq!(line["incarnation"], new.as_str());
    }
}
