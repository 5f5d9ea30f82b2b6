//! `adapter-lines`: protocol v1 lines as the sidecar receives them.
//!
//! The input is the adapter's stdout: it is split into lines by the same
//! bounded buffer the sidecar uses, and every line goes to the parser and
//! to an engine that knows the identity `s`/`i`/`g`. Invariants:
//!
//! * a line the parser accepts is one JSON object serde_json accepts, and
//!   every field the parser read has the value serde_json reads (the
//!   differential: `v`, `kind`, identity, `sequence` and each kind's
//!   fields);
//! * a line serde_json reads as an object is refused as `malformed-json`
//!   only for a duplicate field;
//! * a line past 65,536 bytes is reported too long, never parsed;
//! * every error's text is bounded (it is logged and shown);
//! * the engine answers each accepted `claim` with exactly one `claimed`
//!   line naming its id, and writes no other `claimed` line; every
//!   downlink line it writes reads back as itself.

use ding::core::config::{EngineConfig, Policy};
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input, Output};
use ding::core::identity::Identity;
use ding::core::protocol::{
    Body, ClaimScope, ClaimWants, Composer, Lifecycle, MAX_LINE_BYTES, ProtocolError, parse_line,
};
use ding::core::time::Time;
use ding::lines::{Line, LineBuffer};
use serde_json::Value;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "adapter-lines",
    check,
    tokens: &[
        "{\"v\":1,",
        "\"kind\":\"activity\"",
        "\"kind\":\"claim\"",
        "\"kind\":\"turn-boundary\"",
        "\"kind\":\"lifecycle\"",
        "\"session\":\"s\",\"incarnation\":\"i\",\"generation\":\"g\"",
        "\"sequence\":",
        "\"state\":\"idle\"",
        "\"composer\":\"empty\"",
        "\"validForMs\":",
        "\"revision\":",
        "\"reason\":",
        "\"messages\":[\"a.md\"]",
        "\"limit\":",
        "\"scope\":\"unread\"",
        "\"nameBytes\":",
        "\"claim\":",
        "\"event\":\"clear\"",
        "null",
        "true",
        "[]",
        "{}",
        "\"..\"",
        "\"a/b\"",
        "\"\\u0000\"",
        "}\n",
        "\n",
    ],
    bounds: &[MAX_LINE_BYTES, 1024, 255],
};

fn engine() -> Engine {
    let config = EngineConfig::new(Policy::TurnBoundaryFreshIdle, "w", "/inbox/new");
    let mut engine = Engine::new(config, None, Time::ZERO);
    let at = Time::from_millis(1);
    let names = ["a.md", "b.md", "c.md"]
        .iter()
        .map(|n| ding::core::message::MessageName::new(n).expect("name"))
        .collect();
    engine.handle_input(Input::InboxScan(names), at);
    engine.handle_input(
        Input::PtyStatus {
            identity: Identity {
                session: "s".into(),
                incarnation: "i".into(),
                generation: "g".into(),
            },
            revision: 1,
        },
        at,
    );
    engine.handle_input(Input::AdapterSpawned { pid: 7 }, at);
    while engine.poll_output().is_some() {}
    engine
}

fn check(input: &[u8]) -> String {
    let mut buffer = LineBuffer::new(MAX_LINE_BYTES);
    let mut lines = Vec::new();
    buffer.push(input, &mut lines);
    lines.extend(buffer.finish());
    let mut engine = engine();
    let mut class = String::from("none");
    for (at, line) in lines.into_iter().enumerate() {
        let now = Time::from_millis(10 + at as u64);
        let (input, expected_claim) = match line {
            Line::TooLong { len } => {
                assert!(len > MAX_LINE_BYTES, "too long at {len}");
                class = "too-long".into();
                (Input::AdapterLineTooLong { len }, None)
            }
            Line::Complete(bytes) => {
                assert!(bytes.len() <= MAX_LINE_BYTES && !bytes.contains(&b'\n'));
                let (verdict, claim) = judge(&bytes);
                class = verdict;
                (Input::AdapterLine(bytes), claim)
            }
        };
        engine.handle_input(input, now);
        let mut answered = Vec::new();
        while let Some(output) = engine.poll_output() {
            if let Output::ToAdapter(line) = output {
                let text = line.to_line();
                assert!(!text.contains('\n'), "{text}");
                assert_eq!(Downlink::parse(&text).as_ref(), Ok(&line), "{text}");
                if let Downlink::Claimed(claimed) = line {
                    answered.push(claimed.claim);
                }
            }
        }
        let expected: Vec<u64> = expected_claim.into_iter().collect();
        assert_eq!(answered, expected, "claims answered for line {at}");
    }
    class
}

