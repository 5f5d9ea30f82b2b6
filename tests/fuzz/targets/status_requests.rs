//! `status-requests`: what a peer writes to the sidecar's status socket.
//!
//! The input is the peer's byte stream, taken by the socket's own bounded
//! line buffer (in two reads, split where the input's first byte says, so
//! the outcome must not depend on how the bytes arrive) and judged by
//! `judge_request`. Invariants: only the first line counts; a line past
//! 4 KiB is `oversized-request` however it arrives (the crasher in the
//! corpus is the fuzzer correcting this target: how much of an over-long
//! line had arrived does depend on the reads); anything else is the
//! one request (`{"op":"status"}`, nothing more) or `malformed-request`;
//! every error reply is one JSON line.

use ding::lines::{Line, LineBuffer};
use ding::sidecar::status_server::{MAX_REQUEST, StatusRequest, judge_request};
use serde_json::Value;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "status-requests",
    check,
    tokens: &[
        "{\"op\":\"status\"}\n",
        "{\"op\":\"status\",\"x\":1}",
        "\"op\":",
        "\"status\"",
        "\"snapshot\"",
        "{}",
        "\n",
        " ",
    ],
    bounds: &[MAX_REQUEST],
};

fn first_line(input: &[u8], split: usize) -> Option<Line> {
    let mut buffer = LineBuffer::new(MAX_REQUEST);
    let mut lines = Vec::new();
    let (head, tail) = input.split_at(split.min(input.len()));
    buffer.push(head, &mut lines);
    if lines.is_empty() {
        buffer.push(tail, &mut lines);
    }
    lines.into_iter().next()
}

fn check(input: &[u8]) -> String {
    let split = input.first().map_or(0, |&b| usize::from(b) * 17);
    let line = first_line(input, split);
    // A line reported too long says how much had arrived by then, which
    // depends on the reads; everything else must not.
    let same = match (&line, &first_line(input, input.len())) {
        (Some(Line::TooLong { .. }), Some(Line::TooLong { .. })) => true,
        (a, b) => a == b,
    };
    assert!(same, "the first line depends on the reads");
    let Some(line) = line else {
        return "no-line".into();
    };
    let too_long = match &line {
        Line::TooLong { len } => {
            assert!(*len > MAX_REQUEST);
            true
        }
        Line::Complete(bytes) => {
            assert!(bytes.len() <= MAX_REQUEST);
            false
        }
    };
    let complete = match &line {
        Line::Complete(bytes) => Some(bytes.clone()),
        Line::TooLong { .. } => None,
    };
    match judge_request(line) {
        Ok(StatusRequest::Status { messages }) => {
            let value: Value = serde_json::from_slice(&complete.expect("a line")).expect("JSON");
            let object = value.as_object().expect("an object");
            assert_eq!(object.get("op"), Some(&Value::from("status")));
            assert!(
                object.keys().all(|key| key == "op" || key == "messages"),
                "{object:?}"
            );
            match messages {
                // The window read is the one the line names, and it reads
                // back from what it writes.
                Some(window) => {
                    let written = serde_json::to_value(&window).expect("a window");
                    assert_eq!(serde_json::from_value(written).ok(), Some(window));
                    "ok:status-window".into()
                }
                None => "ok:status".into(),
            }
        }
        Err(reply) => {
            assert!(!reply.contains(&b'\n'));
            let value: Value = serde_json::from_slice(&reply).expect("the reply is JSON");
            let error = value["error"].as_str().expect("an error").to_string();
            let expected = if too_long {
                "oversized-request"
            } else {
                "malformed-request"
            };
            assert_eq!(error, expected);
            format!("err:{error}")
        }
    }
}
