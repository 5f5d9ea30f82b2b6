//! What a valid v1 line says: the typed event and its parts. Strings
//! borrow from the line where they can.

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::core::identity::ClaimedIdentity;
use crate::core::message::MessageName;

/// One validated adapter event. Its strings borrow from the line where they
/// can, so a valid line is checked without allocating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event<'a> {
    pub identity: ClaimedIdentity<'a>,
    pub sequence: u64,
    pub body: Body<'a>,
}

/// What the event says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Body<'a> {
    Activity(Activity<'a>),
    TurnBoundary {
        messages: Vec<MessageName>,
    },
    Lifecycle {
        event: Lifecycle,
    },
    Claim(Claim),
    /// Files a claim granted whose hook never passed them on: they go back
    /// to unread work (only those that are hook-owned now).
    Release {
        messages: Vec<MessageName>,
        reason: Undelivered,
    },
    /// Files a claim granted whose hook confirmed it printed them for its
    /// harness (its receipt): delivered, no longer in doubt should the
    /// adapter die.
    Printed {
        messages: Vec<MessageName>,
    },
}

/// Why a hook's answer carrying claimed files did not reach the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Undelivered {
    /// The hook's connection closed (the harness killed it at its timeout,
    /// Ctrl-C, a crash) before the answer was written to it in full, or
    /// before the claim was even answered.
    HookGone,
    /// The hook read the answer but never confirmed that it passed it on
    /// (it died before printing it, or hung past the receipt deadline).
    NoReceipt,
    /// The answer was never given: a wake waiting for fresh idle was
    /// granted the files, and the screen read after the grant was no
    /// longer fresh idle, or a person's input had reached the terminal
    /// within `quiet-input` (or no reading came).
    Withheld,
}

/// A hook is about to put unread files into the harness's next context and
/// asks which it may take. The sidecar answers on the adapter's stdin
/// (`claimed`, see [`crate::core::downlink`]); the files it grants are hook-owned
/// from that moment, so no file is both injected by a hook and typed into
/// the terminal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// The adapter's own id for this claim, echoed in the answer.
    pub claim: u64,
    pub wants: ClaimWants,
    pub scope: ClaimScope,
    /// The most bytes the granted names may take, escaped by the notice's
    /// rule and joined with `", "`, so that a hook with a bounded context
    /// can name every file it is granted. At least one claimable file is
    /// granted whatever its length.
    pub name_bytes: Option<u64>,
}

/// Which files a claim asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimWants {
    /// Exactly these (the hook listed `new/` itself).
    Named(Vec<MessageName>),
    /// The oldest files the scope allows, at most this many.
    Oldest(u64),
}

/// Which states of unread work a claim may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimScope {
    /// Only work that no one owns yet (the next prompt's new arrivals).
    Pending,
    /// Everything unread that no transaction is typing right now, including
    /// files already rung or injected: a new or compacted context surfaces
    /// the whole durable backlog again (save a file rung or taken by a hook
    /// since the context began again: it went into the new one).
    Unread,
    /// Only files already handed to the harness (rung or injected) and
    /// still unread, as `unread` takes them: a context compacted with no
    /// request coming surfaces again what it was given, and leaves work no
    /// one owns yet to the idle path, which starts a turn for it.
    Delivered,
}

/// Activity evidence about the harness and its composer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity<'a> {
    pub state: ActivityState,
    /// How long the adapter vouches for this evidence, from receipt.
    #[serde(serialize_with = "serialize_millis")]
    pub valid_for: Duration,
    pub composer: Composer,
    /// The PTY revision at which the evidence was observed, if the adapter
    /// knows it.
    pub revision: Option<u64>,
    /// The request of the notice DING typed that the composer holds,
    /// exactly and alone, on this screen (told to the adapter by the
    /// downlink's `typed`): the evidence a notice's Return waits for.
    pub typed: Option<u64>,
    /// How to empty this composer of a line pasted into it, as the adapter
    /// knows its harness (spec §4.2): with an empty composer, the paste
    /// asks the PTY host to press them should a person's input come before
    /// its Return.
    pub withdraw: Option<WithdrawKeys<'a>>,
    /// Provider-opaque diagnostics; shown, never interpreted.
    pub reason: Option<Cow<'a, str>>,
}

/// An activity's `withdraw` and `withdrawAfterMs`: the keys (at most
/// [`MAX_WITHDRAW_BYTES`], never a line end) and how long after the paste
/// to press them (at most [`MAX_WITHDRAW_AFTER_MS`]).
///
/// [`MAX_WITHDRAW_BYTES`]: super::MAX_WITHDRAW_BYTES
/// [`MAX_WITHDRAW_AFTER_MS`]: super::MAX_WITHDRAW_AFTER_MS
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawKeys<'a> {
    pub keys: Cow<'a, str>,
    pub after_ms: u64,
}

impl WithdrawKeys<'_> {
    /// The same keys, owning their text (a lease keeps them).
    pub fn into_owned(self) -> WithdrawKeys<'static> {
        WithdrawKeys {
            keys: Cow::Owned(self.keys.into_owned()),
            after_ms: self.after_ms,
        }
    }

    /// The PTY host's withdraw steps for them.
    pub fn transport(&self) -> crate::core::transport::Transport {
        crate::core::transport::Transport::withdraw(
            &self.keys,
            std::time::Duration::from_millis(self.after_ms),
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActivityState {
    Idle,
    Active,
    /// A child command (a tool run) is executing inside the harness.
    Child,
    Unknown,
}

/// The narrow composer guard: may the terminal's input line be typed into?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Composer {
    Empty,
    Nonempty,
    Unknown,
}

/// Facts about the harness's conversation that end any lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// The context is being or was compacted. Ownership is kept.
    Compaction,
    /// The context was cleared: injected and rung work is no longer in it.
    Clear,
    /// The harness's conversation crashed or restarted and its context is gone.
    Crash,
}

fn serialize_millis<S: serde::Serializer>(
    value: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
}
