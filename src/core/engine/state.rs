//! What the engine remembers between inputs, and the few writes every
//! handler shares: recording a decision, ending the lease, releasing files.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::core::adapter::Adapter;
use crate::core::backoff::Backoff;
use crate::core::config::EngineConfig;
use crate::core::decision::{Decision, Record, ReleaseCause};
use crate::core::gather::Gather;
use crate::core::hold::HoldReason;
use crate::core::identity::Identity;
use crate::core::journal::Journal;
use crate::core::lease::{Lease, LeaseSlot};
use crate::core::message::MessageName;
use crate::core::ownership::{MessageState, Ownership, RequestId};
use crate::core::status::PtyView;
use crate::core::time::Time;
use crate::core::typed::TypedNotice;

use super::output::Output;

/// Which part of a delivery a transaction writes.
#[derive(Clone, Debug)]
pub(super) enum Phase {
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

/// The transaction whose reply is awaited.
#[derive(Clone, Debug)]
pub(super) struct InFlight {
    pub(super) request: RequestId,
    /// The request the files are in flight under: this one's, or for a
    /// Return, its notice's paste.
    pub(super) owner: RequestId,
    pub(super) phase: Phase,
    /// When the engine asked for it.
    pub(super) asked_at: Time,
    pub(super) messages: Vec<MessageName>,
    pub(super) expected_revision: Option<u64>,
    pub(super) incarnation: Option<String>,
    pub(super) deadline: Time,
    /// The lease the compare-and-send spent: a time-fence refusal gives it
    /// back, because the screen it vouched for has not changed.
    pub(super) lease: Option<Lease>,
}

/// Why the PTY is not to be used for now, and until when.
#[derive(Clone, Debug)]
pub(super) struct PtyBlock {
    pub(super) reason: HoldReason,
    pub(super) since: Time,
    /// When to try again (an engine timer, with backoff). `None`: until the
    /// host reports in again (unreachable) or starts a new harness (exited).
    pub(super) retry_at: Option<Time>,
}

/// How the PTY is tried again after an error: after 250 ms, doubling per
/// error up to 8 s.
const PTY_RETRY: Backoff = Backoff::new(
    std::time::Duration::from_millis(250),
    std::time::Duration::from_secs(8),
);

/// The demand signal as last told to the adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Demand {
    pub(super) wanted: bool,
    pub(super) since: Time,
}

