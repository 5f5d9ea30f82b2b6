//! `ding adapter claude`: Claude Code's grammar and hooks on the neutral
//! adapter kit.
//!
//! The provider is the screen reader (`screen.rs`), the hook plans
//! (`hooks.rs`) and a little memory: what the hooks last said the harness
//! does, when DING last woke it, and whether the hook configuration the
//! adapter relies on is in place (`--settings PATH`, the file `ding
//! compile-agent claude` wrote). That last fact is the kit's remark: `ding
//! status` shows it with every activity reason, and the adapter says it on
//! its own line while nothing is pending.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use lexopt::ValueExt;

use crate::adapter::adapter_args::AdapterArgs;
use crate::adapter::compile::IdlePath;
use crate::adapter::hook_config::HookEntry;
use crate::adapter::kit::{self, AdapterEnv};
use crate::adapter::screen::ComposerContent;
use crate::adapter::settings_hooks::SettingsHooks;
use crate::adapter::{AgentContext, HookAnswer, HookCall, HookPlan, Provider, Reading};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::protocol::WithdrawKeys;
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::activity::{Heard, combine};
use super::settings::{PROVIDER, WAKE, hook_entries};
use super::timing::{HOOK_GRACE, WAKE_GRACE, WITHDRAW_AFTER_MS};
use super::{hooks, screen};

pub struct Claude {
    /// The hook settings file, and what the hooks last said.
    hooks: SettingsHooks,
    /// When DING last woke the harness (its wake hook exited 2), in the
    /// incarnation the hooks' memory is about.
    woken_at: Option<Time>,
}

impl Claude {
    pub fn new(settings: Option<PathBuf>, program: String, wake: bool) -> Claude {
        let entries = hook_entries(&program, wake);
        Claude {
            hooks: SettingsHooks::new(PROVIDER, settings, program, entries, label),
            woken_at: None,
        }
    }

    fn heard_at(&self, now: Time, ready_for: Duration) -> Heard {
        Heard {
            activity: self.hooks.heard(),
            ready_for,
            since_wake: self.woken_at.map(|at| now.since(at)),
        }
    }
}

/// How the remark names a missing handler (a wake handler is labelled as
/// such).
fn label(entry: &HookEntry) -> String {
    if entry.handler["asyncRewake"] == true {
        format!("{}(wake)", entry.event)
    } else {
        entry.event.clone()
    }
}

impl Provider for Claude {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading {
        let screen = screen::read(snapshot).reading();
        let ready_for = self.hooks.ready_for(screen.state, now);
        combine(screen, self.heard_at(now, ready_for))
    }

    /// The end of the wake's grace, and of the hook's while it said a
    /// turn runs and the screen has looked ready since (`activity.rs`).
    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        let wake = self
            .woken_at
            .map(|at| at + WAKE_GRACE)
            .filter(|at| *at > now);
        let hook = self.hooks.grace_ends(HOOK_GRACE, now);
        wake.into_iter().chain(hook).min()
    }

    fn composer_content(&self, snapshot: &Snapshot) -> ComposerContent {
        screen::composer_content(snapshot)
    }

    /// Claude Code 2.1.328: Ctrl-U kills one wrapped screen row of the
    /// composer (a `[Pasted text #N]` placeholder, over 800 characters, is
    /// one row), and does nothing when it comes in the same read as the
    /// paste; so [`WITHDRAW_KILLS`] of them, [`WITHDRAW_AFTER_MS`] after
    /// the paste (docs/providers/claude.md, "Taking a notice back out").
    fn withdraw_keys(&self) -> Option<WithdrawKeys<'static>> {
        Some(WithdrawKeys {
            keys: Cow::Borrowed(WITHDRAW_KILLS),
            after_ms: WITHDRAW_AFTER_MS,
        })
    }

    /// A new incarnation: what its hooks said, and DING's wake of it, were
    /// about the old one.
    fn on_new_terminal(&mut self, identity: Option<&Identity>, _now: Time) {
        let incarnation = identity.map(|identity| identity.incarnation.as_str());
        if self.hooks.new_terminal(incarnation) {
            self.woken_at = None;
        }
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext, _now: Time) -> HookPlan {
        if self.hooks.called(call) {
            self.woken_at = None;
        }
        let mut planned = hooks::plan(&call.event, &call.payload, agent);
        // A new session: the configuration may have been edited since.
        planned.plan.recheck_settings = call.event == "SessionStart";
        self.hooks.hear(planned.activity);
        planned.plan
    }

    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
        now: Time,
    ) -> HookAnswer {
        let answer = hooks::render(&call.event, claimed, agent);
        if call.event == WAKE && answer.exit == 2 {
            self.woken_at = Some(now);
        }
        answer
    }

    fn settings_hooks(&self) -> Option<&SettingsHooks> {
        Some(&self.hooks)
    }

    fn settings_hooks_mut(&mut self) -> Option<&mut SettingsHooks> {
        Some(&mut self.hooks)
    }

    fn startup_settle(&self) -> Duration {
        super::timing::STARTUP_SETTLE
    }
}

