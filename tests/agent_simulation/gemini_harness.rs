//! A model of Gemini CLI 0.61.0, for the whole-agent simulation: written
//! from what the real binary was seen to do
//! (`docs/providers/gemini-findings.md`) and drawn with the screens
//! captured from it (`fixtures/providers/gemini/snapshots/`), which the
//! provider reads exactly as it reads the real TUI.
//!
//! * a prompt submitted (Return on a non-empty composer) fires
//!   `BeforeAgent` and starts a turn; Return during a turn queues the text,
//!   and the queue goes as one prompt when the turn ends;
//! * Esc stops a running turn, which still fires `AfterAgent`; Esc on a
//!   tool's confirmation cancels the turn and fires nothing;
//! * a turn may run a tool (`BeforeTool`, then `AfterTool`), and a tool may
//!   ask first: a confirmation (`Notification` `ToolPermission`) that waits
//!   for the person (Return, `1` or `2`: allow; `3` or Esc: cancel);
//! * a turn's end fires `AfterAgent` and waits for it: `{"decision":
//!   "deny"}` continues the turn once with the reason as the model's next
//!   input (`BeforeAgent` fires on it; the next `AfterAgent` is
//!   `stop_hook_active`);
//! * no hook starts a turn at idle: the provider's idle path is the typed
//!   notice;
//! * Ctrl-U kills the one-line composer, Ctrl-C clears a draft;
//! * `/compress` at idle fires `PreCompress` (`manual`), compresses for a
//!   while (a busy screen) and fires nothing after.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use ding::adapter::HookAnswer;
use ding::demo::keys::{Key, KeyDecoder};
use ding::pty::wire::{Run, Snapshot};
use serde_json::{Value, json};

use crate::harness::{Call, Happened, HarnessModel, View, captured};
use crate::support::rng::Rng;

/// The captures each state is drawn with.
const SCREENS: [&str; 5] = [
    "idle-empty",
    "busy-thinking",
    "busy-draft",
    "busy-queued",
    "dialog-shell",
];

fn screens() -> &'static BTreeMap<&'static str, Snapshot> {
    static SCREENS_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    SCREENS_READ.get_or_init(|| captured("fixtures/providers/gemini/snapshots", &SCREENS))
}

