//! What each Codex CLI 0.169.0 hook does with unread work: pure functions
//! from the hook's event and payload (and what the adapter remembers) to a
//! plan (claim, park, answer, facts, receipts), and from a claim's answer to
//! what the hook prints.
//!
//! | event | activity | with unread work |
//! |---|---|---|
//! | `SessionStart` | active (it fires with the first prompt of a session, never at start) | pending work as `additionalContext`, riding that first request; `clear` first reports lifecycle `clear` (unless the launcher or a `SessionStart` already did for this thread: the same hook run twice reports it once), `compact` takes the whole unread backlog (scope `unread`) but for what a prompt of the thread carried (the compaction kept that prompt), and only in a thread the adapter saw begin (else pending work: an adapter spawned again within a thread cannot tell what its earlier prompts carried) |
//! | `UserPromptSubmit` | active | pending work as `additionalContext` (the same request); a receipt for DING's own prompt: a delivery it queued (exactly its text) or its notice typed by the terminal path |
//! | `PreModelRequest` | active | none |
//! | `PreToolUse` | child | none |
//! | `PermissionRequest` | awaiting approval | none: it prints nothing, ever (its output could answer the dialog) |
//! | `PostToolUse` | active | pending work as `additionalContext` (the tool-result request: no extra call) |
//! | `PreCompact` | active | lifecycle `compaction` |
//! | `PostCompact` | idle after a manual `/compact`, else active | none |
//! | `Stop` | stopping (idle once decided) | pending work that found no ride: `{"decision":"block"}`, one extra request, the price of any delivery; never when `stop_hook_active` (no loop) |
//! | `Interrupt` | idle (Esc; a denied approval) | none |
//! | `SessionEnd` | ending | none |
//! | `queue` (the launcher) | | parked while the thread is idle and none of DING's deliveries waits in its queue; claims pending work and answers it as a delivery to queue (`{"queue":{"id","text"}}`) |
//! | `launch` (the launcher, embedded) | | none: it only says which hooks it declared |
//!
//! A delivery the launcher could not queue leaves its files hook-owned
//! but outside any context: they are *owed*, and the next hook that
//! injects claims exactly them again (scope `unread`).

use serde_json::{Value, json};

use crate::adapter::context::{names_in_notice, unread_work};
use crate::adapter::native_idle::deliveries::Deliveries;
use crate::adapter::native_idle::plan::{QUEUE_PARK, end_the_park_when_busy, queue_plan};
use crate::adapter::native_idle::wire::QueueAnswer;
use crate::adapter::{AgentContext, HookAction, HookAnswer, HookPlan};
use crate::core::downlink::Claimed;
use crate::core::message::MessageName;
use crate::core::protocol::{ClaimScope, Lifecycle};

pub use crate::adapter::native_idle::plan::{LAUNCH, QUEUE};

use super::activity::HookActivity;

/// The most characters one injected text takes: Codex spills a longer
/// `additionalContext` into a file (about 2,500 tokens), so stay well
/// under it.
pub const CONTEXT_CAP: usize = 4_000;

/// What the adapter remembers that a hook's plan depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Deliveries given to the launcher whose turn has not started, and
    /// files owed for those that never reached Codex's queue.
    pub native: Deliveries,
    /// The thread the launcher last named (a new one: `/clear`).
    pub thread: Option<String>,
    /// The thread for which `clear` was already reported.
    pub cleared: Option<String>,
    /// Files a prompt of this thread carried (a delivery's turn, DING's
    /// typed notice), since the context last began again. Codex keeps a
    /// thread's user messages through a compaction, so these are still in
    /// the compacted context: its backlog must not say them a second time.
    pub prompted: Vec<MessageName>,
    /// The thread this adapter saw begin (its first prompt's
    /// `SessionStart`, `startup` or `clear`): only of that thread has it
    /// seen every prompt, so only there does [`Memory::prompted`] hold all
    /// that a compaction keeps. An adapter spawned again within a thread
    /// (its sidecar was killed) does not know what the prompts before it
    /// carried.
    pub seen_begin: Option<String>,
}

/// What one hook call means.
pub type HookReading = crate::adapter::HookReading<HookActivity>;

/// The claim a hook that injects makes: the owed files if any, else the
/// oldest pending (or, with `scope` unread, unread) ones that fit.
fn injection(agent: &AgentContext, memory: &Memory, scope: ClaimScope) -> HookAction {
    HookAction::Claim(memory.native.claim(agent, CONTEXT_CAP, scope))
}

