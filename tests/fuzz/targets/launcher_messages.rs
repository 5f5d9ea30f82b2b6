//! `launcher-messages`: what the Codex launcher's native idle path reads
//! from Codex's app-server (JSON-RPC lines over its websocket), and the
//! answers its `queue` calls get on the hook channel.
//!
//! The input is lines. A line starting `A:` is the answer (its stdout) to
//! the latest `queue` call, `X:` that call's parked answer saying it
//! expired, `A!` that call failing, `T:` a clock step of that many
//! milliseconds; every other line is one message from the app-server, fed
//! to `QueuePath::handle_input` as `Input::Message`. Invariants:
//!
//! * nothing panics, whatever the server says, in whatever order;
//! * every line the launcher sends is one JSON-RPC request or reply: a
//!   JSON object on one line with `jsonrpc` or an `id`, and request ids
//!   never repeat;
//! * `queue` calls carry a report whose payload reads back as itself, and
//!   are numbered upwards;
//! * once the path says it is unavailable it says nothing more and sends
//!   nothing more (a dead native path is reported once, and never claims).

use std::collections::BTreeSet;
use std::time::Duration;

use ding::adapter::native_idle::wire::{LaunchMode, QueueReport};
use ding::adapter::{HookAnswer, ParkAnswer};
use ding::core::time::Time;
use ding::providers::codex::native::{Input, Output, QueuePath, Setup};
use serde_json::Value;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "launcher-messages",
    check,
    tokens: &[
        "{\"id\":1,\"result\":{}}\n",
        "{\"id\":2,\"result\":{\"data\":[]}}\n",
        "{\"id\":3,\"result\":{\"data\":[\"t1\"]}}\n",
        "{\"id\":4,\"error\":{\"code\":-32600,\"message\":\"no\"}}\n",
        "{\"method\":\"thread/started\",\"params\":{\"thread\":{\"id\":\"t1\"}}}\n",
        "{\"method\":\"thread/status/changed\",\"params\":{\"threadId\":\"t1\",\"status\":{\"type\":\"idle\"}}}\n",
        "{\"method\":\"thread/status/changed\",\"params\":{\"threadId\":\"t1\",\"status\":{\"type\":\"active\"}}}\n",
        "{\"method\":\"thread/queue/changed\",\"params\":{\"threadId\":\"t1\"}}\n",
        "{\"id\":\"s1\",\"method\":\"item/commandExecution/requestApproval\",\"params\":{}}\n",
        "A:[ding] 1 unread inbox message\n",
        "A:\n",
        "X:\n",
        "A!\n",
        "T:300\n",
        "T:4000\n",
    ],
    bounds: &[],
};

fn check(input: &[u8]) -> String {
    let text = String::from_utf8_lossy(input);
    let start = Time::from_millis(1_000);
    let mut now = start;
    let setup = Setup {
        cwd: "/project".into(),
        ..Setup::default()
    };
    let mut native = QueuePath::new(setup, start);
    assert_eq!(native.poll_output(), Some(Output::Connect));
    native.handle_input(Input::Connected, start);
    let mut seen = Seen::default();
    seen.take(&mut native);
    for line in text.split('\n') {
        if let Some(stdout) = line.strip_prefix("A:") {
            let Some(call) = seen.last_call else { continue };
            let answer = HookAnswer {
                stdout: stdout.to_string(),
                ..HookAnswer::default()
            };
            let answer = Some(answer);
            native.handle_input(Input::Answer { call, answer }, now)
        } else if line.starts_with("X:") {
            let Some(call) = seen.last_call else { continue };
            let expired = HookAnswer {
                parked: Some(ParkAnswer::Expired),
                ..HookAnswer::default()
            };
            let answer = Some(expired);
            native.handle_input(Input::Answer { call, answer }, now)
        } else if line.starts_with("A!") {
            let Some(call) = seen.last_call else { continue };
            native.handle_input(Input::Answer { call, answer: None }, now)
        } else if let Some(step) = line.strip_prefix("T:") {
            let step = step.trim().parse::<u64>().unwrap_or(0).min(86_400_000);
            now = now + Duration::from_millis(step);
            native.handle_timeout(now)
        } else {
            native.handle_input(Input::Message(line.to_string()), now)
        };
        seen.take(&mut native);
        if let Some(due) = native.next_deadline() {
            // A deadline is never in the past of the time it was set at
            // by more than the step that passed it.
            assert!(due >= start, "a deadline before the start");
        }
    }
    native.handle_input(Input::TuiExited, now);
    seen.take(&mut native);
    format!(
        "sent:{}:calls:{}:unavailable:{}",
        seen.sent.min(3),
        seen.calls.min(2),
        seen.unavailable
    )
}

#[derive(Default)]
struct Seen {
    ids: BTreeSet<String>,
    sent: usize,
    calls: usize,
    last_call: Option<u64>,
    unavailable: bool,
}

impl Seen {
    fn take(&mut self, native: &mut QueuePath) {
        while let Some(output) = native.poll_output() {
            match output {
                Output::Send(line) => {
                    assert!(
                        !self.unavailable,
                        "sent after the path was unavailable: {line}"
                    );
                    assert!(!line.contains('\n'), "{line:?}");
                    let value: Value =
                        serde_json::from_str(&line).expect("the launcher sends JSON");
                    let object = value.as_object().expect("an object");
                    if let Some(method) = object.get("method") {
                        assert!(method.is_string(), "{line}");
                        if let Some(id) = object.get("id") {
                            assert!(self.ids.insert(id.to_string()), "id {id} sent twice");
                        }
                    } else {
                        assert!(
                            object.contains_key("id"),
                            "neither request nor reply: {line}"
                        );
                    }
                    self.sent += 1;
                }
                Output::Call { call, report } => {
                    assert!(
                        !self.unavailable,
                        "a queue call after the path was unavailable"
                    );
                    let payload = report.to_payload();
                    assert!(payload.is_object(), "{payload}");
                    assert_eq!(QueueReport::from_payload(&payload), report);
                    assert!(self.last_call.is_none_or(|last| call > last), "call {call}");
                    self.last_call = Some(call);
                    self.calls += 1;
                }
                Output::Tell(report) => {
                    assert_eq!(
                        report.mode,
                        LaunchMode::NativeUnavailable,
                        "the server is lost only when its connection closes"
                    );
                    let why = report.error.unwrap_or_default();
                    assert!(!self.unavailable, "unavailable twice: {why}");
                    assert!(!why.is_empty());
                    self.unavailable = true;
                }
                Output::Log(_) => {}
                other => panic!("only a lost server is connected or started: {other:?}"),
            }
        }
    }
}
