//! The unconfigured default is aggressive, exactly as before: whatever the
//! terminal shows (an idle prompt, a busy turn, a half-typed human draft, a
//! confirmation menu) new unread work rings at once with the same fixed
//! combined transport, and no adapter process is ever requested.
//!
//! The screens in `fixtures/core/screens/` are generic ASCII. The engine never
//! reads a screen; this test proves that nothing about the screen can change
//! what aggressive DING writes, and pins the exact bytes it writes, so a
//! change to the default transport cannot slip in unnoticed.

mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;

use ding::core::config::{EngineConfig, Policy};
use ding::core::engine::{Engine, Input};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::time::Time;
use ding::core::transport::{Step, Transport};
use support::core_driver::Driver;

/// The exact transaction aggressive DING writes for one unread file.
fn expected_transport() -> Transport {
    let notice = "[ding] 1 unread inbox message in inbox/new: 20261130T101500Z-7f3a.md. \
                  Read each file, then archive it: ding archive worker FILE";
    let mut paste = b"\x1b[200~".to_vec();
    paste.extend_from_slice(notice.as_bytes());
    paste.extend_from_slice(b"\x1b[201~");
    Transport {
        steps: vec![
            Step::Write(paste),
            Step::Wait(Duration::from_millis(200)),
            Step::Write(b"\r".to_vec()),
        ],
    }
}

/// Runs the unconfigured default against a terminal showing `screen` and
/// returns what it wrote. The fake terminal hands the engine only what a PTY
/// host reports (identity and revision), as the real one does.
fn ring_on(screen: &str) -> (Transport, usize, usize) {
    let config = EngineConfig::new(Policy::Aggressive, "worker", "inbox/new");
    let mut driver = Driver::new(Engine::new(config, None, Time::ZERO));
    let identity = Identity {
        session: "host.worker".into(),
        incarnation: "a".into(),
        generation: "sha256:g".into(),
    };
    // The screen's length moves the revision, as drawing it would.
    let revision = screen.len() as u64;
    driver.input(Input::PtyStatus { identity, revision }, Time::ZERO);
    driver.input(
        Input::InboxAdded(MessageName::new("20261130T101500Z-7f3a.md").unwrap()),
        Time::from_millis(3),
    );
    let (emitted, _) = driver.take();
    assert_eq!(emitted.sends.len(), 1, "exactly one ring");
    (
        emitted.sends[0].transport.clone(),
        emitted.send_ifs.len(),
        emitted.spawns,
    )
}

#[test]
fn aggressive_default_rings_identically_whatever_the_screen_shows() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/core/screens");
    let mut screens: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    screens.sort();
    assert!(screens.len() >= 4, "idle, busy, draft and menu screens");
    for path in screens {
        let screen = fs::read_to_string(&path).unwrap();
        let (transport, conditional, spawns) = ring_on(&screen);
        let which = path.file_name().unwrap().to_string_lossy();
        assert_eq!(
            transport,
            expected_transport(),
            "{which}: the fixed combined transport"
        );
        assert_eq!(
            conditional, 0,
            "{which}: aggressive never asks for a compare-and-send"
        );
        assert_eq!(spawns, 0, "{which}: aggressive runs no adapter");
    }
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
