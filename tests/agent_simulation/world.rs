//! The simulated world of one seed: the engine, the adapter machine, the
//! demo harness, a PTY host model, a person, arrivals, and the invariants.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ding::adapter::AgentContext;
use ding::adapter::machine::{Input as ToMachine, Machine, Output as FromMachine, Pacing, Peer};
use ding::core::config::{EngineConfig, Policy};
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input as ToEngine, Output as FromEngine, SendIf};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::time::Time;
use ding::core::transport::Step;
use ding::demo::agent::{Event, Phase};

use crate::LIVENESS_BOUND_MS;
use crate::demo_harness::{DemoHarness, Happened};
use crate::mutant::{Defect, Mutant};

/// How long `ding hook` waits for its answer (`--timeout`, the default).
const HOOK_TIMEOUT_MS: u64 = 10_000;

/// splitmix64: tiny, fast, and the same everywhere.
pub struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// What went wrong, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// DING's notice met a person's text in the composer.
    Draft,
    /// DING's paste reached an open menu.
    Dialog,
    /// DING typed into a running turn.
    Busy,
    /// A hook call got no answer before its timeout.
    HookUnanswered,
    /// A hook call got more than one answer.
    HookAnsweredTwice,
    /// A file reached the model twice.
    Twice,
    /// A file did not reach the model within the bound, the harness idle
    /// and the person quiet.
    Liveness,
}

#[derive(Clone, Debug)]
pub struct Violation {
    pub class: Class,
    pub at_ms: u64,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} at {} ms: {}", self.class, self.at_ms, self.detail)
    }
}

pub struct Outcome {
    pub violations: Vec<Violation>,
    pub trace: Vec<String>,
    /// Files that reached the model typed, and by a hook.
    pub delivered: usize,
    pub hooked: usize,
}

/// One seed's world, drawn up front where it can be.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    /// How long after it is written a byte reaches the harness, at most.
    pub lag_max_ms: u64,
    /// How long a turn keeps the harness busy.
    pub turn_ms: u64,
    /// Every Nth turn ends in a menu; 0 never.
    pub menu_every: u64,
    /// Arrivals: when, and how many files at once.
    pub arrivals: Vec<(u64, usize)>,
    /// When the person stops typing (they still answer menus).
    pub quiet_at_ms: u64,
    /// How busy the person is: percent chance, at each look, of typing.
    pub eagerness: u64,
    /// The defect under the mutation check; `None` runs DING as it is.
    pub defect: Option<Defect>,
}

impl Scenario {
    pub fn random(seed: u64) -> Scenario {
        let mut rng = Rng(seed);
        let quiet_at_ms = rng.between(3_000, 20_000);
        let mut arrivals = Vec::new();
        for _ in 0..rng.between(1, 5) {
            let count = if rng.chance(20) {
                rng.between(2, 5) as usize
            } else {
                1
            };
            arrivals.push((rng.between(200, quiet_at_ms), count));
        }
        arrivals.sort();
        Scenario {
            seed,
            lag_max_ms: [0, 2, 10, 40, 90][rng.between(0, 4) as usize],
            turn_ms: rng.between(300, 4_000),
            menu_every: [0, 0, 2, 3][rng.between(0, 3) as usize],
            arrivals,
            quiet_at_ms,
            eagerness: rng.between(0, 80),
            defect: None,
        }
    }

    /// The same seed with `defect`, and no input lag: a violation is then
    /// the defect's, never the known-open race's.
    pub fn mutated(seed: u64, defect: Defect) -> Scenario {
        Scenario {
            lag_max_ms: 0,
            defect: Some(defect),
            ..Scenario::random(seed)
        }
    }
}

/// Who wrote bytes to the terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writer {
    Person,
    Ding,
}

enum Due {
    PersonLooks,
    HarnessReads(Vec<u8>, Writer),
    Machine(ToMachine),
    Engine(ToEngine),
    /// The PTY transaction's wait ended.
    TransactionGoesOn,
    /// The snapshot the machine asked for is taken now.
    Snapshot,
    Arrival(usize),
    /// A hook call's timeout: `ding hook` gives up.
    HookTimeout(Peer),
}

struct Transaction {
    request: u64,
    steps: VecDeque<Step>,
}

