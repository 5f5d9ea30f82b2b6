//! Time: the machine's timers, named in one table ([`Timer`]): when the
//! machine must next be woken ([`AdapterMachine::next_deadline`], the earliest of
//! the table) and what each does when it comes due (one `match`): claims
//! and receipts that were not answered, wakes no reading confirmed, parked
//! calls, strangers, the settle check, the PTY retry, the heartbeat, and
//! the snapshot that is owed. Each timer's deadline is read from the state
//! it belongs to.

use crate::adapter::hook_wire::HookAnswer;
use crate::adapter::parked;
use crate::adapter::{ParkEnded, Provider};
use crate::core::protocol::Undelivered;
use crate::core::time::Time;

use super::calls::another_terminal;
use super::claims::due;
use super::contract::Output;
use super::state::{AdapterMachine, Link};

/// One of the machine's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// A claim the sidecar has not answered in time.
    ClaimAnswer,
    /// A delivery whose receipt has not come in time.
    Receipt,
    /// A wake no reading of the screen confirmed in time.
    WakeConfirmation,
    /// A parked call whose hook's own timeout nears.
    ParkExpiry,
    /// A call from another terminal, waited out.
    Stranger,
    /// A parked call's moment to act.
    ParkDue,
    /// A new screen may have settled: read it again (while evidence is
    /// wanted).
    SettleCheck,
    /// The PTY link is opened again (while evidence is wanted).
    PtyRetry,
    /// The screen is read again with nothing moved (while evidence is
    /// wanted).
    Heartbeat,
    /// The snapshot owed, once the pacing's gap allows.
    Snapshot,
}

impl Timer {
    /// Every timer, in the order they fire when several are due at once:
    /// the snapshot last, so that it reads what the others moved.
    pub const ALL: [Timer; 10] = [
        Timer::ClaimAnswer,
        Timer::Receipt,
        Timer::WakeConfirmation,
        Timer::ParkExpiry,
        Timer::Stranger,
        Timer::ParkDue,
        Timer::SettleCheck,
        Timer::PtyRetry,
        Timer::Heartbeat,
        Timer::Snapshot,
    ];
}

impl<P: Provider> AdapterMachine<P> {
    /// When `timer` is due, if it is set.
    fn timer_at(&self, timer: Timer) -> Option<Time> {
        match timer {
            Timer::ClaimAnswer => self.claims.next_answer_due(),
            Timer::Receipt => self.claims.next_receipt_due(),
            Timer::WakeConfirmation => self.claims.next_confirmation_due(),
            Timer::ParkExpiry => self.parked.next_expiry(),
            Timer::Stranger => self.strangers.next_deadline(),
            Timer::ParkDue => self.parked.next_due(),
            Timer::SettleCheck => self.settle_check_at.filter(|_| self.screen_wanted()),
            Timer::PtyRetry => self.pty_retry_at,
            Timer::Heartbeat => self.next_heartbeat,
            Timer::Snapshot => self
                .snapshot_wanted()
                .then(|| self.snapshot_allowed_at().unwrap_or(self.now)),
        }
    }

    /// When [`AdapterMachine::handle_timeout`] must next be called; `None` while
    /// nothing waits on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        Timer::ALL
            .into_iter()
            .filter_map(|timer| self.timer_at(timer))
            .min()
            .map(|at| at.max(self.now))
    }

    /// Time passed (the deadline [`AdapterMachine::next_deadline`] named, or any
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
        self.screen_wanted()
            && self.screen_stale
            && self.link
                == Link::Open {
                    snapshot_pending: false,
                }
    }

    /// Runs every timer that is due, in [`Timer::ALL`]'s order; then says
    /// the provider's remark if it changed.
    pub(super) fn on_time(&mut self) {
        for timer in Timer::ALL {
            if self.timer_at(timer).is_some_and(|at| at <= self.now) {
                self.fire(timer);
            }
        }
        self.report_remark();
    }

    fn fire(&mut self, timer: Timer) {
        let now = self.now;
        match timer {
            Timer::ClaimAnswer => {
                for peer in due(&self.claims.waiting, now, |waiting| waiting.deadline) {
                    // No answer from the sidecar in time: inject nothing,
                    // and give back whatever the claim grants if its answer
                    // comes after all.
                    let Some(waiting) = self.claims.waiting.remove(&peer) else {
                        continue;
                    };
                    self.claims.abandon(&waiting);
                    match waiting.parked {
                        Some((park, deadline)) => self.repark(peer, waiting.call, park, deadline),
                        None => self.answer(peer, &HookAnswer::default()),
                    }
                }
            }
            Timer::Receipt => {
                for peer in due(&self.claims.delivering, now, |sent| sent.deadline) {
                    self.emit(Output::HookClose { peer });
                    if let Some(sent) = self.claims.delivering.remove(&peer) {
                        self.answer_unread(sent, Undelivered::NoReceipt);
                    }
                }
            }
            Timer::WakeConfirmation => {
                for peer in due(&self.claims.confirming, now, |wake| wake.deadline) {
                    // No reading came in time: nothing vouches for the screen.
                    if let Some(wake) = self.claims.confirming.remove(&peer) {
                        let again_at = wake.park().map(|park| now.saturating_add(park.settle));
                        self.withhold(peer, wake, again_at, "no reading of the screen came");
                    }
                }
            }
            Timer::ParkExpiry => {
                for stale in self.parked.take_expired(now) {
                    self.end_park(stale, ParkEnded::Expired);
                }
            }
            Timer::Stranger => {
                for peer in self.strangers.take_expired(now) {
                    self.refuse(peer, another_terminal());
                }
            }
            Timer::ParkDue => self.act_on_due_parks(),
            // The PTY's timers run only while the screen is wanted.
            Timer::SettleCheck => {
                // The new screen may have settled: read it again.
                self.settle_check_at = None;
                self.screen_stale = true;
            }
            Timer::PtyRetry if self.screen_wanted() => {
                self.pty_retry_at = None;
                self.open_pty();
            }
            Timer::Heartbeat if self.evidence_wanted => {
                self.next_heartbeat = None;
                self.screen_stale = true;
            }
            Timer::PtyRetry | Timer::Heartbeat => {}
            Timer::Snapshot => {
                self.screen_stale = false;
                self.last_snapshot = Some(now);
                self.snapshots_asked += 1;
                self.link = Link::Open {
                    snapshot_pending: true,
                };
                self.emit(Output::PtySnapshot);
            }
        }
    }

    /// The parked calls whose moment came: each acts now, or waits again
    /// for the screen to settle or the person's input to go quiet.
    fn act_on_due_parks(&mut self) {
        let now = self.now;
        for due in self.parked.take_due(now) {
            let screen_later = (!parked::may_wake(&due.park, self.fresh_idle))
                .then(|| now.saturating_add(due.park.settle));
            // A turn started without terminal input is fenced like a
            // compare-and-send: the person's latest key may not be drawn
            // yet (see `quiet.rs`).
            let quiet_later = || {
                due.park
                    .waits_for_fresh_idle
                    .then(|| self.person.not_before(self.pacing.turn_quiet(), now))
                    .flatten()
            };
            if let Some(again_at) = screen_later.or_else(quiet_later) {
                if let Some(stale) = self.parked.defer_until(due, again_at) {
                    self.end_park(stale, ParkEnded::Replaced);
                }
                continue;
            }
            let request = due.park.claim.clone();
            let restore = Some((due.park, due.deadline));
            self.claim_for(due.peer, due.call, request, restore);
        }
    }
}
