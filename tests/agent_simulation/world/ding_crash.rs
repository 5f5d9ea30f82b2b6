//! DING's own processes crash too (issue 38 item 2): on some seeds the
//! sidecar, the adapter alone or the PTY host is killed at a random moment
//! and started again, as the real product would live through it.
//!
//! * **The sidecar** (the engine) is killed (`kill -9`) and started again
//!   at once by its supervisor: a new [`Engine`] from the journal the
//!   runtime last wrote (the world keeps `engine.journal()` at every
//!   `JournalChanged`, as `tests/core_simulation.rs` does), a new adapter
//!   (the old one dies with its downlink), a scan of the same inbox before
//!   any line of that adapter's is read (the real start lists `new/` before
//!   its loop runs), a new connection to the PTY host that asks for its
//!   status. A hook call the
//!   old adapter held sees its connection close: `ding hook` answers the
//!   harness as if the inbox were empty (`src/cli/hook.rs`). A send-if in
//!   flight is finished or refused by the PTY host all the same, and its
//!   reply is lost with the connection.
//! * **The adapter** alone dies: the engine sees its end of file and its
//!   exit and spawns a new one after its backoff; parked hook calls and the
//!   machine's state are lost, the hooks answered empty.
//! * **The PTY host** (`ding pty`) dies: it owns the terminal, so the
//!   harness dies with it; a new host starts a new harness incarnation
//!   (`i2`, ...), under a new generation when its launch spec changed
//!   (`g2`, ...; the same spec hashes to the same generation). The
//!   sidecar's link and the adapter's watch see the connection close: the
//!   engine hears `PtyUnreachable` (a send-if in flight has an unknown
//!   outcome) and, when the link reconnects 100 ms later, the new
//!   identity; the adapter hears `PtyLost` and opens again on its retry.
//!   What the host held (a person's waiting keys, the transaction) dies
//!   with it.
//!
//! Drawn from a stream of its own, so that a seed without DING crashes
//! keeps its world byte for byte.
//!
//! The oracle this adds: no PTY byte of DING's reaches a harness other
//! than the one its send-if named ([`Class::StaleWrite`]); a transaction
//! names its files in filename order ([`Class::Fifo`], CORE-13); and the
//! one documented re-delivery after a DING crash, HARD-22 of
//! `docs/vrs/01-ding/requirements.md` (a sidecar killed between the PTY
//! write and the journal write may ring the files of that write again,
//! once), is the only duplicate the `Twice` check lets through.

use ding::core::journal::Journal;

use super::hostile_hooks::HostileDue;
use super::*;

/// Which of DING's processes is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DingCrash {
    /// `ding sidecar`, with the engine, and its adapter with it.
    Sidecar,
    /// The adapter process alone.
    Adapter,
    /// `ding pty`, with the harness it owns.
    PtyHost,
}

/// The stream DING's crashes are drawn from: `Scenario::random`'s own
/// stream never draws for them.
const STREAM: u64 = 0xd1c0_c4a5_4e5d_0001;

/// Percent of seeds on which DING crashes.
const CRASHING_SEEDS: u64 = 15;

/// The seed's crashes of DING's processes: when, and which.
pub fn drawn(seed: u64, quiet_at_ms: u64, arrivals: &[(u64, usize)]) -> Vec<(u64, DingCrash)> {
    let mut rng = Rng(seed ^ STREAM);
    if !rng.chance(CRASHING_SEEDS) {
        return Vec::new();
    }
    let mut crashes = Vec::new();
    for _ in 0..rng.between(1, 2) {
        let kind =
            [DingCrash::Sidecar, DingCrash::Adapter, DingCrash::PtyHost][rng.below(3) as usize];
        // Any moment, or one while an arrival is being delivered (rung,
        // staged, hooked), where a crash has the most to lose.
        let at = match rng.pick(arrivals) {
            Some((arrived, _)) if rng.chance(50) => arrived + rng.between(0, 4_000),
            _ => rng.between(200, quiet_at_ms + 3_000),
        };
        crashes.push((at, kind));
    }
    crashes.sort_by_key(|(at, _)| *at);
    crashes
}

