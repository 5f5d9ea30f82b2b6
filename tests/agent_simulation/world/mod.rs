//! The simulated world of one seed: the engine, the adapter machine, a
//! harness model, the PTY host's own input order (its shell here), a
//! person, arrivals, and the invariants.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ding::adapter::machine::{
    AdapterMachine, Input as ToMachine, Output as FromMachine, Pacing, Peer,
};
use ding::adapter::{AgentContext, HookAnswer, ParkAnswer, SettingsRead};
use ding::core::config::{EngineConfig, Policy};
use ding::core::downlink::Downlink;
use ding::core::engine::{Engine, Input as ToEngine, Output as FromEngine, SendIf};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::time::Time;
use ding::core::transport::{PASTE_END, PASTE_START, RETURN, Step};
use ding::pty::input_order::{
    Client, Condition, HoldAsk, Input as ToOrder, InputOrder, KeyPacing, Output as FromOrder,
    Record, Transaction as PtyTransaction, Writer,
};
use ding::pty::wire::{Origin, Reply, SendIfReply, ServerLine};
use ding::sidecar::pty_link::wire_steps;
use serde_json::Value;

use crate::claude_harness::ClaudeHarness;
use crate::codex_harness::CodexHarness;
use crate::demo_harness::DemoHarness;
use crate::gemini_harness::GeminiHarness;
use crate::harness::{Call, Happened, HarnessModel, View};
use crate::mutant::{Defect, Mutant};
use crate::opencode_harness::OpenCodeHarness;
use crate::screens::{HostileScreens, Plan};
use crate::support::rng::Rng;
pub use ding_crash::DingCrash;
use ding_crash::DingProcesses;

mod cost;
mod crash;
mod ding_crash;
mod files;
mod hooks;
mod hostile_hooks;
mod person;
mod terminal;

/// Once the person is quiet and the harness idle, every file reaches the
/// model within this.
pub const LIVENESS_BOUND_MS: u64 = 30_000;

/// What went wrong, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// DING's notice met a person's text in the composer.
    Draft,
    /// DING's paste, or its Return, reached an open dialog.
    Dialog,
    /// DING typed into a running turn.
    Busy,
    /// A wake (a parked hook's answer that starts a turn) came while a
    /// person had a draft: the woken turn changes what their Return does.
    WakeOnDraft,
    /// A hook call got no answer before its timeout.
    HookUnanswered,
    /// A hook call got more than one answer.
    HookAnsweredTwice,
    /// A file reached the model twice.
    Twice,
    /// A file did not reach the model within the bound, the harness idle
    /// and the person quiet.
    Liveness,
    /// DING wrote to the terminal of a harness whose native idle path
    /// serves every delivery (Codex's queue, issue 20 item 6).
    TypedOnNativePath,
    /// A person's keys that waited in the PTY host reached the terminal
    /// inside a harness's burst window of the keys before them though the
    /// person typed them further apart: a Return then reads as a newline
    /// in a paste, and the person's line is not sent.
    KeysBunched,
    /// DING made more model calls than the fewest a person who knew every
    /// arrival would need (`world/cost.rs`).
    Cost,
    /// A byte of DING's reached a harness incarnation or generation other
    /// than the one its send-if named (`world/ding_crash.rs`).
    StaleWrite,
    /// A transaction named its files out of filename order (CORE-13).
    Fifo,
}

/// A key this close to the one before it may be read as part of a paste
/// (a Return as a newline): 30 ms after a typed key on the programs
/// measured.
const BURST_WINDOW_MS: u64 = 30;

/// The slack of the PTY host's pacing (`src/pty/input_order/pace.rs`):
/// paced keys may come this much closer than they were typed.
const TIMER_SLACK_MS: u64 = 2;

/// DING's connection to the PTY host, as the host's input order names it.
const DING: Client = Client(1);

#[derive(Clone, Debug)]
pub struct Violation {
    pub class: Class,
    pub at_ms: u64,
    pub detail: String,
    /// The person's last key reached the harness (could be drawn) only at
    /// or after DING's act behind the violation (the compare-and-send
    /// behind a draft, the claim behind a wake), or the dialog DING's
    /// paste or Return met was drawn only after its compare-and-send, so
    /// nothing DING could read showed it: DING acted on evidence older
    /// than the person's latest input or the harness's latest output
    /// (issue 20's class). A key or a dialog drawn before the act moved
    /// the revision and told the adapter: a violation then is DING's.
    pub key_after_reading: bool,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} at {} ms: {}", self.class, self.at_ms, self.detail)?;
        if self.key_after_reading {
            write!(f, " (the person's last key came after the last reading)")?;
        }
        Ok(())
    }
}

