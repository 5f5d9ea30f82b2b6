//! Hooks as a hostile world (issue 38 item 3): what real hook runs do
//! besides connect, wait and print an answer.
//!
//! On a quarter of the seeds, drawn from a stream of its own (so that a
//! seed without it keeps its world byte for byte), a hook call meets one
//! of these fates, each as the harnesses and `ding hook` really behave:
//!
//! * **refused**: `ding hook` cannot connect (the adapter is not up, its
//!   socket refuses): it prints nothing and exits 0 (`src/cli/hook.rs`),
//!   and the harness goes on as if the inbox were empty. DING never hears
//!   of the call.
//! * **the harness's own timeout**: the harness waits less than DING's
//!   answer takes (Codex clamps its `SessionEnd` and `Interrupt` hooks to
//!   3 s whatever the configuration says; a person's configuration may set
//!   any `timeout`). Claude Code and Gemini CLI kill a hook at its timeout
//!   (`docs/providers/claude.md`, `gemini-findings.md` 4e): the connection
//!   closes, the harness goes on without an answer, and what DING answers
//!   meanwhile is read by nobody.
//! * **killed**: the hook process dies at any moment (a signal, the
//!   machine's memory), before it has printed: the same, sooner.
//! * **run twice**: the same event runs two `ding hook` processes at once
//!   (settings merged twice with two spellings of the command, a bare
//!   `ding` and its full path: a harness that drops a repeated hook can
//!   drop only an identical command; Gemini CLI fires `SessionEnd` twice
//!   on its own). They run in parallel; the harness waits for both and
//!   reads both outputs.
//! * **outlives its harness** (a stale call): the harness crashes just
//!   after it started the hook, the PTY host starts it again, and the
//!   orphaned `ding hook` connects only then, carrying the old
//!   incarnation's identity from its environment (issue 36 item 2). Its
//!   answer is read by nobody: printing it fails on the dead harness's
//!   pipe, so no receipt goes back, and the process exits.
//!
//! The invariants are the world's own: no file lost (a file a stale call
//! claimed is not delivered), no stall, every call of the harness that
//! lives answered once in time.

use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// The stream's own constant: no other draw of the world uses it.
const STREAM: u64 = 0x4_0075_c0de_0bad;

/// What becomes of one hook call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fate {
    Faithful,
    Refused,
    /// The harness stops waiting after this long, and kills the process.
    HarnessTimeout(u64),
    /// The process is killed this long after it started.
    Killed(u64),
    Twice,
    OutlivesItsHarness,
}

/// The world's hostile-hook events.
pub(super) enum HostileDue {
    /// `ding hook` found no adapter: it printed nothing, exit 0.
    Refused {
        event: &'static str,
        call: u64,
        peer: Peer,
    },
    /// A hook process connects to the adapter, unless it died first.
    Connects { peer: Peer, line: Vec<u8> },
    /// The harness gives up on a hook (its timeout, or the process killed).
    GivesUp { peer: Peer, why: &'static str },
}

/// Two processes of one hook event: the harness reads both.
struct Twins {
    peers: [Peer; 2],
    /// What each returned (`Some(None)`: it returned nothing).
    returned: BTreeMap<Peer, Option<HookAnswer>>,
}

pub(super) struct HostileHooks {
    rng: Rng,
    /// Percent of hook calls that meet a fate other than the faithful one.
    percent: u64,
    /// Whether `ding hook` may find no adapter (see [`Scenario`]'s
    /// `refused_hooks`).
    refused: bool,
    /// The crash that strands a hook has come (at most one per seed).
    crashed: bool,
    /// Processes that died or were given up on: what DING answers them
    /// meanwhile is read by nobody.
    gave_up: BTreeSet<Peer>,
    /// When each hostile process connects (or would have).
    connects_at: BTreeMap<Peer, u64>,
    twins: Vec<Twins>,
    /// A process whose harness crashed before it connected, waiting for
    /// the restart: it connects after.
    pub(super) stranded: Option<(Peer, Vec<u8>)>,
    /// Processes of a harness gone that live on.
    stale: BTreeSet<Peer>,
}

impl HostileHooks {
    pub(super) fn new(scenario: &Scenario) -> HostileHooks {
        let mut rng = Rng(scenario.seed ^ STREAM);
        let refused = scenario.refused_hooks;
        let percent = if rng.chance(25) && scenario.hostile_hooks {
            rng.between(5, 30)
        } else {
            0
        };
        HostileHooks {
            rng,
            percent,
            refused,
            crashed: false,
            gave_up: BTreeSet::new(),
            connects_at: BTreeMap::new(),
            twins: Vec::new(),
            stranded: None,
            stale: BTreeSet::new(),
        }
    }

