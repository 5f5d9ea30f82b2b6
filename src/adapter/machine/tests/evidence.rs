//! Evidence: stamped with the snapshot's revision and given only while
//! wanted, naming the typed notice, read again only when something moves,
//! and held while a new screen settles.

use super::*;

#[test]
fn with_nothing_wanted_nothing_waits_on_time_and_no_terminal_is_opened() {
    let mut machine = machine();
    assert_eq!(machine.next_deadline(), None);
    machine.handle_timeout(at(1_000_000));
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), None);
}

#[test]
fn evidence_is_stamped_with_the_snapshots_revision_and_only_while_wanted() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(snapshot(7), at(5));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(activity)] if activity.revision == Some(7)),
        "{lines:?}"
    );
    // Nothing moved: ready evidence is read again on the heartbeat.
    assert_eq!(machine.next_deadline(), Some(at(5) + HEARTBEAT));
    machine.handle_input(Input::PtyMoved, at(10));
    // At least the gap after the last one.
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), Some(at(0) + MIN_SNAPSHOT_GAP));
    machine.handle_timeout(at(0) + MIN_SNAPSHOT_GAP);
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    // Wanted no more: the terminal is closed and a late snapshot says
    // nothing.
    machine.handle_input(wanted(false), at(30));
    assert_eq!(drain(&mut machine), [Output::PtyClose]);
    machine.handle_input(snapshot(8), at(31));
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), None);
}

/// The Return of a typed notice waits for evidence naming it: the machine
/// names the notice the downlink told it of only on an idle screen whose
/// composer holds that text and nothing else, and forgets it with the
/// terminal.
#[test]
fn evidence_names_a_typed_notice_only_while_the_composer_holds_it_alone() {
    let notice = "[ding] 1 unread inbox message in /in: a.md";
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(
        downlink(Downlink::Typed {
            request: 4,
            text: notice.into(),
        }),
        at(1),
    );
    let typed_of = |machine: &mut AdapterMachine<Probe>, revision: u64, now: Time| {
        machine.handle_input(snapshot(revision), now);
        let outputs = drain(machine);
        match &uplinked(&outputs)[..] {
            [Body::Activity(activity)] => activity.typed,
            other => panic!("one activity: {other:?}"),
        }
    };
    let nonempty = Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    };
    machine.provider.screen = Some(nonempty.clone());
    machine.provider.composer = Some(format!("{notice} and more"));
    assert_eq!(typed_of(&mut machine, 5, at(300)), None, "not alone");
    machine.provider.composer = Some(notice.replace(' ', "\n  "));
    assert_eq!(typed_of(&mut machine, 6, at(600)), Some(4), "wrapped");
    machine.provider.screen = Some(Reading {
        state: ActivityState::Unknown,
        ..nonempty.clone()
    });
    assert_eq!(typed_of(&mut machine, 7, at(900)), None, "not idle");
    machine.provider.screen = Some(nonempty);
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(1_000),
    );
    drain(&mut machine);
    assert_eq!(
        typed_of(&mut machine, 8, at(1_300)),
        None,
        "a new terminal holds no notice of the old"
    );
}

#[test]
fn a_lost_terminal_says_unknown_without_a_revision_and_retries_while_wanted() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(Input::PtyLost("gone".into()), at(100));
    let outputs = drain(&mut machine);
    assert_eq!(outputs[0], Output::PtyClose);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(activity)]
            if activity.revision.is_none() && activity.state == ActivityState::Unknown),
        "{lines:?}"
    );
    assert_eq!(machine.next_deadline(), Some(at(100) + PTY_RETRY));
    machine.handle_timeout(at(100) + PTY_RETRY);
    assert_eq!(drain(&mut machine), [Output::PtyOpen]);
}

/// The activity states among `outputs`.
fn states(outputs: &[Output]) -> Vec<ActivityState> {
    uplinked(outputs)
        .into_iter()
        .filter_map(|line| match line {
            Body::Activity(activity) => Some(activity.state),
            _ => None,
        })
        .collect()
}

