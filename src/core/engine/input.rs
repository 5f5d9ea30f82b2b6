//! The facts the engine takes, and how each one is taken: time moves first,
//! deadlines that passed fire, the fact's handler runs, then the engine
//! settles (delivery, the evidence demand, the journal and status outputs).

use std::time::Duration;

use crate::core::decision::Decision;
use crate::core::fence::QuietPart;
use crate::core::hold::AdapterDown;
use crate::core::identity::{Identity, IdentityPart};
use crate::core::message::MessageName;
use crate::core::ownership::RequestId;
use crate::core::protocol::ProtocolError;
use crate::core::time::Time;

use super::output::Output;
use super::state::Engine;

/// A fact from the world, stamped with the time it was observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A full listing of `new/` (at start, and after an inotify overflow).
    InboxScan(Vec<MessageName>),
    /// A file appeared in `new/`.
    InboxAdded(MessageName),
    /// A file left `new/`: archived (or deleted).
    InboxRemoved(MessageName),
    /// The adapter the engine asked for is running.
    AdapterSpawned { pid: u32 },
    /// One line from the adapter's stdout, without its newline.
    AdapterLine(Vec<u8>),
    /// The adapter's line passed the runtime's bound (`len` bytes had
    /// arrived, newline or not); it is discarded.
    AdapterLineTooLong { len: usize },
    /// The adapter's stdout reached end of file.
    AdapterEof,
    /// The adapter could not be started.
    AdapterSpawnFailed { error: String },
    /// The adapter exited.
    AdapterExited { status: String },
    /// The PTY host's identity and current revision.
    PtyStatus { identity: Identity, revision: u64 },
    /// The PTY host wrote the transaction `request`.
    PtySent { request: RequestId, revision: u64 },
    /// The PTY host refused `request` because the terminal moved: zero bytes.
    PtyConflict { request: RequestId, actual: u64 },
    /// The PTY host refused `request` by its time fence: the revision
    /// matched, but `part` had been quiet only `quiet_for`; the same request
    /// would pass `retry_in` from now if nothing else happens. Zero bytes.
    PtyUnsettled {
        request: RequestId,
        part: QuietPart,
        quiet_for: Duration,
        retry_in: Duration,
        actual: u64,
    },
    /// A person's input reached the terminal while `request` ran: the host
    /// stopped it after `written` bytes, before its remaining steps.
    PtyInterrupted {
        request: RequestId,
        written: usize,
        actual: u64,
    },
    /// The PTY host took the typed notice awaiting its Return back out of
    /// the composer (the paste's `withdraw` keys), because a person's input
    /// came before the Return; `actual` is its revision after them.
    PtyWithdrawn { actual: u64 },
    /// The PTY host answered `request` with an error: zero bytes.
    PtyError { request: RequestId, detail: String },
    /// The PTY host refused `request` because the tuple names another
    /// terminal, start or launch: zero bytes. `actual` is its revision.
    PtyMismatch {
        request: RequestId,
        part: IdentityPart,
        actual: u64,
    },
    /// The harness process exited. `request` is the transaction the host
    /// refused for it (zero bytes), if the news came as a reply.
    HarnessExited {
        request: Option<RequestId>,
        status: String,
    },
    /// The PTY host cannot be reached (connection lost or refused).
    PtyUnreachable,
    /// The runtime is stopping (SIGTERM): the delivery in flight finishes,
    /// nothing new starts, and the work waits on disk for the next start.
    Stopping,
}

impl Engine {
    /// Feeds one fact in. Drain [`Engine::poll_output`] afterwards.
    pub fn handle_input(&mut self, input: Input, now: Time) {
        self.advance_clock(now);
        // Deadlines that passed happened before this input arrived.
        self.fire_timers();
        match input {
            Input::InboxScan(names) => self.on_scan(names),
            Input::InboxAdded(name) => {
                if self.on_seen(name.clone()) {
                    self.record(Decision::Arrived { message: name });
                }
            }
            Input::InboxRemoved(name) => self.on_removed(name),
            Input::AdapterSpawned { pid } => self.on_adapter_spawned(pid),
            Input::AdapterLine(line) => self.on_adapter_line(&line),
            Input::AdapterLineTooLong { len } => {
                self.adapter_spoke();
                self.reject_line(ProtocolError::LineTooLong { len });
            }
            Input::AdapterEof => self.on_adapter_down(AdapterDown::Eof),
            Input::AdapterSpawnFailed { error } => {
                self.on_adapter_down(AdapterDown::SpawnFailed { error })
            }
            Input::AdapterExited { status } => self.on_adapter_down(AdapterDown::Exited { status }),
            Input::PtyStatus { identity, revision } => self.on_pty_status(identity, revision),
            Input::PtySent { request, revision } => self.on_sent(request, revision),
            Input::PtyConflict { request, actual } => self.on_conflict(request, actual),
            Input::PtyUnsettled {
                request,
                part,
                quiet_for,
                retry_in,
                actual,
            } => self.on_unsettled(request, part, quiet_for, retry_in, actual),
            Input::PtyInterrupted {
                request,
                written,
                actual,
            } => self.on_interrupted(request, written, actual),
            Input::PtyWithdrawn { actual } => self.on_withdrawn(actual),
            Input::PtyError { request, detail } => self.on_pty_error(request, detail),
            Input::PtyMismatch {
                request,
                part,
                actual,
            } => self.on_pty_mismatch(request, part, actual),
            Input::HarnessExited { request, status } => self.on_harness_exited(request, status),
            Input::PtyUnreachable => self.on_pty_unreachable(),
            Input::Stopping => self.stopping = true,
        }
        self.after_input();
    }

    /// Fires due timers, attempts delivery, tells the adapter whether
    /// evidence is wanted, and flushes the journal and status outputs once
    /// for the whole input.
    pub(super) fn after_input(&mut self) {
        self.fire_timers();
        // Before delivery, so the gate's silence rule sees the demand as the
        // adapter will have seen it.
        self.signal_demand();
        self.deliver();
        if self.journal_dirty {
            self.journal_dirty = false;
            self.outputs.push_back(Output::JournalChanged);
        }
        if self.status_dirty {
            self.status_dirty = false;
            self.outputs.push_back(Output::StatusChanged);
        }
    }
}
