//! A model of Claude Code 2.1.328, for the whole-agent simulation: written
//! from what the real binary was seen to do (`docs/providers/claude.md`,
//! the design's notes on the real harnesses) and drawn with the screens
//! captured from it (`fixtures/providers/claude/screens/`), which the
//! provider reads exactly as it reads the real TUI.
//!
//! * a prompt submitted (Return on a non-empty composer) fires
//!   `UserPromptSubmit` and starts a turn; Return during a turn queues the
//!   text for after it; Esc stops a running turn, and an Esc-stopped turn
//!   fires no `Stop`;
//! * a turn may run a tool (`PreToolUse`, then `PostToolUse`), and a tool
//!   may ask for permission: a dialog (`Notification`
//!   `permission_prompt`) that waits for the person (`1` or Return: yes,
//!   `2`: no, Esc: stop);
//! * a turn's end fires `Stop` and waits for it: `additionalContext`, or
//!   `{"decision":"block"}`, continues the turn once (its own `Stop` is
//!   `stop_hook_active`); a block's reason reaches the model twice;
//! * the wake (`asyncRewake`) is armed by `SessionStart`,
//!   `UserPromptSubmit` and `Stop`, and runs in the background; exit 2
//!   wakes an idle session into a turn of its own (a `<task-notification>`
//!   prompt, `stop_hook_active` on its `Stop`), leaves a draft untouched,
//!   and rides a running turn or an open dialog at no turn of its own;
//! * `/compact` at idle fires `PreCompact`, compacts for a while (a busy
//!   screen), then fires `SessionStart` (`compact`) and arms the wake
//!   again; what that hook prints reaches the model only with the next
//!   turn's first request, whenever the person or the wake starts one.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use ding::adapter::HookAnswer;
use ding::demo::keys::{Key, KeyDecoder};
use ding::providers::claude::timing::WAKE_RELAY_TIMEOUT_SECS;
use ding::pty::wire::Snapshot;
use serde_json::{Value, json};

use crate::harness::{Call, Happened, HarnessModel, View, captured, with_composer_text};
use crate::support::rng::Rng;

/// The captures each state is drawn with.
const SCREENS: [&str; 7] = [
    "idle-empty",
    "eval-idle-renamed-session",
    "draft",
    "busy-tool-running",
    "busy-draft",
    "busy-queued",
    "permission-dialog",
];

fn screens() -> &'static BTreeMap<&'static str, Snapshot> {
    static SCREENS_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    SCREENS_READ.get_or_init(|| captured("fixtures/providers/claude/screens", &SCREENS))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    /// A turn runs until `ends_at`; `continued`: it was woken or continues
    /// a `Stop` block, so its own `Stop` never blocks.
    Busy {
        ends_at: u64,
        continued: bool,
        tool: Tool,
    },
    /// The turn ended and waits for its `Stop` hook.
    Stopping {
        continued: bool,
    },
    /// A permission dialog; `left` of the turn remains after it.
    Dialog {
        left: u64,
        continued: bool,
    },
    /// `/compact` runs until `ends_at`.
    Compacting {
        ends_at: u64,
    },
}

/// The commands a person types whole.
const COMMANDS: [&str; 1] = ["/compact"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    None,
    /// A tool starts at `at`; `asks`: it asks for permission first.
    Starts {
        at: u64,
        asks: bool,
    },
    /// A tool runs until `ends`.
    Runs {
        ends: u64,
    },
}

pub struct ClaudeHarness {
    rng: Rng,
    turn_ms: u64,
    phase: Phase,
    composer: String,
    queued: Vec<String>,
    decoder: KeyDecoder,
    /// `SessionStart` (`compact`) was fired and not answered yet.
    compact_start_asked: bool,
    /// What that hook printed, for the next turn's first request.
    context: Option<String>,
    /// The session has a name (`/rename`, or the one Claude Code gives it
    /// after a plan is approved), drawn in the composer's top rule: half
    /// the seeds (odd ones; the random stream is untouched).
    named: bool,
}

impl ClaudeHarness {
    pub fn new(turn: Duration, seed: u64) -> ClaudeHarness {
        ClaudeHarness {
            rng: Rng(seed ^ 0xc1a0de),
            turn_ms: u64::try_from(turn.as_millis()).unwrap_or(1_000),
            phase: Phase::Idle,
            composer: String::new(),
            queued: Vec::new(),
            decoder: KeyDecoder::new(),
            compact_start_asked: false,
            context: None,
            named: seed % 2 == 1,
        }
    }

