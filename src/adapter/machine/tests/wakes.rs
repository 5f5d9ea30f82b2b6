//! Parked wakes: claimed for only on a settled, fresh idle screen and a
//! quiet person, confirmed by a reading after the grant or withheld, and
//! replaced by a newer one.

use super::*;

#[test]
fn a_parked_wake_claims_only_after_settling_on_fresh_idle_and_holds_the_terminal() {
    let mut machine = machine();
    // Nothing wanted: it just waits (and the log says it parked).
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // The screen is not idle yet: the wake holds nothing and says so not.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_input(snapshot(3), at(1_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "a draft is the screen's own reason: {lines:?}"
    );
    machine.handle_timeout(at(1_100));
    assert!(
        uplinked(&drain(&mut machine)).is_empty(),
        "no claim on a draft"
    );
    // The draft is gone: fresh idle. The wake now holds the terminal and
    // claims after its settle time.
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(1_150));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_160));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Unknown),
        "held by the wake: {lines:?}"
    );
    machine.handle_timeout(at(1_200));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(_)]), "{lines:?}");
    // Nothing granted: back in its slot, tried again later, never answered.
    machine.handle_input(claimed(1, &[]), at(1_210));
    assert!(drain(&mut machine).is_empty());
    machine.handle_timeout(at(1_210) + crate::adapter::timing::PARK_RETRY_AFTER);
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
    // Granted: the wake goes on a reading asked for after the grant.
    machine.handle_input(claimed(2, &["a.md"]), at(2_300));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(5), at(2_305));
    let outputs = drain(&mut machine);
    assert!(
        matches!(
            &outputs[..],
            [
                Output::HookAnswerForReceipt { peer: Peer(2), .. },
                Output::Uplink(_)
            ]
        ),
        "{outputs:?}"
    );
}

/// A wake granted its files with the terminal where its claim left it.
fn wake_granted(machine: &mut AdapterMachine<Probe>) {
    park(machine, 2, "wake", at(0));
    wanted_and_open(machine, at(1_000));
    machine.handle_input(snapshot(3), at(1_010));
    drain(machine);
    machine.handle_timeout(at(1_100));
    let lines = uplinked(&drain(machine)).len();
    assert_eq!(lines, 1, "the claim");
}

/// Found by the whole-agent simulation (issue 36, item 6; seeds 1101,
/// 21538, 45325 of one model, 16613, 18857, 48980 of another): the person's key
/// reached the terminal while a wake's claim was out, and the wake,
/// answered on the reading the claim was made on, started a turn under
/// their draft. A wake granted files goes only on a reading asked for
/// after the grant came; one that shows the person's input gives the
/// files back (`release` `withheld`) and puts the call back in its slot.
#[test]
fn a_key_while_a_wakes_claim_is_out_withholds_the_wake_and_gives_the_files_back() {
    let mut machine = machine();
    wake_granted(&mut machine);
    // A key reaches the terminal; the grant comes right after, and with
    // it the sidecar's word that no evidence is wanted any more.
    machine.handle_input(Input::PtyMoved, at(1_101));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(claimed(1, &["a.md"]), at(1_102));
    machine.handle_input(wanted(false), at(1_102));
    assert!(
        drain(&mut machine).is_empty(),
        "no answer, and the terminal stays open for the reading"
    );
    // The snapshot asked before the grant does not count.
    machine.handle_input(snapshot(4), at(1_103));
    assert!(drain(&mut machine).is_empty());
    machine.handle_timeout(at(1_128));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    // The one asked after it shows the key (the host counted it 5 ms
    // before it built the reply).
    let mut typed = testing::snapshot(10, &["ready"], Vec::new(), None);
    typed.revision = 5;
    typed.terminal.input_at_ms = Some(50_095);
    typed.clock_ms = Some(50_100);
    machine.handle_input(Input::PtySnapshot(Box::new(typed)), at(1_130));
    let outputs = drain(&mut machine);
    assert!(
        !outputs.iter().any(|output| matches!(
            output,
            Output::HookAnswerForReceipt { .. } | Output::HookAnswer { .. }
        )),
        "the wake is withheld: {outputs:?}"
    );
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Release { messages, reason: Undelivered::Withheld }] if messages.len() == 1),
        "{lines:?}"
    );
    assert!(outputs.contains(&Output::PtyClose), "{outputs:?}");
    // Back in its slot: evidence wanted again (the files are pending), it
    // claims once the person has been quiet.
    machine.handle_input(wanted(true), at(1_200));
    machine.handle_input(Input::PtyOpened, at(1_200));
    machine.handle_input(snapshot(6), at(1_201));
    drain(&mut machine);
    machine.handle_timeout(at(1_301));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
}

#[test]
fn a_wake_whose_confirming_reading_never_comes_is_withheld() {
    let mut machine = machine();
    wake_granted(&mut machine);
    machine.handle_input(claimed(1, &["a.md"]), at(1_110));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(Input::PtyLost("gone".into()), at(1_120));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        lines.iter().any(|line| matches!(
            line,
            Body::Release {
                reason: Undelivered::Withheld,
                ..
            }
        )),
        "{lines:?}"
    );
}

