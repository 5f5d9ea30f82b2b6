//! The engine's side of the time fence (spec §4.2, §4.3): a refusal by the
//! PTY host's time fence gives the spent lease back and tries the same
//! evidence again when the host said it would pass; a person's input that
//! stopped a transaction leaves its files staged, unconfirmed, until an
//! empty composer before any turn says the notice was deleted unsent.

mod support;

use std::time::Duration;

use ding::core::config::{QUIET_INPUT, SETTLED_OUTPUT};
use ding::core::engine::Input;
use ding::core::fence::QuietPart;
use ding::core::hold::HoldReason;
use ding::core::ownership::MessageState;
use ding::core::time::Time;
use support::core_driver::Driver;

fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn idle(sequence: u64, composer: &str, revision: u64) -> Input {
    Input::AdapterLine(format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":{sequence},"state":"idle","validForMs":5000,"composer":"{composer}","revision":{revision}}}"#
    ).into_bytes())
}

fn active(sequence: u64) -> Input {
    Input::AdapterLine(format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":{sequence},"state":"active","validForMs":5000}}"#
    ).into_bytes())
}

/// A careful engine, its adapter up, the PTY at revision 10, one file
/// waiting and an idle lease at revision 10: one compare-and-send out.
fn ringing() -> Driver {
    let mut driver = Driver::careful_with_one_file();
    driver.input(idle(1, "empty", 10), at(2));
    driver
}

/// [`ringing`], and a person's key stopped the send after 120 bytes.
fn interrupted() -> Driver {
    let mut driver = ringing();
    let request = driver.take().0.send_ifs[0].request;
    driver.input(
        Input::PtyInterrupted {
            request,
            written: 120,
            actual: 13,
        },
        at(100),
    );
    driver
}

fn state_of_the_file(driver: &Driver) -> (MessageState, Option<HoldReason>) {
    let status = driver.engine.status(driver.now);
    let file = &status.messages[0];
    (
        file.state.clone(),
        file.hold.as_ref().map(|hold| hold.reason.clone()),
    )
}

#[test]
fn every_compare_and_send_carries_the_declared_time_fence() {
    let mut driver = ringing();
    let (emitted, _) = driver.take();
    let [send] = emitted.send_ifs.as_slice() else {
        panic!("one compare-and-send: {:?}", emitted.send_ifs);
    };
    assert_eq!(send.fence.quiet_input, QUIET_INPUT.default);
    assert_eq!(send.fence.settled_output, SETTLED_OUTPUT.default);
}

#[test]
fn a_refusal_by_the_time_fence_holds_with_its_reason_and_tries_the_same_evidence_again() {
    let mut driver = ringing();
    let (emitted, _) = driver.take();
    let request = emitted.send_ifs[0].request;
    driver.input(
        Input::PtyUnsettled {
            request,
            part: QuietPart::Input,
            quiet_for: Duration::from_millis(40),
            retry_in: Duration::from_millis(260),
            actual: 10,
        },
        at(5),
    );
    assert_eq!(
        state_of_the_file(&driver),
        (
            MessageState::Pending,
            Some(HoldReason::TerminalUnsettled {
                part: QuietPart::Input,
                quiet_for_ms: 40
            })
        )
    );
    assert_eq!(driver.engine.next_deadline(), Some(at(265)));
    driver.run_until(at(264));
    assert!(driver.take().0.send_ifs.is_empty(), "not before the fence");
    driver.run_until(at(265));
    let (emitted, _) = driver.take();
    let [again] = emitted.send_ifs.as_slice() else {
        panic!("the lease came back: {:?}", emitted.send_ifs);
    };
    assert_eq!(again.expected_revision, 10, "on the same evidence");
    assert!(again.request > request);
}

#[test]
fn a_refusal_after_the_terminal_moved_gives_no_lease_back() {
    let mut driver = ringing();
    let request = driver.take().0.send_ifs[0].request;
    driver.input(
        Input::PtyUnsettled {
            request,
            part: QuietPart::Output,
            quiet_for: Duration::from_millis(10),
            retry_in: Duration::from_millis(240),
            actual: 12,
        },
        at(5),
    );
    driver.run_until(at(1000));
    assert!(
        driver.take().0.send_ifs.is_empty(),
        "the screen moved since the evidence: a new reading is needed"
    );
    assert_eq!(state_of_the_file(&driver).1, Some(HoldReason::LeaseSpent));
}

#[test]
fn an_interrupted_notice_stays_staged_until_the_composer_is_seen_empty_before_any_turn() {
    let mut driver = interrupted();
    let (state, _) = state_of_the_file(&driver);
    assert!(
        matches!(
            state,
            MessageState::Staged {
                confirmed: false,
                ..
            }
        ),
        "{state:?}"
    );
    // The notice and the person's key sit in the composer: nothing is typed.
    driver.input(idle(2, "nonempty", 14), at(200));
    assert!(driver.take().0.send_ifs.is_empty());
    // The person deleted it all: no turn ran, so it went unsent.
    driver.input(idle(3, "empty", 20), at(900));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.send_ifs.len(), 1, "pending again, and rung");
    assert_eq!(emitted.send_ifs[0].expected_revision, 20);
}

#[test]
fn an_interrupted_notice_a_turn_may_have_taken_is_not_rung_again_at_the_next_empty_composer() {
    let mut driver = interrupted();
    // The person sent what the composer held: a turn ran.
    driver.input(active(2), at(300));
    driver.input(idle(3, "empty", 30), at(5000));
    let (state, _) = state_of_the_file(&driver);
    assert!(
        matches!(
            state,
            MessageState::Staged {
                confirmed: false,
                ..
            }
        ),
        "{state:?}"
    );
    assert!(driver.take().0.send_ifs.is_empty());
}
