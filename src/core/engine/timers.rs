//! Time: when the engine must next be woken, and what fires when a
//! deadline passes (a reply's timeout, a PTY retry, a typed notice's bound,
//! an adapter respawn, a re-ring, a gather's close).

use crate::core::decision::{Decision, ReleaseCause};
use crate::core::hold::HoldReason;
use crate::core::lease::LeaseSlot;
use crate::core::ownership::MessageState;
use crate::core::time::Time;

use super::output::Output;
use super::state::Engine;

impl Engine {
    /// When [`Engine::handle_timeout`] must next be called. `None` when
    /// nothing is waiting on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        let reply = self.in_flight.as_ref().map(|flight| flight.deadline);
        let respawn = self.adapter.retry_at();
        let re_ring = self.ownership.next_re_ring();
        let pty_retry = self.pty_block.as_ref().and_then(|block| block.retry_at);
        // A typed notice waits on time for its submit delay and its bound.
        let typed = self
            .typed
            .as_ref()
            .filter(|_| self.in_flight.is_none())
            .map(|typed| {
                if self.now < typed.submit_after {
                    typed.submit_after
                } else {
                    typed.return_by
                }
            });
        let gather = self
            .gather
            .map(|gather| gather.closes_at(self.config.tunables.gather_window()));
        [reply, respawn, re_ring, pty_retry, typed, gather]
            .into_iter()
            .flatten()
            .min()
            .map(|deadline| deadline.max(self.now))
    }

    /// Lets time pass. A call before the deadline is a harmless no-op.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        self.settle();
    }

    pub(super) fn advance(&mut self, now: Time) {
        // Time never runs backwards inside the engine, whatever the caller says.
        self.now = self.now.max(now);
    }

    pub(super) fn fire_timers(&mut self) {
        let now = self.now;
        // A gather ends when its window closes, or when nothing it held
        // is pending any more (a hook took it all, or it was archived).
        if !self.gathering(now) || self.ownership.pending_len() == 0 {
            self.gather = None;
        }
        if let Some(flight) = &self.in_flight
            && flight.deadline <= now
        {
            self.outcome_unknown("pty reply timed out");
            self.block_pty_for_retry("reply timed out".into());
        }
        if let Some(block) = &self.pty_block
            && block.retry_at.is_some_and(|due| due <= now)
        {
            self.pty_block = None;
        }
        self.settle_typed();
        if self.adapter.retry_at().is_some_and(|due| due <= now) {
            self.adapter.starting(now);
            self.lease = LeaseSlot::ended(HoldReason::AdapterStarting, now);
            self.outputs.push_back(Output::SpawnAdapter);
            self.record(Decision::AdapterSpawn);
        }
        let due = self.ownership.due_re_rings(now);
        if !due.is_empty() {
            self.ownership.set(&due, &MessageState::Pending, now);
            self.journal_dirty = true;
            self.record(Decision::Released {
                cause: ReleaseCause::ReRingDue,
                messages: due,
            });
        }
    }
}
