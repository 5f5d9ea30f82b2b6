//! `provider-hooks`: the real providers' hook payload handlers, as `ding
//! hook claude EVENT` and `ding hook codex EVENT` reach them.
//!
//! The input's first line names the provider and the event (`claude
//! Stop`); what follows, up to the first NUL, is the payload the harness
//! wrote on the hook's stdin (JSON, or anything: the relay sends `null` for
//! what is not JSON); the rest, split at NUL bytes, names the unread files.
//! The call goes through the kit's `judge_call` with that provider; a
//! claim it plans (or parks) is answered by an engine holding those files,
//! and the answer rendered by the provider. Invariants:
//!
//! * every call ends in one answer or one refusal, never a panic; each is
//!   one JSON line that reads back as itself;
//! * a planned claim asks within the protocol's bounds;
//! * an answer prints nothing hostile (no control, line break, format or
//!   bidi character but the line feeds between its lines), its stdout is
//!   JSON when it starts like JSON, and it names every granted file as the
//!   escape rule shows it: a file granted but not named would be
//!   hook-owned without being in any context.

use ding::adapter::hook_wire::{HOOK_WIRE_VERSION, HookCall};
use ding::adapter::{HookAnswer, Provider};
use ding::core::message::MessageName;
use ding::core::time::Time;
use ding::escape::escape;
use ding::providers::claude::adapter::Claude;
use ding::providers::codex::adapter::Codex;
use serde_json::Value;

use super::super::support_hostile::assert_harmless_lines;
use super::super::target::Target;
use super::hook_calls::{agent, claim_line, engine_answer, identity, planned_claim};

pub const TARGET: Target = Target {
    name: "provider-hooks",
    check,
    tokens: &[
        "claude SessionStart\n",
        "claude UserPromptSubmit\n",
        "claude Stop\n",
        "claude PostToolUse\n",
        "claude PreCompact\n",
        "claude wake\n",
        "codex SessionStart\n",
        "codex UserPromptSubmit\n",
        "codex Stop\n",
        "codex PostToolUse\n",
        "codex PreCompact\n",
        "codex queue\n",
        "codex launch\n",
        "{\"source\":\"compact\"}",
        "{\"source\":\"clear\"}",
        "{\"prompt\":\"[ding] 1 unread\"}",
        "{\"stop_hook_active\":true}",
        "{\"mode\":\"native\",\"declared\":null}",
        "{\"hook_event_name\":\"Stop\",\"session_id\":\"s\"}",
        "\u{0}",
        "m.md",
    ],
    bounds: &[],
};

fn check(input: &[u8]) -> String {
    let (head, rest) = match input.iter().position(|&b| b == b'\n') {
        Some(at) => (&input[..at], &input[at + 1..]),
        None => (input, &[][..]),
    };
    let (payload, names) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let (provider, event) = head.split_once(' ').unwrap_or((&head, ""));
    // What `ding hook` does with a payload that is not JSON.
    let payload: Value = serde_json::from_slice(payload).unwrap_or(Value::Null);
    let call = HookCall {
        v: HOOK_WIRE_VERSION,
        provider: provider.to_string(),
        event: event.to_string(),
        identity: Some(identity()),
        payload,
        payload_too_long: false,
        timeout_ms: Some(10_000),
    };
    let line = call.to_line();
    match provider {
        "claude" => run(&mut Claude::new(None, "claude".into(), true), &line, names),
        "codex" => run(&mut Codex::new(true), &line, names),
        _ => run(&mut Codex::new(false), &line, names),
    }
}

fn run<P: Provider>(provider: &mut P, line: &str, names: &[u8]) -> String {
    let (call, request) = match planned_claim(provider, line.as_bytes(), answered) {
        Ok(planned) => planned,
        Err(outcome) => return outcome,
    };
    let claim_line = claim_line(&identity(), &request);
    let claimed = engine_answer(names, &claim_line);
    let answer = provider.on_claimed(&call, &claimed, &agent(), Time::ZERO);
    answered(&answer, &claimed.granted);
    format!(
        "claimed:{}:{}:{}",
        call.event,
        claimed.granted.len().min(2),
        answer.exit
    )
}

/// An answer is one JSON line that reads back as itself, prints nothing
/// hostile, and names each of `granted` as the escape rule shows it (in
/// its stdout, read as JSON when it is JSON, or its stderr).
fn answered(answer: &HookAnswer, granted: &[MessageName]) {
    let line = answer.to_line();
    assert!(!line.contains('\n'));
    let back: HookAnswer = serde_json::from_str(&line).expect("answer JSON");
    assert_eq!(&back, answer);
    assert_harmless_lines("hook stdout", answer.stdout.trim_end_matches('\n'));
    assert_harmless_lines("hook stderr", answer.stderr.trim_end_matches('\n'));
    let mut said = answer.stderr.clone();
    if answer.stdout.trim_start().starts_with('{') {
        let json: Value = serde_json::from_str(&answer.stdout).expect("stdout is JSON");
        strings(&json, &mut said);
    } else {
        said.push_str(&answer.stdout);
    }
    for name in granted {
        let shown = escape(name.as_str());
        assert!(said.contains(&shown), "{shown} missing from {answer:?}");
    }
}

/// Every string in `value`, appended to `out`.
fn strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| strings(item, out)),
        _ => {}
    }
}
