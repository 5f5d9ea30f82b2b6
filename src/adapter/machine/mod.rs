//! The adapter machine: every decision an adapter makes, sans-IO.
//!
//! It has the core engine's shape: facts go in with the time they were
//! observed ([`Machine::handle_input`], [`Machine::handle_timeout`]),
//! decisions come out ([`Machine::poll_output`]), and
//! [`Machine::next_deadline`] says when time alone will change something.
//! It never reads a clock, opens a socket or sleeps; the kit's shell
//! (`kit.rs`) moves the bytes, and the whole-agent simulation
//! (`tests/agent_simulation.rs`) drives the same machine on a simulated
//! clock.
//!
//! | input | from | may become |
//! |---|---|---|
//! | [`Input::Downlink`] | the sidecar (stdin) | identity, demand, claim answers |
//! | [`Input::HookCall`] and the hook's other events | the hook channel | provider plans: answers, claims, parks |
//! | [`Input::PtyOpened`] .. [`Input::PtyLost`] | the PTY host, while evidence is wanted | `activity` lines |
//!
//! Evidence is produced only while the sidecar wants it, and only from a
//! snapshot asked for after the last thing the machine heard move, stamped
//! with that snapshot's revision: the sidecar's compare-and-send then fails
//! if anything at all happened since. While wanted, evidence that allows
//! delivery (idle, composer empty) is read again on a heartbeat so it never
//! goes stale; evidence that holds is read again only on an event: the
//! terminal moving, a hook, the sidecar, or the moment the provider says
//! its verdict changes with time alone ([`Provider::verdict_changes_at`]).
//! A held message thus costs no wake-up while nothing happens. With nothing
//! wanted and no hook waiting, [`Machine::next_deadline`] is `None`.

mod claims;
mod quiet;
mod startup;
mod strangers;

use std::collections::VecDeque;
use std::time::Duration;

use claims::{Claims, Confirming, Delivering, Waiting, due};
use quiet::PersonQuiet;
use startup::Startup;
use strangers::Strangers;

use super::hook_wire::{HOOK_WIRE_VERSION, HookAnswer, HookCall, HookRefusal, MAX_CALL_BYTES};
use super::parked::{self, Parked, Slots};
use super::screen;
use super::timing::{
    CLAIM_DEADLINE, HEARTBEAT, MIN_SNAPSHOT_GAP, PTY_RETRY, RECEIPT_DEADLINE, VALID_FOR,
};
use super::uplink::Uplink;
use super::{
    AgentContext, ClaimRequest, HookAction, HookPlan, Park, ParkAnswer, ParkEnded, Provider,
    Reading, SettingsRead,
};
use crate::core::config::QUIET_INPUT;
use crate::core::downlink::{ClaimRefusal, Claimed, Downlink};
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::{ActivityState, Composer, Undelivered, check_identity};
use crate::core::time::Time;
use crate::lines::{Line, LineBuffer};
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

/// How the machine paces its evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// The `validForMs` of each activity line (the sidecar caps it).
    pub valid_for: Duration,
    /// How often the screen is read again while evidence is wanted, the
    /// last reading allowed delivery, and nothing moved.
    pub heartbeat: Duration,
    /// The least time between two snapshots while the screen keeps moving.
    pub min_snapshot_gap: Duration,
    /// A parked call is claimed for only once no person's input reached
    /// the terminal for this long (the declaration's `quiet-input`, which
    /// fences the terminal path's compare-and-sends too).
    pub quiet_input: Duration,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            valid_for: VALID_FOR,
            heartbeat: HEARTBEAT,
            min_snapshot_gap: MIN_SNAPSHOT_GAP,
            quiet_input: QUIET_INPUT.default,
        }
    }
}

/// The connection to the PTY host, as the machine asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Closed,
    Connecting,
    Open { snapshot_pending: bool },
}

pub struct Machine<P: Provider> {
    provider: P,
    agent: AgentContext,
    pacing: Pacing,
    /// Whether the sidecar speaks to this adapter. An adapter run by hand
    /// has no downlink: evidence is then always wanted and the identity is
    /// read from the PTY host.
    has_downlink: bool,
    now: Time,
    uplink: Uplink,
    downlink: LineBuffer,
    identity: Option<Identity>,
    wanted: bool,
    /// Whether the last screen read since evidence became wanted was fresh
    /// idle (`false` before one was read): what a parked wake that waits
    /// for fresh idle is judged by.
    fresh_idle: bool,
    /// How long the person had left the terminal alone, as the last screen
    /// read said: a parked call is claimed for only once it is long enough.
    person: PersonQuiet,
    /// The last screen read showed the person's own text in the composer
    /// (not DING's typed notice). The harness redrawing does not take a
    /// draft away, so a move alone does not clear it; a person who deleted
    /// theirs since costs the work no more than a claim would (the wake
    /// then starts the one turn that a continuation would have been).
    drafting: bool,
    /// Whether this terminal's screen has settled since it was new (see
    /// `startup.rs`), and when to read it again to see that it has.
    startup: Startup,
    settle_check_at: Option<Time>,
    /// Something moved since the last snapshot was asked for.
    moved: bool,
    /// The notice DING last pasted and has not submitted (its request and
    /// text), as the downlink's `typed` said: evidence names it when the
    /// composer holds exactly it.
    typed: Option<(u64, String)>,
    link: Link,
    /// How many snapshots were asked for: the reply to the last one is
    /// number `snapshots_asked` (one is pending at a time).
    snapshots_asked: u64,
    last_snapshot: Option<Time>,
    next_heartbeat: Option<Time>,
    pty_retry_at: Option<Time>,
    claims: Claims,
    parked: Slots<Peer, HookCall>,
    /// Calls that name another terminal, waiting for it (`strangers.rs`).
    strangers: Strangers,
    /// The provider's remark last reported on its own line.
    remarked: Option<String>,
    done: bool,
    outputs: VecDeque<Output>,
}

