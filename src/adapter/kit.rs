//! The adapter's one loop: downlink in, hook calls in, terminal in, protocol
//! lines out.
//!
//! | token | source | becomes |
//! |---|---|---|
//! | `DOWNLINK` | stdin, from the sidecar | identity, demand, claim answers |
//! | `UPLINK` | stdout (writable) | queued protocol lines flushed |
//! | `HOOKS` and peers | `DING_HOOK_SOCKET` | provider hook calls, answered |
//! | `PTY` | the PTY host, only while evidence is wanted | snapshots, then `activity` |
//!
//! Hook calls a provider parks (`parked.rs`) stay open, one per slot, until
//! evidence is wanted (then the kit claims for them and the provider renders
//! the answer) or their deadline (then they are answered with nothing).
//! Evidence is produced only while the sidecar wants it, and only from a
//! snapshot taken after the last thing the kit heard move, stamped with that
//! snapshot's revision: the sidecar's compare-and-send then fails if anything
//! at all happened since. While wanted, a heartbeat re-reads the screen so the
//! evidence never goes stale or silent. With nothing wanted and no hook
//! waiting, the loop sleeps in `poll` with no timeout: zero wake-ups.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::hook_wire::{HOOK_WIRE_VERSION, HookAnswer, HookCall, HookRefusal, MAX_CALL_BYTES};
use super::parked::{self, Parked, Slots};
use super::pty_watch::{PtyEvent, PtyWatch};
use super::uplink::Uplink;
use super::{
    AgentContext, ClaimRequest, HookAction, HookPlan, ParkEnded, Provider, Reading,
    identity_from_env,
};
use crate::core::downlink::{ClaimRefusal, Claimed, Downlink};
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::Undelivered;
use crate::core::protocol::check_identity;
use crate::line_server::{Limits, LineServer, ServerEvent};
use crate::sidecar::adapter_proc::set_nonblocking;
use crate::sidecar::lines::{Line, LineBuffer};

const DOWNLINK: Token = Token(0);
const UPLINK: Token = Token(1);
const PTY: Token = Token(2);
const HOOKS: Token = Token(3);
const FIRST_HOOK_PEER: usize = 100;

/// How long a hook waits for the sidecar's answer to its claim before it is
/// answered with nothing (it then injects nothing; the work stays unread).
const CLAIM_DEADLINE: Duration = Duration::from_secs(3);

/// What one hook call may make the adapter hold: its line, and at most this
/// many calls at once (a harness runs a handful of hooks; a flood of
/// connections closes the oldest, which then injects nothing).
const HOOK_LIMITS: Limits = Limits {
    max_request: MAX_CALL_BYTES,
    max_peers: 64,
};

/// After losing the PTY host, the wait before connecting again.
const PTY_RETRY: Duration = Duration::from_millis(500);

/// How long a hook has, once an answer carrying claimed files is queued
/// for it, to read it, print it and send its receipt. A hook does that in
/// milliseconds; one that has not done it by then is taken not to have
/// passed the files on, and they go back to unread work (`release`
/// `no-receipt`).
pub const RECEIPT_DEADLINE: Duration = Duration::from_secs(5);

/// The most claims remembered whose hook left before their answer came:
/// the sidecar answers every claim at once, so a handful is plenty.
const MAX_ABANDONED_CLAIMS: usize = 256;

/// Everything the loop needs; [`KitOptions::from_env`] reads what the
/// sidecar gives every adapter.
#[derive(Clone, Debug)]
pub struct KitOptions {
    pub pty_socket: PathBuf,
    /// Where to serve the hook channel; `None` serves none.
    pub hook_socket: Option<PathBuf>,
    pub agent: AgentContext,
    /// The `validForMs` of each activity line (the sidecar caps it).
    pub valid_for: Duration,
    /// How often the screen is read again while evidence is wanted and
    /// nothing moved.
    pub heartbeat: Duration,
    /// The least time between two snapshots while the screen keeps moving.
    pub min_snapshot_gap: Duration,
}

