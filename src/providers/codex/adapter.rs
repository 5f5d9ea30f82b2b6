//! `ding adapter codex`: Codex's grammar and hooks on the neutral adapter
//! kit, and (`ding adapter codex launch ...`) the launcher that runs Codex
//! under the PTY host (`launch/`).
//!
//! The provider is the screen reader (`screen.rs`), the hook plans
//! (`hooks.rs`) and a little memory: what the hooks last said the harness
//! does and when, the deliveries it gave the launcher to queue, and what
//! the launcher reported about DING's hooks (declared, trusted). That last
//! fact is the kit's remark: `ding status` shows it with every activity
//! reason.

use std::borrow::Cow;
use std::ffi::OsString;
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::adapter::compile::IdlePath;
use crate::adapter::find_program::find_on_path;
use crate::adapter::kit::{self, AdapterEnv};
use crate::adapter::native_idle::path::{NativePath, Words};
use crate::adapter::native_idle::report;
use crate::adapter::native_idle::wire::{LaunchReport, QueueReport};
use crate::adapter::screen::ComposerContent;
use crate::adapter::{
    AgentContext, HarnessEnv, HookAnswer, HookCall, HookPlan, Incarnation, Provider, Reading,
};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::{Lifecycle, WithdrawKeys};
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::activity::{Heard, HookActivity, combine};
use super::hooks::{self, LAUNCH, Memory, QUEUE};
use super::screen;
use super::timing::{DELIVERY_GRACE, STOP_GRACE};
use super::trust::{HOOKS, PROVIDER};

/// What the launcher said about DING's hooks.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Installed {
    /// No launcher has called (yet).
    NotReported,
    /// Embedded mode: the hooks the launcher declared (trust unverified);
    /// the events missing.
    Declared { missing: Vec<String> },
    /// Native mode: Codex's own `hooks/list`; the events missing or not
    /// trusted, with why.
    Listed { problems: Vec<String> },
}

pub struct Codex {
    heard: HookActivity,
    heard_at: Time,
    /// Whether what was last heard is DING's own `Stop` block (the turn
    /// goes on because of the answer DING rendered), not a hook's word.
    blocked: bool,
    memory: Memory,
    installed: Installed,
    /// The native idle path: whether it is on and works, when the launcher
    /// last reported, and the ids of DING's deliveries.
    path: NativePath,
    /// Whether any harness hook has called since the adapter started.
    fired: bool,
    /// Whether the last screen read showed a dialog or selection list
    /// (a first-run question holds Codex's thread, and so the launcher's
    /// report, back until it is answered).
    dialog_shown: bool,
    /// The harness incarnation what was heard is about.
    incarnation: Incarnation,
}

/// How Codex's native path is spoken of.
const WORDS: Words = Words {
    reporter: "the launcher",
    delivers_through: "Codex's queue",
};

impl Codex {
    pub fn new(native: bool) -> Codex {
        Codex {
            heard: HookActivity::Unheard,
            heard_at: Time::ZERO,
            blocked: false,
            memory: Memory::default(),
            installed: Installed::NotReported,
            path: NativePath::new(native, WORDS),
            fired: false,
            dialog_shown: false,
            incarnation: Incarnation::default(),
        }
    }

    fn hear(&mut self, activity: HookActivity, now: Time) {
        self.heard = activity;
        self.heard_at = now;
        self.blocked = false;
    }

    /// A new incarnation of the harness: what was heard of the old one is
    /// void (its deliveries died with its queue).
    fn new_terminal(&mut self, incarnation: Option<&str>, now: Time) {
        if !self.incarnation.changed_to(incarnation) {
            return;
        }
        self.hear(HookActivity::Unheard, now);
        self.memory = Memory::default();
        self.path.new_terminal();
    }

