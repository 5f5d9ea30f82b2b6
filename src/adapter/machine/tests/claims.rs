//! A call's plan and its claim: settings read when asked, no claim under
//! the person's draft, a claim unanswered in time, and granted files that
//! wait for the hook's receipt.

use super::*;

/// A provider reads no file: the shell reads its settings files at start
/// and whenever a hook's plan asks, and the machine hands them over.
#[test]
fn settings_files_are_read_by_the_shell_at_start_and_when_a_plan_asks() {
    let path = PathBuf::from("/home/settings.json");
    let probe = Probe {
        settings: vec![path.clone()],
        ..Probe::default()
    };
    let mut machine = AdapterMachine::new(
        probe,
        agent(),
        Pacing::default(),
        Some(identity("i")),
        true,
        Time::ZERO,
    );
    assert_eq!(
        drain(&mut machine),
        [Output::ReadSettings(vec![path.clone()])]
    );
    let read = SettingsRead {
        path: path.clone(),
        settings: Ok(serde_json::json!({"hooks": {}})),
    };
    machine.handle_input(Input::SettingsRead(vec![read.clone()]), at(1));
    assert_eq!(machine.provider.settings_read, [read]);
    call(&mut machine, 1, "claim", at(2));
    assert!(
        !drain(&mut machine)
            .iter()
            .any(|output| matches!(output, Output::ReadSettings(_))),
        "only a plan that asks reads them again"
    );
    call(&mut machine, 2, "session", at(3));
    assert!(
        drain(&mut machine).contains(&Output::ReadSettings(vec![path])),
        "a new session may follow an edit"
    );
    // A provider with no settings files asks for nothing.
    assert!(
        !drain(&mut self::machine())
            .iter()
            .any(|output| matches!(output, Output::ReadSettings(_)))
    );
}

/// Issue 21: a turn's end that would continue the turn for pending work
/// (a model call of its own) leaves it to the prompt the person is
/// writing: with their draft on the last screen read, nothing is claimed
/// and the hook hears an empty grant; with an empty composer, or once a
/// new terminal or new demand made that reading stale, it claims.
#[test]
fn a_claim_unless_drafting_claims_nothing_under_the_persons_draft() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Nonempty,
        reason: "a draft while the turn runs".into(),
    });
    machine.handle_input(snapshot(7), at(5));
    drain(&mut machine);
    // The harness redraws as the turn ends: the draft is still there.
    machine.handle_input(Input::PtyMoved, at(8));
    call(&mut machine, 1, "turn-end", at(10));
    let outputs = drain(&mut machine);
    assert!(
        uplinked(&outputs).is_empty(),
        "nothing claimed: {outputs:?}"
    );
    assert!(
        outputs.iter().any(|output| matches!(output, Output::HookAnswer { peer: Peer(1), line } if line.contains("0 file(s)"))),
        "{outputs:?}"
    );
    // The person sent it: an empty composer, and the next turn's end claims.
    machine.provider.screen = None;
    machine.handle_timeout(at(10) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(snapshot(9), at(10) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    call(&mut machine, 2, "turn-end", at(400));
    let outputs = drain(&mut machine);
    assert!(
        matches!(&uplinked(&outputs)[..], [Body::Claim(_)]),
        "{outputs:?}"
    );
    // A reading from before the demand is stale: it claims.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_timeout(at(400) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(snapshot(11), at(400) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(wanted(false), at(900));
    machine.handle_input(wanted(true), at(950));
    drain(&mut machine);
    call(&mut machine, 3, "turn-end", at(960));
    let outputs = drain(&mut machine);
    assert!(
        uplinked(&outputs)
            .iter()
            .any(|body| matches!(body, Body::Claim(_))),
        "{outputs:?}"
    );
}

#[test]
fn a_claim_unanswered_by_its_deadline_answers_nothing_and_gives_back_a_late_grant() {
    let mut machine = machine();
    call(&mut machine, 1, "claim", at(0));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 1));
    assert_eq!(machine.next_deadline(), Some(at(0) + CLAIM_DEADLINE));
    machine.handle_timeout(at(0) + CLAIM_DEADLINE);
    assert_eq!(
        drain(&mut machine),
        [Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer::default().to_line()
        }]
    );
    // The grant comes after all: nobody passes it on, so it goes back.
    machine.handle_input(claimed(1, &["a.md"]), at(4_000));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(
            &lines[..],
            [Body::Release {
                reason: Undelivered::HookGone,
                ..
            }]
        ),
        "{lines:?}"
    );
}

#[test]
fn granted_files_wait_for_the_receipt_and_go_back_without_it() {
    for (ending, released) in [
        (Some(Input::HookReceipt { peer: Peer(1) }), None),
        (
            Some(Input::HookNoReceipt { peer: Peer(1) }),
            Some(Undelivered::NoReceipt),
        ),
        (
            Some(Input::HookGone { peer: Peer(1) }),
            Some(Undelivered::HookGone),
        ),
        (None, Some(Undelivered::NoReceipt)),
    ] {
        let mut machine = machine();
        call(&mut machine, 1, "claim", at(0));
        drain(&mut machine);
        machine.handle_input(claimed(1, &["a.md"]), at(10));
        let outputs = drain(&mut machine);
        assert!(
            matches!(&outputs[..], [Output::HookAnswerForReceipt { peer: Peer(1), line }] if line.contains("1 file(s)")),
            "{outputs:?}"
        );
        let outputs = match ending {
            Some(input) => {
                machine.handle_input(input, at(20));
                drain(&mut machine)
            }
            None => {
                assert_eq!(machine.next_deadline(), Some(at(10) + RECEIPT_DEADLINE));
                machine.handle_timeout(at(10) + RECEIPT_DEADLINE);
                let outputs = drain(&mut machine);
                assert_eq!(outputs[0], Output::HookClose { peer: Peer(1) });
                outputs
            }
        };
        let lines = uplinked(&outputs);
        match released {
            // The receipt: the sidecar hears the files were printed, and
            // holds them in doubt no longer.
            None => assert!(
                matches!(&lines[..], [Body::Printed { messages }] if messages.len() == 1 && messages[0].as_str() == "a.md"),
                "{lines:?}"
            ),
            Some(why) => assert!(
                matches!(&lines[..], [Body::Release { reason, .. }] if *reason == why),
                "{lines:?}"
            ),
        }
        // An answer never passed on: the harness went on without it, and
        // the provider is told so.
        let unread: &[&str] = if released.is_some() { &["claim"] } else { &[] };
        assert_eq!(machine.provider.unread, unread);
        assert_eq!(machine.next_deadline(), None, "nothing left waiting");
    }
}

/// A hook call that proves a delivery never reached the harness (a
/// launcher whose server died before the delivery was queued) gives its
/// files back at once: pending again, evidence is wanted for them, and a
/// parked call claims them.
#[test]
fn files_a_hook_call_proves_undelivered_go_back_at_once() {
    let mut machine = machine();
    call(&mut machine, 1, "lost", at(0));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(
            &lines[..],
            [Body::Release {
                messages,
                reason: Undelivered::NoReceipt,
                ..
            }] if messages.len() == 1 && messages[0].as_str() == "a.md"
        ),
        "{lines:?}"
    );
}
