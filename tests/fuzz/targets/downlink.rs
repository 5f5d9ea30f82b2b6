//! `downlink`: what an adapter reads on its stdin, as the kit reads it
//! (its bounded line buffer, each line decoded lossily, then
//! `Downlink::parse`).
//!
//! Invariants: parsing never panics; an accepted line is a JSON object with
//! `v` 1 and a known `kind`; writing the value back gives one line that
//! parses to the same value; every name in a `claimed` answer is a valid
//! message name (the type guarantees it; this proves the parser uses it).

use ding::core::downlink::Downlink;
use ding::core::protocol::MAX_LINE_BYTES;
use ding::lines::{Line, LineBuffer};
use serde_json::Value;

use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "downlink",
    check,
    tokens: &[
        "{\"v\":1,\"kind\":\"pty\",\"identity\":null}\n",
        "{\"v\":1,\"kind\":\"evidence\",\"wanted\":true}\n",
        "{\"v\":1,\"kind\":\"claimed\",\"claim\":1,\"granted\":[\"a.md\"],\"refused\":[{\"name\":\"b.md\",\"state\":\"staged\"}],\"refusal\":null,\"notGranted\":0}\n",
        "\"identity\":{\"session\":\"s\",\"incarnation\":\"i\",\"generation\":\"g\"}",
        "\"refusal\":\"identity-mismatch\"",
        "\"state\":\"over-budget\"",
        "\"kind\":\"future\"",
        "\"v\":2",
        "\"..\"",
        "\"\"",
        "\n",
    ],
    bounds: &[MAX_LINE_BYTES * 16],
};

fn check(input: &[u8]) -> String {
    let mut buffer = LineBuffer::new(MAX_LINE_BYTES * 16);
    let mut lines = Vec::new();
    buffer.push(input, &mut lines);
    let mut class = String::from("none");
    for line in lines {
        let Line::Complete(bytes) = line else {
            class = "too-long".into();
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        class = match Downlink::parse(&text) {
            Ok(downlink) => {
                let value: Value = serde_json::from_str(&text).expect("accepted JSON");
                assert_eq!(value["v"].as_u64(), Some(1), "{text}");
                let kind = value["kind"].as_str().expect("a kind").to_string();
                assert!(
                    ["pty", "evidence", "claimed"].contains(&kind.as_str()),
                    "{kind}"
                );
                let again = downlink.to_line();
                assert!(!again.contains('\n'));
                assert_eq!(Downlink::parse(&again), Ok(downlink), "{again}");
                format!("ok:{kind}")
            }
            Err(why) => {
                assert!(!why.is_empty());
                "err".into()
            }
        };
    }
    class
}
