//! Hold reasons: why unread work is not being typed into the terminal now.
//!
//! "Why didn't my agent get the message?" must always have an answer, so a
//! hold is never a boolean or a free-form string: it is one of these variants,
//! each with a stable kebab-case `code` for machines and a sentence for people.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::fence::QuietPart;
use super::identity::IdentityPart;
use super::protocol::{ActivityState, Lifecycle, ProtocolError};

/// Why the adapter process is not running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum AdapterDown {
    /// Its stdout reached end of file.
    Eof,
    /// It exited; `status` is the runtime's description (code or signal).
    Exited { status: String },
    /// It could not be started.
    SpawnFailed { error: String },
}

/// Why pending work is held. Every non-qualifying state is one variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum HoldReason {
    /// The adapter was asked to start and has not been confirmed running.
    AdapterStarting,
    /// The adapter is not running; it will be respawned with backoff.
    AdapterDown { down: AdapterDown },
    /// The adapter sent nothing for longer than the silence timeout.
    AdapterSilent,
    /// The adapter is up but has not yet sent activity evidence.
    NoEvidence,
    /// The last evidence said the harness is not idle.
    NotIdle { state: ActivityState },
    /// The last idle evidence said the composer has text in it.
    ComposerNonempty,
    /// The last idle evidence could not vouch for an empty composer.
    ComposerUnknown,
    /// The last idle lease ran out.
    LeaseExpired,
    /// The last lease was spent on a transaction; a new idle is needed.
    LeaseSpent,
    /// A line from the adapter was invalid.
    Protocol { error: ProtocolError },
    /// An adapter event named a different terminal identity.
    IdentityMismatch { part: IdentityPart },
    /// The harness reported a lifecycle fact that ends any lease.
    Lifecycle { event: Lifecycle },
    /// A turn boundary is in progress (hooks own next-context delivery).
    TurnBoundary,
    /// The PTY host refused the transaction because the terminal moved.
    RevisionConflict { expected: u64, actual: u64 },
    /// The PTY host refused the transaction because a person's input or the
    /// program's output was too recent (the time fence): zero bytes. The
    /// engine tries the same evidence again when the host says it would pass.
    #[serde(rename_all = "camelCase")]
    TerminalUnsettled { part: QuietPart, quiet_for_ms: u64 },
    /// A person's input reached the terminal while DING's transaction ran:
    /// the host stopped it after `written` bytes, before any Return.
    TypingInterrupted { written: usize },
    /// DING's notice is in the composer; its Return waits for evidence
    /// read after the paste was drawn that the composer holds exactly the
    /// notice (and for the terminal to be quiet).
    AwaitingReturn,
    /// No Return was written for a typed notice: `why`. The notice sits in
    /// the composer, unsent.
    ReturnWithheld { why: String },
    /// A person's input came before a typed notice's Return, and the PTY
    /// host took the notice back out of the composer first: the files are
    /// pending again, for a new lease.
    NoticeWithdrawn,
    /// The PTY host cannot be reached.
    PtyUnreachable,
    /// The PTY host's identity has not been learned yet.
    PtyUnknown,
    /// Neither the evidence nor the PTY host gave a revision to fence on.
    RevisionUnknown,
    /// The PTY host answered a transaction with an error (zero bytes
    /// written, or a reply that never came); the engine retries after a
    /// backoff.
    PtyError { detail: String },
    /// The harness process has exited; nothing is typed until the PTY host
    /// starts it again (a new incarnation).
    HarnessExited { status: String },
    /// A transaction is in flight; its reply decides what happens next.
    AwaitingReply,
    /// Files are still arriving: they are gathered into one delivery until
    /// none came for `gather-quiet`, or `gather-cap` after the first.
    Gathering,
    /// The sidecar is stopping (SIGTERM): nothing new is typed; the work
    /// waits on disk for its next start.
    Stopping,
}

/// Where the evidence behind a hold came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldSource {
    Adapter,
    Pty,
    Engine,
}