impl<P: Provider> Machine<P> {
    /// A machine for `provider`, started at `now`. `identity` is the one the
    /// adapter was spawned with, if the sidecar knew it.
    pub fn new(
        provider: P,
        agent: AgentContext,
        pacing: Pacing,
        identity: Option<Identity>,
        has_downlink: bool,
        now: Time,
    ) -> Machine<P> {
        let mut machine = Machine {
            provider,
            agent,
            pacing,
            has_downlink,
            now,
            uplink: Uplink::new(),
            downlink: LineBuffer::new(crate::core::protocol::MAX_LINE_BYTES * 16),
            identity,
            wanted: false,
            fresh_idle: false,
            drafting: false,
            person: PersonQuiet::Unknown,
            startup: Startup::New,
            settle_check_at: None,
            moved: false,
            typed: None,
            link: Link::Closed,
            snapshots_asked: 0,
            last_snapshot: None,
            next_heartbeat: None,
            pty_retry_at: None,
            claims: Claims::default(),
            parked: Slots::default(),
            strangers: Strangers::default(),
            remarked: None,
            done: false,
            outputs: VecDeque::new(),
        };
        machine.read_settings();
        if !has_downlink {
            machine.on_demand(true);
        }
        machine
    }

    /// Asks the shell for the provider's settings files, if it has any.
    fn read_settings(&mut self) {
        let files = self.provider.settings_files();
        if !files.is_empty() {
            self.emit(Output::ReadSettings(files));
        }
    }

    /// Whether the sidecar is gone: the shell drains the outputs and exits.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The next decision to carry out, if any.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`Machine::handle_timeout`] must next be called; `None` while
    /// nothing waits on time. Never earlier than the last time seen.
    pub fn next_deadline(&self) -> Option<Time> {
        let snapshot = self
            .snapshot_wanted()
            .then(|| self.snapshot_allowed_at().unwrap_or(self.now));
        [
            snapshot,
            self.next_heartbeat,
            self.pty_retry_at,
            self.claims.next_deadline(),
            self.parked.next_deadline(),
            self.strangers.next_deadline(),
            self.settle_check_at.filter(|_| self.wanted),
        ]
        .into_iter()
        .flatten()
        .min()
        .map(|at| at.max(self.now))
    }

    /// Feeds one fact in, observed at `now`. Drain [`Machine::poll_output`]
    /// afterwards.
    pub fn handle_input(&mut self, input: Input, now: Time) {
        self.now = self.now.max(now);
        match input {
            Input::Downlink(bytes) => self.on_downlink(&bytes),
            Input::DownlinkClosed => self.done = true,
            Input::HookCall { peer, line } => self.on_call(peer, &line),
            Input::HookCallTooLong { peer, len } => self.refuse(peer, oversized_call(len)),
            Input::HookGone { peer } => self.on_hook_gone(peer),
            Input::HookReceipt { peer } => {
                // Printed for the harness: delivered, as far as a hook can
                // tell.
                self.claims.delivering.remove(&peer);
            }
            Input::HookNoReceipt { peer } => {
                if let Some(sent) = self.claims.delivering.remove(&peer) {
                    self.give_back(&sent.identity, sent.messages, Undelivered::NoReceipt);
                }
            }
            Input::PtyOpened => self.on_pty_opened(),
            Input::PtyMoved if self.is_open() => self.on_moved(),
            Input::PtyStarted if self.is_open() => self.learn_identity_from_pty(),
            Input::PtyStatus(status) if self.is_open() => self.on_pty_status(*status),
            Input::PtySnapshot(snapshot) if self.is_open() => self.on_snapshot(&snapshot),
            Input::PtyLost(why) if self.link != Link::Closed => self.pty_lost(&why),
            Input::SettingsRead(read) => self.provider.on_settings_read(&read),
            // From a connection the machine already closed: stale.
            Input::PtyMoved
            | Input::PtyStarted
            | Input::PtyStatus(_)
            | Input::PtySnapshot(_)
            | Input::PtyLost(_) => {}
        }
        self.on_time();
    }

