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
//! unread files, and everything about owned work (the journal, releases) is
//! O(owned) through an index, so a journal write costs the same with 10 or
//! 100,000 pending files (status listing is O(n)). Nothing here ever drops a
//! file: the only way out is [`Ownership::remove`], which the engine calls
//! when the file leaves `new/`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::journal::{Journal, JournalEntry, Owner};
use super::message::MessageName;
use super::time::Time;

/// Identifies one PTY request the engine issued.
pub type RequestId = u64;

/// The state of one unread file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

impl MessageState {
    /// The state a journal entry restores: what a sidecar started now
    /// would give the file once its scan sees it unread. A staged file is
    /// restored as confirmed: the journal does not record whether the
    /// outcome of its write was known.
    pub fn restored(entry: &JournalEntry) -> MessageState {
        if entry.owner == Owner::Staged
            && crate::mutation::planted(crate::mutation::Mutation::JournalRestoresStagedAsPending)
        {
            return MessageState::Pending;
        }
        match entry.owner {
            Owner::Staged => MessageState::Staged {
                incarnation: entry.incarnation.clone(),
                confirmed: true,
            },
            Owner::HookOwned => MessageState::HookOwned {
                incarnation: entry.incarnation.clone(),
            },
        }
    }
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
    /// Staged and hook-owned files: the journal's index.
    owned: BTreeSet<MessageName>,
    /// Journaled ownership waiting for the file to be seen in `new/` again.
    remembered: BTreeMap<MessageName, (MessageState, Time)>,
    /// Files a hook took before the inbox watch reported them (the hook
    /// listed `new/` itself): hook-owned the moment they are seen. Bounded
    /// in count and age, because a name that never appears must not be
    /// remembered forever.
    unseen: BTreeMap<MessageName, (MessageState, Time)>,
    /// Whether journaled memories were dropped for another incarnation
    /// before the first scan: the journal on disk then names files it no
    /// longer should, and the scan must have it rewritten.
    memories_dropped: bool,
}

/// What [`Ownership::add`] made of a file seen in `new/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen {
    /// It was already known; nothing changed.
    Known,
    /// New unread work: pending, or owned as the journal on disk remembers.
    New,
    /// A hook took it before it was seen: hook-owned from now on, which the
    /// journal on disk does not say yet.
    NewHookOwned,
}

/// How long a hook-owned name that has not been seen is remembered.
pub const UNSEEN_MEMORY: Duration = Duration::from_secs(60);

