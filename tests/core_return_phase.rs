//! The Return of a typed notice as its own fenced phase (spec §4.2,
//! CORE-32): the careful policy pastes the notice under one compare, and
//! writes its Return only under a second, on evidence read after the paste
//! was drawn that names the notice as what the composer holds, with no
//! person's input since the paste was asked for. Without that, no Return:
//! the notice waits in the composer with a visible reason.

mod support;

use std::time::Duration;

use ding::core::config::{QUIET_INPUT, Tunables};
use ding::core::downlink::Downlink;
use ding::core::engine::{Input, SendIf};
use ding::core::fence::QuietPart;
use ding::core::hold::HoldReason;
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::ownership::MessageState;
use ding::core::time::Time;
use ding::core::transport::{RETURN, Step};
use support::core_driver::Driver;

fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn idle(sequence: u64, composer: &str, revision: u64, typed: Option<u64>) -> Input {
    let typed = typed.map_or(String::new(), |request| format!(r#","typed":{request}"#));
    idle_saying(sequence, composer, revision, &typed)
}

/// An idle activity with `more` fields (each after a comma) at its end.
fn idle_saying(sequence: u64, composer: &str, revision: u64, more: &str) -> Input {
    Input::AdapterLine(format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":{sequence},"state":"idle","validForMs":5000,"composer":"{composer}","revision":{revision}{more}}}"#
    ).into_bytes())
}

fn receipt(sequence: u64, name: &str) -> Input {
    Input::AdapterLine(format!(
        r#"{{"v":1,"kind":"turn-boundary","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":{sequence},"messages":["{name}"]}}"#
    ).into_bytes())
}

/// A careful engine whose paste of `001.md` the PTY host wrote at 10 ms,
/// leaving the terminal at revision 11; the paste's request.
fn pasted() -> (Driver, u64) {
    let mut driver = Driver::careful_with_one_file();
    driver.input(idle(1, "empty", 10, None), at(2));
    let (emitted, _) = driver.take();
    let [paste] = emitted.send_ifs.as_slice() else {
        panic!("one paste: {:?}", emitted.send_ifs);
    };
    let request = paste.request;
    // A person's typed text waits behind the paste for its Return.
    assert_eq!(paste.hold_input, Some(Tunables::default().input_hold()));
    driver.input(
        Input::PtySent {
            request,
            revision: 11,
        },
        at(10),
    );
    (driver, request)
}

fn state_of_the_file(driver: &Driver) -> (MessageState, Option<HoldReason>) {
    let status = driver.engine.status(driver.now);
    let file = &status.messages[0];
    (
        file.state.clone(),
        file.hold.as_ref().map(|hold| hold.reason.clone()),
    )
}

fn only_send_if(driver: &mut Driver) -> Option<SendIf> {
    let (emitted, _) = driver.take();
    assert!(emitted.send_ifs.len() <= 1, "{:?}", emitted.send_ifs);
    emitted.send_ifs.into_iter().next()
}

/// Whether the engine recorded a withheld Return since the last take.
fn withheld(driver: &mut Driver) -> bool {
    driver
        .take()
        .0
        .records
        .iter()
        .any(|record| serde_json::to_value(record).unwrap()["decision"] == "return-withheld")
}

#[test]
fn the_paste_goes_alone_and_the_adapter_is_told_what_to_look_for() {
    let (mut driver, request) = pasted();
    let (emitted, _) = driver.take();
    let typed = emitted
        .downlinks
        .iter()
        .find_map(|down| match down {
            Downlink::Typed { request, text } => Some((*request, text.clone())),
            _ => None,
        })
        .expect("the adapter is told of the typed notice");
    assert_eq!(typed.0, request);
    assert!(typed.1.starts_with("[ding] 1 unread"), "{}", typed.1);
    assert!(emitted.send_ifs.is_empty(), "no Return without evidence");
    assert_eq!(
        state_of_the_file(&driver),
        (MessageState::InFlight { request }, None)
    );
}

#[test]
fn a_return_is_refused_without_fresh_confirmation() {
    let (mut driver, request) = pasted();
    driver.take();
    // Idle evidence that does not name the notice; evidence that names it
    // but was read before the paste was drawn; one naming another notice.
    driver.input(idle(2, "nonempty", 12, None), at(300));
    driver.input(idle(3, "nonempty", 11, Some(request)), at(310));
    driver.input(idle(4, "nonempty", 12, Some(request + 7)), at(320));
    assert!(only_send_if(&mut driver).is_none());
    let status = driver.engine.status(driver.now);
    assert_eq!(status.messages[0].state, MessageState::InFlight { request });
    // Named, at a revision after the paste: the Return, alone, fenced on it.
    driver.input(idle(5, "nonempty", 12, Some(request)), at(330));
    let submit = only_send_if(&mut driver).expect("the Return");
    assert_eq!(submit.transport.steps, vec![Step::Write(RETURN.to_vec())]);
    assert_eq!(submit.hold_input, None, "the Return ends the hold");
    assert_eq!(submit.expected_revision, 12);
    assert_eq!(submit.messages, vec![MessageName::new("001.md").unwrap()]);
    // No person's input since the paste was asked for (at 2 ms).
    assert!(submit.fence.quiet_input >= Duration::from_millis(328));
    assert!(submit.fence.quiet_input >= QUIET_INPUT.default);
    driver.input(
        Input::PtySent {
            request: submit.request,
            revision: 13,
        },
        at(335),
    );
    assert!(matches!(
        state_of_the_file(&driver).0,
        MessageState::Staged {
            confirmed: true,
            ..
        }
    ));
}

#[test]
fn the_return_waits_for_the_submit_delay_after_the_paste() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, Some(request)), at(60));
    assert!(
        only_send_if(&mut driver).is_none(),
        "not 50 ms after a paste"
    );
    driver.run_until(at(210));
    assert!(
        only_send_if(&mut driver).is_some(),
        "once the submit delay passed"
    );
}