pub struct Outcome {
    pub violations: Vec<Violation>,
    pub trace: Vec<String>,
    /// Files that reached the model typed, and by a hook.
    pub typed: usize,
    pub hooked: usize,
    /// The model calls DING made, and the fewest a person who knew every
    /// arrival would have needed beside their own (`world/cost.rs`).
    pub calls: usize,
    pub fewest_calls: usize,
}

/// Which harness the seed runs, with its provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// The real demo agent, with the demo provider.
    Demo,
    /// A model of Claude Code 2.1.328 (its captured screens, its hooks in
    /// the order the real binary fires them, the wake), with the Claude
    /// provider.
    Claude,
    /// A model of Codex CLI 0.169.0 under DING's launcher (its captured
    /// screens, its hooks, the app-server's queue and the launcher's own
    /// native path), with the Codex provider on the native idle path.
    Codex,
    /// A model of Gemini CLI 0.61.0 (its captured screens, its hooks, the
    /// `AfterAgent` continuation), with the Gemini provider, whose idle
    /// path is the typed notice.
    Gemini,
    /// A model of OpenCode 1.18.33 with DING's two plugins (its captured
    /// screens, the server plugin's turn boundaries, the TUI plugin as the
    /// native idle path's reporter, `promptAsync`), with the OpenCode
    /// provider: DING never types into it.
    OpenCode,
}

impl Harness {
    pub const ALL: [Harness; 3] = [Harness::Demo, Harness::Claude, Harness::Codex];
}