struct HookCallRecord {
    event: &'static str,
    answers: u32,
}

struct File {
    arrived_ms: u64,
    seen: u32,
    archived: bool,
}

struct World {
    rng: Rng,
    scenario: Scenario,
    now: u64,
    next_seq: u64,
    due: BTreeMap<(u64, u64), Due>,
    engine: Engine,
    machine: Option<Machine<Mutant>>,
    harness: DemoHarness,
    identity: Identity,
    revision: u64,
    /// Whether the adapter watches the terminal (its connection is open).
    watching: bool,
    transaction: Option<Transaction>,
    /// A person's bytes written while a transaction runs wait behind it.
    held_input: VecDeque<Vec<u8>>,
    /// When the last write reaches the harness: input stays in order.
    input_lands_at: u64,
    /// The notices DING pasted, as the harness reads them.
    pasted: Vec<String>,
    hooks: BTreeMap<Peer, HookCallRecord>,
    next_peer: usize,
    files: BTreeMap<String, File>,
    next_file: u64,
    /// Files seen since the last turn ended: the model archives them then.
    to_archive: Vec<String>,
    /// When the harness first sat quiet after the person did.
    settled_at: Option<u64>,
    violations: Vec<Violation>,
    trace: Vec<String>,
    typed: usize,
    hooked: usize,
}

/// Runs one scenario to its end.
pub fn run(scenario: Scenario) -> Outcome {
    let mut world = World::new(scenario);
    world.run();
    Outcome {
        violations: world.violations,
        trace: world.trace,
        delivered: world.typed,
        hooked: world.hooked,
    }
}

