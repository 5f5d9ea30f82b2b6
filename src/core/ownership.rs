//! Durable FIFO ownership of unread work.
//!
//! Every unread file has exactly one state:
//!
//! ```text
//! pending --(transaction requested)--> in-flight --(sent)--> staged --(archive)--> gone
//!    ^                                     |  (conflict / error)                |
//!    +-------------------------------------+        (re-ring due, incarnation   |
//!    +--------------------------------------------- change, clear, crash) ------+
//! pending --(turn-boundary receipt)--> hook-owned --(archive)--> gone
//! ```
//!
//! Order is filename order. Every operation is O(log n) in the number of
//! unread files (status listing is O(n)). Nothing here ever drops a file: the
//! only way out is [`Ownership::remove`], which the engine calls when the file
//! leaves `new/`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use super::journal::{Journal, JournalEntry, Owner};
use super::message::MessageName;
use super::time::Time;

/// Identifies one PTY request the engine issued.
pub type RequestId = u64;

/// The state of one unread file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum MessageState {
    /// Waiting for its turn to be rung.
    Pending,
    /// Named by a transaction whose reply has not arrived.
    InFlight { request: RequestId },
    /// Rung; awaiting the archive receipt. `confirmed` is false when the
    /// transaction's outcome is unknown (the PTY host went away mid-request).
    Staged {
        incarnation: Option<String>,
        confirmed: bool,
    },
    /// Put into the harness's next context by a hook; no PTY input while unread.
    HookOwned { incarnation: Option<String> },
}

#[derive(Clone, Debug)]
struct Entry {
    state: MessageState,
    /// When the file entered its current state.
    since: Time,
    /// When a staged file may ring again (its key in `re_ring`).
    re_ring_at: Option<Time>,
}

/// The unread files and who owns each.
#[derive(Debug, Default)]
pub struct Ownership {
    /// How long a staged file waits before it may ring again; `None`: never.
    re_ring_after: Option<Duration>,
    entries: BTreeMap<MessageName, Entry>,
    pending: BTreeSet<MessageName>,
    /// Staged files by the time they may ring again.
    re_ring: BTreeSet<(Time, MessageName)>,
    /// Journaled ownership waiting for the file to be seen in `new/` again.
    remembered: BTreeMap<MessageName, (MessageState, Time)>,
}

impl Ownership {
    /// No unread files yet.
    pub fn new(re_ring_after: Option<Duration>) -> Ownership {
        Ownership {
            re_ring_after,
            ..Ownership::default()
        }
    }

    /// Ownership restored from a journal. Entries take effect when the inbox
    /// scan confirms the file is still unread.
    pub fn restored(re_ring_after: Option<Duration>, journal: &Journal, now: Time) -> Ownership {
        let mut ownership = Ownership::new(re_ring_after);
        for entry in &journal.entries {
            let state = match entry.owner {
                Owner::Staged => MessageState::Staged {
                    incarnation: entry.incarnation.clone(),
                    confirmed: true,
                },
                Owner::HookOwned => MessageState::HookOwned {
                    incarnation: entry.incarnation.clone(),
                },
            };
            // A time from another clock origin must not lie in our future.
            let at = Time::from_millis(entry.at).min(now);
            ownership.remembered.insert(entry.name.clone(), (state, at));
        }
        ownership
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    pub fn contains(&self, name: &MessageName) -> bool {
        self.entries.contains_key(name)
    }

    pub fn state(&self, name: &MessageName) -> Option<&MessageState> {
        self.entries.get(name).map(|entry| &entry.state)
    }

    /// Pending files, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &MessageName> {
        self.pending.iter()
    }

    /// Every unread file with its state and since when, in FIFO order.
    pub fn iter(&self) -> impl Iterator<Item = (&MessageName, &MessageState, Time)> {
        self.entries
            .iter()
            .map(|(name, entry)| (name, &entry.state, entry.since))
    }

    /// Records a file seen in `new/`. Returns false if it was already known.
    /// A file the journal remembers gets its remembered ownership back.
    pub fn add(&mut self, name: MessageName, now: Time) -> bool {
        if self.entries.contains_key(&name) {
            return false;
        }
        let (state, since) = self
            .remembered
            .remove(&name)
            .unwrap_or((MessageState::Pending, now));
        self.insert(name, state, since);
        true
    }