impl HoldReason {
    /// Who reported the fact that holds the work.
    pub fn source(&self) -> HoldSource {
        match self {
            HoldReason::AdapterStarting
            | HoldReason::AdapterDown { .. }
            | HoldReason::AdapterSilent
            | HoldReason::NoEvidence
            | HoldReason::NotIdle { .. }
            | HoldReason::ComposerNonempty
            | HoldReason::ComposerUnknown
            | HoldReason::Protocol { .. }
            | HoldReason::IdentityMismatch { .. }
            | HoldReason::Lifecycle { .. }
            | HoldReason::TurnBoundary => HoldSource::Adapter,
            HoldReason::RevisionConflict { .. }
            | HoldReason::TerminalUnsettled { .. }
            | HoldReason::TypingInterrupted { .. }
            | HoldReason::ReturnWithheld { .. }
            | HoldReason::NoticeWithdrawn
            | HoldReason::PtyUnreachable
            | HoldReason::PtyUnknown
            | HoldReason::RevisionUnknown
            | HoldReason::PtyError { .. }
            | HoldReason::HarnessExited { .. }
            | HoldReason::AwaitingReply => HoldSource::Pty,
            HoldReason::LeaseExpired
            | HoldReason::LeaseSpent
            | HoldReason::AwaitingReturn
            | HoldReason::Gathering
            | HoldReason::Stopping => HoldSource::Engine,
        }
    }

    /// The stable machine code, such as `composer-nonempty`.
    pub fn code(&self) -> &'static str {
        match self {
            HoldReason::AdapterStarting => "adapter-starting",
            HoldReason::AdapterDown { .. } => "adapter-down",
            HoldReason::AdapterSilent => "adapter-silent",
            HoldReason::NoEvidence => "no-evidence",
            HoldReason::NotIdle { .. } => "not-idle",
            HoldReason::ComposerNonempty => "composer-nonempty",
            HoldReason::ComposerUnknown => "composer-unknown",
            HoldReason::LeaseExpired => "lease-expired",
            HoldReason::LeaseSpent => "lease-spent",
            HoldReason::Protocol { .. } => "protocol",
            HoldReason::IdentityMismatch { .. } => "identity-mismatch",
            HoldReason::Lifecycle { .. } => "lifecycle",
            HoldReason::TurnBoundary => "turn-boundary",
            HoldReason::RevisionConflict { .. } => "revision-conflict",
            HoldReason::TerminalUnsettled { .. } => "terminal-unsettled",
            HoldReason::TypingInterrupted { .. } => "typing-interrupted",
            HoldReason::AwaitingReturn => "awaiting-return",
            HoldReason::ReturnWithheld { .. } => "return-withheld",
            HoldReason::NoticeWithdrawn => "notice-withdrawn",
            HoldReason::PtyUnreachable => "pty-unreachable",
            HoldReason::PtyUnknown => "pty-unknown",
            HoldReason::RevisionUnknown => "revision-unknown",
            HoldReason::PtyError { .. } => "pty-error",
            HoldReason::HarnessExited { .. } => "harness-exited",
            HoldReason::AwaitingReply => "awaiting-reply",
            HoldReason::Gathering => "gathering",
            HoldReason::Stopping => "stopping",
        }
    }
}

/// What a hold means and what a person can do about it: one row per code,
/// shown by `ding status` under held messages and printed as the table of
/// `docs/operating.md` (a test keeps the two equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HoldAdvice {
    pub code: &'static str,
    pub meaning: &'static str,
    pub what_to_do: &'static str,
}

const fn advice(code: &'static str, meaning: &'static str, what_to_do: &'static str) -> HoldAdvice {
    HoldAdvice {
        code,
        meaning,
        what_to_do,
    }
}

