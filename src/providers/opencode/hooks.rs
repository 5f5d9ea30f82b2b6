//! What each call of DING's OpenCode plugins does with unread work: pure
//! functions from the call's event and payload (and what the adapter
//! remembers) to a plan (claim, park, answer, facts, receipts), and from
//! a claim's answer to what the plugin does with it.
//!
//! Both plugins are DING's own (`plugins/`), so the payloads are DING's
//! too: each names OpenCode's session, and the server plugin says whether
//! it is a subagent's (`parentID`).
//!
//! | event | from | payload | activity | with unread work |
//! |---|---|---|---|---|
//! | `chat.message` | server plugin | `sessionID`, `parentID`, `text` (the prompt's own text parts), `queued` (the session runs a turn: the prompt waits behind it) | active | pending work as context (`{"context": …}`), a text part the plugin adds to the prompt being sent: the same request. A receipt when the prompt is exactly a delivery DING handed to the TUI plugin. Nothing for a subagent's prompt, nor for a queued one (an Esc or a rejected permission strands it) |
//! | `tool.execute.before` | server plugin | `sessionID`, `parentID`, `tool` | child | none |
//! | `tool.execute.after` | server plugin | `sessionID`, `parentID`, `tool` | active | pending work as context, appended to the tool's output: the tool-result request, no extra call. Nothing for a subagent's tool |
//! | `session.status` | TUI plugin | `sessionID`, `status` (`idle`, `busy`, `retry`) | idle, or active | none |
//! | `permission.asked` | TUI plugin | `sessionID` | awaiting the person | none |
//! | `permission.replied` | TUI plugin | `sessionID` | active | none |
//! | `question.asked` | TUI plugin | `sessionID` (the `question` tool's dialog, whose Enter answers) | awaiting the person | none |
//! | `question.replied` | TUI plugin | `sessionID` (answered or dismissed) | active | none |
//! | `session.compacted` | TUI plugin | `sessionID` | | lifecycle `compaction` |
//! | `queue` | TUI plugin | the kit's report (the session the TUI shows) | | parked while that session is idle, no permission or question waits and none of DING's deliveries waits; claims pending work and answers it as a delivery (the kit's `{"queue":{"id","text"}}`), which the plugin sends with the session's own prompt call |
//!
//! OpenCode has no hook that continues a finished turn: work that arrives
//! while a turn runs and finds no tool result to ride goes by the idle
//! path once the turn is over, one prompt of its own (the price of any
//! delivery).

use serde_json::{Value, json};

use crate::adapter::context::unread_work;
use crate::adapter::hook_activity::HookActivity;
use crate::adapter::native_idle::deliveries::Deliveries;
use crate::adapter::native_idle::plan::{QUEUE_PARK, end_the_park_when_busy, queue_plan};
use crate::adapter::native_idle::wire::QueueAnswer;
use crate::adapter::turn_hooks::json_answer;
use crate::adapter::{AgentContext, HookAction, HookAnswer, HookPlan};
use crate::core::downlink::Claimed;
use crate::core::protocol::{ClaimScope, Lifecycle};

pub use crate::adapter::native_idle::plan::QUEUE;

use super::plugins::NEW_SESSION;

/// How much work text one injection carries (characters); the rest is
/// named by count. OpenCode states no cap of its own; Claude Code's is
/// used, which keeps a request's context bounded.
pub const CONTEXT_CAP: usize = 10_000;

/// What the adapter remembers that a call's plan depends on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Deliveries handed to the TUI plugin whose turn has not started, and
    /// files owed for those it could not send.
    pub native: Deliveries,
    /// The session the TUI plugin last named (another one: the person
    /// switched sessions, or started a new one).
    pub session: Option<String>,
}

/// What one call means.
pub type HookReading = crate::adapter::HookReading<HookActivity>;

/// Whether a server plugin's call is about a subagent's session (its
/// prompt and tools are the subagent's, whose context ends with it).
fn is_subagent(payload: &Value) -> bool {
    payload["parentID"]
        .as_str()
        .is_some_and(|id| !id.is_empty())
}

