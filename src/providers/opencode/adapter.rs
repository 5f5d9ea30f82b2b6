//! `ding adapter opencode`: OpenCode's grammar and plugin calls on the
//! neutral adapter kit.
//!
//! The provider is the screen reader (`screen.rs`), the call plans
//! (`hooks.rs`) and a little memory: what the calls last said the harness
//! does (the kit's `HeardHooks`), the deliveries handed to the TUI plugin
//! and whether its native idle path works (the kit's `native_idle`), and
//! whether DING's plugins are configured and loaded (`plugins.rs`).
//!
//! DING never types into OpenCode: the typed path is no fallback here.
//! Idle work goes only through the TUI plugin's prompt call; where that
//! cannot act, the work holds with the reason said.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::adapter::find_program::find_on_path;
use crate::adapter::heard_hooks::HeardHooks;
use crate::adapter::hook_activity::HookActivity;
use crate::adapter::kit::{self, AdapterEnv};
use crate::adapter::native_idle::path::{NativePath, Words};
use crate::adapter::native_idle::plan::LAUNCH;
use crate::adapter::native_idle::report;
use crate::adapter::native_idle::wire::{LaunchReport, QueueReport};
use crate::adapter::{
    AgentContext, HookAnswer, HookCall, HookPlan, Provider, Reading, SettingsRead,
};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::protocol::ActivityState;
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::hooks::{self, Memory, QUEUE};
use super::plugins::{LOADED, PluginCheck};
use super::screen;
use super::timing::{DELIVERY_GRACE, HOOK_GRACE};

/// The name OpenCode's calls use (`provider` on the hook channel).
pub const PROVIDER: &str = "opencode";

/// How OpenCode's native path is spoken of.
const WORDS: Words = Words {
    reporter: "DING's TUI plugin",
    delivers_through: "the session's own prompt call",
};

pub struct OpenCode {
    hooks: HeardHooks,
    memory: Memory,
    path: NativePath,
    plugins: PluginCheck,
}

impl OpenCode {
    pub fn new(project: Option<PathBuf>) -> OpenCode {
        OpenCode {
            hooks: HeardHooks::default(),
            memory: Memory::default(),
            path: NativePath::new(true, WORDS),
            plugins: PluginCheck::new(project),
        }
    }

    fn new_terminal(&mut self, incarnation: Option<&str>) {
        if self.hooks.new_terminal(incarnation) {
            self.forget_the_old_opencode();
        }
    }

    /// Its deliveries died with the old OpenCode, and its plugins say again
    /// that they are loaded.
    fn forget_the_old_opencode(&mut self) {
        self.memory = Memory::default();
        self.path.new_terminal();
        self.plugins.new_terminal();
    }

    /// When the grace of a delivery of DING's waiting for its turn ends.
    fn delivery_grace_ends(&self, now: Time) -> Option<Time> {
        let waiting = !self.memory.native.handed.is_empty();
        self.path.delivery_grace_ends(waiting, DELIVERY_GRACE, now)
    }
}

impl Provider for OpenCode {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    /// The kit's rule for a screen and a turn's edges, and one more: while
    /// a delivery handed to the TUI plugin waits for its turn, the session
    /// is not idle (the turn is about to start).
    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading {
        let read = screen::read(snapshot).reading();
        let reading = self.hooks.evidence(read, HOOK_GRACE, now);
        if reading.state == ActivityState::Idle && self.delivery_grace_ends(now).is_some() {
            return Reading {
                state: ActivityState::Active,
                reason: "DING handed a delivery to OpenCode; its turn is about to start".into(),
                ..reading
            };
        }
        reading
    }

    /// The end of a turn edge's grace, and of a delivery's.
    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        let hooks = self.hooks.grace_ends(HOOK_GRACE, now);
        hooks.into_iter().chain(self.delivery_grace_ends(now)).min()
    }

    /// Never the terminal: while the native path works (or starts) it
    /// delivers idle work, and where it cannot, the work holds.
    fn native_path_holds(&self) -> Option<String> {
        self.path.holds().or_else(|| {
            Some(match self.path.remark() {
                Some(why) => format!("{why}; DING never types into OpenCode"),
                None => "DING never types into OpenCode".into(),
            })
        })
    }

    fn on_new_terminal(&mut self, identity: Option<&Identity>, _now: Time) {
        self.new_terminal(identity.map(|identity| identity.incarnation.as_str()));
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext, now: Time) -> HookPlan {
        if self.hooks.called(call) {
            self.forget_the_old_opencode();
        }
        if call.event == LOADED {
            self.plugins.loaded(&call.payload);
            return HookPlan::nothing();
        }
        if call.event == LAUNCH {
            let launch: Option<LaunchReport> = serde_json::from_value(call.payload.clone()).ok();
            if self.path.on_launch(launch.as_ref()) {
                self.hooks.hear(Some(HookActivity::Unheard));
            }
        }
        let native = &mut self.memory.native;
        let Some(mut undelivered) =
            report::before_plan(&mut self.path, native, &call.event, &call.payload)
        else {
            return HookPlan::nothing();
        };
        let mut planned = hooks::plan(&call.event, &call.payload, agent, &self.memory);
        if call.event == QUEUE {
            let queue = QueueReport::from_payload(&call.payload);
            if queue.status.is_idle() && self.hooks.heard() == HookActivity::Unheard {
                self.hooks.hear(Some(HookActivity::Idle));
            }
            let failed =
                report::after_queue_plan(&mut self.path, &mut self.memory.native, &queue, now);
            undelivered.extend(failed);
            if queue.conversation.is_some() {
                self.memory.session = queue.conversation;
            }
            planned.plan.undelivered = undelivered;
        }
        if call.event == "chat.message"
            && let Some(text) = call.payload["text"].as_str()
        {
            // A delivery's turn started: its receipt is in the plan.
            self.memory.native.started(text);
        }
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
        let event = call.event.as_str();
        let native = &mut self.memory.native;
        report::answer_claim(
            &mut self.path,
            native,
            event,
            claimed,
            now,
            |claimed, id| hooks::render(event, claimed, agent, id),
        )
    }

    fn settings_files(&self) -> Vec<PathBuf> {
        self.plugins.files()
    }

    fn on_settings_read(&mut self, read: &[SettingsRead]) {
        self.plugins.read(read);
    }

    /// The plugins' configuration, and the harness program the declaration
    /// runs: found, as the start will need it.
    fn check_setup(&self, harness: Option<&[String]>) -> Result<String, String> {
        if let Some(program) = harness.and_then(|argv| argv.first())
            && find_on_path(program).is_none()
        {
            return Err(format!(
                "opencode: the harness program `{program}` is not found"
            ));
        }
        self.plugins.check_setup()
    }

    fn remark(&self) -> Option<String> {
        let mut remark = self.plugins.remark();
        if let Some(path) = self.path.remark() {
            remark.push_str("; ");
            remark.push_str(&path);
        }
        Some(remark)
    }

    fn startup_settle(&self) -> Duration {
        super::timing::STARTUP_SETTLE
    }
}