    /// The idle screen this session is drawn with.
    fn idle_screen(&self) -> &'static str {
        if self.named {
            "eval-idle-renamed-session"
        } else {
            "idle-empty"
        }
    }

    fn hook(event: &'static str, payload: Value) -> Happened {
        Happened::Hook {
            event,
            payload,
            call: 0,
        }
    }

    /// The background wake, armed again.
    fn wake() -> Happened {
        ClaudeHarness::hook("wake", json!({"hook_event_name": "Stop"}))
    }

    fn start_turn(&mut self, prompt: String, continued: bool, now: u64) -> Vec<Happened> {
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
        let submitted = json!({"hook_event_name": "UserPromptSubmit", "prompt": prompt});
        let context = self.context.take().map(Happened::ContextReaches);
        context
            .into_iter()
            .chain([
                Happened::Submitted(prompt),
                ClaudeHarness::hook("UserPromptSubmit", submitted),
                Happened::Request(Call::Starts),
                ClaudeHarness::wake(),
                Happened::Drew,
            ])
            .collect()
    }

    /// The turn is over (its `Stop` answered, or Esc): idle, and a queued
    /// prompt goes next.
    fn turn_over(&mut self, now: u64, rearm: bool) -> Vec<Happened> {
        self.phase = Phase::Idle;
        let mut happened = vec![Happened::TurnEnded, Happened::Drew];
        if rearm {
            happened.push(ClaudeHarness::wake());
        }
        if !self.queued.is_empty() {
            let prompt = self.queued.remove(0);
            happened.extend(self.start_turn(prompt, false, now));
        }
        happened
    }

    fn key(&mut self, key: Key, now: u64) -> Vec<Happened> {
        match (self.phase, key) {
            (Phase::Dialog { left, continued }, Key::Enter) => {
                self.answer_dialog(left, continued, now)
            }
            (Phase::Dialog { left, continued }, Key::Text(text)) if text == "1" => {
                self.answer_dialog(left, continued, now)
            }
            (Phase::Dialog { continued, .. }, Key::Text(text)) if text == "2" => {
                // Denied: the model hears so and ends its turn soon.
                self.phase = Phase::Busy {
                    ends_at: now + 200,
                    continued,
                    tool: Tool::None,
                };
                vec![Happened::Drew]
            }
            (Phase::Dialog { .. }, Key::Escape) => self.turn_over(now, false),
            (Phase::Dialog { .. }, _) => Vec::new(),
            (Phase::Idle, Key::Enter) if COMMANDS.contains(&self.composer.as_str()) => {
                self.composer.clear();
                self.phase = Phase::Compacting {
                    ends_at: now + self.rng.between(300, 1_500),
                };
                let pre = json!({"hook_event_name": "PreCompact", "trigger": "manual"});
                vec![ClaudeHarness::hook("PreCompact", pre), Happened::Drew]
            }
            (Phase::Busy { .. }, Key::Escape) => {
                // Stopped: an Esc-interrupted turn fires no `Stop`.
                self.turn_over(now, false)
            }
            (_, Key::Text(text) | Key::Paste(text)) => {
                self.composer.push_str(&text);
                vec![Happened::Drew]
            }
            (_, Key::Backspace) => {
                self.composer.pop();
                vec![Happened::Drew]
            }
            // Ctrl-U kills the line back to its start: the one-line
            // composer, its cursor at the end, is empty.
            (_, Key::CtrlU) => {
                self.composer.clear();
                vec![Happened::Drew]
            }
            (Phase::Idle, Key::Enter) if !self.composer.is_empty() => {
                let prompt = std::mem::take(&mut self.composer);
                self.start_turn(prompt, false, now)
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

    fn answer_dialog(&mut self, left: u64, continued: bool, now: u64) -> Vec<Happened> {
        let ends = now + left / 2;
        self.phase = Phase::Busy {
            ends_at: now + left,
            continued,
            tool: Tool::Runs { ends },
        };
        vec![Happened::Drew]
    }
}

impl HarnessModel for ClaudeHarness {
    fn provider(&self) -> &'static str {
        "claude"
    }

    /// The wake runs as `ding hook claude wake --timeout` a day less a
    /// minute, as `ding compile-agent claude` writes it.
    fn hook_timeout_ms(&self, event: &str) -> u64 {
        if event == "wake" {
            WAKE_RELAY_TIMEOUT_SECS * 1_000
        } else {
            10_000
        }
    }

    fn started(&mut self, _now_ms: u64) -> Vec<Happened> {
        let start = json!({"hook_event_name": "SessionStart", "source": "startup"});
        vec![
            ClaudeHarness::hook("SessionStart", start),
            ClaudeHarness::wake(),
        ]
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
            Phase::Compacting { ends_at } => Some(ends_at),
            Phase::Idle | Phase::Stopping { .. } | Phase::Dialog { .. } => None,
        }
    }

    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        if let Phase::Compacting { ends_at } = self.phase {
            if ends_at > now_ms {
                return Vec::new();
            }
            self.phase = Phase::Idle;
            self.compact_start_asked = true;
            let start = json!({"hook_event_name": "SessionStart", "source": "compact"});
            return vec![
                ClaudeHarness::hook("SessionStart", start),
                ClaudeHarness::wake(),
                Happened::Drew,
            ];
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
                let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"});
                let mut happened = vec![ClaudeHarness::hook("PreToolUse", pre)];
                if asks {
                    self.phase = Phase::Dialog {
                        left: ends_at - now_ms,
                        continued,
                    };
                    let asked = json!({"hook_event_name": "Notification", "notification_type": "permission_prompt"});
                    happened.push(ClaudeHarness::hook("Notification", asked));
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
                let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash"});
                vec![
                    ClaudeHarness::hook("PostToolUse", post),
                    Happened::Request(Call::Follows),
                    Happened::Drew,
                ]
            }
            _ if ends_at <= now_ms => {
                self.phase = Phase::Stopping { continued };
                let stop = json!({"hook_event_name": "Stop", "stop_hook_active": continued});
                vec![ClaudeHarness::hook("Stop", stop)]
            }
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
        if event == "SessionStart" && self.compact_start_asked {
            self.compact_start_asked = false;
            self.context = answer
                .map(|answer| answer.stdout.clone())
                .filter(|text| !text.is_empty());
            return Vec::new();
        }
        match (event, self.phase) {
            ("Stop", Phase::Stopping { continued }) => {
                let continues = answer.map(stop_output).is_some_and(|output| {
                    output["decision"] == "block"
                        || output["hookSpecificOutput"]["additionalContext"].is_string()
                });
                if continues && !continued {
                    // The reason is the turn's next input: it goes on once.
                    let length = self.rng.between(self.turn_ms / 3, self.turn_ms);
                    self.phase = Phase::Busy {
                        ends_at: now_ms + length,
                        continued: true,
                        tool: Tool::None,
                    };
                    return vec![Happened::Request(Call::Continues), Happened::Drew];
                }
                self.turn_over(now_ms, true)
            }
            ("wake", Phase::Idle) if answer.is_some_and(|answer| answer.exit == 2) => {
                // Woken: a turn of its own; a draft stays where it is.
                self.start_turn("<task-notification>".into(), true, now_ms)
            }
            _ => Vec::new(),
        }
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        if self.phase == Phase::Idle && !self.composer.is_empty() {
            let mut snapshot =
                with_composer_text(&screens()[self.idle_screen()], &self.composer, true);
            snapshot.revision = revision;
            return snapshot;
        }
        let name = match self.phase {
            Phase::Idle => self.idle_screen(),
            Phase::Dialog { .. } => "permission-dialog",
            Phase::Busy { .. } | Phase::Stopping { .. } if !self.composer.is_empty() => {
                "busy-draft"
            }
            Phase::Busy { .. } | Phase::Stopping { .. } if !self.queued.is_empty() => "busy-queued",
            Phase::Busy { .. } | Phase::Stopping { .. } | Phase::Compacting { .. } => {
                "busy-tool-running"
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
            Phase::Busy { .. } | Phase::Stopping { .. } | Phase::Compacting { .. } => {
                View::Busy { composer }
            }
            Phase::Dialog { .. } => View::Dialog,
        }
    }

    /// A compacted context's `SessionStart` text reaches the model only
    /// with the next turn (see [`Happened::ContextReaches`]).
    fn copies_reaching_model(&self, event: &str, answer: &HookAnswer) -> usize {
        if event == "SessionStart" && self.compact_start_asked {
            return 0;
        }
        // A `Stop` block's reason goes into the continuation twice: as
        // "Stop hook feedback" and as "Stop hook blocking error".
        if event == "Stop" && stop_output(answer)["decision"] == "block" {
            return 2;
        }
        1
    }

    fn asks_at_a_turns_end(&self, event: &str) -> bool {
        event == "Stop"
    }

    fn commands(&self) -> &'static [&'static str] {
        &COMMANDS
    }

    fn is_quiet(&self) -> bool {
        self.phase == Phase::Idle && self.composer.is_empty() && self.queued.is_empty()
    }
}

/// What a `Stop` hook printed on stdout (nothing, when it printed no JSON).
fn stop_output(answer: &HookAnswer) -> Value {
    serde_json::from_str(answer.stdout.trim()).unwrap_or(Value::Null)
}