/// The most hook-owned names remembered before they are seen.
pub const MAX_UNSEEN: usize = 4096;

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
            if entry.owner == Owner::HookOwned && journal.in_doubt.contains(&entry.name) {
                // Its hook never said it printed it: pending again, and the
                // journal on disk, which names it, is written anew at the
                // first scan.
                ownership.memories_dropped = true;
                continue;
            }
            let state = MessageState::restored(entry);
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

    /// The state of `name` and since when, if it is known.
    pub fn state_since(&self, name: &MessageName) -> Option<(&MessageState, Time)> {
        self.entries
            .get(name)
            .map(|entry| (&entry.state, entry.since))
    }

    /// Every unread file with its state and since when, in FIFO order (for
    /// claims too, which may take owned work).
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&MessageName, &MessageState, Time)> + Clone {
        self.entries
            .iter()
            .map(|(name, entry)| (name, &entry.state, entry.since))
    }

    /// [`Ownership::iter`] from the first file after `after`.
    pub fn iter_after(
        &self,
        after: &MessageName,
    ) -> impl DoubleEndedIterator<Item = (&MessageName, &MessageState, Time)> + Clone {
        use std::ops::Bound;
        self.entries
            .range((Bound::Excluded(after), Bound::Unbounded))
            .map(|(name, entry)| (name, &entry.state, entry.since))
    }

    /// Records a file seen in `new/`. A file the journal remembers gets its
    /// remembered ownership back; a file a hook already took is hook-owned.
    pub fn add(&mut self, name: MessageName, now: Time) -> Seen {
        if self.entries.contains_key(&name) {
            return Seen::Known;
        }
        let unseen = self
            .unseen
            .remove(&name)
            .filter(|(_, at)| now.since(*at) < UNSEEN_MEMORY);
        let seen = if unseen.is_some() {
            Seen::NewHookOwned
        } else {
            Seen::New
        };
        let (state, since) = unseen
            .or_else(|| self.remembered.remove(&name))
            .unwrap_or((MessageState::Pending, now));
        self.insert(name, state, since);
        seen
    }

    /// Remembers that a hook took `name` before it was seen in `new/`.
    pub fn expect(&mut self, name: MessageName, state: MessageState, now: Time) {
        self.unseen
            .retain(|_, (_, at)| now.since(*at) < UNSEEN_MEMORY);
        if self.unseen.len() >= MAX_UNSEEN
            && let Some(oldest) = self
                .unseen
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(name, _)| name.clone())
        {
            self.unseen.remove(&oldest);
        }
        self.unseen.insert(name, (state, now));
    }

    /// Forgets a file that left `new/`, returning the state it had.
    pub fn remove(&mut self, name: &MessageName) -> Option<MessageState> {
        self.remembered.remove(name);
        self.unseen.remove(name);
        let entry = self.entries.remove(name)?;
        self.pending.remove(name);
        self.owned.remove(name);
        if let Some(due) = entry.re_ring_at {
            self.re_ring.remove(&(due, name.clone()));
        }
        Some(entry.state)
    }

    /// Forgets every remembered journal entry the inbox scan did not confirm.
    /// Returns whether there was anything to forget, now or earlier for
    /// another incarnation (the journal on disk then still names files it no
    /// longer should).
    pub fn forget_unconfirmed_memories(&mut self) -> bool {
        let had = !self.remembered.is_empty() || std::mem::take(&mut self.memories_dropped);
        self.remembered.clear();
        // A full listing is the truth: a name it lacks is not coming.
        self.unseen.clear();
        had
    }

    /// Forgets the files hooks took before the inbox watch reported them:
    /// the context they were put into is gone (a clear or a crash), so they
    /// are pending work when they are seen.
    pub fn forget_unseen(&mut self) {
        self.unseen.clear();
    }

    /// Forgets that a hook took `name` before it was seen, if its state then
    /// passes `taken_by`: the hook never passed it on, so it is pending
    /// work when it is seen.
    pub fn forget_expected(
        &mut self,
        name: &MessageName,
        taken_by: impl Fn(&MessageState) -> bool,
    ) {
        if self
            .unseen
            .get(name)
            .is_some_and(|(state, _)| taken_by(state))
        {
            self.unseen.remove(name);
        }
    }

    /// Forgets remembered ownership that belongs to another incarnation: a
    /// harness that was restarted while the sidecar was down never saw it.
    pub fn forget_memories_outside(&mut self, incarnation: &str) {
        let keep = |state: &MessageState| match state {
            MessageState::Staged {
                incarnation: owner, ..
            }
            | MessageState::HookOwned { incarnation: owner } => {
                owner.as_deref() == Some(incarnation)
            }
            _ => false,
        };
        let remembered = self.remembered.len();
        self.remembered.retain(|_, (state, _)| keep(state));
        self.memories_dropped |= self.remembered.len() != remembered;
        self.unseen.retain(|_, (state, _)| keep(state));
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
        self.owned_entries()
            .filter(|(_, entry)| match &entry.state {
                MessageState::Staged {
                    incarnation: owner, ..
                }
                | MessageState::HookOwned { incarnation: owner } => {
                    owner.as_deref() != Some(incarnation)
                }
                _ => false,
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Every staged or hook-owned file, oldest first.
    pub fn owned(&self) -> Vec<MessageName> {
        self.owned.iter().cloned().collect()
    }

    /// How many files are staged or hook-owned.
    pub fn owned_len(&self) -> usize {
        self.owned.len()
    }

    fn owned_entries(&self) -> impl Iterator<Item = (&MessageName, &Entry)> {
        self.owned
            .iter()
            .filter_map(|name| self.entries.get_key_value(name))
    }

    /// The journal of current ownership, in FIFO order. O(owned).
    pub fn journal(&self) -> Journal {
        let entries = self
            .owned_entries()
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

    fn insert(&mut self, name: MessageName, state: MessageState, since: Time) {
        match state {
            MessageState::Pending => {
                self.pending.insert(name.clone());
            }
            MessageState::Staged { .. } | MessageState::HookOwned { .. } => {
                self.owned.insert(name.clone());
            }
            MessageState::InFlight { .. } => {}
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