    /// Time passed (the deadline [`Machine::next_deadline`] named, or any
    /// later one).
    pub fn handle_timeout(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.on_time();
    }

    fn emit(&mut self, output: Output) {
        self.outputs.push_back(output);
    }

    fn is_open(&self) -> bool {
        matches!(self.link, Link::Open { .. })
    }

    // ----- the downlink -----

    fn on_downlink(&mut self, bytes: &[u8]) {
        let mut lines = Vec::new();
        self.downlink.push(bytes, &mut lines);
        for line in lines {
            let Line::Complete(bytes) = line else {
                continue;
            };
            match Downlink::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(Downlink::Pty { identity }) => self.on_identity(identity),
                Ok(Downlink::Evidence { wanted }) => self.on_demand(wanted),
                Ok(Downlink::Claimed(claimed)) => self.on_claimed(claimed),
                Ok(Downlink::Typed { request, text }) => {
                    // Read the screen again: the Return waits on it.
                    self.typed = Some((request, text));
                    self.moved = true;
                }
                Err(err) => self.emit(Output::Log(format!(
                    "adapter: ignoring a downlink line: {err}"
                ))),
            }
        }
    }

    fn on_identity(&mut self, identity: Option<Identity>) {
        if identity != self.identity {
            // A remark is about this terminal: say it again for a new one.
            self.remarked = None;
            self.new_terminal(identity.as_ref());
        }
        self.identity = identity;
        self.calls_meet_identity();
        // Claims refused for identity wait for this; ask again now.
        for peer in self.claims.unsent() {
            self.send_claim(peer);
        }
        self.moved = true;
    }

    /// The machine's identity is new or confirmed: calls about another
    /// terminal can no longer claim (a parked one would hold this terminal
    /// for a harness that is gone), and calls that waited for this one go
    /// ahead.
    fn calls_meet_identity(&mut self) {
        let Some(known) = self.identity.clone() else {
            return;
        };
        let about_other = |call: &HookCall| call.identity.as_ref() != Some(&known);
        for stale in self.parked.take_calls(about_other) {
            self.end_park(stale, ParkEnded::Ended);
        }
        let stale: Vec<Peer> = self
            .claims
            .confirming
            .iter()
            .filter(|(_, wake)| about_other(&wake.waiting.call))
            .map(|(peer, _)| *peer)
            .collect();
        for peer in stale {
            if let Some(wake) = self.claims.confirming.remove(&peer) {
                self.withhold(peer, wake, None, "its terminal is gone");
            }
        }
        for peer in self.claims.unsent() {
            if self
                .claims
                .waiting
                .get(&peer)
                .is_some_and(|w| about_other(&w.call))
            {
                self.claims.waiting.remove(&peer);
                self.answer(peer, &HookAnswer::default());
            }
        }
        for (peer, line) in self.strangers.take_about(&known) {
            self.on_call(peer, &line);
        }
    }

    /// The terminal's identity changed: nothing read of the old one's
    /// screen, or said by its hooks, holds for the new one.
    fn new_terminal(&mut self, identity: Option<&Identity>) {
        self.fresh_idle = false;
        self.person = PersonQuiet::Unknown;
        self.drafting = false;
        self.typed = None;
        self.startup = Startup::New;
        self.settle_check_at = None;
        self.provider.on_new_terminal(identity, self.now);
    }

    fn on_demand(&mut self, wanted: bool) {
        self.wanted = wanted;
        if wanted {
            // No screen was read while evidence was not wanted: the last
            // one is stale.
            self.fresh_idle = false;
            self.drafting = false;
        }
        self.parked.on_demand(wanted, self.now);
        if wanted {
            // The reading this asks for decides when the next one is due.
            self.moved = true;
            self.next_heartbeat = None;
            self.open_pty();
        } else {
            self.next_heartbeat = None;
            self.pty_retry_at = None;
            // A wake waiting for its confirming reading keeps the
            // terminal open until it has it.
            if self.claims.confirming.is_empty() {
                self.moved = false;
                self.close_pty();
            }
        }
    }

    fn on_claimed(&mut self, claimed: Claimed) {
        if let Some(identity) = self.claims.answered_abandoned(claimed.claim) {
            // Nobody is left to pass these on.
            return self.give_back(&identity, claimed.granted, Undelivered::HookGone);
        }
        let Some(peer) = self.claims.waiting_for(claimed.claim) else {
            return;
        };
        let identity_refusal = matches!(
            claimed.refusal,
            Some(ClaimRefusal::PtyUnknown | ClaimRefusal::IdentityMismatch)
        );
        if let Some(waiting) = self.claims.waiting.get_mut(&peer)
            && identity_refusal
            && !waiting.retried
        {
            // The hook may know of a restart before the sidecar does: wait
            // for the sidecar's next identity, then ask once more.
            waiting.retried = true;
            waiting.claim = None;
            return;
        }
        let Some(waiting) = self.claims.waiting.remove(&peer) else {
            return;
        };
        if let Some((park, deadline)) = waiting.parked.clone()
            && claimed.granted.is_empty()
        {
            // Nothing to wake the harness with: keep offering.
            return self.repark(peer, waiting.call, park, deadline);
        }
        if waiting
            .parked
            .as_ref()
            .is_some_and(|(park, _)| park.waits_for_fresh_idle)
        {
            // The screen was fresh idle and the person quiet when the claim
            // went out; a key may have reached the terminal since, and no
            // PTY host fences a wake. It goes only on a reading asked for
            // now (see `confirm_wakes`).
            self.claims.confirming.insert(
                peer,
                Confirming {
                    waiting,
                    claimed,
                    after: self.snapshots_asked,
                    deadline: self.now + CLAIM_DEADLINE,
                },
            );
            self.moved = true;
            return;
        }
        self.deliver(peer, waiting, &claimed);
    }

    /// Answers `peer`'s call with the files its claim was granted.
    fn deliver(&mut self, peer: Peer, waiting: Waiting, claimed: &Claimed) {
        let mut answer = self
            .provider
            .on_claimed(&waiting.call, claimed, &self.agent, self.now);
        if waiting.parked.is_some() {
            answer.parked = Some(ParkAnswer::Delivered);
        }
        match waiting.claimed_as {
            Some(identity) if !claimed.granted.is_empty() => {
                self.answer_for_receipt(peer, &answer, identity, claimed.granted.clone())
            }
            _ => self.answer(peer, &answer),
        }
    }

    /// Wakes whose confirming reading has come (this snapshot's) go if it
    /// is still fresh idle, settled, and the person has still been quiet
    /// for `quiet-input`; else they are withheld.
    fn confirm_wakes(&mut self, reading: &Reading) {
        let read: Vec<Peer> = self
            .claims
            .confirming
            .iter()
            .filter(|(_, wake)| wake.after < self.snapshots_asked)
            .map(|(peer, _)| *peer)
            .collect();
        for peer in read {
            let Some(wake) = self.claims.confirming.remove(&peer) else {
                continue;
            };
            let Some(park) = wake.park() else {
                continue;
            };
            let screen_later = (!parked::may_wake(park, self.fresh_idle))
                .then(|| self.now.saturating_add(park.settle));
            let quiet_later = self.person.not_before(self.pacing.quiet_input, self.now);
            let why = match (screen_later, quiet_later) {
                (None, None) => {
                    self.deliver(peer, wake.waiting, &wake.claimed);
                    continue;
                }
                (Some(_), _) => format!("the screen read after its grant: {}", reading.reason),
                (None, Some(_)) => format!(
                    "the reading after its grant shows the person's input {} (quiet-input {} ms)",
                    self.person.describe(self.now),
                    self.pacing.quiet_input.as_millis()
                ),
            };
            self.withhold(peer, wake, screen_later.or(quiet_later), &why);
        }
        self.close_unless_wanted();
    }

    /// A wake granted files is withheld (`why`): the files go back to
    /// unread work (`release` `withheld`) and the call to its slot, due
    /// again `again_at`, or (`None`: its terminal is gone) it is answered
    /// with nothing.
    fn withhold(&mut self, peer: Peer, wake: Confirming, again_at: Option<Time>, why: &str) {
        self.emit(Output::Log(format!(
            "{}: withheld: {why}",
            wake.waiting.call.event
        )));
        if let Some(identity) = &wake.waiting.claimed_as {
            self.give_back(identity, wake.claimed.granted, Undelivered::Withheld);
        }
        let Some((park, deadline)) = wake.waiting.parked else {
            return;
        };
        let back = Parked {
            peer,
            call: wake.waiting.call,
            park,
            deadline,
            fire_at: None,
        };
        let stale = match again_at {
            None => Some(back),
            Some(at) if self.wanted => self.parked.hold(back, at),
            Some(_) => self.parked.restore(back, false, self.now),
        };
        if let Some(stale) = stale {
            let ended = if again_at.is_some() {
                ParkEnded::Replaced
            } else {
                ParkEnded::Ended
            };
            self.end_park(stale, ended);
        }
    }

    /// Closes the terminal once nothing wants it read.
    fn close_unless_wanted(&mut self) {
        if !self.wanted && self.claims.confirming.is_empty() && self.link != Link::Closed {
            self.moved = false;
            self.close_pty();
        }
    }

    /// Answers `peer` with claimed files and waits for its receipt.
    fn answer_for_receipt(
        &mut self,
        peer: Peer,
        answer: &HookAnswer,
        identity: Identity,
        messages: Vec<MessageName>,
    ) {
        self.claims.delivering.insert(
            peer,
            Delivering {
                identity,
                messages,
                deadline: self.now + RECEIPT_DEADLINE,
            },
        );
        self.emit(Output::HookAnswerForReceipt {
            peer,
            line: answer.to_line(),
        });
    }

    /// The files an answer carried go back to unread work: the hook never
    /// passed them on. (The sidecar logs the release and its cause.)
    fn give_back(&mut self, identity: &Identity, messages: Vec<MessageName>, why: Undelivered) {
        if !messages.is_empty() {
            let line = self.uplink.release(identity, messages, why);
            self.emit(Output::Uplink(line));
        }
    }

    /// Puts a parked call whose claim granted nothing back in its slot, or
    /// answers it with nothing if a newer call took the slot.
    fn repark(&mut self, peer: Peer, call: HookCall, park: Park, deadline: Time) {
        let back = Parked {
            peer,
            call,
            park,
            deadline,
            fire_at: None,
        };
        if let Some(stale) = self.parked.restore(back, self.wanted, self.now) {
            self.end_park(stale, ParkEnded::Replaced);
        }
    }

    /// Answers a parked call with nothing, saying why, and tells the
    /// provider.
    fn end_park(&mut self, parked: Parked<Peer, HookCall>, ended: ParkEnded) {
        // The terminal may be free again: read it.
        self.moved = true;
        if let Some(why) = ended.answer() {
            let answer = HookAnswer {
                parked: Some(why),
                ..HookAnswer::default()
            };
            self.answer(parked.peer, &answer);
        }
    }

    // ----- hooks -----

    fn on_hook_gone(&mut self, peer: Peer) {
        // An answer never received is no delivery. A claim still in flight
        // is given back when it is answered; files already granted are
        // given back now.
        if let Some(waiting) = self.claims.waiting.remove(&peer) {
            self.claims.abandon(&waiting);
        }
        if let Some(wake) = self.claims.confirming.remove(&peer)
            && let Some(identity) = &wake.waiting.claimed_as
        {
            self.give_back(identity, wake.claimed.granted, Undelivered::HookGone);
            self.close_unless_wanted();
        }
        if let Some(sent) = self.claims.delivering.remove(&peer) {
            self.give_back(&sent.identity, sent.messages, Undelivered::HookGone);
        }
        if let Some(parked) = self.parked.withdraw(peer) {
            self.end_park(parked, ParkEnded::Withdrawn);
        }
        self.strangers.forget(peer);
    }

    fn on_call(&mut self, peer: Peer, line: &[u8]) {
        let call = match read_call(self.provider.name(), line) {
            Ok(call) => call,
            Err(refusal) => return self.refuse(peer, refusal),
        };
        let Some(identity) = call.identity.clone() else {
            return self.refuse(peer, no_identity());
        };
        if self.identity.as_ref() != Some(&identity) {
            // Nothing of it reaches the sidecar or the provider until the
            // machine knows its terminal (`strangers.rs`).
            if !self.strangers.wait(peer, line.to_vec(), identity, self.now) {
                self.refuse(peer, another_terminal());
            }
            return;
        }
        let plan = self.provider.on_hook(&call, &self.agent, self.now);
        if let Some(identity) = self.identity_for(&call) {
            for fact in plan.facts {
                let line = self.uplink.lifecycle(&identity, fact);
                self.emit(Output::Uplink(line));
            }
            if !plan.received.is_empty() {
                let line = self.uplink.turn_boundary(&identity, plan.received);
                self.emit(Output::Uplink(line));
            }
        }
        for slot in plan.end_parked {
            if let Some(parked) = self.parked.release(slot) {
                self.end_park(parked, ParkEnded::Ended);
            }
        }
        if plan.recheck_settings {
            self.read_settings();
        }
        let drafting = self.drafting;
        // What the hook said may change the evidence: read the screen again,
        // and wake nothing until then.
        self.moved = true;
        self.fresh_idle = false;
        match plan.action {
            HookAction::Answer(answer) => self.answer(peer, &answer),
            HookAction::Claim(request) => self.claim_for(peer, call, request, None),
            HookAction::ClaimUnlessDrafting(_) if drafting => {
                self.emit(Output::Log(format!(
                    "{}: the person's draft is in the composer; their prompt carries the work",
                    call.event
                )));
                let nothing = Claimed {
                    claim: 0,
                    granted: Vec::new(),
                    refused: Vec::new(),
                    refusal: None,
                    not_granted: 0,
                };
                let answer = self
                    .provider
                    .on_claimed(&call, &nothing, &self.agent, self.now);
                self.answer(peer, &answer);
            }
            HookAction::ClaimUnlessDrafting(request) => self.claim_for(peer, call, request, None),
            HookAction::Park(park) => {
                let deadline = parked::deadline(&park, call.timeout(), self.now);
                // Says when a call parks: an operator (and a test) can
                // tell a parked call from one still on its way.
                self.emit(Output::Log(format!(
                    "{}: parked in slot {} for at most {} ms",
                    call.event,
                    park.slot,
                    deadline.since(self.now).as_millis()
                )));
                if let Some(replaced) =
                    self.parked
                        .park(peer, call, park, deadline, self.wanted, self.now)
                {
                    self.end_park(replaced, ParkEnded::Replaced);
                }
            }
        }
    }

    /// Makes a claim for `peer`'s call and waits for its answer.
    fn claim_for(
        &mut self,
        peer: Peer,
        call: HookCall,
        request: ClaimRequest,
        parked: Option<(Park, Time)>,
    ) {
        self.claims.waiting.insert(
            peer,
            Waiting {
                call,
                request,
                claim: None,
                retried: false,
                deadline: self.now + CLAIM_DEADLINE,
                parked,
                claimed_as: None,
            },
        );
        self.send_claim(peer);
    }

    /// The identity a call is about: the hook's own (from its environment,
    /// the truth for the harness that ran it), else the sidecar's.
    fn identity_for(&self, call: &HookCall) -> Option<Identity> {
        call.identity.clone().or_else(|| self.identity.clone())
    }

    fn send_claim(&mut self, peer: Peer) {
        let Some(waiting) = self.claims.waiting.get(&peer) else {
            return;
        };
        let Some(identity) = self.identity_for(&waiting.call) else {
            return;
        };
        let request = waiting.request.clone();
        let claim = self.claims.next_id();
        let line = self.uplink.claim(&identity, claim, &request);
        self.emit(Output::Uplink(line));
        if let Some(waiting) = self.claims.waiting.get_mut(&peer) {
            waiting.claim = Some(claim);
            waiting.claimed_as = Some(identity);
        }
    }

    fn answer(&mut self, peer: Peer, answer: &HookAnswer) {
        self.emit(Output::HookAnswer {
            peer,
            line: answer.to_line(),
        });
    }

    fn refuse(&mut self, peer: Peer, refusal: HookRefusal) {
        self.emit(Output::HookAnswer {
            peer,
            line: refusal.to_line(),
        });
    }

    // ----- the terminal -----

    fn open_pty(&mut self) {
        if self.link == Link::Closed {
            self.link = Link::Connecting;
            self.emit(Output::PtyOpen);
        }
    }

    fn close_pty(&mut self) {
        if self.link != Link::Closed {
            self.link = Link::Closed;
            self.emit(Output::PtyClose);
        }
    }

    /// The terminal moved: the last screen read no longer says what is
    /// on it. Nothing is woken until it is read again (a key drawn after
    /// that reading is a draft a wake must not start a turn under).
    fn on_moved(&mut self) {
        self.moved = true;
        self.fresh_idle = false;
    }

    fn on_pty_opened(&mut self) {
        if self.link != Link::Connecting {
            // Asked for, then given up before it came: the close follows.
            return;
        }
        self.link = Link::Open {
            snapshot_pending: false,
        };
        self.pty_retry_at = None;
        self.learn_identity_from_pty();
    }

    /// Without a downlink, the PTY host's own status names the identity.
    fn learn_identity_from_pty(&mut self) {
        if !self.has_downlink {
            self.emit(Output::PtyStatus);
        }
    }

    fn on_pty_status(&mut self, status: HostStatus) {
        if self.has_downlink {
            return;
        }
        let identity = Some(Identity {
            session: status.session,
            incarnation: status.incarnation,
            generation: status.generation,
        });
        if identity != self.identity {
            self.new_terminal(identity.as_ref());
        }
        self.identity = identity;
        self.calls_meet_identity();
        self.moved = true;
    }

    fn on_snapshot(&mut self, snapshot: &Snapshot) {
        self.link = Link::Open {
            snapshot_pending: false,
        };
        let mut reading = self.provider.evidence(snapshot, self.now);
        let settle = self.provider.startup_settle();
        let settled = self
            .startup
            .observe(reading.state == ActivityState::Idle, settle, self.now);
        self.settle_check_at = self.startup.settles_at(settle);
        if !settled && parked::is_fresh_idle(&reading) {
            // A dialog of the harness's first seconds may still come.
            reading.state = ActivityState::Unknown;
            reading.reason = format!(
                "{}; the harness's screen is new: it counts as idle once it has read idle for {} ms",
                reading.reason,
                settle.as_millis()
            )
            .into();
        }
        // The provider's own evidence, hooks and screen: a screen that
        // flashes idle between two states (a command's Return, then the
        // spinner) is not fresh idle.
        self.fresh_idle = parked::is_fresh_idle(&reading);
        self.person = self.person.read_again(snapshot, self.now);
        let typed = self.typed_on(snapshot, &reading);
        self.drafting = reading.composer == Composer::Nonempty && typed.is_none();
        if let Some(request) = typed {
            reading.reason = format!("{}; it holds DING's notice {request}", reading.reason).into();
        }
        self.confirm_wakes(&reading);
        self.report(reading, snapshot.revision, typed);
    }

    /// The typed notice this screen shows alone in an idle composer, if
    /// any: what its Return waits for.
    fn typed_on(&self, snapshot: &Snapshot, reading: &Reading) -> Option<u64> {
        let (request, text) = self.typed.as_ref()?;
        let idle_with_text =
            reading.state == ActivityState::Idle && reading.composer == Composer::Nonempty;
        (idle_with_text && screen::holds_exactly(&self.provider.composer_content(snapshot), text))
            .then_some(*request)
    }

    fn pty_lost(&mut self, why: &str) {
        self.close_pty();
        // No reading can confirm a wake now.
        for (peer, wake) in std::mem::take(&mut self.claims.confirming) {
            let again_at = wake.park().map(|park| self.now.saturating_add(park.settle));
            self.withhold(peer, wake, again_at, "the terminal could not be read");
        }
        if let Some(identity) = self.identity.clone() {
            // Without a screen nothing can be vouched for: say so (no
            // revision, so it can never authorize input).
            let line = self.uplink.activity_unknown(&identity, why);
            self.emit(Output::Uplink(line));
        }
        if self.wanted {
            self.pty_retry_at = Some(self.now + PTY_RETRY);
        }
    }

    fn report(&mut self, mut reading: Reading, revision: u64, mut typed: Option<u64>) {
        if !self.wanted {
            return;
        }
        let Some(identity) = self.identity.clone() else {
            return;
        };
        if let Some(slot) = self.terminal_held_by() {
            typed = None;
            reading.state = ActivityState::Unknown;
            reading.reason =
                format!("a parked hook call ({slot}) delivers; {}", reading.reason).into();
        } else if let Some(why) = self.provider.native_path_holds()
            && parked::is_fresh_idle(&reading)
        {
            // A draft stays the screen's own reason; an idle screen waits
            // for the native path (the parked call it makes).
            reading.state = ActivityState::Unknown;
            reading.reason = format!("{}; {why}", reading.reason).into();
        }
        if let Some(remark) = self.provider.remark() {
            reading.reason = format!("{}; {remark}", reading.reason).into();
            self.remarked = Some(remark);
        }
        // Evidence that allows delivery is a lease that lapses: it is read
        // again before it does. Evidence that holds stays true until
        // something moves, a hook or the sidecar speaks, or time alone
        // changes the provider's verdict.
        self.next_heartbeat = if parked::is_fresh_idle(&reading) && typed.is_none() {
            Some(self.now + self.pacing.heartbeat)
        } else {
            self.provider.verdict_changes_at(self.now)
        };
        let withdraw = self.provider.withdraw_keys();
        let line = self.uplink.activity(
            &identity,
            &reading,
            revision,
            self.pacing.valid_for,
            typed,
            withdraw,
        );
        self.emit(Output::Uplink(line));
    }

    /// The slot of a parked call (waiting or being claimed for) that holds
    /// the terminal. A parked call that may not wake the harness on this
    /// screen ([`parked::may_wake`]) holds nothing: the screen's own
    /// evidence says why nothing is delivered (a draft, say).
    fn terminal_held_by(&self) -> Option<&'static str> {
        self.parked
            .terminal_park()
            .filter(|park| parked::may_wake(park, self.fresh_idle))
            .map(|park| park.slot)
            .or_else(|| self.claims.terminal_holder())
    }

    /// Reports a changed remark on its own line while no evidence is wanted
    /// (while it is, every activity line carries it).
    fn report_remark(&mut self) {
        if self.wanted {
            return;
        }
        let Some(identity) = self.identity.clone() else {
            return;
        };
        let remark = self.provider.remark();
        if remark.is_some() && remark != self.remarked {
            let text = remark.clone().unwrap_or_default();
            let line = self.uplink.activity_unknown(&identity, &text);
            self.emit(Output::Uplink(line));
            self.remarked = remark;
        }
    }

    // ----- time -----

    /// When the next snapshot may be asked for; `None`: at once.
    fn snapshot_allowed_at(&self) -> Option<Time> {
        self.last_snapshot
            .map(|at| at + self.pacing.min_snapshot_gap)
    }

    /// Whether a snapshot is owed: wanted, something moved, and the open
    /// connection has none pending.
    fn snapshot_wanted(&self) -> bool {
        (self.wanted || !self.claims.confirming.is_empty())
            && self.moved
            && self.link
                == Link::Open {
                    snapshot_pending: false,
                }
    }

    fn on_time(&mut self) {
        let now = self.now;
        for peer in due(&self.claims.waiting, now, |waiting| waiting.deadline) {
            // No answer from the sidecar in time: inject nothing, and give
            // back whatever the claim grants if its answer comes after all.
            let Some(waiting) = self.claims.waiting.remove(&peer) else {
                continue;
            };
            self.claims.abandon(&waiting);
            match waiting.parked {
                Some((park, deadline)) => self.repark(peer, waiting.call, park, deadline),
                None => self.answer(peer, &HookAnswer::default()),
            }
        }
        for peer in due(&self.claims.delivering, now, |sent| sent.deadline) {
            self.emit(Output::HookClose { peer });
            if let Some(sent) = self.claims.delivering.remove(&peer) {
                self.give_back(&sent.identity, sent.messages, Undelivered::NoReceipt);
            }
        }
        for peer in due(&self.claims.confirming, now, |wake| wake.deadline) {
            // No reading came in time: nothing vouches for the screen.
            if let Some(wake) = self.claims.confirming.remove(&peer) {
                let again_at = wake.park().map(|park| now.saturating_add(park.settle));
                self.withhold(peer, wake, again_at, "no reading of the screen came");
            }
        }
        for stale in self.parked.take_expired(now) {
            self.end_park(stale, ParkEnded::Expired);
        }
        for peer in self.strangers.take_expired(now) {
            self.refuse(peer, another_terminal());
        }
        for due in self.parked.take_due(now) {
            let screen_later = (!parked::may_wake(&due.park, self.fresh_idle))
                .then(|| now.saturating_add(due.park.settle));
            // A turn started without terminal input is fenced like a
            // compare-and-send: the person's latest key may not be drawn
            // yet (see `quiet.rs`).
            let quiet_later = || {
                due.park
                    .waits_for_fresh_idle
                    .then(|| self.person.not_before(self.pacing.quiet_input, now))
                    .flatten()
            };
            if let Some(again_at) = screen_later.or_else(quiet_later) {
                if let Some(stale) = self.parked.hold(due, again_at) {
                    self.end_park(stale, ParkEnded::Replaced);
                }
                continue;
            }
            let request = due.park.claim.clone();
            let restore = Some((due.park, due.deadline));
            self.claim_for(due.peer, due.call, request, restore);
        }
        if self.wanted {
            if self.settle_check_at.is_some_and(|at| at <= now) {
                // The new screen may have settled: read it again.
                self.settle_check_at = None;
                self.moved = true;
            }
            if self.pty_retry_at.is_some_and(|at| at <= now) {
                self.pty_retry_at = None;
                self.open_pty();
            }
            if self.next_heartbeat.is_some_and(|at| at <= now) {
                self.next_heartbeat = None;
                self.moved = true;
            }
        }
        let allowed = self.snapshot_allowed_at().is_none_or(|at| at <= now);
        if self.snapshot_wanted() && allowed {
            self.moved = false;
            self.last_snapshot = Some(now);
            self.snapshots_asked += 1;
            self.link = Link::Open {
                snapshot_pending: true,
            };
            self.emit(Output::PtySnapshot);
        }
        self.report_remark();
    }
}

