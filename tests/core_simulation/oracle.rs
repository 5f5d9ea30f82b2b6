//! The oracle: what docs/vrs/01-ding/spec.md says the engine must do, tracked
//! from the simulation's inputs alone. It never looks at the engine.
//!
//! The simulation tells the oracle every fact before it feeds the same fact
//! to the engine, then compares what the engine did with what the oracle
//! says it must do: the same state for every unread file, the same hold, the
//! same journal, the same next deadline, the same downlink lines, and a send
//! in exactly the steps where the spec's gate is open and work is pending.
//!
//! Where the spec leaves a choice open, the reading taken is written down
//! beside the rule.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ding::core::config::Policy;
use ding::core::downlink::{ClaimRefusal, Claimed, Downlink, Refusal, RefusedState};
use ding::core::fence::TimeFence;
use ding::core::identity::Identity;
use ding::core::journal::{Journal, JournalEntry, Owner};
use ding::core::message::MessageName;
use ding::core::protocol::{ClaimScope, Composer};
use ding::core::time::Time;

pub const LEASE_CAP_MS: u64 = 2000;
pub const SILENCE_MS: u64 = 5000;
pub const REPLY_TIMEOUT_MS: u64 = 3000;
/// Spec §4.3: 250 ms after the first error, doubling to 8 s.
const PTY_RETRY_INITIAL_MS: u64 = 250;
const PTY_RETRY_MAX_MS: u64 = 8000;
/// Spec §10: 1 s, doubling to 60 s, reset once an adapter stayed up 60 s.
const RESPAWN_INITIAL_MS: u64 = 1000;
const RESPAWN_MAX_MS: u64 = 60_000;
const RESPAWN_STABLE_MS: u64 = 60_000;
/// Spec §6: a hook's name the watch has not reported is remembered 60 s.
const UNSEEN_MEMORY_MS: u64 = 60_000;
/// Spec §4.2: the Return of a typed notice is asked for within 5 s plus
/// the submit delay and the settle period of its paste, at most 9 s.
const RETURN_WITHIN_BASE_MS: u64 = 5000;
const RETURN_WITHIN_MAX_MS: u64 = 9000;

/// The time tunables the oracle is told (spec §4.2, §4.3).
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub submit_delay_ms: u64,
    pub quiet_input_ms: u64,
    pub settled_output_ms: u64,
    /// Spec §4.4: the gather's quiet time and cap.
    pub gather_quiet_ms: u64,
    pub gather_cap_ms: u64,
}

impl Timing {
    fn return_within_ms(&self) -> u64 {
        (RETURN_WITHIN_BASE_MS + self.submit_delay_ms + self.settled_output_ms)
            .min(RETURN_WITHIN_MAX_MS)
    }
}

/// What one transaction writes (spec §4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Notice and Return in one (aggressive).
    Whole,
    /// The careful policy's first phase: the notice's paste, its text.
    Paste(String),
    /// The second phase: Return alone.
    Return,
}

/// A notice the host pasted whose Return is not written (spec §4.2).
#[derive(Clone, Debug)]
pub struct Typed {
    pub notice: u64,
    messages: Vec<String>,
    incarnation: String,
    asked_at: Time,
    pasted_revision: u64,
    return_by: Time,
    submit_after: Time,
}

/// One unread file's state (spec §6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum File {
    Pending,
    InFlight(u64),
    Staged {
        at: Time,
        incarnation: String,
        confirmed: bool,
    },
    HookOwned {
        at: Time,
        incarnation: String,
    },
}

impl File {
    fn is_owned(&self) -> bool {
        matches!(self, File::Staged { .. } | File::HookOwned { .. })
    }

