//! Structured decision records: one per thing the engine decided.
//!
//! The runtime logs each record as one JSON line. Together they answer "what
//! happened to my message, and why" without reading the engine's code.

use serde::{Deserialize, Serialize};

use super::downlink::ClaimRefusal;
use super::fence::QuietPart;
use super::hold::{AdapterDown, HoldReason};
use super::identity::Identity;
use super::message::MessageName;
use super::ownership::{MessageState, RequestId};
use super::protocol::{Composer, Lifecycle, ProtocolError, Undelivered};
use super::time::Time;

/// A decision and when it was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Record {
    pub at: Time,
    #[serde(flatten)]
    pub decision: Decision,
}

/// Why owned work went back to pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseCause {
    /// The staged notice is due to ring again.
    ReRingDue,
    /// The harness process that received it is gone.
    IncarnationChanged,
    /// The context that held it was cleared or lost.
    Lifecycle,
    /// The hook that claimed it went away before its answer reached it
    /// ([`Undelivered::HookGone`]).
    HookGone,
    /// The hook never confirmed that it passed its answer on
    /// ([`Undelivered::NoReceipt`]).
    NoReceipt,
    /// A wake was granted it, and the screen read after the grant no
    /// longer let the wake go ([`Undelivered::Withheld`]).
    Withheld,
    /// A person interrupted its typing, or its Return was withheld, and the
    /// composer was then seen empty with no turn in between: the notice is
    /// gone unsent.
    InterruptedUnsent,
    /// A person's input came before its Return, and the PTY host took the
    /// notice back out of the composer first: it was never sent.
    Withdrawn,
}

impl From<Undelivered> for ReleaseCause {
    fn from(why: Undelivered) -> ReleaseCause {
        match why {
            Undelivered::HookGone => ReleaseCause::HookGone,
            Undelivered::NoReceipt => ReleaseCause::NoReceipt,
            Undelivered::Withheld => ReleaseCause::Withheld,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "decision",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Decision {
    /// A new unread file was seen.
    Arrived {
        message: MessageName,
    },
    /// A full inbox scan was reconciled.
    Scanned {
        unread: usize,
        added: usize,
        removed: usize,
    },
    /// A file left `new/` (the archive receipt).
    Archived {
        message: MessageName,
        was: MessageState,
    },
    /// A transaction was requested. `conditional` is the compare-and-send.
    Rang {
        request: RequestId,
        messages: Vec<MessageName>,
        conditional: bool,
        expected_revision: Option<u64>,
    },
    /// The PTY host wrote the notice's paste, without its Return; the
    /// Return waits for evidence that the composer shows the notice.
    Pasted {
        request: RequestId,
        revision: u64,
        messages: Vec<MessageName>,
    },
    /// The Return of the notice pasted as `notice` was requested as
    /// `request`, fenced on evidence read at `expected_revision`.
    Submitting {
        request: RequestId,
        notice: RequestId,
        expected_revision: u64,
    },
    /// No Return will be written for the notice pasted as `notice`: `why`.
    /// Its files are staged, unconfirmed; the notice waits in the composer.
    ReturnWithheld {
        notice: RequestId,
        why: String,
        messages: Vec<MessageName>,
    },
    /// The PTY host took the notice pasted as `notice` back out of the
    /// composer before its Return, because a person's input came first:
    /// its files are pending again.
    Withdrawn {
        notice: RequestId,
        revision: u64,
        messages: Vec<MessageName>,
    },
    /// The notice pasted as `notice`, whose Return was withheld, showed
    /// up alone in the composer after all: `request` takes it back out
    /// with the provider's keys, fenced on evidence read at
    /// `expected_revision`, so that no prompt of the person's is sent
    /// glued behind it.
    TakingOut {
        request: RequestId,
        notice: RequestId,
        expected_revision: u64,
    },
    /// The PTY host wrote the transaction (for a typed notice: its
    /// Return); the named files are staged.
    Sent {
        request: RequestId,
        revision: u64,
        messages: Vec<MessageName>,
    },
    /// The PTY host wrote zero bytes by its time fence: `part` had been
    /// quiet only `quiet_for_ms`; the engine tries again in `retry_in_ms`.
    #[serde(rename_all = "camelCase")]
    Unsettled {
        request: RequestId,
        part: QuietPart,
        quiet_for_ms: u64,
        retry_in_ms: u64,
        messages: Vec<MessageName>,
    },
    /// A person's input stopped the transaction after `written` bytes.
    Interrupted {
        request: RequestId,
        written: usize,
        messages: Vec<MessageName>,
    },
    /// The PTY host wrote zero bytes because the terminal moved.
    Conflict {
        request: RequestId,
        expected: u64,
        actual: u64,
        messages: Vec<MessageName>,
    },
    /// The PTY host answered with an error and wrote zero bytes.
    SendFailed {
        request: RequestId,
        detail: String,
        messages: Vec<MessageName>,
    },
    /// The transaction's outcome cannot be known; the files count as staged
    /// (unconfirmed) so the terminal is not typed into twice on a guess.
    OutcomeUnknown {
        request: RequestId,
        why: String,
        messages: Vec<MessageName>,
    },
    /// Pending work is held; emitted when the reason changes.
    Held {
        reason: HoldReason,
        pending: usize,
        oldest: Option<MessageName>,
    },
    /// A turn-boundary receipt or a claim made these files hook-owned.
    /// `unseen` are named files the inbox watch has not reported yet: they
    /// become hook-owned the moment they are seen (spec §6).
    HookOwned {
        messages: Vec<MessageName>,
        unseen: Vec<MessageName>,
    },
    /// A claim was answered; `granted` is also recorded as `hook-owned`.
    Claimed {
        claim: u64,
        granted: usize,
        refused: usize,
        refusal: Option<ClaimRefusal>,
    },
    /// Owned files went back to pending.
    Released {
        cause: ReleaseCause,
        messages: Vec<MessageName>,
    },
    /// An idle lease was granted.
    LeaseGranted {
        sequence: u64,
        expires_at: Time,
        composer: Composer,
        revision: Option<u64>,
    },
    /// A granted lease ended (never recorded when there was none).
    LeaseEnded {
        reason: HoldReason,
    },
    /// An adapter line was rejected.
    ProtocolRejected {
        error: ProtocolError,
    },
    /// The harness reported a lifecycle fact.
    LifecycleFact {
        event: Lifecycle,
    },
    /// The engine asks the runtime to start the adapter.
    AdapterSpawn,
    AdapterUp {
        pid: u32,
    },
    AdapterDown {
        down: AdapterDown,
        retry_in_ms: u64,
    },
    /// The PTY host's identity changed (or became known).
    PtyIdentity {
        previous: Option<Identity>,
        current: Identity,
    },
    PtyUnreachable,
    /// The harness process exited (from a push or a transaction's reply).
    HarnessExited {
        status: String,
    },
    /// Whether activity evidence is wanted changed (the demand signal).
    EvidenceWanted {
        wanted: bool,
    },
    /// An input that does not apply in the current state was ignored.
    Ignored {
        what: String,
    },
}