/// What the world keeps about DING's processes to kill and restart them.
pub(super) struct DingProcesses {
    /// Delays of restarts, drawn from the crash stream alone.
    rng: Rng,
    config: EngineConfig,
    /// The journal as the runtime last wrote it.
    pub(super) journal: Journal,
    /// The sidecar's connection to the PTY host, as the host names it.
    pub(super) client: Client,
    /// The send-if of a sidecar killed before its reply: the host still
    /// runs it, and nobody reads the reply.
    orphan: Option<Asked>,
    /// Adapters spawned so far: only the first starts the harness's
    /// session.
    pub(super) spawns: u32,
    /// The PTY host's generation, counted from 1 (`g1`, `g2`, ...).
    generation: u64,
    /// The identity each connection's last send-if named, and the one the
    /// transaction writing now named.
    named: BTreeMap<Client, Identity>,
    writing_for: Option<Identity>,
    /// How many more times each file may reach the model: HARD-22's
    /// window, once per sidecar killed in it; and a claim in doubt, once
    /// per adapter killed after its hook printed the files and before the
    /// receipt reached it (spec §2.2: at least once).
    pub(super) may_repeat: BTreeMap<String, u32>,
    /// The files each hook answered for its receipt named.
    pub(super) for_receipt: BTreeMap<Peer, Vec<String>>,
    /// The last send-if the host wrote, with its files: until its reply
    /// reaches the engine, the journal does not say so.
    pub(super) written: Option<(ding::core::ownership::RequestId, Vec<String>)>,
}

impl DingProcesses {
    pub(super) fn new(seed: u64, config: &EngineConfig) -> DingProcesses {
        DingProcesses {
            rng: Rng(seed ^ STREAM ^ 0xffff),
            config: config.clone(),
            journal: Journal::default(),
            client: DING,
            orphan: None,
            spawns: 0,
            generation: 1,
            named: BTreeMap::new(),
            writing_for: None,
            may_repeat: BTreeMap::new(),
            for_receipt: BTreeMap::new(),
            written: None,
        }
    }
}

/// Whether `due` was on its way to (or from) an adapter process or its
/// connection to the PTY host: it dies with that process. A hook process
/// still connecting is not: it reaches whichever adapter listens then.
fn to_the_adapter(due: &Due) -> bool {
    match due {
        Due::AdapterMachine(ToMachine::HookCall { .. }) => false,
        Due::AdapterMachine(_) | Due::Snapshot => true,
        _ => false,
    }
}

/// Whether `due` is a fact on its way over the sidecar's link to the PTY
/// host: it dies with the connection.
fn over_the_pty_link(due: &Due) -> bool {
    matches!(
        due,
        Due::Engine(
            ToEngine::PtyStatus { .. }
                | ToEngine::PtySent { .. }
                | ToEngine::PtyConflict { .. }
                | ToEngine::PtyUnsettled { .. }
                | ToEngine::PtyInterrupted { .. }
                | ToEngine::PtyWithdrawn { .. }
                | ToEngine::PtyError { .. }
                | ToEngine::PtyMismatch { .. }
        )
    )
}

impl World {
    pub(super) fn ding_crashes(&mut self, crash: DingCrash) {
        match crash {
            DingCrash::Sidecar => self.sidecar_crashes(),
            DingCrash::Adapter => self.adapter_crashes(),
            DingCrash::PtyHost => self.pty_host_crashes(),
        }
    }

