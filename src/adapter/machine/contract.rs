//! The machine's contract: the facts it takes and the decisions it hands
//! its shell. Every output that asks for something names the input that
//! will answer it.

use crate::adapter::SettingsRead;
use crate::pty::wire::{HostStatus, Snapshot};

/// One hook connection, as the shell numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Peer(pub usize);

/// A fact from the adapter's world.
#[derive(Debug)]
pub enum Input {
    /// Bytes read from the downlink (the sidecar's lines, in any pieces).
    Downlink(Vec<u8>),
    /// The downlink ended: the sidecar is gone, and so is the adapter's
    /// reason to be.
    DownlinkClosed,
    /// A hook call's line (without its newline).
    HookCall { peer: Peer, line: Vec<u8> },
    /// A hook call's line passed [`MAX_CALL_BYTES`] (`len` bytes so far).
    ///
    /// [`MAX_CALL_BYTES`]: crate::adapter::hook_wire::MAX_CALL_BYTES
    HookCallTooLong { peer: Peer, len: usize },
    /// The hook's connection ended before its answer reached it (the
    /// harness's own timeout, a Ctrl-C, a crash).
    HookGone { peer: Peer },
    /// The hook printed the answer it was sent for the harness.
    HookReceipt { peer: Peer },
    /// The hook's connection ended after its answer was sent, with no
    /// receipt.
    HookNoReceipt { peer: Peer },
    /// The connection [`Output::PtyOpen`] asked for is open.
    PtyOpened,
    /// Something happened on the terminal (input, output, resize, exit).
    PtyMoved,
    /// The harness started again (a new incarnation).
    PtyStarted,
    /// The snapshot [`Output::PtySnapshot`] asked for.
    PtySnapshot(Box<Snapshot>),
    /// The status [`Output::PtyStatus`] asked for.
    PtyStatus(Box<HostStatus>),
    /// The connection is gone, or could not be made or used (`why`).
    PtyLost(String),
    /// The settings files [`Output::ReadSettings`] named, as read.
    SettingsRead(Vec<SettingsRead>),
}

/// A decision for the shell to carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// One protocol line for the sidecar, without its newline.
    Uplink(String),
    /// Answer `peer` with `line` and close.
    HookAnswer { peer: Peer, line: String },
    /// Answer `peer` with `line` (claimed files) and wait for its receipt:
    /// [`Input::HookReceipt`], [`Input::HookNoReceipt`] or
    /// [`Input::HookGone`] follows.
    HookAnswerForReceipt { peer: Peer, line: String },
    /// Close `peer`'s connection unanswered (its receipt never came).
    HookClose { peer: Peer },
    /// Connect to the PTY host and watch: [`Input::PtyOpened`] or
    /// [`Input::PtyLost`] follows.
    PtyOpen,
    /// Close the PTY connection.
    PtyClose,
    /// Ask for one snapshot on the open connection.
    PtySnapshot,
    /// Ask for the host's status on the open connection.
    PtyStatus,
    /// A line for the adapter's stderr (the sidecar logs it).
    Log(String),
    /// Read these hook settings files: [`Input::SettingsRead`] follows.
    ReadSettings(Vec<std::path::PathBuf>),
}
