//! `ding adapter gemini`: Gemini CLI's grammar and hooks on the neutral
//! adapter kit.
//!
//! The provider is the screen reader (`screen.rs`), the hook plans
//! (`hooks.rs`) and a little memory: what the hooks last said the harness
//! does, since when the screen has looked ready, and whether the hook
//! configuration the adapter relies on is in place (`--settings PATH`, the
//! file `ding compile-agent gemini` wrote). Gemini CLI has no native idle
//! path (findings, 4c): idle work is the typed notice under the input
//! fence, and the composer is read back before its Return.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::adapter::adapter_args::AdapterArgs;
use crate::adapter::hook_config::HookEntry;
use crate::adapter::kit::{self, AdapterEnv};
use crate::adapter::screen::ComposerContent;
use crate::adapter::settings_hooks::SettingsHooks;
use crate::adapter::{AgentContext, HarnessEnv, HookAnswer, HookCall, HookPlan, Provider, Reading};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::protocol::WithdrawKeys;
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::activity::combine;
use super::settings::{PROVIDER, hook_entries};
use super::timing::{HOOK_GRACE, WITHDRAW_AFTER_MS};
use super::{hooks, screen};

pub struct Gemini {
    /// The hook settings file, and what the hooks last said.
    hooks: SettingsHooks,
}

impl Gemini {
    pub fn new(settings: Option<PathBuf>, program: String) -> Gemini {
        let entries = hook_entries(&program);
        let label = |entry: &HookEntry| entry.event.clone();
        Gemini {
            hooks: SettingsHooks::new(PROVIDER, settings, program, entries, label),
        }
    }
}

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading {
        let screen = screen::read(snapshot).reading();
        let ready_for = self.hooks.ready_for(screen.state, now);
        combine(screen, self.hooks.heard(), ready_for)
    }

    /// The end of the hook's grace while it said a turn runs and the
    /// screen has looked ready since (`activity.rs`).
    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        self.hooks.grace_ends(HOOK_GRACE, now)
    }

    fn composer_content(&self, snapshot: &Snapshot) -> ComposerContent {
        screen::composer_content(snapshot)
    }

    /// Ctrl-U kills the composer's line left of the cursor: the whole
    /// one-line notice, the cursor at its end; on an empty composer it
    /// does nothing (findings; `timing::WITHDRAW_AFTER_MS`).
    fn withdraw_keys(&self) -> Option<WithdrawKeys<'static>> {
        Some(WithdrawKeys {
            keys: Cow::Borrowed("\u{15}"),
            after_ms: WITHDRAW_AFTER_MS,
        })
    }

    /// A new incarnation: what its hooks said was about the old one.
    fn on_new_terminal(&mut self, identity: Option<&Identity>, _now: Time) {
        self.hooks
            .new_terminal(identity.map(|identity| identity.incarnation.as_str()));
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext, _now: Time) -> HookPlan {
        self.hooks.called(call);
        let planned = hooks::plan(&call.event, &call.payload, agent);
        self.hooks.hear(planned.activity);
        planned.plan
    }

    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
        _now: Time,
    ) -> HookAnswer {
        hooks::render(&call.event, claimed, agent)
    }

    fn settings_hooks(&self) -> Option<&SettingsHooks> {
        Some(&self.hooks)
    }

    fn settings_hooks_mut(&mut self) -> Option<&mut SettingsHooks> {
        Some(&mut self.hooks)
    }

    /// Headless under `CI=true`, colourless under any `CI`, `NO_COLOR` and
    /// more: see `environment.rs`.
    fn check_harness_env(&self, env: &HarnessEnv) -> Result<(), String> {
        super::environment::check(env)
    }

    fn startup_settle(&self) -> Duration {
        super::timing::STARTUP_SETTLE
    }
}

const HELP: &str = "\
Usage: ding adapter gemini [--settings PATH] [--ding PROGRAM]

Gemini CLI's DING adapter, run by the sidecar (docs/providers/gemini.md).

  --settings PATH    the hook settings file to check (compile-agent writes it)
  --ding PROGRAM     how its hooks spell ding (default: this ding's path)
";

/// `ding adapter gemini [OPTIONS]`.
pub fn run(args: Vec<OsString>) -> Result<()> {
    let Some(AdapterArgs { settings, program }) = AdapterArgs::parse(args, HELP, |_, _| Ok(false))?
    else {
        return Ok(());
    };
    kit::main(Gemini::new(settings, program), AdapterEnv::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::captures as fixtures;
    use crate::core::protocol::ActivityState;

    fn call(event: &str, incarnation: &str) -> HookCall {
        let payload = serde_json::json!({"prompt": "hello"});
        crate::adapter::hook_wire::test_call(PROVIDER, event, incarnation, payload)
    }

    /// What the hooks of one incarnation said shapes no evidence about the
    /// next, and a turn's start outweighs a ready screen only for the
    /// grace.
    #[test]
    fn hooks_and_the_screen_make_the_evidence() {
        let ready = fixtures::capture("gemini/snapshots", "idle-empty");
        let busy = fixtures::capture("gemini/snapshots", "busy-thinking");
        let at = Time::from_millis;
        let agent = crate::adapter::hook_plan::example_agent();
        let mut gemini = Gemini::new(None, "ding".into());
        assert_eq!(gemini.evidence(&ready, at(0)).state, ActivityState::Idle);
        gemini.on_hook(&call("BeforeAgent", "a"), &agent, at(10));
        assert_eq!(gemini.evidence(&ready, at(20)).state, ActivityState::Active);
        assert_eq!(gemini.evidence(&busy, at(30)).state, ActivityState::Active);
        gemini.on_hook(&call("BeforeTool", "a"), &agent, at(40));
        assert_eq!(gemini.evidence(&busy, at(50)).state, ActivityState::Child);
        gemini.on_new_terminal(
            Some(&Identity {
                session: "s".into(),
                incarnation: "b".into(),
                generation: "g".into(),
            }),
            at(60),
        );
        assert_eq!(gemini.evidence(&ready, at(70)).state, ActivityState::Idle);
        gemini.on_hook(&call("BeforeAgent", "b"), &agent, at(100));
        assert_eq!(
            gemini.evidence(&ready, at(200)).state,
            ActivityState::Active
        );
        let later = at(200) + super::super::timing::HOOK_GRACE;
        assert_eq!(gemini.evidence(&ready, later).state, ActivityState::Idle);
        gemini.on_hook(&call("AfterAgent", "b"), &agent, later);
        assert_eq!(gemini.evidence(&ready, later).state, ActivityState::Idle);
        assert_eq!(
            gemini.remark().as_deref(),
            Some("gemini hooks: not checked (no --settings)")
        );
    }
}