/// Parses one line and checks it against serde_json. Returns the class and,
/// for a valid claim, its id (which the engine must answer).
fn judge(bytes: &[u8]) -> (String, Option<u64>) {
    let reference = serde_json::from_slice::<Value>(bytes).ok();
    let object = reference.as_ref().and_then(Value::as_object);
    match parse_line(bytes) {
        Ok(event) => {
            let object = object.unwrap_or_else(|| {
                panic!("accepted what serde_json does not read as an object: {bytes:?}")
            });
            let field = |name: &str| object.get(name).filter(|v| !v.is_null());
            let text = |name: &str| field(name).and_then(Value::as_str);
            let number = |name: &str| field(name).and_then(Value::as_u64);
            assert_eq!(number("v"), Some(1));
            assert_eq!(text("session"), Some(&*event.identity.session));
            assert_eq!(text("incarnation"), Some(&*event.identity.incarnation));
            assert_eq!(text("generation"), Some(&*event.identity.generation));
            assert_eq!(number("sequence"), Some(event.sequence));
            let names = |value: Option<&Value>| -> Option<Vec<String>> {
                value?
                    .as_array()?
                    .iter()
                    .map(|name| name.as_str().map(str::to_string))
                    .collect()
            };
            let (kind, claim) = match &event.body {
                Body::Activity(activity) => {
                    let state = serde_json::to_value(activity.state).expect("state");
                    assert_eq!(field("state"), Some(&state));
                    let ms = u64::try_from(activity.valid_for.as_millis()).ok();
                    assert_eq!(number("validForMs"), ms);
                    let composer = match activity.composer {
                        Composer::Empty => Some("empty"),
                        Composer::Nonempty => Some("nonempty"),
                        Composer::Unknown => text("composer").map(|_| "unknown"),
                    };
                    assert_eq!(text("composer"), composer);
                    assert_eq!(number("revision"), activity.revision);
                    assert_eq!(text("reason"), activity.reason.as_deref());
                    ("activity", None)
                }
                Body::TurnBoundary { messages } => {
                    let ours: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
                    assert_eq!(names(field("messages")), Some(ours));
                    ("turn-boundary", None)
                }
                Body::Lifecycle { event: fact } => {
                    let expected = match fact {
                        Lifecycle::Compaction => "compaction",
                        Lifecycle::Clear => "clear",
                        Lifecycle::Crash => "crash",
                    };
                    assert_eq!(text("event"), Some(expected));
                    ("lifecycle", None)
                }
                Body::Release { messages, reason } => {
                    let ours: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
                    assert_eq!(names(field("messages")), Some(ours));
                    assert_eq!(text("reason"), Some(reason.token()));
                    ("release", None)
                }
                Body::Printed { messages } => {
                    let ours: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
                    assert_eq!(names(field("messages")), Some(ours));
                    ("printed", None)
                }
                Body::Claim(claim) => {
                    assert_eq!(number("claim"), Some(claim.claim));
                    match &claim.wants {
                        ClaimWants::Named(messages) => {
                            let ours: Vec<String> =
                                messages.iter().map(|m| m.to_string()).collect();
                            assert_eq!(names(field("messages")), Some(ours));
                            assert_eq!(field("limit"), None);
                        }
                        ClaimWants::Oldest(limit) => {
                            assert_eq!(number("limit"), Some(*limit));
                            assert_eq!(field("messages"), None);
                        }
                    }
                    let scope = match claim.scope {
                        ClaimScope::Pending => text("scope").map(|_| "pending"),
                        ClaimScope::Unread => Some("unread"),
                        ClaimScope::Delivered => Some("delivered"),
                    };
                    assert_eq!(text("scope"), scope);
                    assert_eq!(number("nameBytes"), claim.name_bytes);
                    ("claim", Some(claim.claim))
                }
            };
            assert_eq!(text("kind"), Some(kind));
            (format!("ok:{kind}"), claim)
        }
        Err(error) => {
            let shown = error.to_string();
            assert!(shown.len() <= 1024, "an error of {} bytes", shown.len());
            if let ProtocolError::MalformedJson { detail } = &error
                && object.is_some()
            {
                assert!(
                    detail.contains("duplicate"),
                    "serde_json reads an object, the parser says {detail}: {:?}",
                    String::from_utf8_lossy(bytes)
                );
            }
            (format!("err:{}", error_class(&error)), None)
        }
    }
}

/// An error's variant, and the field for field errors.
fn error_class(error: &ProtocolError) -> String {
    let value = serde_json::to_value(error).expect("error");
    let tag = value["error"].as_str().unwrap_or("?").to_string();
    match error {
        ProtocolError::MissingField { field } | ProtocolError::InvalidField { field, .. } => {
            format!("{tag}:{field}")
        }
        _ => tag,
    }
}
