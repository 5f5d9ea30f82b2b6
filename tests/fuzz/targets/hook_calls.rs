//! `hook-calls`: what a hook process sends the adapter kit.
//!
//! The input's first line is the call (the hook socket's bounded line
//! buffer takes it, as it does for a real peer); the rest, split at NUL
//! bytes, names the unread files in the inbox. The call goes through the
//! kit's own `judge_call` with the demo provider; a claim it plans is
//! written by the kit's uplink, answered by an engine holding those files,
//! and the answer rendered by the provider. Invariants:
//!
//! * every call ends in one answer or one refusal, never a panic: a line
//!   past 1 MiB is `oversized-call`, a bad one `malformed-call`,
//!   `unknown-version` or `wrong-provider`; each is one JSON line that
//!   reads back as itself;
//! * a planned claim asks within the protocol's bounds, and the line the
//!   uplink writes for it parses as that exact claim;
//! * the engine answers it once; the provider's answer names exactly the
//!   granted files, each by the escape rule, and holds no control, line
//!   break, format or bidi character but the line feeds between its lines.

use std::path::PathBuf;

use ding::adapter::hook_wire::{HookCall, HookRefusal, MAX_CALL_BYTES};
use ding::adapter::machine::{judge_call, oversized_call};
use ding::adapter::uplink::Uplink;
use ding::adapter::{AgentContext, ClaimRequest, HookAction, HookAnswer, Provider};
use ding::core::config::{EngineConfig, Policy};
use ding::core::downlink::{Claimed, Downlink};
use ding::core::engine::{Engine, Input, Output};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::protocol::{Body, ClaimWants, MAX_CLAIM_LIMIT, MAX_CLAIM_NAME_BYTES, parse_line};
use ding::core::time::Time;
use ding::demo::adapter::DemoProvider;
use ding::escape::escape;
use ding::lines::{Line, LineBuffer};

use super::super::support_hostile::assert_harmless_lines;
use super::super::target::Target;

pub const TARGET: Target = Target {
    name: "hook-calls",
    check,
    tokens: &[
        "{\"v\":1,\"provider\":\"demo\",\"event\":\"turn-start\",\"identity\":null,\"payload\":null}",
        "\"event\":\"session-start\"",
        "\"event\":\"turn-end\"",
        "\"identity\":{\"session\":\"s\",\"incarnation\":\"i\",\"generation\":\"g\"}",
        "\"payloadTooLong\":true",
        "\"payload\":{\"a\":[1,2,{}]}",
        "\"provider\":\"other\"",
        "\"v\":2",
        "\n",
        "\u{0}",
        "m.md",
    ],
    bounds: &[MAX_CALL_BYTES],
};

pub fn agent() -> AgentContext {
    AgentContext {
        agent: "w".into(),
        inbox: PathBuf::from("/inbox"),
    }
}

pub fn identity() -> Identity {
    Identity {
        session: "s".into(),
        incarnation: "i".into(),
        generation: "g".into(),
    }
}

fn check(input: &[u8]) -> String {
    let (line_part, rest) = match input.iter().position(|&b| b == b'\n') {
        Some(at) => (&input[..=at], &input[at + 1..]),
        None => (input, &[][..]),
    };
    let mut buffer = LineBuffer::new(MAX_CALL_BYTES);
    let mut lines = Vec::new();
    buffer.push(line_part, &mut lines);
    lines.extend(buffer.finish());
    let line = match lines.into_iter().next() {
        None => return "no-call".into(),
        Some(Line::TooLong { len }) => {
            assert!(len > MAX_CALL_BYTES);
            refused(&oversized_call(len));
            return "refused:oversized-call".into();
        }
        Some(Line::Complete(line)) => line,
    };
    let mut provider = DemoProvider;
    let (call, request) = match planned_claim(&mut provider, &line, answered) {
        Ok(planned) => planned,
        Err(outcome) => return outcome,
    };
    // The kit stamps the claim with the hook's identity, else the sidecar's.
    let stamped = call.identity.clone().unwrap_or_else(identity);
    let claim_line = claim_line(&stamped, &request);
    let claim_line = claim_line.as_slice();

    let claimed = engine_answer(rest, claim_line);
    let answer = provider.on_claimed(&call, &claimed, &agent(), Time::ZERO);
    answered(&answer, &claimed.granted);
    format!(
        "claimed:{}:{}",
        claimed.granted.len().min(2),
        claimed
            .refusal
            .map(|r| format!("{r:?}"))
            .unwrap_or_default()
    )
}

