//! `docs/adapter-protocol.md` presents working code: this runs it.
//!
//! * The minimal adapter (the doc's `python` block) runs exactly as printed,
//!   under a real sidecar and PTY host, and delivers a message to a
//!   line-reading harness.
//! * Every JSON example parses as what the doc says it is: protocol lines
//!   with the sidecar's own parser, downlink lines with the downlink's,
//!   hook-channel lines with the hook wire types.
//! * The declaration example passes `ding check`.

mod support;

use std::fs;
use std::path::Path;

use ding::adapter::hook_wire::{HookAnswer, HookCall};
use ding::core::downlink::Downlink;
use ding::core::protocol::parse_line;
use support::sidecar_agent::{Agent, wait_for};

fn doc() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/adapter-protocol.md"))
        .expect("docs/adapter-protocol.md")
}

/// The contents of every fenced block of `language`, in order.
fn blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_end() == fence => current = Some(String::new()),
            Some(block) if line.trim_end() == "```" => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

/// A harness that reads lines at a `> ` prompt with GNU readline (which
/// asks for bracketed paste and takes a paste as text) and records each
/// one.
const READLINE_HARNESS: &str = r#"command "python3" "-c" "import readline\nwhile True:\n    line = input('> ')\n    open('lines', 'a').write(line + '\\n')""#;

/// A harness that reads plain lines at a `> ` prompt (`sh`'s `read` in the
/// terminal's own line editing, which never asks for bracketed paste: a
/// paste marker would be text in its line) and records each one.
const PLAIN_LINE_HARNESS: &str = r#"command "sh" "-c" "while printf '> '; read -r line; do printf '%s\\n' \"$line\" >> lines; done""#;

#[test]
fn the_minimal_adapter_runs_as_printed_and_delivers_to_a_readline_harness() {
    minimal_adapter_delivers_on("doc-readline", READLINE_HARNESS);
}

#[test]
fn the_minimal_adapter_runs_as_printed_and_delivers_to_a_plain_line_reader() {
    minimal_adapter_delivers_on("doc-plain", PLAIN_LINE_HARNESS);
}

fn minimal_adapter_delivers_on(name: &str, harness: &str) {
    let adapters = blocks(&doc(), "python");
    assert_eq!(adapters.len(), 1, "one minimal adapter in the doc");
    let declaration = format!(
        "agent \"{name}\" {{\n  {harness}\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{ command \"python3\" \"$ST_HOOKS/minimal-adapter.py\"; }}\n  }}\n}}\n"
    );
    let agent = Agent::new(name, &declaration);
    fs::write(agent.path("hooks/minimal-adapter.py"), &adapters[0]).expect("write adapter");
    agent.up(&[]);
    agent.wait_screen(">");
    agent.wait_adapter_up();
    agent.drop_message("0001-hello.md", "hello");
    wait_for("the harness to read the notice as one line", || {
        fs::read_to_string(agent.path("lines"))
            .unwrap_or_default()
            .lines()
            .any(|line| line.starts_with("[ding] 1 unread") && line.contains("0001-hello.md"))
    });
    agent.wait_status("the message staged", |status| {
        status["engine"]["messages"][0]["state"] == "staged"
    });
    let lines = fs::read_to_string(agent.path("lines")).unwrap();
    assert_eq!(
        lines.lines().count(),
        1,
        "exactly one line reached it: {lines:?}"
    );
}

#[test]
fn every_json_example_is_what_the_doc_says_it_is() {
    let text = doc();
    let mut checked = 0;
    for block in blocks(&text, "json") {
        for line in block.lines().filter(|line| !line.trim().is_empty()) {
            checked += 1;
            if line.contains("\"sequence\"") {
                parse_line(line.as_bytes())
                    .unwrap_or_else(|err| panic!("protocol example {line}: {err}"));
            } else if line.contains("\"provider\"") {
                serde_json::from_str::<HookCall>(line)
                    .unwrap_or_else(|err| panic!("hook call example {line}: {err}"));
            } else if line.contains("\"stdout\"") {
                serde_json::from_str::<HookAnswer>(line)
                    .unwrap_or_else(|err| panic!("hook answer example {line}: {err}"));
            } else {
                Downlink::parse(line)
                    .unwrap_or_else(|err| panic!("downlink example {line}: {err}"));
            }
        }
    }
    assert!(checked >= 9, "the doc's examples were found ({checked})");
}

#[test]
fn the_declaration_example_passes_check() {
    let kdl = blocks(&doc(), "kdl");
    assert_eq!(kdl.len(), 1);
    let agent = Agent::new("worker", &kdl[0]);
    agent.ding_ok(&["check", "agent.kdl"]);
}
