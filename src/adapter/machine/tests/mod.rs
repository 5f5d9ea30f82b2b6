//! The machine's rules, one at a time, with time as a plain number: the
//! probe provider and the helpers here, the rules by concern in
//! `evidence.rs`, `claims.rs`, `wakes.rs` and `identity.rs`.

mod claims;
mod evidence;
mod identity;
mod wakes;

use std::path::PathBuf;
use std::time::Duration;

use crate::adapter::hook_wire::{HookAnswer, HookCall, HookRefusal};
use crate::adapter::screen::{self, testing};
use crate::adapter::timing::{
    CLAIM_DEADLINE, HEARTBEAT, MIN_SNAPSHOT_GAP, PTY_RETRY, RECEIPT_DEADLINE,
};
use crate::adapter::{
    AgentContext, ClaimRequest, HookAction, HookPlan, Park, ParkAnswer, Provider, Reading,
    SettingsRead,
};
use crate::core::downlink::{ClaimRefusal, Claimed, Downlink};
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::{
    ActivityState, Body, ClaimScope, ClaimWants, Composer, MAX_FIELD_BYTES, Undelivered, parse_line,
};
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::*;

/// A provider whose screen is idle with an empty composer, that claims on
/// `claim`, parks a wake that holds the terminal on `wake`, and records
/// what it was told.
#[derive(Default)]
struct Probe {
    new_terminals: Vec<Option<String>>,
    screen: Option<Reading>,
    /// Settings files it checks, and what it was given of them.
    settings: Vec<PathBuf>,
    settings_read: Vec<SettingsRead>,
    /// What it reads in the composer (the default reads nothing).
    composer: Option<String>,
    /// Why its native idle path holds an idle terminal, if it does.
    native_holds: Option<&'static str>,
    /// How long a new screen must read idle before it counts.
    startup_settle: Duration,
    /// When its verdict changes with time alone, if it does.
    changes_at: Option<Time>,
    /// The events of the calls whose answer it was told was never passed
    /// on.
    unread: Vec<String>,
}

impl Provider for Probe {
    fn name(&self) -> &'static str {
        "test"
    }

    fn evidence(&mut self, _snapshot: &Snapshot, _now: Time) -> Reading {
        self.screen.clone().unwrap_or(Reading {
            state: ActivityState::Idle,
            composer: Composer::Empty,
            reason: "ready".into(),
        })
    }

    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        self.changes_at.filter(|at| *at > now)
    }

    fn composer_content(&self, _snapshot: &Snapshot) -> screen::ComposerContent {
        match &self.composer {
            Some(text) => screen::ComposerContent::Text(text.clone()),
            None => screen::ComposerContent::Unreadable,
        }
    }

    fn on_new_terminal(&mut self, identity: Option<&Identity>, _now: Time) {
        self.new_terminals
            .push(identity.map(|identity| identity.incarnation.clone()));
    }

    fn on_hook(&mut self, call: &HookCall, _agent: &AgentContext, _now: Time) -> HookPlan {
        let claim = ClaimRequest {
            wants: ClaimWants::Oldest(1),
            scope: ClaimScope::Pending,
            name_bytes: None,
        };
        match call.event.as_str() {
            "claim" => HookPlan::act(HookAction::Claim(claim)),
            "turn-end" => HookPlan::act(HookAction::ClaimUnlessDrafting(claim)),
            "session" => HookPlan {
                recheck_settings: true,
                ..HookPlan::nothing()
            },
            "lost" => HookPlan {
                undelivered: vec![MessageName::new("a.md").expect("name")],
                ..HookPlan::nothing()
            },
            "wake" => HookPlan::act(HookAction::Park(Park {
                slot: "wake",
                claim,
                settle: Duration::from_millis(100),
                hold_for: Duration::from_secs(60),
                holds_terminal: true,
                waits_for_fresh_idle: true,
            })),
            _ => HookPlan::nothing(),
        }
    }

    fn on_claimed(
        &mut self,
        _call: &HookCall,
        claimed: &Claimed,
        _agent: &AgentContext,
        _now: Time,
    ) -> HookAnswer {
        HookAnswer {
            stdout: format!("{} file(s)", claimed.granted.len()),
            ..HookAnswer::default()
        }
    }

    fn on_answer_unread(&mut self, call: &HookCall, _now: Time) {
        self.unread.push(call.event.clone());
    }

    fn settings_files(&self) -> Vec<PathBuf> {
        self.settings.clone()
    }

    fn native_path_holds(&self) -> Option<String> {
        self.native_holds.map(String::from)
    }

    fn startup_settle(&self) -> Duration {
        self.startup_settle
    }

    fn on_settings_read(&mut self, read: &[SettingsRead]) {
        self.settings_read.extend_from_slice(read);
    }
}

