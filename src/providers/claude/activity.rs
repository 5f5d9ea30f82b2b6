//! What Claude Code's hooks say it is doing, and how that combines with
//! what its screen shows into the evidence the adapter reports.
//!
//! Hooks are exact about turn edges but can go stale: an Esc-interrupted
//! turn fires no `Stop` (observed on 2.1.328), so "a turn runs" may be said
//! and never withdrawn. The screen is exact about what is drawn now but
//! lags a just-started turn by a frame. So:
//!
//! * a dialog or an unrecognized screen is never idle, whatever the hooks
//!   said last;
//! * a busy screen is active (or `child` while a tool runs);
//! * a ready screen is idle unless DING woke the harness less than
//!   [`WAKE_GRACE`] ago, or the last hook said a turn runs and the screen
//!   has looked ready for less than [`HOOK_GRACE`]: at a turn's start the
//!   screen lags the hook by a frame, and at its end nothing orders the
//!   ready screen before or after `Stop` (on 2.1.328 `Stop` came first in
//!   every run measured, but a terminal path that typed into the moment
//!   between would race `Stop`'s own claim). After the grace the screen
//!   decides, because an Esc-interrupted turn fires no `Stop` at all.

use std::time::Duration;

use super::timing::{HOOK_GRACE, WAKE_GRACE};
use crate::adapter::Reading;
use crate::adapter::hook_activity;
pub use crate::adapter::hook_activity::HookActivity;
use crate::core::protocol::ActivityState;

// Claude Code's hooks, as `HookActivity` reads them: `SessionStart`,
// `Stop` and `StopFailure` idle; `UserPromptSubmit` and `PostToolUse`
// active; `PreToolUse` child; `Notification` `permission_prompt` awaiting
// the person (`hooks.rs`).

/// What the hooks said, and for how long the screen has looked ready
/// since.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heard {
    pub activity: HookActivity,
    /// How long the screen has looked ready since that hook (zero if this
    /// is the first ready look).
    pub ready_for: Duration,
    /// Since DING last woke the harness, if it did.
    pub since_wake: Option<Duration>,
}

/// The evidence for one screen's reading, given what the hooks said: the
/// kit's rule with Claude Code's [`HOOK_GRACE`], after DING's own wake's
/// [`WAKE_GRACE`] on a ready screen.
pub fn combine(screen: Reading, heard: Heard) -> Reading {
    if screen.state == ActivityState::Idle
        && heard.since_wake.is_some_and(|since| since < WAKE_GRACE)
    {
        return Reading {
            state: ActivityState::Active,
            reason: "DING woke the session; its turn is starting".into(),
            ..screen
        };
    }
    hook_activity::combine(screen, heard.activity, heard.ready_for, HOOK_GRACE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::Composer;
    use crate::providers::claude::screen::{Screen, View};

    fn ready() -> Reading {
        View {
            screen: Screen::Ready,
            composer: Composer::Empty,
            why: "ready, composer empty",
        }
        .reading()
    }

    fn heard(activity: HookActivity, ready_secs: u64) -> Heard {
        Heard {
            activity,
            ready_for: Duration::from_secs(ready_secs),
            since_wake: None,
        }
    }

    #[test]
    fn a_dialog_is_never_idle_whatever_the_hooks_said() {
        let dialog = View {
            screen: Screen::Dialog,
            composer: Composer::Unknown,
            why: "a permission dialog is open",
        };
        for activity in [HookActivity::Idle, HookActivity::Unheard] {
            let reading = combine(dialog.reading(), heard(activity, 60));
            assert_eq!(reading.state, ActivityState::Unknown);
        }
    }

    #[test]
    fn a_turn_edge_outweighs_a_ready_screen_for_a_moment_only() {
        // The screen turned ready a moment ago, Stop has not run yet.
        assert_eq!(
            combine(ready(), heard(HookActivity::Active, 0)).state,
            ActivityState::Active
        );
        assert_eq!(
            combine(ready(), heard(HookActivity::Active, 1)).state,
            ActivityState::Active
        );
        // Esc fires no Stop: after the grace the screen decides.
        assert_eq!(
            combine(ready(), heard(HookActivity::Active, 4)).state,
            ActivityState::Idle
        );
        assert_eq!(
            combine(ready(), heard(HookActivity::Idle, 0)).state,
            ActivityState::Idle
        );
        let woken = Heard {
            since_wake: Some(Duration::from_secs(1)),
            ..heard(HookActivity::Idle, 30)
        };
        assert_eq!(combine(ready(), woken).state, ActivityState::Active);
    }

    #[test]
    fn a_busy_screen_is_child_while_a_tool_runs() {
        let busy = View {
            screen: Screen::Busy,
            composer: Composer::Empty,
            why: "a turn is running",
        }
        .reading();
        assert_eq!(
            combine(busy.clone(), heard(HookActivity::Child, 30)).state,
            ActivityState::Child
        );
        assert_eq!(
            combine(busy, heard(HookActivity::Idle, 0)).state,
            ActivityState::Active
        );
    }
}