    /// What the launcher said; the files of deliveries it reports it
    /// could not queue, which go back to unread work.
    fn on_launcher(&mut self, event: &str, payload: &Value, now: Time) -> Vec<MessageName> {
        if event == LAUNCH {
            // A report that does not read declares nothing.
            let launch: Option<LaunchReport> = serde_json::from_value(payload.clone()).ok();
            // A report that names no hooks (the native path going down)
            // says nothing of them: what was said stays. One that does not
            // read declares none.
            let declared = match &launch {
                Some(LaunchReport { declared: None, .. }) => None,
                Some(LaunchReport { declared, .. }) => Some(declared.clone().unwrap_or_default()),
                None => Some(Vec::new()),
            };
            if let Some(declared) = declared {
                self.installed = Installed::Declared {
                    missing: HOOKS
                        .iter()
                        .map(|(event, _)| event.to_string())
                        .filter(|event| !declared.contains(event))
                        .collect(),
                };
            }
            if self.path.on_launch(launch.as_ref()) {
                // The turn it ran (if any) died with it, no Stop said:
                // what the hooks said no longer holds.
                self.hear(HookActivity::Unheard, now);
            }
            return Vec::new();
        }
        let report = QueueReport::from_payload(payload);
        if let Some(listed) = &report.hooks {
            let problems = HOOKS
                .iter()
                .filter_map(|(event, _)| {
                    let trust = listed
                        .iter()
                        .find(|hook| hook.event == *event)
                        .map(|hook| hook.trust.as_deref().unwrap_or("unknown"));
                    match trust {
                        Some("trusted") => None,
                        Some(other) => Some(format!("{event} ({other})")),
                        None => Some(format!("{event} (absent)")),
                    }
                })
                .collect();
            self.installed = Installed::Listed { problems };
        }
        if report.status.is_idle() && self.heard == HookActivity::Unheard {
            self.hear(HookActivity::Idle, now);
        }
        // Deliveries that could not be queued: their files are owed.
        let undelivered =
            report::after_queue_plan(&mut self.path, &mut self.memory.native, &report, now);
        if report.conversation.is_some() && report.conversation != self.memory.thread {
            if self.memory.thread.is_some() {
                self.memory.cleared = report.conversation.clone();
            }
            self.memory.thread = report.conversation;
        }
        undelivered
    }
}