/// Judges a call line as the kit does: a refusal or an answer ends it (the
/// outcome's class in `Err`, the answer checked by `answered`); a claim or
/// a park gives the call and the claim it plans.
pub fn planned_claim<P: Provider>(
    provider: &mut P,
    line: &[u8],
    answered: fn(&HookAnswer, &[MessageName]),
) -> Result<(HookCall, ClaimRequest), String> {
    let (call, plan) = match judge_call(provider, line, &agent(), Time::ZERO) {
        Err(refusal) => {
            assert!(
                [
                    "malformed-call",
                    "unknown-version",
                    "wrong-provider",
                    "no-identity"
                ]
                .contains(&refusal.error.as_str()),
                "{refusal:?}"
            );
            refused(&refusal);
            return Err(format!("refused:{}", refusal.error));
        }
        Ok(judged) => judged,
    };
    match plan.action {
        HookAction::Answer(answer) => {
            answered(&answer, &[]);
            Err(format!("answer:{}", answer.exit))
        }
        HookAction::Claim(request) | HookAction::ClaimUnlessDrafting(request) => {
            Ok((call, request))
        }
        // A parked call claims the same way once work arrives.
        HookAction::Park(park) => Ok((call, park.claim)),
    }
}

/// The line the kit's uplink writes for `request` (claim id 41), after
/// checking that the request is within the protocol's bounds and that the
/// line parses as exactly that claim.
pub fn claim_line(identity: &Identity, request: &ClaimRequest) -> Vec<u8> {
    match &request.wants {
        ClaimWants::Oldest(limit) => assert!((1..=MAX_CLAIM_LIMIT).contains(limit)),
        ClaimWants::Named(names) => assert!(!names.is_empty() && names.len() <= 1024),
    }
    if let Some(bytes) = request.name_bytes {
        assert!((1..=MAX_CLAIM_NAME_BYTES).contains(&bytes));
    }
    let line = Uplink::new().claim(identity, 41, request).into_bytes();
    let event = parse_line(&line).expect("the uplink writes valid lines");
    let Body::Claim(claim) = &event.body else {
        panic!("the uplink wrote {event:?}");
    };
    assert_eq!(
        (&claim.wants, claim.scope, claim.name_bytes),
        (&request.wants, request.scope, request.name_bytes)
    );
    line
}

/// The engine's one answer to `claim_line`, with `names` unread.
pub fn engine_answer(names: &[u8], claim_line: &[u8]) -> Claimed {
    let config = EngineConfig::new(Policy::TurnBoundaryFreshIdle, "w", "/inbox/new");
    let mut engine = Engine::new(config, None, Time::ZERO);
    let at = Time::from_millis(1);
    let mut unread: Vec<MessageName> = names
        .split(|&b| b == 0)
        .filter_map(|name| MessageName::new(std::str::from_utf8(name).ok()?).ok())
        .filter(|name| !name.as_str().starts_with('.'))
        .collect();
    unread.sort();
    unread.dedup();
    engine.handle_input(Input::InboxScan(unread), at);
    engine.handle_input(
        Input::PtyStatus {
            identity: identity(),
            revision: 1,
        },
        at,
    );
    engine.handle_input(Input::AdapterSpawned { pid: 7 }, at);
    while engine.poll_output().is_some() {}
    engine.handle_input(Input::AdapterLine(claim_line.to_vec()), at);
    let mut answers = Vec::new();
    while let Some(output) = engine.poll_output() {
        if let Output::ToAdapter(Downlink::Claimed(claimed)) = output {
            answers.push(claimed);
        }
    }
    assert_eq!(answers.len(), 1, "one answer per claim: {answers:?}");
    let claimed = answers.remove(0);
    assert_eq!(claimed.claim, 41);
    claimed
}

/// A refusal is one JSON line that reads back as itself.
pub fn refused(refusal: &HookRefusal) {
    let line = refusal.to_line();
    assert!(!line.contains('\n'));
    let back: HookRefusal = serde_json::from_str(&line).expect("refusal JSON");
    assert_eq!(&back, refusal);
}

/// An answer is one JSON line that reads back as itself, prints nothing
/// hostile, and names each of `granted` as the escape rule shows it.
pub fn answered(answer: &HookAnswer, granted: &[MessageName]) {
    let line = answer.to_line();
    assert!(!line.contains('\n'));
    let back: HookAnswer = serde_json::from_str(&line).expect("answer JSON");
    assert_eq!(&back, answer);
    assert_harmless_lines("hook answer", answer.stdout.trim_end_matches('\n'));
    assert_harmless_lines("hook answer", &answer.stderr);
    for name in granted {
        let shown = escape(name.as_str());
        assert!(
            answer.stdout.contains(&shown),
            "{shown} missing from {:?}",
            answer.stdout
        );
    }
}
