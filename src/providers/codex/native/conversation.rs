//! What one conversation with one app-server knows about the TUI's
//! thread and DING's deliveries in its queue, and what the adapter is told
//! of it. A server started again begins with a fresh one; the machine
//! (`mod.rs`) decides what to ask and when.

use std::collections::HashMap;

use super::super::thread_status::ThreadStatus;
use super::replies::Queued;
use crate::adapter::native_idle::wire::{ListedHook, QueueReport};
use crate::core::time::Time;

/// What a request to the app-server was for, so that its reply is read as
/// such.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Purpose {
    Initialize,
    HooksList,
    LoadedList,
    Probe,
    /// `thread/queue/add` of the delivery with this `clientUserMessageId`.
    Add(String),
    List,
    Start,
    Delete,
}

/// What one conversation with one app-server knows: a server started again
/// begins with a fresh one.
#[derive(Debug, Default)]
pub struct Conversation {
    pub thread: Option<String>,
    pub status: ThreadStatus,
    pub idle_since: Option<Time>,
    pub resumed: bool,
    pub ours: Vec<Queued>,
    pub failed: Vec<String>,
    pub hooks: Option<Vec<ListedHook>>,
    pub ready: bool,
    pub pending: HashMap<u64, Purpose>,
    /// The report of the newest call, while it may still be open.
    pub reported: Option<QueueReport>,
}

impl Conversation {
    /// What the launcher tells the adapter now.
    pub fn report(&self) -> QueueReport {
        QueueReport {
            conversation: self.thread.clone(),
            status: self.status.conversation(),
            queued: self
                .ours
                .iter()
                .map(|queued| queued.client_id.clone())
                .collect(),
            failed: self.failed.clone(),
            hooks: None,
        }
    }

    /// Whether the newest report let the adapter deliver.
    pub fn may_deliver(&self) -> bool {
        self.reported.as_ref().is_some_and(QueueReport::may_deliver)
    }

    /// A status said: a change starts a new idle spell (or ends one).
    pub fn set_status(&mut self, status: ThreadStatus, now: Time) {
        if status != self.status {
            self.status = status;
            self.idle_since = status.is_idle().then_some(now);
            self.resumed = false;
        }
    }

    /// `thread/queue/add` refused the delivery `client_id`: it is reported
    /// as failed.
    pub fn add_failed(&mut self, client_id: &str) {
        self.ours.retain(|queued| queued.client_id != client_id);
        self.failed.push(client_id.to_string());
    }

    /// The queue lists `listed`: a delivery of DING's gone from it had its
    /// turn started (or was deleted).
    pub fn keep_listed(&mut self, listed: &[&str]) {
        self.ours.retain(|queued| {
            queued.server_id.is_none() || listed.contains(&queued.client_id.as_str())
        });
    }
}
