//! Time: when the machine must next be woken, and what comes due: claims
//! and receipts that were not answered, wakes no reading confirmed, parked
//! calls, strangers, the settle check, the PTY retry, the heartbeat, and
//! the snapshot that is owed.

use crate::adapter::hook_wire::HookAnswer;
use crate::adapter::parked;
use crate::adapter::{ParkEnded, Provider};
use crate::core::protocol::Undelivered;
use crate::core::time::Time;

use super::calls::another_terminal;
use super::claims::due;
use super::contract::Output;
use super::state::{Link, Machine};

impl<P: Provider> Machine<P> {
    /// When [`Machine::handle_timeout`] must next be called; `None` while
    /// nothing waits on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        let snapshot = self
            .snapshot_wanted()
            .then(|| self.snapshot_allowed_at().unwrap_or(self.now));
        [
            snapshot,
            self.next_heartbeat,
            self.pty_retry_at,
            self.claims.next_deadline(),
            self.parked.next_deadline(),
            self.strangers.next_deadline(),
            self.settle_check_at.filter(|_| self.wanted),
        ]
        .into_iter()
        .flatten()
        .min()
        .map(|at| at.max(self.now))
    }

    /// Time passed (the deadline [`Machine::next_deadline`] named, or any
    /// later one).
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.on_time();
    }

    /// When the next snapshot may be asked for; `None`: at once.
    fn snapshot_allowed_at(&self) -> Option<Time> {
        self.last_snapshot
            .map(|at| at + self.pacing.min_snapshot_gap)
    }

    /// Whether a snapshot is owed: wanted, something moved, and the open
    /// connection has none pending.
    fn snapshot_wanted(&self) -> bool {
        (self.wanted || !self.claims.confirming.is_empty())
            && self.moved
            && self.link
                == Link::Open {
                    snapshot_pending: false,
                }
    }

    pub(super) fn on_time(&mut self) {
        let now = self.now;
        for peer in due(&self.claims.waiting, now, |waiting| waiting.deadline) {
            // No answer from the sidecar in time: inject nothing, and give
            // back whatever the claim grants if its answer comes after all.
            let Some(waiting) = self.claims.waiting.remove(&peer) else {
                continue;
            };
            self.claims.abandon(&waiting);
            match waiting.parked {
                Some((park, deadline)) => self.repark(peer, waiting.call, park, deadline),
                None => self.answer(peer, &HookAnswer::default()),
            }
        }
        for peer in due(&self.claims.delivering, now, |sent| sent.deadline) {
            self.emit(Output::HookClose { peer });
            if let Some(sent) = self.claims.delivering.remove(&peer) {
                self.give_back(&sent.identity, sent.messages, Undelivered::NoReceipt);
            }
        }
        for peer in due(&self.claims.confirming, now, |wake| wake.deadline) {
            // No reading came in time: nothing vouches for the screen.
            if let Some(wake) = self.claims.confirming.remove(&peer) {
                let again_at = wake.park().map(|park| now.saturating_add(park.settle));
                self.withhold(peer, wake, again_at, "no reading of the screen came");
            }
        }
        for stale in self.parked.take_expired(now) {
            self.end_park(stale, ParkEnded::Expired);
        }
        for peer in self.strangers.take_expired(now) {
            self.refuse(peer, another_terminal());
        }
        for due in self.parked.take_due(now) {
            let screen_later = (!parked::may_wake(&due.park, self.fresh_idle))
                .then(|| now.saturating_add(due.park.settle));
            // A turn started without terminal input is fenced like a
            // compare-and-send: the person's latest key may not be drawn
            // yet (see `quiet.rs`).
            let quiet_later = || {
                due.park
                    .waits_for_fresh_idle
                    .then(|| self.person.not_before(self.pacing.quiet_input, now))
                    .flatten()
            };
            if let Some(again_at) = screen_later.or_else(quiet_later) {
                if let Some(stale) = self.parked.hold(due, again_at) {
                    self.end_park(stale, ParkEnded::Replaced);
                }
                continue;
            }
            let request = due.park.claim.clone();
            let restore = Some((due.park, due.deadline));
            self.claim_for(due.peer, due.call, request, restore);
        }
        if self.wanted {
            if self.settle_check_at.is_some_and(|at| at <= now) {
                // The new screen may have settled: read it again.
                self.settle_check_at = None;
                self.moved = true;
            }
            if self.pty_retry_at.is_some_and(|at| at <= now) {
                self.pty_retry_at = None;
                self.open_pty();
            }
            if self.next_heartbeat.is_some_and(|at| at <= now) {
                self.next_heartbeat = None;
                self.moved = true;
            }
        }
        let allowed = self.snapshot_allowed_at().is_none_or(|at| at <= now);
        if self.snapshot_wanted() && allowed {
            self.moved = false;
            self.last_snapshot = Some(now);
            self.snapshots_asked += 1;
            self.link = Link::Open {
                snapshot_pending: true,
            };
            self.emit(Output::PtySnapshot);
        }
        self.report_remark();
    }
}
