//! Hold reasons: why unread work is not being typed into the terminal now.
//!
//! "Why didn't my agent get the message?" must always have an answer, so a
//! hold is never a boolean or a free-form string: it is one of these variants,
//! each with a stable kebab-case `code` for machines and a sentence for people.

use std::fmt;

use serde::Serialize;

use super::identity::IdentityPart;
use super::protocol::{ActivityState, Lifecycle, ProtocolError};

/// Why the adapter process is not running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
}

/// Where the evidence behind a hold came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
            | HoldReason::PtyUnreachable
            | HoldReason::PtyUnknown
            | HoldReason::RevisionUnknown
            | HoldReason::PtyError { .. }
            | HoldReason::HarnessExited { .. }
            | HoldReason::AwaitingReply => HoldSource::Pty,
            HoldReason::LeaseExpired | HoldReason::LeaseSpent => HoldSource::Engine,
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
            HoldReason::PtyUnreachable => "pty-unreachable",
            HoldReason::PtyUnknown => "pty-unknown",
            HoldReason::RevisionUnknown => "revision-unknown",
            HoldReason::PtyError { .. } => "pty-error",
            HoldReason::HarnessExited { .. } => "harness-exited",
            HoldReason::AwaitingReply => "awaiting-reply",
        }
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
            HoldReason::PtyUnreachable => f.write_str("pty unreachable"),
            HoldReason::PtyUnknown => f.write_str("pty identity not known yet"),
            HoldReason::RevisionUnknown => {
                f.write_str("idle evidence without a pty revision to fence on")
            }
            HoldReason::PtyError { detail } => write!(f, "pty error ({detail})"),
            HoldReason::HarnessExited { status } => write!(f, "harness exited ({status})"),
            HoldReason::AwaitingReply => f.write_str("awaiting pty reply"),
        }
    }
}