/// What the machine makes of one hook call line: the call and the
/// provider's plan for it, or the refusal to answer with
/// (`malformed-call`, `unknown-version`, `wrong-provider`). Either way the
/// hook gets one answer line: a refusal now, or the plan's answer (now,
/// after its claim, or empty when the claim's deadline passes).
pub fn judge_call<P: Provider>(
    provider: &mut P,
    line: &[u8],
    agent: &AgentContext,
    now: Time,
) -> Result<(HookCall, HookPlan), HookRefusal> {
    let call = read_call(provider.name(), line)?;
    if call.identity.is_none() {
        return Err(no_identity());
    }
    let plan = provider.on_hook(&call, agent, now);
    Ok((call, plan))
}

/// One hook call line, read and checked for an adapter of `provider`.
fn read_call(provider: &str, line: &[u8]) -> Result<HookCall, HookRefusal> {
    let call: HookCall =
        serde_json::from_slice(line).map_err(|err| refusal("malformed-call", err.to_string()))?;
    if call.v != HOOK_WIRE_VERSION {
        return Err(refusal("unknown-version", format!("version {}", call.v)));
    }
    if call.provider != provider {
        let message = format!("this adapter serves `{provider}`, not `{}`", call.provider);
        return Err(refusal("wrong-provider", message));
    }
    // The machine stamps the call's claims and facts with this identity:
    // one the sidecar would refuse would leave the hook waiting for nothing.
    if let Some(identity) = &call.identity {
        check_identity(identity)
            .map_err(|err| refusal("malformed-call", format!("identity: {err}")))?;
    }
    Ok(call)
}

fn refusal(error: &str, message: String) -> HookRefusal {
    HookRefusal {
        error: error.into(),
        message,
    }
}

/// A call without the harness identity comes from a harness DING did not
/// start (its hooks run without `DING_SESSION`, `DING_INCARNATION` and
/// `DING_GENERATION`): whatever it claimed would go to a session that may
/// never ask again.
fn no_identity() -> HookRefusal {
    refusal(
        "no-identity",
        "the call names no harness identity (DING_SESSION, DING_INCARNATION, DING_GENERATION): its harness was not started by this agent's PTY host".into(),
    )
}

/// A call about another terminal than this adapter's, once it waited for
/// it in vain.
fn another_terminal() -> HookRefusal {
    refusal(
        "identity-mismatch",
        "the call names another harness than the one this adapter serves (stale, or not this agent's)".into(),
    )
}

/// The refusal of a call line longer than [`MAX_CALL_BYTES`].
pub fn oversized_call(len: usize) -> HookRefusal {
    HookRefusal {
        error: "oversized-call".into(),
        message: format!("a call of {len} bytes exceeds {MAX_CALL_BYTES}"),
    }
}

#[cfg(test)]
mod tests;