    /// Forgets a file that left `new/`, returning the state it had.
    pub fn remove(&mut self, name: &MessageName) -> Option<MessageState> {
        self.remembered.remove(name);
        let entry = self.entries.remove(name)?;
        self.pending.remove(name);
        if let Some(due) = entry.re_ring_at {
            self.re_ring.remove(&(due, name.clone()));
        }
        Some(entry.state)
    }

    /// Forgets every remembered journal entry the inbox scan did not confirm.
    /// Returns whether there was anything to forget (the journal on disk
    /// then still names files it no longer should).
    pub fn forget_unconfirmed_memories(&mut self) -> bool {
        let had = !self.remembered.is_empty();
        self.remembered.clear();
        had
    }

    /// Forgets remembered ownership that belongs to another incarnation: a
    /// harness that was restarted while the sidecar was down never saw it.
    pub fn forget_memories_outside(&mut self, incarnation: &str) {
        self.remembered.retain(|_, (state, _)| match state {
            MessageState::Staged {
                incarnation: owner, ..
            }
            | MessageState::HookOwned { incarnation: owner } => {
                owner.as_deref() == Some(incarnation)
            }
            _ => false,
        });
    }

    /// Moves files to a new state. Files not currently known are skipped.
    pub fn set(&mut self, names: &[MessageName], state: &MessageState, now: Time) {
        for name in names {
            if self.remove(name).is_some() {
                self.insert(name.clone(), state.clone(), now);
            }
        }
    }

    /// Files whose re-ring time has come, oldest due first.
    pub fn due_re_rings(&self, now: Time) -> Vec<MessageName> {
        self.re_ring
            .iter()
            .take_while(|(due, _)| *due <= now)
            .map(|(_, name)| name.clone())
            .collect()
    }

    /// The earliest re-ring time, if any staged file has one.
    pub fn next_re_ring(&self) -> Option<Time> {
        self.re_ring.first().map(|(due, _)| *due)
    }

    /// Owned files whose ownership does not belong to `incarnation`.
    pub fn owned_outside(&self, incarnation: &str) -> Vec<MessageName> {
        self.select(|state| match state {
            MessageState::Staged {
                incarnation: owner, ..
            }
            | MessageState::HookOwned { incarnation: owner } => {
                owner.as_deref() != Some(incarnation)
            }
            _ => false,
        })
    }

    /// Every staged or hook-owned file.
    pub fn owned(&self) -> Vec<MessageName> {
        self.select(|state| {
            matches!(
                state,
                MessageState::Staged { .. } | MessageState::HookOwned { .. }
            )
        })
    }

    /// Files in flight for `request`.
    pub fn in_flight(&self, request: RequestId) -> Vec<MessageName> {
        self.select(|state| *state == MessageState::InFlight { request })
    }

    /// The journal of current ownership, in FIFO order.
    pub fn journal(&self) -> Journal {
        let entries = self
            .entries
            .iter()
            .filter_map(|(name, entry)| {
                let (owner, incarnation) = match &entry.state {
                    MessageState::Staged { incarnation, .. } => (Owner::Staged, incarnation),
                    MessageState::HookOwned { incarnation } => (Owner::HookOwned, incarnation),
                    _ => return None,
                };
                Some(JournalEntry {
                    name: name.clone(),
                    owner,
                    at: entry.since.as_millis(),
                    incarnation: incarnation.clone(),
                })
            })
            .collect();
        Journal::new(entries)
    }

    fn select(&self, keep: impl Fn(&MessageState) -> bool) -> Vec<MessageName> {
        self.entries
            .iter()
            .filter(|(_, entry)| keep(&entry.state))
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn insert(&mut self, name: MessageName, state: MessageState, since: Time) {
        if state == MessageState::Pending {
            self.pending.insert(name.clone());
        }
        let re_ring_at = match (&state, self.re_ring_after) {
            (MessageState::Staged { .. }, Some(after)) => Some(since.saturating_add(after)),
            _ => None,
        };
        if let Some(due) = re_ring_at {
            self.re_ring.insert((due, name.clone()));
        }
        self.entries.insert(
            name,
            Entry {
                state,
                since,
                re_ring_at,
            },
        );
    }
}
