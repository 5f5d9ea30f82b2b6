//! What an adapter does with its reporter's calls and with the answers it
//! renders for them, around the provider's own plan: the bookkeeping every
//! native idle path shares, in the order it must happen.

use serde_json::Value;

use super::deliveries::{Deliveries, Handed};
use super::path::NativePath;
use super::plan::QUEUE;
use super::wire::{QueueAnswer, QueueReport};
use crate::adapter::HookAnswer;
use crate::core::downlink::Claimed;
use crate::core::message::MessageName;
use crate::core::time::Time;

/// Before a hook call `event` is planned: `None` when it is a late `queue`
/// report of a server that died (it offers nothing to deliver into, and
/// reports nothing: plan nothing); else the files of deliveries that died
/// with that server, if this is the new server's first report, owed and to
/// be given back to unread work (so that its park claims them).
pub fn before_plan(
    path: &mut NativePath,
    deliveries: &mut Deliveries,
    event: &str,
    payload: &Value,
) -> Option<Vec<MessageName>> {
    if event != QUEUE {
        return Some(Vec::new());
    }
    let report = QueueReport::from_payload(payload);
    if path.is_from_a_dead_server(&report) {
        return None;
    }
    if !path.came_back() {
        return Some(Vec::new());
    }
    Some(deliveries.not_listed(&report.queued))
}

/// After a `queue` call was planned, at `now`: the reporter spoke, and
/// the deliveries it could not hand on are owed; their files are returned,
/// to be given back to unread work.
pub fn after_queue_plan(
    path: &mut NativePath,
    deliveries: &mut Deliveries,
    report: &QueueReport,
    now: Time,
) -> Vec<MessageName> {
    path.on_report(report, now);
    deliveries.failed(&report.failed)
}

/// The answer to a claim granted for `event` at `now`: `render` gets what
/// the claim may carry ([`claimed_for`]) and the id a delivery would
/// take, and the delivery it renders, if any, is remembered ([`answered`]).
pub fn answer_claim(
    path: &mut NativePath,
    deliveries: &mut Deliveries,
    event: &str,
    claimed: &Claimed,
    now: Time,
    render: impl FnOnce(&Claimed, &str) -> HookAnswer,
) -> HookAnswer {
    let id = path.next_id();
    let claimed = claimed_for(deliveries, event, claimed);
    let answer = render(&claimed, &id);
    answered(path, deliveries, event, &answer, &claimed.granted, now);
    answer
}

/// What a claim answered for `event` may carry: the owed files, if any,
/// were what it claimed (so none is owed any more); and a hook other than
/// the reporter's leaves out a file of a delivery still waiting for its
/// turn (it arrives as that turn's prompt, and said here too it would be
/// in one request twice: it stays hook-owned by the delivery's claim).
pub fn claimed_for(deliveries: &mut Deliveries, event: &str, claimed: &Claimed) -> Claimed {
    deliveries.owed.clear();
    let mut claimed = claimed.clone();
    if event != QUEUE {
        claimed.granted.retain(|name| !deliveries.waits(name));
    }
    claimed
}

/// The answer rendered at `now` for `event`'s claim of `names`: a
/// delivery for the reporter is remembered until its turn starts.
pub fn answered(
    path: &mut NativePath,
    deliveries: &mut Deliveries,
    event: &str,
    answer: &HookAnswer,
    names: &[MessageName],
    now: Time,
) {
    if event != QUEUE {
        return;
    }
    if let Some(delivery) = QueueAnswer::read(answer) {
        path.handed_on(now);
        deliveries.handed.push(Handed {
            id: delivery.id,
            text: delivery.text,
            names: names.to_vec(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::native_idle::path::Words;
    use crate::adapter::native_idle::wire::{Delivery, LaunchMode, LaunchReport, ListedHook};

    fn name(text: &str) -> MessageName {
        MessageName::new(text).expect("a message name")
    }

    #[test]
    fn a_delivery_is_remembered_owed_when_it_failed_and_given_back_when_its_server_died() {
        let words = Words {
            reporter: "the reporter",
            delivers_through: "its prompt",
        };
        let mut path = NativePath::new(true, words);
        let mut deliveries = Deliveries::default();
        let (a, b) = (name("a.md"), name("b.md"));
        let id = path.next_id();
        let answer = QueueAnswer::answer(Delivery {
            id: id.clone(),
            text: "[ding] a".into(),
        });
        answered(
            &mut path,
            &mut deliveries,
            QUEUE,
            &answer,
            std::slice::from_ref(&a),
            Time::from_millis(5),
        );
        assert!(deliveries.waits(&a));
        assert_ne!(path.next_id(), id);
        // Another hook's claim leaves the waiting file out.
        let claimed = Claimed {
            claim: 1,
            granted: vec![a.clone(), b.clone()],
            refused: Vec::new(),
            refusal: None,
            not_granted: 0,
        };
        let kept = claimed_for(&mut deliveries, "tool", &claimed);
        assert_eq!(kept.granted, vec![b.clone()]);
        assert_eq!(
            claimed_for(&mut deliveries, QUEUE, &claimed).granted.len(),
            2
        );
        // The server dies; a late report of it plans nothing; the new
        // server's first report gives back what died with the old one.
        let down = LaunchReport {
            mode: LaunchMode::NativeDown,
            declared: None,
            error: Some("gone".into()),
        };
        path.on_launch(Some(&down));
        let late = serde_json::json!({"conversation": "s", "status": "idle"});
        assert_eq!(before_plan(&mut path, &mut deliveries, QUEUE, &late), None);
        assert_eq!(
            before_plan(&mut path, &mut deliveries, "tool", &late),
            Some(Vec::new())
        );
        let first = QueueReport {
            conversation: Some("s".into()),
            hooks: Some(vec![ListedHook {
                event: "e".into(),
                trust: None,
            }]),
            ..QueueReport::default()
        };
        assert_eq!(
            before_plan(&mut path, &mut deliveries, QUEUE, &first.to_payload()),
            Some(vec![a.clone()])
        );
        assert_eq!(deliveries.owed, vec![a.clone()]);
        // A failed hand-over is owed too.
        deliveries.handed.push(Handed {
            id: "ding-1-9".into(),
            text: "[ding] b".into(),
            names: vec![b.clone()],
        });
        let failed = QueueReport {
            failed: vec!["ding-1-9".into()],
            ..QueueReport::default()
        };
        let now = Time::from_millis(9);
        assert_eq!(
            after_queue_plan(&mut path, &mut deliveries, &failed, now),
            vec![b]
        );
        assert_eq!(path.reported_at(), Some(now));
    }
}
