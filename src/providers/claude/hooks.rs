//! What each Claude Code 2.1.328 hook does with unread work: pure functions
//! from the hook's event and payload to a plan (claim, park, answer, facts),
//! and from a claim's answer to what the hook prints.
//!
//! | event | activity | with unread work |
//! |---|---|---|
//! | `SessionStart` | idle | `source` `clear`: lifecycle `clear` (rung and injected work returns to pending, and the wake delivers it); `compact`: the whole backlog (scope `unread`) as `additionalContext`; every source returns `watchPaths` (the inbox's `new/`, for `FileChanged`) |
//! | `UserPromptSubmit` | active | pending work as `additionalContext` (reaches the same request); DING's own notice in the prompt is a `turn-boundary` receipt for the files it names |
//! | `PreToolUse` | child | none |
//! | `PostToolUse` | active | pending work as `additionalContext` (reaches the same turn's next request: no extra call) |
//! | `Stop` | idle | pending work that found no ride: `additionalContext`, which continues the turn (one extra model call, as a notice would cost; a `{"decision":"block"}` reason would reach the model twice); never when `stop_hook_active` (no loop) |
//! | `StopFailure` | idle | none (its output is ignored) |
//! | `Notification` | `permission_prompt`: awaiting the human | none |
//! | `PreCompact` | | lifecycle `compaction` |
//! | `wake` (background, `asyncRewake`) | | parked; when work is pending it claims it and exits 2 with the text on stderr, which wakes the model |
//!
//! Why `startup` and `resume` inject nothing: their `additionalContext`
//! rides the session's first request, and an idle session makes none, so
//! work claimed there would wait for a human. The work is pending instead
//! (a new process is a new incarnation) and the wake, armed by the same
//! `SessionStart`, delivers it with one model call.

use std::time::Duration;

use serde_json::{Value, json};

use crate::adapter::context::{claim_for, unread_work};
use crate::adapter::turn_hooks::{self, json_answer};
use crate::adapter::{AgentContext, HookAction, HookAnswer, HookPlan, Park};
use crate::core::downlink::Claimed;
use crate::core::protocol::{ClaimScope, Lifecycle};

use super::activity::HookActivity;
use super::settings::WAKE;
use super::timing::{WAKE_HOOK_TIMEOUT_SECS, WAKE_SETTLE};

/// Claude Code caps each `additionalContext` at 10,000 characters (longer
/// text spills to a file).
pub const CONTEXT_CAP: usize = 10_000;

/// The wake's slot: one armed wake hook at a time.
pub const WAKE_SLOT: &str = "wake";

/// What one hook call means.
pub type HookReading = crate::adapter::HookReading<HookActivity>;

fn claim(agent: &AgentContext, scope: ClaimScope) -> HookAction {
    HookAction::Claim(claim_for(agent, CONTEXT_CAP, scope))
}

/// The plan for one hook call.
pub fn plan(event: &str, payload: &Value, agent: &AgentContext) -> HookReading {
    match event {
        "SessionStart" => {
            let mut plan = match payload["source"].as_str() {
                // Claude Code runs this hook as the compaction ends: after
                // a `/compact` at idle no request comes until the person's
                // next prompt. What the context was given comes back with
                // it; new work is left to the wake, which starts the turn
                // a notice typed at idle would.
                Some("compact") => HookPlan::act(claim(agent, ClaimScope::Delivered)),
                _ => HookPlan::answer(session_start(agent, None)),
            };
            if payload["source"] == "clear" {
                plan.facts.push(Lifecycle::Clear);
            }
            HookReading::new(Some(HookActivity::Idle), plan)
        }
        "UserPromptSubmit" => turn_hooks::prompt_submitted(agent, payload, CONTEXT_CAP),
        "PreToolUse" => HookReading::new(Some(HookActivity::Child), HookPlan::nothing()),
        "PostToolUse" => turn_hooks::tool_done(agent, CONTEXT_CAP),
        "Stop" => turn_hooks::turn_ended(agent, payload, CONTEXT_CAP),
        "StopFailure" => HookReading::new(Some(HookActivity::Idle), HookPlan::nothing()),
        "Notification" => {
            let activity = (payload["notification_type"] == "permission_prompt")
                .then_some(HookActivity::AwaitingHuman);
            HookReading::new(activity, HookPlan::nothing())
        }
        "PreCompact" => {
            // A compaction runs until `SessionStart` (`compact`) says the
            // session is back: not idle, so no wake fires into it (the
            // screen can look idle for a moment after the command's Return).
            let mut plan = HookPlan::nothing();
            plan.facts.push(Lifecycle::Compaction);
            HookReading::new(Some(HookActivity::Active), plan)
        }
        WAKE => HookReading::new(
            None,
            HookPlan::act(HookAction::Park(Park {
                slot: WAKE_SLOT,
                claim: claim_for(agent, CONTEXT_CAP, ClaimScope::Pending),
                settle: WAKE_SETTLE,
                hold_for: Duration::from_secs(WAKE_HOOK_TIMEOUT_SECS),
                holds_terminal: true,
                waits_for_fresh_idle: true,
            })),
        ),
        _ => HookReading::new(None, HookPlan::nothing()),
    }
}

/// What the hook prints once its claim was answered.
pub fn render(event: &str, claimed: &Claimed, agent: &AgentContext) -> HookAnswer {
    let text = unread_work(agent, &claimed.granted, claimed.not_granted);
    if event == "SessionStart" {
        return session_start(agent, Some(&text).filter(|text| !text.is_empty()));
    }
    if text.is_empty() {
        return HookAnswer::default();
    }
    match event {
        "UserPromptSubmit" | "PostToolUse" => json_answer(json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        })),
        "Stop" => json_answer(json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        })),
        WAKE => HookAnswer {
            stderr: text,
            exit: 2,
            ..HookAnswer::default()
        },
        _ => HookAnswer::default(),
    }
}

/// `SessionStart`'s answer: the inbox to watch, and the backlog if any.
fn session_start(agent: &AgentContext, context: Option<&String>) -> HookAnswer {
    let mut output = json!({
        "hookEventName": "SessionStart",
        "watchPaths": [agent.inbox.join("new").to_string_lossy()],
    });
    if let Some(text) = context {
        output["additionalContext"] = Value::String(text.clone());
    }
    json_answer(json!({ "hookSpecificOutput": output }))
}
