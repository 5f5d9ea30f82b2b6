//! Time: the engine's timers, named in one table ([`Timer`]): when the
//! engine must next be woken ([`Engine::next_deadline`], the earliest of
//! the table) and what each does when it comes due (one `match`). Each
//! timer's deadline is read from the state it belongs to, so a timer can
//! never outlive what it times; a timer whose wait has lost its object (a
//! gather with nothing pending, a typed notice with no file left) is due
//! at once, and firing it ends the wait.

use crate::core::decision::{Decision, ReleaseCause};
use crate::core::hold::HoldReason;
use crate::core::lease::LeaseSlot;
use crate::core::ownership::MessageState;
use crate::core::time::Time;

use super::output::Output;
use super::state::Engine;

/// One of the engine's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// A burst's gather closes: its files may go.
    GatherCloses,
    /// The PTY host's reply to the request in flight is overdue.
    ReplyTimeout,
    /// A PTY failure's pause before the next request ends.
    PtyRetry,
    /// A typed notice's submit delay ends, then its bound for a screen
    /// that shows it alone.
    TypedNotice,
    /// The adapter is started again after its backoff.
    AdapterRespawn,
    /// A delivered file's re-ring comes due.
    ReRing,
}

impl Timer {
    /// Every timer, in the order they fire when several are due at once.
    pub const ALL: [Timer; 6] = [
        Timer::GatherCloses,
        Timer::ReplyTimeout,
        Timer::PtyRetry,
        Timer::TypedNotice,
        Timer::AdapterRespawn,
        Timer::ReRing,
    ];
}

impl Engine {
    /// When `timer` is due, if it is set.
    fn timer_at(&self, timer: Timer) -> Option<Time> {
        match timer {
            // A gather ends when its window closes, or when nothing it held
            // is pending any more (a hook took it all, or it was archived).
            Timer::GatherCloses => self.gather.map(|gather| {
                if self.ownership.pending_len() == 0 {
                    self.now
                } else {
                    gather.closes_at(self.config.tunables.gather_window())
                }
            }),
            Timer::ReplyTimeout => self.in_flight.as_ref().map(|flight| flight.deadline),
            Timer::PtyRetry => self.pty_block.as_ref().and_then(|block| block.retry_at),
            // A typed notice waits on time for its submit delay and its
            // bound, while no request of its own is in flight.
            Timer::TypedNotice => self
                .typed
                .as_ref()
                .filter(|_| self.in_flight.is_none())
                .map(|typed| {
                    if !self.typed_has_files() {
                        self.now
                    } else if self.now < typed.submit_after {
                        typed.submit_after
                    } else {
                        typed.return_by
                    }
                }),
            Timer::AdapterRespawn => self.adapter.retry_at(),
            Timer::ReRing => self.ownership.next_re_ring(),
        }
    }

    /// When [`Engine::handle_timeout`] must next be called. `None` when
    /// nothing is waiting on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        Timer::ALL
            .into_iter()
            .filter_map(|timer| self.timer_at(timer))
            .min()
            .map(|deadline| deadline.max(self.now))
    }

    /// Lets time pass. A call before the deadline is a harmless no-op.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance_clock(now);
        self.after_input();
    }

    pub(super) fn advance_clock(&mut self, now: Time) {
        // Time never runs backwards inside the engine, whatever the caller says.
        self.now = self.now.max(now);
    }

    /// Runs every timer that is due, in [`Timer::ALL`]'s order.
    pub(super) fn fire_timers(&mut self) {
        for timer in Timer::ALL {
            if self.timer_at(timer).is_some_and(|at| at <= self.now) {
                self.fire(timer);
            }
        }
    }

    fn fire(&mut self, timer: Timer) {
        let now = self.now;
        match timer {
            Timer::GatherCloses => self.gather = None,
            Timer::ReplyTimeout => {
                self.outcome_unknown("pty reply timed out");
                self.block_pty_for_retry("reply timed out".into());
            }
            Timer::PtyRetry => self.pty_block = None,
            // Its bound passed (the Return is withheld) or its files are
            // gone (it ends); its submit delay only woke the engine to ask
            // for the Return, which settling does.
            Timer::TypedNotice => self.settle_typed(),
            Timer::AdapterRespawn => {
                self.adapter.starting(now);
                self.lease = LeaseSlot::ended(HoldReason::AdapterStarting, now);
                self.outputs.push_back(Output::SpawnAdapter);
                self.record(Decision::AdapterSpawn);
            }
            Timer::ReRing => {
                let due = self.ownership.due_re_rings(now);
                if due.is_empty() {
                    return;
                }
                self.ownership.set(&due, &MessageState::Pending, now);
                self.journal_dirty = true;
                self.record(Decision::Released {
                    cause: ReleaseCause::ReRingDue,
                    messages: due,
                });
            }
        }
    }
}