    /// The sidecar is killed and started again from its journal.
    fn sidecar_crashes(&mut self) {
        self.note("DING's sidecar is killed and starts again from its journal".into());
        self.receipts_die_with_the_adapter(true);
        self.queued_for_a_clear_may_repeat();
        // A send-if the host wrote whose reply is still on its way to the
        // engine (the sidecar hands it on a moment later): the PTY write
        // is done and the journal write is not, as much inside HARD-22's
        // window as a send-if still in the host's hands (the Return of a
        // withheld notice, whose files the journal owes again).
        let unheard = match self.ding.written.take() {
            Some((request, names))
                if self.due.values().any(|due| {
                    matches!(due, Due::Engine(ToEngine::PtySent { request: sent, .. }) if *sent == request)
                }) =>
            {
                names
            }
            _ => Vec::new(),
        };
        // Whatever was on its way to the dead engine or its adapter is lost.
        self.due.retain(|_, due| {
            !matches!(due, Due::Engine(_) | Due::PtyLinkConnects) && !to_the_adapter(due)
        });
        self.adapter_dies();
        // HARD-22's window: files whose PTY write may be done (or be done
        // by the host after the kill) and whose journal write is not.
        let mut window: Vec<String> = Vec::new();
        if let Some(asked) = self.asked.take() {
            window.extend(asked.messages.iter().map(|name| name.as_str().to_string()));
            self.ding.orphan = Some(asked);
        }
        if self.awaiting_return {
            window.extend(self.typing.iter().cloned());
        }
        window.extend(unheard);
        window.sort();
        window.dedup();
        for name in window {
            self.may_repeat(name);
        }
        let gone = self.ding.client;
        self.ding.client = Client(gone.0 + 1);
        self.drive_order(Some(ToOrder::ClientGone(gone)));
        let now = Time::from_millis(self.now);
        self.engine = Engine::new(self.ding.config.clone(), Some(&self.ding.journal), now);
        self.carry_out_engine();
        // The new sidecar scans the same inbox before it reads a line of
        // its adapter's (`sidecar::runtime::start` lists `new/` before its
        // event loop runs: a hook's claim waits behind the scan), then its
        // link connects and asks the host's status.
        self.inbox_scanned();
        let scan_in = self.ding.rng.between(1, 30);
        self.after(scan_in + 1, Due::PtyLinkConnects);
    }

    /// The adapter alone dies: the engine reads its end and its exit.
    fn adapter_crashes(&mut self) {
        if self.machine.is_none() {
            return;
        }
        self.note("DING's adapter is killed".into());
        self.receipts_die_with_the_adapter(false);
        self.queued_for_a_clear_may_repeat();
        self.due.retain(|_, due| !to_the_adapter(due));
        self.adapter_dies();
        self.after(1, Due::Engine(ToEngine::AdapterEof));
        let exited = ToEngine::AdapterExited {
            status: "signal 9".into(),
        };
        self.after(1, Due::Engine(exited));
    }

