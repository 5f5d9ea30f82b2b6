//! The unconfigured default is aggressive, exactly as before: whatever the
//! terminal shows (an idle prompt, a busy turn, a half-typed human draft, a
//! confirmation menu) new unread work rings at once with the same fixed
//! combined transport, and no adapter process is ever requested.
//!
//! The screens in `fixtures/core/screens/` are generic ASCII. The engine never
//! reads a screen; what it could learn of one is what reaches it as input:
//! the revision the drawing moved, and an adapter's evidence about it. So
//! each screen is handed to both policies as exactly that: the revision, and
//! the activity evidence a screen-reading adapter reports for it (a spawned
//! adapter and its line). The screen-reading policy decides differently for
//! every screen, which proves the inputs carry what the screen shows; the
//! aggressive default rings the same bytes for all of them, which proves it
//! does not look. The test also pins the exact bytes aggressive writes, so a
//! change to the default transport cannot slip in unnoticed.

mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;

use ding::core::config::Policy;
use ding::core::engine::{Engine, Input};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::time::Time;
use ding::core::transport::{Step, Transport};
use support::core_driver::{Driver, ungathered};

/// The notice aggressive DING writes for one unread file.
const NOTICE: &str = "[ding] 1 unread inbox message in inbox/new: 20261130T101500Z-7f3a.md. \
                      Read each file, then archive it: ding archive worker FILE";

/// The exact transaction aggressive DING writes for one unread file: the
/// notice as a paste (the PTY host adds the markers a program asked for).
fn expected_transport() -> Transport {
    Transport {
        steps: vec![
            Step::Paste(NOTICE.as_bytes().to_vec()),
            Step::Wait(Duration::from_millis(200)),
            Step::Write(b"\r".to_vec()),
        ],
    }
}

/// What a deliberately simple screen-reading adapter reports for one of
/// these screens: the status word on the first line (`ready` is idle,
/// `working` active, anything else unknown) and the composer after the
/// `> ` prompt (nothing after it is empty).
fn read_screen(screen: &str) -> (&'static str, &'static str) {
    let status = screen.lines().next().unwrap_or_default();
    let state = if status.ends_with("ready") {
        "idle"
    } else if status.ends_with("working") {
        "active"
    } else {
        "unknown"
    };
    let composer = match screen
        .lines()
        .find_map(|line| line.trim_start().strip_prefix('>'))
    {
        Some(rest) if rest.trim().is_empty() => "empty",
        Some(_) => "nonempty",
        None => "unknown",
    };
    (state, composer)
}

/// What one policy did when unread work arrived on a terminal showing
/// `screen`.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// The transport of each plain send.
    sends: Vec<Transport>,
    conditional_sends: usize,
    spawns: usize,
    /// The hold of the file when it was not sent.
    hold: Option<String>,
}

/// Hands `screen` to an engine of `policy` as the inputs it can have about
/// it, then lets a file arrive.
fn ring_on(policy: Policy, screen: &str) -> Outcome {
    let config = ungathered(policy, "worker", "inbox/new");
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    let identity = Identity {
        session: "host.worker".into(),
        incarnation: "a".into(),
        generation: "sha256:g".into(),
    };
    // Drawing the screen moved the revision.
    let revision = screen.len() as u64;
    driver.input(Input::PtyStatus { identity, revision }, Time::ZERO);
    let (state, composer) = read_screen(screen);
    driver.input(Input::AdapterSpawned { pid: 7 }, Time::from_millis(1));
    let evidence = format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"a","generation":"sha256:g","sequence":1,"state":"{state}","composer":"{composer}","validForMs":5000,"revision":{revision}}}"#
    );
    driver.input(
        Input::AdapterLine(evidence.into_bytes()),
        Time::from_millis(2),
    );
    let file = MessageName::new("20261130T101500Z-7f3a.md").unwrap();
    driver.input(Input::InboxAdded(file), Time::from_millis(3));
    let (emitted, _) = driver.take();
    let status = driver.engine.status(Time::from_millis(3));
    Outcome {
        sends: emitted
            .sends
            .iter()
            .map(|send| send.transport.clone())
            .collect(),
        conditional_sends: emitted.send_ifs.len(),
        spawns: emitted.spawns,
        hold: status.messages[0]
            .hold
            .as_ref()
            .map(|hold| hold.reason.to_string()),
    }
}

fn screens() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/core/screens");
    let mut screens: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read_to_string(&path).unwrap())
        })
        .collect();
    screens.sort();
    assert!(screens.len() >= 4, "idle, busy, draft and menu screens");
    screens
}

#[test]
fn aggressive_default_rings_identically_whatever_the_screen_shows() {
    for (which, screen) in screens() {
        let outcome = ring_on(Policy::Aggressive, &screen);
        assert_eq!(
            outcome.sends,
            [expected_transport()],
            "{which}: exactly one ring, the fixed combined transport"
        );
        assert_eq!(
            outcome.conditional_sends, 0,
            "{which}: aggressive never asks for a compare-and-send"
        );
        assert_eq!(outcome.spawns, 0, "{which}: aggressive runs no adapter");
    }
}

