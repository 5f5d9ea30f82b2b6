//! The process shells' clock: the one place the adapter room reads the
//! monotonic clock, turned into the machines' [`Time`] (milliseconds since
//! the shell started). Decisions never read it; shells stamp inputs with
//! it and sleep until the deadlines the machines name.

use std::time::{Duration, Instant};

use crate::core::time::Time;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    started: Instant,
}

impl Clock {
    /// A clock whose [`Time::ZERO`] is now.
    pub fn start() -> Clock {
        Clock {
            started: Instant::now(),
        }
    }

    /// The time now.
    pub fn now(&self) -> Time {
        Time::from_millis(u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// How long until `at` (zero if it has come). Measured against the
    /// clock itself, not [`Clock::now`]'s whole milliseconds, so a shell
    /// that sleeps this long wakes at or after `at`, never a moment early.
    pub fn until(&self, at: Time) -> Duration {
        (self.started + Duration::from_millis(at.as_millis()))
            .saturating_duration_since(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_starts_at_zero_and_a_deadline_passed_is_no_wait() {
        let clock = Clock::start();
        assert!(clock.now() < Time::from_millis(60_000));
        assert_eq!(clock.until(Time::ZERO), Duration::ZERO);
        assert!(clock.until(clock.now() + Duration::from_secs(60)) > Duration::from_secs(50));
    }
}
