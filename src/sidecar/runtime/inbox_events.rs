//! The inbox watch's events as engine inputs, and the rescan that hands
//! the engine the whole listing of `new/`.

use serde_json::json;

use crate::core::engine::Input;
use crate::escape::escape_bytes;
use crate::sidecar::inbox::{Inbox, NameClass, Scan, Unreadable, classify_name};
use crate::sidecar::inbox_watch::InboxEvent;

use super::state::Runtime;

impl Runtime {
    pub(super) fn on_inbox(&mut self) {
        let mut events = Vec::new();
        if let Err(err) = self.watch.drain(&mut events) {
            self.log
                .event("inbox-watch-failed", json!({ "error": err.to_string() }));
            events.push(InboxEvent::Rescan);
        }
        let mut rescan = false;
        for event in events {
            match event {
                InboxEvent::Rescan => rescan = true,
                InboxEvent::Added(name) => match self.inbox.classify(&name) {
                    Some(NameClass::Message(message)) => {
                        self.unreadable.remove(&name);
                        self.inputs.push_back(Input::InboxAdded(message));
                    }
                    Some(NameClass::Unreadable(reason)) => {
                        self.log.event(
                            "inbox-unreadable",
                            json!({ "name": escape_bytes(name.as_encoded_bytes()), "reason": reason.to_string() }),
                        );
                        // A message that was replaced by something else
                        // under the same name is no longer one.
                        if let NameClass::Message(message) = classify_name(&name) {
                            self.inputs.push_back(Input::InboxRemoved(message));
                        }
                        self.unreadable
                            .insert(name.clone(), Unreadable { name, reason });
                    }
                    // Hidden, or gone already (its removal event follows).
                    Some(NameClass::Hidden) | None => {}
                },
                InboxEvent::Removed(name) => {
                    if self.unreadable.remove(&name).is_none()
                        && let NameClass::Message(message) = classify_name(&name)
                    {
                        self.inputs.push_back(Input::InboxRemoved(message));
                    }
                }
            }
        }
        if rescan {
            self.rescan();
        }
    }

    /// Lists `new/` and hands the engine the whole truth. Recreates the
    /// inbox's subdirectories if someone removed them; a root that is gone
    /// (moved away, not yet replaced) is an empty inbox, not recreated, so
    /// that whoever is replacing it is not raced. Its watch reports the new
    /// one.
    pub(super) fn rescan(&mut self) {
        let scan = if self.inbox.root().exists() {
            self.inbox.scan_unread().or_else(|_| {
                self.inbox = Inbox::open(&self.spec.inbox)?;
                self.inbox.scan_unread()
            })
        } else {
            self.log
                .event("inbox-missing", json!({ "inbox": self.inbox.root() }));
            Ok(Scan::default())
        };
        match scan {
            Ok(scan) => {
                self.unreadable = scan
                    .unreadable
                    .into_iter()
                    .map(|entry| (entry.name.clone(), entry))
                    .collect();
                self.inputs.push_back(Input::InboxScan(scan.unread));
            }
            Err(err) => self
                .log
                .event("inbox-scan-failed", json!({ "error": format!("{err:#}") })),
        }
    }
}
