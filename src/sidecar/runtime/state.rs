//! What the runtime holds: one token per descriptor, the descriptors and
//! the engine, the running adapter, and the turn's queues; and the clock
//! the engine's time is read from.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use mio::{Poll, Token};
use nix::sys::signalfd::SignalFd;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::TimerFd;

use crate::core::downlink::Downlink;
use crate::core::engine::{Engine, Input};
use crate::core::time::Time;
use crate::decl::AgentSpec;
use crate::sidecar::adapter_proc::{ADAPTER_KILL_WAIT, ADAPTER_STOP_GRACE, AdapterProcess};
use crate::sidecar::inbox::{Inbox, Unreadable};
use crate::sidecar::inbox_watch::InboxWatch;
use crate::sidecar::journal_store::JournalStore;
use crate::sidecar::log::{Log, LogFormat};
use crate::sidecar::paths::AgentPaths;
use crate::sidecar::pty_link::PtyLink;
use crate::sidecar::status_server::StatusServer;

pub(super) const SIGNALS: Token = Token(0);

pub(super) const TIMER: Token = Token(1);

pub(super) const INBOX: Token = Token(2);

pub(super) const ADAPTER_OUT: Token = Token(3);

pub(super) const ADAPTER_ERR: Token = Token(4);

pub(super) const PTY: Token = Token(5);

pub(super) const STATUS: Token = Token(6);

pub(super) const ADAPTER_IN: Token = Token(7);

pub(super) const FIRST_STATUS_PEER: usize = 100;

/// How long a shutdown waits for an in-flight transaction's reply, so that
/// its outcome is journaled rather than guessed at the next start.
pub(super) const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The longest a sidecar takes to exit after SIGTERM: the in-flight reply's
/// grace, then its adapter's stop (SIGTERM, the grace, SIGKILL, the wait).
pub const STOP_WITHIN: Duration = Duration::from_secs(
    SHUTDOWN_GRACE.as_secs() + ADAPTER_STOP_GRACE.as_secs() + ADAPTER_KILL_WAIT.as_secs(),
);

/// Everything `ding sidecar` needs.
pub struct SidecarOptions {
    pub spec: AgentSpec,
    /// The declaration file, recorded for `ding status` and `ding up`.
    pub declaration: PathBuf,
    pub paths: AgentPaths,
    pub log_format: LogFormat,
}

/// The current adapter and the pipes still open.
pub(super) struct RunningAdapter {
    pub(super) process: AdapterProcess,
    pub(super) stdout_open: bool,
    pub(super) stderr_open: bool,
    /// A pipe's last read stopped at its budget, not at `WouldBlock`.
    pub(super) stdout_backlog: bool,
    pub(super) stderr_backlog: bool,
}

impl RunningAdapter {
    pub(super) fn has_backlog(&self) -> bool {
        self.stdout_backlog || self.stderr_backlog
    }
}

pub(super) struct Runtime {
    pub(super) poll: Poll,
    pub(super) engine: Engine,
    pub(super) spec: AgentSpec,
    /// The declaration file this sidecar runs from.
    pub(super) declaration: PathBuf,
    pub(super) paths: AgentPaths,
    pub(super) log: Log,
    pub(super) inbox: Inbox,
    pub(super) watch: InboxWatch,
    pub(super) store: JournalStore,
    pub(super) timer: TimerFd,
    pub(super) signals: SignalFd,
    pub(super) link: PtyLink,
    pub(super) status: StatusServer,
    pub(super) adapter: Option<RunningAdapter>,
    /// Adapters that were replaced or stopped and still need reaping.
    pub(super) zombies: Vec<AdapterProcess>,
    /// Entries of `new/` that cannot be messages, by name, for status.
    pub(super) unreadable: BTreeMap<OsString, Unreadable>,
    pub(super) inputs: VecDeque<Input>,
    /// Downlink lines of this turn, sent once the journal is written.
    pub(super) downlink: Vec<Downlink>,
    pub(super) journal_dirty: bool,
    /// Why the journal was quarantined at start, for status.
    pub(super) journal_warning: Option<String>,
    /// Why the last journal write failed, until one succeeds, for status.
    pub(super) journal_write_error: Option<String>,
    pub(super) shutdown_deadline: Option<Time>,
    pub(super) started: Time,
}

/// The monotonic clock, as the engine's time.
pub fn monotonic_now() -> Time {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .unwrap_or(TimeSpec::new(0, 0));
    let millis = (now.tv_sec() as u64).saturating_mul(1000) + (now.tv_nsec() as u64) / 1_000_000;
    Time::from_millis(millis)
}