pub struct Engine {
    pub(super) config: EngineConfig,
    pub(super) now: Time,
    pub(super) ownership: Ownership,
    /// When the harness's context last began again (a compaction, a
    /// clear, a crash): a file typed after it was typed into the new
    /// context. A sidecar started again from a journal knows none before
    /// its start: from then on, what it rings or hands to a hook went into
    /// the context there is, so a second backlog claim does not say it
    /// again (a duplicated `SessionStart` just after a restart).
    pub(super) context_since: Option<Time>,
    /// Files whose typing a person interrupted, while nothing says whether
    /// the notice they left in the composer was sent: an empty idle
    /// composer before any turn says it was not.
    pub(super) interrupted: Vec<MessageName>,
    /// DING took the `interrupted` files' notice back out of the composer
    /// itself: a turn that begins before an empty composer shows it gone
    /// did not carry it (unless the harness ignored the keys), so the
    /// files are owed again rather than counted as sent.
    pub(super) taken_out: bool,
    pub(super) adapter: Adapter,
    pub(super) lease: LeaseSlot,
    pub(super) pty: PtyView,
    pub(super) pty_block: Option<PtyBlock>,
    pub(super) in_flight: Option<InFlight>,
    /// A notice pasted and not yet submitted.
    pub(super) typed: Option<TypedNotice>,
    /// A notice whose Return was withheld unsent: a harness may still draw
    /// it in the composer (one that waited for a terminal's answer drew it
    /// seconds later), where the person's next prompt would go out glued
    /// behind it. Shown there alone, it is taken back out.
    pub(super) withheld_notice: Option<RequestId>,
    /// The text of the last notice pasted and told to the adapter, by its
    /// request: a respawned adapter is told it again while the notice
    /// awaits its Return or is withheld, or it could never show the notice
    /// alone in the composer (for the Return, or to take it back out).
    pub(super) pasted_text: Option<(RequestId, String)>,
    /// A screen read since the last paste showed a composer that is not
    /// empty: the paste was drawn. Until then an empty composer after a
    /// withheld notice proves nothing (the harness may not have read or
    /// drawn the paste yet, or drew half a frame), so its files are not
    /// given back to ring again on it.
    pub(super) paste_drawn: bool,
    /// The revision the last paste was written at: a reading no later
    /// shows nothing the harness drew since.
    pub(super) pasted_revision: u64,
    /// Files claims granted to the adapter now up whose hooks have not yet
    /// confirmed printing them (`printed`) nor given them back
    /// (`release`): an adapter that dies meanwhile leaves them in doubt,
    /// and they are given back (spec §2.2).
    pub(super) claims_in_doubt: BTreeSet<MessageName>,
    /// The runtime is stopping: nothing new starts ([`Input::Stopping`]).
    ///
    /// [`Input::Stopping`]: super::Input::Stopping
    pub(super) stopping: bool,
    /// The hold last announced, so `Held` is recorded once per change.
    pub(super) hold: Option<(HoldReason, Time)>,
    /// What the adapter was last told about wanting evidence; `None` until
    /// it has been told (after every spawn).
    pub(super) demand: Option<Demand>,
    /// The revision the adapter's last activity line was read at (`None`:
    /// it vouched for none).
    pub(super) read_revision: Option<u64>,
    /// Since when the terminal has shown a revision the adapter's last
    /// activity line was not read at: a reading of it is owed from then.
    pub(super) unread_move_since: Option<Time>,
    /// The `reason` of the adapter's latest activity line, for status.
    pub(super) adapter_reason: Option<String>,
    /// When the adapter said it.
    pub(super) adapter_reason_at: Option<Time>,
    /// The wait before the next PTY retry after an error.
    pub(super) pty_retry: Backoff,
    pub(super) next_request: RequestId,
    pub(super) outputs: VecDeque<Output>,
    pub(super) journal_dirty: bool,
    pub(super) status_dirty: bool,
    /// Files a hook claimed and never passed on, with why and when they
    /// became pending again: status says so while they stay pending.
    pub(super) given_back: BTreeMap<MessageName, (ReleaseCause, Time)>,
    /// A burst of arrivals being gathered into one delivery (spec §4.4).
    pub(super) gather: Option<Gather>,
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
            context_since: journal.map(|_| now),
            interrupted: Vec::new(),
            taken_out: false,
            adapter,
            lease: LeaseSlot::ended(HoldReason::AdapterStarting, now),
            pty: PtyView::default(),
            pty_block: None,
            in_flight: None,
            typed: None,
            withheld_notice: None,
            pasted_text: None,
            paste_drawn: true,
            pasted_revision: 0,
            claims_in_doubt: BTreeSet::new(),
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

    /// The current ownership journal.
    pub fn journal(&self) -> Journal {
        let mut journal = self.ownership.journal();
        // A notice that may still sit unsent in the composer (interrupted,
        // or its Return withheld): a sidecar started again cannot take it
        // out or confirm it, and the PTY host takes an orphaned paste out
        // itself, so its files are owed again, not staged (at least once).
        journal.entries.retain(|entry| {
            entry.owner != crate::core::journal::Owner::Staged
                || !self.interrupted.contains(&entry.name)
        });
        journal.in_doubt = self
            .claims_in_doubt
            .iter()
            .filter(|name| {
                matches!(
                    self.ownership.state(name),
                    Some(MessageState::HookOwned { .. })
                )
            })
            .cloned()
            .collect();
        journal
    }

    pub(super) fn record(&mut self, decision: Decision) {
        self.status_dirty = true;
        self.outputs.push_back(Output::Decision(Record {
            at: self.now,
            decision,
        }));
    }

    /// Ends the lease, if one was granted, and records why. Without a lease
    /// nothing ended: the reason is still kept (status shows it, and held
    /// work is announced by `held` when its reason changes), but there is no
    /// record, so evidence that changes nothing writes nothing.
    pub(super) fn end_lease(&mut self, reason: HoldReason) {
        let was_granted = matches!(self.lease, LeaseSlot::Granted(_));
        self.lease = LeaseSlot::ended(reason.clone(), self.now);
        if was_granted {
            self.record(Decision::LeaseEnded { reason });
        }
    }

    pub(super) fn release(&mut self, names: Vec<MessageName>, cause: ReleaseCause) {
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
}
