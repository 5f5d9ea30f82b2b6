//! The inbox's facts: a scan, a file that appeared, a file that left; and
//! the gathering of a burst of arrivals into one delivery (spec §4.4).

use crate::core::config::Policy;
use crate::core::decision::Decision;
use crate::core::gather::Gather;
use crate::core::message::MessageName;
use crate::core::ownership::{MessageState, Seen};
use crate::core::time::Time;

use super::state::Engine;

impl Engine {
    pub(super) fn on_scan(&mut self, names: Vec<MessageName>) {
        let listed: std::collections::BTreeSet<MessageName> = names.into_iter().collect();
        let gone: Vec<MessageName> = self
            .ownership
            .iter()
            .map(|(name, _, _)| name)
            .filter(|name| !listed.contains(*name))
            .cloned()
            .collect();
        let removed = gone.len();
        for name in gone {
            self.on_removed(name);
        }
        let mut added = 0;
        for name in listed {
            if self.on_seen(name) {
                added += 1;
            }
        }
        // Removals of owned files already marked the journal; a rescan that
        // changed no ownership writes nothing.
        if self.ownership.forget_unconfirmed_memories() {
            self.journal_dirty = true;
        }
        self.record(Decision::Scanned {
            unread: self.ownership.len(),
            added,
            removed,
        });
    }

    /// Records a file seen in `new/`; returns whether it was new. A file a
    /// hook took before the watch reported it is hook-owned from now on, and
    /// the journal must say so (spec §6.1).
    pub(super) fn on_seen(&mut self, name: MessageName) -> bool {
        match self.ownership.add(name.clone(), self.now) {
            Seen::Known => false,
            Seen::New => {
                // A file the journal remembers as staged or hook-owned is
                // no arrival: only new pending work is gathered.
                if self.ownership.state(&name) == Some(&MessageState::Pending) {
                    self.gather_arrival();
                }
                true
            }
            Seen::NewHookOwned => {
                self.journal_dirty = true;
                true
            }
        }
    }

    /// A new pending file (already added) restarts the open gather's quiet
    /// time, or opens one when it is the only unread work on its way:
    /// beside pending work or a notice not yet answered, a delivery is
    /// already coming, and the file joins it. The aggressive policy
    /// gathers nothing: it is the baseline.
    fn gather_arrival(&mut self) {
        if self.config.policy == Policy::Aggressive {
            return;
        }
        let window = self.config.tunables.gather_window();
        match &mut self.gather {
            Some(gather) if gather.is_open(window, self.now) => gather.arrived(self.now),
            _ if self.ownership.pending_len() == 1
                && self.in_flight.is_none()
                && self.typed.is_none() =>
            {
                self.gather = Some(Gather::opened(self.now));
            }
            _ => {}
        }
    }

    /// Whether a gather still holds the pending files back at `now`.
    pub(super) fn gathering(&self, now: Time) -> bool {
        if crate::mutation::planted(crate::mutation::Mutation::NoGather) {
            return false;
        }
        self.gather
            .is_some_and(|gather| gather.is_open(self.config.tunables.gather_window(), now))
    }

    pub(super) fn on_removed(&mut self, name: MessageName) {
        match self.ownership.remove(&name) {
            Some(was) => {
                if !matches!(was, MessageState::Pending | MessageState::InFlight { .. }) {
                    self.journal_dirty = true;
                }
                self.record(Decision::Archived { message: name, was });
            }
            None => self.record(Decision::Ignored {
                what: format!("removal of unknown file {name}"),
            }),
        }
    }
}
