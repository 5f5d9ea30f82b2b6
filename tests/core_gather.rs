//! Gathering a burst (spec §4.4): under the careful policy, files that
//! arrive with nothing else on its way are delivered together once none
//! came for `gather-quiet`, at the latest `gather-cap` after the first,
//! whatever path delivers them; a hook at a turn boundary still takes them
//! at once.

mod support;

use std::time::Duration;

use ding::core::config::{EngineConfig, GATHER_CAP, GATHER_QUIET, Policy};
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input};
use ding::core::hold::HoldReason;
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::time::Time;
use support::core_driver::{Driver, names};

fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn millis(duration: Duration) -> u64 {
    duration.as_millis() as u64
}

/// An engine of `policy` with the default gather window, its adapter up
/// (careful), the PTY host known at revision 10, and an empty inbox.
fn engine(policy: Policy, gather_quiet: Duration) -> Driver {
    let mut config = EngineConfig::new(policy, "worker", "inbox/new");
    config.tunables.gather_quiet = gather_quiet;
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    if policy.uses_adapter() {
        driver.input(Input::AdapterSpawned { pid: 9 }, Time::ZERO);
    }
    driver.input(
        Input::PtyStatus {
            identity: Identity {
                session: "host.worker".into(),
                incarnation: "i1".into(),
                generation: "sha256:g".into(),
            },
            revision: 10,
        },
        Time::ZERO,
    );
    driver.input(Input::InboxScan(Vec::new()), at(1));
    driver.take();
    driver
}

fn careful() -> Driver {
    engine(Policy::TurnBoundaryFreshIdle, GATHER_QUIET.default)
}

fn arrive(driver: &mut Driver, name: &str, ms: u64) {
    driver.input(Input::InboxAdded(MessageName::new(name).unwrap()), at(ms));
}

fn line(sequence: u64, rest: &str) -> Input {
    Input::AdapterLine(
        format!(
            r#"{{"v":1,"session":"host.worker","incarnation":"i1","generation":"sha256:g","sequence":{sequence},{rest}}}"#
        )
        .into_bytes(),
    )
}

fn idle(sequence: u64) -> Input {
    line(
        sequence,
        r#""kind":"activity","state":"idle","validForMs":5000,"composer":"empty","revision":10"#,
    )
}

/// What the engine told the adapter about wanting evidence, in order.
fn demands(driver: &mut Driver) -> Vec<bool> {
    driver
        .take()
        .0
        .downlinks
        .into_iter()
        .filter_map(|line| match line {
            Downlink::Evidence { wanted } => Some(wanted),
            _ => None,
        })
        .collect()
}

fn holds(driver: &Driver) -> Vec<Option<HoldReason>> {
    driver
        .engine
        .status(driver.now)
        .messages
        .iter()
        .map(|message| message.hold.as_ref().map(|hold| hold.reason.clone()))
        .collect()
}

#[test]
fn a_burst_is_one_notice_once_no_file_came_for_the_quiet_time() {
    let mut driver = careful();
    let quiet = millis(GATHER_QUIET.default);
    for (name, ms) in [("001.md", 10), ("002.md", 400), ("003.md", 900)] {
        arrive(&mut driver, name, ms);
        // Fresh idle evidence all along: only the gather holds them.
        driver.input(idle(ms), at(ms + 1));
    }
    assert_eq!(holds(&driver), vec![Some(HoldReason::Gathering); 3]);
    assert_eq!(
        demands(&mut driver),
        Vec::<bool>::new(),
        "nothing wanted yet"
    );
    assert_eq!(driver.engine.next_deadline(), Some(at(900 + quiet)));
    driver.run_until(at(900 + quiet - 1));
    assert!(driver.take().0.send_ifs.is_empty());
    // It closes: evidence is wanted, and the lease still valid from the
    // last idle report rings all three in one notice.
    driver.run_until(at(900 + quiet));
    let (emitted, _) = driver.take();
    assert!(
        emitted
            .downlinks
            .contains(&Downlink::Evidence { wanted: true }),
        "{:?}",
        emitted.downlinks
    );
    let [send] = emitted.send_ifs.as_slice() else {
        panic!("one notice: {:?}", emitted.send_ifs);
    };
    assert_eq!(names(&send.messages), ["001.md", "002.md", "003.md"]);
}

