//! The engine's side of the adapter seam: claims (claim before inject), the
//! downlink (identity and the demand signal), the strict fence, and the PTY
//! facts that say what happened (mismatch, harness exit, retry with backoff).

mod support;

use ding::core::config::Policy;
use ding::core::downlink::{ClaimRefusal, Claimed, Downlink, RefusedState};
use ding::core::engine::{Engine, Input};
use ding::core::identity::{Identity, IdentityPart};
use ding::core::message::MessageName;
use ding::core::ownership::MessageState;
use ding::core::time::Time;
use support::core_driver::{Driver, ungathered};

fn name(text: &str) -> MessageName {
    MessageName::new(text).unwrap()
}

fn names(list: &[&str]) -> Vec<MessageName> {
    list.iter().map(|text| name(text)).collect()
}

fn identity(incarnation: &str) -> Identity {
    Identity {
        session: "host.worker".into(),
        incarnation: incarnation.into(),
        generation: "sha256:g".into(),
    }
}

fn at(millis: u64) -> Time {
    Time::from_millis(millis)
}

fn line(sequence: u64, incarnation: &str, rest: &str) -> Input {
    Input::AdapterLine(
        format!(
            r#"{{"v":1,"session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},{rest}}}"#
        )
        .into_bytes(),
    )
}

/// Idle evidence that the composer holds exactly the notice pasted as
/// `request`: what its Return waits for.
fn typed(sequence: u64, revision: u64, request: u64) -> Input {
    line(
        sequence,
        "inc-1",
        &format!(
            r#""kind":"activity","state":"idle","validForMs":2000,"composer":"nonempty","revision":{revision},"typed":{request}"#
        ),
    )
}

fn idle(sequence: u64, composer: &str, revision: u64) -> Input {
    line(
        sequence,
        "inc-1",
        &format!(
            r#""kind":"activity","state":"idle","validForMs":2000,"composer":"{composer}","revision":{revision}"#
        ),
    )
}

/// A careful engine with its adapter up and the PTY at `inc-1`, revision 10,
/// with `files` unread.
fn started(files: &[&str]) -> Driver {
    let config = ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    driver.input(Input::AdapterSpawned { pid: 9 }, Time::ZERO);
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 10,
        },
        Time::ZERO,
    );
    driver.input(Input::InboxScan(names(files)), Time::ZERO);
    driver.take();
    driver
}

fn state(driver: &Driver, file: &str) -> Option<MessageState> {
    driver
        .engine
        .status(driver.now)
        .messages
        .into_iter()
        .find(|message| message.name.as_str() == file)
        .map(|message| message.state)
}

/// A hook claims `009.md`, which the inbox watch has not reported yet.
fn claim_unseen_file(driver: &mut Driver) {
    driver.input(
        line(
            1,
            "inc-1",
            r#""kind":"claim","claim":1,"messages":["009.md"]"#,
        ),
        at(10),
    );
}

/// The harness exits, as a push (`request` none) or as the reply refusing
/// `request`.
fn harness_exits(driver: &mut Driver, request: Option<u64>, status: &str, when: Time) {
    driver.input(
        Input::HarnessExited {
            request,
            status: status.into(),
        },
        when,
    );
}

