//! The demo harness, for the whole-agent simulation: the real demo agent
//! (`ding::demo::agent`, a sans-IO state machine) drawn by its real
//! renderer into the PTY host's real screen model, with the two things a
//! terminal adds that the agent itself does not model:
//!
//! * **input lag**: bytes written to the terminal reach the agent only
//!   after its event loop gets to them, and the screen (and so the PTY
//!   host's revision) moves only when the agent draws. A key typed a few
//!   milliseconds before a snapshot is not on it, and did not move the
//!   revision yet;
//! * **hooks**: the harness runs `ding hook demo turn-start` when a turn
//!   starts and `turn-end` when it ends, as a harness configured with
//!   hooks does; what a hook prints reaches the model with that turn.

use std::time::{Duration, Instant};

use ding::adapter::HookAnswer;
use ding::demo::agent::{Agent, Config, Event, Phase};
use ding::demo::keys::KeyDecoder;
use ding::demo::render;
use ding::pty::screen::Screen;
use ding::pty::wire::{Size, Snapshot};
use serde_json::Value;

use crate::harness::{Call, Happened, HarnessModel, View};

pub const COLS: u16 = 80;
pub const ROWS: u16 = 24;

pub struct DemoHarness {
    agent: Agent,
    decoder: KeyDecoder,
    screen: Screen,
    /// The agent drew since the screen model last took its frame. Each
    /// frame is a full redraw, so the model takes only the latest one, when
    /// someone looks.
    stale: bool,
    /// The simulation's time zero, as the agent's clock type.
    origin: Instant,
}

impl DemoHarness {
    pub fn new(turn: Duration, menu_every: u64, origin: Instant) -> DemoHarness {
        let mut harness = DemoHarness {
            agent: Agent::new(Config { turn, menu_every }),
            decoder: KeyDecoder::new(),
            screen: Screen::new(Size {
                cols: COLS,
                rows: ROWS,
            }),
            stale: true,
            origin,
        };
        harness.agent.take_redraw();
        harness
    }

    fn instant(&self, now_ms: u64) -> Instant {
        self.origin + Duration::from_millis(now_ms)
    }

    fn settle(&mut self) -> Vec<Happened> {
        let mut happened = Vec::new();
        while let Some(event) = self.agent.poll_event() {
            let hook = |event: &'static str| Happened::Hook {
                event,
                payload: Value::Null,
                call: 0,
            };
            match event {
                Event::Submitted { text, .. } => happened.push(Happened::Submitted(text)),
                Event::TurnStart { .. } => {
                    happened.push(hook("turn-start"));
                    happened.push(Happened::Request(Call::Starts));
                }
                Event::TurnEnd { .. } => {
                    happened.push(Happened::TurnEnded);
                    happened.push(hook("turn-end"));
                }
                Event::Queued { .. } | Event::MenuShown { .. } | Event::MenuAnswered { .. } => {}
            }
        }
        if self.agent.take_redraw() {
            self.stale = true;
            happened.push(Happened::Drew);
        }
        happened
    }
}

impl HarnessModel for DemoHarness {
    fn provider(&self) -> &'static str {
        "demo"
    }

    fn started(&mut self, _now_ms: u64) -> Vec<Happened> {
        vec![Happened::Hook {
            event: "session-start",
            payload: Value::Null,
            call: 0,
        }]
    }

    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        let now = self.instant(now_ms);
        for key in self.decoder.feed(bytes) {
            self.agent.handle_key(key, now);
        }
        self.settle()
    }

    /// The agent's next deadline, rounded up to the simulation's whole
    /// milliseconds (rounded down, it would come before it is due).
    fn next_deadline_ms(&self) -> Option<u64> {
        self.agent.next_deadline().map(|at| {
            let micros = at.duration_since(self.origin).as_micros();
            u64::try_from(micros.div_ceil(1000)).unwrap_or(u64::MAX)
        })
    }

    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        let now = self.instant(now_ms);
        self.agent.handle_timeout(now);
        self.settle()
    }

    /// The demo harness's hooks print for the model's context: nothing
    /// more happens in the harness. What a turn's end printed goes to the
    /// model in a request of its own, unless the next turn (a prompt the
    /// person queued) already started and carries it.
    fn hook_answered(
        &mut self,
        event: &'static str,
        _: u64,
        answer: Option<&HookAnswer>,
        _: u64,
    ) -> Vec<Happened> {
        let printed = answer.is_some_and(|answer| !answer.stdout.trim().is_empty());
        if event == "turn-end" && printed && self.agent.phase() == Phase::Idle {
            return vec![Happened::Request(Call::Continues)];
        }
        Vec::new()
    }

    fn asks_at_a_turns_end(&self, event: &str) -> bool {
        event == "turn-end"
    }

    fn is_quiet(&self) -> bool {
        self.agent.phase() == Phase::Idle
            && self.agent.composer().is_empty()
            && self.agent.queued().next().is_none()
    }

    fn view(&self) -> View {
        let composer = self.agent.composer().to_string();
        match self.agent.phase() {
            Phase::Idle => View::Idle { composer },
            Phase::Working { .. } => View::Busy { composer },
            Phase::Menu { .. } => View::Dialog,
        }
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        if std::mem::take(&mut self.stale) {
            let frame = render::frame(&self.agent, COLS, ROWS);
            self.screen.handle_output(&render::encode(&frame));
        }
        self.screen.snapshot(revision)
    }
}