/// The commands a person types whole.
const COMMANDS: [&str; 1] = ["/compress"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// A turn runs until `ends_at`; `continued`: it continues a denied
    /// `AfterAgent`, so its own `AfterAgent` is `stop_hook_active`.
    Busy {
        ends_at: u64,
        continued: bool,
        tool: Tool,
    },
    /// The turn ended and waits for its `AfterAgent` hook.
    Stopping {
        continued: bool,
    },
    /// A tool's confirmation; `left` of the turn remains after it.
    Dialog {
        left: u64,
        continued: bool,
    },
    /// `/compress` runs until `ends_at`.
    Compressing {
        ends_at: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    None,
    /// A tool starts at `at`; `asks`: it asks for confirmation first.
    Starts {
        at: u64,
        asks: bool,
    },
    /// A tool runs until `ends`.
    Runs {
        ends: u64,
    },
}

pub struct GeminiHarness {
    rng: Rng,
    turn_ms: u64,
    phase: Phase,
    composer: String,
    queued: Vec<String>,
    decoder: KeyDecoder,
}

impl GeminiHarness {
    pub fn new(turn: Duration, seed: u64) -> GeminiHarness {
        GeminiHarness {
            rng: Rng(seed ^ 0x6e31),
            turn_ms: u64::try_from(turn.as_millis()).unwrap_or(1_000),
            phase: Phase::Idle,
            composer: String::new(),
            queued: Vec::new(),
            decoder: KeyDecoder::new(),
        }
    }

    fn hook(event: &'static str, payload: Value) -> Happened {
        Happened::Hook {
            event,
            payload,
            call: 0,
        }
    }

    fn busy(&mut self, now: u64, continued: bool) {
        let length = self.rng.between(self.turn_ms / 2, self.turn_ms * 3 / 2);
        let tool = if self.rng.chance(40) {
            Tool::Starts {
                at: now + length / 3,
                asks: self.rng.chance(25),
            }
        } else {
            Tool::None
        };
        self.phase = Phase::Busy {
            ends_at: now + length,
            continued,
            tool,
        };
    }

    fn start_turn(&mut self, prompt: String, now: u64) -> Vec<Happened> {
        self.busy(now, false);
        let before = json!({"hook_event_name": "BeforeAgent", "prompt": prompt});
        vec![
            Happened::Submitted(prompt),
            GeminiHarness::hook("BeforeAgent", before),
            Happened::Request(Call::Starts),
            Happened::Drew,
        ]
    }

    /// The turn is over: idle, and the queue goes next as one prompt.
    fn turn_over(&mut self, now: u64) -> Vec<Happened> {
        self.phase = Phase::Idle;
        let mut happened = vec![Happened::TurnEnded, Happened::Drew];
        if !self.queued.is_empty() {
            let prompt = std::mem::take(&mut self.queued).join("\n\n");
            happened.extend(self.start_turn(prompt, now));
        }
        happened
    }

    /// The turn ends: `AfterAgent` is asked whether it goes on.
    fn stopping(&mut self, continued: bool) -> Vec<Happened> {
        self.phase = Phase::Stopping { continued };
        let after = json!({"hook_event_name": "AfterAgent", "stop_hook_active": continued});
        vec![GeminiHarness::hook("AfterAgent", after)]
    }

    fn key(&mut self, key: Key, now: u64) -> Vec<Happened> {
        match (self.phase, key) {
            (Phase::Dialog { left, continued }, Key::Enter) => self.allow(left, continued, now),
            (Phase::Dialog { left, continued }, Key::Text(text)) if text == "1" || text == "2" => {
                self.allow(left, continued, now)
            }
            // Cancelled: "Request cancelled", and no `AfterAgent`.
            (Phase::Dialog { .. }, Key::Escape) => self.turn_over(now),
            (Phase::Dialog { .. }, Key::Text(text)) if text == "3" => self.turn_over(now),
            (Phase::Dialog { .. }, _) => Vec::new(),
            (Phase::Idle, Key::Enter) if COMMANDS.contains(&self.composer.as_str()) => {
                self.composer.clear();
                self.phase = Phase::Compressing {
                    ends_at: now + self.rng.between(300, 1_500),
                };
                let pre = json!({"hook_event_name": "PreCompress", "trigger": "manual"});
                vec![GeminiHarness::hook("PreCompress", pre), Happened::Drew]
            }
            // Stopped: the turn still fires `AfterAgent`.
            (Phase::Busy { continued, .. }, Key::Escape) => {
                let mut happened = vec![Happened::Drew];
                happened.extend(self.stopping(continued));
                happened
            }
            (_, Key::Text(text) | Key::Paste(text)) => {
                self.composer.push_str(&text);
                vec![Happened::Drew]
            }
            (_, Key::Backspace) => {
                self.composer.pop();
                vec![Happened::Drew]
            }
            // Ctrl-U kills the line left of the cursor: the one-line
            // composer, its cursor at the end, is empty.
            (_, Key::CtrlU) => {
                self.composer.clear();
                vec![Happened::Drew]
            }
            (Phase::Idle, Key::Enter) if !self.composer.is_empty() => {
                let prompt = std::mem::take(&mut self.composer);
                self.start_turn(prompt, now)
            }
            (Phase::Busy { .. } | Phase::Stopping { .. }, Key::Enter)
                if !self.composer.is_empty() =>
            {
                self.queued.push(std::mem::take(&mut self.composer));
                vec![Happened::Drew]
            }
            _ => Vec::new(),
        }
    }

    fn allow(&mut self, left: u64, continued: bool, now: u64) -> Vec<Happened> {
        self.phase = Phase::Busy {
            ends_at: now + left,
            continued,
            tool: Tool::Runs {
                ends: now + left / 2,
            },
        };
        vec![Happened::Drew]
    }
}

impl HarnessModel for GeminiHarness {
    fn provider(&self) -> &'static str {
        "gemini"
    }

    fn started(&mut self, _now_ms: u64) -> Vec<Happened> {
        let start = json!({"hook_event_name": "SessionStart", "source": "startup"});
        vec![GeminiHarness::hook("SessionStart", start)]
    }

    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        let keys = self.decoder.feed(bytes);
        keys.into_iter()
            .flat_map(|key| self.key(key, now_ms))
            .collect()
    }

    fn next_deadline_ms(&self) -> Option<u64> {
        match self.phase {
            Phase::Busy { ends_at, tool, .. } => Some(match tool {
                Tool::None => ends_at,
                Tool::Starts { at, .. } => at.min(ends_at),
                Tool::Runs { ends } => ends.min(ends_at),
            }),
            Phase::Compressing { ends_at } => Some(ends_at),
            Phase::Idle | Phase::Stopping { .. } | Phase::Dialog { .. } => None,
        }
    }

    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        if let Phase::Compressing { ends_at } = self.phase {
            if ends_at > now_ms {
                return Vec::new();
            }
            self.phase = Phase::Idle;
            return vec![Happened::Drew];
        }
        let Phase::Busy {
            ends_at,
            continued,
            tool,
        } = self.phase
        else {
            return Vec::new();
        };
        match tool {
            Tool::Starts { at, asks } if at <= now_ms && at < ends_at => {
                let before =
                    json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"});
                let mut happened = vec![GeminiHarness::hook("BeforeTool", before)];
                if asks {
                    self.phase = Phase::Dialog {
                        left: ends_at - now_ms,
                        continued,
                    };
                    let asked = json!({"hook_event_name": "Notification", "notification_type": "ToolPermission"});
                    happened.push(GeminiHarness::hook("Notification", asked));
                } else {
                    self.phase = Phase::Busy {
                        ends_at,
                        continued,
                        tool: Tool::Runs {
                            ends: now_ms + (ends_at - now_ms) / 2,
                        },
                    };
                }
                happened.push(Happened::Drew);
                happened
            }
            Tool::Runs { ends } if ends <= now_ms && ends < ends_at => {
                self.phase = Phase::Busy {
                    ends_at,
                    continued,
                    tool: Tool::None,
                };
                let after =
                    json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command"});
                vec![
                    GeminiHarness::hook("AfterTool", after),
                    Happened::Request(Call::Follows),
                    Happened::Drew,
                ]
            }
            _ if ends_at <= now_ms => self.stopping(continued),
            _ => Vec::new(),
        }
    }

    fn hook_answered(
        &mut self,
        event: &'static str,
        _call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened> {
        match (event, self.phase) {
            ("AfterAgent", Phase::Stopping { .. }) => {
                let reason = answer
                    .map(after_agent_output)
                    .filter(|output| output["decision"] == "deny" || output["decision"] == "block")
                    .and_then(|output| output["reason"].as_str().map(str::to_string));
                match reason {
                    // Gemini CLI has no cap: a continuation's own denial
                    // would go on too (DING never asks one).
                    Some(reason) => {
                        self.busy(now_ms, true);
                        let before = json!({"hook_event_name": "BeforeAgent", "prompt": reason});
                        vec![
                            Happened::Request(Call::Continues),
                            GeminiHarness::hook("BeforeAgent", before),
                            Happened::Drew,
                        ]
                    }
                    None => self.turn_over(now_ms),
                }
            }
            _ => Vec::new(),
        }
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        if self.phase == Phase::Idle && !self.composer.is_empty() {
            let mut snapshot = with_draft(&screens()["idle-empty"], &self.composer);
            snapshot.revision = revision;
            return snapshot;
        }
        let name = match self.phase {
            Phase::Idle => "idle-empty",
            Phase::Dialog { .. } => "dialog-shell",
            Phase::Busy { .. } | Phase::Stopping { .. } if !self.composer.is_empty() => {
                "busy-draft"
            }
            Phase::Busy { .. } | Phase::Stopping { .. } if !self.queued.is_empty() => "busy-queued",
            Phase::Busy { .. } | Phase::Stopping { .. } | Phase::Compressing { .. } => {
                "busy-thinking"
            }
        };
        let mut snapshot = screens()[name].clone();
        snapshot.revision = revision;
        snapshot
    }

    fn view(&self) -> View {
        let composer = self.composer.clone();
        match self.phase {
            Phase::Idle => View::Idle { composer },
            Phase::Busy { .. } | Phase::Stopping { .. } | Phase::Compressing { .. } => {
                View::Busy { composer }
            }
            Phase::Dialog { .. } => View::Dialog,
        }
    }

    fn asks_at_a_turns_end(&self, event: &str) -> bool {
        event == "AfterAgent"
    }

    fn commands(&self) -> &'static [&'static str] {
        &COMMANDS
    }

    fn is_quiet(&self) -> bool {
        self.phase == Phase::Idle && self.composer.is_empty() && self.queued.is_empty()
    }
}

