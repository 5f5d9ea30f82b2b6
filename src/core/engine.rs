//! The engine: every DING decision, made on one thread with no I/O.
//!
//! # The loop
//!
//! The runtime owns the file descriptors; the engine owns the decisions. After
//! every input the runtime drains the outputs, then sleeps until the next input
//! or the next deadline. This is str0m's single-mutation invariant: mutate,
//! drain, mutate again. Do not feed a second input before draining the first.
//!
//! ```
//! use ding::core::config::{EngineConfig, Policy};
//! use ding::core::engine::{Engine, Input, Output};
//! use ding::core::message::MessageName;
//! use ding::core::time::Time;
//!
//! let config = EngineConfig::new(Policy::Aggressive, "worker", "inbox/new");
//! let mut engine = Engine::new(config, None, Time::ZERO);
//! engine.handle_input(Input::InboxScan(vec![MessageName::new("001.md").unwrap()]), Time::ZERO);
//! while let Some(output) = engine.poll_output() {
//!     match output {
//!         Output::Send(send) => { /* write send.transport to the PTY host */ }
//!         Output::SendIf(_) | Output::SpawnAdapter | Output::ToAdapter(_)
//!         | Output::JournalChanged | Output::StatusChanged | Output::Decision(_) => {}
//!     }
//! }
//! // Arm a timer for engine.next_deadline(); on expiry call handle_timeout.
//! assert_eq!(engine.next_deadline(), None);
//! ```
//!
//! # Guarantees
//!
//! * Under `turn-boundary+fresh-idle`, a [`SendIf`] is emitted only with a
//!   live lease for the PTY's current identity, an empty composer and a known
//!   fence revision. Anything else is a [`HoldReason`]. It never falls back to
//!   an unconditional send.
//! * Hook-owned, staged and in-flight files are never named by a transaction.
//! * No input is ever dropped into a panic: every malformed fact is a typed
//!   hold or an `Ignored` record.
//! * `next_deadline` is `None` when nothing is pending: an idle sidecar sleeps.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde::Serialize;

use super::adapter::{Adapter, AdapterPhase};
use super::backoff::Backoff;
use super::config::{EngineConfig, Fence, Policy};
use super::decision::{Decision, Record, ReleaseCause};
use super::downlink::{ClaimRefusal, Claimed, Downlink, Refusal, RefusedState};
use super::fence::{QuietPart, TimeFence};
use super::gather::Gather;
use super::hold::{AdapterDown, HoldReason};
use super::identity::{Identity, IdentityPart};
use super::journal::Journal;
use super::lease::{Lease, LeaseSlot, RevisionSource};
use super::message::MessageName;
use super::notice::Notice;
use super::ownership::{MessageState, Ownership, RequestId, Seen};
use super::protocol::{
    self, ActivityState, Body, Claim, ClaimScope, ClaimWants, Composer, Event, Lifecycle,
    ProtocolError, Undelivered, WithdrawKeys,
};
use super::status::{
    EngineStatus, EvidenceView, HoldView, MessageStatus, MessageWindow, PtyView, StateCounts,
};
use super::time::Time;
use super::transport::Transport;
use super::typed::TypedNotice;
use crate::escape::escape;

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
    JournalChanged,
    /// Something `status()` reports has changed.
    StatusChanged,
    /// A structured record for the log.
    Decision(Record),
}

/// Which part of a delivery a transaction writes.
#[derive(Clone, Debug)]
enum Phase {
    /// The notice and its Return in one (the aggressive send).
    Whole,
    /// The notice's paste alone (the careful policy's first phase).
    Paste { text: String },
    /// The Return of the typed notice (the second phase).
    Return,
    /// The provider's keys that take back out a notice whose Return was
    /// withheld and which then showed up alone in the composer.
    TakeOut,
}

/// A transaction on a lease that follows a paste (see
/// [`Engine::send_on_lease`]).
struct SecondPhase {
    phase: Phase,
    /// The request its files are in flight under (`None`: its own).
    owner: Option<RequestId>,
    messages: Vec<MessageName>,
    incarnation: Option<String>,
    fence: TimeFence,
    transport: Transport,
}

/// The transaction whose reply is awaited.
#[derive(Clone, Debug)]
struct InFlight {
    request: RequestId,
    /// The request the files are in flight under: this one's, or for a
    /// Return, its notice's paste.
    owner: RequestId,
    phase: Phase,
    /// When the engine asked for it.
    asked_at: Time,
    messages: Vec<MessageName>,
    expected_revision: Option<u64>,
    incarnation: Option<String>,
    deadline: Time,
    /// The lease the compare-and-send spent: a time-fence refusal gives it
    /// back, because the screen it vouched for has not changed.
    lease: Option<Lease>,
}

/// Why the PTY is not to be used for now, and until when.
#[derive(Clone, Debug)]
struct PtyBlock {
    reason: HoldReason,
    since: Time,
    /// When to try again (an engine timer, with backoff). `None`: until the
    /// host reports in again (unreachable) or starts a new harness (exited).
    retry_at: Option<Time>,
}

/// How the PTY is tried again after an error: after 250 ms, doubling per
/// error up to 8 s.
const PTY_RETRY: Backoff = Backoff::new(
    std::time::Duration::from_millis(250),
    std::time::Duration::from_secs(8),
);

/// The demand signal as last told to the adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Demand {
    wanted: bool,
    since: Time,
}

pub struct Engine {
    config: EngineConfig,
    now: Time,
    ownership: Ownership,
    /// When the harness's context last began again (a compaction, a
    /// clear, a crash): a file typed after it was typed into the new
    /// context.
    context_since: Option<Time>,
    /// Files whose typing a person interrupted, while nothing says whether
    /// the notice they left in the composer was sent: an empty idle
    /// composer before any turn says it was not.
    interrupted: Vec<MessageName>,
    adapter: Adapter,
    lease: LeaseSlot,
    pty: PtyView,
    pty_block: Option<PtyBlock>,
    in_flight: Option<InFlight>,
    /// A notice pasted and not yet submitted.
    typed: Option<TypedNotice>,
    /// A notice whose Return was withheld unsent: a harness may still draw
    /// it in the composer (one that waited for a terminal's answer drew it
    /// seconds later), where the person's next prompt would go out glued
    /// behind it. Shown there alone, it is taken back out.
    withheld_notice: Option<RequestId>,
    /// The runtime is stopping: nothing new starts ([`Input::Stopping`]).
    stopping: bool,
    /// The hold last announced, so `Held` is recorded once per change.
    hold: Option<(HoldReason, Time)>,
    /// What the adapter was last told about wanting evidence; `None` until
    /// it has been told (after every spawn).
    demand: Option<Demand>,
    /// The revision the adapter's last activity line was read at (`None`:
    /// it vouched for none).
    read_revision: Option<u64>,
    /// Since when the terminal has shown a revision the adapter's last
    /// activity line was not read at: a reading of it is owed from then.
    unread_move_since: Option<Time>,
    /// The `reason` of the adapter's latest activity line, for status.
    adapter_reason: Option<String>,
    /// When the adapter said it.
    adapter_reason_at: Option<Time>,
    /// The wait before the next PTY retry after an error.
    pty_retry: Backoff,
    next_request: RequestId,
    outputs: VecDeque<Output>,
    journal_dirty: bool,
    status_dirty: bool,
    /// Files a hook claimed and never passed on, with why and when they
    /// became pending again: status says so while they stay pending.
    given_back: BTreeMap<MessageName, (ReleaseCause, Time)>,
    /// A burst of arrivals being gathered into one delivery (spec §4.4).
    gather: Option<Gather>,
}