#[test]
fn a_new_screen_is_read_until_it_settles_whether_or_not_work_waits() {
    let settle = Duration::from_millis(1_500);
    let provider = Probe {
        startup_settle: settle,
        ..Probe::default()
    };
    let mut machine = AdapterMachine::new(
        provider,
        agent(),
        Pacing::default(),
        Some(identity("i")),
        true,
        at(0),
    );
    // Nothing is wanted, yet the new terminal is opened and read.
    assert_eq!(drain(&mut machine), [Output::PtyOpen]);
    assert!(machine.reads_only_to_settle());
    machine.handle_input(Input::PtyOpened, at(1));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(1), at(5));
    assert!(
        uplinked(&drain(&mut machine)).is_empty(),
        "no evidence unasked"
    );
    // Read again once it would have settled; then the terminal is closed.
    assert_eq!(machine.next_deadline(), Some(at(5) + settle));
    machine.handle_timeout(at(5) + settle);
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(1), at(1_510));
    assert_eq!(drain(&mut machine), [Output::PtyClose]);
    assert_eq!(machine.next_deadline(), None, "nothing waits on time");
    // A message long after: its first idle reading is evidence at once.
    assert!(!machine.reads_only_to_settle(), "settled");
    machine.handle_input(wanted(true), at(12_000));
    assert_eq!(drain(&mut machine), [Output::PtyOpen]);
    assert!(!machine.reads_only_to_settle(), "read for work");
    machine.handle_input(Input::PtyOpened, at(12_001));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(2), at(12_005));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Idle]);
    // A new terminal is read until it settles again.
    machine.handle_input(wanted(false), at(13_000));
    assert_eq!(drain(&mut machine), [Output::PtyClose]);
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(14_000),
    );
    assert_eq!(drain(&mut machine), [Output::PtyOpen]);
}

#[test]
fn a_new_screen_counts_as_idle_only_once_it_has_read_idle_for_the_settle_time() {
    let mut machine = machine();
    machine.provider.startup_settle = Duration::from_millis(1_500);
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // The first composer frame: not idle yet, and no wake claims on it.
    machine.handle_input(snapshot(3), at(1_010));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    machine.handle_timeout(at(1_200));
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim");
    // A dialog replaces it: the wait starts again at the next idle screen.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Unknown,
        composer: Composer::Unknown,
        reason: "a selection list".into(),
    });
    machine.handle_input(Input::PtyMoved, at(1_300));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_310));
    drain(&mut machine);
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(3_000));
    drain(&mut machine);
    machine.handle_input(snapshot(5), at(3_010));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    // Read again once it would have settled, unasked: now idle (held by
    // the wake, which claims).
    machine.handle_timeout(at(4_509));
    let early = drain(&mut machine);
    assert!(!early.contains(&Output::PtySnapshot), "{early:?}");
    assert!(uplinked(&early).is_empty(), "no claim yet: {early:?}");
    assert_eq!(machine.next_deadline(), Some(at(4_510)));
    machine.handle_timeout(at(4_510));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(5), at(4_520));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    machine.handle_timeout(at(4_620));
    let claims = uplinked(&drain(&mut machine))
        .into_iter()
        .filter(|line| matches!(line, Body::Claim(_)))
        .count();
    assert_eq!(claims, 1, "the wake claims on the settled screen");
    // A new terminal is new again.
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(5_000),
    );
    drain(&mut machine);
    machine.handle_input(snapshot(6), at(5_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        lines.iter().any(|line| matches!(line, Body::Activity(a) if a.reason.as_deref().is_some_and(|why| why.contains("screen is new")))),
        "{lines:?}"
    );
}

/// Evidence that holds is read again only on an event: a move, or the
/// moment the provider says time alone changes its verdict. A held
/// message costs no wake-up while nothing happens (issue 36, item 13).
#[test]
fn evidence_that_holds_is_read_again_only_when_something_moves() {
    let mut machine = machine();
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(snapshot(7), at(5));
    assert_eq!(uplinked(&drain(&mut machine)).len(), 1);
    assert_eq!(machine.next_deadline(), None, "no heartbeat for a hold");
    // The person clears the draft: the move is read.
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(60_000));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(8), at(60_001));
    drain(&mut machine);
    assert_eq!(machine.next_deadline(), Some(at(60_001) + HEARTBEAT));
    // A hook's grace that runs out changes the verdict with no move.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Empty,
        reason: "a hook said a turn runs".into(),
    });
    machine.provider.changes_at = Some(at(63_000));
    machine.handle_input(Input::PtyMoved, at(62_000));
    machine.handle_input(snapshot(9), at(62_001));
    drain(&mut machine);
    assert_eq!(machine.next_deadline(), Some(at(63_000)));
    machine.provider.changes_at = None;
    machine.handle_timeout(at(63_000));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
}

#[test]
fn an_unreadable_downlink_line_is_logged_and_changes_nothing() {
    let mut machine = machine();
    machine.handle_input(Input::Downlink(b"{not json\n".to_vec()), at(0));
    let outputs = drain(&mut machine);
    assert!(matches!(&outputs[..], [Output::Log(_)]), "{outputs:?}");
    machine.handle_input(Input::DownlinkClosed, at(1));
    assert!(machine.is_done());
}