#[test]
fn a_person_who_typed_after_the_paste_gets_no_return_and_the_notice_waits_for_them() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, Some(request)), at(400));
    let submit = only_send_if(&mut driver).expect("the Return");
    driver.input(
        Input::PtyUnsettled {
            request: submit.request,
            part: QuietPart::Input,
            quiet_for: Duration::from_millis(90),
            retry_in: Duration::from_millis(210),
            actual: 12,
        },
        at(401),
    );
    let (state, hold) = state_of_the_file(&driver);
    assert_eq!(
        state,
        MessageState::Staged {
            incarnation: Some("i1".into()),
            confirmed: false
        }
    );
    assert!(hold.is_none(), "a staged file is not pending");
    assert!(withheld(&mut driver));
    driver.run_until(at(9_000));
    assert!(
        only_send_if(&mut driver).is_none(),
        "never a Return after it"
    );
    // The person cleared the composer with no turn between: pending again,
    // and the next empty idle types it afresh.
    driver.input(idle(3, "empty", 20, None), at(9_100));
    let again = only_send_if(&mut driver).expect("typed again");
    assert_eq!(again.transport.steps.len(), 1);
    assert_eq!(again.expected_revision, 20);
}

#[test]
fn without_confirmation_in_time_no_return_is_written() {
    let (mut driver, _) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, None), at(300));
    let bound = driver.engine.next_deadline().expect("a bound");
    assert!(bound <= at(9_002), "{bound:?}");
    driver.run_until(at(9_500));
    assert!(driver.emitted.send_ifs.is_empty());
    assert!(withheld(&mut driver), "the withheld Return is recorded");
    assert!(matches!(
        state_of_the_file(&driver).0,
        MessageState::Staged {
            confirmed: false,
            ..
        }
    ));
    // Only the staged file's re-ring rule waits on time now.
    assert!(driver.engine.next_deadline() > Some(at(60_000)));
}

#[test]
fn a_return_refused_because_the_terminal_moved_waits_for_new_evidence() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, Some(request)), at(400));
    let submit = only_send_if(&mut driver).expect("the Return");
    driver.input(
        Input::PtyConflict {
            request: submit.request,
            actual: 14,
        },
        at(401),
    );
    assert_eq!(
        state_of_the_file(&driver).0,
        MessageState::InFlight { request },
        "still typed, never pending: pasting again would type it twice"
    );
    assert!(only_send_if(&mut driver).is_none());
    driver.input(idle(3, "nonempty", 14, Some(request)), at(700));
    let again = only_send_if(&mut driver).expect("a Return on the new evidence");
    assert_eq!(again.expected_revision, 14);
    assert_eq!(again.transport.steps, vec![Step::Write(RETURN.to_vec())]);
}