impl KitOptions {
    /// From `DING_PTY_SOCKET`, `DING_HOOK_SOCKET`, `DING_AGENT`, `DING_INBOX`.
    pub fn from_env() -> Result<KitOptions> {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let Some(pty_socket) = var("DING_PTY_SOCKET") else {
            bail!("DING_PTY_SOCKET is not set: an adapter runs under `ding sidecar`");
        };
        Ok(KitOptions {
            pty_socket: pty_socket.into(),
            hook_socket: var("DING_HOOK_SOCKET").map(PathBuf::from),
            agent: AgentContext {
                agent: var("DING_AGENT")
                    .map(|value| value.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                inbox: var("DING_INBOX").map(PathBuf::from).unwrap_or_default(),
            },
            valid_for: Duration::from_secs(5),
            heartbeat: Duration::from_secs(4),
            min_snapshot_gap: Duration::from_millis(25),
        })
    }
}

/// A hook call waiting for the sidecar.
struct Waiting {
    call: HookCall,
    /// The claim asked for (kept to ask again after an identity change).
    request: ClaimRequest,
    /// The claim id in flight, or `None` while waiting for the identity.
    claim: Option<u64>,
    /// Whether the claim was already asked again once.
    retried: bool,
    deadline: Instant,
    /// For a parked call due for its claim: its park and deadline, to put it
    /// back in its slot if the claim grants nothing.
    parked: Option<(super::Park, Instant)>,
    /// The identity the claim in flight was made for.
    claimed_as: Option<Identity>,
}

/// An answer carrying claimed files, queued for a hook that has not yet
/// confirmed passing it on. Until then the files are hook-owned but not
/// delivered: a hook that goes away gives them back.
struct Delivering {
    identity: Identity,
    messages: Vec<MessageName>,
    deadline: Instant,
}

struct Kit<P: Provider> {
    provider: P,
    options: KitOptions,
    poll: Poll,
    uplink: Uplink<io::Stdout>,
    uplink_writable: bool,
    downlink: LineBuffer,
    hooks: Option<LineServer>,
    pty: PtyWatch,
    identity: Option<Identity>,
    wanted: bool,
    /// Whether the last screen read since evidence became wanted was fresh
    /// idle (`false` before one was read): what a parked wake that waits
    /// for fresh idle is judged by.
    fresh_idle: bool,
    /// Something moved since the last snapshot was asked for.
    moved: bool,
    last_snapshot: Option<Instant>,
    next_heartbeat: Option<Instant>,
    pty_retry_at: Option<Instant>,
    waiting: HashMap<Token, Waiting>,
    /// Answers with claimed files awaiting the hook's receipt.
    delivering: HashMap<Token, Delivering>,
    /// Claims in flight whose hook left (or was answered with nothing at
    /// the claim deadline): what they grant is given back at once.
    abandoned: HashMap<u64, Identity>,
    parked: Slots<Token, HookCall>,
    /// The provider's remark last reported on its own line.
    remarked: Option<String>,
    next_claim: u64,
    /// Whether the sidecar speaks to this adapter (stdin is its pipe). An
    /// adapter run by hand has none: evidence is then always wanted and the
    /// identity is read from the PTY host.
    has_downlink: bool,
    done: bool,
}

/// Set (non-empty) in an adapter's environment by `ding check --adapters`:
/// the adapter prints whether its setup is complete and exits.
pub const CHECK_VARIABLE: &str = "DING_ADAPTER_CHECK";

/// Beside [`CHECK_VARIABLE`]: the declared harness argv as a JSON list of
/// strings (empty when the declaration has no `command`).
pub const HARNESS_VARIABLE: &str = "DING_ADAPTER_CHECK_HARNESS";

/// An adapter's main: with [`CHECK_VARIABLE`] set, prints
/// [`Provider::check_setup`] (an error if the setup is incomplete) and
/// returns; otherwise runs `provider` with `options()` until the sidecar
/// closes stdin.
pub fn main<P: Provider>(provider: P, options: impl FnOnce() -> Result<KitOptions>) -> Result<()> {
    if std::env::var_os(CHECK_VARIABLE).is_some_and(|value| !value.is_empty()) {
        let harness: Option<Vec<String>> = std::env::var(HARNESS_VARIABLE)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        return match provider.check_setup(harness.as_deref()) {
            Ok(line) => {
                writeln!(io::stdout(), "{line}")?;
                Ok(())
            }
            Err(line) => bail!("{line}"),
        };
    }
    run(provider, options()?)
}

/// Runs `provider` until the sidecar closes stdin.
pub fn run<P: Provider>(provider: P, options: KitOptions) -> Result<()> {
    let mut kit = Kit::new(provider, options)?;
    kit.serve()
}

impl<P: Provider> Kit<P> {
    fn new(provider: P, options: KitOptions) -> Result<Kit<P>> {
        let poll = Poll::new().context("create poll")?;
        let stdin = io::stdin();
        // An adapter started by hand (stdin a terminal or /dev/null) has no
        // downlink: it then treats evidence as always wanted.
        let downlink = set_nonblocking(&stdin).is_ok()
            && poll
                .registry()
                .register(
                    &mut SourceFd(&stdin.as_raw_fd()),
                    DOWNLINK,
                    Interest::READABLE,
                )
                .is_ok();
        let stdout = io::stdout();
        // A stdout that cannot be polled (a file) is written blocking.
        let _ = set_nonblocking(&stdout).is_ok()
            && poll
                .registry()
                .register(
                    &mut SourceFd(&stdout.as_raw_fd()),
                    UPLINK,
                    Interest::WRITABLE,
                )
                .is_ok();
        let hooks = match &options.hook_socket {
            Some(path) => Some(
                LineServer::bind(path, poll.registry(), HOOKS, FIRST_HOOK_PEER, HOOK_LIMITS)
                    .with_context(|| format!("serve the hook channel at {}", path.display()))?,
            ),
            None => None,
        };
        let pty = PtyWatch::new(&options.pty_socket, PTY);
        let mut kit = Kit {
            provider,
            options,
            poll,
            uplink: Uplink::new(stdout),
            uplink_writable: true,
            downlink: LineBuffer::new(crate::core::protocol::MAX_LINE_BYTES * 16),
            hooks,
            pty,
            identity: identity_from_env(),
            wanted: false,
            fresh_idle: false,
            moved: false,
            last_snapshot: None,
            next_heartbeat: None,
            pty_retry_at: None,
            waiting: HashMap::new(),
            delivering: HashMap::new(),
            abandoned: HashMap::new(),
            parked: Slots::default(),
            remarked: None,
            next_claim: 1,
            has_downlink: downlink,
            done: false,
        };
        if !downlink {
            kit.on_demand(true);
        }
        Ok(kit)
    }

