//! A Codex thread's status, read once where the app-server says it and
//! told to the adapter in the kit's words.

use serde::{Deserialize, Serialize};

use crate::adapter::native_idle::wire::ConversationStatus;

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

    /// The status in the words the adapter reads: a thread not loaded or in
    /// error is neither idle nor running a turn.
    pub fn conversation(self) -> ConversationStatus {
        match self {
            ThreadStatus::Idle => ConversationStatus::Idle,
            ThreadStatus::Active => ConversationStatus::Active,
            ThreadStatus::NotLoaded | ThreadStatus::SystemError | ThreadStatus::Unknown => {
                ConversationStatus::Unknown
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex's status words are read where they arrive; a word this Codex
    /// does not use is unknown, never idle, on both ends of the wire.
    #[test]
    fn a_thread_status_is_read_at_the_edge_and_a_new_word_is_never_idle() {
        for (word, status, idle) in [
            ("idle", ThreadStatus::Idle, true),
            ("active", ThreadStatus::Active, false),
            ("notLoaded", ThreadStatus::NotLoaded, false),
            ("systemError", ThreadStatus::SystemError, false),
            ("sleeping", ThreadStatus::Unknown, false),
        ] {
            assert_eq!(ThreadStatus::parse(Some(word)), status, "{word}");
            assert_eq!(status.conversation().is_idle(), idle, "{word}");
        }
        assert_eq!(ThreadStatus::parse(None), ThreadStatus::Unknown);
    }
}