impl Engine {
    /// A new engine. `journal` is what a previous run left; its ownership
    /// applies to files the first inbox scan still finds unread.
    pub fn new(config: EngineConfig, journal: Option<&Journal>, now: Time) -> Engine {
        let re_ring_after = config.tunables.re_ring_after;
        let ownership = match journal {
            Some(journal) => Ownership::restored(re_ring_after, journal, now),
            None => Ownership::new(re_ring_after),
        };
        let adapter = Adapter::new(config.policy.uses_adapter(), config.respawn, now);
        let mut engine = Engine {
            config,
            now,
            ownership,
            context_since: None,
            interrupted: Vec::new(),
            adapter,
            lease: LeaseSlot::ended(HoldReason::AdapterStarting, now),
            pty: PtyView::default(),
            pty_block: None,
            in_flight: None,
            typed: None,
            withheld_notice: None,
            stopping: false,
            hold: None,
            demand: None,
            read_revision: None,
            unread_move_since: None,
            adapter_reason: None,
            adapter_reason_at: None,
            pty_retry: PTY_RETRY,
            next_request: 1,
            outputs: VecDeque::new(),
            journal_dirty: false,
            status_dirty: false,
            given_back: BTreeMap::new(),
            gather: None,
        };
        if engine.config.policy.uses_adapter() {
            engine.outputs.push_back(Output::SpawnAdapter);
            engine.record(Decision::AdapterSpawn);
        }
        engine
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The PTY host's identity as the engine knows it.
    pub fn pty_identity(&self) -> Option<&Identity> {
        self.pty.identity.as_ref()
    }

    /// Whether a transaction's reply is awaited.
    pub fn is_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The next decision to carry out, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`Engine::handle_timeout`] must next be called. `None` when
    /// nothing is waiting on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        let reply = self.in_flight.as_ref().map(|flight| flight.deadline);
        let respawn = self.adapter.retry_at();
        let re_ring = self.ownership.next_re_ring();
        let pty_retry = self.pty_block.as_ref().and_then(|block| block.retry_at);
        // A typed notice waits on time for its submit delay and its bound.
        let typed = self
            .typed
            .as_ref()
            .filter(|_| self.in_flight.is_none())
            .map(|typed| {
                if self.now < typed.submit_after {
                    typed.submit_after
                } else {
                    typed.return_by
                }
            });
        let gather = self
            .gather
            .map(|gather| gather.closes_at(self.config.tunables.gather_window()));
        [reply, respawn, re_ring, pty_retry, typed, gather]
            .into_iter()
            .flatten()
            .min()
            .map(|deadline| deadline.max(self.now))
    }

    /// The current ownership journal.
    pub fn journal(&self) -> Journal {
        self.ownership.journal()
    }

    /// Feeds one fact in. Drain [`Engine::poll_output`] afterwards.
    pub fn handle_input(&mut self, input: Input, now: Time) {
        self.advance(now);
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
        self.settle();
    }

    /// Lets time pass. A call before the deadline is a harmless no-op.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        self.settle();
    }

    /// A snapshot of everything `ding status` shows, every file listed.
    pub fn status(&self, now: Time) -> EngineStatus {
        self.status_listing(now, &MessageWindow::All)
    }

    /// A snapshot of everything `ding status` shows, listing the files of
    /// `window` (every file is counted all the same).
    pub fn status_listing(&self, now: Time, window: &MessageWindow) -> EngineStatus {
        let now = now.max(self.now);
        let pending_hold = self
            .gate(now)
            .err()
            .map(|reason| self.hold_view(reason, now));
        let mut by_state = StateCounts::default();
        for (_, state, _) in self.ownership.iter() {
            by_state.count(state);
        }
        let listed = match window {
            MessageWindow::Page {
                after: Some(after), ..
            } => window.pick(self.ownership.iter_after(after)),
            _ => window.pick(self.ownership.iter()),
        };
        let messages = listed
            .into_iter()
            .map(|(name, state, since)| {
                let given_back = self
                    .given_back
                    .get(name)
                    .filter(|(_, at)| *at == since)
                    .map(|(cause, _)| *cause);
                MessageStatus::new(name, state, since, pending_hold.as_ref(), given_back)
            })
            .collect();
        let evidence = EvidenceView {
            wanted: self.demand.is_some_and(|demand| demand.wanted),
            since: self.demand.map(|demand| demand.since),
            fence: self.config.tunables.fence,
            adapter_reason: self.adapter_reason.clone(),
            adapter_reason_at: self.adapter_reason_at,
        };
        let mut status = EngineStatus::new(
            &self.config,
            now,
            &self.adapter,
            &self.lease,
            &self.pty,
            evidence,
            messages,
        )
        .counting(by_state);
        status.in_flight = self.in_flight.as_ref().map(|flight| flight.request);
        status.hold = pending_hold.filter(|_| by_state.pending > 0);
        status.window = (*window != MessageWindow::All).then(|| window.clone());
        status
    }

    /// A hold with the time its cause arose, as far as the engine knows it.
    fn hold_view(&self, reason: HoldReason, now: Time) -> HoldView {
        let since = match (&self.hold, &self.lease, &self.pty_block) {
            // The evidence's own verdict is as old as the evidence.
            (_, LeaseSlot::Granted(lease), _)
                if matches!(
                    reason,
                    HoldReason::ComposerNonempty | HoldReason::ComposerUnknown
                ) =>
            {
                lease.granted_at
            }
            (Some((held, since)), _, _) if *held == reason => *since,
            (_, LeaseSlot::Ended { reason: ended, at }, _) if *ended == reason => *at,
            (_, _, Some(block)) if block.reason == reason => block.since,
            (_, LeaseSlot::Granted(lease), _) if reason == HoldReason::LeaseExpired => {
                lease.expires_at
            }
            // Silence began when the adapter last spoke, came up, or was
            // asked for evidence, whichever is latest.
            _ if reason == HoldReason::AdapterSilent => self.silent_since().unwrap_or(now),
            _ => now,
        };
        // The evidence's verdict in the adapter's words, which say why.
        let said = matches!(
            reason,
            HoldReason::NotIdle { .. } | HoldReason::ComposerNonempty | HoldReason::ComposerUnknown
        )
        .then(|| self.adapter_reason.clone())
        .flatten();
        HoldView {
            source: reason.source(),
            reason,
            since,
            said,
        }
    }

    fn advance(&mut self, now: Time) {
        // Time never runs backwards inside the engine, whatever the caller says.
        self.now = self.now.max(now);
    }

    fn record(&mut self, decision: Decision) {
        self.status_dirty = true;
        self.outputs.push_back(Output::Decision(Record {
            at: self.now,
            decision,
        }));
    }

    /// Fires due timers, attempts delivery, tells the adapter whether
    /// evidence is wanted, and flushes the journal and status outputs once
    /// for the whole input.
    fn settle(&mut self) {
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

    fn fire_timers(&mut self) {
        let now = self.now;
        // A gather ends when its window closes, or when nothing it held
        // is pending any more (a hook took it all, or it was archived).
        if !self.gathering(now) || self.ownership.pending_len() == 0 {
            self.gather = None;
        }
        if let Some(flight) = &self.in_flight
            && flight.deadline <= now
        {
            self.outcome_unknown("pty reply timed out");
            self.block_pty_for_retry("reply timed out".into());
        }
        if let Some(block) = &self.pty_block
            && block.retry_at.is_some_and(|due| due <= now)
        {
            self.pty_block = None;
        }
        self.settle_typed();
        if self.adapter.retry_at().is_some_and(|due| due <= now) {
            self.adapter.starting(now);
            self.lease = LeaseSlot::ended(HoldReason::AdapterStarting, now);
            self.outputs.push_back(Output::SpawnAdapter);
            self.record(Decision::AdapterSpawn);
        }
        let due = self.ownership.due_re_rings(now);
        if !due.is_empty() {
            self.ownership.set(&due, &MessageState::Pending, now);
            self.journal_dirty = true;
            self.record(Decision::Released {
                cause: ReleaseCause::ReRingDue,
                messages: due,
            });
        }
    }

    // ----- inbox -----

    fn on_scan(&mut self, names: Vec<MessageName>) {
        let listed: std::collections::BTreeSet<MessageName> = names.into_iter().collect();
        let gone: Vec<MessageName> = self
            .ownership
            .iter()
            .map(|(name, _, _)| name)
            .filter(|name| !listed.contains(*name))
            .cloned()
            .collect();
        let removed = gone.len();
        for name in gone {
            self.on_removed(name);
        }
        let mut added = 0;
        for name in listed {
            if self.on_seen(name) {
                added += 1;
            }
        }
        // Removals of owned files already marked the journal; a rescan that
        // changed no ownership writes nothing.
        if self.ownership.forget_unconfirmed_memories() {
            self.journal_dirty = true;
        }
        self.record(Decision::Scanned {
            unread: self.ownership.len(),
            added,
            removed,
        });
    }

    /// Records a file seen in `new/`; returns whether it was new. A file a
    /// hook took before the watch reported it is hook-owned from now on, and
    /// the journal must say so (spec §6.1).
    fn on_seen(&mut self, name: MessageName) -> bool {
        match self.ownership.add(name.clone(), self.now) {
            Seen::Known => false,
            Seen::New => {
                // A file the journal remembers as staged or hook-owned is
                // no arrival: only new pending work is gathered.
                if self.ownership.state(&name) == Some(&MessageState::Pending) {
                    self.gather_arrival();
                }
                true
            }
            Seen::NewHookOwned => {
                self.journal_dirty = true;
                true
            }
        }
    }

    /// A new pending file (already added) restarts the open gather's quiet
    /// time, or opens one when it is the only unread work on its way:
    /// beside pending work or a notice not yet answered, a delivery is
    /// already coming, and the file joins it. The aggressive policy
    /// gathers nothing: it is the baseline.
    fn gather_arrival(&mut self) {
        if self.config.policy == Policy::Aggressive {
            return;
        }
        let window = self.config.tunables.gather_window();
        match &mut self.gather {
            Some(gather) if gather.is_open(window, self.now) => gather.arrived(self.now),
            _ if self.ownership.pending_len() == 1
                && self.in_flight.is_none()
                && self.typed.is_none() =>
            {
                self.gather = Some(Gather::opened(self.now));
            }
            _ => {}
        }
    }

    /// Whether a gather still holds the pending files back at `now`.
    fn gathering(&self, now: Time) -> bool {
        self.gather
            .is_some_and(|gather| gather.is_open(self.config.tunables.gather_window(), now))
    }

    fn on_removed(&mut self, name: MessageName) {
        match self.ownership.remove(&name) {
            Some(was) => {
                if !matches!(was, MessageState::Pending | MessageState::InFlight { .. }) {
                    self.journal_dirty = true;
                }
                self.record(Decision::Archived { message: name, was });
            }
            None => self.record(Decision::Ignored {
                what: format!("removal of unknown file {name}"),
            }),
        }
    }

    // ----- adapter -----

    fn on_adapter_spawned(&mut self, pid: u32) {
        if !matches!(self.adapter.phase, AdapterPhase::Starting { .. }) {
            self.record(Decision::Ignored {
                what: format!("adapter spawn report (pid {pid}) not requested"),
            });
            return;
        }
        self.adapter.spawned(pid, self.now);
        self.lease = LeaseSlot::ended(HoldReason::NoEvidence, self.now);
        self.adapter_reason = None;
        self.adapter_reason_at = None;
        self.record(Decision::AdapterUp { pid });
        // A new process knows nothing: tell it the terminal, then (in
        // `settle`) whether evidence is wanted.
        self.outputs.push_back(Output::ToAdapter(Downlink::Pty {
            identity: self.pty.identity.clone(),
        }));
        self.demand = None;
    }

    fn on_adapter_down(&mut self, down: AdapterDown) {
        self.demand = None;
        if let Some(delay) = self.adapter.went_down(down.clone(), self.now) {
            self.end_lease(HoldReason::AdapterDown { down: down.clone() });
            let retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            self.record(Decision::AdapterDown { down, retry_in_ms });
        }
    }

    /// Notes that the adapter produced output: it is alive, whatever it said.
    fn adapter_spoke(&mut self) {
        if let AdapterPhase::Up { last_line, .. } = &mut self.adapter.phase {
            *last_line = Some(self.now);
        }
    }

    fn on_adapter_line(&mut self, line: &[u8]) {
        if !self.adapter.is_up() {
            self.record(Decision::Ignored {
                what: "adapter line while no adapter is up".into(),
            });
            return;
        }
        self.adapter_spoke();
        let event = match protocol::parse_line(line) {
            Ok(event) => event,
            Err(error) => return self.reject_line(error),
        };
        // A claim always gets an answer, even a refusal: a hook waits on it.
        let claim = match &event.body {
            Body::Claim(claim) => Some(claim.claim),
            _ => None,
        };
        if let AdapterPhase::Up { last_sequence, .. } = &mut self.adapter.phase {
            if let Some(last) = *last_sequence
                && event.sequence <= last
            {
                if let Some(claim) = claim {
                    self.refuse_claim(claim, ClaimRefusal::StaleSequence);
                }
                return self.reject_line(ProtocolError::StaleSequence {
                    sequence: event.sequence,
                    last,
                });
            }
            *last_sequence = Some(event.sequence);
        }
        let Some(current) = self.pty.identity.as_ref() else {
            if let Some(claim) = claim {
                self.refuse_claim(claim, ClaimRefusal::PtyUnknown);
            }
            return self.end_lease(HoldReason::PtyUnknown);
        };
        if let Some(part) = event.identity.mismatch(current) {
            if let Some(claim) = claim {
                self.refuse_claim(claim, ClaimRefusal::IdentityMismatch);
            }
            return self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.on_event(event);
    }

    fn reject_line(&mut self, error: ProtocolError) {
        self.record(Decision::ProtocolRejected {
            error: error.clone(),
        });
        self.end_lease(HoldReason::Protocol { error });
    }

    fn on_event(&mut self, event: Event<'_>) {
        if let Body::Activity(activity) = &event.body {
            self.adapter_reason = activity.reason.as_deref().map(str::to_owned);
            self.adapter_reason_at = Some(self.now);
            self.read_revision = activity.revision;
            let unread = match (self.pty.revision, activity.revision) {
                (Some(known), Some(read)) => known > read,
                _ => false,
            };
            self.unread_move_since = unread.then_some(self.now);
        }
        match event.body {
            Body::Activity(activity) if activity.state == ActivityState::Idle => {
                let valid_for = activity.valid_for.min(self.config.tunables.lease_cap);
                let (revision, revision_source) = match (
                    activity.revision,
                    self.pty.revision,
                    self.config.tunables.fence,
                ) {
                    (Some(evidence), _, _) => (Some(evidence), Some(RevisionSource::Evidence)),
                    // Only the loudly named unsafe fence guesses: the
                    // revision known at receipt cannot see a keystroke typed
                    // after the adapter looked.
                    (None, Some(known), Fence::ReceiptUnsafe) => {
                        (Some(known), Some(RevisionSource::PtyAtReceipt))
                    }
                    (None, _, _) => (None, None),
                };
                let lease = Lease {
                    identity: event.identity.into_owned(),
                    sequence: event.sequence,
                    granted_at: self.now,
                    expires_at: self.now.saturating_add(valid_for),
                    composer: activity.composer,
                    revision,
                    revision_source,
                    typed: activity.typed,
                    withdraw: activity.withdraw.map(WithdrawKeys::into_owned),
                };
                self.record(Decision::LeaseGranted {
                    sequence: lease.sequence,
                    expires_at: lease.expires_at,
                    composer: lease.composer,
                    revision: lease.revision,
                });
                if activity.composer == Composer::Empty {
                    self.release_interrupted_unsent();
                }
                self.lease = LeaseSlot::Granted(lease);
            }
            Body::Activity(activity) => {
                // A turn may be running on the interrupted notice.
                self.interrupted.clear();
                if matches!(activity.state, ActivityState::Active | ActivityState::Child) {
                    // Whatever the composer held went with the turn.
                    self.withheld_notice = None;
                    self.typed_sent_by_a_turn();
                }
                self.end_lease(HoldReason::NotIdle {
                    state: activity.state,
                })
            }
            Body::TurnBoundary { messages } => {
                self.interrupted.clear();
                self.end_lease(HoldReason::TurnBoundary);
                self.on_receipt(messages, event.identity.incarnation.into_owned());
            }
            Body::Claim(claim) => {
                self.interrupted.clear();
                self.end_lease(HoldReason::TurnBoundary);
                self.on_claim(claim, event.identity.incarnation.into_owned());
            }
            Body::Release { messages, reason } => {
                // A newer event ends the lease, like every other (spec §6).
                self.end_lease(HoldReason::TurnBoundary);
                self.on_undelivered(messages, reason, &event.identity.incarnation)
            }
            Body::Lifecycle { event: fact } => {
                self.record(Decision::LifecycleFact { event: fact });
                self.end_lease(HoldReason::Lifecycle { event: fact });
                self.context_since = Some(self.now);
                if matches!(fact, Lifecycle::Clear | Lifecycle::Crash) {
                    let owned = self.ownership.owned();
                    self.release(owned, ReleaseCause::Lifecycle);
                    // A file a hook took before the watch reported it went
                    // into the context that is gone, too (spec §7 rule 3).
                    self.ownership.forget_unseen();
                }
            }
        }
    }

    /// A hook put these files into the next context (after the fact). Each
    /// named file is taken on its own: a known one becomes hook-owned
    /// whatever its state; one the inbox watch has not reported yet is
    /// hook-owned the moment it is seen.
    fn on_receipt(&mut self, mut messages: Vec<MessageName>, incarnation: String) {
        messages.sort();
        let owner = MessageState::HookOwned {
            incarnation: Some(incarnation),
        };
        let (known, unseen): (Vec<MessageName>, Vec<MessageName>) = messages
            .into_iter()
            .partition(|name| self.ownership.contains(name));
        self.take_for_hook(known, unseen, &owner);
    }

    /// A claim's hook never passed its files on: those of them that are
    /// hook-owned for this incarnation go back to pending, in FIFO order,
    /// and ring or ride the next hook like any unread work. A file in any
    /// other state (archived, staged, owned by an earlier incarnation) is
    /// not this claim's to give back and stays as it is; one claimed before
    /// the inbox watch reported it is forgotten as a claim, so it arrives
    /// as pending.
    fn on_undelivered(
        &mut self,
        mut messages: Vec<MessageName>,
        why: Undelivered,
        incarnation: &str,
    ) {
        messages.sort();
        let ours = |state: &MessageState| matches!(state, MessageState::HookOwned { incarnation: Some(owner) } if owner == incarnation);
        let mut owned = Vec::new();
        for name in messages {
            match self.ownership.state(&name) {
                Some(state) if ours(state) => owned.push(name),
                Some(_) => {}
                None => self.ownership.forget_expected(&name, ours),
            }
        }
        let now = self.now;
        let ownership = &self.ownership;
        self.given_back.retain(|name, (_, at)| {
            ownership
                .state_since(name)
                .is_some_and(|(state, since)| *state == MessageState::Pending && since == *at)
        });
        for name in &owned {
            self.given_back.insert(name.clone(), (why.into(), now));
        }
        self.release(owned, why.into());
    }

    /// A hook asks which files it may inject. The granted ones are
    /// hook-owned before the answer leaves, so no file is both injected and
    /// typed (spec §6.1).
    fn on_claim(&mut self, claim: Claim, incarnation: String) {
        let owner = MessageState::HookOwned {
            incarnation: Some(incarnation),
        };
        let mut granted = Vec::new();
        let mut unseen = Vec::new();
        let mut refused = Vec::new();
        match claim.wants {
            ClaimWants::Named(mut names) => {
                names.sort();
                for name in names {
                    match self.ownership.state_since(&name) {
                        // Not seen yet, so never handed over either.
                        None if claim.scope == ClaimScope::Delivered => refused.push(Refusal {
                            name,
                            state: RefusedState::Pending,
                        }),
                        None => unseen.push(name),
                        Some((state, since)) => {
                            match claimable(state, since, claim.scope, self.context_since) {
                                Ok(()) => granted.push(name),
                                Err(state) => refused.push(Refusal { name, state }),
                            }
                        }
                    }
                }
            }
            ClaimWants::Oldest(limit) => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                granted = match claim.scope {
                    ClaimScope::Pending => self.ownership.pending().take(limit).cloned().collect(),
                    ClaimScope::Unread | ClaimScope::Delivered => self
                        .ownership
                        .iter()
                        .filter(|(_, state, since)| {
                            claimable(state, *since, claim.scope, self.context_since).is_ok()
                        })
                        .take(limit)
                        .map(|(name, _, _)| name.clone())
                        .collect(),
                };
            }
        }
        if let Some(budget) = claim.name_bytes {
            let (kept, over) = within_budget(granted, unseen, budget);
            granted = kept.0;
            unseen = kept.1;
            refused.extend(over.into_iter().map(|name| Refusal {
                name,
                state: RefusedState::OverBudget,
            }));
            refused.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let taken = granted.len() + unseen.len();
        let refused_count = refused.len();
        let mut all: Vec<MessageName> = granted.iter().chain(unseen.iter()).cloned().collect();
        all.sort();
        self.take_for_hook(granted, unseen, &owner);
        self.record(Decision::Claimed {
            claim: claim.claim,
            granted: taken,
            refused: refused_count,
            refusal: None,
        });
        let not_granted = self.ownership.len().saturating_sub(
            all.iter()
                .filter(|name| self.ownership.contains(name))
                .count(),
        );
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Claimed(Claimed {
                claim: claim.claim,
                granted: all,
                refused,
                refusal: None,
                not_granted,
            })));
    }

    fn refuse_claim(&mut self, claim: u64, refusal: ClaimRefusal) {
        self.record(Decision::Claimed {
            claim,
            granted: 0,
            refused: 0,
            refusal: Some(refusal),
        });
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Claimed(Claimed {
                claim,
                granted: Vec::new(),
                refused: Vec::new(),
                refusal: Some(refusal),
                not_granted: self.ownership.len(),
            })));
    }

    /// Makes `known` hook-owned now and `unseen` hook-owned when seen.
    fn take_for_hook(
        &mut self,
        known: Vec<MessageName>,
        unseen: Vec<MessageName>,
        owner: &MessageState,
    ) {
        // A file already hook-owned by the same incarnation keeps its state
        // and its time: a repeated receipt changes nothing, writes no
        // journal and records nothing.
        let known: Vec<MessageName> = known
            .into_iter()
            .filter(|name| self.ownership.state(name) != Some(owner))
            .collect();
        if known.is_empty() && unseen.is_empty() {
            return;
        }
        self.ownership.set(&known, owner, self.now);
        for name in &unseen {
            self.ownership.expect(name.clone(), owner.clone(), self.now);
        }
        self.journal_dirty = true;
        self.record(Decision::HookOwned {
            messages: known,
            unseen,
        });
    }

    /// Ends the lease, if one was granted, and records why. Without a lease
    /// nothing ended: the reason is still kept (status shows it, and held
    /// work is announced by `held` when its reason changes), but there is no
    /// record, so evidence that changes nothing writes nothing.
    fn end_lease(&mut self, reason: HoldReason) {
        let was_granted = matches!(self.lease, LeaseSlot::Granted(_));
        self.lease = LeaseSlot::ended(reason.clone(), self.now);
        if was_granted {
            self.record(Decision::LeaseEnded { reason });
        }
    }

    fn release(&mut self, names: Vec<MessageName>, cause: ReleaseCause) {
        if names.is_empty() {
            return;
        }
        self.ownership.set(&names, &MessageState::Pending, self.now);
        self.journal_dirty = true;
        self.record(Decision::Released {
            cause,
            messages: names,
        });
    }

    // ----- pty -----

    fn on_pty_status(&mut self, identity: Identity, revision: u64) {
        self.pty.reachable = true;
        self.pty.revision = Some(revision);
        if self.read_revision.is_none_or(|read| revision > read) {
            self.unread_move_since.get_or_insert(self.now);
        }
        // The host answering ends "unreachable"; an error waits for its retry
        // timer, and an exited harness for a new one.
        if self
            .pty_block
            .as_ref()
            .is_some_and(|block| block.reason == HoldReason::PtyUnreachable)
        {
            self.pty_block = None;
        }
        if self.pty.identity.as_ref() == Some(&identity) {
            return;
        }
        // A new harness (or launch): nothing that blocked the old one applies,
        // and no reading of the old one's screen.
        self.pty_block = None;
        self.read_revision = None;
        self.withheld_notice = None;
        self.pty_retry.succeeded();
        let previous = self.pty.identity.replace(identity.clone());
        self.record(Decision::PtyIdentity {
            previous,
            current: identity.clone(),
        });
        if self.adapter.is_up() {
            self.outputs.push_back(Output::ToAdapter(Downlink::Pty {
                identity: Some(identity.clone()),
            }));
        }
        if let LeaseSlot::Granted(lease) = &self.lease
            && let Some(part) = lease.identity.mismatch(&identity)
        {
            self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.ownership
            .forget_memories_outside(&identity.incarnation);
        let stale = self.ownership.owned_outside(&identity.incarnation);
        self.release(stale, ReleaseCause::IncarnationChanged);
        if !self.returning() {
            self.typed_in_a_gone_terminal();
        }
    }

    /// The terminal the notice was pasted into is gone (a new identity):
    /// no screen can confirm it now, and it was never sent, so its files
    /// are pending again.
    fn typed_in_a_gone_terminal(&mut self) {
        let files = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return;
        };
        self.record(Decision::ReturnWithheld {
            notice: typed.notice,
            why: "the terminal it was typed into is gone".into(),
            messages: files.clone(),
        });
        self.release(files, ReleaseCause::IncarnationChanged);
    }

    /// Whether the transaction in flight is a typed notice's Return.
    fn returning(&self) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|flight| matches!(flight.phase, Phase::Return))
    }

    /// `flight` wrote nothing: its `messages` are pending again, unless it
    /// was a Return, whose files stay in flight under their typed notice.
    fn unwritten(&mut self, flight: &InFlight, messages: &[MessageName]) {
        if !matches!(flight.phase, Phase::Return) {
            self.ownership
                .set(messages, &MessageState::Pending, self.now);
        }
    }

    fn take_flight(&mut self, request: RequestId) -> Option<(InFlight, Vec<MessageName>)> {
        if self.in_flight.as_ref().map(|flight| flight.request) != Some(request) {
            self.record(Decision::Ignored {
                what: format!("reply for request {request}, which is not in flight"),
            });
            return None;
        }
        self.end_flight()
    }

    /// Ends the in-flight transaction, returning it with the files it still
    /// owns: files archived or hook-owned meanwhile are no longer its own.
    fn end_flight(&mut self) -> Option<(InFlight, Vec<MessageName>)> {
        let flight = self.in_flight.take()?;
        let request = flight.owner;
        let still: Vec<MessageName> = flight
            .messages
            .iter()
            .filter(|name| self.ownership.state(name) == Some(&MessageState::InFlight { request }))
            .cloned()
            .collect();
        Some((flight, still))
    }

    fn on_sent(&mut self, request: RequestId, revision: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.saw_revision(revision);
        self.pty_retry.succeeded();
        match flight.phase {
            Phase::Paste { text } => {
                return self.on_pasted(flight.request, flight.asked_at, text, revision, messages);
            }
            Phase::Return => self.typed = None,
            Phase::TakeOut => {
                // Out of the composer: the next empty one gives its files
                // back to ring again.
                self.withheld_notice = None;
                return self.record(Decision::Sent {
                    request,
                    revision,
                    messages,
                });
            }
            Phase::Whole => {}
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: true,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.record(Decision::Sent {
            request,
            revision,
            messages,
        });
    }

    /// The paste is in the composer; its Return waits for the adapter to
    /// see it there, alone. The adapter is told what to look for.
    fn on_pasted(
        &mut self,
        request: RequestId,
        asked_at: Time,
        text: String,
        revision: u64,
        messages: Vec<MessageName>,
    ) {
        let tunables = &self.config.tunables;
        self.typed = Some(TypedNotice {
            notice: request,
            messages: messages.clone(),
            incarnation: self
                .pty
                .identity
                .as_ref()
                .map(|identity| identity.incarnation.clone()),
            asked_at,
            pasted_revision: revision,
            return_by: asked_at.saturating_add(tunables.return_within()),
            submit_after: self.now.saturating_add(tunables.submit_delay),
        });
        self.record(Decision::Pasted {
            request,
            revision,
            messages,
        });
        if self.adapter.is_up() {
            self.outputs
                .push_back(Output::ToAdapter(Downlink::Typed { request, text }));
        }
    }

    /// No Return for the typed notice: `why`. It waits in the composer,
    /// unsent, for the person; its files are staged (unconfirmed) until an
    /// empty idle composer before any turn says the notice is gone.
    fn withhold_return(&mut self, why: String) {
        // Evidence that shows the notice alone stays, to take it out (at
        // once, or when the terminal may be written to again).
        if self.end_typed(why.clone(), true)
            && !self.take_out_withheld()
            && !self.lease_shows_withheld()
        {
            self.end_lease(HoldReason::ReturnWithheld { why });
        }
    }

    /// A turn began while the notice waited for its Return: the person
    /// sent it (an Enter of theirs), so it went with that turn. Its files
    /// are staged, unconfirmed, and nothing gives them back on an empty
    /// composer. A Return in flight is settled by its reply instead.
    fn typed_sent_by_a_turn(&mut self) {
        if !self.returning() {
            self.end_typed(
                "a turn began before the Return: the notice went with it".into(),
                false,
            );
        }
    }

    /// Ends the typed notice without a Return of DING's: its files still
    /// in flight under it are staged, unconfirmed, and when `unsent` they
    /// wait for an empty composer to ring again. Whether there was one.
    fn end_typed(&mut self, why: String, unsent: bool) -> bool {
        let messages = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return false;
        };
        let staged = MessageState::Staged {
            incarnation: typed.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        if unsent {
            self.interrupted.extend(messages.iter().cloned());
            self.withheld_notice = Some(typed.notice);
        }
        self.record(Decision::ReturnWithheld {
            notice: typed.notice,
            why,
            messages,
        });
        true
    }

    fn on_conflict(&mut self, request: RequestId, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        // A Return's conflict leaves the notice typed: it waits for new
        // evidence of the composer.
        self.unwritten(&flight, &messages);
        let expected = flight.expected_revision.unwrap_or_default();
        self.record(Decision::Conflict {
            request,
            expected,
            actual,
            messages,
        });
        self.end_lease(HoldReason::RevisionConflict { expected, actual });
    }

    /// The terminal matched the evidence but had not been quiet long
    /// enough. Nothing was written and the screen the lease vouched for is
    /// still the screen: the lease comes back, and the PTY waits until the
    /// host said the fence would pass (a new lease meanwhile changes
    /// nothing about how long the person has been quiet).
    fn on_unsettled(
        &mut self,
        request: RequestId,
        part: QuietPart,
        quiet_for: Duration,
        retry_in: Duration,
        actual: u64,
    ) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        let quiet_for_ms = u64::try_from(quiet_for.as_millis()).unwrap_or(u64::MAX);
        if let (Phase::Return, Some(typed)) = (&flight.phase, &self.typed)
            && typed.typed_over(part, quiet_for, flight.asked_at)
        {
            let why = format!("a person typed after the paste ({quiet_for_ms} ms ago)");
            return self.withhold_return(why);
        }
        self.unwritten(&flight, &messages);
        self.record(Decision::Unsettled {
            request,
            part,
            quiet_for_ms,
            retry_in_ms: u64::try_from(retry_in.as_millis()).unwrap_or(u64::MAX),
            messages,
        });
        let spent_on_this = matches!(
            &self.lease,
            LeaseSlot::Ended {
                reason: HoldReason::LeaseSpent,
                ..
            }
        );
        if let Some(lease) = flight.lease
            && spent_on_this
            && flight.expected_revision == Some(actual)
        {
            self.lease = LeaseSlot::Granted(lease);
        }
        // At least a millisecond: a host answering 0 must not make a spin.
        let retry_in = retry_in.max(Duration::from_millis(1));
        self.block_pty(PtyBlock {
            reason: HoldReason::TerminalUnsettled { part, quiet_for_ms },
            since: self.now,
            retry_at: Some(self.now.saturating_add(retry_in)),
        });
    }

    /// A person typed while the transaction ran; the host wrote `written`
    /// bytes of it and none after. Whatever reached the composer was not
    /// submitted by DING, and may not be all of the notice: the files count
    /// as staged (unconfirmed), like an outcome DING cannot know, and
    /// nothing more is typed on this lease.
    fn on_interrupted(&mut self, request: RequestId, written: usize, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        if matches!(flight.phase, Phase::Return) {
            return self.withhold_return("a person typed during the Return".into());
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.interrupted.extend(messages.iter().cloned());
        self.record(Decision::Interrupted {
            request,
            written,
            messages,
        });
        self.end_lease(HoldReason::TypingInterrupted { written });
    }

    /// The PTY host took the typed notice back out of the composer before
    /// its Return, because a person's input came first (their keys landed
    /// in the composer they saw): the notice was never sent, so its files
    /// are pending again, and the lease it was typed under is over. A
    /// Return in flight meanwhile is refused by its compare; its reply
    /// finds nothing of its own left.
    fn on_withdrawn(&mut self, actual: u64) {
        self.saw_revision(actual);
        let files = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return self.record(Decision::Ignored {
                what: "a withdrawn paste, with no typed notice awaiting its Return".into(),
            });
        };
        self.record(Decision::Withdrawn {
            notice: typed.notice,
            revision: actual,
            messages: files.clone(),
        });
        self.give_back(files, ReleaseCause::Withdrawn);
        self.end_lease(HoldReason::NoticeWithdrawn);
    }

    /// The host's revision after something of DING's it reports: revisions
    /// never go back.
    fn saw_revision(&mut self, revision: u64) {
        self.pty.revision = Some(
            self.pty
                .revision
                .map_or(revision, |known| known.max(revision)),
        );
    }

    /// The composer is empty and idle, and no turn began since a person
    /// interrupted a notice: it was deleted unsent, so its files, if
    /// still staged, are pending again.
    fn release_interrupted_unsent(&mut self) {
        // An empty composer holds no withheld notice either.
        self.withheld_notice = None;
        let unsent: Vec<MessageName> = std::mem::take(&mut self.interrupted)
            .into_iter()
            .filter(|name| {
                matches!(
                    self.ownership.state(name),
                    Some(MessageState::Staged { .. })
                )
            })
            .collect();
        self.give_back(unsent, ReleaseCause::InterruptedUnsent);
    }

    /// Makes `names` pending again and shows them as given back, for
    /// `cause`, in status.
    fn give_back(&mut self, names: Vec<MessageName>, cause: ReleaseCause) {
        for name in &names {
            self.given_back.insert(name.clone(), (cause, self.now));
        }
        self.release(names, cause);
    }

    fn on_pty_error(&mut self, request: RequestId, detail: String) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        // Zero bytes: a Return's notice is still typed, and may be
        // confirmed again before its bound.
        self.unwritten(&flight, &messages);
        self.record(Decision::SendFailed {
            request,
            detail: detail.clone(),
            messages,
        });
        // Retrying at once would spin against a failing (or busy) host.
        self.block_pty_for_retry(detail);
    }

    /// Blocks the PTY for a backoff that doubles with every error and resets
    /// with a successful send or a new harness.
    fn block_pty_for_retry(&mut self, detail: String) {
        let delay = self.pty_retry.failed();
        self.block_pty(PtyBlock {
            reason: HoldReason::PtyError { detail },
            since: self.now,
            retry_at: Some(self.now.saturating_add(delay)),
        });
    }

    /// Blocks the PTY, unless its harness has exited: that block lasts until
    /// a new harness reports in (spec §4.3), so a later error, timeout or
    /// outage must not replace it with one that a timer or a status of the
    /// dead harness would lift.
    fn block_pty(&mut self, block: PtyBlock) {
        if self
            .pty_block
            .as_ref()
            .is_some_and(|current| matches!(current.reason, HoldReason::HarnessExited { .. }))
        {
            return;
        }
        self.pty_block = Some(block);
    }

    fn on_pty_mismatch(&mut self, request: RequestId, part: IdentityPart, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        if matches!(flight.phase, Phase::Return) {
            self.typed_in_a_gone_terminal();
            return self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.ownership
            .set(&messages, &MessageState::Pending, self.now);
        self.record(Decision::SendFailed {
            request,
            detail: format!("{part} mismatch"),
            messages,
        });
        // The lease was about another terminal: end it. The host's next
        // status tells the engine the identity it really has.
        self.end_lease(HoldReason::IdentityMismatch { part });
    }

    fn on_harness_exited(&mut self, request: Option<RequestId>, status: String) {
        if let Some(request) = request
            && let Some((flight, messages)) = self.take_flight(request)
        {
            self.unwritten(&flight, &messages);
            self.record(Decision::SendFailed {
                request,
                detail: "the harness has exited".into(),
                messages,
            });
        }
        if self.typed.is_some() && self.in_flight.is_none() {
            self.withhold_return("the harness exited".into());
        }
        let reason = HoldReason::HarnessExited {
            status: status.clone(),
        };
        if self
            .pty_block
            .as_ref()
            .is_some_and(|block| block.reason == reason)
        {
            return;
        }
        self.record(Decision::HarnessExited { status });
        self.pty_block = Some(PtyBlock {
            reason,
            since: self.now,
            retry_at: None,
        });
    }

    fn on_pty_unreachable(&mut self) {
        if self.in_flight.is_some() {
            self.outcome_unknown("pty unreachable during the transaction");
        }
        if self.pty.reachable || self.pty_block.is_none() {
            self.pty.reachable = false;
            self.block_pty(PtyBlock {
                reason: HoldReason::PtyUnreachable,
                since: self.now,
                retry_at: None,
            });
            self.record(Decision::PtyUnreachable);
        }
    }

    /// The in-flight transaction may or may not have been written. Its files
    /// count as staged (unconfirmed): typing twice on a guess is worse than
    /// waiting for the re-ring rule, and the files stay unread on disk.
    fn outcome_unknown(&mut self, why: &str) {
        let Some((flight, messages)) = self.end_flight() else {
            return;
        };
        let request = flight.request;
        if matches!(flight.phase, Phase::Return) {
            // The Return may or may not be written: no turn after it says
            // it was not.
            self.typed = None;
            self.interrupted.extend(messages.iter().cloned());
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.record(Decision::OutcomeUnknown {
            request,
            why: why.into(),
            messages,
        });
    }

    // ----- delivery -----

    /// Whether pending work may be sent now, and under which fence. `Ok(None)`
    /// is an unconditional send (aggressive); `Ok(Some(..))` a compare-and-send.
    fn gate(&self, now: Time) -> Result<Option<(Identity, u64)>, HoldReason> {
        if self.in_flight.is_some() {
            return Err(HoldReason::AwaitingReply);
        }
        if self.stopping {
            return Err(HoldReason::Stopping);
        }
        if self.typed.is_some() {
            return Err(HoldReason::AwaitingReturn);
        }
        if self.gathering(now) {
            return Err(HoldReason::Gathering);
        }
        if let Some(block) = &self.pty_block {
            return Err(block.reason.clone());
        }
        let Some(pty_identity) = self.pty.identity.as_ref() else {
            return Err(HoldReason::PtyUnknown);
        };
        if self.config.policy == Policy::Aggressive {
            return Ok(None);
        }
        match &self.adapter.phase {
            AdapterPhase::Disabled | AdapterPhase::Starting { .. } => {
                return Err(HoldReason::AdapterStarting);
            }
            AdapterPhase::Down { down, .. } => {
                return Err(HoldReason::AdapterDown { down: down.clone() });
            }
            AdapterPhase::Up { .. } => {
                if self
                    .silent_since()
                    .is_some_and(|since| now.since(since) >= self.config.tunables.adapter_silence)
                {
                    return Err(HoldReason::AdapterSilent);
                }
            }
        }
        let lease = match &self.lease {
            LeaseSlot::Ended { reason, .. } => return Err(reason.clone()),
            LeaseSlot::Granted(lease) => lease,
        };
        // The evidence's own verdict comes before its age: "composer
        // nonempty" explains more than "expired" when both are true.
        match lease.composer {
            Composer::Empty => {}
            Composer::Nonempty => return Err(HoldReason::ComposerNonempty),
            Composer::Unknown => return Err(HoldReason::ComposerUnknown),
        }
        if now >= lease.expires_at {
            return Err(HoldReason::LeaseExpired);
        }
        if let Some(part) = lease.identity.mismatch(pty_identity) {
            return Err(HoldReason::IdentityMismatch { part });
        }
        let revision = lease.revision.ok_or(HoldReason::RevisionUnknown)?;
        Ok(Some((lease.identity.clone(), revision)))
    }

    fn deliver(&mut self) {
        if self.take_out_withheld() {
            return;
        }
        if self.typed.is_some() {
            return self.submit_typed();
        }
        if self.ownership.pending_len() == 0 {
            self.hold = None;
            return;
        }
        let fence = match self.gate(self.now) {
            Ok(fence) => fence,
            Err(reason) => return self.announce_hold(reason),
        };
        let tunables = &self.config.tunables;
        let Some(notice) = Notice::build(
            self.ownership.pending(),
            self.ownership.pending_len(),
            tunables.notice_max_files,
            &self.config.agent,
            &self.config.unread_dir,
        ) else {
            return;
        };
        // The careful policy writes the paste alone; its Return is a
        // compare-and-send of its own (`submit_typed`).
        let (transport, phase) = match fence {
            Some(_) => (
                Transport::paste(&notice),
                Phase::Paste {
                    text: notice.text().to_owned(),
                },
            ),
            None => (
                Transport::combined(&notice, tunables.submit_delay),
                Phase::Whole,
            ),
        };
        let time_fence = tunables.time_fence();
        let input_hold = tunables.input_hold();
        let messages = notice.named().to_vec();
        let request = self.next_request;
        self.next_request += 1;
        self.ownership
            .set(&messages, &MessageState::InFlight { request }, self.now);
        let expected_revision = fence.as_ref().map(|(_, revision)| *revision);
        self.in_flight = Some(InFlight {
            request,
            owner: request,
            phase,
            asked_at: self.now,
            messages: messages.clone(),
            expected_revision,
            incarnation: self
                .pty
                .identity
                .as_ref()
                .map(|identity| identity.incarnation.clone()),
            deadline: self.now.saturating_add(self.config.pty_reply_timeout),
            lease: match &self.lease {
                LeaseSlot::Granted(lease) if fence.is_some() => Some(lease.clone()),
                _ => None,
            },
        });
        self.hold = None;
        self.record(Decision::Rang {
            request,
            messages: messages.clone(),
            conditional: fence.is_some(),
            expected_revision,
        });
        match fence {
            Some((identity, expected_revision)) => {
                let withdraw = match &self.lease {
                    LeaseSlot::Granted(lease) => {
                        lease.withdraw.as_ref().map(WithdrawKeys::transport)
                    }
                    LeaseSlot::Ended { .. } => None,
                };
                // A lease authorizes one attempt; the next needs fresh evidence.
                self.lease = LeaseSlot::ended(HoldReason::LeaseSpent, self.now);
                self.outputs.push_back(Output::SendIf(SendIf {
                    request,
                    identity,
                    expected_revision,
                    fence: time_fence,
                    transport,
                    messages,
                    // The paste's Return comes next: a person's typed text
                    // waits for it instead of joining the notice.
                    hold_input: Some(input_hold),
                    withdraw,
                }));
            }
            None => self.outputs.push_back(Output::Send(Send {
                request,
                transport,
                messages,
            })),
        }
    }

    /// Ends a typed notice that needs no Return any more: its files all
    /// left (archived, or a hook received them: the person sent it), or
    /// its bound passed (spec §4.2). A Return in flight is settled by its
    /// reply instead.
    fn settle_typed(&mut self) {
        if self.in_flight.is_some() {
            return;
        }
        let Some(typed) = &self.typed else {
            return;
        };
        if self.typed_files().is_empty() {
            self.typed = None;
        } else if self.now >= typed.return_by {
            let within = self.config.tunables.return_within().as_millis();
            let why =
                format!("no screen showed the notice alone in the composer within {within} ms");
            self.withhold_return(why);
        }
    }

    /// Takes a withheld notice back out of the composer once fresh
    /// evidence shows it there alone (the provider's keys, on that
    /// evidence's revision and the usual time fence). Whether it asked.
    fn take_out_withheld(&mut self) -> bool {
        let Some(notice) = self.withheld_notice else {
            return false;
        };
        if self.in_flight.is_some() || self.pty_block.is_some() || self.stopping {
            return false;
        }
        let (LeaseSlot::Granted(lease), Some(current)) = (&self.lease, self.pty.identity.as_ref())
        else {
            return false;
        };
        let shown_alone = self.lease_shows_withheld()
            && lease.composer == Composer::Nonempty
            && self.now < lease.expires_at
            && lease.identity.mismatch(current).is_none();
        let (true, Some(revision), Some(keys)) = (shown_alone, lease.revision, &lease.withdraw)
        else {
            return false;
        };
        let second = SecondPhase {
            phase: Phase::TakeOut,
            owner: None,
            messages: Vec::new(),
            incarnation: Some(current.incarnation.clone()),
            fence: self.config.tunables.time_fence(),
            transport: keys.transport(),
        };
        let lease = lease.clone();
        self.send_on_lease(lease, revision, second, |request| Decision::TakingOut {
            request,
            notice,
            expected_revision: revision,
        });
        true
    }

    /// Whether the lease names the withheld notice as what the composer
    /// holds, alone.
    fn lease_shows_withheld(&self) -> bool {
        matches!(
            &self.lease,
            LeaseSlot::Granted(lease) if lease.typed.is_some() && lease.typed == self.withheld_notice
        )
    }

    /// The typed notice's files still in flight under it.
    fn typed_files(&self) -> Vec<MessageName> {
        let Some(typed) = &self.typed else {
            return Vec::new();
        };
        let owner = MessageState::InFlight {
            request: typed.notice,
        };
        typed
            .messages
            .iter()
            .filter(|name| self.ownership.state(name) == Some(&owner))
            .cloned()
            .collect()
    }

    /// The typed notice's Return, once fresh evidence confirms the notice
    /// (spec §4.2): on the confirming lease's revision, with no person's
    /// input since the paste was asked for. Without that by its bound, no
    /// Return.
    fn submit_typed(&mut self) {
        if self.in_flight.is_some() {
            return;
        }
        self.settle_typed();
        let Some(typed) = &self.typed else {
            return self.deliver();
        };
        let messages = self.typed_files();
        if let Some(block) = &self.pty_block {
            let reason = block.reason.clone();
            return self.announce_hold(reason);
        }
        let confirmed = match (&self.lease, self.pty.identity.as_ref()) {
            (LeaseSlot::Granted(lease), Some(current))
                if self.now < lease.expires_at && lease.identity.mismatch(current).is_none() =>
            {
                typed
                    .confirmed_by(lease)
                    .map(|revision| (lease.clone(), revision))
            }
            _ => None,
        };
        let Some((lease, expected_revision)) = confirmed.filter(|_| self.now >= typed.submit_after)
        else {
            return self.announce_hold(HoldReason::AwaitingReturn);
        };
        let fence = typed.return_fence(self.config.tunables.time_fence(), self.now);
        let notice = typed.notice;
        let second = SecondPhase {
            phase: Phase::Return,
            owner: Some(notice),
            messages,
            incarnation: typed.incarnation.clone(),
            fence,
            transport: Transport::submit(),
        };
        self.send_on_lease(lease, expected_revision, second, |request| {
            Decision::Submitting {
                request,
                notice,
                expected_revision,
            }
        });
    }

    /// Spends `lease` on a compare-and-send on its `revision` of what
    /// `second` writes (the Return of a typed notice, or the keys that take
    /// a withheld one back out), recording `decision` for its request.
    fn send_on_lease(
        &mut self,
        lease: Lease,
        revision: u64,
        second: SecondPhase,
        decision: impl FnOnce(RequestId) -> Decision,
    ) {
        let request = self.next_request;
        self.next_request += 1;
        self.in_flight = Some(InFlight {
            request,
            owner: second.owner.unwrap_or(request),
            phase: second.phase,
            asked_at: self.now,
            messages: second.messages.clone(),
            expected_revision: Some(revision),
            incarnation: second.incarnation,
            deadline: self.now.saturating_add(self.config.pty_reply_timeout),
            lease: Some(lease.clone()),
        });
        self.lease = LeaseSlot::ended(HoldReason::LeaseSpent, self.now);
        self.hold = None;
        self.record(decision(request));
        self.outputs.push_back(Output::SendIf(SendIf {
            request,
            identity: lease.identity,
            expected_revision: revision,
            fence: second.fence,
            transport: second.transport,
            messages: second.messages,
            hold_input: None,
            withdraw: None,
        }));
    }

    /// Since when an adapter that is up has owed a line and said none. It
    /// owes one once evidence is wanted and it has not spoken since; while
    /// its last evidence allows delivery (a lease with an empty composer,
    /// which it keeps fresh), from its last line; and once the terminal
    /// showed a revision its last evidence was not read at (it watches the
    /// terminal and reads every move). Evidence that holds is owed nothing
    /// more while nothing moves, so a held message costs no heartbeat; and
    /// an adapter owes nothing while nothing is wanted, so it may sleep for
    /// hours and still answer the next demand in time.
    fn silent_since(&self) -> Option<Time> {
        let AdapterPhase::Up {
            since, last_line, ..
        } = &self.adapter.phase
        else {
            return None;
        };
        let spoke = last_line.unwrap_or(*since);
        let wanted = self.demand.filter(|demand| demand.wanted)?;
        if wanted.since >= spoke {
            return Some(wanted.since);
        }
        let ready =
            matches!(&self.lease, LeaseSlot::Granted(lease) if lease.composer == Composer::Empty);
        [ready.then_some(spoke), self.unread_move_since]
            .into_iter()
            .flatten()
            .min()
    }

    /// Tells the adapter when evidence becomes wanted or unwanted: wanted
    /// while unread work exists that terminal input could deliver (pending,
    /// or in flight, which a conflict returns to pending). A transaction
    /// whose files were all archived or taken by a hook meanwhile holds no
    /// such work.
    fn signal_demand(&mut self) {
        if !self.adapter.is_up() {
            return;
        }
        let in_flight = self.in_flight.as_ref().is_some_and(|flight| {
            let state = MessageState::InFlight {
                request: flight.request,
            };
            flight
                .messages
                .iter()
                .any(|name| self.ownership.state(name) == Some(&state))
        });
        let deliverable = self.ownership.pending_len() > 0 && !self.gathering(self.now);
        // A withheld notice may yet be drawn, and a notice a person
        // interrupted is unsent once an empty composer shows: someone must
        // read the screen to see either.
        let unsure = self.withheld_notice.is_some() || !self.interrupted.is_empty();
        let wanted = deliverable || in_flight || self.typed.is_some() || unsure;
        if self.demand.is_some_and(|demand| demand.wanted == wanted) {
            return;
        }
        self.demand = Some(Demand {
            wanted,
            since: self.now,
        });
        self.record(Decision::EvidenceWanted { wanted });
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Evidence { wanted }));
    }

    fn announce_hold(&mut self, reason: HoldReason) {
        if self.hold.as_ref().is_some_and(|(held, _)| *held == reason) {
            return;
        }
        let since = self.hold_view(reason.clone(), self.now).since;
        self.hold = Some((reason.clone(), since));
        let oldest = self.ownership.pending().next().cloned();
        self.record(Decision::Held {
            reason,
            pending: self.ownership.pending_len(),
            oldest,
        });
    }
}

