//! The demo adapter: the demo agent's screen grammar plugged into the
//! neutral adapter kit ([`crate::adapter`]).
//!
//! This is the smallest real provider: it reads the demo agent's screen
//! (`screen.rs`), and it answers three generic hook events
//! (`session-start`, `turn-start`, `turn-end`, run as `ding hook demo
//! EVENT`) by claiming unread work and printing it as plain text for the
//! next context. A fourth, `wake`, is parked: it is answered when unread
//! work arrives, with the work on stderr and exit code 2, the shape of a
//! harness's background hook that wakes its model. Everything else (the downlink, evidence only while wanted,
//! snapshots stamped with their revision, the identity the sidecar fences
//! on, the hook channel, claims, the uplink's sequence and encoding) is the
//! kit's, exactly as for the provider adapters.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::adapter::kit::{self, AdapterEnv};
use crate::adapter::machine::Pacing;
use crate::adapter::screen::ComposerContent;
use crate::adapter::{
    AgentContext, ClaimRequest, HookAction, HookAnswer, HookCall, HookPlan, Park, Provider, Reading,
};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::notice::{MAX_NOTICE_BYTES, Notice};
use crate::core::protocol::{ActivityState, ClaimScope, ClaimWants, Composer, WithdrawKeys};
use crate::core::time::Time;
use crate::demo::screen::{ComposerView, Observation, Screen, classify, composer_content};
use crate::pty::wire::Snapshot;

/// `ding demo-adapter` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub socket: PathBuf,
    /// How often to read the screen again when nothing moves, while
    /// evidence is wanted.
    pub heartbeat: Duration,
    /// The `validForMs` of every line.
    pub valid_for: Duration,
}

/// The protocol meaning of an observation. A menu is `unknown`, not `idle`
/// (a dialog must never receive DING input) and not `active` (nothing is
/// working; the agent waits for a person).
pub fn report(observation: Observation) -> Reading {
    let composer = match observation.composer {
        ComposerView::Empty => Composer::Empty,
        ComposerView::Nonempty => Composer::Nonempty,
        ComposerView::Unknown => Composer::Unknown,
    };
    let state = match observation.screen {
        Screen::Ready => ActivityState::Idle,
        Screen::Working => ActivityState::Active,
        Screen::Menu | Screen::Unrecognized => ActivityState::Unknown,
    };
    Reading {
        state,
        composer,
        reason: observation.reason().into(),
    }
}

/// The demo agent as a provider: screen only.
pub struct DemoProvider;

/// The most files one hook answer names.
const HOOK_CLAIM_LIMIT: u64 = 16;

/// The most bytes of names one hook answer carries (the frame around them
/// is a few hundred bytes more).
const HOOK_NAME_BYTES: u64 = 8192;

impl Provider for DemoProvider {
    fn name(&self) -> &'static str {
        "demo"
    }

    fn evidence(&mut self, snapshot: &Snapshot, _now: Time) -> Reading {
        report(classify(snapshot))
    }

    fn composer_content(&self, snapshot: &Snapshot) -> ComposerContent {
        composer_content(snapshot)
    }

    /// The demo agent's Ctrl-U empties its one-line composer (docs/demo.md).
    fn withdraw_keys(&self) -> Option<WithdrawKeys<'static>> {
        Some(WithdrawKeys {
            keys: std::borrow::Cow::Borrowed("\u{15}"),
            after_ms: 0,
        })
    }

    /// The demo provider remembers nothing of a terminal: a restart leaves
    /// nothing to forget.
    fn on_new_terminal(&mut self, _identity: Option<&Identity>, _now: Time) {}

    /// A new session surfaces the whole backlog; a turn boundary takes what
    /// no one owns yet; `wake` waits, parked, until work arrives (the shape
    /// of a harness hook that can wake an idle session). Any other event
    /// changes nothing.
    fn on_hook(&mut self, call: &HookCall, _agent: &AgentContext, _now: Time) -> HookPlan {
        let claim = |scope| ClaimRequest {
            wants: ClaimWants::Oldest(HOOK_CLAIM_LIMIT),
            scope,
            name_bytes: Some(HOOK_NAME_BYTES),
        };
        match call.event.as_str() {
            "wake" => HookPlan::act(HookAction::Park(Park {
                slot: "wake",
                claim: claim(ClaimScope::Pending),
                settle: Duration::from_millis(100),
                hold_for: Duration::from_secs(3600),
                holds_terminal: true,
                waits_for_fresh_idle: false,
            })),
            "session-start" => HookPlan::act(HookAction::Claim(claim(ClaimScope::Unread))),
            "turn-start" | "turn-end" => {
                HookPlan::act(HookAction::Claim(claim(ClaimScope::Pending)))
            }
            _ => HookPlan::nothing(),
        }
    }

    /// A woken hook prints the unread work on stderr and exits 2; the others
    /// print one plain line naming every granted file: the notice's own text
    /// and escaping, under the larger bound of a hook's context.
    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
        _now: Time,
    ) -> HookAnswer {
        if claimed.granted.is_empty() {
            return HookAnswer::default();
        }
        if call.event == "wake" {
            return HookAnswer {
                stderr: crate::adapter::context::unread_work(
                    agent,
                    &claimed.granted,
                    claimed.not_granted,
                ),
                exit: 2,
                ..HookAnswer::default()
            };
        }
        let unread_dir = agent.inbox.join("new");
        let total = claimed.granted.len() + claimed.not_granted;
        let Some(context) = Notice::hook_context(
            &claimed.granted,
            total,
            claimed.granted.len(),
            &agent.agent,
            &unread_dir.to_string_lossy(),
            HOOK_NAME_BYTES as usize + MAX_NOTICE_BYTES,
        ) else {
            return HookAnswer::default();
        };
        debug_assert_eq!(context.named(), &claimed.granted[..]);
        HookAnswer {
            stdout: format!("{}\n", context.text()),
            ..HookAnswer::default()
        }
    }
}

/// Runs until the sidecar closes stdin (or, run by hand, until killed).
pub fn run(options: &Options) -> Result<()> {
    let mut kit_options = AdapterEnv::from_env().unwrap_or_else(|_| AdapterEnv {
        pty_socket: options.socket.clone(),
        hook_socket: None,
        agent: crate::adapter::AgentContext {
            agent: String::new(),
            inbox: PathBuf::new(),
        },
        pacing: Pacing::default(),
    });
    kit_options.pty_socket = options.socket.clone();
    kit_options.pacing.valid_for = options.valid_for;
    kit_options.pacing.heartbeat = options.heartbeat;
    kit::run(DemoProvider, kit_options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observed(screen: Screen, composer: ComposerView) -> Reading {
        report(Observation { screen, composer })
    }

    #[test]
    fn only_a_ready_screen_is_idle_and_a_menu_is_never_idle() {
        assert_eq!(
            observed(Screen::Ready, ComposerView::Empty).state,
            ActivityState::Idle
        );
        assert_eq!(
            observed(Screen::Working, ComposerView::Empty).state,
            ActivityState::Active
        );
        for screen in [Screen::Menu, Screen::Unrecognized] {
            let report = observed(screen, ComposerView::Unknown);
            assert_eq!(report.state, ActivityState::Unknown);
            assert_eq!(report.composer, Composer::Unknown);
        }
        assert_eq!(
            observed(Screen::Ready, ComposerView::Nonempty).composer,
            Composer::Nonempty
        );
    }
}
