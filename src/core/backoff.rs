//! One exponential backoff, for everything that tries again after a failure.
//!
//! A [`Backoff`] is its configuration (the first delay, the cap and,
//! optionally, how long a run must last to count as a success) and its state
//! (the delay the next failure waits). It reads no clock and knows no moment:
//! a failure returns the delay to wait and the caller adds it to its own
//! time, a [`Time`](super::time::Time) in the engine and the sidecar, an
//! `Instant` in the supervisor. What counts as a failure and what as a
//! success is the caller's business; so is what to do meanwhile.
//!
//! Its users: the engine's adapter respawn (`super::adapter`) and PTY retry
//! after an error (`super::engine`), the sidecar's PTY reconnect
//! (`crate::sidecar::pty_link`) and the supervisor's restart of a dead agent
//! (`crate::cli::supervise`). Each keeps its numbers beside its own code.

use std::time::Duration;

use serde::Serialize;

/// Waits `initial` after the first failure, twice as long after each
/// further one up to `max`, and `initial` again after a success.
///
/// N.B. the doubling saturates: no number of failures overflows, and a
/// delay never exceeds `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    /// A run at least this long before a failure counts as a success first.
    stable_after: Option<Duration>,
    /// The delay the next failure waits.
    #[serde(skip)]
    next: Duration,
    /// Failures since the last success.
    #[serde(skip)]
    failures: u32,
}

impl Backoff {
    /// `initial`, doubling up to `max`. An `initial` above `max` is `max`.
    pub const fn new(initial: Duration, max: Duration) -> Backoff {
        let initial = if initial.as_nanos() > max.as_nanos() {
            max
        } else {
            initial
        };
        Backoff {
            initial,
            max,
            stable_after: None,
            next: initial,
            failures: 0,
        }
    }

    /// The same, and a run that lasted `run` or longer before it failed
    /// counts as a success first (see [`Backoff::failed_after`]).
    pub const fn stable_after(self, run: Duration) -> Backoff {
        Backoff {
            stable_after: Some(run),
            ..self
        }
    }

    /// A failure: the delay to wait before trying again.
    pub fn failed(&mut self) -> Duration {
        let delay = self.next;
        self.next = delay.saturating_mul(2).min(self.max);
        self.failures = self.failures.saturating_add(1);
        delay
    }

    /// A failure after a run of `ran`: a run of at least `stable_after`
    /// first counts as a success, so the delay is `initial` again.
    pub fn failed_after(&mut self, ran: Duration) -> Duration {
        if self.stable_after.is_some_and(|stable| ran >= stable) {
            self.succeeded();
        }
        self.failed()
    }

    /// A success: the next failure waits `initial` again.
    pub fn succeeded(&mut self) {
        self.next = self.initial;
        self.failures = 0;
    }

    /// The delay the next failure would wait.
    pub fn next_delay(&self) -> Duration {
        self.next
    }

    /// Failures since the last success (saturating): `1` right after the
    /// first failure of a series.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn delays(backoff: &mut Backoff, count: usize) -> Vec<u128> {
        (0..count).map(|_| backoff.failed().as_millis()).collect()
    }

    #[test]
    fn a_backoff_doubles_from_its_first_delay_to_its_cap() {
        let mut backoff = Backoff::new(ms(100), ms(5_000));
        assert_eq!(backoff.next_delay(), ms(100));
        assert_eq!(
            delays(&mut backoff, 9),
            [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000]
        );
        assert_eq!(backoff.failures(), 9);
        assert_eq!(backoff.next_delay(), ms(5_000));
    }

    #[test]
    fn a_success_starts_the_series_again() {
        let mut backoff = Backoff::new(ms(250), ms(8_000));
        assert_eq!(delays(&mut backoff, 3), [250, 500, 1_000]);
        backoff.succeeded();
        assert_eq!(backoff.failures(), 0);
        assert_eq!(backoff.next_delay(), ms(250));
        assert_eq!(delays(&mut backoff, 2), [250, 500]);
        assert_eq!(backoff.failures(), 2);
    }

    #[test]
    fn a_stable_run_counts_as_a_success_and_a_short_one_does_not() {
        let second = Duration::from_secs(1);
        let mut backoff = Backoff::new(second, 60 * second).stable_after(60 * second);
        assert_eq!(backoff.failed_after(Duration::ZERO), second);
        assert_eq!(backoff.failed_after(59 * second), 2 * second);
        assert_eq!(backoff.failed_after(60 * second), second, "a stable minute");
        assert_eq!(backoff.failures(), 1);
        // Without the rule, a run's length changes nothing.
        let mut plain = Backoff::new(second, 60 * second);
        plain.failed();
        assert_eq!(plain.failed_after(Duration::MAX), 2 * second);
    }

    #[test]
    fn no_number_of_failures_overflows() {
        let mut huge = Backoff::new(Duration::MAX / 2 + ms(1), Duration::MAX);
        assert_eq!(huge.failed(), Duration::MAX / 2 + ms(1));
        assert_eq!(huge.failed(), Duration::MAX, "the doubling saturates");
        assert_eq!(huge.failed(), Duration::MAX);
        let mut many = Backoff::new(ms(1), Duration::MAX);
        for _ in 0..200 {
            many.failed();
        }
        assert_eq!(many.next_delay(), Duration::MAX);
        assert_eq!(many.failures(), 200);
        many.failures = u32::MAX;
        many.failed();
        assert_eq!(many.failures(), u32::MAX, "the count saturates too");
    }

    #[test]
    fn a_first_delay_above_the_cap_is_the_cap() {
        let mut backoff = Backoff::new(ms(10_000), ms(5_000));
        assert_eq!(delays(&mut backoff, 2), [5_000, 5_000]);
        backoff.succeeded();
        assert_eq!(backoff.next_delay(), ms(5_000));
    }
}