    /// The adapter process is gone: its watch closes, and every hook
    /// call it held sees its connection close and answers nothing.
    /// A hook that printed its files and whose receipt had not reached the
    /// adapter when it died: the sidecar gives them back (spec §2.2, at
    /// least once), and they may reach the model again. Called before the
    /// facts on their way to the adapter are dropped.
    fn receipts_die_with_the_adapter(&mut self, sidecar_too: bool) {
        if sidecar_too {
            // A `printed` line on its way to the engine that dies with it:
            // the journal still names those files in doubt.
            let lost: Vec<String> = self
                .due
                .values()
                .filter_map(|due| match due {
                    Due::Engine(ToEngine::AdapterLine(line)) => {
                        let value: Value = serde_json::from_slice(line).ok()?;
                        (value["kind"] == "printed").then(|| value["messages"].clone())
                    }
                    _ => None,
                })
                .flat_map(|messages| {
                    messages
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|name| name.as_str().map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .collect();
            for name in lost {
                self.may_repeat(name);
            }
        }
        let printed_unreceipted: Vec<Peer> = self
            .due
            .values()
            .filter_map(|due| match due {
                Due::AdapterMachine(ToMachine::HookReceipt { peer }) => Some(*peer),
                _ => None,
            })
            .collect();
        for peer in printed_unreceipted {
            for name in self.ding.for_receipt.remove(&peer).unwrap_or_default() {
                self.may_repeat(name);
            }
        }
    }

    /// A delivery waiting in the harness's queue for a context a clear
    /// began, before that context's first prompt: the adapter spawned
    /// again cannot tell the clear was reported and reports it again with
    /// that prompt, which gives the delivery's files back to be said once
    /// more (spec §7, the journal's consequences: at least once; soak seed
    /// 713795).
    fn queued_for_a_clear_may_repeat(&mut self) {
        let names: Vec<String> = self
            .harness
            .queued_before_a_clears_first_prompt()
            .iter()
            .flat_map(|text| self.names_in(text))
            .collect();
        for name in names {
            self.may_repeat(name);
        }
    }

    /// A crash put `name` in doubt: it may reach the model once more, and
    /// the cost oracle owes it a window from now if it does.
    fn may_repeat(&mut self, name: String) {
        self.cost_in_doubt(&name);
        *self.ding.may_repeat.entry(name).or_default() += 1;
    }

    fn adapter_dies(&mut self) {
        self.machine = None;
        self.watching = false;
        let mut connecting: Vec<Peer> = self
            .due
            .values()
            .filter_map(|due| match due {
                Due::AdapterMachine(ToMachine::HookCall { peer, .. })
                | Due::Hostile(HostileDue::Connects { peer, .. }) => Some(*peer),
                _ => None,
            })
            .collect();
        // A hook that outlives its harness connects later, to the adapter
        // there is then.
        connecting.extend(self.hostile.stranded.as_ref().map(|(peer, _)| *peer));
        let held: Vec<Peer> = self
            .hooks
            .iter()
            .filter(|(peer, record)| {
                record.answers == 0
                    && record.incarnation == self.incarnation
                    && !connecting.contains(peer)
            })
            .map(|(peer, _)| *peer)
            .collect();
        for peer in held {
            self.hook_answers_nothing(peer, "its adapter died");
        }
    }

    /// A hook call finds no adapter, or its connection closes: `ding hook`
    /// answers its harness with nothing (exit 0), and a launcher's own
    /// call hears that the adapter cannot be reached (Codex's launcher
    /// then calls again shortly). Both are no answer to the model, as a
    /// timeout is.
    pub(super) fn hook_answers_nothing(&mut self, peer: Peer, why: &str) {
        let Some(record) = self.hooks.get_mut(&peer) else {
            return;
        };
        record.answers += 1;
        let (event, call) = (record.event, record.call);
        self.note(format!("hook {event} ({peer:?}) answers nothing: {why}"));
        self.hook_returned(peer, event, call, None);
    }

    /// `ding pty` dies with the harness it owns; a new host starts a new
    /// one.
    fn pty_host_crashes(&mut self) {
        if self.ding.rng.chance(50) {
            // Started again with a changed launch spec.
            self.ding.generation += 1;
        }
        self.incarnation += 1;
        self.identity.incarnation = format!("i{}", self.incarnation);
        self.identity.generation = format!("g{}", self.ding.generation);
        self.note(format!(
            "DING's PTY host is killed with its harness; a new host starts {} under {}",
            self.identity.incarnation, self.identity.generation
        ));
        // Every connection to the old host closes: what was on its way
        // over them is lost, and so is the transaction it ran.
        self.due.retain(|_, due| {
            !over_the_pty_link(due)
                && !matches!(
                    due,
                    Due::Snapshot
                        | Due::AdapterMachine(
                            ToMachine::PtyMoved
                                | ToMachine::PtyOpened
                                | ToMachine::PtyStarted
                                | ToMachine::PtySnapshot(_)
                                | ToMachine::PtyStatus(_)
                        )
                )
        });
        self.asked = None;
        self.ding.orphan = None;
        self.ding.writing_for = None;
        self.engine
            .handle_input(ToEngine::PtyUnreachable, Time::from_millis(self.now));
        self.carry_out_engine();
        if self.watching {
            self.watching = false;
            let lost = ToMachine::PtyLost("the PTY host closed the connection".into());
            self.after(0, Due::AdapterMachine(lost));
        }
        self.harness_gone();
        self.keys_typed.clear();
        // The person's keys so far went to the old terminal, gone with its
        // harness: the new one has had none of theirs, so their next key
        // keeps its distance from nothing (Gemini seeds 95137 and 246496:
        // a key written by the old host 14 ms before the crash, and the
        // next one, written at once by the new host to its new harness,
        // were taken for a bunch no program read).
        self.last_persons_key = None;
        self.order = InputOrder::new(
            self.identity.session.clone(),
            self.identity.generation.clone(),
            self.key_pacing(),
        );
        self.snapshot_built = None;
        self.harness_started_again();
        // The sidecar's link connects again on its first retry and asks
        // the new host's status.
        self.after(100, Due::PtyLinkConnects);
        let happened = self.harness.started(self.now);
        self.harness_did(happened);
    }

    /// A sidecar started again lists the inbox: what is unread now.
    pub(super) fn inbox_scanned(&mut self) {
        let unread: Vec<MessageName> = self
            .files
            .iter()
            .filter(|(_, file)| !file.archived)
            .map(|(name, _)| MessageName::new(name).expect("name"))
            .collect();
        let scan = ToEngine::InboxScan(unread);
        self.engine.handle_input(scan, Time::from_millis(self.now));
        self.carry_out_engine();
    }

    /// The sidecar's link connects and asks the host's status: the
    /// identity and revision of that moment.
    pub(super) fn pty_link_connects(&mut self) {
        let status = ToEngine::PtyStatus {
            identity: self.identity.clone(),
            revision: self.order.revision(),
        };
        self.engine
            .handle_input(status, Time::from_millis(self.now));
        self.carry_out_engine();
    }

    /// A send-if as it leaves the sidecar: the identity it names, and its
    /// files in filename order (CORE-13).
    pub(super) fn ding_asks(&mut self, send: &SendIf) {
        self.ding
            .named
            .insert(self.ding.client, send.identity.clone());
        if !send.messages.is_sorted() {
            self.violate(
                Class::Fifo,
                format!(
                    "a transaction names its files out of order: {:?}",
                    send.messages
                ),
            );
        }
    }

    /// Whose transaction the PTY host begins.
    pub(super) fn ding_begins(&mut self, client: Client) {
        self.ding.writing_for = self.ding.named.get(&client).cloned();
    }

    /// The send-if `client` asked, if it is awaited.
    pub(super) fn asked_by(&self, client: Client) -> Option<&Asked> {
        if client == self.ding.client {
            self.asked.as_ref()
        } else {
            self.ding.orphan.as_ref()
        }
    }

    /// A reply for a connection since closed: nobody reads it.
    pub(super) fn reply_lost(&mut self, client: Client) -> bool {
        if client == self.ding.client {
            return false;
        }
        if let Some(orphan) = self.ding.orphan.take() {
            self.note(format!(
                "send-if {} of a killed sidecar ends; its reply is lost",
                orphan.request
            ));
        }
        true
    }

    /// A byte of DING's reaches the terminal: it must be the one the
    /// transaction writing it named.
    pub(super) fn ding_writes(&mut self) {
        if let Some(named) = self.ding.writing_for.clone()
            && named != self.identity
        {
            self.violate(
                Class::StaleWrite,
                format!(
                    "DING's bytes for {}/{} reached {}/{}",
                    named.incarnation,
                    named.generation,
                    self.identity.incarnation,
                    self.identity.generation
                ),
            );
        }
    }

    /// How the PTY host paces a person's waiting keys.
    pub(super) fn key_pacing(&self) -> KeyPacing {
        match self.scenario.defect {
            // Waiting keys go on in one burst.
            Some(Defect::BunchesWaitingKeys) => KeyPacing {
                cap: Duration::ZERO,
                ..KeyPacing::PERSON
            },
            _ => KeyPacing::PERSON,
        }
    }
}