/// The granted (known) and unseen names that fit `budget` bytes of escaped
/// names joined with `", "`, in name order, always at least the first; and
/// the names that did not fit.
#[allow(clippy::type_complexity)]
fn within_budget(
    known: Vec<MessageName>,
    unseen: Vec<MessageName>,
    budget: u64,
) -> ((Vec<MessageName>, Vec<MessageName>), Vec<MessageName>) {
    let mut all: Vec<(MessageName, bool)> = known
        .into_iter()
        .map(|name| (name, true))
        .chain(unseen.into_iter().map(|name| (name, false)))
        .collect();
    all.sort();
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let (mut kept_known, mut kept_unseen, mut over) = (Vec::new(), Vec::new(), Vec::new());
    let mut used = 0usize;
    for (index, (name, is_known)) in all.into_iter().enumerate() {
        let cost = escape(name.as_str()).len() + if index == 0 { 0 } else { 2 };
        if index > 0 && (used + cost > budget || !over.is_empty()) {
            over.push(name);
            continue;
        }
        used += cost;
        if is_known {
            kept_known.push(name);
        } else {
            kept_unseen.push(name);
        }
    }
    ((kept_known, kept_unseen), over)
}

/// Whether a claim of `scope` may take a file in `state` since `since`,
/// the harness's context having last begun again at `context_since`. A
/// file rung since then was typed into the new context: surfacing the
/// backlog again (scope `unread`) must not say it twice in one request
/// (seen after a compaction: the notice typed at the idle screen and the
/// next prompt's `unread` backlog, one turn).
fn claimable(
    state: &MessageState,
    since: Time,
    scope: ClaimScope,
    context_since: Option<Time>,
) -> Result<(), RefusedState> {
    let typed_into_this_context = context_since.is_some_and(|began| since >= began);
    match (state, scope) {
        (MessageState::Staged { .. }, ClaimScope::Unread | ClaimScope::Delivered)
            if typed_into_this_context =>
        {
            Err(RefusedState::Staged)
        }
        (MessageState::Pending, ClaimScope::Delivered) => Err(RefusedState::Pending),
        (MessageState::Pending, _) => Ok(()),
        (MessageState::InFlight { .. }, _) => Err(RefusedState::InFlight),
        (
            MessageState::Staged { .. } | MessageState::HookOwned { .. },
            ClaimScope::Unread | ClaimScope::Delivered,
        ) => Ok(()),
        (MessageState::Staged { .. }, ClaimScope::Pending) => Err(RefusedState::Staged),
        (MessageState::HookOwned { .. }, ClaimScope::Pending) => Err(RefusedState::HookOwned),
    }
}
