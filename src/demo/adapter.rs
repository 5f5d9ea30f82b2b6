//! The demo adapter: watches the demo agent's PTY and reports its activity
//! to the sidecar as adapter protocol v1 lines on stdout.
//!
//! Two connections to the PTY host: one `watch` stream that wakes the loop
//! on every revision push (coalesced: pushes already waiting are drained
//! before looking), and one for `status` and `snapshot`. Every wake-up, and
//! every heartbeat when nothing moved, takes one snapshot, classifies it
//! (`screen.rs`) and writes one `activity` line stamped with the snapshot's
//! revision. The identity is the PTY host's: read from `status` at start
//! and again after every `start` push (a restart is a new incarnation). The
//! `DING_SESSION`, `DING_INCARNATION` and `DING_GENERATION` variables, when
//! set, are checked against it and a difference is logged on stderr.
//! This module owns the loop and the line format; the sidecar decides what
//! the lines mean.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::core::identity::Identity;
use crate::demo::screen::{ComposerView, Observation, Screen, classify};
use crate::pty::client::Client;
use crate::pty::wire::{ChildState, Push, Status};

/// `ding demo-adapter` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub socket: PathBuf,
    /// How often to report when the screen does not change.
    pub heartbeat: Duration,
    /// The `validForMs` of every line.
    pub valid_for: Duration,
}

/// The protocol's activity states this adapter uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Idle,
    Active,
    Unknown,
}

/// The protocol's composer guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Composer {
    Empty,
    Nonempty,
    Unknown,
}

/// What one line reports, before the envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    pub state: State,
    pub composer: Composer,
    pub reason: &'static str,
}

/// The protocol meaning of an observation. A menu is `unknown`, not `idle`
/// (a dialog must never receive DING input) and not `active` (nothing is
/// working; the agent waits for a person).
pub fn report(observation: Observation) -> Report {
    let composer = match observation.composer {
        ComposerView::Empty => Composer::Empty,
        ComposerView::Nonempty => Composer::Nonempty,
        ComposerView::Unknown => Composer::Unknown,
    };
    let state = match observation.screen {
        Screen::Ready => State::Idle,
        Screen::Working => State::Active,
        Screen::Menu | Screen::Unrecognized => State::Unknown,
    };
    Report {
        state,
        composer,
        reason: observation.reason(),
    }
}

/// What the adapter reports while the harness is not running.
const EXITED: Report = Report {
    state: State::Unknown,
    composer: Composer::Unknown,
    reason: "harness exited",
};

/// One `activity` line of adapter protocol v1.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ActivityLine<'a> {
    v: u64,
    kind: &'static str,
    session: &'a str,
    incarnation: &'a str,
    generation: &'a str,
    sequence: u64,
    state: State,
    valid_for_ms: u64,
    composer: Composer,
    revision: u64,
    reason: &'a str,
}

/// Encodes one activity line, newline included.
pub fn activity_line(
    identity: &Identity,
    sequence: u64,
    report: Report,
    revision: u64,
    valid_for: Duration,
) -> Result<Vec<u8>> {
    let line = ActivityLine {
        v: 1,
        kind: "activity",
        session: &identity.session,
        incarnation: &identity.incarnation,
        generation: &identity.generation,
        sequence,
        state: report.state,
        valid_for_ms: u64::try_from(valid_for.as_millis()).unwrap_or(u64::MAX),
        composer: report.composer,
        revision,
        reason: report.reason,
    };
    let mut bytes = serde_json::to_vec(&line).context("encode activity line")?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The identity the PTY host reports.
fn identity_of(status: &Status) -> Identity {
    Identity {
        session: status.session.clone(),
        incarnation: status.incarnation.clone(),
        generation: status.generation.clone(),
    }
}

/// The identity in `DING_SESSION`, `DING_INCARNATION`, `DING_GENERATION`,
/// if all three are set and non-empty.
pub fn identity_from_env() -> Option<Identity> {
    let get = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    Some(Identity {
        session: get("DING_SESSION")?,
        incarnation: get("DING_INCARNATION")?,
        generation: get("DING_GENERATION")?,
    })
}

/// Runs until the PTY host goes away (an error) or `out` closes.
pub fn run(options: &Options, out: &mut impl Write) -> Result<()> {
    let mut watcher = Client::connect(&options.socket)?;
    watcher.watch().context("watch the pty host")?;
    let mut reader = Client::connect(&options.socket)?;
    let status = reader.status().context("read the pty host's status")?;
    if let Some(env) = identity_from_env()
        && let Some(part) = env.mismatch(&identity_of(&status))
    {
        eprintln!(
            "demo-adapter: the environment's identity differs from the pty host's ({part:?}); \
             using the host's"
        );
    }
    let mut identity = identity_of(&status);
    let mut running = matches!(status.child, ChildState::Running { .. });
    let mut sequence: u64 = 0;
    loop {
        let (report, revision) = if running {
            let snapshot = reader.snapshot().context("take a snapshot")?;
            (report(classify(&snapshot)), snapshot.revision)
        } else {
            (EXITED, reader.status().context("read status")?.revision)
        };
        sequence += 1;
        out.write_all(&activity_line(
            &identity,
            sequence,
            report,
            revision,
            options.valid_for,
        )?)
        .context("write to stdout")?;
        out.flush().context("flush stdout")?;

        // Sleep until something moves or the heartbeat is due; then take
        // every push that is already here, so one snapshot covers them all.
        let mut next = watcher.next_push(options.heartbeat)?;
        while let Some(push) = next {
            match push {
                Push::Revision { .. } => {}
                Push::Exit { .. } => running = false,
                Push::Start { .. } => {
                    let status = reader.status().context("read status after a restart")?;
                    identity = identity_of(&status);
                    running = matches!(status.child, ChildState::Running { .. });
                }
            }
            next = watcher.next_push(Duration::ZERO)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(screen: Screen, composer: ComposerView) -> Report {
        report(Observation { screen, composer })
    }

    #[test]
    fn only_a_ready_screen_is_idle_and_a_menu_is_never_idle() {
        assert_eq!(
            observed(Screen::Ready, ComposerView::Empty).state,
            State::Idle
        );
        assert_eq!(
            observed(Screen::Working, ComposerView::Empty).state,
            State::Active
        );
        for screen in [Screen::Menu, Screen::Unrecognized] {
            let report = observed(screen, ComposerView::Unknown);
            assert_eq!(report.state, State::Unknown);
            assert_eq!(report.composer, Composer::Unknown);
        }
        assert_eq!(
            observed(Screen::Ready, ComposerView::Nonempty).composer,
            Composer::Nonempty
        );
    }

    #[test]
    fn activity_line_has_the_v1_envelope_and_fields() {
        let identity = Identity {
            session: "host.demo".into(),
            incarnation: "abc".into(),
            generation: "sha256:00".into(),
        };
        let line = activity_line(
            &identity,
            7,
            observed(Screen::Ready, ComposerView::Empty),
            42,
            Duration::from_millis(1000),
        )
        .expect("encodes");
        assert_eq!(
            String::from_utf8(line).expect("utf-8"),
            "{\"v\":1,\"kind\":\"activity\",\"session\":\"host.demo\",\"incarnation\":\"abc\",\
             \"generation\":\"sha256:00\",\"sequence\":7,\"state\":\"idle\",\"validForMs\":1000,\
             \"composer\":\"empty\",\"revision\":42,\"reason\":\"prompt ready, composer empty\"}\n"
        );
    }
}