/// The plan for one call. A call that says a turn runs also ends the TUI
/// plugin's parked call (the kit's `end_the_park_when_busy`).
pub fn plan(event: &str, payload: &Value, agent: &AgentContext, memory: &Memory) -> HookReading {
    let mut planned = plan_for(event, payload, agent, memory);
    let busy = planned.activity.is_some_and(HookActivity::says_busy);
    end_the_park_when_busy(event, payload, busy, &mut planned.plan);
    planned
}

fn plan_for(event: &str, payload: &Value, agent: &AgentContext, memory: &Memory) -> HookReading {
    let pending =
        || HookAction::Claim(memory.native.claim(agent, CONTEXT_CAP, ClaimScope::Pending));
    let active = Some(HookActivity::Active);
    match event {
        "chat.message" if is_subagent(payload) => HookReading::new(active, HookPlan::nothing()),
        "chat.message" => {
            // A prompt queued behind a running turn is stranded, with
            // anything added to it, if the person stops that turn or
            // rejects its permission: nothing rides it (found by the
            // whole-agent simulation, OpenCode seed 7686: the person's
            // prompt typed during a turn carried a file, the person then
            // rejected the turn's permission, and the file waited for a
            // prompt that never came). Its work goes at the next boundary.
            let queued = payload["queued"].as_bool() == Some(true);
            let mut plan = if queued {
                HookPlan::nothing()
            } else {
                HookPlan::act(pending())
            };
            if let Some(text) = payload["text"].as_str() {
                plan.received = memory.native.received(text);
            }
            HookReading::new(active, plan)
        }
        "tool.execute.before" => HookReading::new(Some(HookActivity::Child), HookPlan::nothing()),
        "tool.execute.after" if is_subagent(payload) => {
            HookReading::new(active, HookPlan::nothing())
        }
        "tool.execute.after" => HookReading::new(active, HookPlan::act(pending())),
        "session.status" => {
            let activity = match payload["status"].as_str() {
                Some("idle") => Some(HookActivity::Idle),
                Some("busy" | "retry") => active,
                _ => None,
            };
            HookReading::new(activity, HookPlan::nothing())
        }
        "permission.asked" | "question.asked" => {
            HookReading::new(Some(HookActivity::AwaitingHuman), HookPlan::nothing())
        }
        "permission.replied" | "question.replied" => HookReading::new(active, HookPlan::nothing()),
        "session.compacted" => {
            let mut plan = HookPlan::nothing();
            plan.facts.push(Lifecycle::Compaction);
            HookReading::new(None, plan)
        }
        QUEUE => {
            let claim = memory.native.claim(agent, CONTEXT_CAP, ClaimScope::Pending);
            // Another session on the TUI is a `clear`: what DING put into
            // the old one's context is not in this one's. Leaving one for
            // the home screen is; leaving the home screen for a session
            // (the person's first prompt, or DING's delivery, started it)
            // is not: there was no context there (found by the evaluation
            // and by the whole-agent simulation, OpenCode seed 1: the
            // session a prompt on the home screen started gave back the
            // files that prompt carried, to be said again in that very
            // context).
            let remembered = memory
                .session
                .as_deref()
                .filter(|session| *session != NEW_SESSION);
            let plan = queue_plan(payload, remembered, claim, QUEUE_PARK);
            // The plugin's status is not ordered against the server
            // plugin's calls: the adapter uses it only while no hook has
            // spoken.
            HookReading::new(None, plan)
        }
        _ => HookReading::new(None, HookPlan::nothing()),
    }
}

