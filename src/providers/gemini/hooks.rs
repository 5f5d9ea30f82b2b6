//! What each Gemini CLI 0.61.0 hook does with unread work: pure functions
//! from the hook's event and payload to a plan (claim, answer, facts), and
//! from a claim's answer to what the hook prints (findings, 4).
//!
//! | event | activity | with unread work |
//! |---|---|---|
//! | `SessionStart` | idle | `source` `clear`: lifecycle `clear` (injected work returns to pending, and the idle path delivers it) |
//! | `BeforeAgent` | active | pending work as `additionalContext`, which Gemini CLI puts right after the prompt in the same request; DING's own notice in the prompt is a `turn-boundary` receipt for the files it names |
//! | `BeforeTool` | child | none |
//! | `AfterTool` | active | pending work as `additionalContext`, appended to the tool's result in the turn's next request: no extra call |
//! | `AfterAgent` | idle | pending work that found no ride: `{"decision": "deny", "reason": …}` continues the turn with the reason as a user message (one extra model call, as a notice would cost); never when `stop_hook_active` (Gemini CLI has no cap of its own: a hook that always denies loops), nor while a person writes a prompt that will carry the work |
//! | `Notification` | `ToolPermission`: awaiting the human | none |
//! | `PreCompress` | `manual`: active, lifecycle `compaction` | none (`auto` fires before every model request and means nothing) |
//! | `SessionEnd` | | none |
//!
//! Why `startup` and `resume` inject nothing: their `additionalContext`
//! rides the session's first request, and an idle session makes none, so
//! work claimed there would wait for a person. It stays pending, and the
//! typed notice delivers it once the composer is idle.

use serde_json::{Value, json};

use crate::adapter::context::unread_work;
use crate::adapter::turn_hooks::{self, json_answer};
use crate::adapter::{AgentContext, HookAnswer, HookPlan};
use crate::core::downlink::Claimed;
use crate::core::protocol::Lifecycle;

use super::activity::HookActivity;

/// How much work text one hook answer carries (characters); the rest is
/// named by count. Gemini CLI states no cap of its own; Claude Code's is
/// used, which keeps a request's context bounded.
pub const CONTEXT_CAP: usize = 10_000;

/// What one hook call means.
pub type HookReading = crate::adapter::HookReading<HookActivity>;

/// The plan for one hook call.
pub fn plan(event: &str, payload: &Value, agent: &AgentContext) -> HookReading {
    match event {
        "SessionStart" => {
            let mut plan = HookPlan::nothing();
            if payload["source"] == "clear" {
                plan.facts.push(Lifecycle::Clear);
            }
            // A new session: the configuration may have been edited since.
            plan.recheck_settings = true;
            HookReading::new(Some(HookActivity::Idle), plan)
        }
        "BeforeAgent" => turn_hooks::prompt_submitted(agent, payload, CONTEXT_CAP),
        "BeforeTool" => HookReading::new(Some(HookActivity::Child), HookPlan::nothing()),
        "AfterTool" => turn_hooks::tool_done(agent, CONTEXT_CAP),
        "AfterAgent" => turn_hooks::turn_ended(agent, payload, CONTEXT_CAP),
        "Notification" => {
            let activity = (payload["notification_type"] == "ToolPermission")
                .then_some(HookActivity::AwaitingHuman);
            HookReading::new(activity, HookPlan::nothing())
        }
        "PreCompress" if payload["trigger"] == "manual" => {
            let mut plan = HookPlan::nothing();
            plan.facts.push(Lifecycle::Compaction);
            HookReading::new(Some(HookActivity::Active), plan)
        }
        _ => HookReading::new(None, HookPlan::nothing()),
    }
}

/// What the hook prints once its claim was answered.
pub fn render(event: &str, claimed: &Claimed, agent: &AgentContext) -> HookAnswer {
    let text = unread_work(agent, &claimed.granted, claimed.not_granted);
    if text.is_empty() {
        return HookAnswer::default();
    }
    match event {
        "BeforeAgent" | "AfterTool" => json_answer(json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        })),
        "AfterAgent" => json_answer(json!({"decision": "deny", "reason": text})),
        _ => HookAnswer::default(),
    }
}
