//! The plans of the hooks at a turn's edges, for a harness whose hooks
//! mark them (the kit's part, written once): a prompt going in, a tool's
//! result coming back, a turn ending. Which event is which stays the
//! provider's; what each edge does with unread work is the same for all:
//!
//! * a prompt going in carries the pending work in the context of the very
//!   request it makes, and the files its own notice names are received;
//! * a tool's result carries it the same way;
//! * a turn ending continues the turn with it, unless this is a
//!   continuation's own end (no loop) or the person is writing a prompt,
//!   which will carry the work at no call of its own.

use serde_json::Value;

use super::context::{claim_for, names_in_notice};
use super::hook_activity::HookActivity;
use super::hook_plan::{AgentContext, HookAction, HookPlan, HookReading};
use super::hook_wire::HookAnswer;
use crate::core::protocol::ClaimScope;

/// The pending work, claimed into a context of at most `cap` characters.
pub fn pending(agent: &AgentContext, cap: usize) -> HookAction {
    HookAction::Claim(claim_for(agent, cap, ClaimScope::Pending))
}

/// A prompt went in (its text in the payload's `prompt`).
pub fn prompt_submitted(
    agent: &AgentContext,
    payload: &Value,
    cap: usize,
) -> HookReading<HookActivity> {
    let mut plan = HookPlan::act(pending(agent, cap));
    if let Some(prompt) = payload["prompt"].as_str() {
        plan.received = names_in_notice(agent, prompt);
    }
    HookReading::new(Some(HookActivity::Active), plan)
}

/// A tool's result came back: the model works again.
pub fn tool_done(agent: &AgentContext, cap: usize) -> HookReading<HookActivity> {
    HookReading::new(
        Some(HookActivity::Active),
        HookPlan::act(pending(agent, cap)),
    )
}

/// A turn ended (`stop_hook_active` in the payload: it was a
/// continuation's own end).
pub fn turn_ended(agent: &AgentContext, payload: &Value, cap: usize) -> HookReading<HookActivity> {
    let plan = if payload["stop_hook_active"] == true {
        HookPlan::nothing()
    } else {
        HookPlan::act(HookAction::ClaimUnlessDrafting(claim_for(
            agent,
            cap,
            ClaimScope::Pending,
        )))
    };
    HookReading::new(Some(HookActivity::Idle), plan)
}

/// A hook's answer that prints `value` as one JSON line on stdout.
pub fn json_answer(value: Value) -> HookAnswer {
    HookAnswer {
        stdout: format!("{value}\n"),
        ..HookAnswer::default()
    }
}