#[test]
fn a_steady_trickle_is_delivered_at_the_cap_after_its_first_file() {
    let mut driver = careful();
    let cap = millis(GATHER_CAP.default);
    let step = millis(GATHER_QUIET.default) - 100;
    let mut ms = 10;
    let mut count = 0;
    while ms < 10 + cap {
        count += 1;
        arrive(&mut driver, &format!("{count:03}.md"), ms);
        ms += step;
    }
    assert!(count >= 3, "the trickle outlasts the cap");
    assert_eq!(driver.engine.next_deadline(), Some(at(10 + cap)));
    driver.run_until(at(10 + cap));
    assert_eq!(demands(&mut driver), vec![true]);
    driver.input(idle(1), at(10 + cap + 1));
    assert_eq!(driver.take().0.send_ifs[0].messages.len(), count);
}

#[test]
fn a_hook_at_a_turn_boundary_takes_gathered_files_at_once() {
    let mut driver = careful();
    arrive(&mut driver, "001.md", 10);
    arrive(&mut driver, "002.md", 20);
    driver.input(
        line(
            1,
            r#""kind":"claim","claim":7,"limit":16,"scope":"pending""#,
        ),
        at(30),
    );
    let granted: Vec<Vec<String>> = driver
        .take()
        .0
        .downlinks
        .into_iter()
        .filter_map(|line| match line {
            Downlink::Claimed(claimed) => Some(names(&claimed.granted)),
            _ => None,
        })
        .collect();
    assert_eq!(granted, [vec!["001.md".to_string(), "002.md".to_string()]]);
    // Nothing is left to gather: a file after it opens a gather of its own.
    assert_eq!(driver.engine.next_deadline(), None);
    arrive(&mut driver, "003.md", 40);
    assert_eq!(
        driver.engine.next_deadline(),
        Some(at(40 + millis(GATHER_QUIET.default)))
    );
}

#[test]
fn a_file_beside_held_work_joins_the_delivery_already_coming() {
    let mut driver = careful();
    arrive(&mut driver, "001.md", 10);
    driver.run_until(at(10 + millis(GATHER_QUIET.default)));
    assert_eq!(demands(&mut driver), vec![true]);
    driver.input(
        line(
            1,
            r#""kind":"activity","state":"idle","validForMs":5000,"composer":"nonempty","revision":11"#,
        ),
        at(1_100),
    );
    arrive(&mut driver, "002.md", 1_200);
    assert_eq!(
        holds(&driver),
        vec![Some(HoldReason::ComposerNonempty); 2],
        "no new gather: the draft holds both"
    );
    assert_eq!(demands(&mut driver), Vec::<bool>::new(), "still wanted");
    driver.input(idle(2), at(1_300));
    assert_eq!(driver.take().0.send_ifs[0].messages.len(), 2);
}

#[test]
fn with_no_quiet_time_and_under_the_aggressive_baseline_nothing_is_gathered() {
    let mut careful = engine(Policy::TurnBoundaryFreshIdle, Duration::ZERO);
    arrive(&mut careful, "001.md", 10);
    assert_eq!(demands(&mut careful), vec![true]);
    careful.input(idle(1), at(11));
    assert_eq!(careful.take().0.send_ifs.len(), 1);

    let mut aggressive = engine(Policy::Aggressive, GATHER_QUIET.default);
    arrive(&mut aggressive, "001.md", 10);
    arrive(&mut aggressive, "002.md", 20);
    assert_eq!(aggressive.take().0.sends.len(), 1, "rung at once");
}
