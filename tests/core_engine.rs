//! Engine behaviours that need more than one engine or a close look at
//! status: journal restore across a restart, status wording, and the promise
//! that an idle engine asks for no wake-ups.

mod support;

use ding::core::config::{EngineConfig, Policy};
use ding::core::engine::{Engine, Input};
use ding::core::identity::Identity;
use ding::core::journal::{Journal, Owner};
use ding::core::message::MessageName;
use ding::core::ownership::MessageState;
use ding::core::time::Time;
use serde_json::{Value, json};
use support::core_driver::{Driver, decision_tags, ungathered};

fn name(text: &str) -> MessageName {
    MessageName::new(text).unwrap()
}

fn identity(incarnation: &str) -> Identity {
    Identity {
        session: "host.worker".into(),
        incarnation: incarnation.into(),
        generation: "sha256:g".into(),
    }
}

fn idle_line(sequence: u64, incarnation: &str, composer: &str, revision: u64) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},"state":"idle","validForMs":1000,"composer":"{composer}","revision":{revision}}}"#
    )
    .into_bytes()
}

/// Idle evidence that the composer holds exactly the notice pasted as
/// `request`, at `revision`: what its Return waits for.
fn typed_line(sequence: u64, incarnation: &str, revision: u64, request: u64) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},"state":"idle","validForMs":1000,"composer":"nonempty","revision":{revision},"typed":{request}}}"#
    )
    .into_bytes()
}

fn receipt_line(sequence: u64, incarnation: &str, files: &[&str]) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"turn-boundary","session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},"messages":{}}}"#,
        serde_json::to_string(files).unwrap()
    )
    .into_bytes()
}