/// One seed's world, drawn up front where it can be.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub seed: u64,
    pub harness: Harness,
    /// How long after it is written a byte reaches the harness, at most.
    pub lag_max_ms: u64,
    /// How long a turn keeps the harness busy.
    pub turn_ms: u64,
    /// Every Nth turn ends in a menu (the demo agent); 0 never.
    pub menu_every: u64,
    /// Arrivals: when, and how many files at once.
    pub arrivals: Vec<(u64, usize)>,
    /// When the person stops typing (they still answer dialogs).
    pub quiet_at_ms: u64,
    /// How busy the person is: percent chance, at each look, of typing.
    pub eagerness: u64,
    /// When the harness crashes and the PTY host starts it again (a new
    /// incarnation), if it does.
    pub restart_at_ms: Option<u64>,
    /// The defect under the mutation check; `None` runs DING as it is.
    pub defect: Option<Defect>,
    /// From when, and for how long, the harness reads none of its input:
    /// a program waiting for a terminal's answer (Codex 0.169.0, resized
    /// with nobody to answer its cursor query, drew nothing for 1.5-2 s and
    /// DING's paste 5-8 s later). What was written meanwhile reaches it at
    /// the end, in order. The person, who resizes the window, types
    /// nothing from a second before until it is drawn again and they have
    /// read it (half a second at least).
    pub stall: Option<(u64, u64)>,
    /// Whether a burst's files may come spread over up to a second (as a
    /// sender's loop sends them) rather than all at once.
    pub spread_bursts: bool,
    /// Whether hooks may be hostile on this seed (`world/hostile_hooks.rs`,
    /// a stream of its own decides): off for the named scenarios written
    /// before them, whose seeds keep their worlds.
    pub hostile_hooks: bool,
    /// Whether a hostile hook may find no
    /// adapter to connect to, so that DING never hears of it. Off in the
    /// sweeps: only an adapter that is not up refuses a connection, and
    /// this world's adapter never goes down (issue 38 item 2); on the
    /// Codex model a `Stop` or `UserPromptSubmit` never heard holds or
    /// repeats a delivery (`docs/simulation.md`).
    pub refused_hooks: bool,
    /// When DING's own processes are killed and started again, and which
    /// (`world/ding_crash.rs`), drawn from a stream of their own.
    pub ding_crashes: Vec<(u64, DingCrash)>,
    /// What the harness's screens do that no hook tells (dialogs no hook
    /// announces, a paste that arrives changed, a screen drawn late or in
    /// pieces: `agent_simulation/screens.rs`), drawn from a stream of its
    /// own.
    pub screens: Plan,
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
            harness: Harness::ALL[(seed % 3) as usize],
            lag_max_ms: [0, 2, 10, 40, 90][rng.between(0, 4) as usize],
            turn_ms: rng.between(300, 4_000),
            menu_every: [0, 0, 2, 3][rng.between(0, 3) as usize],
            quiet_at_ms,
            eagerness: rng.between(0, 80),
            restart_at_ms: rng.chance(10).then(|| rng.between(500, quiet_at_ms)),
            defect: None,
            // Drawn last, so that every earlier draw is the seed's as before.
            stall: rng
                .chance(10)
                .then(|| (rng.between(500, quiet_at_ms), rng.between(1_500, 8_000))),
            // A stream of its own: every draw above is the seed's as before.
            spread_bursts: Rng(seed ^ 0x5b2ead).chance(50),
            hostile_hooks: true,
            refused_hooks: false,
            ding_crashes: ding_crash::drawn(seed, quiet_at_ms, &arrivals),
            arrivals,
            screens: Plan::of(Harness::ALL[(seed % 3) as usize], seed),
        }
    }

    /// The seed's world on `harness` as a named scenario first found it:
    /// without the worlds added to the sweep since (bursts spread over
    /// time, hostile hooks, the hostile screens of
    /// `agent_simulation/screens.rs`), so that its story stays the one it
    /// pins.
    pub fn as_found(harness: Harness, seed: u64) -> Scenario {
        Scenario {
            spread_bursts: false,
            hostile_hooks: false,
            screens: Plan::default(),
            ..Scenario::on(harness, seed)
        }
    }

    /// The seed's world with `harness` whatever the seed's parity.
    pub fn on(harness: Harness, seed: u64) -> Scenario {
        Scenario {
            harness,
            screens: Plan::of(harness, seed),
            ..Scenario::random(seed)
        }
    }

    /// The seed's world on `harness` with `defect`, and no input lag: a
    /// violation is then the defect's, never the known-open race's.
    pub fn mutated(harness: Harness, seed: u64, defect: Defect) -> Scenario {
        Scenario {
            lag_max_ms: 0,
            hostile_hooks: false,
            defect: Some(defect),
            ..Scenario::as_found(harness, seed)
        }
    }
}

/// The least time a person takes to read a screen a harness drew again
/// after a stall before typing on it.
const READS_A_REDRAWN_SCREEN_MS: u64 = 500;

/// How long a person's hand is off the keys before the stall their resize
/// causes.
const RESIZES_A_WINDOW_MS: u64 = 1_000;

/// How a file reached the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// DING's notice, typed and submitted: a prompt.
    Typed,
    /// A delivery queued through a native path, its turn's prompt.
    Queued,
    /// What a hook's answer injected.
    Hook,
    /// What a hook put into a compacted context, with its next request.
    HooksContext,
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Path::Typed => "typed",
            Path::Queued => "queued",
            Path::Hook => "a hook",
            Path::HooksContext => "a hook's context",
        })
    }
}

enum Due {
    PersonLooks,
    /// Bytes reach the harness of this incarnation (lost with it).
    HarnessReads(Vec<u8>, Writer, u64),
    /// The harness crashes and the PTY host starts it again.
    HarnessRestarts,
    AdapterMachine(ToMachine),
    Engine(ToEngine),
    /// The snapshot the machine asked for is taken now.
    Snapshot,
    Arrival(usize),
    /// A hook call's timeout: `ding hook` gives up.
    HookTimeout(Peer),
    /// A hook that fails, is killed, runs twice or outlives its harness.
    Hostile(hostile_hooks::HostileDue),
    /// One of DING's own processes is killed and started again.
    DingCrash(DingCrash),
    /// The sidecar's link (re)connects to the PTY host and asks its status.
    PtyLinkConnects,
}

/// The send-if DING asked the PTY host for, awaiting its answer.
struct Asked {
    request: ding::core::ownership::RequestId,
    expected_revision: u64,
    messages: Vec<MessageName>,
    steps: Vec<Step>,
}

