//! Identity: claims refused for it, calls without one or about another
//! terminal, and calls whose identity cannot stamp a line.

use super::*;

/// A claim refused for identity, then the sidecar's next identity
/// (`incarnation`); what the machine does then.
fn refused_for_identity_then_told(incarnation: &str) -> (AdapterMachine<Probe>, Vec<Output>) {
    let mut machine = machine();
    call(&mut machine, 1, "claim", at(0));
    drain(&mut machine);
    machine.handle_input(answer(1, &[], Some(ClaimRefusal::IdentityMismatch)), at(5));
    assert_eq!(drain(&mut machine), [], "waits for the next identity");
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity(incarnation)),
        }),
        at(10),
    );
    let outputs = drain(&mut machine);
    (machine, outputs)
}

#[test]
fn a_claim_refused_for_identity_is_answered_with_nothing_once_the_terminal_is_another() {
    let (machine, outputs) = refused_for_identity_then_told("j");
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    assert!(
        outputs.contains(&Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer::default().to_line()
        }),
        "the old terminal's call gets nothing: {outputs:?}"
    );
    assert_eq!(machine.provider.new_terminals, [Some("j".to_string())]);
}

#[test]
fn a_claim_refused_for_identity_is_asked_again_once_when_the_identity_is_confirmed() {
    let (_, outputs) = refused_for_identity_then_told("i");
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
}

/// A hook call line about the terminal `incarnation` (or none).
fn hook_about(event: &str, incarnation: Option<&str>) -> Vec<u8> {
    let identity = incarnation.map(identity);
    serde_json::json!({
        "v": 1, "provider": "test", "event": event, "payload": null,
        "identity": identity,
    })
    .to_string()
    .into_bytes()
}

fn refusal_of(outputs: &[Output], peer: usize) -> Option<HookRefusal> {
    outputs.iter().find_map(|output| match output {
        Output::HookAnswer { peer: p, line } if *p == Peer(peer) => serde_json::from_str(line).ok(),
        _ => None,
    })
}

#[test]
fn a_call_without_identity_is_refused_and_claims_nothing() {
    let mut machine = machine();
    let line = hook_about("claim", None);
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    let refusal = refusal_of(&outputs, 1).expect("refused");
    assert_eq!(refusal.error, "no-identity");
}

#[test]
fn a_stale_parked_call_holds_nothing_and_is_refused_after_its_wait() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    let line = hook_about("wake", Some("gone"));
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    assert_eq!(drain(&mut machine), [], "nothing of it reaches anyone yet");
    machine.handle_input(snapshot(3), at(10));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "a stale call holds no terminal: {lines:?}"
    );
    let deadline = at(0) + crate::adapter::timing::STRANGER_WAIT;
    assert_eq!(
        machine.next_deadline(),
        Some(deadline.min(at(10) + HEARTBEAT))
    );
    machine.handle_timeout(deadline);
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    let refusal = refusal_of(&outputs, 1).expect("refused");
    assert_eq!(refusal.error, "identity-mismatch");
}

#[test]
fn an_early_call_waits_for_its_terminal_then_claims_under_it() {
    let mut machine = machine();
    let line = hook_about("claim", Some("j"));
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    assert_eq!(drain(&mut machine), []);
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(40),
    );
    let outputs = drain(&mut machine);
    let events: Vec<_> = outputs
        .iter()
        .filter_map(|output| match output {
            Output::Uplink(line) => Some(parse_line(line.as_bytes()).expect("parses")),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&events[..], [event] if matches!(event.body, Body::Claim(_)) && event.identity.incarnation == "j"),
        "{events:?}"
    );
}

#[test]
fn a_parked_call_of_a_terminal_that_is_gone_is_ended_when_the_new_one_comes() {
    let mut machine = machine();
    park(&mut machine, 1, "wake", at(0));
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(10),
    );
    let outputs = drain(&mut machine);
    assert!(
        outputs.contains(&Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer {
                parked: Some(ParkAnswer::Declined),
                ..HookAnswer::default()
            }
            .to_line()
        }),
        "{outputs:?}"
    );
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
}

/// The machine stamps a claim with the hook's own identity; one the
/// protocol refuses (an empty or over-long part) would make the sidecar
/// reject the claim unanswered, so the call is refused at once (found by
/// the `hook-calls` fuzz target).
#[test]
fn a_call_whose_identity_cannot_stamp_a_line_is_refused() {
    let call = |session: &str, incarnation: &str| {
        serde_json::json!({
            "v": 1, "provider": "test", "event": "claim", "payload": null,
            "identity": {"session": session, "incarnation": incarnation, "generation": "g"},
        })
        .to_string()
        .into_bytes()
    };
    let long = "s".repeat(MAX_FIELD_BYTES + 1);
    let mut probe = Probe::default();
    for line in [call("s", ""), call("", "i"), call(&long, "i")] {
        let refusal = judge_call(&mut probe, &line, &agent(), at(0)).expect_err("refused");
        assert_eq!(refusal.error, "malformed-call", "{refusal:?}");
        assert!(refusal.message.contains("identity"), "{refusal:?}");
    }
    assert!(judge_call(&mut probe, &call("s", "i"), &agent(), at(0)).is_ok());
}
