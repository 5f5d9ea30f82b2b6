//! A new incarnation's first idle screen is not yet idle evidence.
//!
//! Harnesses draw dialogs in their first seconds after an empty composer
//! was already on screen: a trust question, a review of hooks, a notice.
//! A screen read then shows the harness idle and ready, and whatever is
//! typed or woken on it meets the dialog a moment later (a Return that
//! trusts a folder, opens a hooks browser, or exits). So once the terminal
//! is new, an idle reading counts only after the screen has read idle for
//! the provider's `startup_settle` without a break; any other reading
//! meanwhile (the dialog) starts the wait again at the next idle one. Once
//! it has passed, the incarnation is settled until the terminal changes.

use std::time::Duration;

use crate::core::time::Time;

/// Where the terminal is in its first seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Startup {
    /// New: no idle reading yet, or the last reading was not idle.
    #[default]
    New,
    /// Idle readings without a break since this moment.
    IdleSince(Time),
    /// It read idle for the whole settle time: nothing more to wait for.
    Settled,
}

impl Startup {
    /// One reading, `idle` or not, at `now`: whether it may count as idle
    /// evidence (`false` while the terminal is still settling).
    pub fn observe(&mut self, idle: bool, settle: Duration, now: Time) -> bool {
        *self = match (*self, idle) {
            (Startup::Settled, _) => Startup::Settled,
            (_, false) => Startup::New,
            (Startup::New, true) if settle.is_zero() => Startup::Settled,
            (Startup::New, true) => Startup::IdleSince(now),
            (Startup::IdleSince(since), true) if now >= since.saturating_add(settle) => {
                Startup::Settled
            }
            (idle_since @ Startup::IdleSince(_), true) => idle_since,
        };
        *self == Startup::Settled
    }

    /// When an idle screen will have settled, if the terminal is waiting
    /// for that: the screen is to be read again then.
    pub fn settles_at(self, settle: Duration) -> Option<Time> {
        match self {
            Startup::IdleSince(since) => Some(since.saturating_add(settle)),
            Startup::New | Startup::Settled => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTLE: Duration = Duration::from_millis(1_500);

    fn at(millis: u64) -> Time {
        Time::from_millis(millis)
    }

    #[test]
    fn an_idle_screen_counts_once_it_stayed_idle_for_the_settle_time() {
        let mut startup = Startup::default();
        assert!(
            !startup.observe(true, SETTLE, at(600)),
            "the first composer frame"
        );
        assert_eq!(startup.settles_at(SETTLE), Some(at(2_100)));
        assert!(!startup.observe(true, SETTLE, at(2_099)));
        assert!(startup.observe(true, SETTLE, at(2_100)));
        // Settled for the rest of the incarnation: a dialog later is the
        // screen's own evidence.
        assert!(startup.observe(false, SETTLE, at(3_000)));
        assert!(startup.observe(true, SETTLE, at(3_001)));
        assert_eq!(startup.settles_at(SETTLE), None);
    }

    #[test]
    fn a_dialog_in_the_first_seconds_starts_the_wait_again() {
        let mut startup = Startup::default();
        assert!(!startup.observe(true, SETTLE, at(600)));
        // The hooks review modal, 230 ms after the composer.
        assert!(!startup.observe(false, SETTLE, at(830)));
        assert_eq!(startup.settles_at(SETTLE), None);
        // Answered: the composer again, and a fresh wait from it.
        assert!(!startup.observe(true, SETTLE, at(5_000)));
        assert!(!startup.observe(true, SETTLE, at(6_000)));
        assert!(startup.observe(true, SETTLE, at(6_500)));
    }

    #[test]
    fn without_a_settle_time_the_first_idle_screen_counts() {
        let mut startup = Startup::default();
        assert!(!startup.observe(false, Duration::ZERO, at(1)));
        assert!(startup.observe(true, Duration::ZERO, at(2)));
    }
}
