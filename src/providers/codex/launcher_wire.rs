//! What the Codex launcher and its adapter say to each other on the hook
//! channel: one definition for both ends, so neither compares untyped
//! JSON values as strings.
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

/// How the launcher runs Codex, said once at start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchMode {
    /// The hooks declared per invocation, the native path being set up.
    Embedded,
    /// The native idle path cannot work here (`error` says why).
    NativeUnavailable,
    /// The app-server died under the TUI (`error` says how, and what the
    /// launcher does about it): nothing can be queued until it reports
    /// again, and the TUI submits nothing meanwhile.
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

/// One of DING's hooks in Codex's own `hooks/list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedHook {
    /// The event, as the hook configuration spells it (`Stop`).
    pub event: String,
    /// Codex's `trustStatus` (`trusted`, ...), if it said one.
    #[serde(default)]
    pub trust: Option<String>,
}

/// A thread's status, as Codex 0.169.0's `ThreadStatus` names it (`type`
/// of `thread/status/changed`'s `status`: `codex app-server generate-ts`,
/// `v2/ThreadStatus.ts`), read once where it arrives and compared as a
/// type everywhere after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ThreadStatus {
    NotLoaded,
    Idle,
    SystemError,
    /// A turn runs (whatever its `activeFlags`: an approval waits in it).
    Active,
    /// Not said yet, or a word this Codex does not use: never idle.
    #[default]
    #[serde(other)]
    Unknown,
}

impl ThreadStatus {
    /// Reads the `type` Codex gives; anything else is [`ThreadStatus::Unknown`].
    pub fn parse(kind: Option<&str>) -> ThreadStatus {
        kind.and_then(|kind| serde_json::from_value(serde_json::Value::from(kind)).ok())
            .unwrap_or_default()
    }

    pub fn is_idle(self) -> bool {
        self == ThreadStatus::Idle
    }
}

/// The `queue` call's payload: Codex's thread as the launcher sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueReport {
    pub thread_id: Option<String>,
    /// The thread's status, as Codex's `thread/status/changed` says.
    #[serde(default)]
    pub status: ThreadStatus,
    /// The `clientUserMessageId`s of DING's deliveries still in the queue.
    #[serde(default)]
    pub queued: Vec<String>,
    /// Deliveries that could not be queued.
    #[serde(default)]
    pub failed: Vec<String>,
    /// Codex's `hooks/list`, on the first call to each app-server only:
    /// while the path is down, the adapter takes the report that carries
    /// it for the new server's first, and any other for a late one of the
    /// server that died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Vec<ListedHook>>,
}

impl QueueReport {
    /// Whether a delivery may be claimed for now: the thread is idle and no
    /// delivery of DING's waits in its queue (new work then rides that
    /// delivery's own `UserPromptSubmit`).
    pub fn may_deliver(&self) -> bool {
        self.thread_id.is_some() && self.status.is_idle() && self.queued.is_empty()
    }

    /// A payload read back; one that is not a report reads as a report of
    /// nothing (no thread: nothing may be delivered).
    pub fn from_payload(payload: &serde_json::Value) -> QueueReport {
        serde_json::from_value(payload.clone()).unwrap_or_default()
    }

    pub fn to_payload(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// A delivery for the launcher to queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Its `clientUserMessageId` in Codex's queue.
    pub id: String,
    /// Exactly the text to queue: `UserPromptSubmit` carries it when its
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
            thread_id: Some("t".into()),
            status: ThreadStatus::Idle,
            queued: Vec::new(),
            failed: vec!["ding-1-1".into()],
            hooks: Some(vec![ListedHook {
                event: "Stop".into(),
                trust: Some("trusted".into()),
            }]),
        };
        assert_eq!(QueueReport::from_payload(&report.to_payload()), report);
        assert!(report.may_deliver());
        let odd = serde_json::json!({"threadId": 7, "status": ["idle"]});
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
            error: Some("no app-server".into()),
        };
        let text = serde_json::to_string(&launch).unwrap();
        assert!(text.contains(r#""mode":"native-unavailable""#), "{text}");
        assert_eq!(serde_json::from_str::<LaunchReport>(&text).unwrap(), launch);
    }

    /// Codex's status words are read where they arrive; a word this Codex
    /// does not use is unknown, never idle, on both ends of the wire.
    #[test]
    fn a_thread_status_is_read_at_the_edge_and_a_new_word_is_never_idle() {
        for (word, status) in [
            ("idle", ThreadStatus::Idle),
            ("active", ThreadStatus::Active),
            ("notLoaded", ThreadStatus::NotLoaded),
            ("systemError", ThreadStatus::SystemError),
            ("sleeping", ThreadStatus::Unknown),
        ] {
            assert_eq!(ThreadStatus::parse(Some(word)), status, "{word}");
        }
        assert_eq!(ThreadStatus::parse(None), ThreadStatus::Unknown);
        let stranger = serde_json::json!({"threadId": "t", "status": "sleeping"});
        assert!(!QueueReport::from_payload(&stranger).may_deliver());
        let idle = serde_json::json!({"threadId": "t", "status": "idle"});
        assert!(QueueReport::from_payload(&idle).may_deliver());
    }
}