fn careful() -> EngineConfig {
    ungathered(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new")
}

/// A careful engine with its adapter up and the PTY known at `incarnation`.
fn started(journal: Option<&Journal>, incarnation: &str, at: u64) -> Driver {
    let mut driver = Driver::new(Engine::new(careful(), journal, Time::from_millis(at)));
    driver.input(Input::AdapterSpawned { pid: 9 }, Time::from_millis(at));
    driver.input(
        Input::PtyStatus {
            identity: identity(incarnation),
            revision: 10,
        },
        Time::from_millis(at),
    );
    driver
}

/// Runs a first engine to hook-own 001 and stage 002, and returns its journal.
fn journal_with_owned_work() -> Journal {
    let mut first = started(None, "inc-1", 0);
    first.input(
        Input::InboxScan(vec![name("001.md"), name("002.md")]),
        Time::from_millis(1),
    );
    first.input(
        Input::AdapterLine(receipt_line(1, "inc-1", &["001.md"])),
        Time::from_millis(2),
    );
    first.input(
        Input::AdapterLine(idle_line(2, "inc-1", "empty", 10)),
        Time::from_millis(3),
    );
    first.input(
        Input::PtySent {
            request: 1,
            revision: 11,
        },
        Time::from_millis(4),
    );
    first.submit_typed(
        Input::AdapterLine(typed_line(3, "inc-1", 12, 1)),
        Time::from_millis(300),
        13,
    );
    let (emitted, _) = first.take();
    let journal = emitted
        .journals
        .last()
        .cloned()
        .expect("ownership changes emit a journal");
    assert_eq!(journal, first.engine.journal());
    let owners: Vec<(String, Owner)> = journal
        .entries
        .iter()
        .map(|e| (e.name.to_string(), e.owner))
        .collect();
    assert_eq!(
        owners,
        [
            ("001.md".to_string(), Owner::HookOwned),
            ("002.md".to_string(), Owner::Staged)
        ]
    );
    journal
}

#[test]
fn restart_with_the_journal_keeps_ownership_for_the_same_incarnation() {
    let journal = journal_with_owned_work();
    // The restarted sidecar sees a new file too; only that one may ring.
    let mut second = started(Some(&journal), "inc-1", 50);
    second.input(
        Input::InboxScan(vec![name("001.md"), name("002.md"), name("003.md")]),
        Time::from_millis(51),
    );
    second.input(
        Input::AdapterLine(idle_line(1, "inc-1", "empty", 10)),
        Time::from_millis(52),
    );
    let (emitted, _) = second.take();
    assert_eq!(emitted.send_ifs.len(), 1);
    assert_eq!(
        emitted.send_ifs[0].messages,
        vec![name("003.md")],
        "hook-owned and staged work is not rung again"
    );
    let status = second.engine.status(Time::from_millis(52));
    assert!(matches!(
        status.messages[0].state,
        MessageState::HookOwned { .. }
    ));
    assert!(matches!(
        status.messages[1].state,
        MessageState::Staged { .. }
    ));
}

#[test]
fn restart_under_a_new_incarnation_releases_journaled_ownership() {
    let journal = journal_with_owned_work();
    let mut second = started(Some(&journal), "inc-2", 50);
    second.input(
        Input::InboxScan(vec![name("001.md"), name("002.md")]),
        Time::from_millis(51),
    );
    second.input(
        Input::AdapterLine(idle_line(1, "inc-2", "empty", 10)),
        Time::from_millis(52),
    );
    let (emitted, _) = second.take();
    assert_eq!(emitted.send_ifs.len(), 1);
    assert_eq!(
        emitted.send_ifs[0].messages,
        vec![name("001.md"), name("002.md")]
    );
}

#[test]
fn a_new_incarnation_reported_before_the_first_scan_still_rewrites_the_journal() {
    let journal = journal_with_owned_work();
    let config = careful();
    let mut second = Driver::new(Engine::new(config, Some(&journal), Time::from_millis(50)));
    // The host answers before the inbox is listed, and it runs another harness.
    second.input(
        Input::PtyStatus {
            identity: identity("inc-2"),
            revision: 10,
        },
        Time::from_millis(50),
    );
    assert!(
        second.take().0.journals.is_empty(),
        "no write before the scan: it would erase what the scan restores"
    );
    second.input(
        Input::InboxScan(vec![name("001.md"), name("002.md")]),
        Time::from_millis(51),
    );
    let (emitted, _) = second.take();
    assert_eq!(
        emitted.journals,
        [Journal::new(Vec::new())],
        "the journal on disk must stop naming the old harness's files"
    );
}

fn adapter_line(sequence: u64, incarnation: &str, rest: &str) -> Input {
    Input::AdapterLine(
        format!(
            r#"{{"v":1,"session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},{rest}}}"#
        )
        .into_bytes(),
    )
}

#[test]
fn every_input_that_changes_ownership_emits_one_journal_changed() {
    let idle =
        |sequence, incarnation| Input::AdapterLine(idle_line(sequence, incarnation, "empty", 10));
    let typed = |sequence, incarnation, request| {
        Input::AdapterLine(typed_line(sequence, incarnation, 12, request))
    };
    let sent = |request| Input::PtySent {
        request,
        revision: 11,
    };
    let re_ring = 10 * 60 * 1000;
    // Each input, when, and the owned files after it if it changed them
    // (`None`: it must not emit JournalChanged). A paste owns nothing yet:
    // its files are staged when the Return it waited for is written.
    let script: Vec<(Input, u64, Option<&[&str]>)> = vec![
        (
            Input::InboxScan(vec![name("001.md"), name("002.md"), name("003.md")]),
            1,
            None,
        ),
        (
            Input::AdapterLine(receipt_line(1, "inc-1", &["001.md"])),
            2,
            Some(&["001.md"]),
        ),
        (idle(2, "inc-1"), 3, None),
        (sent(1), 4, None),
        (typed(3, "inc-1", 1), 300, None),
        (sent(2), 301, Some(&["001.md", "002.md", "003.md"])),
        (Input::InboxAdded(name("004.md")), 305, None),
        (idle(4, "inc-1"), 306, None),
        (
            Input::PtyConflict {
                request: 3,
                actual: 12,
            },
            307,
            None,
        ),
        (
            Input::InboxRemoved(name("002.md")),
            308,
            Some(&["001.md", "003.md"]),
        ),
        (
            adapter_line(5, "inc-1", r#""kind":"claim","claim":1,"limit":1"#),
            309,
            Some(&["001.md", "003.md", "004.md"]),
        ),
        (
            Input::InboxRemoved(name("004.md")),
            310,
            Some(&["001.md", "003.md"]),
        ),
        (Input::InboxAdded(name("005.md")), 311, None),
        (Input::InboxRemoved(name("005.md")), 312, None),
        (
            adapter_line(6, "inc-1", r#""kind":"lifecycle","event":"clear""#),
            313,
            Some(&[]),
        ),
        (idle(7, "inc-1"), 314, None),
        // The host vanishes mid-transaction: staged, unconfirmed.
        (Input::PtyUnreachable, 315, Some(&["001.md", "003.md"])),
        (
            Input::PtyStatus {
                identity: identity("inc-1"),
                revision: 12,
            },
            316,
            None,
        ),
        (
            Input::PtyStatus {
                identity: identity("inc-2"),
                revision: 13,
            },
            317,
            Some(&[]),
        ),
        (idle(8, "inc-2"), 318, None),
        (sent(5), 319, None),
        (typed(9, "inc-2", 5), 600, None),
        (sent(6), 601, Some(&["001.md", "003.md"])),
        (Input::InboxAdded(name("006.md")), 602, None),
        (idle(10, "inc-2"), 603, None),
    ];
    let mut driver = started(None, "inc-1", 0);
    driver.take();
    for (step, (input, at, owned)) in script.into_iter().enumerate() {
        let what = match &input {
            Input::AdapterLine(line) => format!("step {step}: {}", String::from_utf8_lossy(line)),
            other => format!("step {step}: {other:?}"),
        };
        driver.input(input, Time::from_millis(at));
        check_journal_output(&mut driver, owned, &what);
    }
    // Timers change ownership too: the reply timeout stages, unconfirmed.
    driver.run_until(Time::from_millis(603 + 5_000));
    check_journal_output(
        &mut driver,
        Some(&["001.md", "003.md", "006.md"]),
        "reply timeout",
    );
    // And the re-ring timer returns staged work to pending.
    driver.run_until(Time::from_millis(601 + re_ring));
    check_journal_output(&mut driver, Some(&["006.md"]), "re-ring");
}

/// What one input emitted: one `JournalChanged` whose journal names `owned`,
/// or none.
fn check_journal_output(driver: &mut Driver, owned: Option<&[&str]>, what: &str) {
    let (emitted, _) = driver.take();
    let written: Vec<Vec<String>> = emitted
        .journals
        .iter()
        .map(|journal| journal.entries.iter().map(|e| e.name.to_string()).collect())
        .collect();
    match owned {
        None => assert!(
            written.is_empty(),
            "{what}: wrote {written:?} with no ownership change"
        ),
        Some(owned) => {
            assert_eq!(
                written,
                [owned.to_vec()],
                "{what}: exactly one JournalChanged"
            );
            assert_eq!(emitted.journals[0], driver.engine.journal(), "{what}");
        }
    }
}

#[test]
fn journaled_files_archived_while_down_are_forgotten() {
    let journal = journal_with_owned_work();
    let mut second = started(Some(&journal), "inc-1", 50);
    second.input(
        Input::InboxScan(vec![name("002.md")]),
        Time::from_millis(51),
    );
    let status = second.engine.status(Time::from_millis(51));
    assert_eq!(status.messages.len(), 1);
    // 001 was archived while the sidecar was down; if it came back it is new work.
    second.input(Input::InboxAdded(name("001.md")), Time::from_millis(52));
    let status = second.engine.status(Time::from_millis(52));
    assert_eq!(status.messages[0].state, MessageState::Pending);
    assert_eq!(second.engine.journal().entries.len(), 1);
}

#[test]
fn held_work_says_why_with_source_and_age() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(Input::InboxAdded(name("001.md")), Time::from_millis(1000));
    driver.input(
        Input::AdapterLine(idle_line(1, "inc-1", "nonempty", 10)),
        Time::from_millis(2000),
    );
    let now = Time::from_millis(5000);
    let status = driver.engine.status(now);
    assert_eq!(
        status.messages[0].describe(now),
        "001.md  held: composer nonempty (adapter, 3 s ago)"
    );
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json["messages"][0]["hold"]["code"], "composer-nonempty");
    assert_eq!(json["messages"][0]["hold"]["source"], "adapter");
    assert_eq!(json["messages"][0]["state"], "pending");
    assert_eq!(json["lease"]["state"], "granted");
}

#[test]
fn an_idle_engine_asks_for_no_wake_up() {
    for policy in Policy::ALL {
        let mut driver = Driver::new(Engine::new(
            ungathered(policy, "worker", "inbox/new"),
            None,
            Time::ZERO,
        ));
        if policy.uses_adapter() {
            driver.input(Input::AdapterSpawned { pid: 1 }, Time::ZERO);
        }
        driver.input(
            Input::PtyStatus {
                identity: identity("i"),
                revision: 1,
            },
            Time::ZERO,
        );
        driver.input(Input::InboxScan(vec![]), Time::ZERO);
        assert_eq!(
            driver.engine.next_deadline(),
            None,
            "{policy:?} with nothing pending"
        );
    }
    // Held work waiting for a lease needs no timer either: a lease arrives as an input.
    let mut driver = started(None, "i", 0);
    driver.input(Input::InboxAdded(name("001.md")), Time::ZERO);
    assert_eq!(driver.engine.next_deadline(), None);
}

#[test]
fn a_deadline_that_passed_between_inputs_is_processed_before_the_next_input() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(Input::InboxAdded(name("001.md")), Time::from_millis(1));
    driver.input(
        Input::AdapterLine(idle_line(1, "inc-1", "empty", 10)),
        Time::from_millis(10),
    );
    let deadline = driver.engine.next_deadline().expect("the reply timeout");
    assert_eq!(deadline, Time::from_millis(10 + 5_000));
    driver.take();
    // No timeout call: the runtime was busy. The reply comes after the
    // deadline, and the deadline happened first: the outcome was already
    // unknown, so the late reply confirms nothing.
    driver.input(
        Input::PtySent {
            request: 1,
            revision: 11,
        },
        Time::from_millis(6_000),
    );
    let (emitted, _) = driver.take();
    let tags: Vec<String> = emitted
        .records
        .iter()
        .map(|record| {
            serde_json::to_value(record).unwrap()["decision"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let unknown = tags.iter().position(|tag| tag == "outcome-unknown");
    let ignored = tags.iter().position(|tag| tag == "ignored");
    assert!(
        unknown.is_some() && unknown < ignored,
        "the timeout, then the late reply: {tags:?}"
    );
    assert_eq!(
        driver.engine.status(Time::from_millis(6_000)).messages[0].state,
        MessageState::Staged {
            incarnation: Some("inc-1".into()),
            confirmed: false
        }
    );
}

#[test]
fn a_spurious_early_timeout_changes_nothing() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(Input::AdapterEof, Time::from_millis(10));
    let deadline = driver.engine.next_deadline().unwrap();
    driver.take();
    driver.timeout(Time::from_millis(deadline.as_millis() - 1));
    let (emitted, _) = driver.take();
    assert_eq!(emitted.spawns, 0);
    assert_eq!(driver.engine.next_deadline(), Some(deadline));
}

#[test]
fn a_huge_backlog_is_kept_whole_and_in_order() {
    let mut config = ungathered(Policy::Aggressive, "worker", "inbox/new");
    config.tunables.re_ring_after = None;
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    let names: Vec<MessageName> = (0..20_000)
        .rev()
        .map(|i| name(&format!("{i:06}.md")))
        .collect();
    driver.input(Input::InboxScan(names), Time::ZERO);
    let status = driver.engine.status(Time::ZERO);
    assert_eq!(status.unread, 20_000);
    assert!(
        status
            .messages
            .windows(2)
            .all(|pair| pair[0].name < pair[1].name)
    );
    assert_eq!(status.messages[0].name.as_str(), "000000.md");
}

#[test]
fn a_silent_adapter_is_reported_silent_since_evidence_was_wanted() {
    // An adapter owes nothing while nothing is pending: silence counts from
    // the moment evidence became wanted if it has not spoken since, then
    // only while its evidence allows delivery or the terminal moved past
    // what it read.
    let mut driver = started(None, "inc-1", 0);
    driver.input(
        Input::AdapterLine(idle_line(1, "inc-1", "nonempty", 10)),
        Time::from_millis(1_000),
    );
    driver.input(Input::InboxAdded(name("001.md")), Time::from_millis(40_000));
    let early = Time::from_millis(45_000);
    assert_eq!(
        driver.engine.status(early).messages[0].describe(early),
        "001.md  held: composer nonempty (adapter, 44 s ago)",
        "one hour of quiet before the demand is not silence"
    );
    let late = Time::from_millis(75_000);
    assert_eq!(
        driver.engine.status(late).messages[0].describe(late),
        "001.md  held: adapter silent (adapter, 35 s ago)"
    );
    driver.input(
        Input::AdapterLine(idle_line(2, "inc-1", "nonempty", 10)),
        Time::from_millis(76_000),
    );
    let later = Time::from_millis(100_000);
    assert_eq!(
        driver.engine.status(later).messages[0].describe(later),
        "001.md  held: composer nonempty (adapter, 24 s ago)"
    );
    // Evidence that holds is owed nothing more while the terminal stays
    // as it was read: no heartbeat for a held message.
    let much_later = Time::from_millis(600_000);
    assert_eq!(
        driver.engine.status(much_later).messages[0].describe(much_later),
        "001.md  held: composer nonempty (adapter, 8 min ago)"
    );
    // The terminal moves past the revision that was read: a reading of
    // it is owed from then.
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 11,
        },
        much_later,
    );
    let unread = Time::from_millis(631_000);
    assert_eq!(
        driver.engine.status(unread).messages[0].describe(unread),
        "001.md  held: adapter silent (adapter, 31 s ago)"
    );
    // Its reading of the move answers it.
    driver.input(
        Input::AdapterLine(idle_line(3, "inc-1", "nonempty", 11)),
        Time::from_millis(632_000),
    );
    let answered = Time::from_millis(700_000);
    assert_eq!(
        driver.engine.status(answered).messages[0].describe(answered),
        "001.md  held: composer nonempty (adapter, 68 s ago)"
    );
}