struct HookCallRecord {
    event: &'static str,
    /// The harness incarnation that ran it: a hook dies with its harness.
    incarnation: u64,
    /// The harness's own number for the call.
    call: u64,
    answers: u32,
}

/// The harness a scenario names, started at the world's time zero, with
/// the seed's hostile screens (`agent_simulation/screens.rs`); `first`:
/// its first start, not a restart after a crash.
fn harness_for(scenario: &Scenario, first: bool) -> Box<dyn HarnessModel> {
    let turn = Duration::from_millis(scenario.turn_ms);
    let inner: Box<dyn HarnessModel> = match scenario.harness {
        Harness::Demo => Box::new(DemoHarness::new(turn, scenario.menu_every, Instant::now())),
        Harness::Claude => Box::new(ClaudeHarness::new(turn, scenario.seed)),
        Harness::Codex => Box::new(CodexHarness::new(turn, scenario.seed)),
        Harness::Gemini => Box::new(GeminiHarness::new(turn, scenario.seed)),
        Harness::OpenCode => Box::new(OpenCodeHarness::new(turn, scenario.seed)),
    };
    Box::new(HostileScreens::new(
        inner,
        scenario.harness,
        scenario.screens,
        scenario.seed,
        first,
    ))
}

struct File {
    arrived_ms: u64,
    /// How many times the model's present context says it.
    seen: u32,
    /// It reached the model in a prompt (typed or queued), which a
    /// compaction keeps; not only in what a hook injected.
    in_prompt: bool,
    /// The model was told of it since its context last began (a crash, a
    /// `/clear`). A compaction leaves it told, even where it drops the
    /// text that said it: the summary is written from that text.
    told: bool,
    archived: bool,
}

struct World {
    rng: Rng,
    /// How long the host takes to answer a read the adapter made only to
    /// see a new screen settle (no evidence wanted, no wake confirming):
    /// a stream of its own, so that those reads leave every other draw
    /// where it was.
    unasked_reads: Rng,
    /// `DING_AGENT_SIM_DEBUG` was set: the trace also holds every decision
    /// of the engine and every line the adapter sent up (read once, not on
    /// every line of a sweep).
    debug_trace: bool,
    scenario: Scenario,
    now: u64,
    next_seq: u64,
    due: BTreeMap<(u64, u64), Due>,
    engine: Engine,
    machine: Option<AdapterMachine<Mutant>>,
    harness: Box<dyn HarnessModel>,
    identity: Identity,
    /// The harness's incarnation, counted from 1 (`i1`, `i2`, ...).
    incarnation: u64,
    /// The PTY host's input order: the very machine `ding pty` runs (the
    /// queue, the compare-and-send, the time fence, the hold, withdraw and
    /// the pacing of keys), and with it the revision and the terminal's
    /// times. The world is its shell.
    order: InputOrder,
    /// Whether the adapter watches the terminal (its connection is open).
    watching: bool,
    /// The revision whose snapshot reply the host built last, and when.
    snapshot_built: Option<(u64, u64)>,
    asked: Option<Asked>,
    /// When the last write reaches the harness: input stays in order.
    input_lands_at: u64,
    /// The notices DING pasted, as the harness reads them, and those
    /// already reported as pasted onto a draft.
    pasted: Vec<String>,
    glued: Vec<String>,
    /// DING's notices as they reached the composer, changed on their way.
    changed_pastes: Vec<String>,
    hooks: BTreeMap<Peer, HookCallRecord>,
    next_peer: usize,
    /// Hooks that fail, are killed, run twice or outlive their harness.
    hostile: hostile_hooks::HostileHooks,
    files: BTreeMap<String, File>,
    next_file: u64,
    /// Files seen since the last turn ended: the model archives them then.
    to_archive: Vec<String>,
    /// When the harness first sat quiet after the person did.
    settled_at: Option<u64>,
    /// When the person's last key reaches the harness, and when DING last
    /// began a compare-and-send and last claimed.
    person_key_lands_ms: Option<u64>,
    /// When the dialog now open was drawn (`None`: none is open).
    dialog_since_ms: Option<u64>,
    /// The files of the last compare-and-send, and of every one whose
    /// notice met a known-open race.
    typing: Vec<String>,
    /// DING's paste of `typing` is in the composer, its Return not yet
    /// written and nothing submitted since.
    awaiting_return: bool,
    /// The harness read DING's last paste, and drew since.
    paste_read: bool,
    paste_drawn: bool,
    raced: std::collections::BTreeSet<String>,
    typed_at_ms: Option<u64>,
    claimed_at_ms: Option<u64>,
    /// When each of the person's keys still in the host was typed, and
    /// when the person's last keys were typed and written.
    keys_typed: VecDeque<u64>,
    last_persons_key: Option<(u64, u64)>,
    /// What the cost oracle counts.
    cost: cost::CostLedger,
    violations: Vec<Violation>,
    trace: Vec<String>,
    typed: usize,
    hooked: usize,
    /// DING's own processes, to kill and start again.
    ding: DingProcesses,
}