    /// `prompt`: the call carries a prompt going in (a turn starts, the
    /// moment a harness most often dies: its request fails).
    fn fate(&mut self, event: &str, prompt: bool, harness: Harness) -> Fate {
        // The launcher's own calls (Codex's queue and launch) are no
        // harness's hooks.
        if self.percent == 0
            || event == ding::providers::codex::hooks::QUEUE
            || event == ding::providers::codex::hooks::LAUNCH
        {
            return Fate::Faithful;
        }
        if !self.crashed && self.rng.chance(if prompt { 40 } else { 2 }) {
            self.crashed = true;
            return Fate::OutlivesItsHarness;
        }
        if !self.rng.chance(self.percent) {
            return Fate::Faithful;
        }
        match self.rng.below(100) {
            0..20 if self.refused => Fate::Refused,
            0..45 => Fate::HarnessTimeout(
                // Codex's clamp, or a person's own timeout: whole seconds,
                // as every harness's configuration takes them.
                if self.rng.chance(30) {
                    3_000
                } else {
                    self.rng.between(1, 5) * 1_000
                },
            ),
            45..65 => Fate::Killed(self.rng.between(1, 300)),
            // The demo agent runs its hooks itself, from no settings file;
            // OpenCode's are DING's plugins, loaded once.
            _ if harness != Harness::Demo && harness != Harness::OpenCode => Fate::Twice,
            _ => Fate::Faithful,
        }
    }

    /// Whether `peer`'s process died or was given up on.
    pub(super) fn gave_up(&self, peer: Peer) -> bool {
        self.gave_up.contains(&peer)
    }

    /// Whether `peer` is a process of a harness gone that lives on.
    pub(super) fn outlives_its_harness(&self, peer: Peer) -> bool {
        self.stale.contains(&peer)
            || self
                .stranded
                .as_ref()
                .is_some_and(|(stranded, _)| *stranded == peer)
    }
}

impl World {
    /// The fate of the call `event` about to start as `peer` with `line`;
    /// `true`: it is carried out here, and the faithful path must not run.
    pub(super) fn hostile_call(
        &mut self,
        event: &'static str,
        call: u64,
        peer: Peer,
        (prompt, line): (bool, &[u8]),
        connects_in: u64,
    ) -> bool {
        let fate = self.hostile.fate(event, prompt, self.scenario.harness);
        match fate {
            Fate::Faithful => return false,
            Fate::Refused => {
                self.note(format!("hook {event} {peer:?}: ding hook cannot connect"));
                self.after(
                    connects_in,
                    Due::Hostile(HostileDue::Refused { event, call, peer }),
                );
                return true;
            }
            Fate::HarnessTimeout(after) | Fate::Killed(after) => {
                let (why, after) = if matches!(fate, Fate::Killed(_)) {
                    // While it waits for its answer: one killed before it
                    // connects is one that never reached DING (refused).
                    ("killed", connects_in + after)
                } else {
                    ("the harness's own timeout", after)
                };
                self.note(format!("hook {event} {peer:?}: {why} in {after} ms"));
                self.hostile
                    .connects_at
                    .insert(peer, self.now + connects_in);
                let line = line.to_vec();
                self.after(
                    connects_in,
                    Due::Hostile(HostileDue::Connects { peer, line }),
                );
                self.after(after, Due::Hostile(HostileDue::GivesUp { peer, why }));
            }
            Fate::Twice => {
                let twin = Peer(self.next_peer);
                self.next_peer += 1;
                self.note(format!(
                    "hook {event} {peer:?}: runs twice, as {twin:?} too"
                ));
                self.record_call(twin, event, call);
                self.hostile.twins.push(Twins {
                    peers: [peer, twin],
                    returned: BTreeMap::new(),
                });
                let delay = self.hostile.rng.between(2, 15);
                let line_twin = line.to_vec();
                self.after(
                    delay,
                    Due::AdapterMachine(ToMachine::HookCall {
                        peer: twin,
                        line: line_twin,
                    }),
                );
                self.after(self.harness.hook_timeout_ms(event), Due::HookTimeout(twin));
                return false;
            }
            Fate::OutlivesItsHarness => {
                // The harness crashes before its hook connects.
                self.note(format!(
                    "hook {event} {peer:?}: its harness crashes before it connects"
                ));
                self.hostile.stranded = Some((peer, line.to_vec()));
                self.after(1, Due::HarnessRestarts);
            }
        }
        // Recorded as the world records every call (its timeout too).
        self.record_call(peer, event, call);
        self.after(self.harness.hook_timeout_ms(event), Due::HookTimeout(peer));
        true
    }