fn claimed(driver: &mut Driver) -> Claimed {
    let (emitted, _) = driver.take();
    let answers: Vec<Claimed> = emitted
        .downlinks
        .into_iter()
        .filter_map(|line| match line {
            Downlink::Claimed(claimed) => Some(claimed),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 1, "exactly one answer per claim");
    answers.into_iter().next().unwrap()
}

#[test]
fn a_claim_grants_pending_files_which_then_never_ring() {
    let mut driver = started(&["001.md", "002.md", "003.md"]);
    driver.input(
        line(1, "inc-1", r#""kind":"claim","claim":7,"limit":2"#),
        at(10),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.claim, 7);
    assert_eq!(answer.granted, names(&["001.md", "002.md"]));
    assert_eq!(answer.not_granted, 1);
    assert_eq!(
        driver.engine.journal().entries.len(),
        2,
        "the grant is ownership the journal keeps"
    );
    assert!(matches!(
        state(&driver, "001.md"),
        Some(MessageState::HookOwned { .. })
    ));
    // A fresh idle lease rings only what the hook did not take.
    driver.input(idle(2, "empty", 10), at(20));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.send_ifs.len(), 1);
    assert_eq!(emitted.send_ifs[0].messages, names(&["003.md"]));
}

#[test]
fn a_claim_never_takes_a_file_a_transaction_is_typing() {
    let mut driver = started(&["001.md", "002.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.send_ifs[0].messages, names(&["001.md", "002.md"]));
    driver.input(
        line(
            2,
            "inc-1",
            r#""kind":"claim","claim":1,"messages":["001.md","002.md"],"scope":"unread""#,
        ),
        at(20),
    );
    let answer = claimed(&mut driver);
    assert!(answer.granted.is_empty());
    assert_eq!(answer.refused.len(), 2);
    assert!(
        answer
            .refused
            .iter()
            .all(|refusal| refusal.state == RefusedState::InFlight)
    );
}

#[test]
fn scope_pending_refuses_owned_files_and_scope_unread_surfaces_them_again() {
    let mut driver = started(&["001.md", "002.md", "003.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    driver.input(
        Input::PtySent {
            request: 1,
            revision: 12,
        },
        at(11),
    );
    driver.submit_typed(typed(2, 13, 1), at(300), 14);
    driver.input(Input::InboxAdded(name("004.md")), at(312));
    driver.take();
    driver.input(
        line(
            4,
            "inc-1",
            r#""kind":"claim","claim":2,"messages":["001.md","004.md"]"#,
        ),
        at(320),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.granted, names(&["004.md"]));
    assert_eq!(answer.refused.len(), 1);
    assert_eq!(answer.refused[0].state, RefusedState::Staged);
    // A compacted context gets the whole backlog again, staged work included.
    driver.input(
        line(
            5,
            "inc-1",
            r#""kind":"claim","claim":3,"limit":10,"scope":"unread""#,
        ),
        at(330),
    );
    let answer = claimed(&mut driver);
    assert_eq!(
        answer.granted,
        names(&["001.md", "002.md", "003.md", "004.md"])
    );
    assert!(matches!(
        state(&driver, "002.md"),
        Some(MessageState::HookOwned { .. })
    ));
}

/// `001.md` typed and submitted (staged), then the context compacted
/// (sequence 3, at 320 ms), then `002.md` arrives (pending).
fn rung_then_compacted_with_a_new_arrival() -> Driver {
    let mut driver = started(&["001.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    driver.input(
        Input::PtySent {
            request: 1,
            revision: 12,
        },
        at(11),
    );
    driver.submit_typed(typed(2, 13, 1), at(300), 14);
    driver.input(
        line(3, "inc-1", r#""kind":"lifecycle","event":"compaction""#),
        at(320),
    );
    driver.input(Input::InboxAdded(name("002.md")), at(321));
    driver
}

/// Found by the whole-agent simulation (Codex, seed 3926): after a
/// compaction the notice typed at the idle screen and the next prompt's
/// `unread` backlog named the same file in one request. A file rung since
/// the context began again was typed into the new context.
#[test]
fn scope_unread_leaves_out_a_file_rung_since_the_context_began_again() {
    let mut driver = rung_then_compacted_with_a_new_arrival();
    driver.input(idle(4, "empty", 14), at(330));
    driver.input(
        Input::PtySent {
            request: 3,
            revision: 15,
        },
        at(331),
    );
    driver.submit_typed(typed(5, 16, 3), at(600), 17);
    driver.take();
    assert!(matches!(
        state(&driver, "002.md"),
        Some(MessageState::Staged { .. })
    ));
    driver.input(
        line(
            6,
            "inc-1",
            r#""kind":"claim","claim":3,"limit":10,"scope":"unread""#,
        ),
        at(640),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.granted, names(&["001.md"]), "{answer:?}");
    driver.input(
        line(
            7,
            "inc-1",
            r#""kind":"claim","claim":4,"messages":["002.md"],"scope":"unread""#,
        ),
        at(641),
    );
    let answer = claimed(&mut driver);
    assert!(answer.granted.is_empty(), "{answer:?}");
    assert_eq!(answer.refused[0].state, RefusedState::Staged);
}

/// Scope `delivered` (issue 21: after a `/compact` at idle, `SessionStart`
/// claimed the whole backlog, new files included, into a context no
/// request carried until the person's next prompt): only files already
/// rung or injected come back; a pending file, and a named one not seen
/// yet, are refused `pending` and stay for the idle path.
#[test]
fn scope_delivered_surfaces_what_was_given_and_leaves_new_work_to_the_idle_path() {
    let mut driver = rung_then_compacted_with_a_new_arrival();
    driver.take();
    driver.input(
        line(
            4,
            "inc-1",
            r#""kind":"claim","claim":3,"limit":10,"scope":"delivered""#,
        ),
        at(340),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.granted, names(&["001.md"]), "{answer:?}");
    assert_eq!(state(&driver, "002.md"), Some(MessageState::Pending));
    driver.input(
        line(
            5,
            "inc-1",
            r#""kind":"claim","claim":4,"messages":["002.md","009.md"],"scope":"delivered""#,
        ),
        at(341),
    );
    let answer = claimed(&mut driver);
    assert!(answer.granted.is_empty(), "{answer:?}");
    let refused: Vec<(&str, RefusedState)> = answer
        .refused
        .iter()
        .map(|refusal| (refusal.name.as_str(), refusal.state))
        .collect();
    assert_eq!(
        refused,
        [
            ("002.md", RefusedState::Pending),
            ("009.md", RefusedState::Pending)
        ]
    );
    // Not remembered as a hook's: once seen, it is pending work.
    driver.input(Input::InboxAdded(name("009.md")), at(342));
    assert_eq!(state(&driver, "009.md"), Some(MessageState::Pending));
}

#[test]
fn a_claim_is_refused_whole_for_another_incarnation_an_unknown_pty_or_a_stale_sequence() {
    let mut driver = started(&["001.md"]);
    driver.input(
        line(5, "inc-0", r#""kind":"claim","claim":1,"limit":5"#),
        at(10),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.refusal, Some(ClaimRefusal::IdentityMismatch));
    assert!(answer.granted.is_empty());
    driver.input(
        line(4, "inc-1", r#""kind":"claim","claim":2,"limit":5"#),
        at(20),
    );
    assert_eq!(
        claimed(&mut driver).refusal,
        Some(ClaimRefusal::StaleSequence)
    );
    assert_eq!(state(&driver, "001.md"), Some(MessageState::Pending));

    let config = ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
    let mut fresh = Driver::new(Engine::new(config, None, Time::ZERO));
    fresh.input(Input::AdapterSpawned { pid: 9 }, Time::ZERO);
    fresh.input(
        line(1, "inc-1", r#""kind":"claim","claim":3,"limit":5"#),
        at(1),
    );
    assert_eq!(claimed(&mut fresh).refusal, Some(ClaimRefusal::PtyUnknown));
}

#[test]
fn a_claimed_file_the_watch_has_not_reported_is_hook_owned_when_it_appears() {
    let mut driver = started(&[]);
    claim_unseen_file(&mut driver);
    assert_eq!(claimed(&mut driver).granted, names(&["009.md"]));
    driver.input(idle(2, "empty", 10), at(11));
    driver.input(Input::InboxAdded(name("009.md")), at(12));
    let (emitted, _) = driver.take();
    assert!(emitted.send_ifs.is_empty(), "the hook injected it: no ring");
    assert!(matches!(
        state(&driver, "009.md"),
        Some(MessageState::HookOwned { .. })
    ));
}

#[test]
fn evidence_is_wanted_exactly_while_work_waits_for_the_terminal() {
    let mut driver = started(&[]);
    let config = ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
    let mut spawned = Driver::new(Engine::new(config, None, Time::ZERO));
    spawned.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 3,
        },
        Time::ZERO,
    );
    spawned.input(Input::AdapterSpawned { pid: 4 }, at(1));
    let (emitted, _) = spawned.take();
    assert_eq!(
        emitted.downlinks,
        [
            Downlink::Pty {
                identity: Some(identity("inc-1"))
            },
            Downlink::Evidence { wanted: false }
        ],
        "a new adapter hears the identity, then the demand"
    );

    driver.input(Input::InboxAdded(name("001.md")), at(10));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.downlinks, [Downlink::Evidence { wanted: true }]);
    driver.input(idle(1, "empty", 10), at(20));
    assert!(
        driver.take().0.downlinks.is_empty(),
        "in flight still wants evidence: a conflict returns it"
    );
    driver.input(
        Input::PtySent {
            request: 1,
            revision: 12,
        },
        at(21),
    );
    let downlinks = driver.take().0.downlinks;
    assert!(
        matches!(downlinks.as_slice(), [Downlink::Typed { request: 1, .. }]),
        "a pasted notice still wants evidence, for its Return: {downlinks:?}"
    );
    driver.submit_typed(typed(2, 13, 1), at(250), 14);
    assert_eq!(
        driver.take().0.downlinks,
        [Downlink::Evidence { wanted: false }]
    );
    assert_eq!(
        driver.engine.next_deadline(),
        Some(at(250 + 600_000)),
        "only the re-ring timer is armed"
    );
}

#[test]
fn an_identity_change_is_told_to_the_adapter() {
    let mut driver = started(&[]);
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-2"),
            revision: 20,
        },
        at(5),
    );
    assert_eq!(
        driver.take().0.downlinks,
        [Downlink::Pty {
            identity: Some(identity("inc-2"))
        }]
    );
}

#[test]
fn a_mismatch_reply_ends_the_lease_and_returns_the_files() {
    let mut driver = started(&["001.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    driver.take();
    driver.input(
        Input::PtyMismatch {
            request: 1,
            part: IdentityPart::Incarnation,
            actual: 40,
        },
        at(11),
    );
    assert_eq!(state(&driver, "001.md"), Some(MessageState::Pending));
    let status = driver.engine.status(at(11));
    let hold = status.messages[0].hold.as_ref().expect("held");
    assert_eq!(hold.reason.code(), "identity-mismatch");
    assert!(driver.take().0.send_ifs.is_empty());
}

#[test]
fn an_exited_harness_holds_work_until_a_new_incarnation() {
    let mut driver = started(&["001.md"]);
    harness_exits(&mut driver, None, "exit code 3", at(10));
    driver.input(idle(1, "empty", 10), at(20));
    let status = driver.engine.status(at(20));
    assert_eq!(
        status.messages[0].describe(at(20)),
        "001.md  held: harness exited (exit code 3) (pty, 10 ms ago)"
    );
    // Output and status of the dead harness change nothing.
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 11,
        },
        at(30),
    );
    assert!(driver.take().0.send_ifs.is_empty());
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-2"),
            revision: 12,
        },
        at(40),
    );
    driver.input(
        line(
            2,
            "inc-2",
            r#""kind":"activity","state":"idle","validForMs":2000,"composer":"empty","revision":12"#,
        ),
        at(41),
    );
    assert_eq!(driver.take().0.send_ifs.len(), 1, "the new harness gets it");
}

#[test]
fn a_send_refused_because_the_harness_exited_writes_nothing_and_holds() {
    let mut driver = started(&["001.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    driver.take();
    harness_exits(&mut driver, Some(1), "exited", at(11));
    assert_eq!(state(&driver, "001.md"), Some(MessageState::Pending));
    let status = driver.engine.status(at(11));
    assert_eq!(
        status.messages[0].hold.as_ref().unwrap().reason.code(),
        "harness-exited"
    );
}

#[test]
fn an_exited_harness_stays_held_through_an_outage_and_a_reply_timeout() {
    // An outage, then a status of the same (dead) harness.
    let mut driver = started(&["001.md"]);
    harness_exits(&mut driver, None, "exit code 3", at(10));
    driver.input(Input::PtyUnreachable, at(20));
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 11,
        },
        at(30),
    );
    driver.input(idle(1, "empty", 11), at(40));
    assert!(driver.take().0.send_ifs.is_empty());
    let hold = driver.engine.status(at(40)).messages[0]
        .hold
        .clone()
        .unwrap();
    assert_eq!(hold.reason.code(), "harness-exited");

    // A transaction in flight when the harness exits, whose reply never comes.
    let mut driver = started(&["001.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    harness_exits(&mut driver, None, "exit code 3", at(11));
    driver.run_until(at(60_000));
    driver.input(idle(2, "empty", 10), at(60_000));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.send_ifs.len(), 1, "only the first attempt");
    let status = driver.engine.status(at(60_000));
    assert_eq!(
        status.messages[0].state,
        MessageState::Staged {
            incarnation: Some("inc-1".into()),
            confirmed: false
        }
    );
    driver.input(Input::InboxAdded(name("002.md")), at(60_001));
    driver.input(idle(3, "empty", 10), at(60_002));
    assert!(driver.take().0.send_ifs.is_empty(), "no retry revives it");
    let hold = driver.engine.status(at(60_002)).messages[1]
        .hold
        .clone()
        .unwrap();
    assert_eq!(hold.reason.code(), "harness-exited");
    assert_eq!(
        driver.engine.next_deadline(),
        // The reply timed out at 10 + 5 s, staging the file unconfirmed.
        Some(at(5_010 + 600_000)),
        "only the re-ring timer: a dead harness is not retried"
    );
}

#[test]
fn evidence_is_not_wanted_for_a_transaction_whose_files_a_hook_took() {
    let mut driver = started(&["001.md"]);
    driver.input(idle(1, "empty", 10), at(10));
    driver.take();
    // A hook injects the file while its transaction is in flight.
    driver.input(
        line(
            2,
            "inc-1",
            r#""kind":"turn-boundary","messages":["001.md"]"#,
        ),
        at(11),
    );
    assert!(driver.engine.is_in_flight());
    assert_eq!(
        driver.take().0.downlinks,
        [Downlink::Evidence { wanted: false }],
        "nothing the terminal could deliver is left"
    );
}

#[test]
fn a_claimed_file_seen_later_is_journaled_when_it_becomes_hook_owned() {
    let mut driver = started(&[]);
    claim_unseen_file(&mut driver);
    driver.take();
    driver.input(Input::InboxAdded(name("009.md")), at(12));
    let (emitted, _) = driver.take();
    let journal = emitted
        .journals
        .last()
        .expect("the new ownership is journaled when the file is seen");
    let owned: Vec<&str> = journal.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(owned, ["009.md"]);
}

#[test]
fn a_clear_returns_a_file_claimed_before_it_was_seen_to_pending() {
    let mut driver = started(&[]);
    claim_unseen_file(&mut driver);
    // The context the hook injected it into is gone.
    driver.input(
        line(2, "inc-1", r#""kind":"lifecycle","event":"clear""#),
        at(11),
    );
    driver.input(Input::InboxAdded(name("009.md")), at(12));
    assert_eq!(state(&driver, "009.md"), Some(MessageState::Pending));
    driver.take();
    driver.input(idle(3, "empty", 10), at(13));
    assert_eq!(
        driver.take().0.send_ifs[0].messages,
        names(&["009.md"]),
        "it rings like any other pending file"
    );
}

#[test]
fn a_claim_with_a_name_budget_grants_only_what_its_hook_can_name() {
    let long = "x".repeat(200);
    let files = [format!("001-{long}.md"), "002.md".into(), "003.md".into()];
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut driver = started(&refs);
    // The first name alone is over the budget: it is granted anyway, the
    // rest wait for the next claim.
    driver.input(
        line(
            1,
            "inc-1",
            r#""kind":"claim","claim":1,"limit":3,"nameBytes":20"#,
        ),
        at(10),
    );
    let answer = claimed(&mut driver);
    assert_eq!(answer.granted, names(&[refs[0]]));
    assert_eq!(
        answer
            .refused
            .iter()
            .map(|refusal| (refusal.name.as_str(), refusal.state))
            .collect::<Vec<_>>(),
        [
            ("002.md", RefusedState::OverBudget),
            ("003.md", RefusedState::OverBudget)
        ]
    );
    assert_eq!(state(&driver, "002.md"), Some(MessageState::Pending));
    // "002.md, 003.md" is 14 bytes.
    driver.input(
        line(
            2,
            "inc-1",
            r#""kind":"claim","claim":2,"limit":3,"nameBytes":14"#,
        ),
        at(20),
    );
    assert_eq!(claimed(&mut driver).granted, names(&["002.md", "003.md"]));
}

/// An adapter that dies between granting a claim and hearing that its hook
/// printed the files leaves them in doubt: its hook saw the connection
/// close and printed nothing, so they are pending again (at least once).
/// Files a hook said it printed (`printed`) are delivered and stay
/// hook-owned; so does anything a receipt named after the fact.
#[test]
fn files_a_dying_adapter_granted_and_no_hook_printed_are_pending_again() {
    let mut driver = started(&["001.md", "002.md", "003.md"]);
    driver.input(
        line(
            1,
            "inc-1",
            r#""kind":"claim","claim":1,"messages":["001.md"]"#,
        ),
        at(10),
    );
    driver.input(
        line(
            2,
            "inc-1",
            r#""kind":"claim","claim":2,"messages":["002.md"]"#,
        ),
        at(11),
    );
    driver.input(
        line(3, "inc-1", r#""kind":"printed","messages":["002.md"]"#),
        at(12),
    );
    driver.input(
        line(
            4,
            "inc-1",
            r#""kind":"turn-boundary","messages":["003.md"]"#,
        ),
        at(13),
    );
    driver.input(Input::AdapterEof, at(20));
    assert_eq!(state(&driver, "001.md"), Some(MessageState::Pending));
    for delivered in ["002.md", "003.md"] {
        assert!(
            matches!(
                state(&driver, delivered),
                Some(MessageState::HookOwned { .. })
            ),
            "{delivered}"
        );
    }
    // The adapter's exit after its end changes nothing more.
    driver.input(
        Input::AdapterExited {
            status: "signal 9".into(),
        },
        at(21),
    );
    assert_eq!(state(&driver, "001.md"), Some(MessageState::Pending));
}

/// A sidecar started again from its journal knows no moment its harness's
/// context began before its own start: from then on, what a hook takes
/// went into the context there is, so a second backlog claim (the same
/// `SessionStart` run twice) is refused it, as in any context.
#[test]
fn after_a_restart_a_second_backlog_claim_is_refused_what_the_first_took() {
    let config = ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
    let journal = ding::core::journal::Journal::new(Vec::new());
    let mut driver = Driver::new(Engine::new(config, Some(&journal), at(1_000)));
    driver.input(Input::AdapterSpawned { pid: 9 }, at(1_000));
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 10,
        },
        at(1_000),
    );
    driver.input(Input::InboxScan(names(&["001.md"])), at(1_000));
    driver.take();
    driver.input(
        line(
            1,
            "inc-1",
            r#""kind":"claim","claim":1,"limit":4,"scope":"unread""#,
        ),
        at(1_010),
    );
    assert_eq!(claimed(&mut driver).granted, names(&["001.md"]));
    driver.input(
        line(
            2,
            "inc-1",
            r#""kind":"claim","claim":2,"limit":4,"scope":"unread""#,
        ),
        at(1_020),
    );
    let second = claimed(&mut driver);
    assert!(second.granted.is_empty(), "{second:?}");
}

/// Found past `make test`'s seeds (agent seed 291065, Codex, issue 39): a
/// file a prompt's hook took before a compaction, and the compacted
/// context's backlog event run twice (its hook duplicated). The first
/// backlog claim surfaced the file into the new context; the second was
/// granted it too, because a file its harness already owned kept the
/// moment it was first taken, from before the context began. A backlog
/// claim hands its files into the context there is, so the twin is
/// refused them.
#[test]
fn a_backlog_claim_run_twice_after_a_compaction_surfaces_a_hooks_file_once() {
    let mut driver = started(&["001.md"]);
    driver.input(
        line(
            1,
            "inc-1",
            r#""kind":"claim","claim":1,"limit":4,"scope":"pending""#,
        ),
        at(100),
    );
    assert_eq!(claimed(&mut driver).granted, names(&["001.md"]));
    driver.input(
        line(2, "inc-1", r#""kind":"lifecycle","event":"compaction""#),
        at(500),
    );
    let mut backlog = |sequence: u64, claim: u64| {
        driver.input(
            line(
                sequence,
                "inc-1",
                &format!(r#""kind":"claim","claim":{claim},"limit":4,"scope":"unread""#),
            ),
            at(600),
        );
        claimed(&mut driver)
    };
    let first = backlog(3, 2);
    assert_eq!(first.granted, names(&["001.md"]), "{first:?}");
    let second = backlog(4, 3);
    assert!(second.granted.is_empty(), "{second:?}");
    assert_eq!(second.refused.len(), 0, "a limit claim names no refusal");
}
