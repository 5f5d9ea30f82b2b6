//! The reporter's parked call, and which hooks end it.

use std::time::Duration;

use serde_json::Value;

use super::wire::{LaunchMode, LaunchReport, QueueReport};
use crate::adapter::timing::{QUEUE_HOLD, QUEUE_SETTLE};
use crate::adapter::{ClaimRequest, HookAction, HookPlan, Park};
use crate::core::protocol::Lifecycle;

/// The reporter's parked call, and its slot.
pub const QUEUE: &str = "queue";

/// The reporter's call that says how the path stands outside its `queue`
/// calls.
pub const LAUNCH: &str = "launch";

/// How long a `queue` call waits, a provider's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParkTiming {
    /// How long pending work settles before it is claimed (a burst is one
    /// delivery).
    pub settle: Duration,
    /// How long the call is held before it is answered with nothing (the
    /// reporter then calls again).
    pub hold: Duration,
}

/// The parked `queue` call's timing (`adapter::timing`).
pub const QUEUE_PARK: ParkTiming = ParkTiming {
    settle: QUEUE_SETTLE,
    hold: QUEUE_HOLD,
};

/// The plan for a `queue` call: parked while the conversation is idle and
/// no delivery of DING's waits in it, claiming `claim` once the screen
/// reads fresh idle (a turn woken while a person types changes what their
/// Return does); otherwise nothing, and the call ends any call of the
/// reporter's still parked. A conversation other than the one the adapter
/// last heard of (`remembered`) begins a new context: lifecycle `clear`,
/// so that what DING put into the old one is pending again.
pub fn queue_plan(
    payload: &Value,
    remembered: Option<&str>,
    claim: ClaimRequest,
    timing: ParkTiming,
) -> HookPlan {
    let report = QueueReport::from_payload(payload);
    let mut plan = if report.may_deliver() {
        HookPlan::act(HookAction::Park(Park {
            slot: QUEUE,
            claim,
            settle: timing.settle,
            hold_for: timing.hold,
            holds_terminal: true,
            waits_for_fresh_idle: true,
        }))
    } else {
        let mut plan = HookPlan::nothing();
        plan.end_parked.push(QUEUE);
        plan
    };
    let named = report.conversation.as_deref();
    if named.is_some() && remembered.is_some() && named != remembered {
        plan.facts.push(Lifecycle::Clear);
    }
    plan
}

/// Ends the reporter's parked call when the hook `event` (whose plan is
/// `plan`) says the harness is `busy`: a delivery handed on now would wait
/// for the turn's end and cost a turn of its own, where the turn's own
/// boundaries carry the work at no extra call. So does a `launch` report
/// that the path went down or cannot work: a call still parked would
/// claim work for nothing to deliver it.
pub fn end_the_park_when_busy(event: &str, payload: &Value, busy: bool, plan: &mut HookPlan) {
    let down = event == LAUNCH
        && serde_json::from_value::<LaunchReport>(payload.clone()).is_ok_and(|launch| {
            matches!(
                launch.mode,
                LaunchMode::NativeUnavailable | LaunchMode::NativeDown
            )
        });
    if (busy || down) && !plan.end_parked.contains(&QUEUE) {
        plan.end_parked.push(QUEUE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::context::claim_for;
    use crate::adapter::hook_plan::example_agent;
    use crate::adapter::native_idle::wire::ConversationStatus;
    use crate::core::protocol::ClaimScope;

    const TIMING: ParkTiming = ParkTiming {
        settle: Duration::from_millis(250),
        hold: Duration::from_secs(3_600),
    };

    #[test]
    fn an_idle_conversation_parks_and_anything_else_ends_the_park() {
        let claim = claim_for(&example_agent(), 4_000, ClaimScope::Pending);
        let idle = QueueReport {
            conversation: Some("s".into()),
            status: ConversationStatus::Idle,
            ..QueueReport::default()
        };
        let plan = queue_plan(&idle.to_payload(), Some("s"), claim.clone(), TIMING);
        let HookAction::Park(park) = &plan.action else {
            panic!("{plan:?}")
        };
        assert!(plan.facts.is_empty());
        let elsewhere = queue_plan(&idle.to_payload(), Some("t"), claim.clone(), TIMING);
        assert_eq!(elsewhere.facts, vec![Lifecycle::Clear]);
        let fresh = queue_plan(&idle.to_payload(), None, claim.clone(), TIMING);
        assert!(fresh.facts.is_empty());
        assert!(park.holds_terminal && park.waits_for_fresh_idle);
        assert_eq!((park.slot, park.settle), (QUEUE, TIMING.settle));
        for report in [
            QueueReport {
                queued: vec!["ding-1-1".into()],
                ..idle.clone()
            },
            QueueReport {
                status: ConversationStatus::Active,
                ..idle.clone()
            },
            QueueReport {
                conversation: None,
                ..idle.clone()
            },
        ] {
            let plan = queue_plan(&report.to_payload(), None, claim.clone(), TIMING);
            assert_eq!(plan.end_parked, vec![QUEUE], "{report:?}");
            assert!(!matches!(plan.action, HookAction::Park(_)));
        }
        let mut plan = HookPlan::nothing();
        end_the_park_when_busy("tool", &Value::Null, false, &mut plan);
        assert!(plan.end_parked.is_empty());
        end_the_park_when_busy("tool", &Value::Null, true, &mut plan);
        end_the_park_when_busy("tool", &Value::Null, true, &mut plan);
        assert_eq!(plan.end_parked, vec![QUEUE]);
        let down = serde_json::json!({"mode": "native-down", "error": "gone"});
        let mut plan = HookPlan::nothing();
        end_the_park_when_busy(LAUNCH, &down, false, &mut plan);
        assert_eq!(plan.end_parked, vec![QUEUE]);
    }
}
