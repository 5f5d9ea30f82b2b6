//! A person's keys keep their spacing.
//!
//! Keys that had to wait (held behind a typed notice's paste, queued
//! behind a transaction or a withdraw) would otherwise reach the program in
//! one burst. Programs read a burst differently from typing: some take a
//! Return that comes within a few tens of milliseconds of the key before it
//! (30 to 40 ms in the programs measured) for a newline inside a paste, so
//! a person's text and Return, written back to back, would leave their line
//! unsent. So a person's keys reach the terminal no closer to the person's
//! previous keys than they came, up to [`KEY_SPACING_CAP`]: a person who
//! paused longer gets that much, and the lag a wait caused is made up at
//! their next pause. DING's own bytes are not paced.

use std::time::Duration;

use crate::core::time::Time;

/// The longest a person's key is kept back to keep its distance from the
/// person's previous key: well above the burst windows of the programs
/// measured, and short enough that a held line goes on at a person's pace.
pub const KEY_SPACING_CAP: Duration = Duration::from_millis(100);

/// Keys that came closer together than this were one burst (a paste, a
/// held-down key, a terminal's escape sequence split in two): they go on
/// as they came, unpaced.
pub const KEY_BURST: Duration = Duration::from_millis(10);

/// How much less than the gap they came with paced keys get: a timer
/// wakes a little late, and without this the lag a wait caused would grow
/// by that much with every paced key instead of shrinking.
pub const TIMER_SLACK: Duration = Duration::from_millis(2);

/// The pacing's timings, in one value: [`KeyPacing::PERSON`] is the
/// host's. (The simulation's planted defect that bunches waiting keys sets
/// a cap of zero.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPacing {
    pub cap: Duration,
    pub burst: Duration,
    pub slack: Duration,
}

impl KeyPacing {
    /// A person's keys keep the gap they came with, up to the cap.
    pub const PERSON: KeyPacing = KeyPacing {
        cap: KEY_SPACING_CAP,
        burst: KEY_BURST,
        slack: TIMER_SLACK,
    };
}

impl Default for KeyPacing {
    fn default() -> KeyPacing {
        KeyPacing::PERSON
    }
}

/// When the person's last keys came and when they reached the terminal.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct KeySpacing {
    last: Option<(Time, Time)>,
}

impl KeySpacing {
    /// When keys that came `arrived` may be written: no sooner after the
    /// last keys were written than they came after those (up to the cap,
    /// less the timer's slack); `None`: at once.
    pub(super) fn due(&self, arrived: Time, pacing: KeyPacing) -> Option<Time> {
        let (came, written) = self.last?;
        let ms = |span: Duration| u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
        let gap = arrived.as_millis().saturating_sub(came.as_millis());
        (gap >= ms(pacing.burst)).then(|| {
            Time::from_millis(
                (written.as_millis() + gap.min(ms(pacing.cap))).saturating_sub(ms(pacing.slack)),
            )
        })
    }

    /// Keys that came `arrived` were written `now`.
    pub(super) fn wrote(&mut self, arrived: Time, now: Time) {
        self.last = Some((arrived, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn at(n: u64) -> Time {
        Time::from_millis(n)
    }

    #[test]
    fn keys_that_waited_keep_the_gap_they_came_with_up_to_the_cap() {
        let pacing = KeyPacing::PERSON;
        let mut spacing = KeySpacing::default();
        assert_eq!(spacing.due(at(0), pacing), None, "no keys before: at once");
        // Text came at 0 and was held until 500; the Return came at 70.
        spacing.wrote(at(0), at(500));
        assert_eq!(spacing.due(at(70), pacing), Some(at(568)));
        // A key that came long after goes no later than the cap.
        assert_eq!(spacing.due(at(5_000), pacing), Some(at(598)));
        // A burst goes on as it came.
        assert_eq!(spacing.due(at(9), pacing), None);
        // Written on time, typing goes on as it comes: the due moment is
        // the key's own arrival or before.
        spacing.wrote(at(1_000), at(1_000));
        assert!(
            spacing
                .due(at(1_040), pacing)
                .is_some_and(|due| due <= at(1_040))
        );
    }

    #[test]
    fn the_pacing_timings_keep_their_orderings() {
        // Above the burst windows measured (30 to 40 ms), below what a
        // person notices; a burst is far shorter than a person's keys, and
        // the slack shorter still.
        assert!(KEY_SPACING_CAP > ms(40));
        assert!(KEY_SPACING_CAP < ms(250));
        assert!(KEY_BURST < ms(30));
        assert!(TIMER_SLACK < KEY_BURST);
    }
}