impl Provider for Codex {
    fn name(&self) -> &'static str {
        PROVIDER
    }

    fn composer_content(&self, snapshot: &Snapshot) -> ComposerContent {
        screen::composer_content(snapshot)
    }

    /// Codex 0.169.0: Ctrl-U kills the composer's logical line, wrapped
    /// rows and a `[Pasted Content N chars]` placeholder included, so one
    /// empties it right after DING's one-line paste, even in the same read
    /// (docs/providers/codex.md, "Taking a notice back out").
    fn withdraw_keys(&self) -> Option<WithdrawKeys<'static>> {
        Some(WithdrawKeys {
            keys: Cow::Borrowed("\u{15}"),
            after_ms: 0,
        })
    }

    /// The end of the grace of a delivery waiting in Codex's queue, and of
    /// `Stop`'s while it decides (`activity.rs`).
    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        let waiting = !self.memory.native.handed.is_empty();
        let delivery = self.path.delivery_grace_ends(waiting, DELIVERY_GRACE, now);
        let stopping = (self.heard == HookActivity::Stopping).then(|| self.heard_at + STOP_GRACE);
        delivery
            .into_iter()
            .chain(stopping)
            .filter(|at| *at > now)
            .min()
    }

    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading {
        let view = screen::read(snapshot);
        self.dialog_shown = view.screen == screen::Screen::Dialog;
        combine(
            view,
            Heard {
                activity: self.heard,
                since: now.since(self.heard_at),
                delivery_waiting: self
                    .path
                    .delivery_waiting(!self.memory.native.handed.is_empty(), now),
            },
        )
    }

    /// The terminal path is only for when the queue cannot work (the kit's
    /// `NativePath::holds`).
    fn native_path_holds(&self) -> Option<String> {
        self.path.holds()
    }

    /// What the hooks said, the deliveries given to the launcher and the
    /// launcher's report are all about one incarnation: a new one forgets
    /// them (its deliveries died with its queue). What the launcher said
    /// of the hooks' setup stays until it reports again.
    fn on_new_terminal(&mut self, identity: Option<&Identity>, now: Time) {
        self.new_terminal(identity.map(|identity| identity.incarnation.as_str()), now);
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext, now: Time) -> HookPlan {
        if let Some(identity) = &call.identity {
            self.new_terminal(Some(&identity.incarnation), now);
        }
        // A late report of a dead app-server plans nothing; the new one's
        // first gives back what died with the old one.
        let native = &mut self.memory.native;
        let Some(mut undelivered) =
            report::before_plan(&mut self.path, native, &call.event, &call.payload)
        else {
            return HookPlan::nothing();
        };
        let mut planned = hooks::plan(&call.event, &call.payload, agent, &self.memory);
        if call.event == QUEUE || call.event == LAUNCH {
            undelivered.extend(self.on_launcher(&call.event, &call.payload, now));
            planned.plan.undelivered = undelivered;
        } else {
            self.fired = true;
        }
        if planned.plan.facts.contains(&Lifecycle::Clear) {
            // The context begins again: no prompt of it carried anything.
            self.memory.prompted.clear();
        }
        if call.event == "SessionStart" {
            let session = call.payload["session_id"].as_str().map(str::to_string);
            let source = call.payload["source"].as_str();
            if source == Some("clear") && planned.plan.facts.contains(&Lifecycle::Clear) {
                // Reported once for the thread: the same hook run twice
                // (settings merged twice) must not give back what the
                // first run's claim just took (`cleared`, as when the
                // launcher reports the new thread).
                self.memory.cleared.clone_from(&session);
            }
            if matches!(source, Some("startup" | "clear")) {
                // This thread's first prompt: every prompt of it passes
                // this adapter.
                self.memory.seen_begin = session;
            }
        }
        if call.event == "UserPromptSubmit"
            && let Some(prompt) = call.payload["prompt"].as_str()
        {
            // A delivery's turn started: its receipt is in the plan.
            self.memory.native.started(prompt);
            // Its files are in this prompt, which a compaction keeps.
            self.memory
                .prompted
                .extend(planned.plan.received.iter().cloned());
        }
        if let Some(activity) = planned.activity {
            self.hear(activity, now);
        }
        planned.plan
    }

    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
        now: Time,
    ) -> HookAnswer {
        // A file of a delivery still waiting in Codex's queue is left out
        // (the kit's `claimed_for`: seen after a compaction, SessionStart's
        // backlog and the queued prompt of the same turn). So is a file a
        // prompt of this thread already carried: a compaction keeps the
        // thread's user messages, and SessionStart's backlog would say it
        // beside that prompt (on Codex 0.169.0 the request after a
        // `/compact` carried the queued notice of the turn before it:
        // `compaction-0.169.0.jsonl`).
        let event = call.event.as_str();
        let prompted = &self.memory.prompted;
        let native = &mut self.memory.native;
        let answer = report::answer_claim(
            &mut self.path,
            native,
            event,
            claimed,
            now,
            |claimed, id| {
                let mut claimed = claimed.clone();
                if event != QUEUE {
                    claimed.granted.retain(|name| !prompted.contains(name));
                }
                hooks::render(event, &claimed, agent, id)
            },
        );
        if event == "Stop" && self.heard == HookActivity::Stopping {
            // Blocked: the turn goes on. Nothing granted: it is over.
            let blocks = !answer.stdout.is_empty();
            let activity = if blocks {
                HookActivity::Active
            } else {
                HookActivity::Idle
            };
            self.hear(activity, now);
            self.blocked = blocks;
        }
        answer
    }

    /// A `Stop` block its hook never passed on blocked nothing: Codex
    /// reads a hook's stdout only from a run that exited 0, and a run
    /// killed (a signal) or timed out is a failed one, whose output it
    /// ignores, so the turn ended there (thread idle, no further hook).
    /// Believing the turn went on held idle work until the person's next
    /// prompt (the whole-agent simulation, seeds 720437 and 863417). Only
    /// while that block is still the last thing heard: a hook of the
    /// continuation (the block did reach Codex after all) says more.
    fn on_answer_unread(&mut self, call: &HookCall, now: Time) {
        if call.event == "Stop" && self.blocked {
            self.hear(HookActivity::Idle, now);
        }
    }

    fn check_setup(&self, harness: Option<&[String]>) -> Result<String, String> {
        check_harness(harness, self.path.is_on())
    }

    /// `TERM=dumb` stops the interface: see `environment.rs`.
    fn check_harness_env(&self, env: &HarnessEnv) -> Result<(), String> {
        super::environment::check(env)
    }

    fn startup_settle(&self) -> Duration {
        super::timing::STARTUP_SETTLE
    }

    fn remark(&self) -> Option<String> {
        let firing = if self.fired {
            "firing"
        } else {
            "none has fired yet (SessionStart fires with the first prompt)"
        };
        let mut remark = match &self.installed {
            // Codex starts its thread, and so the launcher reports, only
            // once its first-run questions (Hooks need review, trust) are
            // answered: that is no setup fault.
            Installed::NotReported if self.dialog_shown => format!(
                "codex hooks: the launcher reports once Codex starts its thread, which the dialog on screen holds back: answer it; hooks: {firing}"
            ),
            Installed::NotReported => format!(
                "codex hooks: no launcher has reported; is the harness command `$ST_HOOKS/codex-ding-adapter launch -- codex`? (run `ding compile-agent codex` again); hooks: {firing}"
            ),
            Installed::Declared { missing } if missing.is_empty() => {
                format!(
                    "codex hooks declared by the launcher (embedded; trust not verified); {firing}"
                )
            }
            Installed::Listed { problems } if problems.is_empty() => {
                format!("codex hooks trusted (Codex's hooks/list); {firing}")
            }
            Installed::Declared { missing: problems } | Installed::Listed { problems } => format!(
                "codex hooks MISSING or untrusted: {} (run `ding compile-agent codex` again)",
                problems.join(", ")
            ),
        };
        if let Some(path) = self.path.remark() {
            remark.push_str("; ");
            remark.push_str(&path);
        }
        Some(remark)
    }
}