#[test]
fn the_screens_change_what_a_screen_reading_policy_does() {
    let mut outcomes: Vec<Outcome> = Vec::new();
    for (which, screen) in screens() {
        let outcome = ring_on(Policy::TurnBoundaryFreshIdle, &screen);
        assert!(outcome.sends.is_empty(), "{which}: never a plain send");
        assert!(
            !outcomes.contains(&outcome),
            "{which}: the same decision as another screen ({outcome:?}); it would not show that screens do not matter to aggressive"
        );
        outcomes.push(outcome);
    }
    let rang = outcomes.iter().filter(|o| o.conditional_sends == 1).count();
    assert_eq!(rang, 1, "only the idle prompt with an empty composer rings");
    let draft = ring_on(Policy::TurnBoundaryFreshIdle, &screens_named("draft.txt"));
    assert_eq!(draft.hold.as_deref(), Some("composer nonempty"));
}

fn screens_named(name: &str) -> String {
    screens()
        .into_iter()
        .find(|(which, _)| which == name)
        .map(|(_, screen)| screen)
        .unwrap()
}

#[test]
fn aggressive_transport_waits_longer_than_paste_burst_suppression_before_return() {
    let transport = expected_transport();
    let Step::Wait(wait) = transport.steps[1] else {
        panic!("second step waits")
    };
    assert!(wait > Duration::from_millis(120));
    assert_eq!(transport.steps.last(), Some(&Step::Write(b"\r".to_vec())));
}

/// The transaction each policy writes for one file on an idle terminal with
/// `submit_delay`.
fn transport_of(policy: Policy, submit_delay: Duration) -> Transport {
    let mut config = ungathered(policy, "worker", "inbox/new");
    config.tunables.submit_delay = submit_delay;
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    let idle = screens_named("idle.txt");
    driver.input(
        Input::PtyStatus {
            identity: Identity {
                session: "host.worker".into(),
                incarnation: "a".into(),
                generation: "sha256:g".into(),
            },
            revision: idle.len() as u64,
        },
        Time::ZERO,
    );
    if policy.uses_adapter() {
        driver.input(Input::AdapterSpawned { pid: 7 }, Time::from_millis(1));
        let evidence = format!(
            r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"a","generation":"sha256:g","sequence":1,"state":"idle","composer":"empty","validForMs":5000,"revision":{}}}"#,
            idle.len()
        );
        driver.input(
            Input::AdapterLine(evidence.into_bytes()),
            Time::from_millis(2),
        );
    }
    driver.input(
        Input::InboxAdded(MessageName::new("20261130T101500Z-7f3a.md").unwrap()),
        Time::from_millis(3),
    );
    let (emitted, _) = driver.take();
    let mut transports: Vec<Transport> = emitted.sends.into_iter().map(|s| s.transport).collect();
    transports.extend(emitted.send_ifs.into_iter().map(|s| s.transport));
    assert_eq!(transports.len(), 1, "{policy:?} rings once");
    transports.remove(0)
}

#[test]
fn both_policies_paste_the_same_notice_and_the_careful_one_submits_it_apart() {
    let default = transport_of(Policy::Aggressive, Duration::from_millis(200));
    assert_eq!(default, expected_transport());
    // The careful policy's first compare-and-send is the same paste, alone:
    // its Return is a second one, on evidence read after the paste.
    let careful = transport_of(Policy::TurnBoundaryFreshIdle, Duration::from_millis(200));
    assert_eq!(careful.steps, vec![default.steps[0].clone()]);
    assert_eq!(Transport::submit().bytes(), b"\r");
    // To a program that asked for bracketed paste, the paste comes inside
    // its markers; to one that did not, as the notice's text alone.
    let mut bracketed = b"\x1b[200~".to_vec();
    bracketed.extend_from_slice(NOTICE.as_bytes());
    bracketed.extend_from_slice(b"\x1b[201~\r");
    assert_eq!(default.bytes_for(true), bracketed);
    assert_eq!(
        default.bytes_for(false),
        [NOTICE.as_bytes(), b"\r"].concat()
    );
    // A declared submit-delay applies to the aggressive wait only (the
    // careful Return waits at least as long after its paste).
    let slower = Duration::from_millis(450);
    let aggressive = transport_of(Policy::Aggressive, slower);
    assert_eq!(transport_of(Policy::TurnBoundaryFreshIdle, slower), careful);
    assert_eq!(aggressive.steps[1], Step::Wait(slower));
    assert_eq!(aggressive.steps[0], default.steps[0]);
    assert_eq!(aggressive.steps[2], default.steps[2]);
}
