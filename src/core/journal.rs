//! The ownership journal: what the engine must remember across a restart.
//!
//! Only ownership is journaled: which unread files were rung (staged) or put
//! into the harness's context by a hook (hook-owned), and under which harness
//! incarnation. Pending work needs no journal because the inbox on disk is
//! the authority for what is unread. The engine emits the whole journal as an
//! output whenever ownership changed; the runtime writes it atomically
//! (tmp, fsync, rename, fsync dir) and hands it back at the next start.

use serde::{Deserialize, Serialize};

use super::message::MessageName;

/// The journal format version this build writes and reads.
pub const JOURNAL_VERSION: u32 = 1;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub version: u32,
    /// Owned files in FIFO order.
    pub entries: Vec<JournalEntry>,
    /// Hook-owned files a claim granted whose hook has not said it printed
    /// them: a sidecar started again cannot tell whether they reached the
    /// harness (their hooks lost their answers with the adapter), so they
    /// are not restored and come back as pending (at least once).
    #[serde(default, rename = "inDoubt", skip_serializing_if = "Vec::is_empty")]
    pub in_doubt: Vec<MessageName>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    pub name: MessageName,
    pub owner: Owner,
    /// Engine time of the ownership fact, in milliseconds.
    pub at: u64,
    /// The harness incarnation the ownership belongs to, when known.
    pub incarnation: Option<String>,
}

/// Who owns an unread file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Owner {
    /// A PTY transaction naming it was written (or may have been: outcome unknown).
    Staged,
    /// A turn-boundary receipt put it into the next context.
    HookOwned,
}

impl Journal {
    pub fn new(entries: Vec<JournalEntry>) -> Journal {
        Journal {
            version: JOURNAL_VERSION,
            entries,
            in_doubt: Vec::new(),
        }
    }
}