/// The plan for one hook call. A hook that says a turn runs also ends the
/// launcher's parked call (the kit's `end_the_park_when_busy`).
pub fn plan(event: &str, payload: &Value, agent: &AgentContext, memory: &Memory) -> HookReading {
    let mut planned = plan_for(event, payload, agent, memory);
    let busy = planned
        .activity
        .is_some_and(|activity| activity != HookActivity::Idle);
    end_the_park_when_busy(event, payload, busy, &mut planned.plan);
    planned
}

fn plan_for(event: &str, payload: &Value, agent: &AgentContext, memory: &Memory) -> HookReading {
    let pending = || injection(agent, memory, ClaimScope::Pending);
    match event {
        "SessionStart" => {
            let session = payload["session_id"].as_str();
            let whole_thread = session.is_some() && session == memory.seen_begin.as_deref();
            let mut plan = match payload["source"].as_str() {
                Some("compact") if whole_thread => {
                    HookPlan::act(injection(agent, memory, ClaimScope::Unread))
                }
                // Fail closed: a thread whose earlier prompts this adapter
                // never saw may hold any delivered file in a prompt the
                // compaction kept; its backlog would say it a second time.
                // Only work no one owns is said.
                _ => HookPlan::act(pending()),
            };
            if payload["source"] == "clear"
                && (session.is_none() || session != memory.cleared.as_deref())
            {
                plan.facts.push(Lifecycle::Clear);
            }
            HookReading::new(Some(HookActivity::Active), plan)
        }
        "UserPromptSubmit" => {
            let mut plan = HookPlan::act(pending());
            if let Some(prompt) = payload["prompt"].as_str() {
                plan.received = memory.native.received(prompt);
                plan.received.extend(names_in_notice(agent, prompt));
            }
            HookReading::new(Some(HookActivity::Active), plan)
        }
        "PreModelRequest" => HookReading::new(Some(HookActivity::Active), HookPlan::nothing()),
        "PreToolUse" => HookReading::new(Some(HookActivity::Child), HookPlan::nothing()),
        "PermissionRequest" => {
            HookReading::new(Some(HookActivity::AwaitingApproval), HookPlan::nothing())
        }
        "PostToolUse" => HookReading::new(Some(HookActivity::Active), HookPlan::act(pending())),
        "PreCompact" => {
            let mut plan = HookPlan::nothing();
            plan.facts.push(Lifecycle::Compaction);
            HookReading::new(Some(HookActivity::Active), plan)
        }
        "PostCompact" => {
            let activity = if payload["trigger"] == "manual" {
                HookActivity::Idle
            } else {
                HookActivity::Active
            };
            HookReading::new(Some(activity), HookPlan::nothing())
        }
        "Stop" => {
            // A continuation's own Stop never blocks again: no loop.
            if payload["stop_hook_active"] == true {
                HookReading::new(Some(HookActivity::Idle), HookPlan::nothing())
            } else {
                HookReading::new(Some(HookActivity::Stopping), HookPlan::act(pending()))
            }
        }
        "Interrupt" => HookReading::new(Some(HookActivity::Idle), HookPlan::nothing()),
        "SessionEnd" => HookReading::new(Some(HookActivity::Ended), HookPlan::nothing()),
        QUEUE => {
            let claim = memory.native.claim(agent, CONTEXT_CAP, ClaimScope::Pending);
            // A new thread in the same TUI (`/clear`) is a `clear`.
            let plan = queue_plan(payload, memory.thread.as_deref(), claim, QUEUE_PARK);
            // The launcher's status is not ordered against the hooks: the
            // adapter uses it only while no hook has spoken.
            HookReading::new(None, plan)
        }
        _ => HookReading::new(None, HookPlan::nothing()),
    }
}

/// What the hook prints once its claim was answered; for `queue`, `id`
/// names the delivery.
pub fn render(event: &str, claimed: &Claimed, agent: &AgentContext, id: &str) -> HookAnswer {
    let text = unread_work(agent, &claimed.granted, claimed.not_granted);
    if text.is_empty() {
        return HookAnswer::default();
    }
    match event {
        "SessionStart" | "UserPromptSubmit" | "PostToolUse" => stdout(json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        })),
        "Stop" => stdout(json!({"decision": "block", "reason": text})),
        QUEUE => QueueAnswer::deliver(id, text),
        _ => HookAnswer::default(),
    }
}

fn stdout(value: Value) -> HookAnswer {
    HookAnswer {
        stdout: format!("{value}\n"),
        ..HookAnswer::default()
    }
}
