//! Time: the input order's timers, named in one table ([`Timer`]). Each
//! deadline is read from the state it belongs to, so a timer never
//! outlives what it times; [`InputOrder::next_deadline`] is the earliest,
//! and [`InputOrder::handle_timeout`] fires the expired ones through one
//! `match`, then runs the order.

use crate::core::time::Time;

use super::state::InputOrder;

/// One of the input order's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// When a hold ends if nothing else ended it: what it held goes on,
    /// after the paste is taken back out.
    HoldEnds,
    /// When a transaction's `waitMs` step is over and its next step runs.
    StepWaitEnds,
    /// When the person's next keys have kept their spacing and go on.
    KeysDue,
}

impl Timer {
    /// Every timer, in the order they fire when several are due at once.
    pub const ALL: [Timer; 3] = [Timer::HoldEnds, Timer::StepWaitEnds, Timer::KeysDue];
}

impl InputOrder {
    /// When `timer` is due, if it is set.
    pub fn deadline(&self, timer: Timer) -> Option<Time> {
        match timer {
            Timer::HoldEnds => self.hold_deadline(),
            Timer::StepWaitEnds => self.active.as_ref().and_then(|tx| tx.wait_until),
            Timer::KeysDue => self.keys_due,
        }
    }

    /// The earliest deadline of the table; `None` when nothing waits.
    pub fn next_deadline(&self) -> Option<Time> {
        Timer::ALL
            .into_iter()
            .filter_map(|timer| self.deadline(timer))
            .min()
    }

    /// Fires every timer due at `now`, then runs the order as far as it
    /// goes. Early or repeated calls change nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        for timer in Timer::ALL {
            if self.deadline(timer).is_none_or(|at| at > now) {
                continue;
            }
            match timer {
                Timer::HoldEnds => self.end_hold_with_input("its time was up"),
                // The order's run below takes the next step or keys.
                Timer::StepWaitEnds | Timer::KeysDue => {}
            }
        }
        self.run(now);
    }
}