/// Runs one scenario to its end.
pub fn run(scenario: Scenario) -> Outcome {
    let mut world = World::new(scenario);
    world.run();
    Outcome {
        violations: world.violations,
        trace: world.trace,
        typed: world.typed,
        hooked: world.hooked,
        calls: world.cost.calls(),
        fewest_calls: world.cost.fewest(),
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
        let harness = harness_for(&scenario, true);
        let mut world = World {
            rng: Rng(scenario.seed ^ 0x5eed),
            unasked_reads: Rng(scenario.seed ^ 0x5e771e),
            debug_trace: std::env::var_os("DING_AGENT_SIM_DEBUG").is_some(),
            now: 0,
            next_seq: 0,
            due: BTreeMap::new(),
            ding: DingProcesses::new(scenario.seed, &config),
            engine: Engine::new(config, None, Time::ZERO),
            machine: None,
            harness,
            identity,
            incarnation: 1,
            order: InputOrder::new(
                "host.worker".into(),
                "g1".into(),
                match scenario.defect {
                    // Waiting keys go on in one burst.
                    Some(Defect::BunchesWaitingKeys) => KeyPacing {
                        cap: Duration::ZERO,
                        ..KeyPacing::PERSON
                    },
                    _ => KeyPacing::PERSON,
                },
            ),
            watching: false,
            snapshot_built: None,
            asked: None,
            input_lands_at: 0,
            pasted: Vec::new(),
            glued: Vec::new(),
            changed_pastes: Vec::new(),
            hooks: BTreeMap::new(),
            next_peer: 1,
            hostile: hostile_hooks::HostileHooks::new(&scenario),
            files: BTreeMap::new(),
            next_file: 1,
            to_archive: Vec::new(),
            settled_at: None,
            person_key_lands_ms: None,
            dialog_since_ms: None,
            typing: Vec::new(),
            awaiting_return: false,
            paste_read: false,
            paste_drawn: false,
            raced: std::collections::BTreeSet::new(),
            typed_at_ms: None,
            claimed_at_ms: None,
            keys_typed: VecDeque::new(),
            last_persons_key: None,
            cost: cost::CostLedger::default(),
            violations: Vec::new(),
            trace: Vec::new(),
            typed: 0,
            hooked: 0,
            scenario,
        };
        // The first harness runs, and drew its screen: revision 1. Every
        // modelled harness asked for bracketed paste, as the real ones do.
        world.drive_order(Some(ToOrder::Terminal {
            incarnation: "i1".into(),
            running: true,
            open: true,
        }));
        world.drive_order(Some(ToOrder::Redrawn {
            bracketed_paste: true,
        }));
        for (at, count) in world.scenario.arrivals.clone() {
            world.arrive(at, count);
        }
        if let Some(at) = world.scenario.restart_at_ms {
            world.at(at, Due::HarnessRestarts);
        }
        for (at, crash) in world.scenario.ding_crashes.clone() {
            world.at(at, Due::DingCrash(crash));
        }
        world.at(0, Due::Engine(ToEngine::InboxScan(Vec::new())));
        let status = ToEngine::PtyStatus {
            identity: world.identity.clone(),
            revision: world.order.revision(),
        };
        world.at(1, Due::Engine(status));
        world.at(100, Due::PersonLooks);
        world
    }

    /// `count` files arrive at `at`: at once, or, where the scenario
    /// spreads bursts, as a sender's loop spreads them, each less than a
    /// second after the one before.
    fn arrive(&mut self, at: u64, count: usize) {
        let mut spread = Rng(self.scenario.seed ^ 0x5b2ead ^ at);
        if count < 2 || !self.scenario.spread_bursts {
            return self.at(at, Due::Arrival(count));
        }
        let mut moment = at;
        for _ in 0..count {
            self.at(moment, Due::Arrival(1));
            moment += spread.between(20, 900);
        }
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
        let key_after_reading = match class {
            Class::Draft => self.key_lands_after(self.typed_at_ms),
            Class::Dialog => match (self.dialog_since_ms, self.typed_at_ms) {
                (Some(drawn), Some(typed)) => drawn >= typed,
                _ => false,
            },
            Class::WakeOnDraft => self.key_lands_after(self.claimed_at_ms),
            _ => false,
        };
        if key_after_reading && matches!(class, Class::Draft | Class::Dialog) {
            // The notice now sits glued to a draft or behind a dialog: what
            // becomes of its files follows from this race.
            self.raced.extend(self.typing.iter().cloned());
        }
        self.record(class, detail, key_after_reading);
    }

    fn record(&mut self, class: Class, detail: String, key_after_reading: bool) {
        self.note(format!("VIOLATION {class:?}: {detail}"));
        self.violations.push(Violation {
            class,
            at_ms: self.now,
            detail,
            key_after_reading,
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
                    .and_then(AdapterMachine::next_deadline)
                    .map(Time::as_millis),
                self.harness.next_deadline_ms(),
                self.order.next_deadline().map(Time::as_millis),
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
                    "seed {}: time stands still at {} ms: engine {:?}, machine {:?}, harness {:?}, pty host {:?}\n{}",
                    self.scenario.seed,
                    self.now,
                    self.engine.next_deadline(),
                    self.machine
                        .as_ref()
                        .and_then(AdapterMachine::next_deadline),
                    self.harness.next_deadline_ms(),
                    self.order.next_deadline(),
                    self.trace[self.trace.len().saturating_sub(30)..].join("\n")
                );
            } else {
                steps_at_this_moment = 0;
            }
            self.now = self.now.max(next);
            self.step();
            self.check_settled();
            self.cost_look();
        }
        self.now = self.end_ms();
        self.check_liveness();
        self.check_cost();
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
        if self.order.next_deadline().is_some_and(|at| at <= now) {
            self.order.handle_timeout(now);
            self.drive_order(None);
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
            Due::HarnessReads(bytes, writer, incarnation) if incarnation == self.incarnation => {
                self.harness_reads(&bytes, writer)
            }
            // Written to a harness that is gone.
            Due::HarnessReads(..) => {}
            Due::HarnessRestarts => self.harness_restarts(),
            Due::DingCrash(crash) => self.ding_crashes(crash),
            Due::PtyLinkConnects => self.pty_link_connects(),
            // No adapter listens: `ding hook` answers nothing.
            Due::AdapterMachine(ToMachine::HookCall { peer, .. }) if self.machine.is_none() => {
                self.hook_answers_nothing(peer, "no adapter listens")
            }
            Due::AdapterMachine(input) => {
                if let Some(machine) = self.machine.as_mut() {
                    machine.handle_input(input, now);
                }
                self.carry_out_machine();
            }
            Due::Engine(input) => {
                self.engine.handle_input(input, now);
                self.carry_out_engine();
            }
            Due::Snapshot if self.watching => {
                let revision = self.order.revision();
                let mut snapshot = self.harness.snapshot(revision);
                // As `ding pty` builds it: the terminal's times, and its
                // clock (the host's clock is the world's) when it built the
                // revision's reply, which answers every read of that
                // revision after it (`snapshot_line`).
                snapshot.terminal = self.order.terminal();
                let built_at = match self.snapshot_built {
                    Some((built, at)) if built == revision => at,
                    _ => self.now,
                };
                self.snapshot_built = Some((revision, built_at));
                snapshot.clock_ms = Some(built_at);
                self.after(
                    0,
                    Due::AdapterMachine(ToMachine::PtySnapshot(Box::new(snapshot))),
                );
            }
            // Asked for on a connection since closed: nobody reads it.
            Due::Snapshot => {}
            Due::Arrival(count) => {
                for _ in 0..count {
                    let name = if self.scenario.screens.long_names {
                        format!("m{:04}-{}.md", self.next_file, crate::screens::LONG_NAME)
                    } else {
                        format!("m{:04}.md", self.next_file)
                    };
                    self.next_file += 1;
                    self.files.insert(
                        name.clone(),
                        File {
                            arrived_ms: self.now,
                            seen: 0,
                            in_prompt: false,
                            told: false,
                            archived: false,
                        },
                    );
                    self.note(format!("arrives {name}"));
                    self.cost_window_opens(&name, true);
                    let message = MessageName::new(&name).expect("name");
                    self.engine.handle_input(ToEngine::InboxAdded(message), now);
                }
                self.carry_out_engine();
            }
            Due::HookTimeout(peer) => {
                let Some(record) = self.hooks.get(&peer) else {
                    return;
                };
                if record.answers == 0
                    && record.incarnation == self.incarnation
                    && !self.hostile.gave_up(peer)
                {
                    let (event, call) = (record.event, record.call);
                    self.violate(
                        Class::HookUnanswered,
                        format!("hook {event} ({peer:?}) unanswered by its timeout"),
                    );
                    self.after(0, Due::AdapterMachine(ToMachine::HookGone { peer }));
                    self.hook_returned(peer, event, call, None);
                }
            }
            Due::Hostile(due) => self.hostile_due(due),
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
                    self.machine = Some(AdapterMachine::new(
                        Mutant::new(self.scenario.harness, self.scenario.defect),
                        agent,
                        Pacing::default(),
                        None,
                        true,
                        Time::from_millis(self.now),
                    ));
                    self.note("adapter spawned".into());
                    self.after(1, Due::Engine(ToEngine::AdapterSpawned { pid: 1 }));
                    self.ding.spawns += 1;
                    if self.ding.spawns == 1 {
                        // The harness's session starts with the adapter up.
                        let happened = self.harness.started(self.now);
                        self.harness_did(happened);
                    }
                }
                FromEngine::ToAdapter(Downlink::Claimed(_))
                    if self.scenario.defect == Some(Defect::LosesClaimAnswers) => {}
                FromEngine::ToAdapter(line) => {
                    let bytes = format!("{}\n", line.to_line()).into_bytes();
                    self.after(1, Due::AdapterMachine(ToMachine::Downlink(bytes)));
                }
                // The runtime writes it; a restarted sidecar reads it.
                FromEngine::JournalChanged => self.ding.journal = self.engine.journal(),
                FromEngine::Decision(d) if self.debug_trace => self.note(format!("engine: {d:?}")),
                FromEngine::StatusChanged | FromEngine::Decision(_) => {}
            }
        }
    }

    fn carry_out_machine(&mut self) {
        loop {
            let Some(output) = self.machine.as_mut().and_then(AdapterMachine::poll_output) else {
                return;
            };
            match output {
                FromMachine::Uplink(line) => {
                    if self.debug_trace {
                        let whole: String = line.chars().take(400).collect();
                        self.note(format!("uplink: {whole}"));
                    }
                    if line.contains(r#""kind":"claim""#) {
                        self.claimed_at_ms = Some(self.now);
                    }
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
                    self.after(1, Due::AdapterMachine(ToMachine::PtyOpened));
                }
                FromMachine::PtyClose => self.watching = false,
                FromMachine::PtySnapshot => {
                    let unasked = self
                        .machine
                        .as_ref()
                        .is_some_and(AdapterMachine::reads_only_to_settle);
                    let rng = if unasked {
                        &mut self.unasked_reads
                    } else {
                        &mut self.rng
                    };
                    let delay = rng.between(1, 4);
                    self.after(delay, Due::Snapshot);
                }
                FromMachine::PtyStatus => {}
                FromMachine::Log(line) => self.note(format!("adapter log: {line}")),
                // The simulated providers are set up without settings
                // files: none is there to read.
                FromMachine::ReadSettings(files) => {
                    let read = files
                        .into_iter()
                        .map(|path| SettingsRead {
                            path,
                            settings: Err("not in the simulation".into()),
                        })
                        .collect();
                    self.after(0, Due::AdapterMachine(ToMachine::SettingsRead(read)));
                }
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
            value["revision"] = revision(stamped, self.order.revision()).into();
        }
        value.to_string()
    }
}

fn clip(text: &str) -> String {
    text.chars().take(60).collect()
}