#[test]
fn a_notice_the_person_sent_themselves_needs_no_return() {
    let (mut driver, _) = pasted();
    driver.take();
    driver.input(receipt(2, "001.md"), at(300));
    driver.input(idle(3, "empty", 15, None), at(600));
    let (emitted, _) = driver.take();
    assert!(emitted.send_ifs.is_empty(), "{:?}", emitted.send_ifs);
    assert!(matches!(
        state_of_the_file(&driver).0,
        MessageState::HookOwned { .. }
    ));
}

/// An Enter of the person's own sends the notice before DING's Return: a
/// turn begins. The notice went with it, so nothing gives its file back
/// when the composer is empty again, which would ring it a second time.
#[test]
fn a_turn_that_begins_before_the_return_took_the_notice_with_it() {
    let (mut driver, _) = pasted();
    driver.take();
    driver.input(Input::AdapterLine(
        br#"{"v":1,"kind":"activity","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":2,"state":"active","validForMs":5000}"#.to_vec(),
    ), at(300));
    assert!(withheld(&mut driver), "no Return of DING's, and it says so");
    assert!(matches!(
        state_of_the_file(&driver).0,
        MessageState::Staged {
            confirmed: false,
            ..
        }
    ));
    driver.input(idle(3, "empty", 20, None), at(9_000));
    assert!(only_send_if(&mut driver).is_none(), "not typed again");
    assert!(matches!(
        state_of_the_file(&driver).0,
        MessageState::Staged { .. }
    ));
}

/// The harness starts again between the paste and the Return: the notice
/// is in a terminal that is gone, was never sent, and rings again in the
/// new one (a Return there would press Enter on whatever it shows).
#[test]
fn a_notice_typed_into_a_terminal_that_restarted_rings_again_in_the_new_one() {
    let (mut driver, _) = pasted();
    driver.take();
    let restarted = Identity {
        session: "host.worker".into(),
        incarnation: "i2".into(),
        generation: "sha256:g".into(),
    };
    driver.input(
        Input::PtyStatus {
            identity: restarted,
            revision: 30,
        },
        at(300),
    );
    assert!(withheld(&mut driver), "the lost notice is recorded");
    assert_eq!(state_of_the_file(&driver).0, MessageState::Pending);
    driver.input(Input::AdapterLine(
        br#"{"v":1,"kind":"activity","session":"host.worker","incarnation":"i2","generation":"sha256:g","sequence":2,"state":"idle","validForMs":5000,"composer":"empty","revision":30}"#.to_vec(),
    ), at(600));
    let paste = only_send_if(&mut driver).expect("typed again, into the new terminal");
    assert_eq!(paste.identity.incarnation, "i2");
    assert_ne!(paste.transport.steps, vec![Step::Write(RETURN.to_vec())]);
}

/// An idle, empty composer whose adapter says Ctrl-U, 80 ms after a paste,
/// empties it of that paste.
fn idle_withdrawable(sequence: u64, revision: u64) -> Input {
    let withdraw = r#","withdraw":"\u0015","withdrawAfterMs":80"#;
    idle_saying(sequence, "empty", revision, withdraw)
}

#[test]
fn a_paste_carries_the_withdraw_keys_its_lease_was_given() {
    let mut driver = Driver::careful_with_one_file();
    driver.input(idle_withdrawable(1, 10), at(2));
    let paste = only_send_if(&mut driver).expect("the paste");
    let withdraw = paste.withdraw.expect("the lease's withdraw keys");
    assert_eq!(
        withdraw.steps,
        vec![
            Step::Wait(Duration::from_millis(80)),
            Step::Write(b"\x15".to_vec())
        ]
    );
    assert!(paste.hold_input.is_some());
}

