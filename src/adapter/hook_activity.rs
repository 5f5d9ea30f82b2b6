//! What a harness's hooks last said of its activity, and how a provider
//! whose hooks mark a turn's edges combines that with what its screen shows.
//!
//! Hooks are exact about a turn's edges but can go stale (an interrupted
//! turn may fire no closing hook); a screen is exact about what is drawn but
//! lags a turn that just started by a frame, and nothing orders a ready
//! screen before or after the hook that ends a turn. So:
//!
//! * a dialog or an unrecognized screen is never idle, whatever the hooks
//!   said;
//! * a busy screen is active, or `child` while the hooks say a tool runs;
//! * a ready screen is idle unless the hooks said a turn runs and the
//!   screen has looked ready for less than the provider's grace; after the
//!   grace the screen decides.
//!
//! A provider maps its own hook events onto [`HookActivity`] and names its
//! grace; its room says which events mean what.

use std::time::Duration;

use super::reading::Reading;
use crate::core::protocol::ActivityState;
use crate::core::time::Time;

/// The harness's state as its hooks last told it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HookActivity {
    /// No hook has said anything yet.
    #[default]
    Unheard,
    /// A session began or a turn ended: waiting for the person.
    Idle,
    /// A prompt went in or a tool's result came back: the model works.
    Active,
    /// A tool (perhaps a command) runs.
    Child,
    /// A dialog inside a turn waits for the person.
    AwaitingHuman,
}

impl HookActivity {
    /// Whether the hooks said a turn runs (or waits on the person inside
    /// one).
    pub fn says_busy(self) -> bool {
        matches!(
            self,
            HookActivity::Active | HookActivity::Child | HookActivity::AwaitingHuman
        )
    }
}

/// The evidence for one screen's reading, given what the hooks last said
/// and how long the screen has looked ready since (`ready_for`): see the
/// module's rules.
pub fn combine(
    screen: Reading,
    heard: HookActivity,
    ready_for: Duration,
    grace: Duration,
) -> Reading {
    match screen.state {
        ActivityState::Unknown => screen,
        ActivityState::Active | ActivityState::Child => Reading {
            state: if heard == HookActivity::Child {
                ActivityState::Child
            } else {
                ActivityState::Active
            },
            ..screen
        },
        ActivityState::Idle if heard.says_busy() && ready_for < grace => Reading {
            state: ActivityState::Active,
            reason: "a hook said a turn runs; the screen has not caught up".into(),
            ..screen
        },
        ActivityState::Idle => screen,
    }
}

/// When a verdict [`combine`] gave on a ready screen changes with time
/// alone: the end of the grace, if the hooks said a turn runs (the screen
/// has looked ready since `ready_since`) and it is still to come after
/// `now`.
pub fn grace_ends(
    heard: HookActivity,
    ready_since: Option<Time>,
    grace: Duration,
    now: Time,
) -> Option<Time> {
    ready_since
        .filter(|_| heard.says_busy())
        .map(|since| since + grace)
        .filter(|at| *at > now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::Composer;

    const GRACE: Duration = Duration::from_secs(3);

    fn reading(state: ActivityState) -> Reading {
        Reading {
            state,
            composer: Composer::Empty,
            reason: "test".into(),
        }
    }

    #[test]
    fn a_dialog_is_never_idle_whatever_the_hooks_said() {
        for heard in [HookActivity::Idle, HookActivity::Unheard] {
            let read = combine(
                reading(ActivityState::Unknown),
                heard,
                Duration::from_secs(60),
                GRACE,
            );
            assert_eq!(read.state, ActivityState::Unknown);
        }
    }

    #[test]
    fn a_turn_edge_outweighs_a_ready_screen_for_the_grace_only() {
        let ready = || reading(ActivityState::Idle);
        let at = Duration::from_millis;
        let state = |heard, ready_for| combine(ready(), heard, ready_for, GRACE).state;
        assert_eq!(state(HookActivity::Active, at(0)), ActivityState::Active);
        assert_eq!(
            state(HookActivity::AwaitingHuman, GRACE - at(1)),
            ActivityState::Active
        );
        // A turn ended without its closing hook: after the grace the screen
        // decides.
        assert_eq!(state(HookActivity::Active, GRACE), ActivityState::Idle);
        assert_eq!(state(HookActivity::Idle, at(0)), ActivityState::Idle);
        let busy = reading(ActivityState::Active);
        assert_eq!(
            combine(busy.clone(), HookActivity::Child, at(0), GRACE).state,
            ActivityState::Child
        );
        assert_eq!(
            combine(busy, HookActivity::Idle, at(0), GRACE).state,
            ActivityState::Active
        );
    }

    #[test]
    fn the_grace_ends_once_and_only_after_a_busy_hook() {
        let since = Some(Time::from_millis(1_000));
        let ends = Time::from_millis(4_000);
        assert_eq!(
            grace_ends(HookActivity::Active, since, GRACE, Time::from_millis(1_000)),
            Some(ends)
        );
        assert_eq!(grace_ends(HookActivity::Active, since, GRACE, ends), None);
        assert_eq!(
            grace_ends(HookActivity::Idle, since, GRACE, Time::from_millis(1_000)),
            None
        );
        assert_eq!(
            grace_ends(HookActivity::Active, None, GRACE, Time::ZERO),
            None
        );
    }
}