/// The terminal's move that the sidecar hears of before the adapter's
/// reading of it arrives is no debt: the reading names its revision.
#[test]
fn a_move_the_adapters_evidence_was_read_at_is_owed_nothing() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(Input::InboxAdded(name("001.md")), Time::from_millis(1_000));
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-1"),
            revision: 12,
        },
        Time::from_millis(1_500),
    );
    driver.input(
        Input::AdapterLine(idle_line(1, "inc-1", "nonempty", 12)),
        Time::from_millis(1_600),
    );
    let later = Time::from_millis(100_000);
    assert_eq!(
        driver.engine.status(later).messages[0].describe(later),
        "001.md  held: composer nonempty (adapter, 98 s ago)"
    );
}

#[test]
fn status_shows_the_adapter_the_lease_and_the_pty_identity_and_revision() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(
        Input::InboxScan(vec![name("002.md"), name("001.md")]),
        Time::from_millis(1000),
    );
    driver.input(
        Input::AdapterLine(idle_line(1, "inc-1", "nonempty", 10)),
        Time::from_millis(2000),
    );
    let status = serde_json::to_value(driver.engine.status(Time::from_millis(2500))).unwrap();
    let adapter = &status["adapter"];
    assert_eq!(
        (&adapter["state"], &adapter["pid"], &adapter["since"]),
        (&json!("up"), &json!(9), &json!(0))
    );
    assert_eq!(adapter["lastLine"], 2000, "when the adapter last spoke");
    assert_eq!(adapter["lastSequence"], 1);
    assert_eq!(adapter["nextBackoffMs"], 1000);
    let lease = &status["lease"];
    assert_eq!(lease["state"], "granted");
    assert_eq!(lease["identity"]["incarnation"], "inc-1");
    assert_eq!(lease["revision"], 10);
    assert_eq!(lease["composer"], "nonempty");
    assert_eq!(
        (&lease["freshness"], &lease["ageMs"], &lease["remainingMs"]),
        (&json!("fresh"), &json!(500), &json!(500))
    );
    let pty = &status["pty"];
    assert_eq!(pty["reachable"], true);
    assert_eq!(
        pty["identity"],
        json!({"session": "host.worker", "incarnation": "inc-1", "generation": "sha256:g"})
    );
    assert_eq!(pty["revision"], 10);
    let files: Vec<&Value> = status["messages"].as_array().unwrap().iter().collect();
    assert_eq!(
        files
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["001.md", "002.md"],
        "every unread file, in FIFO order"
    );
    assert!(
        files
            .iter()
            .all(|m| m["state"] == "pending" && m["hold"]["code"] == "composer-nonempty")
    );

    // The harness restarts and the adapter dies: status follows both.
    driver.input(
        Input::PtyStatus {
            identity: identity("inc-2"),
            revision: 20,
        },
        Time::from_millis(3000),
    );
    driver.input(Input::AdapterEof, Time::from_millis(3500));
    let status = serde_json::to_value(driver.engine.status(Time::from_millis(3600))).unwrap();
    assert_eq!(status["pty"]["identity"]["incarnation"], "inc-2");
    assert_eq!(status["pty"]["revision"], 20);
    assert_eq!(status["adapter"]["state"], "down");
    assert_eq!(status["adapter"]["down"]["cause"], "eof");
    assert_eq!(status["adapter"]["retryAt"], 4500);
    assert_eq!(status["lease"]["state"], "ended");
    assert_eq!(status["lease"]["reason"]["code"], "adapter-down");
    // An outage keeps the last identity and revision known, marked unreachable.
    driver.input(Input::PtyUnreachable, Time::from_millis(3700));
    let status = serde_json::to_value(driver.engine.status(Time::from_millis(3700))).unwrap();
    assert_eq!(status["pty"]["reachable"], false);
    assert_eq!(status["pty"]["identity"]["incarnation"], "inc-2");
    assert_eq!(status["pty"]["revision"], 20);
}