fn agent() -> AgentContext {
    AgentContext {
        agent: "w".into(),
        inbox: PathBuf::from("/inbox"),
    }
}

fn at(millis: u64) -> Time {
    Time::from_millis(millis)
}

fn identity(incarnation: &str) -> Identity {
    Identity {
        session: "s".into(),
        incarnation: incarnation.into(),
        generation: "g".into(),
    }
}

fn machine() -> AdapterMachine<Probe> {
    AdapterMachine::new(
        Probe::default(),
        agent(),
        Pacing::default(),
        Some(identity("i")),
        true,
        Time::ZERO,
    )
}

fn drain(machine: &mut AdapterMachine<Probe>) -> Vec<Output> {
    std::iter::from_fn(|| machine.poll_output()).collect()
}

fn downlink(line: Downlink) -> Input {
    Input::Downlink(format!("{}\n", line.to_line()).into_bytes())
}

fn wanted(wanted: bool) -> Input {
    downlink(Downlink::Evidence { wanted })
}

fn answer(claim: u64, granted: &[&str], refusal: Option<ClaimRefusal>) -> Input {
    downlink(Downlink::Claimed(Claimed {
        claim,
        granted: granted
            .iter()
            .map(|name| MessageName::new(name).expect("name"))
            .collect(),
        refused: Vec::new(),
        refusal,
        not_granted: 0,
    }))
}

fn claimed(claim: u64, granted: &[&str]) -> Input {
    answer(claim, granted, None)
}

fn hook(event: &str) -> Vec<u8> {
    serde_json::json!({
        "v": 1, "provider": "test", "event": event, "payload": null,
        "identity": {"session": "s", "incarnation": "i", "generation": "g"},
    })
    .to_string()
    .into_bytes()
}

/// `peer`'s hook call of `event` arrives at `now`.
fn call(machine: &mut AdapterMachine<Probe>, peer: usize, event: &str, now: Time) {
    let line = hook(event);
    machine.handle_input(
        Input::HookCall {
            peer: Peer(peer),
            line,
        },
        now,
    );
}

/// [`call`] for a call the provider parks: the machine logs it, with the
/// probe's 60 s hold, and says nothing else.
fn park(machine: &mut AdapterMachine<Probe>, peer: usize, event: &str, now: Time) {
    call(machine, peer, event, now);
    assert_eq!(
        drain(machine),
        [Output::Log(format!(
            "{event}: parked in slot {event} for at most 60000 ms"
        ))]
    );
}

fn snapshot(revision: u64) -> Input {
    let mut snapshot = testing::snapshot(10, &["ready"], Vec::new(), None);
    snapshot.revision = revision;
    Input::PtySnapshot(Box::new(snapshot))
}

/// The uplink lines among `outputs`, parsed.
fn uplinked(outputs: &[Output]) -> Vec<Body<'_>> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Uplink(line) => Some(parse_line(line.as_bytes()).expect("parses").body),
            _ => None,
        })
        .collect()
}

/// Evidence wanted, the PTY open, and the first snapshot asked for.
fn wanted_and_open(machine: &mut AdapterMachine<Probe>, now: Time) {
    machine.handle_input(wanted(true), now);
    assert_eq!(drain(machine), [Output::PtyOpen]);
    machine.handle_input(Input::PtyOpened, now);
    assert_eq!(drain(machine), [Output::PtySnapshot]);
}