    fn incarnation(&self) -> Option<&str> {
        match self {
            File::Staged { incarnation, .. } | File::HookOwned { incarnation, .. } => {
                Some(incarnation)
            }
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Request {
    pub id: u64,
    pub part: Part,
    pub asked_at: Time,
    pub conditional: bool,
    pub identity: Identity,
    pub expected: Option<u64>,
    /// The files this request still owns (archives and hooks take files out).
    pub messages: Vec<String>,
    pub deadline: Time,
}

#[derive(Clone, Debug)]
struct Granted {
    identity: Identity,
    expires_at: Time,
    composer: Composer,
    revision: Option<u64>,
    /// The notice the adapter says the composer holds, alone.
    typed: Option<u64>,
}

/// The lease slot: a lease, or the hold code of the fact that ended the last.
#[derive(Clone, Debug)]
enum Lease {
    Granted(Granted),
    Ended(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterView {
    Disabled,
    Starting,
    Up {
        since: Time,
        last_line: Time,
        last_sequence: Option<u64>,
    },
    Down {
        respawn_at: Time,
    },
}

/// Why the PTY host takes no transaction (spec §4.3). The latest of these
/// facts replaces an earlier one; a new identity ends both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    /// Until the host's next status.
    Unreachable,
    /// Until the retry timer.
    RetryAt(Time),
}

/// The demand signal as told to the adapter since it came up.
#[derive(Clone, Copy, Debug)]
struct Told {
    wanted: bool,
    since: Time,
}

/// An adapter line as the simulation built it.
#[derive(Clone, Debug)]
pub enum Line {
    /// Not a valid v1 event (malformed, over-long, a missing field).
    Invalid,
    Event {
        identity: Identity,
        sequence: u64,
        body: Body,
    },
}

#[derive(Clone, Debug)]
pub enum Body {
    Activity {
        idle: bool,
        /// `active` or `child`: a turn is running.
        turn: bool,
        valid_for_ms: u64,
        composer: Composer,
        revision: Option<u64>,
        typed: Option<u64>,
    },
    Receipt(Vec<String>),
    /// `release`: a claim's hook never passed these on.
    Release(Vec<String>),
    /// `printed`: a claim's hook printed these for its harness.
    Printed(Vec<String>),
    Claim {
        id: u64,
        wants: Wants,
        scope: ClaimScope,
        /// `nameBytes`: the most bytes of escaped names joined by ", ".
        name_bytes: Option<usize>,
    },
    /// `compaction` keeps ownership; `clear` and `crash` release it.
    Lifecycle {
        releases: bool,
    },
}

#[derive(Clone, Debug)]
pub enum Wants {
    Named(Vec<String>),
    Oldest(usize),
}

/// What the oracle expects the engine to have emitted in one step.
#[derive(Default)]
pub struct StepExpect {
    pub downlinks: Vec<Downlink>,
    pub spawns: usize,
}

pub struct Oracle {
    pub policy: Policy,
    max_files: usize,
    re_ring_ms: Option<u64>,
    unsafe_fence: bool,
    /// The PTY identity and revision the engine has been told.
    pub identity: Option<Identity>,
    revision: Option<u64>,
    block: Option<Block>,
    /// Spec §4.3: an exited harness blocks until a new identity, whatever
    /// else happens meanwhile (a later error or outage does not lift it).
    exited: bool,
    retry_ms: u64,
    pub adapter: AdapterView,
    respawn_ms: u64,
    told: Option<Told>,
    /// The revision the adapter's last activity line was read at.
    read_revision: Option<u64>,
    /// Since when the host has shown a revision past it (spec §3).
    unread_move_since: Option<Time>,
    lease: Lease,
    /// Every unread file the engine has been told of, in FIFO order.
    pub files: BTreeMap<String, File>,
    /// When the harness's context last began again (a lifecycle fact).
    context_since: Option<Time>,
    /// A restarted engine's journal, until its first scan.
    restored: Option<BTreeMap<String, File>>,
    /// Names a hook took before the watch reported them: (incarnation, at).
    unseen: BTreeMap<String, (String, Time)>,
    pub in_flight: Option<Request>,
    timing: Timing,
    /// The notice pasted and not yet submitted (spec §4.2).
    pub typed: Option<Typed>,
    /// Files whose Return was withheld, while no turn began since: an
    /// empty idle composer says the notice was deleted (spec §4.2).
    /// Spec §2.2: what claims granted the adapter now up that no hook
    /// has said it printed, nor given back.
    claims_in_doubt: BTreeSet<String>,
    interrupted: BTreeSet<String>,
    /// Spec §4.2: the notice whose Return was withheld unsent, which a late
    /// screen may yet show alone in the composer.
    withheld: Option<u64>,
    /// The last notice pasted, told again to an adapter spawned while it
    /// awaits its Return or is withheld (spec §4.2).
    pasted: Option<(u64, String)>,
    /// Spec §4.2: a screen since the last paste showed a composer not
    /// empty; until then an empty one says nothing of a withheld notice.
    paste_drawn: bool,
    /// Spec §4.2: the revision the last paste was written at.
    pasted_revision: u64,
    /// Spec §4.4: the open gather's first and latest arrival.
    gather: Option<(Time, Time)>,
    pub expect: StepExpect,
}

impl Oracle {
    pub fn new(
        policy: Policy,
        max_files: usize,
        re_ring_ms: Option<u64>,
        unsafe_fence: bool,
        timing: Timing,
    ) -> Oracle {
        let adapter = if policy.uses_adapter() {
            AdapterView::Starting
        } else {
            AdapterView::Disabled
        };
        Oracle {
            policy,
            max_files,
            re_ring_ms,
            unsafe_fence,
            identity: None,
            revision: None,
            block: None,
            exited: false,
            retry_ms: PTY_RETRY_INITIAL_MS,
            adapter,
            respawn_ms: RESPAWN_INITIAL_MS,
            told: None,
            read_revision: None,
            unread_move_since: None,
            lease: Lease::Ended("adapter-starting"),
            files: BTreeMap::new(),
            context_since: None,
            restored: None,
            unseen: BTreeMap::new(),
            in_flight: None,
            timing,
            typed: None,
            interrupted: BTreeSet::new(),
            claims_in_doubt: BTreeSet::new(),
            withheld: None,
            pasted: None,
            paste_drawn: true,
            pasted_revision: 0,
            gather: None,
            expect: StepExpect {
                spawns: usize::from(policy.uses_adapter()),
                ..StepExpect::default()
            },
        }
    }

    /// A sidecar killed and started again from `journal`: only the journal
    /// and the inbox on disk survive.
    pub fn restart(&mut self, journal: &Journal, now: Time) {
        let mut fresh = Oracle::new(
            self.policy,
            self.max_files,
            self.re_ring_ms,
            self.unsafe_fence,
            self.timing,
        );
        let restored = journal
            .entries
            .iter()
            // Spec §6: a claim in doubt is not restored: pending again.
            .filter(|entry| {
                !(entry.owner == Owner::HookOwned && journal.in_doubt.contains(&entry.name))
            })
            .map(|entry| {
                let at = Time::from_millis(entry.at);
                let incarnation = entry.incarnation.clone().unwrap_or_default();
                let file = match entry.owner {
                    Owner::Staged => File::Staged {
                        at,
                        incarnation,
                        confirmed: true,
                    },
                    Owner::HookOwned => File::HookOwned { at, incarnation },
                };
                (entry.name.as_str().to_string(), file)
            })
            .collect();
        // Spec §6.1: a restarted sidecar's context began, as far as it
        // knows, at its start.
        fresh.context_since = Some(now);
        fresh.restored = Some(restored);
        *self = fresh;
    }

    pub fn take_expect(&mut self) -> StepExpect {
        std::mem::take(&mut self.expect)
    }

    // ----- time -----

    /// Fires every timer due at `now` (spec §1.2: reply timeout, adapter
    /// respawn, PTY retry, staged re-ring).
    pub fn timers(&mut self, now: Time) {
        // Spec §4.4: a gather ends when its window closes or nothing it
        // held is pending.
        if !self.gathering(now) || self.pending().is_empty() {
            self.gather = None;
        }
        if let Some(request) = &self.in_flight
            && request.deadline <= now
        {
            // Outcome unknown: staged, unconfirmed, and blocked as for an error.
            self.outcome_unknown(now);
            self.block_for_retry(now);
        }
        if let Some(Block::RetryAt(at)) = self.block
            && at <= now
        {
            self.block = None;
        }
        if let AdapterView::Down { respawn_at } = self.adapter
            && respawn_at <= now
        {
            self.adapter = AdapterView::Starting;
            self.lease = Lease::Ended("adapter-starting");
            self.expect.spawns += 1;
        }
        self.settle_typed(now);
        if let Some(after) = self.re_ring_ms {
            for file in self.files.values_mut() {
                if let File::Staged { at, .. } = file
                    && at.as_millis() + after <= now.as_millis()
                {
                    *file = File::Pending;
                }
            }
        }
    }

    /// Spec §4.2: a typed notice whose files all left (archived, or a hook
    /// received them) is done; one past its bound gets no Return. Neither
    /// while its Return is in flight: the reply settles it.
    fn settle_typed(&mut self, now: Time) {
        let Some(typed) = &self.typed else {
            return;
        };
        if self.in_flight.is_some() {
            return;
        }
        if self.typed_files().is_empty() {
            self.typed = None;
        } else if now >= typed.return_by {
            self.withhold(now);
        }
    }

    /// The typed notice's files still in flight under it.
    fn typed_files(&self) -> Vec<String> {
        let Some(typed) = &self.typed else {
            return Vec::new();
        };
        typed
            .messages
            .iter()
            .filter(|name| self.files.get(*name) == Some(&File::InFlight(typed.notice)))
            .cloned()
            .collect()
    }

    /// No Return of DING's for the typed notice: its files are staged,
    /// unconfirmed; `unsent` ones wait for an empty composer to ring again.
    fn end_typed(&mut self, now: Time, unsent: bool) {
        let names = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return;
        };
        let staged = File::Staged {
            at: now,
            incarnation: typed.incarnation,
            confirmed: false,
        };
        self.set_all(&names, &staged);
        if unsent {
            self.interrupted.extend(names);
            self.withheld = Some(typed.notice);
        }
    }

    /// Spec §4.2: no Return for the typed notice; a lease that shows it
    /// alone in the composer stays, to take it back out.
    fn withhold(&mut self, now: Time) {
        self.end_typed(now, true);
        let shows_it = matches!(
            &self.lease,
            Lease::Granted(lease) if lease.typed.is_some() && lease.typed == self.withheld
        );
        if !shows_it {
            self.lease = Lease::Ended("return-withheld");
        }
    }

    /// Spec §4.2: whether the typed notice's Return must be asked for now.
    pub fn return_due(&self, now: Time) -> bool {
        let Some(typed) = &self.typed else {
            return false;
        };
        if self.in_flight.is_some() || self.exited || now < typed.submit_after {
            return false;
        }
        match self.block {
            Some(Block::Unreachable) => return false,
            Some(Block::RetryAt(at)) if now < at => return false,
            _ => {}
        }
        let Lease::Granted(lease) = &self.lease else {
            return false;
        };
        self.identity.as_ref() == Some(&lease.identity)
            && now < lease.expires_at
            && lease.typed == Some(typed.notice)
            && lease.composer != Composer::Empty
            && lease
                .revision
                .is_some_and(|revision| revision > typed.pasted_revision)
            && now < typed.return_by
            && !self.typed_files().is_empty()
    }

    /// When the engine must next be woken, per spec §1.2.
    pub fn next_deadline(&self, now: Time) -> Option<Time> {
        let reply = self.in_flight.as_ref().map(|request| request.deadline);
        let respawn = match self.adapter {
            AdapterView::Down { respawn_at } => Some(respawn_at),
            _ => None,
        };
        let retry = match self.block {
            Some(Block::RetryAt(at)) => Some(at),
            _ => None,
        };
        let re_ring = self.re_ring_ms.and_then(|after| {
            self.files
                .values()
                .filter_map(|file| match file {
                    File::Staged { at, .. } => Some(Time::from_millis(at.as_millis() + after)),
                    _ => None,
                })
                .min()
        });
        // A typed notice waits for its submit delay, then for its bound.
        let typed = self
            .typed
            .as_ref()
            .filter(|_| self.in_flight.is_none())
            .map(|typed| {
                if now < typed.submit_after {
                    typed.submit_after
                } else {
                    typed.return_by
                }
            });
        let gather = self.gather.map(|gather| self.gather_closes_at(gather));
        [reply, respawn, retry, re_ring, typed, gather]
            .into_iter()
            .flatten()
            .min()
            .map(|deadline| deadline.max(now))
    }

    // ----- gathering -----

    /// Spec §4.4: a quiet time after the latest arrival, at most the cap
    /// after the first.
    fn gather_closes_at(&self, (first, last): (Time, Time)) -> Time {
        let quiet = Time::from_millis(last.as_millis() + self.timing.gather_quiet_ms);
        let cap = Time::from_millis(first.as_millis() + self.timing.gather_cap_ms);
        quiet.min(cap)
    }

    fn gathering(&self, now: Time) -> bool {
        self.gather
            .is_some_and(|gather| now < self.gather_closes_at(gather))
    }

    /// Spec §4.4: a new pending file restarts an open gather, or opens one
    /// when it is the only pending file and no notice is on its way.
    fn gather_arrival(&mut self, now: Time) {
        if self.policy == Policy::Aggressive {
            return;
        }
        if self.gathering(now) {
            if let Some((_, last)) = &mut self.gather {
                *last = (*last).max(now);
            }
        } else if self.pending().len() == 1 && self.in_flight.is_none() && self.typed.is_none() {
            self.gather = Some((now, now));
        }
    }

    // ----- the gate -----

    /// Spec §4.1/§4.2: `Ok` when a transaction may be sent now, else the hold
    /// code every pending file must show.
    pub fn gate(&self, now: Time) -> Result<(), &'static str> {
        if self.in_flight.is_some() {
            return Err("awaiting-reply");
        }
        if self.typed.is_some() {
            return Err("awaiting-return");
        }
        if self.gathering(now) {
            return Err("gathering");
        }
        if self.exited {
            return Err("harness-exited");
        }
        match self.block {
            Some(Block::Unreachable) => return Err("pty-unreachable"),
            Some(Block::RetryAt(at)) if now < at => return Err("pty-error"),
            _ => {}
        }
        let Some(current) = &self.identity else {
            return Err("pty-unknown");
        };
        if self.policy == Policy::Aggressive {
            return Ok(());
        }
        match self.adapter {
            AdapterView::Disabled | AdapterView::Starting => return Err("adapter-starting"),
            AdapterView::Down { .. } => return Err("adapter-down"),
            AdapterView::Up { .. } => {
                if self
                    .silent_since()
                    .is_some_and(|since| now.since(since) >= Duration::from_millis(SILENCE_MS))
                {
                    return Err("adapter-silent");
                }
            }
        }
        let lease = match &self.lease {
            Lease::Ended(code) => return Err(code),
            Lease::Granted(lease) => lease,
        };
        match lease.composer {
            Composer::Empty => {}
            Composer::Nonempty => return Err("composer-nonempty"),
            Composer::Unknown => return Err("composer-unknown"),
        }
        if now >= lease.expires_at {
            return Err("lease-expired");
        }
        if lease.identity != *current {
            return Err("identity-mismatch");
        }
        let Some(revision) = lease.revision else {
            return Err("revision-unknown");
        };
        // Spec §4.2: nothing drawn since a withheld notice's paste, an
        // empty composer says nothing of it.
        if self.withheld.is_some() && !self.paste_drawn && revision <= self.pasted_revision {
            return Err("return-withheld");
        }
        Ok(())
    }

    /// Spec §3: silence counts only while evidence is wanted: from the
    /// demand if the adapter has not spoken since; else from its last line
    /// while its lease allows delivery (an empty composer), and from the
    /// first revision past the one its last activity was read at.
    fn silent_since(&self) -> Option<Time> {
        let AdapterView::Up { last_line, .. } = self.adapter else {
            return None;
        };
        let Some(Told {
            wanted: true,
            since,
        }) = self.told
        else {
            return None;
        };
        if since >= last_line {
            return Some(since);
        }
        let ready =
            matches!(&self.lease, Lease::Granted(lease) if lease.composer == Composer::Empty);
        [ready.then_some(last_line), self.unread_move_since]
            .into_iter()
            .flatten()
            .min()
    }

    pub fn pending(&self) -> Vec<String> {
        self.files
            .iter()
            .filter(|(_, file)| **file == File::Pending)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Spec §2.4: evidence is wanted while unread work exists that terminal
    /// input could deliver: pending files, or files in a transaction in
    /// flight (a conflict returns them). An in-flight request whose files
    /// were all archived or taken by a hook holds no such work.
    fn wanted(&self, now: Time) -> bool {
        let pending = self.files.values().any(|file| *file == File::Pending);
        let in_flight = self
            .files
            .values()
            .any(|file| matches!(file, File::InFlight(_)));
        // Spec §2.4: a withheld notice may yet be drawn, and an
        // interrupted one is unsent once an empty composer shows.
        let unsure = self.withheld.is_some() || !self.interrupted.is_empty();
        (pending && !self.gathering(now)) || in_flight || self.typed.is_some() || unsure
    }

    /// Settles the demand signal after an input or timeout, before delivery
    /// is considered: a change is told to an adapter that is up.
    pub fn settle_demand(&mut self, now: Time) {
        if !matches!(self.adapter, AdapterView::Up { .. }) {
            return;
        }
        let wanted = self.wanted(now);
        if self.told.is_some_and(|told| told.wanted == wanted) {
            return;
        }
        self.told = Some(Told { wanted, since: now });
        self.expect.downlinks.push(Downlink::Evidence { wanted });
    }

    // ----- transactions -----

    /// Checks one transaction the engine emitted against spec §4 and §6, and
    /// applies it.
    pub fn on_send(
        &mut self,
        id: u64,
        fence: Option<(&Identity, u64, TimeFence)>,
        part: Part,
        messages: Vec<String>,
        now: Time,
    ) -> Result<(), String> {
        match (self.policy, fence.is_some()) {
            (Policy::Aggressive, true) => return Err("a compare-and-send under aggressive".into()),
            (Policy::TurnBoundaryFreshIdle, false) => {
                return Err("an unconditional send under turn-boundary+fresh-idle".into());
            }
            _ => {}
        }
        if self.typed.is_some() {
            return self.on_return(id, fence, part, messages, now);
        }
        match (self.policy, &part) {
            (Policy::Aggressive, Part::Whole) | (Policy::TurnBoundaryFreshIdle, Part::Paste(_)) => {
            }
            _ => return Err(format!("a {part:?} under {:?}", self.policy)),
        }
        if let Err(code) = self.gate(now) {
            return Err(format!("a transaction while the gate holds ({code})"));
        }
        let pending = self.pending();
        let allowed = pending.len().min(self.max_files);
        if messages != pending[..allowed] {
            return Err(format!(
                "transaction {messages:?} is not the oldest {allowed} of pending {pending:?}"
            ));
        }
        let Some(current) = self.identity.clone() else {
            return Err("a transaction with no PTY identity".into());
        };
        let mut expected = None;
        if let Some((identity, revision, time_fence)) = fence {
            let Lease::Granted(lease) = &self.lease else {
                return Err("a compare-and-send without a lease".into());
            };
            if *identity != current || *identity != lease.identity {
                return Err(format!(
                    "a compare-and-send for {identity}, lease {}, PTY {current}",
                    lease.identity
                ));
            }
            if lease.revision != Some(revision) {
                return Err(format!(
                    "a compare-and-send expecting {revision}, lease revision {:?}",
                    lease.revision
                ));
            }
            if time_fence != self.usual_fence() {
                return Err(format!("a paste fenced {time_fence:?}"));
            }
            expected = Some(revision);
            // A lease authorizes one attempt.
            self.lease = Lease::Ended("lease-spent");
        }
        for name in &messages {
            self.files.insert(name.clone(), File::InFlight(id));
        }
        self.ask(id, part, current, expected, messages, now);
        Ok(())
    }

    /// The request `id` is in flight from `now`, fenced on `expected` if
    /// it is a compare-and-send.
    fn ask(
        &mut self,
        id: u64,
        part: Part,
        identity: Identity,
        expected: Option<u64>,
        messages: Vec<String>,
        now: Time,
    ) {
        self.in_flight = Some(Request {
            id,
            part,
            asked_at: now,
            conditional: expected.is_some(),
            identity,
            expected,
            messages,
            deadline: now.saturating_add(Duration::from_millis(REPLY_TIMEOUT_MS)),
        });
    }

    fn usual_fence(&self) -> TimeFence {
        TimeFence {
            quiet_input: Duration::from_millis(self.timing.quiet_input_ms),
            settled_output: Duration::from_millis(self.timing.settled_output_ms),
        }
    }

    /// Spec §4.2: the typed notice's Return, only on a lease that confirms
    /// it, fenced on that lease's revision and on no person's input since
    /// the paste was asked for.
    fn on_return(
        &mut self,
        id: u64,
        fence: Option<(&Identity, u64, TimeFence)>,
        part: Part,
        messages: Vec<String>,
        now: Time,
    ) -> Result<(), String> {
        if part != Part::Return {
            return Err(format!("a {part:?} while a notice waits for its Return"));
        }
        if !self.return_due(now) {
            return Err("a Return the spec does not allow now".into());
        }
        let typed = self.typed.as_ref().expect("a typed notice");
        let still = self.typed_files();
        if messages != still {
            return Err(format!(
                "the Return names {messages:?}, the notice still holds {still:?}"
            ));
        }
        let Lease::Granted(lease) = &self.lease else {
            unreachable!("return_due holds a lease");
        };
        let Some((identity, revision, time_fence)) = fence else {
            return Err("a Return without a fence".into());
        };
        if *identity != lease.identity || Some(revision) != lease.revision {
            return Err(format!(
                "a Return fenced on {identity} @{revision}, the lease is {} @{:?}",
                lease.identity, lease.revision
            ));
        }
        let usual = self.usual_fence();
        let wanted = TimeFence {
            quiet_input: usual.quiet_input.max(now.since(typed.asked_at)),
            settled_output: usual.settled_output,
        };
        if time_fence != wanted {
            return Err(format!(
                "a Return fenced {time_fence:?}, the spec asks {wanted:?}"
            ));
        }
        let identity = lease.identity.clone();
        self.lease = Lease::Ended("lease-spent");
        self.ask(id, part, identity, Some(revision), messages, now);
        Ok(())
    }

    fn take_request(&mut self, id: u64) -> Option<Request> {
        if self.in_flight.as_ref().map(|request| request.id) != Some(id) {
            return None;
        }
        self.in_flight.take()
    }

    fn set_all(&mut self, names: &[String], file: &File) {
        for name in names {
            if let Some(slot) = self.files.get_mut(name) {
                *slot = file.clone();
            }
        }
    }

    pub fn sent(&mut self, id: u64, revision: u64, now: Time) {
        self.revision = Some(self.revision.map_or(revision, |known| known.max(revision)));
        let Some(request) = self.take_request(id) else {
            return;
        };
        self.retry_ms = PTY_RETRY_INITIAL_MS;
        match request.part {
            Part::Paste(text) => {
                self.pasted = Some((request.id, text.clone()));
                // Spec §4.2: the files stay in flight under the paste until
                // its Return; the adapter is told what to look for.
                if matches!(self.adapter, AdapterView::Up { .. }) {
                    self.expect.downlinks.push(Downlink::Typed {
                        request: request.id,
                        text,
                    });
                }
                self.paste_drawn = false;
                self.pasted_revision = revision;
                self.typed = Some(Typed {
                    notice: request.id,
                    messages: request.messages,
                    incarnation: request.identity.incarnation.clone(),
                    asked_at: request.asked_at,
                    pasted_revision: revision,
                    return_by: request
                        .asked_at
                        .saturating_add(Duration::from_millis(self.timing.return_within_ms())),
                    submit_after: now
                        .saturating_add(Duration::from_millis(self.timing.submit_delay_ms)),
                });
                return;
            }
            Part::Return => self.typed = None,
            Part::Whole => {}
        }
        let staged = File::Staged {
            at: now,
            incarnation: request.identity.incarnation.clone(),
            confirmed: true,
        };
        self.set_all(&request.messages, &staged);
    }

    pub fn conflict(&mut self, id: u64, actual: u64) {
        let Some(request) = self.take_request(id) else {
            return;
        };
        self.revision = Some(actual);
        // A Return's conflict leaves the notice typed, waiting for evidence.
        if request.part != Part::Return {
            self.set_all(&request.messages, &File::Pending);
        }
        self.lease = Lease::Ended("revision-conflict");
    }

    pub fn mismatch(&mut self, id: u64, actual: u64) {
        let Some(request) = self.take_request(id) else {
            return;
        };
        self.revision = Some(actual);
        // For a Return too: the terminal the notice was typed into is
        // gone, and the notice was never sent.
        if request.part == Part::Return {
            self.typed = None;
        }
        self.set_all(&request.messages, &File::Pending);
        self.lease = Lease::Ended("identity-mismatch");
    }

    pub fn pty_error(&mut self, id: u64, now: Time) {
        let Some(request) = self.take_request(id) else {
            return;
        };
        // Zero bytes: a Return's notice is still typed.
        if request.part != Part::Return {
            self.set_all(&request.messages, &File::Pending);
        }
        self.block_for_retry(now);
    }

    pub fn harness_exited(&mut self, id: Option<u64>, now: Time) {
        if let Some(request) = id.and_then(|id| self.take_request(id))
            && request.part != Part::Return
        {
            self.set_all(&request.messages, &File::Pending);
        }
        // The notice in a dead terminal's composer gets no Return.
        if self.in_flight.is_none() && self.typed.is_some() {
            self.withhold(now);
        }
        // Only a new harness lifts this block, and it ends every other one:
        // a retry timer armed before has nothing left to retry.
        self.exited = true;
        self.block = None;
    }

    pub fn unreachable(&mut self, now: Time) {
        self.outcome_unknown(now);
        if !self.exited {
            self.block = Some(Block::Unreachable);
        }
    }

    fn outcome_unknown(&mut self, now: Time) {
        let Some(request) = self.in_flight.take() else {
            return;
        };
        if request.part == Part::Return {
            // The Return may or may not be written: no turn after it says
            // it was not.
            self.typed = None;
            self.interrupted.extend(request.messages.iter().cloned());
        }
        let staged = File::Staged {
            at: now,
            incarnation: request.identity.incarnation.clone(),
            confirmed: false,
        };
        self.set_all(&request.messages, &staged);
    }

    fn block_for_retry(&mut self, now: Time) {
        let delay = self.retry_ms;
        self.retry_ms = (delay * 2).min(PTY_RETRY_MAX_MS);
        if self.exited {
            // Nothing to retry until a new harness reports in.
            return;
        }
        self.block = Some(Block::RetryAt(Time::from_millis(now.as_millis() + delay)));
    }

    pub fn status(&mut self, identity: &Identity, revision: u64, now: Time) {
        self.revision = Some(revision);
        if self.read_revision.is_none_or(|read| revision > read) {
            self.unread_move_since.get_or_insert(now);
        }
        if self.block == Some(Block::Unreachable) {
            self.block = None;
        }
        if self.identity.as_ref() == Some(identity) {
            return;
        }
        // A new harness or launch: no block of the old one applies, and no
        // reading of the old one's screen.
        self.identity = Some(identity.clone());
        self.read_revision = None;
        self.withheld = None;
        self.block = None;
        self.exited = false;
        self.retry_ms = PTY_RETRY_INITIAL_MS;
        if matches!(self.adapter, AdapterView::Up { .. }) {
            self.expect.downlinks.push(Downlink::Pty {
                identity: Some(identity.clone()),
            });
        }
        if let Lease::Granted(lease) = &self.lease
            && lease.identity != *identity
        {
            self.lease = Lease::Ended("identity-mismatch");
        }
        let incarnation = identity.incarnation.as_str();
        if let Some(restored) = &mut self.restored {
            restored.retain(|_, file| file.incarnation() == Some(incarnation));
        }
        self.unseen.retain(|_, (owner, _)| owner == incarnation);
        // Spec §4.2: a notice typed into the terminal that is gone was
        // never sent; a Return in flight is settled by its reply.
        let returning = self
            .in_flight
            .as_ref()
            .is_some_and(|request| request.part == Part::Return);
        if !returning && self.typed.is_some() {
            let names = self.typed_files();
            self.set_all(&names, &File::Pending);
            self.typed = None;
        }
        // Spec §7 rule 2: owned work of another incarnation rings again.
        for file in self.files.values_mut() {
            if file.is_owned() && file.incarnation() != Some(incarnation) {
                *file = File::Pending;
            }
        }
    }

    // ----- the inbox -----

    pub fn added(&mut self, name: &str, now: Time) {
        if self.files.contains_key(name) {
            return;
        }
        let file = self
            .unseen
            .remove(name)
            .filter(|(_, at)| now.since(*at) < Duration::from_millis(UNSEEN_MEMORY_MS))
            .map(|(incarnation, at)| File::HookOwned { at, incarnation })
            .or_else(|| {
                self.restored
                    .as_mut()
                    .and_then(|restored| restored.remove(name))
            })
            .unwrap_or(File::Pending);
        let arrived = file == File::Pending;
        self.files.insert(name.to_string(), file);
        if arrived {
            self.gather_arrival(now);
        }
    }

    pub fn removed(&mut self, name: &str) {
        self.files.remove(name);
        self.unseen.remove(name);
        if let Some(request) = &mut self.in_flight {
            request.messages.retain(|m| m != name);
        }
    }

    /// A full listing: what it lacks is gone, and every memory of a name not
    /// seen yet ends (spec §6).
    pub fn scan(&mut self, listed: &BTreeSet<String>, now: Time) {
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|name| !listed.contains(*name))
            .cloned()
            .collect();
        for name in gone {
            self.removed(&name);
        }
        for name in listed {
            self.added(name, now);
        }
        self.restored = None;
        self.unseen.clear();
    }

    // ----- the adapter -----

    pub fn spawned(&mut self, now: Time) {
        self.adapter = AdapterView::Up {
            since: now,
            last_line: now,
            last_sequence: None,
        };
        self.lease = Lease::Ended("no-evidence");
        self.told = None;
        self.expect.downlinks.push(Downlink::Pty {
            identity: self.identity.clone(),
        });
        if let Some((request, text)) = &self.pasted
            && (self.typed.as_ref().map(|typed| typed.notice) == Some(*request)
                || self.withheld == Some(*request))
        {
            self.expect.downlinks.push(Downlink::Typed {
                request: *request,
                text: text.clone(),
            });
        }
    }

    /// EOF, exit or a failed spawn. A second fact about a failure that is
    /// already known changes nothing (spec §10).
    pub fn adapter_down(&mut self, now: Time) {
        let was_up_since = match self.adapter {
            AdapterView::Up { since, .. } => Some(since),
            AdapterView::Starting => None,
            AdapterView::Down { .. } | AdapterView::Disabled => return,
        };
        if was_up_since
            .is_some_and(|since| now.since(since) >= Duration::from_millis(RESPAWN_STABLE_MS))
        {
            self.respawn_ms = RESPAWN_INITIAL_MS;
        }
        let delay = self.respawn_ms;
        self.respawn_ms = (delay * 2).min(RESPAWN_MAX_MS);
        self.adapter = AdapterView::Down {
            respawn_at: Time::from_millis(now.as_millis() + delay),
        };
        self.lease = Lease::Ended("adapter-down");
        self.told = None;
        // Spec §2.2: what claims granted the adapter that went down and no
        // hook said it printed is in doubt: still hook-owned, it is
        // pending again.
        for name in std::mem::take(&mut self.claims_in_doubt) {
            if let Some(file) = self.files.get_mut(&name)
                && matches!(file, File::HookOwned { .. })
            {
                *file = File::Pending;
            }
        }
    }

    /// One adapter line (spec §2, §3, §6.1). Lines while no adapter is up
    /// come from nobody and change nothing.
    pub fn line(&mut self, line: &Line, now: Time) {
        let AdapterView::Up {
            since,
            last_sequence,
            ..
        } = self.adapter
        else {
            return;
        };
        self.adapter = AdapterView::Up {
            since,
            last_line: now,
            last_sequence,
        };
        // Any newer line ends the lease; a new idle replaces it.
        let Line::Event {
            identity,
            sequence,
            body,
        } = line
        else {
            self.lease = Lease::Ended("protocol");
            return;
        };
        let claim = match body {
            Body::Claim { id, .. } => Some(*id),
            _ => None,
        };
        // The envelope is checked before the identity (spec §2.1's order).
        if last_sequence.is_some_and(|last| *sequence <= last) {
            return self.refuse(claim, "protocol", ClaimRefusal::StaleSequence);
        }
        self.adapter = AdapterView::Up {
            since,
            last_line: now,
            last_sequence: Some(*sequence),
        };
        match &self.identity {
            None => return self.refuse(claim, "pty-unknown", ClaimRefusal::PtyUnknown),
            Some(current) if current != identity => {
                return self.refuse(claim, "identity-mismatch", ClaimRefusal::IdentityMismatch);
            }
            Some(_) => {}
        }
        let incarnation = identity.incarnation.clone();
        if let Body::Activity { revision, .. } = body {
            self.read_revision = *revision;
            let unread =
                matches!((self.revision, revision), (Some(known), Some(read)) if known > *read);
            self.unread_move_since = unread.then_some(now);
        }
        match body {
            Body::Activity {
                idle: true,
                valid_for_ms,
                composer,
                revision,
                typed,
                ..
            } => {
                let revision = match (revision, self.unsafe_fence) {
                    (Some(revision), _) => Some(*revision),
                    (None, true) => self.revision,
                    (None, false) => None,
                };
                self.lease = Lease::Granted(Granted {
                    identity: identity.clone(),
                    expires_at: Time::from_millis(
                        now.as_millis() + (*valid_for_ms).min(LEASE_CAP_MS),
                    ),
                    composer: *composer,
                    revision,
                    typed: *typed,
                });
                if *composer == Composer::Nonempty {
                    self.paste_drawn = true;
                }
                let undrawn = self.withheld.is_some() && !self.paste_drawn;
                if *composer == Composer::Empty && !undrawn {
                    self.give_back_unsent();
                }
            }
            Body::Activity { turn, .. } => {
                // A turn may have taken an interrupted notice with it; a
                // screen read as `unknown` says nothing of the kind.
                if *turn {
                    self.interrupted.clear();
                }
                // Spec §4.2: a turn began before DING's Return, so the
                // person sent the notice; a Return in flight waits for its
                // reply.
                let returning = self
                    .in_flight
                    .as_ref()
                    .is_some_and(|request| request.part == Part::Return);
                if *turn {
                    self.withheld = None;
                }
                if *turn && !returning {
                    self.end_typed(now, false);
                }
                self.lease = Lease::Ended("not-idle");
            }
            Body::Receipt(names) => {
                // Delivered after the fact: not in doubt.
                for name in names {
                    self.claims_in_doubt.remove(name);
                }
                self.interrupted.clear();
                self.lease = Lease::Ended("turn-boundary");
                for name in names {
                    self.take_for_hook(name, &incarnation, now);
                }
            }
            Body::Printed(names) => {
                // Spec §2.2: delivered, no longer in doubt.
                for name in names {
                    self.claims_in_doubt.remove(name);
                }
            }
            Body::Release(names) => {
                self.lease = Lease::Ended("turn-boundary");
                for name in names {
                    self.give_back(name, &incarnation);
                }
            }
            Body::Claim {
                id,
                wants,
                scope,
                name_bytes,
            } => {
                self.interrupted.clear();
                self.lease = Lease::Ended("turn-boundary");
                let answer = self.claim(*id, wants, *scope, *name_bytes, &incarnation, now);
                self.expect.downlinks.push(Downlink::Claimed(answer));
            }
            Body::Lifecycle { releases } => {
                self.lease = Lease::Ended("lifecycle");
                self.context_since = Some(now);
                if *releases {
                    // Spec §7 rule 3: the context that held the work is gone,
                    // and with it whatever a hook put there before the watch
                    // reported the file.
                    for file in self.files.values_mut() {
                        if file.is_owned() {
                            *file = File::Pending;
                        }
                    }
                    self.unseen.clear();
                }
            }
        }
    }

    /// Spec §4.2: an empty idle composer with no turn since a Return was
    /// withheld says the notice was deleted unsent: still staged, its
    /// files are pending again.
    fn give_back_unsent(&mut self) {
        self.withheld = None;
        for name in std::mem::take(&mut self.interrupted) {
            if let Some(file) = self.files.get_mut(&name)
                && matches!(file, File::Staged { .. })
            {
                *file = File::Pending;
            }
        }
    }

    fn refuse(&mut self, claim: Option<u64>, hold: &'static str, refusal: ClaimRefusal) {
        self.lease = Lease::Ended(hold);
        if let Some(claim) = claim {
            self.expect.downlinks.push(Downlink::Claimed(Claimed {
                claim,
                granted: Vec::new(),
                refused: Vec::new(),
                refusal: Some(refusal),
                not_granted: self.files.len(),
            }));
        }
    }

    /// A hook put `name` into the next context (or is about to): hook-owned
    /// now if known, when seen otherwise. A file in flight leaves its request.
    fn take_for_hook(&mut self, name: &str, incarnation: &str, now: Time) {
        if let Some(file) = self.files.get_mut(name) {
            // Spec §6: already hook-owned by this incarnation changes nothing.
            if matches!(file, File::HookOwned { incarnation: owner, .. } if owner == incarnation) {
                return;
            }
            *file = File::HookOwned {
                at: now,
                incarnation: incarnation.to_string(),
            };
            if let Some(request) = &mut self.in_flight {
                request.messages.retain(|m| m != name);
            }
        } else {
            self.unseen
                .insert(name.to_string(), (incarnation.to_string(), now));
        }
    }

    /// Spec §2.2 `release`: a file hook-owned for this incarnation is
    /// pending again; one a hook took before it was seen is no longer
    /// expected as hook-owned; anything else is not the claim's to give.
    fn give_back(&mut self, name: &str, incarnation: &str) {
        match self.files.get_mut(name) {
            Some(file) => {
                if matches!(file, File::HookOwned { incarnation: owner, .. } if owner == incarnation)
                {
                    *file = File::Pending;
                    self.claims_in_doubt.remove(name);
                }
            }
            None => {
                if self
                    .unseen
                    .get(name)
                    .is_some_and(|(owner, _)| owner == incarnation)
                {
                    self.unseen.remove(name);
                }
            }
        }
    }

    /// Spec §6.1.
    fn claim(
        &mut self,
        id: u64,
        wants: &Wants,
        scope: ClaimScope,
        name_bytes: Option<usize>,
        incarnation: &str,
        now: Time,
    ) -> Claimed {
        let context_since = self.context_since;
        // Scopes `unread` and `delivered` also take what was handed over.
        let again = scope != ClaimScope::Pending;
        let refusal_of = |file: &File| match (file, again) {
            // Spec §6.1: only what was handed over, the rest for the idle
            // path.
            (File::Pending, _) if scope == ClaimScope::Delivered => Some(RefusedState::Pending),
            (File::Pending, _) => None,
            // Spec §6.1: rung since the context began again, it was typed
            // into the new context.
            (File::Staged { at, .. }, true) if context_since.is_some_and(|since| *at >= since) => {
                Some(RefusedState::Staged)
            }
            // Handed to a hook since then, it was injected into the new
            // context.
            (File::HookOwned { at, .. }, true)
                if context_since.is_some_and(|since| *at >= since) =>
            {
                Some(RefusedState::HookOwned)
            }
            (File::InFlight(_), _) => Some(RefusedState::InFlight),
            (File::Staged { .. } | File::HookOwned { .. }, true) => None,
            (File::Staged { .. }, false) => Some(RefusedState::Staged),
            (File::HookOwned { .. }, false) => Some(RefusedState::HookOwned),
        };
        // A name not seen yet was never handed over either.
        let unseen_refusal = (scope == ClaimScope::Delivered).then_some(RefusedState::Pending);
        let mut granted = Vec::new();
        let mut refused = Vec::new();
        match wants {
            Wants::Named(names) => {
                let sorted: BTreeSet<&String> = names.iter().collect();
                for name in sorted {
                    let refusal = match self.files.get(name) {
                        Some(file) => refusal_of(file),
                        None => unseen_refusal,
                    };
                    match refusal {
                        Some(state) => refused.push(Refusal {
                            name: MessageName::new(name).unwrap(),
                            state,
                        }),
                        None => granted.push(name.clone()),
                    }
                }
            }
            Wants::Oldest(limit) => {
                granted = self
                    .files
                    .iter()
                    .filter(|(_, file)| refusal_of(file).is_none())
                    .take(*limit)
                    .map(|(name, _)| name.clone())
                    .collect();
            }
        }
        // Spec §6.1: names past the budget are refused `over-budget`, the
        // first always fits.
        if let Some(budget) = name_bytes {
            granted.sort();
            let mut used = 0;
            let mut fits = 0;
            for (index, name) in granted.iter().enumerate() {
                let cost = ding::escape::escape(name).len() + if index == 0 { 0 } else { 2 };
                if index > 0 && used + cost > budget {
                    break;
                }
                used += cost;
                fits += 1;
            }
            for name in granted.split_off(fits) {
                refused.push(Refusal {
                    name: MessageName::new(&name).unwrap(),
                    state: RefusedState::OverBudget,
                });
            }
            refused.sort_by(|a, b| a.name.cmp(&b.name));
        }
        // Spec §2.2: in doubt until its hook says it printed them.
        self.claims_in_doubt.extend(
            granted
                .iter()
                .filter(|name| self.files.contains_key(*name))
                .cloned(),
        );
        if scope == ClaimScope::Unread {
            // CORE-28: a backlog claim hands its files into the context
            // there is, those its harness already owned too.
            for name in &granted {
                if let Some(File::HookOwned {
                    at,
                    incarnation: owner,
                }) = self.files.get_mut(name)
                    && owner == incarnation
                {
                    *at = now;
                }
            }
        }
        for name in &granted {
            self.take_for_hook(name, incarnation, now);
        }
        let known = granted
            .iter()
            .filter(|name| self.files.contains_key(*name))
            .count();
        Claimed {
            claim: id,
            granted: granted
                .iter()
                .map(|name| MessageName::new(name).unwrap())
                .collect(),
            refused,
            refusal: None,
            not_granted: self.files.len() - known,
        }
    }

    // ----- the journal -----

    /// Spec §6: the staged and hook-owned files, each with the time and the
    /// incarnation of the fact, in FIFO order.
    pub fn journal(&self) -> Journal {
        let entries = self
            .files
            .iter()
            .filter_map(|(name, file)| {
                let (owner, at, incarnation) = match file {
                    File::Staged {
                        at, incarnation, ..
                    } => (Owner::Staged, at, incarnation),
                    File::HookOwned { at, incarnation } => (Owner::HookOwned, at, incarnation),
                    _ => return None,
                };
                Some(JournalEntry {
                    name: MessageName::new(name).unwrap(),
                    owner,
                    at: at.as_millis(),
                    incarnation: Some(incarnation.clone()),
                })
            })
            .collect();
        let mut journal = Journal::new(entries);
        // Spec §6: a notice that may still sit unsent in the composer is
        // owed again after a restart, not staged.
        journal.entries.retain(|entry| {
            entry.owner != Owner::Staged || !self.interrupted.contains(entry.name.as_str())
        });
        // Spec §2.2, §6: what claims granted no hook said it printed.
        journal.in_doubt = self
            .claims_in_doubt
            .iter()
            .filter(|name| matches!(self.files.get(*name), Some(File::HookOwned { .. })))
            .map(|name| MessageName::new(name).unwrap())
            .collect();
        journal
    }

    /// Whether a restarted engine still waits for its first scan.
    pub fn awaiting_scan(&self) -> bool {
        self.restored.is_some()
    }
}