    fn serve(&mut self) -> Result<()> {
        let mut events = Events::with_capacity(64);
        while !self.done {
            // Hook connections not yet accepted wait for no event.
            let accepting = self.hooks.as_ref().is_some_and(LineServer::has_backlog);
            let timeout = if accepting {
                Some(Duration::ZERO)
            } else {
                self.next_deadline()
                    .map(|at| at.saturating_duration_since(Instant::now()))
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            for event in events.iter() {
                match event.token() {
                    DOWNLINK => self.on_downlink(),
                    UPLINK => self.uplink_writable = true,
                    PTY => self.on_pty(),
                    token => self.on_hook_ready(token),
                }
            }
            if self.hooks.as_ref().is_some_and(LineServer::has_backlog) {
                self.on_hook_ready(HOOKS);
            }
            self.on_time();
            self.report_remark();
            self.flush_uplink()?;
        }
        if let Some(path) = &self.options.hook_socket {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let snapshot =
            (self.wanted && self.moved && self.pty.is_open() && !self.pty.snapshot_pending())
                .then(|| self.snapshot_allowed_at().unwrap_or_else(Instant::now));
        let claims = self.waiting.values().map(|waiting| waiting.deadline).min();
        let receipts = self.delivering.values().map(|sent| sent.deadline).min();
        let parked = self.parked.next_deadline();
        [
            snapshot,
            self.next_heartbeat,
            self.pty_retry_at,
            claims,
            receipts,
            parked,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// When the next snapshot may be asked for; `None`: at once.
    fn snapshot_allowed_at(&self) -> Option<Instant> {
        self.last_snapshot
            .map(|at| at + self.options.min_snapshot_gap)
    }

    fn flush_uplink(&mut self) -> Result<()> {
        if !self.uplink_writable {
            return Ok(());
        }
        match self.uplink.flush() {
            Ok(waiting) => {
                // Edge-triggered: wait for the next writable event.
                self.uplink_writable = !waiting;
                Ok(())
            }
            Err(err) => {
                self.done = true;
                Err(err).context("write to the sidecar")
            }
        }
    }

    // ----- the downlink -----

    fn on_downlink(&mut self) {
        let mut chunk = [0u8; 16 * 1024];
        let mut lines = Vec::new();
        let mut stdin = io::stdin();
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) => {
                    // The sidecar is gone: so is the adapter's reason to be.
                    self.done = true;
                    break;
                }
                Ok(n) => self.downlink.push(&chunk[..n], &mut lines),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.done = true;
                    break;
                }
            }
        }
        for line in lines {
            let Line::Complete(bytes) = line else {
                continue;
            };
            match Downlink::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(Downlink::Pty { identity }) => self.on_identity(identity),
                Ok(Downlink::Evidence { wanted }) => self.on_demand(wanted),
                Ok(Downlink::Claimed(claimed)) => self.on_claimed(claimed),
                // To the sidecar, which logs it; `eprintln!` would panic
                // (and end the adapter) on a stderr it cannot write.
                Err(err) => {
                    let _ = writeln!(io::stderr(), "adapter: ignoring a downlink line: {err}");
                }
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
        // Claims refused for identity wait for this; ask again now.
        let again: Vec<Token> = self
            .waiting
            .iter()
            .filter(|(_, waiting)| waiting.claim.is_none())
            .map(|(token, _)| *token)
            .collect();
        for token in again {
            self.send_claim(token);
        }
        self.moved = true;
    }

    /// The terminal's identity changed: nothing read of the old one's
    /// screen, or said by its hooks, holds for the new one.
    fn new_terminal(&mut self, identity: Option<&Identity>) {
        self.fresh_idle = false;
        self.provider.on_identity(identity);
    }

    fn on_demand(&mut self, wanted: bool) {
        self.wanted = wanted;
        if wanted {
            // No screen was read while evidence was not wanted: the last
            // one is stale.
            self.fresh_idle = false;
        }
        self.parked.on_demand(wanted, Instant::now());
        if wanted {
            self.moved = true;
            self.next_heartbeat = Some(Instant::now() + self.options.heartbeat);
            self.open_pty();
        } else {
            self.next_heartbeat = None;
            self.pty_retry_at = None;
            self.moved = false;
            self.pty.close(self.poll.registry());
        }
    }

    fn on_claimed(&mut self, claimed: Claimed) {
        if let Some(identity) = self.abandoned.remove(&claimed.claim) {
            // Nobody is left to pass these on.
            return self.give_back(&identity, claimed.granted, Undelivered::HookGone);
        }
        let Some(token) = self
            .waiting
            .iter()
            .find(|(_, waiting)| waiting.claim == Some(claimed.claim))
            .map(|(token, _)| *token)
        else {
            return;
        };
        let identity_refusal = matches!(
            claimed.refusal,
            Some(ClaimRefusal::PtyUnknown | ClaimRefusal::IdentityMismatch)
        );
        if let Some(waiting) = self.waiting.get_mut(&token)
            && identity_refusal
            && !waiting.retried
        {
            // The hook may know of a restart before the sidecar does: wait
            // for the sidecar's next identity, then ask once more.
            waiting.retried = true;
            waiting.claim = None;
            return;
        }
        let Some(waiting) = self.waiting.remove(&token) else {
            return;
        };
        if let Some((park, deadline)) = waiting.parked.clone()
            && claimed.granted.is_empty()
        {
            // Nothing to wake the harness with: keep offering.
            return self.repark(token, waiting.call, park, deadline);
        }
        let answer = self
            .provider
            .on_claimed(&waiting.call, &claimed, &self.options.agent);
        match waiting.claimed_as {
            Some(identity) if !claimed.granted.is_empty() => {
                self.answer_for_receipt(token, &answer, identity, claimed.granted)
            }
            _ => self.answer(token, &answer),
        }
    }

    /// Answers `peer` with claimed files and waits for its receipt.
    fn answer_for_receipt(
        &mut self,
        peer: Token,
        answer: &HookAnswer,
        identity: Identity,
        messages: Vec<MessageName>,
    ) {
        let mut events = Vec::new();
        if let Some(server) = self.hooks.as_mut() {
            server.reply_for_receipt(
                self.poll.registry(),
                peer,
                answer.to_line().as_bytes(),
                &mut events,
            );
        }
        self.delivering.insert(
            peer,
            Delivering {
                identity,
                messages,
                deadline: Instant::now() + RECEIPT_DEADLINE,
            },
        );
        self.on_server_events(events);
    }

    /// The files an answer carried go back to unread work: the hook never
    /// passed them on. (The sidecar logs the release and its cause.)
    fn give_back(&mut self, identity: &Identity, messages: Vec<MessageName>, why: Undelivered) {
        if !messages.is_empty() {
            self.uplink.release(identity, messages, why);
        }
    }

    /// The claim in flight for `waiting`, if any, is remembered as
    /// abandoned: what it grants is given back when it is answered.
    fn abandon(&mut self, waiting: &Waiting) {
        let (Some(claim), Some(identity)) = (waiting.claim, waiting.claimed_as.clone()) else {
            return;
        };
        if self.abandoned.len() >= MAX_ABANDONED_CLAIMS
            && let Some(oldest) = self.abandoned.keys().min().copied()
        {
            self.abandoned.remove(&oldest);
        }
        self.abandoned.insert(claim, identity);
    }

    /// Puts a parked call whose claim granted nothing back in its slot, or
    /// answers it with nothing if a newer call took the slot.
    fn repark(&mut self, peer: Token, call: HookCall, park: super::Park, deadline: Instant) {
        let back = Parked {
            peer,
            call,
            park,
            deadline,
            fire_at: None,
        };
        if let Some(stale) = self.parked.restore(back, self.wanted, Instant::now()) {
            self.end_park(stale, ParkEnded::Replaced);
        }
    }

    /// Answers a parked call with nothing and tells the provider why.
    fn end_park(&mut self, parked: Parked<Token, HookCall>, ended: ParkEnded) {
        // The terminal may be free again: read it.
        self.moved = true;
        if ended != ParkEnded::Withdrawn {
            self.answer(parked.peer, &HookAnswer::default());
        }
        self.provider
            .on_park_ended(&parked.call, parked.park.slot, ended);
    }

    // ----- hooks -----

    fn on_hook_ready(&mut self, token: Token) {
        let Some(server) = self.hooks.as_mut() else {
            return;
        };
        if !server.owns(token) {
            return;
        }
        let mut events = Vec::new();
        server.on_ready(self.poll.registry(), token, &mut events);
        self.on_server_events(events);
    }

    fn on_server_events(&mut self, events: Vec<ServerEvent>) {
        for event in events {
            match event {
                ServerEvent::Request { peer, line } => self.on_call(peer, &line),
                ServerEvent::TooLong { peer, len } => {
                    let refusal = oversized_call(len);
                    self.refuse(peer, &refusal.error, &refusal.message)
                }
                ServerEvent::Gone { peer } => {
                    // The harness gave up on the hook (its own timeout, a
                    // Ctrl-C, a crash) before the answer reached it: an
                    // answer never received is no delivery. A claim still
                    // in flight is given back when it is answered; files
                    // already granted are given back now.
                    if let Some(waiting) = self.waiting.remove(&peer) {
                        self.abandon(&waiting);
                    }
                    if let Some(sent) = self.delivering.remove(&peer) {
                        self.give_back(&sent.identity, sent.messages, Undelivered::HookGone);
                    }
                    if let Some(parked) = self.parked.withdraw(peer) {
                        self.end_park(parked, ParkEnded::Withdrawn);
                    }
                }
                ServerEvent::Receipt { peer } => {
                    // Printed for the harness: delivered, as far as a hook
                    // can tell.
                    self.delivering.remove(&peer);
                }
                ServerEvent::NoReceipt { peer } => {
                    if let Some(sent) = self.delivering.remove(&peer) {
                        self.give_back(&sent.identity, sent.messages, Undelivered::NoReceipt);
                    }
                }
            }
        }
    }

    fn on_call(&mut self, peer: Token, line: &[u8]) {
        let (call, plan) = match judge_call(&mut self.provider, line, &self.options.agent) {
            Ok(judged) => judged,
            Err(refusal) => return self.refuse(peer, &refusal.error, &refusal.message),
        };
        if let Some(identity) = self.identity_for(&call) {
            for fact in plan.facts {
                self.uplink.lifecycle(&identity, fact);
            }
            if !plan.received.is_empty() {
                self.uplink.turn_boundary(&identity, plan.received);
            }
        }
        for slot in plan.end_parked {
            if let Some(parked) = self.parked.release(slot) {
                self.end_park(parked, ParkEnded::Ended);
            }
        }
        // What the hook said may change the evidence: read the screen again,
        // and wake nothing until then.
        self.moved = true;
        self.fresh_idle = false;
        match plan.action {
            HookAction::Answer(answer) => self.answer(peer, &answer),
            HookAction::Claim(request) => self.claim_for(peer, call, request, None),
            HookAction::Park(park) => {
                let now = Instant::now();
                let deadline = parked::deadline(&park, call.timeout(), now);
                if let Some(replaced) =
                    self.parked
                        .park(peer, call, park, deadline, self.wanted, now)
                {
                    self.end_park(replaced, ParkEnded::Replaced);
                }
            }
        }
    }

    /// Makes a claim for `peer`'s call and waits for its answer.
    fn claim_for(
        &mut self,
        peer: Token,
        call: HookCall,
        request: ClaimRequest,
        parked: Option<(super::Park, Instant)>,
    ) {
        self.waiting.insert(
            peer,
            Waiting {
                call,
                request,
                claim: None,
                retried: false,
                deadline: Instant::now() + CLAIM_DEADLINE,
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

    fn send_claim(&mut self, token: Token) {
        let Some(waiting) = self.waiting.get(&token) else {
            return;
        };
        let Some(identity) = waiting
            .call
            .identity
            .clone()
            .or_else(|| self.identity.clone())
        else {
            return;
        };
        let claim = self.next_claim;
        self.next_claim += 1;
        let request = waiting.request.clone();
        self.uplink.claim(&identity, claim, &request);
        if let Some(waiting) = self.waiting.get_mut(&token) {
            waiting.claim = Some(claim);
            waiting.claimed_as = Some(identity);
        }
    }

    fn answer(&mut self, peer: Token, answer: &HookAnswer) {
        if let Some(server) = self.hooks.as_mut() {
            server.reply(self.poll.registry(), peer, answer.to_line().as_bytes());
        }
    }

    fn refuse(&mut self, peer: Token, error: &str, message: &str) {
        let refusal = HookRefusal {
            error: error.into(),
            message: message.into(),
        };
        if let Some(server) = self.hooks.as_mut() {
            server.reply(self.poll.registry(), peer, refusal.to_line().as_bytes());
        }
    }

    // ----- the terminal -----

    fn open_pty(&mut self) {
        if self.pty.is_open() {
            return;
        }
        match self.pty.open(self.poll.registry()) {
            Ok(()) => {
                self.pty_retry_at = None;
                self.learn_identity_from_pty();
            }
            Err(err) => self.pty_lost(&format!("connect to the pty host: {err}")),
        }
    }

    /// Without a downlink, the PTY host's own status names the identity.
    fn learn_identity_from_pty(&mut self) {
        if !self.has_downlink
            && let Err(err) = self.pty.request_status(self.poll.registry())
        {
            self.pty_lost(&format!("ask for the status: {err}"));
        }
    }

    fn on_pty(&mut self) {
        let mut events = Vec::new();
        self.pty.on_ready(self.poll.registry(), &mut events);
        for event in events {
            match event {
                PtyEvent::Moved => self.moved = true,
                PtyEvent::Started => self.learn_identity_from_pty(),
                PtyEvent::Status(status) if !self.has_downlink => {
                    let identity = Some(Identity {
                        session: status.session,
                        incarnation: status.incarnation,
                        generation: status.generation,
                    });
                    if identity != self.identity {
                        self.new_terminal(identity.as_ref());
                    }
                    self.identity = identity;
                    self.moved = true;
                }
                PtyEvent::Status(_) => {}
                PtyEvent::Snapshot(snapshot) => {
                    let screen = self.provider.read_screen(&snapshot);
                    let reading = self.provider.evidence(screen);
                    // The provider's own evidence, hooks and screen: a screen
                    // that flashes idle between two states (a command's
                    // Return, then the spinner) is not fresh idle.
                    self.fresh_idle = parked::is_fresh_idle(&reading);
                    self.report(&reading, snapshot.revision);
                }
                PtyEvent::Lost(why) => self.pty_lost(&why),
            }
        }
    }

    fn pty_lost(&mut self, why: &str) {
        self.pty.close(self.poll.registry());
        if let Some(identity) = self.identity.clone() {
            // Without a screen nothing can be vouched for: say so (no
            // revision, so it can never authorize input).
            self.uplink.activity_unknown(&identity, why);
        }
        if self.wanted {
            self.pty_retry_at = Some(Instant::now() + PTY_RETRY);
        }
    }

    fn report(&mut self, reading: &Reading, revision: u64) {
        if !self.wanted {
            return;
        }
        if let Some(identity) = self.identity.clone() {
            let mut reading = reading.clone();
            if let Some(slot) = self.terminal_held_by() {
                reading.state = crate::core::protocol::ActivityState::Unknown;
                reading.reason =
                    format!("a parked hook call ({slot}) delivers; {}", reading.reason).into();
            }
            if let Some(remark) = self.provider.remark() {
                reading.reason = format!("{}; {remark}", reading.reason).into();
                self.remarked = Some(remark);
            }
            self.uplink
                .activity(&identity, &reading, revision, self.options.valid_for);
        }
    }

    /// The slot of a parked call (waiting or being claimed for) that holds
    /// the terminal. A parked call that may not wake the harness on this
    /// screen ([`parked::may_wake`]) holds nothing: the screen's own
    /// evidence says why nothing is delivered (a draft, say).
    fn terminal_held_by(&self) -> Option<&'static str> {
        let parked = self
            .parked
            .terminal_park()
            .filter(|park| parked::may_wake(park, self.fresh_idle))
            .map(|park| park.slot);
        parked.or_else(|| {
            self.waiting
                .values()
                .filter_map(|waiting| waiting.parked.as_ref())
                .find(|(park, _)| park.holds_terminal)
                .map(|(park, _)| park.slot)
        })
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
            self.uplink.activity_unknown(&identity, &text);
            self.remarked = remark;
        }
    }

    // ----- time -----

    fn on_time(&mut self) {
        let now = Instant::now();
        for token in due(&self.waiting, now, |waiting| waiting.deadline) {
            // No answer from the sidecar in time: inject nothing, and give
            // back whatever the claim grants if its answer comes after all.
            let Some(waiting) = self.waiting.remove(&token) else {
                continue;
            };
            self.abandon(&waiting);
            match waiting.parked {
                Some((park, deadline)) => self.repark(token, waiting.call, park, deadline),
                None => self.answer(token, &HookAnswer::default()),
            }
        }
        for token in due(&self.delivering, now, |sent| sent.deadline) {
            if let Some(server) = self.hooks.as_mut() {
                server.close(self.poll.registry(), token);
            }
            if let Some(sent) = self.delivering.remove(&token) {
                self.give_back(&sent.identity, sent.messages, Undelivered::NoReceipt);
            }
        }
        for stale in self.parked.take_expired(now) {
            self.end_park(stale, ParkEnded::Expired);
        }
        for due in self.parked.take_due(now) {
            if !parked::may_wake(&due.park, self.fresh_idle) {
                if let Some(stale) = self.parked.hold(due, now) {
                    self.end_park(stale, ParkEnded::Replaced);
                }
                continue;
            }
            let request = due.park.claim.clone();
            let restore = Some((due.park, due.deadline));
            self.claim_for(due.peer, due.call, request, restore);
        }
        if !self.wanted {
            return;
        }
        if self.pty_retry_at.is_some_and(|at| at <= now) {
            self.pty_retry_at = None;
            self.open_pty();
        }
        if self.next_heartbeat.is_some_and(|at| at <= now) {
            self.next_heartbeat = Some(now + self.options.heartbeat);
            self.moved = true;
        }
        let due = self.snapshot_allowed_at().is_none_or(|at| at <= now);
        if self.moved && due && self.pty.is_open() && !self.pty.snapshot_pending() {
            self.moved = false;
            self.last_snapshot = Some(now);
            if let Err(err) = self.pty.request_snapshot(self.poll.registry()) {
                self.pty_lost(&format!("ask for a snapshot: {err}"));
            }
        }
    }
}

/// The peers in `waits` whose deadline has come by `now`.
fn due<T>(waits: &HashMap<Token, T>, now: Instant, deadline: fn(&T) -> Instant) -> Vec<Token> {
    waits
        .iter()
        .filter(|(_, wait)| deadline(wait) <= now)
        .map(|(token, _)| *token)
        .collect()
}

/// What the kit makes of one hook call line: the call and the provider's
/// plan for it, or the refusal to answer with (`malformed-call`,
/// `unknown-version`, `wrong-provider`). Either way the hook gets one answer
/// line: a refusal now, or the plan's answer (now, after its claim, or
/// empty when the claim's deadline passes).
pub fn judge_call<P: Provider>(
    provider: &mut P,
    line: &[u8],
    agent: &AgentContext,
) -> Result<(HookCall, HookPlan), HookRefusal> {
    let refusal = |error: &str, message: String| HookRefusal {
        error: error.into(),
        message,
    };
    let call: HookCall =
        serde_json::from_slice(line).map_err(|err| refusal("malformed-call", err.to_string()))?;
    if call.v != HOOK_WIRE_VERSION {
        return Err(refusal("unknown-version", format!("version {}", call.v)));
    }
    if call.provider != provider.name() {
        let message = format!(
            "this adapter serves `{}`, not `{}`",
            provider.name(),
            call.provider
        );
        return Err(refusal("wrong-provider", message));
    }
    // The kit stamps the call's claims and facts with this identity: one
    // the sidecar would refuse would leave the hook waiting for nothing.
    if let Some(identity) = &call.identity {
        check_identity(identity)
            .map_err(|err| refusal("malformed-call", format!("identity: {err}")))?;
    }
    let plan = provider.on_hook(&call, agent);
    Ok((call, plan))
}

/// The refusal of a call line longer than [`MAX_CALL_BYTES`].
pub fn oversized_call(len: usize) -> HookRefusal {
    HookRefusal {
        error: "oversized-call".into(),
        message: format!("a call of {len} bytes exceeds {MAX_CALL_BYTES}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::{ClaimScope, ClaimWants, MAX_FIELD_BYTES};

    /// A provider that claims on every call.
    struct Claiming;

    impl Provider for Claiming {
        fn name(&self) -> &'static str {
            "test"
        }

        fn read_screen(&self, _snapshot: &crate::pty::wire::Snapshot) -> Reading {
            Reading::unknown("test")
        }

        fn on_hook(&mut self, _call: &HookCall, _agent: &AgentContext) -> HookPlan {
            HookPlan::act(HookAction::Claim(ClaimRequest {
                wants: ClaimWants::Oldest(1),
                scope: ClaimScope::Pending,
                name_bytes: None,
            }))
        }
    }

    fn call(session: &str, incarnation: &str) -> Vec<u8> {
        serde_json::json!({
            "v": 1, "provider": "test", "event": "e", "payload": null,
            "identity": {"session": session, "incarnation": incarnation, "generation": "g"},
        })
        .to_string()
        .into_bytes()
    }

    /// The kit stamps a claim with the hook's own identity; one the
    /// protocol refuses (an empty or over-long part) would make the sidecar
    /// reject the claim unanswered, so the call is refused at once (found
    /// by the `hook-calls` fuzz target).
    #[test]
    fn a_call_whose_identity_cannot_stamp_a_line_is_refused() {
        let agent = AgentContext {
            agent: "w".into(),
            inbox: PathBuf::from("/inbox"),
        };
        let long = "s".repeat(MAX_FIELD_BYTES + 1);
        for line in [call("s", ""), call("", "i"), call(&long, "i")] {
            let refusal = judge_call(&mut Claiming, &line, &agent).expect_err("refused");
            assert_eq!(refusal.error, "malformed-call", "{refusal:?}");
            assert!(refusal.message.contains("identity"), "{refusal:?}");
        }
        assert!(judge_call(&mut Claiming, &call("s", "i"), &agent).is_ok());
    }
}
