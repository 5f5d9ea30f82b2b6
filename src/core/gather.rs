//! Gathering a burst (spec §4.4): files that arrive while nothing of the
//! agent's unread work is on its way become one delivery while they keep
//! coming. The window closes once no file arrived for the quiet time, and
//! at the latest the cap after the first: whichever path then delivers
//! (a wake, a queued turn, a typed notice) carries them all, for one model
//! call instead of one per arrival.
//!
//! A hook at a turn boundary is not kept waiting: its claim takes what has
//! arrived, gathered or not, since that boundary costs no call of its own.

use std::time::Duration;

use super::time::Time;

/// How long a gather lasts: [`super::config::Tunables::gather_quiet`] and
/// [`super::config::Tunables::gather_cap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GatherWindow {
    /// The window closes once no file arrived for this long.
    pub quiet: Duration,
    /// It closes at the latest this long after its first file.
    pub cap: Duration,
}

/// An open gather: when its first and its latest file arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gather {
    first: Time,
    last: Time,
}

impl Gather {
    /// A gather opened by a file arriving `now`.
    pub fn opened(now: Time) -> Gather {
        Gather {
            first: now,
            last: now,
        }
    }

    /// Another file arrived `now`: the quiet time starts again.
    pub fn arrived(&mut self, now: Time) {
        self.last = self.last.max(now);
    }

    /// When the window closes: a quiet time after the latest arrival, and
    /// never later than the cap after the first.
    pub fn closes_at(&self, window: GatherWindow) -> Time {
        self.last
            .saturating_add(window.quiet)
            .min(self.first.saturating_add(window.cap))
    }

    /// Whether the window is still open at `now`.
    pub fn is_open(&self, window: GatherWindow, now: Time) -> bool {
        now < self.closes_at(window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: GatherWindow = GatherWindow {
        quiet: Duration::from_millis(1_000),
        cap: Duration::from_millis(3_000),
    };

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn a_lone_arrival_waits_one_quiet_time() {
        let gather = Gather::opened(at(100));
        assert_eq!(gather.closes_at(WINDOW), at(1_100));
        assert!(gather.is_open(WINDOW, at(1_099)));
        assert!(!gather.is_open(WINDOW, at(1_100)));
    }

    #[test]
    fn each_arrival_restarts_the_quiet_time_up_to_the_cap() {
        let mut gather = Gather::opened(at(0));
        gather.arrived(at(900));
        assert_eq!(gather.closes_at(WINDOW), at(1_900));
        gather.arrived(at(1_800));
        gather.arrived(at(2_700));
        // 3,700 by the quiet time, but the cap counts from the first.
        assert_eq!(gather.closes_at(WINDOW), at(3_000));
    }

    #[test]
    fn an_arrival_reported_out_of_order_never_moves_the_window_back() {
        let mut gather = Gather::opened(at(500));
        gather.arrived(at(400));
        assert_eq!(gather.closes_at(WINDOW), at(1_500));
    }

    #[test]
    fn a_zero_quiet_time_gathers_nothing() {
        let window = GatherWindow {
            quiet: Duration::ZERO,
            ..WINDOW
        };
        assert!(!Gather::opened(at(7)).is_open(window, at(7)));
    }
}
