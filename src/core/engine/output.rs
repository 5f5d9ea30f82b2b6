//! The decisions the engine hands the runtime to carry out, and the two
//! sends among them.

use std::time::Duration;

use serde::Serialize;

use crate::core::decision::Record;
use crate::core::downlink::Downlink;
use crate::core::fence::TimeFence;
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::ownership::RequestId;
use crate::core::transport::Transport;

/// The compare-and-send: write `transport` iff the terminal is still exactly
/// `identity` at `expected_revision`, and has been quiet as `fence` asks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendIf {
    pub request: RequestId,
    pub identity: Identity,
    pub expected_revision: u64,
    pub fence: TimeFence,
    pub transport: Transport,
    pub messages: Vec<MessageName>,
    /// Once written, the host holds a person's typed text for at most this
    /// long, until DING's next transaction has run, which then goes first
    /// (a typed notice's paste: its Return; docs/pty-protocol.md §3, item 6).
    pub hold_input: Option<Duration>,
    /// The steps that take the paste back out, should a person's input end
    /// that hold before DING's next transaction (the lease's adapter said
    /// them; docs/pty-protocol.md §3, item 7).
    pub withdraw: Option<Transport>,
}

/// An unconditional send (the aggressive policy).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Send {
    pub request: RequestId,
    pub transport: Transport,
    pub messages: Vec<MessageName>,
}

/// A decision for the runtime to carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Ask the PTY host for a compare-and-send.
    SendIf(SendIf),
    /// Ask the PTY host for a plain send.
    Send(Send),
    /// Start the adapter (killing any previous one first).
    SpawnAdapter,
    /// Write this line to the adapter's stdin. Write it only after the
    /// journal of the same input is durable: a `claimed` answer hands files
    /// to a hook, and that ownership must survive a crash.
    ToAdapter(Downlink),
    /// Ownership changed: write [`Engine::journal`] atomically before acting
    /// on later outputs that depend on it. Emitted at most once per input; a
    /// runtime may coalesce several into one write per loop turn, because the
    /// journal is a whole snapshot (N.B. its size is the number of owned files).
    ///
    /// [`Engine::journal`]: super::Engine::journal
    JournalChanged,
    /// Something `status()` reports has changed.
    StatusChanged,
    /// A structured record for the log.
    Decision(Record),
}