/// Every hold code's advice, in the order of the spec's list (§5).
pub const ADVICE: &[HoldAdvice] = &[
    advice(
        "adapter-starting",
        "The adapter was started and is not confirmed running yet.",
        "Wait a moment. If it stays, `ding logs NAME` shows the adapter's start.",
    ),
    advice(
        "adapter-down",
        "The adapter is not running (it exited, closed its output, or could not be started). DING starts it again with a backoff and types nothing meanwhile.",
        "Read the cause in `ding status NAME` and the adapter's stderr in `ding logs NAME`; fix its `adapter { command }` (is `$ST_HOOKS` set?).",
    ),
    advice(
        "adapter-silent",
        "The adapter owed a reading for `adapter-silence` and gave none: work waited and it had not spoken since, its ready evidence went unrenewed, or the terminal moved past what it last read.",
        "Check that the adapter still watches the screen (`ding logs NAME`); raise `adapter-silence` if it reports rarely by design.",
    ),
    advice(
        "no-evidence",
        "The adapter runs but has not yet said whether the harness is idle.",
        "Wait for its first report; if none comes, the adapter is not working (`ding logs NAME`).",
    ),
    advice(
        "not-idle",
        "The adapter's latest report says the harness is busy (a turn, a child command) or in a state it cannot read (a dialog, a menu).",
        "Nothing: delivery follows when it reports idle. If the harness waits on a dialog, answer it (`ding attach NAME`).",
    ),
    advice(
        "composer-nonempty",
        "The harness is idle, but its composer holds a draft: typing the notice would glue it onto that text.",
        "Send or clear the draft (`ding attach NAME`); delivery follows.",
    ),
    advice(
        "composer-unknown",
        "The harness is idle, but the adapter cannot tell whether the composer is empty.",
        "Clear the composer if it holds text; an adapter that can never tell needs fixing.",
    ),
    advice(
        "lease-expired",
        "The latest idle report is older than its validity (at most `lease-cap`).",
        "Nothing: the adapter's next report renews it. If this persists, the adapter reports too rarely.",
    ),
    advice(
        "lease-spent",
        "The latest idle report was used for one delivery attempt; each attempt needs a fresh one.",
        "Nothing: the next idle report allows the next attempt.",
    ),
    advice(
        "protocol",
        "The adapter wrote a line that is not valid protocol v1, which ends any lease.",
        "Read the error in `ding status NAME` and `ding logs NAME`, and fix the adapter.",
    ),
    advice(
        "identity-mismatch",
        "The adapter's report names another terminal (session, incarnation or generation) than the PTY host's current one, usually right after a restart.",
        "Nothing if it passes at once; otherwise the adapter must stamp its lines with the identity of the latest `pty` downlink line.",
    ),
    advice(
        "lifecycle",
        "The harness's context was compacted, cleared or lost, which ends any lease.",
        "Nothing: the next idle report allows delivery again.",
    ),
    advice(
        "turn-boundary",
        "A hook is putting unread work into the harness's next context, so the terminal is left alone meanwhile.",
        "Nothing: the hook owns those files; the others ring after the next idle report.",
    ),
    advice(
        "revision-conflict",
        "Something reached the terminal (a keystroke, output, a resize) after the adapter looked, so the compare-and-send wrote nothing.",
        "Nothing: the next fresh idle report tries again. If it repeats, someone is typing or the harness keeps redrawing.",
    ),
    advice(
        "terminal-unsettled",
        "The screen the adapter judged had not been still long enough: a person typed within `quiet-input`, or the harness drew within `settled-output`, so a key or a dialog may not be on it yet. Nothing was written.",
        "Nothing: DING tries the same evidence again once the terminal has been quiet that long. If it repeats, the harness keeps redrawing (see `settled-output` in docs/declaration.md).",
    ),
    advice(
        "typing-interrupted",
        "A person typed while DING's delivery was being written; the PTY host stopped it before its Return, so part or all of the notice may sit in the composer, unsent.",
        "Send or clear what the composer holds (`ding attach NAME`): cleared, the files are pending again once the adapter sees the composer empty with no turn between; sent, the model has them.",
    ),
    advice(
        "awaiting-return",
        "DING pasted its notice into the composer and presses Return only once a screen read after the paste shows the composer holding exactly the notice, with the person and the screen quiet.",
        "Nothing: this lasts a fraction of a second. Typing now stops the Return; the notice then stays in the composer for you to send or clear.",
    ),
    advice(
        "return-withheld",
        "DING pasted its notice but wrote no Return: a person typed after the paste, or no screen showed the notice alone in the composer in time (a dialog, a redraw that never settled, text the adapter cannot read). The notice sits in the composer, unsent.",
        "Send or clear what the composer holds (`ding attach NAME`): cleared, the files are pending again once the adapter sees the composer empty with no turn between; sent, the model has them.",
    ),
    advice(
        "notice-withdrawn",
        "A person typed after DING pasted its notice and before its Return, so the PTY host took the notice back out of the composer (with the adapter's withdraw keys) before their keys went on. Nothing was sent; the files are pending again.",
        "Nothing: the notice is typed again once the composer is empty and idle, or goes with the person's next turn through a hook.",
    ),
    advice(
        "pty-unreachable",
        "The PTY host does not answer on its socket.",
        "`ding status NAME` shows whether it died; `ding up FILE` starts it again.",
    ),
    advice(
        "pty-unknown",
        "The sidecar has not learned the PTY host's identity yet (it just started, or is reconnecting).",
        "Wait a moment; if it stays, check the PTY host (`ding status NAME`, `ding logs NAME`).",
    ),
    advice(
        "revision-unknown",
        "Idle evidence came without the terminal revision it was observed at, so no delivery can be fenced on it.",
        "Fix the adapter to send `revision` (`unsafe-receipt-fence #true` exists for adapters that cannot, at a cost: see docs/declaration.md).",
    ),
    advice(
        "pty-error",
        "The PTY host refused the transaction (busy, or an error) and wrote nothing; DING tries again after a backoff.",
        "Read the detail in `ding status NAME`; look at `ding logs NAME` if it repeats.",
    ),
    advice(
        "harness-exited",
        "The harness process has ended; nothing is typed until it is started again.",
        "See how it ended in `ding status NAME`, then `ding restart NAME` (or `ding up FILE`).",
    ),
    advice(
        "awaiting-reply",
        "A delivery is in flight; its reply decides what happens next.",
        "Nothing: it lasts at most the reply timeout (5 s).",
    ),
    advice(
        "gathering",
        "Files are still arriving, so DING waits until none came for `gather-quiet` (1 s by default, at most `gather-cap` after the first) and delivers them together, for one model call instead of one each.",
        "Nothing: delivery follows within `gather-cap` (3 s by default). Set `gather-quiet \"0s\"` to deliver each file at once.",
    ),
    advice(
        "stopping",
        "The sidecar was asked to stop (SIGTERM, `ding down`): it finishes the delivery in flight and types nothing new; the work waits on disk.",
        "Nothing, if the stop was meant: `ding up` delivers it. Otherwise see what stopped it (`ding logs NAME`).",
    ),
];