const HELP: &str = "\
Usage: ding adapter opencode [--project DIR]

OpenCode's DING adapter, run by the sidecar (docs/providers/opencode.md).

  --project DIR    the project whose OpenCode configuration holds DING's
                   plugins (compile-agent writes them), to check
";

/// `ding adapter opencode [OPTIONS]`.
pub fn run(args: Vec<OsString>) -> Result<()> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut project = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("project") => project = Some(PathBuf::from(parser.value()?)),
            Short('h') | Long("help") => {
                print!("{HELP}");
                return Ok(());
            }
            other => anyhow::bail!("{}", other.unexpected()),
        }
    }
    kit::main(OpenCode::new(project), AdapterEnv::from_env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::captures::capture;
    use crate::adapter::hook_plan::example_agent;
    use crate::adapter::hook_wire::test_call;
    use crate::adapter::native_idle::wire::QueueAnswer;
    use crate::core::downlink::granting as claimed;
    use serde_json::json;

    /// A delivery handed to the TUI plugin holds an idle screen until its
    /// prompt comes back as the receipt; DING never types, whatever the
    /// path says.
    #[test]
    fn a_delivery_holds_the_screen_until_its_prompt_is_the_receipt() {
        let at = Time::from_millis;
        let agent = example_agent();
        let idle = capture("opencode/snapshots", "idle-session-empty");
        let mut opencode = OpenCode::new(None);
        assert!(
            opencode
                .native_path_holds()
                .unwrap()
                .contains("has not reported")
        );
        let report = json!({"conversation": "s", "status": "idle"});
        let queue = test_call(PROVIDER, QUEUE, "a", report);
        opencode.on_hook(&queue, &agent, at(0));
        assert_eq!(opencode.evidence(&idle, at(10)).state, ActivityState::Idle);
        let answer = opencode.on_claimed(&queue, &claimed(&["a.md"]), &agent, at(20));
        let text = QueueAnswer::read(&answer).expect("a delivery").text;
        let held = opencode.evidence(&idle, at(30));
        assert_eq!(held.state, ActivityState::Active, "{}", held.reason);
        let prompt = test_call(
            PROVIDER,
            "chat.message",
            "a",
            json!({"sessionID": "s", "text": text}),
        );
        let plan = opencode.on_hook(&prompt, &agent, at(40));
        assert_eq!(plan.received.len(), 1);
        assert!(opencode.memory.native.handed.is_empty());
        let down = test_call(
            PROVIDER,
            "launch",
            "a",
            json!({"mode": "native-unavailable", "error": "no TUI API"}),
        );
        opencode.on_hook(&down, &agent, at(50));
        let path = opencode
            .path
            .on_launch(Some(&serde_json::from_value(down.payload).unwrap()));
        assert!(!path);
        let holds = opencode.native_path_holds().expect("never the terminal");
        assert!(holds.contains("DING never types into OpenCode"), "{holds}");
    }

    /// The plugins say they loaded; a new OpenCode loads them again.
    #[test]
    fn the_remark_says_which_plugin_loaded_in_this_opencode() {
        let agent = example_agent();
        let mut opencode = OpenCode::new(None);
        let loaded = |incarnation| {
            test_call(
                PROVIDER,
                LOADED,
                incarnation,
                json!({"plugin": "server", "version": 1}),
            )
        };
        opencode.on_hook(&loaded("a"), &agent, Time::ZERO);
        assert!(
            opencode
                .remark()
                .unwrap()
                .contains("server loaded, tui not loaded yet")
        );
        let status = test_call(PROVIDER, "session.status", "b", json!({"status": "busy"}));
        opencode.on_hook(&status, &agent, Time::ZERO);
        assert!(opencode.remark().unwrap().contains("server not loaded yet"));
    }
}