    pub(super) fn hostile_due(&mut self, due: HostileDue) {
        match due {
            HostileDue::Refused { event, call, peer } => {
                self.note(format!("hook {event}: printed nothing (exit 0)"));
                self.cost_hook_done(peer, false);
                let empty = HookAnswer::default();
                let happened = self
                    .harness
                    .hook_answered(event, call, Some(&empty), self.now);
                self.harness_did(happened);
            }
            HostileDue::Connects { peer, line } => {
                if self.hostile.gave_up(peer) {
                    // Died before it connected: DING never hears of it.
                    return;
                }
                self.happen(Due::AdapterMachine(ToMachine::HookCall { peer, line }));
            }
            HostileDue::GivesUp { peer, why } => {
                let Some(record) = self.hooks.get(&peer) else {
                    return;
                };
                if record.answers > 0 || record.incarnation != self.incarnation {
                    return;
                }
                let (event, call) = (record.event, record.call);
                self.hostile.gave_up.insert(peer);
                self.note(format!("hook {event} {peer:?}: given up ({why})"));
                let connected = self
                    .hostile
                    .connects_at
                    .get(&peer)
                    .is_some_and(|at| *at <= self.now);
                if connected {
                    // The process is gone: its connection closes.
                    self.after(0, Due::AdapterMachine(ToMachine::HookGone { peer }));
                }
                self.hook_returned(peer, event, call, None);
            }
        }
    }

    /// The harness restarted: a hook its old incarnation started and that
    /// outlived it connects now, or soon, with the old identity.
    pub(super) fn stranded_hook_connects(&mut self) {
        let Some((peer, line)) = self.hostile.stranded.take() else {
            return;
        };
        self.hostile.stale.insert(peer);
        // Before the adapter hears of the new terminal, or after.
        let delay = if self.hostile.rng.chance(60) {
            self.hostile.rng.between(0, 2)
        } else {
            self.hostile.rng.between(3, 40)
        };
        self.note(format!(
            "hook {peer:?} of the harness gone connects in {delay} ms"
        ));
        self.after(
            delay,
            Due::AdapterMachine(ToMachine::HookCall { peer, line }),
        );
    }

    /// A stale process's answer: it cannot print it on the dead harness's
    /// pipe, so it sends no receipt and exits.
    pub(super) fn stale_hook_answered(&mut self, peer: Peer) {
        if self.hostile.stale.remove(&peer) {
            self.note(format!("hook {peer:?} of the harness gone exits unread"));
            self.after(1, Due::AdapterMachine(ToMachine::HookGone { peer }));
        }
    }

    /// `peer`'s process returned `answer` (`None`: nothing, it gave up or
    /// was given up on): the harness acts on it, once both processes of an
    /// event run twice have returned, on what they said together.
    pub(super) fn hook_returned(
        &mut self,
        peer: Peer,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
    ) {
        // The harness read the answer, or gave up on it: its request, or
        // its turn's end, goes now.
        self.cost_hook_done(peer, answer.is_some());
        let Some(at) = self
            .hostile
            .twins
            .iter()
            .position(|twins| twins.peers.contains(&peer))
        else {
            let happened = self.harness.hook_answered(event, call, answer, self.now);
            return self.harness_did(happened);
        };
        let twins = &mut self.hostile.twins[at];
        twins.returned.insert(peer, answer.cloned());
        if twins.returned.len() < 2 {
            return;
        }
        let twins = self.hostile.twins.remove(at);
        // The harness runs the outputs of both: the one that acts (a
        // wake, a block, a context) is what it acts on.
        let acts = |answer: &HookAnswer| {
            answer.exit != 0
                || !answer.stdout.is_empty()
                || answer.parked == Some(ParkAnswer::Delivered)
        };
        let answers: Vec<HookAnswer> = twins.returned.into_values().flatten().collect();
        let combined = answers
            .iter()
            .find(|answer| acts(answer))
            .or(answers.first())
            .cloned();
        let happened = self
            .harness
            .hook_answered(event, call, combined.as_ref(), self.now);
        self.harness_did(happened);
    }
}