impl HoldAdvice {
    /// The advice for `code`, if it is a hold code.
    pub fn of(code: &str) -> Option<&'static HoldAdvice> {
        ADVICE.iter().find(|advice| advice.code == code)
    }
}

impl fmt::Display for HoldSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HoldSource::Adapter => "adapter",
            HoldSource::Pty => "pty",
            HoldSource::Engine => "engine",
        })
    }
}

impl fmt::Display for HoldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoldReason::AdapterStarting => f.write_str("adapter starting"),
            HoldReason::AdapterDown { down } => match down {
                AdapterDown::Eof => f.write_str("adapter down (end of output)"),
                AdapterDown::Exited { status } => write!(f, "adapter down (exited: {status})"),
                AdapterDown::SpawnFailed { error } => {
                    write!(f, "adapter down (spawn failed: {error})")
                }
            },
            HoldReason::AdapterSilent => f.write_str("adapter silent"),
            HoldReason::NoEvidence => f.write_str("no activity evidence yet"),
            HoldReason::NotIdle { state } => match state {
                ActivityState::Idle => f.write_str("idle"),
                ActivityState::Active => f.write_str("harness active"),
                ActivityState::Child => f.write_str("child command running"),
                ActivityState::Unknown => f.write_str("activity unknown"),
            },
            HoldReason::ComposerNonempty => f.write_str("composer nonempty"),
            HoldReason::ComposerUnknown => f.write_str("composer unknown"),
            HoldReason::LeaseExpired => f.write_str("idle lease expired"),
            HoldReason::LeaseSpent => f.write_str("idle lease spent; awaiting a new one"),
            HoldReason::Protocol { error } => write!(f, "invalid adapter event ({error})"),
            HoldReason::IdentityMismatch { part } => {
                write!(f, "adapter {part} does not match the terminal")
            }
            HoldReason::Lifecycle { event } => match event {
                Lifecycle::Compaction => f.write_str("context compaction"),
                Lifecycle::Clear => f.write_str("context cleared"),
                Lifecycle::Crash => f.write_str("harness crashed"),
            },
            HoldReason::TurnBoundary => f.write_str("turn boundary in progress"),
            HoldReason::RevisionConflict { expected, actual } => {
                write!(f, "terminal moved (revision {expected} -> {actual})")
            }
            HoldReason::TerminalUnsettled { part, quiet_for_ms } => match part {
                QuietPart::Input => write!(f, "a person typed {quiet_for_ms} ms ago"),
                QuietPart::Output => write!(f, "the screen was drawn {quiet_for_ms} ms ago"),
            },
            HoldReason::TypingInterrupted { written } => {
                write!(
                    f,
                    "a person typed during delivery ({written} bytes written, no Return)"
                )
            }
            HoldReason::AwaitingReturn => {
                f.write_str("notice typed; its Return waits for the composer to show it")
            }
            HoldReason::ReturnWithheld { why } => write!(f, "no Return written: {why}"),
            HoldReason::NoticeWithdrawn => {
                f.write_str("a person typed before the Return; the notice was taken back out")
            }
            HoldReason::PtyUnreachable => f.write_str("pty unreachable"),
            HoldReason::PtyUnknown => f.write_str("pty identity not known yet"),
            HoldReason::RevisionUnknown => {
                f.write_str("idle evidence without a pty revision to fence on")
            }
            HoldReason::PtyError { detail } => write!(f, "pty error ({detail})"),
            HoldReason::HarnessExited { status } => write!(f, "harness exited ({status})"),
            HoldReason::AwaitingReply => f.write_str("awaiting pty reply"),
            HoldReason::Gathering => f.write_str("gathering arrivals into one delivery"),
            HoldReason::Stopping => f.write_str("the sidecar is stopping"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each variant. The exhaustive match in `ordinal` stops this
    /// module compiling when a variant is added, until it is listed here.
    fn every_variant() -> Vec<HoldReason> {
        vec![
            HoldReason::AdapterStarting,
            HoldReason::AdapterDown {
                down: AdapterDown::Eof,
            },
            HoldReason::AdapterSilent,
            HoldReason::NoEvidence,
            HoldReason::NotIdle {
                state: ActivityState::Active,
            },
            HoldReason::ComposerNonempty,
            HoldReason::ComposerUnknown,
            HoldReason::LeaseExpired,
            HoldReason::LeaseSpent,
            HoldReason::Protocol {
                error: ProtocolError::InvalidUtf8 { at: 0 },
            },
            HoldReason::IdentityMismatch {
                part: IdentityPart::Incarnation,
            },
            HoldReason::Lifecycle {
                event: Lifecycle::Clear,
            },
            HoldReason::TurnBoundary,
            HoldReason::RevisionConflict {
                expected: 1,
                actual: 2,
            },
            HoldReason::TerminalUnsettled {
                part: QuietPart::Input,
                quiet_for_ms: 40,
            },
            HoldReason::TypingInterrupted { written: 30 },
            HoldReason::AwaitingReturn,
            HoldReason::ReturnWithheld { why: "x".into() },
            HoldReason::NoticeWithdrawn,
            HoldReason::PtyUnreachable,
            HoldReason::PtyUnknown,
            HoldReason::RevisionUnknown,
            HoldReason::PtyError { detail: "x".into() },
            HoldReason::HarnessExited {
                status: "exit code 3".into(),
            },
            HoldReason::AwaitingReply,
            HoldReason::Gathering,
            HoldReason::Stopping,
        ]
    }

    fn ordinal(reason: &HoldReason) -> usize {
        match reason {
            HoldReason::AdapterStarting => 0,
            HoldReason::AdapterDown { .. } => 1,
            HoldReason::AdapterSilent => 2,
            HoldReason::NoEvidence => 3,
            HoldReason::NotIdle { .. } => 4,
            HoldReason::ComposerNonempty => 5,
            HoldReason::ComposerUnknown => 6,
            HoldReason::LeaseExpired => 7,
            HoldReason::LeaseSpent => 8,
            HoldReason::Protocol { .. } => 9,
            HoldReason::IdentityMismatch { .. } => 10,
            HoldReason::Lifecycle { .. } => 11,
            HoldReason::TurnBoundary => 12,
            HoldReason::RevisionConflict { .. } => 13,
            HoldReason::TerminalUnsettled { .. } => 14,
            HoldReason::TypingInterrupted { .. } => 15,
            HoldReason::AwaitingReturn => 16,
            HoldReason::ReturnWithheld { .. } => 17,
            HoldReason::NoticeWithdrawn => 18,
            HoldReason::PtyUnreachable => 19,
            HoldReason::PtyUnknown => 20,
            HoldReason::RevisionUnknown => 21,
            HoldReason::PtyError { .. } => 22,
            HoldReason::HarnessExited { .. } => 23,
            HoldReason::AwaitingReply => 24,
            HoldReason::Gathering => 25,
            HoldReason::Stopping => 26,
        }
    }

    /// Every hold code, one per variant, in the order of [`ADVICE`].
    pub fn every_code() -> Vec<&'static str> {
        every_variant().iter().map(HoldReason::code).collect()
    }

    /// `ding status` reads holds back from the sidecar's JSON: each
    /// variant reads back as written, under the code [`HoldReason::code`]
    /// names.
    #[test]
    fn every_hold_reason_reads_back_as_written() {
        for reason in every_variant() {
            let json = serde_json::to_value(&reason).expect("serializes");
            assert_eq!(json["code"], reason.code(), "{json}");
            let read: HoldReason = serde_json::from_value(json.clone()).expect("reads back");
            assert_eq!(read, reason, "{json}");
        }
    }

    #[test]
    fn every_hold_code_has_advice_in_order() {
        let ordinals: Vec<usize> = every_variant().iter().map(ordinal).collect();
        assert_eq!(ordinals, (0..27).collect::<Vec<_>>(), "one of each variant");
        let advised: Vec<&str> = ADVICE.iter().map(|advice| advice.code).collect();
        assert_eq!(advised, every_code());
        for advice in ADVICE {
            assert!(advice.meaning.ends_with('.') && advice.what_to_do.ends_with('.'));
            assert!(!advice.meaning.contains('|') && !advice.what_to_do.contains('|'));
        }
    }
}
