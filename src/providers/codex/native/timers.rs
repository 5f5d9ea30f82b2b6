//! The native path's timers, named in one enum and kept in one table (the
//! shape of quinn-proto's `TimerTable`): [`super::QueuePath::next_deadline`]
//! reads the table, and `handle_timeout` is one `match` on each timer that
//! has come.

use crate::core::time::Time;

/// One deadline the native path may be waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// When to call the adapter again after it could not be reached.
    CallRetry,
    /// When to resume Codex's queue: a delivery of DING's still waits after
    /// the thread stayed idle this long (Esc pauses the queue silently).
    Resume,
    /// When to stop waiting to learn how a lost app-server ended, and take
    /// it that only its connection closed.
    ServerGone,
    /// When to try again to connect to an app-server started again, or to
    /// give it up once its deadline has come.
    Listen,
    /// When to offer a `launch` report again that found no adapter
    /// listening.
    TellRetry,
    /// When to stop waiting for the answers to the deletes sent as the TUI
    /// exited.
    Exit,
}

impl Timer {
    pub const ALL: [Timer; 6] = [
        Timer::CallRetry,
        Timer::Resume,
        Timer::ServerGone,
        Timer::Listen,
        Timer::TellRetry,
        Timer::Exit,
    ];

    fn slot(self) -> usize {
        self as usize
    }
}

/// When each [`Timer`] comes, if it is set.
#[derive(Clone, Debug, Default)]
pub struct TimerTable {
    at: [Option<Time>; Timer::ALL.len()],
}

impl TimerTable {
    pub fn set(&mut self, timer: Timer, at: Time) {
        self.at[timer.slot()] = Some(at);
    }

    /// Sets `timer` to `at`, or stops it for `None`.
    pub fn set_or_stop(&mut self, timer: Timer, at: Option<Time>) {
        self.at[timer.slot()] = at;
    }

    pub fn stop(&mut self, timer: Timer) {
        self.at[timer.slot()] = None;
    }

    pub fn get(&self, timer: Timer) -> Option<Time> {
        self.at[timer.slot()]
    }

    /// The earliest deadline set, if any.
    pub fn next(&self) -> Option<Time> {
        self.at.iter().flatten().min().copied()
    }

    /// Stops `timer` and says whether it had come by `now`.
    pub fn take_expired(&mut self, timer: Timer, now: Time) -> bool {
        let expired = self.get(timer).is_some_and(|at| at <= now);
        if expired {
            self.stop(timer);
        }
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_the_earliest_deadline_and_takes_only_what_came() {
        let mut table = TimerTable::default();
        assert_eq!(table.next(), None, "nothing set: no wake-up");
        table.set(Timer::Exit, Time::from_millis(900));
        table.set(Timer::CallRetry, Time::from_millis(500));
        assert_eq!(table.next(), Some(Time::from_millis(500)));
        assert!(!table.take_expired(Timer::Exit, Time::from_millis(500)));
        assert!(table.take_expired(Timer::CallRetry, Time::from_millis(500)));
        assert_eq!(table.get(Timer::CallRetry), None, "taken once");
        table.set_or_stop(Timer::Exit, None);
        assert_eq!(table.next(), None);
        for (slot, timer) in Timer::ALL.iter().enumerate() {
            assert_eq!(timer.slot(), slot, "{timer:?}");
        }
    }
}