/// Issue 39, item 3: a person who just pressed a key is at the keyboard
/// (the Esc that closed a dialog is followed by another about 0.6 s
/// later): the wake waits for the turn quiet after it, not for the
/// declaration's shorter `quiet-input`.
#[test]
fn a_parked_wake_waits_until_the_person_has_been_quiet_for_the_turn_quiet() {
    use crate::adapter::timing::TURN_QUIET;
    let mut machine = machine();
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // Fresh idle, but a key reached the terminal 20 ms before the host
    // built this reply (the Esc that closed a dialog).
    let mut typed_just_now = testing::snapshot(10, &["ready"], Vec::new(), None);
    typed_just_now.revision = 3;
    typed_just_now.terminal.input_at_ms = Some(4_980);
    typed_just_now.clock_ms = Some(5_000);
    machine.handle_input(Input::PtySnapshot(Box::new(typed_just_now)), at(1_010));
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "one activity line, held by the wake");
    // Settled, but the person is not quiet yet: quiet since 990, so due at
    // 990 + the turn quiet, well past the declaration's 300 ms.
    let due = at(990) + TURN_QUIET;
    let just_before = Time::from_millis(due.as_millis() - 1);
    assert_eq!(TURN_QUIET, machine.pacing.turn_quiet());
    machine.handle_timeout(at(1_110));
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim yet");
    assert_eq!(machine.next_deadline(), Some(due));
    machine.handle_timeout(at(1_290));
    assert!(
        uplinked(&drain(&mut machine)).is_empty(),
        "no claim after quiet-input alone"
    );
    machine.handle_timeout(just_before);
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim yet");
    machine.handle_timeout(due);
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "the claim, once quiet");
}

/// A declaration's `quiet-input` longer than the turn quiet is kept.
#[test]
fn the_turn_quiet_is_the_longer_of_its_own_and_the_declared_quiet() {
    use crate::adapter::timing::TURN_QUIET;
    let mut pacing = Pacing::default();
    assert_eq!(pacing.turn_quiet(), TURN_QUIET);
    pacing.quiet_input = TURN_QUIET * 4;
    assert_eq!(pacing.turn_quiet(), TURN_QUIET * 4);
}

#[test]
fn a_parked_wake_never_claims_on_input_whose_quiet_cannot_be_judged() {
    let mut machine = machine();
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    let mut no_clock = testing::snapshot(10, &["ready"], Vec::new(), None);
    no_clock.revision = 3;
    no_clock.terminal.input_at_ms = Some(1);
    machine.handle_input(Input::PtySnapshot(Box::new(no_clock)), at(1_010));
    drain(&mut machine);
    for later in [1_200, 5_000, 30_000] {
        machine.handle_timeout(at(later));
        let claims = uplinked(&drain(&mut machine))
            .into_iter()
            .filter(|line| matches!(line, Body::Claim(_)))
            .count();
        assert_eq!(claims, 0, "at {later}");
    }
}

#[test]
fn a_native_path_holds_an_idle_terminal_but_not_its_own_parked_call() {
    let mut machine = machine();
    machine.provider.native_holds = Some("the native path delivers");
    wanted_and_open(&mut machine, at(1_000));
    machine.handle_input(snapshot(3), at(1_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Unknown && a.reason.as_deref().is_some_and(|why| why.contains("the native path delivers"))),
        "{lines:?}"
    );
    // A draft stays the screen's own reason.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_input(Input::PtyMoved, at(1_020));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_050));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "{lines:?}"
    );
    // The path's own parked call judges the screen itself: fresh idle, so
    // it claims.
    machine.provider.screen = None;
    park(&mut machine, 2, "wake", at(1_100));
    machine.handle_input(snapshot(5), at(1_110));
    drain(&mut machine);
    machine.handle_timeout(at(1_210));
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "the parked call's claim");
}

#[test]
fn a_newer_wake_replaces_the_parked_one_and_each_answer_says_what_became_of_it() {
    let mut machine = machine();
    park(&mut machine, 1, "wake", at(1));
    call(&mut machine, 2, "wake", at(2));
    let ended = |why| HookAnswer {
        parked: Some(why),
        ..HookAnswer::default()
    };
    assert_eq!(
        drain(&mut machine),
        [
            Output::Log("wake: parked in slot wake for at most 60000 ms".into()),
            Output::HookAnswer {
                peer: Peer(1),
                line: ended(ParkAnswer::Replaced).to_line()
            }
        ]
    );
    // Its deadline is the park's: answered with nothing then, saying so.
    assert_eq!(
        machine.next_deadline(),
        Some(at(2) + Duration::from_secs(60))
    );
    machine.handle_timeout(at(2) + Duration::from_secs(60));
    assert_eq!(
        drain(&mut machine),
        [Output::HookAnswer {
            peer: Peer(2),
            line: ended(ParkAnswer::Expired).to_line()
        }]
    );
}

/// Found by the whole-agent simulation (seed 1073): a key drawn after the
/// last reading must hold a wake that waits for fresh idle, until the
/// screen is read again.
#[test]
fn a_terminal_that_moved_since_the_last_reading_wakes_nothing_until_it_is_read_again() {
    let mut machine = machine();
    park(&mut machine, 3, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    machine.handle_input(snapshot(5), at(1_005));
    drain(&mut machine);
    // The person's key is drawn; the snapshot it asks for has not come
    // back when the wake is due.
    machine.handle_input(Input::PtyMoved, at(1_090));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_timeout(at(1_100));
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "no claim: {outputs:?}");
    // Read again, still idle and empty: the wake is due a settle later.
    machine.handle_input(snapshot(6), at(1_110));
    drain(&mut machine);
    machine.handle_timeout(at(1_200));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(_)]), "{lines:?}");
}
