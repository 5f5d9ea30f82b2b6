//! What the adapter of a harness whose hooks live in one settings file
//! keeps (the kit's part, written once for every such provider): the
//! check of that file, and the memory of what its hooks last said: the
//! activity, since when the screen has looked ready after it, which
//! incarnation of the harness that is about, and whether any hook has
//! fired since the adapter started.
//!
//! A provider holds one and hands it to the kit through
//! [`super::Provider::settings_hooks`]; the kit then answers the setup
//! questions (which file to read, what it lacks, whether the hooks' program
//! is found, the remark) from it. What each hook event means stays the
//! provider's.

use std::path::PathBuf;
use std::time::Duration;

use super::hook_activity::{self, HookActivity};
use super::hook_config::HookEntry;
use super::hook_wire::HookCall;
use super::incarnation::Incarnation;
use super::settings_check::SettingsCheck;
use super::settings_check::SettingsRead;
use crate::core::protocol::ActivityState;
use crate::core::time::Time;

pub struct SettingsHooks {
    settings: SettingsCheck,
    /// The handlers the adapter relies on, and how the remark names each.
    wanted: Vec<HookEntry>,
    label: fn(&HookEntry) -> String,
    heard: HookActivity,
    /// Since when the screen has looked ready after the last hook (set by
    /// the first ready reading, cleared by any other reading or hook).
    ready_since: Option<Time>,
    /// The harness incarnation `heard` and `ready_since` are about.
    incarnation: Incarnation,
    /// Whether any hook has called since the adapter started.
    fired: bool,
}

impl SettingsHooks {
    /// `provider`'s hooks in `file` (if one was named), whose commands run
    /// `program`; `wanted` are the handlers the adapter relies on, each
    /// named in the remark by `label`.
    pub fn new(
        provider: &'static str,
        file: Option<PathBuf>,
        program: String,
        wanted: Vec<HookEntry>,
        label: fn(&HookEntry) -> String,
    ) -> SettingsHooks {
        SettingsHooks {
            settings: SettingsCheck::new(provider, file, program),
            wanted,
            label,
            heard: HookActivity::Unheard,
            ready_since: None,
            incarnation: Incarnation::default(),
            fired: false,
        }
    }

    /// What the hooks last said.
    pub fn heard(&self) -> HookActivity {
        self.heard
    }

    /// A new incarnation of the harness (or none known): what its hooks
    /// said was about the old one. The settings check and whether hooks
    /// fire at all are about the adapter's setup, and stay. Whether the
    /// incarnation was new.
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

    /// When the verdict on a ready screen changes with time alone: the end
    /// of `grace`, while the hooks said a turn runs (`hook_activity`).
    pub fn grace_ends(&self, grace: Duration, now: Time) -> Option<Time> {
        hook_activity::grace_ends(self.heard, self.ready_since, grace, now)
    }

    /// The settings file to read, if one was named.
    pub fn files(&self) -> Vec<PathBuf> {
        self.settings.files()
    }

    /// Takes in the settings file as the shell read it.
    pub fn on_read(&mut self, read: &[SettingsRead]) {
        self.settings.read(read, &self.wanted, self.label);
    }

    /// The program the hooks run.
    pub fn program(&self) -> &str {
        self.settings.program()
    }

    /// Whether the shell found [`SettingsHooks::program`].
    pub fn on_program(&mut self, found: bool) {
        self.settings.on_program(found);
    }

    /// `ding check --adapters`'s verdict on the hooks.
    pub fn check_setup(&self) -> Result<String, String> {
        self.settings.check_setup()
    }

    /// What `ding status` says of the hooks.
    pub fn remark(&self) -> String {
        self.settings.remark(self.fired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::identity::Identity;
    use serde_json::Value;

    fn hooks() -> SettingsHooks {
        SettingsHooks::new("h", None, "ding".into(), Vec::new(), |entry| {
            entry.event.clone()
        })
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
        assert!(
            hooks.remark().ends_with("(no --settings)"),
            "{}",
            hooks.remark()
        );
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