#[test]
fn a_notice_the_host_took_back_out_is_pending_again_and_rings_on_a_new_lease() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(Input::PtyWithdrawn { actual: 14 }, at(400));
    assert_eq!(
        state_of_the_file(&driver),
        (MessageState::Pending, Some(HoldReason::NoticeWithdrawn))
    );
    let (emitted, _) = driver.take();
    assert!(
        emitted.send_ifs.is_empty(),
        "no Return: {:?}",
        emitted.send_ifs
    );
    let status = driver.engine.status(driver.now);
    assert!(
        status.messages[0]
            .describe(driver.now)
            .contains("taken back out of the composer"),
        "{}",
        status.messages[0].describe(driver.now)
    );
    // The composer the person typed into is no lease; an empty one is, and
    // the notice is pasted again, as a new request.
    driver.input(idle(2, "nonempty", 15, None), at(500));
    assert!(only_send_if(&mut driver).is_none());
    driver.input(idle(3, "empty", 20, None), at(900));
    let again = only_send_if(&mut driver).expect("pasted again");
    assert!(again.request > request);
    assert_eq!(again.transport.steps.len(), 1, "a paste alone");
    assert_eq!(again.withdraw, None, "that lease gave no withdraw keys");
}

#[test]
fn a_return_in_flight_when_the_notice_was_taken_back_out_stages_nothing() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, Some(request)), at(300));
    let ret = only_send_if(&mut driver).expect("the Return");
    driver.input(Input::PtyWithdrawn { actual: 14 }, at(320));
    driver.input(
        Input::PtyConflict {
            request: ret.request,
            actual: 15,
        },
        at(321),
    );
    assert_eq!(state_of_the_file(&driver).0, MessageState::Pending);
    assert!(only_send_if(&mut driver).is_none());
}

/// A notice whose Return was withheld (no screen confirmed it in time)
/// still sits alone in the composer; a person's key after the PTY host's
/// hold makes the host take it back out first. Its files are owed again:
/// pending at once, and rung on the next empty composer.
#[test]
fn a_withheld_notice_the_host_took_back_out_is_pending_again() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.input(idle(2, "nonempty", 12, None), at(300));
    driver.run_until(at(9_500));
    assert!(withheld(&mut driver), "the Return is withheld");
    driver.input(Input::PtyWithdrawn { actual: 14 }, at(9_600));
    assert_eq!(
        state_of_the_file(&driver),
        (MessageState::Pending, Some(HoldReason::NoticeWithdrawn))
    );
    driver.take();
    driver.input(idle(3, "empty", 15, None), at(9_700));
    let again = only_send_if(&mut driver).expect("rung again");
    assert!(again.request > request);
}

#[test]
fn a_withdrawn_push_with_no_notice_awaiting_its_return_changes_nothing() {
    let mut driver = Driver::careful_with_one_file();
    driver.input(Input::PtyWithdrawn { actual: 3 }, at(5));
    let status = driver.engine.status(driver.now);
    assert_eq!(status.messages[0].state, MessageState::Pending);
}

