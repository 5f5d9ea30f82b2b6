//! A typed notice waiting for its Return: the second phase of a fenced
//! typed delivery.
//!
//! The careful policy never writes a notice and its Return as one
//! transaction. The paste goes under the compare of a fresh idle lease;
//! the Return only under a compare of its own, on evidence read after the
//! paste was drawn (a revision newer than the paste's) that names this
//! notice as what the composer holds, exactly and alone (the activity's
//! `typed`), and under a time fence asking that no person's input reached
//! the terminal since the paste was asked for. A key the person pressed
//! after the paste, a dialog drawn over the composer, a harness that
//! dropped or changed the paste: each leaves the Return unwritten.
//! Without that confirmation by [`TypedNotice::return_by`] the Return is
//! withheld, and the notice waits in the composer for the person (spec
//! §4.2).

use std::time::Duration;

use super::fence::{QuietPart, TimeFence};
use super::lease::Lease;
use super::message::MessageName;
use super::ownership::RequestId;
use super::protocol::Composer;
use super::time::Time;

/// A notice the PTY host pasted, whose Return is not written yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypedNotice {
    /// The paste's request: the notice's name on the downlink and in the
    /// evidence, and the request its files are in flight under.
    pub notice: RequestId,
    pub messages: Vec<MessageName>,
    pub incarnation: Option<String>,
    /// When the paste was asked for: no person's input since then may
    /// come before the Return.
    pub asked_at: Time,
    /// The revision right after the paste: confirming evidence is newer.
    pub pasted_revision: u64,
    /// No Return is asked for at or after this time.
    pub return_by: Time,
    /// No Return before this time (the submit delay: real TUIs take an
    /// Enter right after a paste as a newline).
    pub submit_after: Time,
}

impl TypedNotice {
    /// The revision to fence the Return on, if `lease` confirms this
    /// notice: idle evidence, read after the paste was drawn, that the
    /// composer holds exactly this notice and nothing else.
    pub fn confirmed_by(&self, lease: &Lease) -> Option<u64> {
        let revision = lease.revision?;
        (lease.typed == Some(self.notice)
            && lease.composer != Composer::Empty
            && revision > self.pasted_revision)
            .then_some(revision)
    }

    /// The Return's time fence at `now`: the terminal's usual quiet, and no
    /// person's input at all since the paste was asked for.
    pub fn return_fence(&self, usual: TimeFence, now: Time) -> TimeFence {
        TimeFence {
            quiet_input: usual.quiet_input.max(now.since(self.asked_at)),
            settled_output: usual.settled_output,
        }
    }

    /// Whether a time-fence refusal of the Return asked at `asked` says
    /// that a person typed after the paste was asked for: then what the
    /// composer holds is no longer DING's alone. (The Return's fence asks
    /// for quiet since then, so any other refusal is of the usual quiet.)
    pub fn typed_over(&self, part: QuietPart, quiet_for: Duration, asked: Time) -> bool {
        part == QuietPart::Input && quiet_for < asked.since(self.asked_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::identity::Identity;

    fn notice() -> TypedNotice {
        TypedNotice {
            notice: 7,
            messages: vec![MessageName::new("a.md").unwrap()],
            incarnation: Some("i-1".into()),
            asked_at: Time::from_millis(1_000),
            pasted_revision: 40,
            return_by: Time::from_millis(6_000),
            submit_after: Time::from_millis(1_210),
        }
    }

    fn lease(typed: Option<u64>, composer: Composer, revision: Option<u64>) -> Lease {
        Lease {
            identity: Identity {
                session: "s".into(),
                incarnation: "i-1".into(),
                generation: "g".into(),
            },
            sequence: 3,
            granted_at: Time::from_millis(1_300),
            expires_at: Time::from_millis(2_000),
            composer,
            revision,
            revision_source: None,
            withdraw: None,
            typed,
        }
    }

    #[test]
    fn only_evidence_drawn_after_the_paste_that_names_the_notice_confirms_it() {
        let typed = notice();
        assert_eq!(
            typed.confirmed_by(&lease(Some(7), Composer::Nonempty, Some(41))),
            Some(41)
        );
        // Read before the paste was drawn, or at its own revision.
        assert_eq!(
            typed.confirmed_by(&lease(Some(7), Composer::Nonempty, Some(40))),
            None
        );
        // Another notice, none, an empty composer, no revision.
        for other in [
            lease(Some(6), Composer::Nonempty, Some(41)),
            lease(None, Composer::Nonempty, Some(41)),
            lease(Some(7), Composer::Empty, Some(41)),
            lease(Some(7), Composer::Nonempty, None),
        ] {
            assert_eq!(typed.confirmed_by(&other), None, "{other:?}");
        }
    }

    #[test]
    fn the_return_asks_for_no_input_since_the_paste_was_asked_for() {
        let typed = notice();
        let usual = TimeFence {
            quiet_input: Duration::from_millis(300),
            settled_output: Duration::from_millis(250),
        };
        let soon = typed.return_fence(usual, Time::from_millis(1_100));
        assert_eq!(soon, usual);
        let later = typed.return_fence(usual, Time::from_millis(1_900));
        assert_eq!(later.quiet_input, Duration::from_millis(900));
        assert_eq!(later.settled_output, usual.settled_output);
        let asked = Time::from_millis(1_900);
        assert!(typed.typed_over(QuietPart::Input, Duration::from_millis(200), asked));
        assert!(!typed.typed_over(QuietPart::Output, Duration::from_millis(200), asked));
        assert!(!typed.typed_over(QuietPart::Input, Duration::from_millis(950), asked));
    }
}