/// What the plugin is answered once the claim was granted; for `queue`,
/// `id` names the delivery.
pub fn render(event: &str, claimed: &Claimed, agent: &AgentContext, id: &str) -> HookAnswer {
    let text = unread_work(agent, &claimed.granted, claimed.not_granted);
    if text.is_empty() {
        return HookAnswer::default();
    }
    match event {
        "chat.message" | "tool.execute.after" => json_answer(json!({"context": text})),
        QUEUE => QueueAnswer::deliver(id, text),
        _ => HookAnswer::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::hook_plan::example_agent;
    use crate::adapter::native_idle::deliveries::Handed;
    use crate::core::message::MessageName;

    fn name(text: &str) -> MessageName {
        MessageName::new(text).expect("a message name")
    }

    /// What each call says of the activity, and which ones claim: the
    /// person's prompt and a tool's result do, a subagent's never.
    #[test]
    fn each_call_says_its_activity_and_only_the_turn_boundaries_claim() {
        let agent = example_agent();
        let memory = Memory::default();
        let claims = |planned: &HookReading| matches!(planned.plan.action, HookAction::Claim(_));
        for (event, payload, activity, claim) in [
            (
                "chat.message",
                json!({"sessionID": "s", "text": "hi"}),
                Some(HookActivity::Active),
                true,
            ),
            (
                "chat.message",
                json!({"sessionID": "c", "parentID": "s", "text": "hi"}),
                Some(HookActivity::Active),
                false,
            ),
            (
                "chat.message",
                json!({"sessionID": "s", "text": "hi", "queued": true}),
                Some(HookActivity::Active),
                false,
            ),
            (
                "tool.execute.before",
                json!({"sessionID": "s"}),
                Some(HookActivity::Child),
                false,
            ),
            (
                "tool.execute.after",
                json!({"sessionID": "s"}),
                Some(HookActivity::Active),
                true,
            ),
            (
                "tool.execute.after",
                json!({"sessionID": "c", "parentID": "s"}),
                Some(HookActivity::Active),
                false,
            ),
            (
                "session.status",
                json!({"status": "idle"}),
                Some(HookActivity::Idle),
                false,
            ),
            (
                "session.status",
                json!({"status": "busy"}),
                Some(HookActivity::Active),
                false,
            ),
            ("session.status", json!({"status": "sleeping"}), None, false),
            (
                "permission.asked",
                json!({}),
                Some(HookActivity::AwaitingHuman),
                false,
            ),
            (
                "permission.replied",
                json!({}),
                Some(HookActivity::Active),
                false,
            ),
            ("unheard.of", json!({}), None, false),
        ] {
            let planned = plan(event, &payload, &agent, &memory);
            assert_eq!(planned.activity, activity, "{event} {payload}");
            assert_eq!(claims(&planned), claim, "{event} {payload}");
            // Anything that says a turn runs ends the TUI plugin's park.
            let busy = activity.is_some_and(HookActivity::says_busy);
            assert_eq!(planned.plan.end_parked.contains(&QUEUE), busy, "{event}");
        }
        let compacted = plan("session.compacted", &json!({}), &agent, &memory);
        assert_eq!(compacted.plan.facts, vec![Lifecycle::Compaction]);
    }

    /// DING's own prompt is its delivery's receipt; another session on the
    /// TUI begins a new context.
    #[test]
    fn a_delivery_s_prompt_is_its_receipt_and_another_session_is_a_clear() {
        let agent = example_agent();
        let mut memory = Memory::default();
        memory.native.handed.push(Handed {
            id: "ding-1-1".into(),
            text: "[ding] work".into(),
            names: vec![name("a.md")],
        });
        let prompt = plan(
            "chat.message",
            &json!({"sessionID": "s", "text": "[ding] work"}),
            &agent,
            &memory,
        );
        assert_eq!(prompt.plan.received, vec![name("a.md")]);
        let other = plan(
            "chat.message",
            &json!({"sessionID": "s", "text": "[ding] work, and more"}),
            &agent,
            &memory,
        );
        assert!(other.plan.received.is_empty());
        memory.session = Some("s".into());
        let idle = json!({"conversation": "s", "status": "idle"});
        let parked = plan(QUEUE, &idle, &agent, &memory);
        assert!(matches!(parked.plan.action, HookAction::Park(_)));
        assert!(parked.plan.facts.is_empty());
        let switched = json!({"conversation": "t", "status": "idle"});
        assert_eq!(
            plan(QUEUE, &switched, &agent, &memory).plan.facts,
            vec![Lifecycle::Clear]
        );
        // The home screen's first prompt made the session now shown: the
        // same context.
        memory.session = Some(NEW_SESSION.into());
        assert!(
            plan(QUEUE, &switched, &agent, &memory)
                .plan
                .facts
                .is_empty()
        );
        memory.session = Some("t".into());
        let home = json!({"conversation": NEW_SESSION, "status": "idle"});
        assert_eq!(
            plan(QUEUE, &home, &agent, &memory).plan.facts,
            vec![Lifecycle::Clear]
        );
    }
}
