//! `pty-requests`: what a control client writes to the PTY host.
//!
//! The input is the byte stream of one connection, framed and decoded by
//! the functions the host runs (`next_request`, `decode_request`), then
//! each transport checked by the host's caps. Invariants:
//!
//! * framing yields lines without newlines of at most the bound, and
//!   `oversized` exactly when the line at the front passes it (the host
//!   then answers once and closes);
//! * a blank line is ignored; every other line is a request or the
//!   documented `malformed-request` error, whose reply is one JSON line;
//! * a decoded request is a JSON object naming a known `op`, and writing
//!   it back and decoding it again gives the same request;
//! * a transport's caps never panic: accepted, it writes between 1 byte and
//!   the cap, waits within the cap and has at most the cap of steps.
//!
//! `tests/fuzz.rs` also replays this corpus against a live host, line by
//! line, checking that each gets one documented reply and that the host
//! still answers afterwards.

use ding::pty::transport::{
    MAX_TRANSPORT_BYTES, MAX_TRANSPORT_STEPS, MAX_TRANSPORT_WAIT_MS, WireStep, validate,
};
use ding::pty::wire::{
    ErrorKind, MAX_REQUEST_LINE, NextRequest, Request, ServerLine, decode_request, next_request,
};
use serde_json::Value;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "pty-requests",
    check,
    tokens: &[
        "{\"op\":\"status\"}\n",
        "{\"op\":\"snapshot\"}\n",
        "{\"op\":\"watch\"}\n",
        "{\"op\":\"resize\",\"cols\":80,\"rows\":24}\n",
        "{\"op\":\"send\",\"steps\":[{\"write\":\"aGk=\"}]}\n",
        "{\"op\":\"send-if\",\"session\":\"s\",\"incarnation\":\"i\",\"generation\":\"g\",\"expectedRevision\":1,\"steps\":[{\"write\":\"aGk=\"},{\"waitMs\":5}]}\n",
        "\"origin\":\"delivery\"",
        "{\"write\":\"\"}",
        "{\"write\":\"====\"}",
        "{\"waitMs\":",
        "\"op\":\"restart\"",
        "\"op\":\"attach\"",
        "\"cols\":0",
        "\"rows\":65535",
        "AAAA",
        "=",
        "\n",
        "\r\n",
        " ",
    ],
    bounds: &[MAX_REQUEST_LINE, MAX_TRANSPORT_BYTES * 4 / 3],
};

pub fn check(input: &[u8]) -> String {
    let mut buf = input.to_vec();
    let mut class = String::from("none");
    loop {
        let front_len = buf.iter().position(|&b| b == b'\n');
        let before = buf.len();
        match next_request(&mut buf) {
            NextRequest::Incomplete => {
                assert!(front_len.is_none() && before < MAX_REQUEST_LINE);
                assert_eq!(buf.len(), before, "incomplete consumed bytes");
                return class;
            }
            NextRequest::Oversized => {
                match front_len {
                    Some(end) => assert!(end + 1 > MAX_REQUEST_LINE, "line of {end} refused"),
                    None => assert!(before >= MAX_REQUEST_LINE),
                }
                return "oversized".into();
            }
            NextRequest::Line(line) => {
                assert_eq!(Some(line.len()), front_len);
                assert!(line.len() < MAX_REQUEST_LINE && !line.contains(&b'\n'));
                assert_eq!(buf.len(), before - line.len() - 1);
                class = judge(&line);
            }
        }
    }
}

/// One line: the request or the error the host answers with.
pub fn judge(line: &[u8]) -> String {
    match decode_request(line) {
        Ok(None) => {
            assert!(line.iter().all(u8::is_ascii_whitespace));
            "blank".into()
        }
        Err(refusal) => {
            assert_eq!(refusal.error, ErrorKind::MalformedRequest);
            let reply = serde_json::to_string(&ServerLine::Error(refusal)).expect("reply");
            assert!(!reply.contains('\n'));
            "err:malformed".into()
        }
        Ok(Some(request)) => {
            let object: Value = serde_json::from_slice(line).expect("a request is JSON");
            let op = object["op"].as_str().expect("an op").to_string();
            let again = serde_json::to_string(&request).expect("write back");
            assert_eq!(
                decode_request(again.as_bytes()).ok().flatten().as_ref(),
                Some(&request),
                "{again}"
            );
            let steps = match &request {
                Request::Send { steps, .. } | Request::SendIf { steps, .. } => steps,
                _ => return format!("ok:{op}"),
            };
            match validate(steps) {
                Ok(bytes) => {
                    let written: usize = steps
                        .iter()
                        .map(|step| match step {
                            WireStep::Write(data) => data.len(),
                            // At most: with the markers a program may ask for.
                            WireStep::Paste(text) => text.len() + 12,
                            WireStep::WaitMs(_) => 0,
                        })
                        .sum();
                    let waited: u64 = steps
                        .iter()
                        .map(|step| match step {
                            WireStep::WaitMs(ms) => *ms,
                            WireStep::Write(_) | WireStep::Paste(_) => 0,
                        })
                        .fold(0, u64::saturating_add);
                    assert_eq!(bytes, written);
                    assert!((1..=MAX_TRANSPORT_BYTES).contains(&bytes));
                    assert!(waited <= MAX_TRANSPORT_WAIT_MS);
                    assert!(steps.len() <= MAX_TRANSPORT_STEPS);
                    format!("ok:{op}")
                }
                Err(error) => {
                    assert!(!error.to_string().contains('\n'));
                    format!("refused:{op}:{error:?}")
                        .split('(')
                        .next()
                        .unwrap_or_default()
                        .to_string()
                }
            }
        }
    }
}