/// A notice whose Return was withheld and that a harness drew only later
/// (Codex, waiting for a terminal's answer after a resize, drew it 5-8 s
/// late; issue 36, item 7) is taken back out with the provider's keys as
/// soon as fresh evidence shows it alone in the composer: the person's
/// next prompt is never sent glued behind it. Its file then rings again
/// on the empty composer.
/// A pasted notice whose Return was withheld shows up alone in the
/// composer at 12 s (revision 20), with the adapter's keys to take a
/// paste back out: the take-out asked for.
fn shown_late_and_taken_out() -> (Driver, SendIf) {
    let (mut driver, request) = pasted();
    driver.take();
    driver.run_until(at(9_500));
    assert!(withheld(&mut driver), "no screen showed it in time");
    driver.input(
        idle_saying(
            2,
            "nonempty",
            20,
            &format!(r#","typed":{request},"withdraw":"\u0015","withdrawAfterMs":0"#),
        ),
        at(12_000),
    );
    let take_out = only_send_if(&mut driver).expect("the notice is taken out");
    (driver, take_out)
}

/// The PTY host wrote the take-out's keys (revision 21).
fn take_out_written(driver: &mut Driver, take_out: &SendIf) {
    driver.input(
        Input::PtySent {
            request: take_out.request,
            revision: 21,
        },
        at(12_010),
    );
}

#[test]
fn a_withheld_notice_that_shows_up_late_is_taken_back_out() {
    let (mut driver, take_out) = shown_late_and_taken_out();
    assert_eq!(take_out.expected_revision, 20);
    assert!(take_out.messages.is_empty(), "it carries no file");
    assert_eq!(take_out.hold_input, None);
    let written: Vec<u8> = take_out
        .transport
        .steps
        .iter()
        .flat_map(|step| match step {
            Step::Write(bytes) => bytes.clone(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(written, b"\x15", "the provider's keys, and no Return");
    take_out_written(&mut driver, &take_out);
    // The empty composer gives the file back, and it rings again.
    driver.input(idle(3, "empty", 22, None), at(12_400));
    let paste = only_send_if(&mut driver).expect("a new paste");
    assert_eq!(paste.messages, [MessageName::new("001.md").unwrap()]);
}

/// Found by the whole-agent simulation (Gemini CLI seed 4775, on a branch
/// of issue 39 whose adapter read an idle screen as `unknown` for a while
/// after each of the person's keys): a withheld notice showed up late and
/// was taken back out, and the person's own turn began before any idle
/// screen showed the composer empty (a respawned adapter's new screen,
/// then the person's keys, read as `unknown`). The turn was the person's,
/// not the notice's: its file is pending again, and the claim at that
/// turn's boundary carries it. It used to stay staged for good, never
/// delivered. (No seed of the worlds as they are shows the story now:
/// 100,000 Gemini seeds without the fix break nothing.)
#[test]
fn a_notice_taken_back_out_is_owed_again_when_a_turn_begins_first() {
    let (mut driver, take_out) = shown_late_and_taken_out();
    take_out_written(&mut driver, &take_out);
    // The person's prompt begins a turn; its hook claims pending work.
    driver.input(Input::AdapterLine(
        br#"{"v":1,"kind":"claim","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":3,"claim":1,"limit":64,"scope":"pending"}"#.to_vec(),
    ), at(13_000));
    let (emitted, _) = driver.take();
    let granted = emitted
        .downlinks
        .iter()
        .any(|line| line.to_line().contains("001.md"));
    assert!(
        granted,
        "the claim carries the file: {:?}",
        emitted.downlinks
    );
}

/// Without the provider's keys, or on a screen that shows more than the
/// notice, nothing is written: the adapter's words say what the composer
/// holds.
#[test]
fn a_withheld_notice_with_the_persons_text_is_left_alone() {
    let (mut driver, request) = pasted();
    driver.take();
    driver.run_until(at(9_500));
    assert!(withheld(&mut driver));
    driver.input(
        idle_saying(2, "nonempty", 20, &format!(r#","typed":{request}"#)),
        at(12_000),
    );
    assert_eq!(only_send_if(&mut driver), None, "no keys to take it out");
    driver.input(
        idle_saying(
            3,
            "nonempty",
            21,
            r#","withdraw":"\u0015","withdrawAfterMs":0"#,
        ),
        at(12_100),
    );
    assert_eq!(only_send_if(&mut driver), None, "not the notice alone");
}

/// The notice drawn just before the bound, its Return refused for output
/// not yet settled, and the bound passing before the retry: the lease that
/// shows it alone takes it out at once, with no new screen read.
#[test]
fn a_notice_shown_as_its_bound_passes_is_taken_out_on_the_same_evidence() {
    let (mut driver, request) = pasted();
    driver.take();
    let keys = format!(r#","typed":{request},"withdraw":"\u0015","withdrawAfterMs":0"#);
    // The paste was asked for at 2 ms.
    let bound = at(2) + Tunables::default().return_within();
    let shown = Time::from_millis(bound.as_millis() - 100);
    driver.input(idle_saying(2, "nonempty", 20, &keys), shown);
    let submit = only_send_if(&mut driver).expect("a Return");
    driver.input(
        Input::PtyUnsettled {
            request: submit.request,
            part: QuietPart::Output,
            quiet_for: Duration::from_millis(6),
            retry_in: Duration::from_millis(244),
            actual: 20,
        },
        shown,
    );
    driver.take();
    driver.run_until(Time::from_millis(shown.as_millis() + 300));
    let take_out = only_send_if(&mut driver).expect("taken out");
    assert!(take_out.messages.is_empty());
    assert_eq!(take_out.expected_revision, 20);
}
