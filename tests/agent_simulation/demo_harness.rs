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

use ding::demo::agent::{Agent, Config, Event};
use ding::demo::keys::KeyDecoder;
use ding::demo::render;
use ding::pty::screen::Screen;
use ding::pty::wire::{Size, Snapshot};

pub const COLS: u16 = 80;
pub const ROWS: u16 = 24;

/// What the harness did that the simulation must act on.
#[derive(Debug)]
pub enum Happened {
    /// The screen changed: the PTY host's revision moves.
    Drew,
    /// The agent's transcript event.
    Event(Event),
}

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

    /// Bytes the agent reads now (they were written earlier, by a person or
    /// by DING).
    pub fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        let now = self.instant(now_ms);
        for key in self.decoder.feed(bytes) {
            self.agent.handle_key(key, now);
        }
        self.settle()
    }

    /// The agent's next deadline, rounded up to the simulation's whole
    /// milliseconds (rounded down, it would come before it is due).
    pub fn next_deadline_ms(&self) -> Option<u64> {
        self.agent.next_deadline().map(|at| {
            let micros = at.duration_since(self.origin).as_micros();
            u64::try_from(micros.div_ceil(1000)).unwrap_or(u64::MAX)
        })
    }

    pub fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        let now = self.instant(now_ms);
        self.agent.handle_timeout(now);
        self.settle()
    }

    /// Whether the agent is idle with an empty composer and nothing queued
    /// (what a person sees as "waiting for me, nothing typed").
    pub fn is_quiet(&self) -> bool {
        self.agent.phase() == ding::demo::agent::Phase::Idle
            && self.agent.composer().is_empty()
            && self.agent.queued().next().is_none()
    }

    pub fn phase(&self) -> ding::demo::agent::Phase {
        self.agent.phase()
    }

    pub fn composer(&self) -> &str {
        self.agent.composer()
    }

    pub fn snapshot(&mut self, revision: u64) -> Snapshot {
        if std::mem::take(&mut self.stale) {
            let frame = render::frame(&self.agent, COLS, ROWS);
            self.screen.handle_output(&render::encode(&frame));
        }
        self.screen.snapshot(revision)
    }

    fn settle(&mut self) -> Vec<Happened> {
        let mut happened: Vec<Happened> = std::iter::from_fn(|| self.agent.poll_event())
            .map(Happened::Event)
            .collect();
        if self.agent.take_redraw() {
            self.stale = true;
            happened.push(Happened::Drew);
        }
        happened
    }
}
