//! What Codex's hooks say it is doing, and how that combines with what its
//! screen shows into the evidence the adapter reports.
//!
//! On 0.169.0 the screen alone cannot prove idle: while the model streams
//! a reply the `Working` line vanishes and the screen looks ready until
//! the turn ends (`busy-streaming-looks-idle.json`). The hooks can: every
//! turn starts with `UserPromptSubmit` (or a model request, a tool call)
//! and ends with `Stop` or, when the human presses Esc or denies an
//! approval, `Interrupt` (measured: Esc fires `Interrupt` and no `Stop`).
//! So:
//!
//! * a dialog or an unrecognized screen is never idle, whatever the hooks
//!   said;
//! * a busy screen is active (`child` while a tool runs);
//! * a ready screen is idle only when the last hook ended the turn, or when
//!   no hook was heard yet and the screen shows no conversation at all (no
//!   turn can have run: `SessionStart` fires with the first prompt);
//! * while `Stop` decides whether to continue the turn (its claim is in
//!   flight), the session is not idle; the claim's answer settles it (a
//!   block its hook never passed on, killed or timed out, blocked
//!   nothing: the turn is over);
//! * after DING queued a delivery (the native idle path) and until its turn
//!   starts, the session is not idle either: the queued turn is about to
//!   start, and nothing may be typed into it.

use std::time::Duration;

use super::timing::{DELIVERY_GRACE, STOP_GRACE};
use crate::adapter::Reading;
use crate::core::protocol::ActivityState;

use super::screen::{Screen, View};

/// The harness's state as its hooks last told it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookActivity {
    /// No hook has said anything since the adapter started (or since the
    /// harness restarted).
    Unheard,
    /// `SessionStart`, `UserPromptSubmit`, `PreModelRequest`,
    /// `PostToolUse`, `PreCompact`: the model is working.
    Active,
    /// `PreToolUse`: a tool (perhaps a command) runs.
    Child,
    /// `PermissionRequest`: an approval dialog is (about to be) open, until
    /// `PostToolUse` (approved) or `Interrupt` (denied).
    AwaitingApproval,
    /// `Stop` without `stop_hook_active`, while its claim is answered: the
    /// turn may yet continue.
    Stopping,
    /// `Stop`, `Interrupt`, a manual `PostCompact`: the turn is over.
    Idle,
    /// `SessionEnd`: the harness is quitting.
    Ended,
}

/// What the hooks said, and how long ago.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heard {
    pub activity: HookActivity,
    /// Since that hook.
    pub since: Duration,
    /// Since the launcher last said a delivery of DING's waits in Codex's
    /// queue, if one does.
    pub delivery_waiting: Option<Duration>,
}

/// The evidence for one screen's reading, given what the hooks said.
pub fn combine(view: View, heard: Heard) -> Reading {
    let screen = view.reading();
    let active = |reason: &'static str| Reading {
        state: ActivityState::Active,
        reason: reason.into(),
        ..screen.clone()
    };
    let unknown = |reason: &'static str| Reading {
        state: ActivityState::Unknown,
        reason: reason.into(),
        ..screen.clone()
    };
    match view.screen {
        Screen::Dialog | Screen::Unrecognized => screen,
        Screen::Busy => Reading {
            state: if heard.activity == HookActivity::Child {
                ActivityState::Child
            } else {
                ActivityState::Active
            },
            ..screen
        },
        Screen::Ready => {
            if heard
                .delivery_waiting
                .is_some_and(|since| since < DELIVERY_GRACE)
            {
                return active("DING queued a delivery; its turn is about to start");
            }
            match heard.activity {
                HookActivity::Idle => screen,
                HookActivity::Unheard if view.fresh => screen,
                HookActivity::Unheard => unknown(
                    "no hook heard yet and the screen shows a conversation: a reply may be streaming",
                ),
                HookActivity::Stopping if heard.since < STOP_GRACE => {
                    active("Stop is deciding whether the turn goes on")
                }
                HookActivity::Stopping => screen,
                HookActivity::AwaitingApproval => {
                    unknown("a hook announced an approval dialog that no hook has closed")
                }
                HookActivity::Ended => unknown("the session is ending"),
                HookActivity::Active | HookActivity::Child => {
                    active("hooks say a turn runs (a streaming reply hides the Working line)")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::Composer;

    fn ready(fresh: bool) -> View {
        View {
            screen: Screen::Ready,
            composer: Composer::Empty,
            fresh,
            why: "ready, composer empty",
        }
    }

    fn heard(activity: HookActivity, secs: u64) -> Heard {
        Heard {
            activity,
            since: Duration::from_secs(secs),
            delivery_waiting: None,
        }
    }

    #[test]
    fn a_ready_screen_is_idle_only_after_a_hook_ended_the_turn() {
        for activity in [
            HookActivity::Active,
            HookActivity::Child,
            HookActivity::AwaitingApproval,
            HookActivity::Ended,
        ] {
            // However long ago: a long reply streams with the screen ready.
            let reading = combine(ready(false), heard(activity, 600));
            assert_ne!(reading.state, ActivityState::Idle, "{activity:?}");
        }
        assert_eq!(
            combine(ready(false), heard(HookActivity::Idle, 0)).state,
            ActivityState::Idle
        );
    }

    #[test]
    fn unheard_is_idle_only_on_a_screen_with_no_conversation() {
        assert_eq!(
            combine(ready(true), heard(HookActivity::Unheard, 0)).state,
            ActivityState::Idle
        );
        assert_eq!(
            combine(ready(false), heard(HookActivity::Unheard, 600)).state,
            ActivityState::Unknown
        );
    }

    #[test]
    fn stop_holds_while_it_decides_and_a_queued_delivery_holds_until_it_starts() {
        assert_eq!(
            combine(ready(false), heard(HookActivity::Stopping, 1)).state,
            ActivityState::Active
        );
        assert_eq!(
            combine(ready(false), heard(HookActivity::Stopping, 5)).state,
            ActivityState::Idle,
            "a claim that never came back does not hold for ever"
        );
        let waiting = Heard {
            delivery_waiting: Some(Duration::from_secs(1)),
            ..heard(HookActivity::Idle, 0)
        };
        assert_eq!(combine(ready(false), waiting).state, ActivityState::Active);
    }

    #[test]
    fn a_dialog_is_never_idle_and_a_busy_screen_is_child_while_a_tool_runs() {
        let dialog = View {
            screen: Screen::Dialog,
            composer: Composer::Unknown,
            fresh: false,
            why: "a selection list",
        };
        assert_eq!(
            combine(dialog, heard(HookActivity::Idle, 0)).state,
            ActivityState::Unknown
        );
        let busy = View {
            screen: Screen::Busy,
            ..ready(false)
        };
        assert_eq!(
            combine(busy, heard(HookActivity::Child, 0)).state,
            ActivityState::Child
        );
        assert_eq!(
            combine(busy, heard(HookActivity::Idle, 0)).state,
            ActivityState::Active
        );
    }
}