/// What an `AfterAgent` hook printed on stdout (nothing, when no JSON).
fn after_agent_output(answer: &HookAnswer) -> Value {
    serde_json::from_str(answer.stdout.trim()).unwrap_or(Value::Null)
}

/// Where Gemini CLI draws the composer's text, and its cursor cell after
/// it.
const TEXT_COL: usize = 3;
/// The composer's colours in the capture: its grey block, the prompt's
/// colour and typed text's.
const BLOCK_BG: u8 = 240;
const PROMPT_FG: u8 = 183;
const TEXT_FG: u8 = 231;

/// `base`, the capture of an idle, empty composer (cursor on its prompt
/// row), with `text` typed into it as Gemini CLI draws it: after ` > `,
/// `cols - 4` characters a row, continuation rows indented three columns,
/// the rows above moved up to make room, the inverse cursor cell after the
/// last character.
fn with_draft(base: &Snapshot, text: &str) -> Snapshot {
    use ding::pty::wire::Colour;
    let cols = usize::from(base.size.cols);
    let width = cols.saturating_sub(TEXT_COL + 1).max(1);
    let prompt_row = usize::from(base.cursor.row);
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = chars
        .chunks(width)
        .map(|chunk| chunk.iter().collect())
        .collect();
    let extra = (chunks.len().max(1) - 1).min(prompt_row);
    let chunks = &chunks[chunks.len() - 1 - extra..];
    let first = prompt_row - extra;
    let mut snapshot = base.clone();
    let mut rows: Vec<String> = base.rows[extra..prompt_row].to_vec();
    let mut runs: Vec<Run> = base
        .runs
        .iter()
        .filter(|run| usize::from(run.row) != prompt_row)
        .filter_map(|run| {
            let row = usize::from(run.row);
            if row > prompt_row {
                return Some(run.clone());
            }
            let row = row.checked_sub(extra)?;
            let mut run = run.clone();
            run.row = u16::try_from(row).ok()?;
            Some(run)
        })
        .collect();
    let styled = |row: usize, col: usize, text: String, fg: Option<u8>, inverse: bool| Run {
        row: u16::try_from(row).unwrap_or(0),
        col: u16::try_from(col).unwrap_or(0),
        text,
        inverse,
        fg: fg.map(Colour::Index),
        bg: Some(Colour::Index(BLOCK_BG)),
        ..Default::default()
    };
    for (index, chunk) in chunks.iter().enumerate() {
        let row = first + index;
        let lead = if index == 0 { " > " } else { "   " };
        rows.push(format!("{lead}{chunk}"));
        if index == 0 {
            runs.push(styled(row, 0, " ".into(), None, false));
            runs.push(styled(row, 1, "> ".into(), Some(PROMPT_FG), false));
        } else {
            runs.push(styled(row, 0, "   ".into(), None, false));
        }
        runs.push(styled(row, TEXT_COL, chunk.clone(), Some(TEXT_FG), false));
    }
    rows.extend_from_slice(&base.rows[prompt_row + 1..]);
    let last = chunks.last().map_or(0, |chunk| chunk.chars().count());
    let col = (TEXT_COL + last).min(cols.saturating_sub(1));
    runs.push(styled(prompt_row, col, " ".into(), None, true));
    snapshot.rows = rows;
    snapshot.runs = runs;
    snapshot.cursor.row = base.cursor.row;
    snapshot.cursor.col = u16::try_from(col).unwrap_or(0);
    snapshot
}