const HELP: &str = "\
Usage: ding adapter codex [--idle-path native|terminal]
       ding adapter codex launch [--ding PROGRAM] [--idle-path native|terminal] -- CODEX [ARGS...]

Codex's DING adapter, run by the sidecar, and its launcher, run as the
harness command under the PTY host (docs/providers/codex.md).

  --idle-path PATH   `native` (the launcher queues idle work through Codex's
                     app-server; the default) or `terminal` (it is typed
                     under a fresh idle lease)
  --ding PROGRAM     how Codex's hooks run ding (default: ding)
";

/// `ding adapter codex [OPTIONS]`, or `ding adapter codex launch ...`.
pub fn run(args: Vec<OsString>) -> Result<()> {
    use lexopt::prelude::*;
    if args.first().is_some_and(|arg| arg == "launch") {
        return super::launch::main(args.into_iter().skip(1).collect());
    }
    let mut parser = lexopt::Parser::from_args(args);
    let mut native = true;
    while let Some(arg) = parser.next()? {
        match arg {
            Long("idle-path") => {
                native = IdlePath::parse(&parser.value()?.string()?)? == IdlePath::Native;
            }
            // How hooks spell ding matters to the launcher only; accepted
            // here so one set of options serves both.
            Long("ding") => {
                parser.value()?;
            }
            Short('h') | Long("help") => {
                print!("{HELP}");
                return Ok(());
            }
            other => bail!("{}", other.unexpected()),
        }
    }
    kit::main(Codex::new(native), AdapterEnv::from_env)
}

/// What `ding check --adapters` says: DING's hooks come with the harness
/// command, so the declared command must run DING's launcher (and it, and
/// the programs it names, must be found).
pub fn check_harness(harness: Option<&[String]>, native: bool) -> Result<String, String> {
    let missing = |why: String| {
        Err(format!(
            "codex hooks MISSING: {why} (run `ding compile-agent codex` again)"
        ))
    };
    let Some(argv) = harness.filter(|argv| !argv.is_empty()) else {
        return missing("the declaration has no harness command to declare them".into());
    };
    let launcher = argv.iter().position(|arg| arg == "launch").filter(|&at| {
        let before: Vec<&str> = argv[..at].iter().map(String::as_str).collect();
        matches!(before.as_slice(), [program] if program.ends_with("/codex-ding-adapter"))
            || matches!(before.as_slice(), [_, "adapter", "codex"])
    });
    let Some(at) = launcher else {
        return missing(format!(
            "the harness command `{}` does not run DING's launcher (`$ST_HOOKS/codex-ding-adapter launch -- codex`)",
            argv[0]
        ));
    };
    let request = match super::launch::parse(argv[at + 1..].iter().map(OsString::from).collect()) {
        Ok(request) => request,
        Err(err) => return missing(format!("the launcher's arguments: {err:#}")),
    };
    if request.native != native {
        return Err(format!(
            "codex idle paths disagree: the adapter says {}, the launcher {}",
            idle_word(native),
            idle_word(request.native)
        ));
    }
    for (what, program) in [
        ("ding (for its hooks)", &request.ding),
        ("codex", &request.program),
    ] {
        if find_on_path(program).is_none() {
            return Err(format!(
                "codex hooks cannot run: {what} `{program}` is not found"
            ));
        }
    }
    Ok(format!(
        "codex hooks declared and trusted per invocation by the launcher ({} hooks, run as `{} hook codex EVENT`; idle path {})",
        HOOKS.len(),
        request.ding,
        idle_word(native)
    ))
}

fn idle_word(native: bool) -> &'static str {
    if native { "native" } else { "terminal" }
}

#[cfg(test)]
#[path = "adapter_tests.rs"]
mod tests;
