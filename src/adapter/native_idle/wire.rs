//! What a native path's reporter and its adapter say to each other on the
//! hook channel: one definition for both ends, so neither compares untyped
//! JSON values as strings. A reporter that is not Rust (a plugin) speaks
//! the same JSON, which these types fix.
//!
//! | call (event) | payload | answer's `stdout` |
//! |---|---|---|
//! | `launch` | [`LaunchReport`] | nothing |
//! | `queue` | [`QueueReport`] | a [`QueueAnswer`] when work was claimed, else nothing |
//!
//! A `queue` call is parked; its answer's `parked` field
//! ([`crate::adapter::ParkAnswer`]) says whether it was delivered,
//! declined, replaced or expired.

use serde::{Deserialize, Serialize};

use crate::adapter::HookAnswer;

/// What the reporter says of the native path outside its `queue` calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchMode {
    /// The harness runs with DING's hooks (`declared` names them) and no
    /// native path is being set up: idle work takes the terminal path.
    Embedded,
    /// The native idle path cannot work here (`error` says why).
    NativeUnavailable,
    /// What serves the native path died under the harness (`error` says
    /// how, and what the reporter does about it): nothing can be handed
    /// on until it reports again.
    NativeDown,
}

/// The `launch` call's payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchReport {
    pub mode: LaunchMode,
    /// The hook events the launcher declared (`None`: not said).
    #[serde(default)]
    pub declared: Option<Vec<String>>,
    /// Why the native idle path is off, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One of DING's hooks as the harness itself lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedHook {
    /// The event, as the harness spells it.
    pub event: String,
    /// Whether the harness runs it (`trusted`, ...), if it said.
    #[serde(default)]
    pub trust: Option<String>,
}

/// The reported conversation's state, in the kit's words: each reporter
/// reads its harness's own words once, where they arrive, and says one of
/// these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ConversationStatus {
    /// No turn runs and none waits to start.
    Idle,
    /// A turn runs (a permission may wait in it).
    Active,
    /// Not said yet, or a word the kit does not know: never idle.
    #[default]
    #[serde(other)]
    Unknown,
}

impl ConversationStatus {
    pub fn is_idle(self) -> bool {
        self == ConversationStatus::Idle
    }
}

/// The `queue` call's payload: the conversation the person's terminal
/// shows, as the reporter sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueReport {
    /// The conversation (a thread, a session) deliveries go into; `None`
    /// while the reporter knows of none it may deliver to.
    pub conversation: Option<String>,
    #[serde(default)]
    pub status: ConversationStatus,
    /// The ids of DING's deliveries handed on whose turn has not started.
    #[serde(default)]
    pub queued: Vec<String>,
    /// Deliveries that could not be handed on.
    #[serde(default)]
    pub failed: Vec<String>,
    /// The harness's own list of DING's hooks, on the first call of each
    /// server the reporter talks to only: while the path is down, the
    /// adapter takes the report that carries it for the new server's
    /// first, and any other for a late one of the server that died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Vec<ListedHook>>,
}

impl QueueReport {
    /// Whether a delivery may be claimed for now: the conversation is idle
    /// and no delivery of DING's waits in it (new work then rides that
    /// delivery's own prompt hook).
    pub fn may_deliver(&self) -> bool {
        self.conversation.is_some() && self.status.is_idle() && self.queued.is_empty()
    }

    /// A payload read back; one that is not a report reads as a report of
    /// nothing (no conversation: nothing may be delivered).
    pub fn from_payload(payload: &serde_json::Value) -> QueueReport {
        serde_json::from_value(payload.clone()).unwrap_or_default()
    }

    pub fn to_payload(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// A delivery for the reporter to hand to the harness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Its id, unique across adapters' lives (`ding-PID-N`); the reporter
    /// names it in [`QueueReport::queued`] until its turn starts.
    pub id: String,
    /// Exactly the text to send: the turn's prompt hook carries it when the
    /// turn starts.
    pub text: String,
}

/// A `queue` call's answer, printed as its `stdout`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueAnswer {
    pub queue: Delivery,
}

impl QueueAnswer {
    /// The delivery an answer carries, if it carries one.
    pub fn read(answer: &HookAnswer) -> Option<Delivery> {
        serde_json::from_str::<QueueAnswer>(&answer.stdout)
            .ok()
            .map(|answer| answer.queue)
    }

    /// The answer handing on `text` as the delivery `id`.
    pub fn deliver(id: &str, text: String) -> HookAnswer {
        QueueAnswer::answer(Delivery {
            id: id.to_string(),
            text,
        })
    }

    /// The answer carrying `delivery`.
    pub fn answer(delivery: Delivery) -> HookAnswer {
        let line = serde_json::to_string(&QueueAnswer { queue: delivery }).unwrap_or_default();
        HookAnswer {
            stdout: format!("{line}\n"),
            ..HookAnswer::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_reads_back_as_itself_and_a_stranger_as_nothing() {
        let report = QueueReport {
            conversation: Some("t".into()),
            status: ConversationStatus::Idle,
            queued: Vec::new(),
            failed: vec!["ding-1-1".into()],
            hooks: Some(vec![ListedHook {
                event: "Stop".into(),
                trust: Some("trusted".into()),
            }]),
        };
        assert_eq!(QueueReport::from_payload(&report.to_payload()), report);
        assert!(report.may_deliver());
        let odd = serde_json::json!({"conversation": 7, "status": ["idle"]});
        assert_eq!(QueueReport::from_payload(&odd), QueueReport::default());
        assert!(!QueueReport::default().may_deliver());
        let delivery = Delivery {
            id: "ding-1-1".into(),
            text: "[ding] work".into(),
        };
        let answer = QueueAnswer::answer(delivery.clone());
        assert!(answer.stdout.ends_with('\n'));
        assert_eq!(QueueAnswer::read(&answer), Some(delivery));
        assert_eq!(QueueAnswer::read(&HookAnswer::default()), None);
        let launch = LaunchReport {
            mode: LaunchMode::NativeUnavailable,
            declared: None,
            error: Some("no server".into()),
        };
        let text = serde_json::to_string(&launch).unwrap();
        assert!(text.contains(r#""mode":"native-unavailable""#), "{text}");
        assert_eq!(serde_json::from_str::<LaunchReport>(&text).unwrap(), launch);
    }

    /// A status word the kit does not know is unknown, never idle.
    #[test]
    fn a_new_status_word_is_never_idle() {
        for (word, status) in [
            ("idle", ConversationStatus::Idle),
            ("active", ConversationStatus::Active),
            ("sleeping", ConversationStatus::Unknown),
        ] {
            let payload = serde_json::json!({"conversation": "t", "status": word});
            let report = QueueReport::from_payload(&payload);
            assert_eq!(report.status, status, "{word}");
            assert_eq!(report.may_deliver(), status.is_idle(), "{word}");
        }
    }
}
