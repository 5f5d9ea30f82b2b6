//! How long the person has left the terminal alone, as the last snapshot
//! said it: what a parked call that starts a turn without terminal input
//! is fenced on, as a compare-and-send is by the PTY host.
//!
//! A wake or a queued turn writes no byte, so no host can refuse it; the
//! machine judges the same rule itself. A key the host counted may not be
//! drawn yet (the composer still reads empty), and an Esc Esc that opens a
//! harness's rewind menu draws nothing for a moment: a turn started then
//! swallows the keys or gives them another meaning, and a person who just
//! closed a dialog with Esc may press Esc again a moment later. So a
//! parked call is claimed for only once no person's input reached the
//! terminal for the turn quiet (`Pacing::turn_quiet`: the adapter kit's
//! `TURN_QUIET`, or the declaration's `quiet-input` where longer), and
//! answered only once a snapshot asked for after the claim's grant still
//! says so (a key may reach the
//! terminal while the claim is out: `AdapterMachine::confirm_wakes`).
//!
//! The snapshot says when input last came (`terminal.inputAtMs`) and the
//! host's clock when its reply was built (`clockMs`, at or after the
//! revision's last change): the quiet it shows is a lower bound, and it
//! goes on growing on the machine's clock for as long as nothing moves (a
//! move makes the machine read the screen again before anything is
//! claimed). A host builds the reply of a revision once and answers every
//! later read of it with the same line, its clock of then: read again, the
//! same last input keeps the moment first worked out, or a screen that
//! never moves would show the person ever as recent as at the first read
//! (on a real harness a wake was withheld every 250 ms for seconds).

use std::time::Duration;

use crate::core::time::Time;
use crate::pty::wire::Snapshot;

/// What the last snapshot said of the person's input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PersonQuiet {
    /// Nothing said it yet, or the snapshot gave no clock to judge by:
    /// never quiet enough.
    #[default]
    Unknown,
    /// No person's input has reached this terminal.
    Untouched,
    /// Quiet since this moment on the machine's clock, at the latest: the
    /// input the host stamped `input_at_ms`.
    Since { since: Time, input_at_ms: u64 },
}

impl PersonQuiet {
    /// What `snapshot`, read at `read_at`, says.
    pub fn of(snapshot: &Snapshot, read_at: Time) -> PersonQuiet {
        match (snapshot.terminal.input_at_ms, snapshot.clock_ms) {
            (None, _) => PersonQuiet::Untouched,
            (Some(_), None) => PersonQuiet::Unknown,
            (Some(input), Some(clock)) => {
                let quiet_ms = clock.saturating_sub(input);
                PersonQuiet::Since {
                    since: Time::from_millis(read_at.as_millis().saturating_sub(quiet_ms)),
                    input_at_ms: input,
                }
            }
        }
    }

    /// What `snapshot`, read at `read_at`, says after `self`: the same
    /// last input read again keeps the earlier moment, the truer one.
    pub fn read_again(self, snapshot: &Snapshot, read_at: Time) -> PersonQuiet {
        match (self, PersonQuiet::of(snapshot, read_at)) {
            (
                PersonQuiet::Since {
                    since: before,
                    input_at_ms: same,
                },
                PersonQuiet::Since { since, input_at_ms },
            ) if same == input_at_ms => PersonQuiet::Since {
                since: before.min(since),
                input_at_ms,
            },
            (_, now) => now,
        }
    }

    /// For a log line: how long ago, at `now`, the person's input last
    /// came, as far as the last snapshot said.
    pub fn describe(self, now: Time) -> String {
        match self {
            PersonQuiet::Unknown => "at an unknown time".into(),
            PersonQuiet::Untouched => "never came".into(),
            PersonQuiet::Since { since, .. } => {
                format!("came {} ms ago", now.since(since).as_millis())
            }
        }
    }

    /// When to look again if the person has not been quiet for `wanted`
    /// at `now`; `None`: quiet enough now. Unknown quiet never is: it is
    /// looked at again `wanted` later (a snapshot read meanwhile may say
    /// more).
    pub fn not_before(self, wanted: Duration, now: Time) -> Option<Time> {
        if crate::mutation::planted(crate::mutation::Mutation::WakeSkipsQuiet) {
            return None;
        }
        let at = match self {
            PersonQuiet::Untouched => return None,
            PersonQuiet::Unknown => now.saturating_add(wanted),
            PersonQuiet::Since { since, .. } => since.saturating_add(wanted),
        };
        (at > now).then_some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::screen::testing;

    fn snapshot(input_at_ms: Option<u64>, clock_ms: Option<u64>) -> Snapshot {
        let mut snapshot = testing::snapshot(20, &["", ">"], Vec::new(), Some((1, 2)));
        snapshot.terminal.input_at_ms = input_at_ms;
        snapshot.clock_ms = clock_ms;
        snapshot
    }

    const QUIET: Duration = Duration::from_millis(300);

    #[test]
    fn the_quiet_a_snapshot_shows_goes_on_growing_until_something_moves() {
        let read_at = Time::from_millis(10_000);
        // The key came 100 ms before the reply was built.
        let quiet = PersonQuiet::of(&snapshot(Some(5_000), Some(5_100)), read_at);
        assert_eq!(
            quiet,
            PersonQuiet::Since {
                since: Time::from_millis(9_900),
                input_at_ms: 5_000
            }
        );
        assert_eq!(
            quiet.not_before(QUIET, read_at),
            Some(Time::from_millis(10_200))
        );
        assert_eq!(quiet.not_before(QUIET, Time::from_millis(10_200)), None);
    }

    /// The host answers a revision read again with the reply it built
    /// the first time: the quiet it showed then still grows.
    #[test]
    fn the_same_reply_read_again_keeps_the_quiet_it_showed_first() {
        let cached = snapshot(Some(5_000), Some(5_122));
        let first = PersonQuiet::of(&cached, Time::from_millis(10_000));
        let again = first.read_again(&cached, Time::from_millis(10_800));
        assert_eq!(again, first);
        assert_eq!(again.not_before(QUIET, Time::from_millis(10_800)), None);
        // A new key is a new moment, however the old one was read.
        let typed = snapshot(Some(5_900), Some(5_950));
        assert_eq!(
            again.read_again(&typed, Time::from_millis(10_900)),
            PersonQuiet::Since {
                since: Time::from_millis(10_850),
                input_at_ms: 5_900
            }
        );
    }

    #[test]
    fn no_input_is_quiet_and_input_without_a_clock_never_is() {
        let now = Time::from_millis(5);
        let untouched = PersonQuiet::of(&snapshot(None, None), now);
        assert_eq!(untouched.not_before(QUIET, now), None);
        let unknown = PersonQuiet::of(&snapshot(Some(1), None), now);
        assert_eq!(unknown, PersonQuiet::Unknown);
        let later = Time::from_millis(1_000_000);
        assert_eq!(unknown.not_before(QUIET, later), Some(later + QUIET));
        assert_eq!(PersonQuiet::default(), PersonQuiet::Unknown);
    }
}