fn active_line(sequence: u64, incarnation: &str) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},"state":"active","validForMs":1000}}"#
    )
    .into_bytes()
}

#[test]
fn evidence_that_changes_nothing_records_nothing() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(
        Input::InboxScan(vec![name("001.md"), name("002.md")]),
        Time::ZERO,
    );
    driver.take();

    // Without a lease, `active` ends nothing: the hold is announced once.
    for sequence in 1..=1000 {
        driver.input(
            Input::AdapterLine(active_line(sequence, "inc-1")),
            Time::from_millis(sequence),
        );
    }
    let (emitted, _) = driver.take();
    assert_eq!(decision_tags(&emitted.records), ["held"]);

    // A lease that existed ends with a record, once.
    driver.input(
        Input::AdapterLine(idle_line(1001, "inc-1", "nonempty", 10)),
        Time::from_millis(1001),
    );
    driver.input(
        Input::AdapterLine(active_line(1002, "inc-1")),
        Time::from_millis(1002),
    );
    driver.input(
        Input::AdapterLine(active_line(1003, "inc-1")),
        Time::from_millis(1003),
    );
    let (emitted, _) = driver.take();
    assert_eq!(
        decision_tags(&emitted.records),
        ["lease-granted", "held", "lease-ended", "held"]
    );

    // The same receipt again changes no ownership: no record, no journal.
    driver.input(
        Input::AdapterLine(receipt_line(1004, "inc-1", &["001.md"])),
        Time::from_millis(1004),
    );
    let (first, _) = driver.take();
    assert!(decision_tags(&first.records).contains(&"hook-owned".to_string()));
    for sequence in 1005..1100 {
        driver.input(
            Input::AdapterLine(receipt_line(sequence, "inc-1", &["001.md"])),
            Time::from_millis(sequence),
        );
    }
    let (repeated, _) = driver.take();
    assert_eq!(decision_tags(&repeated.records), Vec::<String>::new());
    assert!(repeated.journals.is_empty(), "nothing to journal");
}