/// Claude Code's withdraw keys: 40 Ctrl-U, one per wrapped row of the
/// composer. A notice that Claude Code shows as text is at most 800
/// characters (longer is one `[Pasted text #N]` row), so 40 cover it down
/// to a 20-column terminal; presses on an empty composer show nothing.
const WITHDRAW_KILLS: &str = "\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\
\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\
\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\
\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}\u{15}";

const HELP: &str = "\
Usage: ding adapter claude [--settings PATH] [--ding PROGRAM] [--idle-path native|terminal]

Claude Code's DING adapter, run by the sidecar (docs/providers/claude.md).

  --settings PATH    the hook settings file to check (compile-agent writes it)
  --ding PROGRAM     how its hooks spell ding (default: this ding's path)
  --idle-path PATH   `native` (the wake hook is configured; the default) or
                     `terminal` (it is not)
";

/// `ding adapter claude [OPTIONS]`.
pub fn run(args: Vec<OsString>) -> Result<()> {
    let mut wake = true;
    let parsed = AdapterArgs::parse(args, HELP, |name, parser| {
        if name != "idle-path" {
            return Ok(false);
        }
        let path = parser.value()?.string()?;
        wake = IdlePath::parse(&path)? == IdlePath::Native;
        Ok(true)
    })?;
    let Some(AdapterArgs { settings, program }) = parsed else {
        return Ok(());
    };
    kit::main(Claude::new(settings, program, wake), AdapterEnv::from_env)
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

    fn identity(incarnation: &str) -> Identity {
        call("E", incarnation).identity.expect("an identity")
    }

    /// What the hooks of one incarnation said shapes no evidence about the
    /// next, whichever tells of the restart first: the downlink's identity
    /// or the new incarnation's own hook.
    #[test]
    fn a_new_incarnation_forgets_what_the_old_ones_hooks_said() {
        let ready = fixtures::capture("claude/screens", "idle-empty");
        let at = Time::from_millis;
        let agent = crate::adapter::hook_plan::example_agent();
        let mut claude = Claude::new(None, "ding".into(), true);
        claude.on_hook(&call("UserPromptSubmit", "a"), &agent, at(0));
        assert_eq!(
            claude.evidence(&ready, at(10)).state,
            ActivityState::Active,
            "the hook said a turn runs; the screen has not caught up"
        );
        claude.on_new_terminal(Some(&identity("b")), at(20));
        assert_eq!(claude.evidence(&ready, at(30)).state, ActivityState::Idle);
        // The new incarnation's hook, then the downlink telling of that
        // incarnation late: only a different incarnation is news.
        claude.on_hook(&call("UserPromptSubmit", "b"), &agent, at(40));
        claude.on_new_terminal(Some(&identity("b")), at(50));
        assert_eq!(claude.evidence(&ready, at(60)).state, ActivityState::Active);
        claude.on_hook(&call("SessionStart", "c"), &agent, at(70));
        assert_eq!(claude.evidence(&ready, at(80)).state, ActivityState::Idle);
        // The grace is time, not calls: past it the ready screen decides.
        claude.on_hook(&call("UserPromptSubmit", "c"), &agent, at(100));
        assert_eq!(
            claude.evidence(&ready, at(200)).state,
            ActivityState::Active
        );
        let later = at(200) + super::super::timing::HOOK_GRACE;
        assert_eq!(claude.evidence(&ready, later).state, ActivityState::Idle);
    }

    /// A verdict that rests on a grace says when the grace runs out, so a
    /// held screen is read again then and at no other time.
    #[test]
    fn a_grace_says_when_it_runs_out() {
        let ready = fixtures::capture("claude/screens", "idle-empty");
        let at = Time::from_millis;
        let agent = crate::adapter::hook_plan::example_agent();
        let mut claude = Claude::new(None, "ding".into(), true);
        assert_eq!(claude.evidence(&ready, at(10)).state, ActivityState::Idle);
        assert_eq!(claude.verdict_changes_at(at(10)), None);
        claude.on_hook(&call("UserPromptSubmit", "a"), &agent, at(20));
        assert_eq!(claude.evidence(&ready, at(30)).state, ActivityState::Active);
        let grace_ends = at(30) + HOOK_GRACE;
        assert_eq!(claude.verdict_changes_at(at(30)), Some(grace_ends));
        assert_eq!(
            claude.evidence(&ready, grace_ends).state,
            ActivityState::Idle
        );
        assert_eq!(claude.verdict_changes_at(grace_ends), None);
    }
}
