//! What a harness's hooks last said (the kit's part, written once for every
//! provider whose hooks mark a turn's edges): the activity, since when the
//! screen has looked ready after it, which incarnation of the harness that
//! is about, and whether any hook has fired since the adapter started.
//! What each hook event means stays the provider's.

use std::time::Duration;

use super::hook_activity::{self, HookActivity};
use super::hook_wire::HookCall;
use super::incarnation::Incarnation;
use super::reading::Reading;
use crate::core::protocol::ActivityState;
use crate::core::time::Time;

#[derive(Clone, Debug, Default)]
pub struct HeardHooks {
    heard: HookActivity,
    /// Since when the screen has looked ready after the last hook (set by
    /// the first ready reading, cleared by any other reading or hook).
    ready_since: Option<Time>,
    /// The harness incarnation `heard` and `ready_since` are about.
    incarnation: Incarnation,
    /// Whether any hook has called since the adapter started.
    fired: bool,
}

impl HeardHooks {
    /// What the hooks last said.
    pub fn heard(&self) -> HookActivity {
        self.heard
    }

    /// Whether any hook has called since the adapter started.
    pub fn fired(&self) -> bool {
        self.fired
    }

    /// A new incarnation of the harness (or none known): what its hooks
    /// said was about the old one. Whether hooks fire at all is about the
    /// adapter's setup, and stays. Whether the incarnation was new.
    pub fn new_terminal(&mut self, incarnation: Option<&str>) -> bool {
        let changed = self.incarnation.changed_to(incarnation);
        if changed {
            self.heard = HookActivity::Unheard;
            self.ready_since = None;
        }
        changed
    }

    /// A hook called: its harness may be a new incarnation, and hooks fire.
    /// Whether the incarnation was new.
    pub fn called(&mut self, call: &HookCall) -> bool {
        self.fired = true;
        call.identity
            .as_ref()
            .is_some_and(|identity| self.new_terminal(Some(&identity.incarnation)))
    }

    /// What a hook said of the harness's activity, if anything.
    pub fn hear(&mut self, activity: Option<HookActivity>) {
        if let Some(activity) = activity {
            self.heard = activity;
            self.ready_since = None;
        }
    }

    /// The screen read as `state` at `now`: how long it has looked ready
    /// since the last hook (zero unless it reads idle).
    pub fn ready_for(&mut self, state: ActivityState, now: Time) -> Duration {
        if state != ActivityState::Idle {
            self.ready_since = None;
            return Duration::ZERO;
        }
        now.since(*self.ready_since.get_or_insert(now))
    }

    /// The evidence for `screen`, read at `now`: the kit's rule for a screen
    /// and what the hooks last said, with the provider's `grace`
    /// (`hook_activity::combine`).
    pub fn evidence(&mut self, screen: Reading, grace: Duration, now: Time) -> Reading {
        let ready_for = self.ready_for(screen.state, now);
        hook_activity::combine(screen, self.heard, ready_for, grace)
    }

    /// When the verdict on a ready screen changes with time alone: the end
    /// of `grace`, while the hooks said a turn runs (`hook_activity`).
    pub fn grace_ends(&self, grace: Duration, now: Time) -> Option<Time> {
        hook_activity::grace_ends(self.heard, self.ready_since, grace, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::identity::Identity;
    use serde_json::Value;

    fn hooks() -> HeardHooks {
        HeardHooks::default()
    }

    fn call(incarnation: &str) -> HookCall {
        HookCall {
            v: 1,
            provider: "h".into(),
            event: "E".into(),
            identity: Some(Identity {
                session: "s".into(),
                incarnation: incarnation.into(),
                generation: "1".into(),
            }),
            payload: Value::Null,
            payload_too_long: false,
            timeout_ms: None,
        }
    }

    #[test]
    fn a_new_incarnation_forgets_what_the_hooks_said_and_keeps_that_they_fire() {
        let mut hooks = hooks();
        assert!(hooks.called(&call("a")));
        hooks.hear(Some(HookActivity::Active));
        let at = |ms| Time::from_millis(ms);
        assert_eq!(
            hooks.ready_for(ActivityState::Idle, at(100)),
            Duration::ZERO
        );
        assert_eq!(
            hooks.grace_ends(Duration::from_secs(1), at(100)),
            Some(at(1_100))
        );
        assert!(!hooks.called(&call("a")), "the same incarnation is no news");
        assert_eq!(hooks.heard(), HookActivity::Active);
        assert!(hooks.called(&call("b")));
        assert_eq!(hooks.heard(), HookActivity::Unheard);
        assert_eq!(hooks.grace_ends(Duration::from_secs(1), at(200)), None);
        assert!(hooks.fired());
    }

    #[test]
    fn the_screen_has_looked_ready_since_its_first_ready_reading_after_a_hook() {
        let mut hooks = hooks();
        let at = |ms| Time::from_millis(ms);
        assert_eq!(hooks.ready_for(ActivityState::Idle, at(10)), Duration::ZERO);
        assert_eq!(
            hooks.ready_for(ActivityState::Idle, at(50)),
            Duration::from_millis(40)
        );
        assert_eq!(
            hooks.ready_for(ActivityState::Active, at(60)),
            Duration::ZERO
        );
        assert_eq!(hooks.ready_for(ActivityState::Idle, at(70)), Duration::ZERO);
        hooks.hear(Some(HookActivity::Idle));
        assert_eq!(hooks.ready_for(ActivityState::Idle, at(90)), Duration::ZERO);
        hooks.hear(None);
        assert_eq!(
            hooks.ready_for(ActivityState::Idle, at(95)),
            Duration::from_millis(5)
        );
    }
}
