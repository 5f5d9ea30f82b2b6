//! What the machine remembers between inputs (the sidecar's view, the
//! screen last read, the link to the PTY host, the claims and parked
//! calls), and its front door: a new machine, each input taken, the
//! outputs drained.

use std::collections::VecDeque;

use crate::adapter::hook_wire::HookCall;
use crate::adapter::parked::ParkedCalls;
use crate::adapter::uplink::Uplink;
use crate::adapter::{AgentContext, Provider};
use crate::core::identity::Identity;
use crate::core::protocol::Undelivered;
use crate::core::time::Time;
use crate::lines::LineBuffer;

use super::calls::oversized_call;
use super::claims::Claims;
use super::contract::{Input, Output, Peer};
use super::pacing::Pacing;
use super::quiet::PersonQuiet;
use super::startup::Startup;
use super::strangers::Strangers;

/// The connection to the PTY host, as the machine asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Link {
    Closed,
    Connecting,
    Open { snapshot_pending: bool },
}

pub struct AdapterMachine<P: Provider> {
    pub(super) provider: P,
    pub(super) agent: AgentContext,
    pub(super) pacing: Pacing,
    /// Whether the sidecar speaks to this adapter. An adapter run by hand
    /// has no downlink: evidence is then always wanted and the identity is
    /// read from the PTY host.
    pub(super) has_downlink: bool,
    pub(super) now: Time,
    pub(super) uplink: Uplink,
    pub(super) downlink: LineBuffer,
    pub(super) identity: Option<Identity>,
    pub(super) evidence_wanted: bool,
    /// Whether the last screen read since evidence became wanted was fresh
    /// idle (`false` before one was read): what a parked wake that waits
    /// for fresh idle is judged by.
    pub(super) fresh_idle: bool,
    /// How long the person had left the terminal alone, as the last screen
    /// read said: a parked call is claimed for only once it is long enough.
    pub(super) person: PersonQuiet,
    /// The last screen read showed the person's own text in the composer
    /// (not DING's typed notice). The harness redrawing does not take a
    /// draft away, so a move alone does not clear it; a person who deleted
    /// theirs since costs the work no more than a claim would (the wake
    /// then starts the one turn that a continuation would have been).
    pub(super) drafting: bool,
    /// Whether this terminal's screen has settled since it was new (see
    /// `startup.rs`), and when to read it again to see that it has.
    pub(super) startup: Startup,
    pub(super) settle_check_at: Option<Time>,
    /// Something moved since the last snapshot was asked for.
    pub(super) screen_stale: bool,
    /// The notice DING last pasted and has not submitted (its request and
    /// text), as the downlink's `typed` said: evidence names it when the
    /// composer holds exactly it.
    pub(super) typed: Option<(u64, String)>,
    pub(super) link: Link,
    /// How many snapshots were asked for: the reply to the last one is
    /// number `snapshots_asked` (one is pending at a time).
    pub(super) snapshots_asked: u64,
    pub(super) last_snapshot: Option<Time>,
    pub(super) next_heartbeat: Option<Time>,
    pub(super) pty_retry_at: Option<Time>,
    pub(super) claims: Claims,
    pub(super) parked: ParkedCalls<Peer, HookCall>,
    /// Calls that name another terminal, waiting for it (`strangers.rs`).
    pub(super) strangers: Strangers,
    /// The provider's remark last reported on its own line.
    pub(super) remarked: Option<String>,
    pub(super) done: bool,
    pub(super) outputs: VecDeque<Output>,
}

impl<P: Provider> AdapterMachine<P> {
    /// A machine for `provider`, started at `now`. `identity` is the one the
    /// adapter was spawned with, if the sidecar knew it.
    pub fn new(
        provider: P,
        agent: AgentContext,
        pacing: Pacing,
        identity: Option<Identity>,
        has_downlink: bool,
        now: Time,
    ) -> AdapterMachine<P> {
        let mut machine = AdapterMachine {
            provider,
            agent,
            pacing,
            has_downlink,
            now,
            uplink: Uplink::new(),
            downlink: LineBuffer::new(crate::core::protocol::MAX_LINE_BYTES * 16),
            identity,
            evidence_wanted: false,
            fresh_idle: false,
            drafting: false,
            person: PersonQuiet::Unknown,
            startup: Startup::New,
            settle_check_at: None,
            screen_stale: false,
            typed: None,
            link: Link::Closed,
            snapshots_asked: 0,
            last_snapshot: None,
            next_heartbeat: None,
            pty_retry_at: None,
            claims: Claims::default(),
            parked: ParkedCalls::default(),
            strangers: Strangers::default(),
            remarked: None,
            done: false,
            outputs: VecDeque::new(),
        };
        machine.read_settings();
        if !has_downlink {
            machine.on_demand(true);
        } else if machine.settling() {
            machine.screen_stale = true;
            machine.open_pty();
        }
        machine
    }

    /// Whether a known terminal's new screen has yet to settle. It is read
    /// until it has, whether or not work waits, so that a message arriving
    /// long after the harness started finds it settled and pays no settle
    /// of its own.
    pub(super) fn settling(&self) -> bool {
        self.identity.is_some()
            && !self.provider.startup_settle().is_zero()
            && self.startup != Startup::Settled
    }

    /// Whether work wants the screen read: evidence is wanted, or a wake
    /// waits for its confirming reading.
    fn read_for_work(&self) -> bool {
        self.evidence_wanted || !self.claims.confirming.is_empty()
    }

    /// Whether the terminal is to be kept open and read: for work, or
    /// because a new screen has yet to settle.
    pub(super) fn screen_wanted(&self) -> bool {
        self.read_for_work() || self.settling()
    }

    /// Whether the screen is read now only to see a new screen settle. A
    /// caller that models the host (the whole-agent simulation) accounts
    /// such reads apart from those made for work.
    pub fn reads_only_to_settle(&self) -> bool {
        !self.read_for_work() && self.settling()
    }

    /// Asks the shell for the provider's settings files, if it has any.
    pub(super) fn read_settings(&mut self) {
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

    /// Feeds one fact in, observed at `now`. Drain [`AdapterMachine::poll_output`]
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
                // tell; the sidecar holds the files in doubt until told.
                if let Some(sent) = self.claims.delivering.remove(&peer)
                    && !sent.messages.is_empty()
                {
                    let line = self.uplink.printed(&sent.identity, sent.messages);
                    self.emit(Output::Uplink(line));
                }
            }
            Input::HookNoReceipt { peer } => {
                if let Some(sent) = self.claims.delivering.remove(&peer) {
                    self.answer_unread(sent, Undelivered::NoReceipt);
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

    pub(super) fn emit(&mut self, output: Output) {
        self.outputs.push_back(output);
    }

    fn is_open(&self) -> bool {
        matches!(self.link, Link::Open { .. })
    }
}