impl World {
    fn new(scenario: Scenario) -> World {
        let identity = Identity {
            session: "host.worker".into(),
            incarnation: "i1".into(),
            generation: "g1".into(),
        };
        let config = EngineConfig::new(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
        let harness = DemoHarness::new(
            Duration::from_millis(scenario.turn_ms),
            scenario.menu_every,
            Instant::now(),
        );
        let mut world = World {
            rng: Rng(scenario.seed ^ 0x5eed),
            now: 0,
            next_seq: 0,
            due: BTreeMap::new(),
            engine: Engine::new(config, None, Time::ZERO),
            machine: None,
            harness,
            identity,
            revision: 1,
            watching: false,
            transaction: None,
            held_input: VecDeque::new(),
            input_lands_at: 0,
            pasted: Vec::new(),
            hooks: BTreeMap::new(),
            next_peer: 1,
            files: BTreeMap::new(),
            next_file: 1,
            to_archive: Vec::new(),
            settled_at: None,
            violations: Vec::new(),
            trace: Vec::new(),
            typed: 0,
            hooked: 0,
            scenario,
        };
        for (at, count) in world.scenario.arrivals.clone() {
            world.at(at, Due::Arrival(count));
        }
        world.at(0, Due::Engine(ToEngine::InboxScan(Vec::new())));
        let status = ToEngine::PtyStatus {
            identity: world.identity.clone(),
            revision: world.revision,
        };
        world.at(1, Due::Engine(status));
        world.at(100, Due::PersonLooks);
        world
    }

    fn at(&mut self, at: u64, due: Due) {
        self.next_seq += 1;
        self.due.insert((at.max(self.now), self.next_seq), due);
    }

    fn after(&mut self, delay: u64, due: Due) {
        self.at(self.now + delay, due);
    }

    fn note(&mut self, line: String) {
        self.trace.push(format!("{:>6} {line}", self.now));
    }

    fn violate(&mut self, class: Class, detail: String) {
        self.note(format!("VIOLATION {class:?}: {detail}"));
        self.violations.push(Violation {
            class,
            at_ms: self.now,
            detail,
        });
    }

    fn end_ms(&self) -> u64 {
        self.scenario.quiet_at_ms + LIVENESS_BOUND_MS + 20_000
    }

    fn run(&mut self) {
        self.carry_out_engine();
        let mut steps_at_this_moment = 0;
        loop {
            let next = [
                self.due.keys().next().map(|(at, _)| *at),
                self.engine.next_deadline().map(Time::as_millis),
                self.machine
                    .as_ref()
                    .and_then(Machine::next_deadline)
                    .map(Time::as_millis),
                self.harness.next_deadline_ms(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next.filter(|&at| at <= self.end_ms()) else {
                break;
            };
            if next <= self.now {
                steps_at_this_moment += 1;
                assert!(
                    steps_at_this_moment < 10_000,
                    "seed {}: time stands still at {} ms: engine {:?}, machine {:?}, harness {:?}\n{}",
                    self.scenario.seed,
                    self.now,
                    self.engine.next_deadline(),
                    self.machine.as_ref().and_then(Machine::next_deadline),
                    self.harness.next_deadline_ms(),
                    self.trace[self.trace.len().saturating_sub(30)..].join("\n")
                );
            } else {
                steps_at_this_moment = 0;
            }
            self.now = self.now.max(next);
            self.step();
            self.check_settled();
        }
        self.now = self.end_ms();
        self.check_liveness();
    }

    fn step(&mut self) {
        let now = Time::from_millis(self.now);
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let due = entry.remove();
            self.happen(due);
        }
        if self
            .harness
            .next_deadline_ms()
            .is_some_and(|at| at <= self.now)
        {
            let happened = self.harness.handle_timeout(self.now);
            self.harness_did(happened);
        }
        self.engine.handle_timeout(now);
        self.carry_out_engine();
        if let Some(machine) = self.machine.as_mut() {
            machine.handle_timeout(now);
        }
        self.carry_out_machine();
    }

    fn happen(&mut self, due: Due) {
        let now = Time::from_millis(self.now);
        match due {
            Due::PersonLooks => self.person_looks(),
            Due::HarnessReads(bytes, writer) => self.harness_reads(&bytes, writer),
            Due::Machine(input) => {
                if let Some(machine) = self.machine.as_mut() {
                    machine.handle_input(input, now);
                }
                self.carry_out_machine();
            }
            Due::Engine(input) => {
                self.engine.handle_input(input, now);
                self.carry_out_engine();
            }
            Due::TransactionGoesOn => self.run_transaction(),
            Due::Snapshot => {
                let snapshot = self.harness.snapshot(self.revision);
                if self.watching {
                    self.after(0, Due::Machine(ToMachine::PtySnapshot(Box::new(snapshot))));
                }
            }
            Due::Arrival(count) => {
                for _ in 0..count {
                    let name = format!("m{:04}.md", self.next_file);
                    self.next_file += 1;
                    self.files.insert(
                        name.clone(),
                        File {
                            arrived_ms: self.now,
                            seen: 0,
                            archived: false,
                        },
                    );
                    self.note(format!("arrives {name}"));
                    let message = MessageName::new(&name).expect("name");
                    self.engine.handle_input(ToEngine::InboxAdded(message), now);
                }
                self.carry_out_engine();
            }
            Due::HookTimeout(peer) => {
                let Some(record) = self.hooks.get(&peer) else {
                    return;
                };
                if record.answers == 0 {
                    let event = record.event;
                    self.violate(
                        Class::HookUnanswered,
                        format!("hook {event} ({peer:?}) unanswered after {HOOK_TIMEOUT_MS} ms"),
                    );
                    self.after(0, Due::Machine(ToMachine::HookGone { peer }));
                }
            }
        }
    }

    // ----- the engine and the machine -----

    fn carry_out_engine(&mut self) {
        while let Some(output) = self.engine.poll_output() {
            match output {
                FromEngine::SendIf(send) => self.send_if(send),
                FromEngine::Send(send) => {
                    panic!("an unconditional send under turn-boundary+fresh-idle: {send:?}")
                }
                FromEngine::SpawnAdapter => {
                    let agent = AgentContext {
                        agent: "worker".into(),
                        inbox: PathBuf::from("inbox"),
                    };
                    self.machine = Some(Machine::new(
                        Mutant::new(self.scenario.defect),
                        agent,
                        Pacing::default(),
                        None,
                        true,
                        Time::from_millis(self.now),
                    ));
                    self.note("adapter spawned".into());
                    self.after(1, Due::Engine(ToEngine::AdapterSpawned { pid: 1 }));
                    // The harness's session starts with the adapter up.
                    self.after(20, Due::HarnessReads(Vec::new(), Writer::Person));
                    self.call_hook("session-start");
                }
                FromEngine::ToAdapter(Downlink::Claimed(_))
                    if self.scenario.defect == Some(Defect::LosesClaimAnswers) => {}
                FromEngine::ToAdapter(line) => {
                    let bytes = format!("{}\n", line.to_line()).into_bytes();
                    self.after(1, Due::Machine(ToMachine::Downlink(bytes)));
                }
                FromEngine::JournalChanged
                | FromEngine::StatusChanged
                | FromEngine::Decision(_) => {}
            }
        }
    }

    fn carry_out_machine(&mut self) {
        loop {
            let Some(output) = self.machine.as_mut().and_then(Machine::poll_output) else {
                return;
            };
            match output {
                FromMachine::Uplink(line) => {
                    let line = self.restamped(line);
                    self.after(1, Due::Engine(ToEngine::AdapterLine(line.into_bytes())))
                }
                FromMachine::HookAnswer { peer, line } => {
                    self.hook_answered(peer, &line, false);
                    if self.scenario.defect == Some(Defect::AnswersTwice) {
                        self.hook_answered(peer, &line, false);
                    }
                }
                FromMachine::HookAnswerForReceipt { peer, line } => {
                    self.hook_answered(peer, &line, true)
                }
                FromMachine::HookClose { .. } => {}
                FromMachine::PtyOpen => {
                    self.watching = true;
                    self.after(1, Due::Machine(ToMachine::PtyOpened));
                }
                FromMachine::PtyClose => self.watching = false,
                FromMachine::PtySnapshot => {
                    let delay = self.rng.between(1, 4);
                    self.after(delay, Due::Snapshot);
                }
                FromMachine::PtyStatus => {}
                FromMachine::Log(line) => self.note(format!("adapter log: {line}")),
            }
        }
    }

    /// An activity line as the defect under test stamps it.
    fn restamped(&self, line: String) -> String {
        let revision = match self.scenario.defect {
            Some(Defect::StampsAnOlderRevision) => |stamped: u64, _| stamped.saturating_sub(1),
            Some(Defect::StampsTheCurrentRevision) => |_, current| current,
            _ => return line,
        };
        let mut value: serde_json::Value = serde_json::from_str(&line).expect("a line");
        if let Some(stamped) = value["revision"].as_u64() {
            value["revision"] = revision(stamped, self.revision).into();
        }
        value.to_string()
    }

    // ----- hooks -----

    fn call_hook(&mut self, event: &'static str) {
        let peer = Peer(self.next_peer);
        self.next_peer += 1;
        let line = serde_json::json!({
            "v": 1,
            "provider": "demo",
            "event": event,
            "payload": null,
            "identity": {
                "session": self.identity.session,
                "incarnation": self.identity.incarnation,
                "generation": self.identity.generation,
            },
            "timeoutMs": HOOK_TIMEOUT_MS,
        })
        .to_string()
        .into_bytes();
        self.hooks
            .insert(peer, HookCallRecord { event, answers: 0 });
        self.note(format!("hook {event} {peer:?}"));
        // The hook process starts, reads its payload, connects.
        let delay = self.rng.between(2, 15);
        self.after(delay, Due::Machine(ToMachine::HookCall { peer, line }));
        self.after(HOOK_TIMEOUT_MS, Due::HookTimeout(peer));
    }

    fn hook_answered(&mut self, peer: Peer, line: &str, with_receipt: bool) {
        let Some(record) = self.hooks.get_mut(&peer) else {
            return;
        };
        record.answers += 1;
        let (event, answers) = (record.event, record.answers);
        if answers > 1 {
            return self.violate(
                Class::HookAnsweredTwice,
                format!("hook {event} ({peer:?}) answered {answers} times"),
            );
        }
        let answer: serde_json::Value = serde_json::from_str(line).expect("an answer line");
        let printed = format!(
            "{}{}",
            answer["stdout"].as_str().unwrap_or_default(),
            answer["stderr"].as_str().unwrap_or_default()
        );
        let names = self.names_in(&printed);
        self.note(format!("hook {event} answered, naming {names:?}"));
        if with_receipt {
            self.after(1, Due::Machine(ToMachine::HookReceipt { peer }));
        }
        for name in names {
            self.hooked += 1;
            self.seen(&name, "a hook");
        }
    }

    // ----- the terminal -----

    fn send_if(&mut self, send: SendIf) {
        let now = Time::from_millis(self.now);
        if self.transaction.is_some() {
            panic!("a second transaction while one runs: {send:?}");
        }
        if send.identity != self.identity || send.expected_revision != self.revision {
            self.note(format!(
                "send-if {} refused: revision {} expected {}",
                send.request, self.revision, send.expected_revision
            ));
            let conflict = ToEngine::PtyConflict {
                request: send.request,
                actual: self.revision,
            };
            self.engine.handle_input(conflict, now);
            return self.carry_out_engine();
        }
        self.note(format!(
            "send-if {} at revision {} for {:?}",
            send.request, self.revision, send.messages
        ));
        self.transaction = Some(Transaction {
            request: send.request,
            steps: send.transport.steps.into_iter().collect(),
        });
        self.run_transaction();
    }

    fn run_transaction(&mut self) {
        loop {
            let Some(transaction) = self.transaction.as_mut() else {
                return;
            };
            match transaction.steps.pop_front() {
                Some(Step::Write(bytes)) => self.write(bytes, Writer::Ding),
                Some(Step::Wait(span)) => {
                    let wait = u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
                    return self.after(wait, Due::TransactionGoesOn);
                }
                None => {
                    let request = transaction.request;
                    self.transaction = None;
                    let sent = ToEngine::PtySent {
                        request,
                        revision: self.revision,
                    };
                    self.after(1, Due::Engine(sent));
                    while let Some(bytes) = self.held_input.pop_front() {
                        self.write(bytes, Writer::Person);
                    }
                    return;
                }
            }
        }
    }

    /// Bytes written to the terminal reach the harness after its lag, in
    /// order.
    fn write(&mut self, bytes: Vec<u8>, writer: Writer) {
        let lag = self.rng.between(0, self.scenario.lag_max_ms);
        let lands = (self.now + lag).max(self.input_lands_at);
        self.input_lands_at = lands;
        self.at(lands, Due::HarnessReads(bytes, writer));
    }

    fn harness_reads(&mut self, bytes: &[u8], writer: Writer) {
        if writer == Writer::Ding && bytes.starts_with(b"\x1b[200~") {
            let text = String::from_utf8_lossy(&bytes[6..bytes.len() - 6]).into_owned();
            let phase = self.harness.phase();
            let composer = self.harness.composer().to_string();
            match phase {
                Phase::Working { .. } => {
                    self.violate(Class::Busy, "DING's notice reached a running turn".into())
                }
                Phase::Menu { .. } => {
                    self.violate(Class::Dialog, "DING's notice reached an open menu".into())
                }
                Phase::Idle if !composer.is_empty() => self.violate(
                    Class::Draft,
                    format!("DING's notice joined the draft {composer:?}"),
                ),
                Phase::Idle => {}
            }
            self.pasted.push(text);
        }
        let happened = self.harness.read_input(bytes, self.now);
        self.harness_did(happened);
    }

    fn harness_did(&mut self, happened: Vec<Happened>) {
        for happening in happened {
            match happening {
                Happened::Drew => {
                    self.revision += 1;
                    if self.watching {
                        self.after(1, Due::Machine(ToMachine::PtyMoved));
                    }
                    let status = ToEngine::PtyStatus {
                        identity: self.identity.clone(),
                        revision: self.revision,
                    };
                    self.after(1, Due::Engine(status));
                }
                Happened::Event(event) => self.harness_event(event),
            }
        }
    }

    fn harness_event(&mut self, event: Event) {
        match event {
            Event::Submitted { text, .. } => {
                let names = self.names_in(&text);
                let dings = text.contains("[ding]");
                self.note(format!("submitted {:?}", clip(&text)));
                if dings && !self.pasted.contains(&text) {
                    self.violate(
                        Class::Draft,
                        format!("a prompt joined a person's text and DING's notice: {text:?}"),
                    );
                }
                if dings {
                    for name in names {
                        self.typed += 1;
                        self.seen(&name, "typed");
                    }
                }
            }
            Event::TurnStart { turn } => {
                self.note(format!("turn {turn} starts"));
                self.call_hook("turn-start");
            }
            Event::TurnEnd { turn } => {
                self.note(format!("turn {turn} ends"));
                self.archive_seen();
                self.call_hook("turn-end");
            }
            Event::MenuAnswered {
                after_paste: true, ..
            } => self.violate(Class::Dialog, "a menu was answered after a paste".into()),
            Event::MenuShown { .. } | Event::MenuAnswered { .. } | Event::Queued { .. } => {}
        }
    }

    // ----- the person -----

    fn person_looks(&mut self) {
        let quiet = self.now >= self.scenario.quiet_at_ms;
        let next = match self.harness.phase() {
            Phase::Menu { .. } => {
                // Anyone answers a dialog, quiet or not: after reading it.
                let digit = if self.rng.chance(50) { b"1" } else { b"2" };
                self.person_types(digit.to_vec());
                self.rng.between(300, 2_500)
            }
            _ if quiet => {
                if !self.harness.composer().is_empty() {
                    // The person's last act: their draft goes.
                    self.person_types(b"\r".to_vec());
                }
                1_000
            }
            _ if !self.harness.composer().is_empty() => {
                match self.rng.between(0, 9) {
                    0..=5 => {
                        let letter = b'a' + self.rng.between(0, 25) as u8;
                        self.person_types(vec![letter]);
                        self.rng.between(30, 250)
                    }
                    6 | 7 => {
                        self.person_types(b"\r".to_vec());
                        self.rng.between(200, 3_000)
                    }
                    8 => {
                        // Wipes the draft, one key at a time.
                        let keys = vec![0x7f; self.harness.composer().chars().count()];
                        self.person_types(keys);
                        self.rng.between(100, 2_000)
                    }
                    _ => self.rng.between(500, 6_000),
                }
            }
            _ if self.rng.chance(self.scenario.eagerness) => {
                let letter = b'a' + self.rng.between(0, 25) as u8;
                self.person_types(vec![letter]);
                self.rng.between(30, 250)
            }
            _ => self.rng.between(200, 4_000),
        };
        self.after(next, Due::PersonLooks);
    }

    /// What a person types goes through the PTY host: behind a running
    /// transaction, else straight to the terminal.
    fn person_types(&mut self, bytes: Vec<u8>) {
        self.note(format!(
            "person types {:?}",
            String::from_utf8_lossy(&bytes)
        ));
        if self.transaction.is_some() {
            self.held_input.push_back(bytes);
        } else {
            self.write(bytes, Writer::Person);
        }
    }

    // ----- files -----

    fn names_in(&self, text: &str) -> Vec<String> {
        self.files
            .keys()
            .filter(|name| text.contains(name.as_str()))
            .cloned()
            .collect()
    }

    fn seen(&mut self, name: &str, how: &str) {
        let Some(file) = self.files.get_mut(name) else {
            return;
        };
        file.seen += 1;
        let seen = file.seen;
        self.to_archive.push(name.to_string());
        if seen > 1 {
            self.violate(
                Class::Twice,
                format!("{name} reached the model {seen} times, last {how}"),
            );
        }
    }

    /// The model read what it saw during the turn and archives it.
    fn archive_seen(&mut self) {
        let now = Time::from_millis(self.now);
        for name in std::mem::take(&mut self.to_archive) {
            let Some(file) = self.files.get_mut(&name) else {
                continue;
            };
            if file.archived {
                continue;
            }
            file.archived = true;
            let message = MessageName::new(&name).expect("name");
            self.engine
                .handle_input(ToEngine::InboxRemoved(message), now);
        }
        self.carry_out_engine();
    }

    fn check_settled(&mut self) {
        if self.settled_at.is_none()
            && self.now >= self.scenario.quiet_at_ms
            && self.harness.is_quiet()
            && self.transaction.is_none()
        {
            self.settled_at = Some(self.now);
            self.note("the person is quiet and the harness idle".into());
        }
    }

    fn check_liveness(&mut self) {
        let Some(settled) = self.settled_at else {
            return;
        };
        let late: Vec<String> = self
            .files
            .iter()
            .filter(|(_, file)| {
                file.seen == 0 && settled.max(file.arrived_ms) + LIVENESS_BOUND_MS <= self.now
            })
            .map(|(name, _)| name.clone())
            .collect();
        for name in late {
            self.violate(
                Class::Liveness,
                format!("{name} never reached the model, the harness idle since {settled} ms"),
            );
        }
    }
}

fn clip(text: &str) -> String {
    text.chars().take(60).collect()
}