fn release_line(sequence: u64, incarnation: &str, files: &[&str], reason: &str) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"release","session":"host.worker","incarnation":"{incarnation}","generation":"sha256:g","sequence":{sequence},"messages":{},"reason":"{reason}"}}"#,
        serde_json::to_string(files).unwrap()
    )
    .into_bytes()
}

/// A `release` gives back exactly the named files that are hook-owned for
/// this incarnation: they are pending again (and ring under the next
/// lease, in FIFO order), status says why, and the decision names the
/// cause. A staged file named in it, and a file of another incarnation,
/// are not the claim's to give back and stay as they are.
#[test]
fn a_release_gives_back_only_this_incarnations_hook_owned_files() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(
        Input::InboxScan(vec![name("001.md"), name("002.md"), name("003.md")]),
        Time::from_millis(1),
    );
    driver.input(
        Input::AdapterLine(receipt_line(1, "inc-1", &["001.md", "003.md"])),
        Time::from_millis(2),
    );
    driver.input(
        Input::AdapterLine(idle_line(2, "inc-1", "empty", 10)),
        Time::from_millis(3),
    );
    let (emitted, _) = driver.take();
    assert_eq!(emitted.send_ifs.len(), 1);
    assert_eq!(emitted.send_ifs[0].messages, vec![name("002.md")]);
    let request = emitted.send_ifs[0].request;
    driver.input(
        Input::PtySent {
            request,
            revision: 11,
        },
        Time::from_millis(4),
    );
    driver.submit_typed(
        Input::AdapterLine(typed_line(3, "inc-1", 12, request)),
        Time::from_millis(300),
        13,
    );
    driver.input(
        Input::AdapterLine(release_line(
            4,
            "inc-1",
            &["003.md", "002.md", "001.md"],
            "no-receipt",
        )),
        Time::from_millis(5),
    );
    let (emitted, _) = driver.take();
    let released: Vec<String> = emitted
        .records
        .iter()
        .map(|record| serde_json::to_value(record).unwrap())
        .filter(|value| value["decision"] == "released")
        .map(|value| value.to_string())
        .collect();
    assert_eq!(released.len(), 1, "{released:?}");
    assert!(
        released[0].contains(r#""cause":"no-receipt""#)
            && released[0].contains(r#""messages":["001.md","003.md"]"#),
        "{released:?}"
    );
    let status = driver.engine.status(Time::from_millis(6));
    let states: Vec<(&str, &MessageState)> = status
        .messages
        .iter()
        .map(|m| (m.name.as_str(), &m.state))
        .collect();
    assert_eq!(states[0], ("001.md", &MessageState::Pending));
    assert!(
        matches!(states[1].1, MessageState::Staged { .. }),
        "{states:?}"
    );
    assert_eq!(states[2], ("003.md", &MessageState::Pending));
    assert!(
        status.messages[0]
            .describe(Time::from_millis(6))
            .contains("given back: the hook that claimed it never confirmed passing it on"),
        "{}",
        status.messages[0].describe(Time::from_millis(6))
    );
    // Another incarnation's release changes nothing.
    driver.input(
        Input::AdapterLine(receipt_line(5, "inc-1", &["001.md"])),
        Time::from_millis(7),
    );
    driver.input(
        Input::AdapterLine(release_line(6, "inc-0", &["001.md"], "hook-gone")),
        Time::from_millis(8),
    );
    let status = driver.engine.status(Time::from_millis(9));
    assert!(matches!(
        status.messages[0].state,
        MessageState::HookOwned { .. }
    ));
}

/// One cause, one wording: a hold that the adapter's evidence decides is
/// shown with the adapter's own words for it (issue 36, item 15: a dialog
/// read as "activity unknown" while the adapter said what it saw).
#[test]
fn a_hold_the_evidence_decides_says_it_in_the_adapters_words() {
    let mut driver = started(None, "inc-1", 0);
    driver.input(Input::InboxAdded(name("001.md")), Time::from_millis(1_000));
    driver.input(
        Input::AdapterLine(
            br#"{"v":1,"kind":"activity","session":"host.worker","incarnation":"inc-1","generation":"sha256:g","sequence":1,"state":"unknown","validForMs":1000,"revision":10,"reason":"a dialog box in place of the composer"}"#
                .to_vec(),
        ),
        Time::from_millis(2_000),
    );
    let now = Time::from_millis(5_000);
    assert_eq!(
        driver.engine.status(now).messages[0].describe(now),
        "001.md  held: activity unknown: a dialog box in place of the composer (adapter, 3 s ago)"
    );
}
