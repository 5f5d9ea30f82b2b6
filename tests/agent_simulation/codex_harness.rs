//! A model of Codex CLI 0.169.0 under DING's launcher with the native idle
//! path, for the whole-agent simulation: written from what the real binary
//! was seen to do (`docs/providers/codex.md`, the design's findings) and
//! drawn with the screens captured from it
//! (`fixtures/providers/codex/snapshots/`), which the provider reads
//! exactly as it reads the real TUI. The launcher's side of the native path
//! is the project's own `QueuePath` machine, talking to a model of the
//! app-server (`codex_app_server.rs`) on the same clock; the model carries
//! out its outputs as the launcher's poll loop does.
//!
//! * the composer is up a few hundred milliseconds after start; before,
//!   the screen is blank; where the person has an untrusted hook of their
//!   own in their Codex config, the "Hooks need review" modal opens 0.1 to
//!   2 s after the composer and captures every key (Return or `1`: the
//!   hooks browser; `2`, `3` or Esc: continue; in the browser Esc or `2`
//!   closes it);
//! * a prompt (Return on a non-empty composer) starts a turn:
//!   `SessionStart` with the first prompt of a session (`startup`,
//!   `clear` after `/clear`, `compact` after `/compact`), then
//!   `UserPromptSubmit`, `PreModelRequest`; a turn may run a tool
//!   (`PreToolUse`, `PostToolUse`), and a tool may ask for approval:
//!   `PermissionRequest`, whose dialog is drawn once the hook returns
//!   (`1` or Return: yes; `2` or Esc: no, `Interrupt`, no `Stop`);
//! * the reply may stream with no `Working` line, the screen looking
//!   exactly idle (`busy-streaming-looks-idle`);
//! * a turn's end fires `Stop` and waits for it: `{"decision":"block"}`
//!   continues the turn once (`stop_hook_active` on its own `Stop`);
//! * Esc stops a running turn (`Interrupt`, no `Stop`) and pauses the
//!   queue; Return during a turn steers the text into it;
//! * `/clear` starts a new thread, which holds nothing of the old one
//!   (the model may be told of an unread file again); `/compact` runs a
//!   compaction (`PreCompact`, `PostCompact` `manual`), after which the
//!   thread keeps its user messages (the prompts: the person's, a typed
//!   notice, a queued delivery) but not the `developer` messages hooks
//!   injected (findings §3; captured on 0.169.0 in
//!   `fixtures/providers/codex/eval/compaction-0.169.0.jsonl`, where the
//!   prompt after a `/compact` still carries the queued notice of the
//!   turn before it), nor, taken to be alike, a `Stop` block's reason
//!   (not captured; Codex's source reads it as a hook prompt, which its
//!   compaction leaves out with the `developer` messages);
//! * every hook is awaited before the turn goes on, one at a time (Codex
//!   awaits synchronous hooks: `SessionStart`'s answer comes before
//!   `UserPromptSubmit` runs);
//! * the app-server's queue starts a queued delivery 20 to 50 ms after the
//!   thread is idle, unless paused; that turn's `UserPromptSubmit` carries
//!   exactly the queued text;
//! * in some runs the app-server dies under the TUI once the thread has
//!   had a turn (findings §12): a running turn ends with no `Stop`, the
//!   TUI shows "Reconnecting to server" (keys go into the composer, a
//!   Return sends nothing) until it reconnects 3.2 to 4 s later to the
//!   app-server the launcher started again, whose thread and queue are the
//!   old one's, loaded once the TUI is back.

use std::collections::{BTreeMap, VecDeque};
use std::sync::OnceLock;
use std::time::Duration;

use ding::adapter::HookAnswer;
use ding::adapter::timing::QUEUE_CALL_TIMEOUT;
use ding::core::time::Time;
use ding::demo::keys::{Key, KeyDecoder};
use ding::providers::codex::hooks::{LAUNCH, QUEUE};
use ding::providers::codex::native::{Input, Output, QueuePath, Setup};
use ding::pty::wire::Snapshot;
use serde_json::{Value, json};

use crate::codex_app_server::AppServer;
use crate::harness::{Call, Happened, HarnessModel, View, captured, with_composer_text};
use crate::support::rng::Rng;

/// The captures each state is drawn with.
const SCREENS: [&str; 13] = [
    "app-server-gone-reconnecting",
    "hooks-review-modal",
    "hooks-browser",
    "eval-idle-empty",
    "idle-after-turn",
    "after-compaction",
    "draft",
    "slash-menu",
    "busy",
    "busy-draft",
    "busy-command-running",
    "busy-streaming-looks-idle",
    "approval-dialog",
];

fn screens() -> &'static BTreeMap<&'static str, Snapshot> {
    static SCREENS_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    SCREENS_READ.get_or_init(|| captured("fixtures/providers/codex/snapshots", &SCREENS))
}

/// The slash commands a person may type.
pub const COMMANDS: [&str; 2] = ["/clear", "/compact"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The TUI is starting: nothing drawn yet.
    Starting,
    Idle,
    Busy {
        ends_at: u64,
        continued: bool,
        tool: Tool,
        /// From this moment the reply streams with no `Working` line
        /// (`u64::MAX`: it never does), and whether it does now.
        streams_at: u64,
        streaming: bool,
    },
    /// `PermissionRequest` runs; its dialog is drawn once it returns.
    Asking {
        left: u64,
        continued: bool,
    },
    Dialog {
        left: u64,
        continued: bool,
    },
    /// The turn ended and waits for its `Stop` hook.
    Stopping {
        continued: bool,
    },
    Compacting {
        ends_at: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    None,
    Starts { at: u64, asks: bool },
    Runs { ends: u64 },
}

/// The startup modal of a person's own untrusted hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Modal {
    None,
    /// It opens this long after the composer.
    After(u64),
    /// Open; `browsing`: its "Review hooks" browser is.
    Open {
        browsing: bool,
    },
}

/// What the model has scheduled for itself.
enum Event {
    ComposerUp,
    ModalOpens,
    ToServer(String),
    ToLauncher(String),
    /// The queue looks for an item to start.
    Kick,
    /// The app-server is killed (a `kill -9`).
    ServerDies,
    /// The launcher's new app-server listens (the launcher connects on
    /// its next try).
    ServerBack,
    /// The TUI has reconnected to it.
    TuiBack,
}

pub struct CodexHarness {
    rng: Rng,
    turn_ms: u64,
    phase: Phase,
    composer: String,
    /// A conversation is on screen.
    history: bool,
    /// The next prompt's `SessionStart` source, until it fires.
    session: Option<&'static str>,
    decoder: KeyDecoder,
    native: QueuePath,
    /// What the launcher does first, once the harness has started.
    launcher_starts: Vec<Output>,
    server: AppServer,
    /// The app-server accepts connections.
    listening: bool,
    events: BTreeMap<(u64, u64), Event>,
    next_event: u64,
    /// A hook of Codex's runs; the ones fired meanwhile wait, in order.
    hook_running: bool,
    hooks_waiting: VecDeque<Happened>,
    modal: Modal,
    /// When the app-server dies under the TUI, if it does (after start).
    dies_after: Option<u64>,
    /// The TUI has lost its app-server and shows "Reconnecting".
    reconnecting: bool,
}

impl CodexHarness {
    pub fn new(turn: Duration, seed: u64) -> CodexHarness {
        let setup = Setup {
            cwd: "/srv/project".into(),
            ..Setup::default()
        };
        let mut native = QueuePath::new(setup, Time::ZERO);
        let launcher_starts = std::iter::from_fn(|| native.poll_output()).collect();
        // Drawn apart: whether the person has hooks of their own to review.
        let mut own_hooks = Rng(seed ^ 0x40da1);
        let modal = if own_hooks.chance(30) {
            Modal::After(own_hooks.between(100, 2_000))
        } else {
            Modal::None
        };
        // Drawn apart too: whether its app-server dies under it.
        let mut death = Rng(seed ^ 0xdead);
        let dies_after = death.chance(15).then(|| death.between(2_000, 15_000));
        CodexHarness {
            dies_after,
            reconnecting: false,
            rng: Rng(seed ^ 0xc0de),
            turn_ms: u64::try_from(turn.as_millis()).unwrap_or(1_000),
            phase: Phase::Starting,
            composer: String::new(),
            history: false,
            session: Some("startup"),
            decoder: KeyDecoder::new(),
            native,
            launcher_starts,
            server: AppServer::new(),
            listening: true,
            events: BTreeMap::new(),
            next_event: 0,
            hook_running: false,
            hooks_waiting: VecDeque::new(),
            modal,
        }
    }

    fn schedule(&mut self, at: u64, event: Event) {
        self.next_event += 1;
        self.events.insert((at, self.next_event), event);
    }

    fn hook(event: &'static str, payload: Value) -> Happened {
        Happened::Hook {
            event,
            payload,
            call: 0,
        }
    }

    /// Codex's hooks one at a time, each awaited: a hook fired while one
    /// runs waits for its answer. The launcher's calls are its own.
    fn one_hook_at_a_time(&mut self, happened: Vec<Happened>) -> Vec<Happened> {
        let mut now = Vec::new();
        for happening in happened {
            match happening {
                Happened::Hook { event, .. } if event != QUEUE && event != LAUNCH => {
                    if self.hook_running {
                        self.hooks_waiting.push_back(happening);
                    } else {
                        self.hook_running = true;
                        now.push(happening);
                    }
                }
                // A request goes once the hooks before it returned.
                Happened::Request(_) if self.hook_running => {
                    self.hooks_waiting.push_back(happening)
                }
                other => now.push(other),
            }
        }
        now
    }

    /// One input to the launcher's machine, and what it then does.
    fn launcher_fed(&mut self, input: Input, now: u64) -> Vec<Happened> {
        self.native.handle_input(input, Time::from_millis(now));
        let outputs = std::iter::from_fn(|| self.native.poll_output()).collect();
        self.launcher_did(outputs, now)
    }

    /// What the launcher does, in the model's world; what is answered at
    /// once (a connection made or refused, a server started) is fed back
    /// in, as the launcher's loop does.
    fn launcher_did(&mut self, outputs: Vec<Output>, now: u64) -> Vec<Happened> {
        let mut happened = Vec::new();
        for output in outputs {
            match output {
                Output::Connect => {
                    let input = if self.listening {
                        Input::Connected
                    } else {
                        Input::ConnectFailed("connection refused".into())
                    };
                    happened.extend(self.launcher_fed(input, now));
                }
                Output::Send(line) => {
                    let lag = self.rng.between(1, 3);
                    self.schedule(now + lag, Event::ToServer(line));
                }
                Output::Call { call, report } => happened.push(Happened::Hook {
                    event: QUEUE,
                    payload: report.to_payload(),
                    call,
                }),
                Output::Tell(report) => {
                    let payload = serde_json::to_value(&report).expect("a report");
                    assert_eq!(
                        payload["mode"], "native-down",
                        "the native path went unavailable: {payload}"
                    );
                    happened.push(Happened::Hook {
                        event: LAUNCH,
                        payload,
                        call: 0,
                    });
                }
                Output::StartServer => {
                    let listens = self.rng.between(50, 150);
                    self.schedule(now + listens, Event::ServerBack);
                    happened.extend(self.launcher_fed(Input::ServerStarted, now));
                }
                Output::EndTui => panic!("the model kills only a server with a turn to resume"),
                Output::Log(_) => {}
            }
        }
        happened
    }

    fn tell_launcher(&mut self, lines: Vec<String>, now: u64) {
        for line in lines {
            let lag = self.rng.between(1, 3);
            self.schedule(now + lag, Event::ToLauncher(line));
        }
    }

    fn set_active(&mut self, active: bool, now: u64) {
        if let Some(line) = self.server.set_active(active) {
            self.tell_launcher(vec![line], now);
        }
        if !active {
            let after = self.rng.between(20, 50);
            self.schedule(now + after, Event::Kick);
        }
    }

    fn start_turn(&mut self, prompt: String, queued: bool, now: u64) -> Vec<Happened> {
        let length = self.rng.between(self.turn_ms / 2, self.turn_ms * 3 / 2);
        let tool = if self.rng.chance(40) {
            Tool::Starts {
                at: now + length / 3,
                asks: self.rng.chance(25),
            }
        } else {
            Tool::None
        };
        let streams_at = if self.rng.chance(50) {
            now + length * 3 / 4
        } else {
            u64::MAX
        };
        self.phase = Phase::Busy {
            ends_at: now + length,
            continued: false,
            tool,
            streams_at,
            streaming: false,
        };
        self.history = true;
        self.set_active(true, now);
        let mut happened = Vec::new();
        if let Some(source) = self.session.take() {
            let start = json!({"hook_event_name": "SessionStart", "source": source, "session_id": self.server.thread});
            happened.push(CodexHarness::hook("SessionStart", start));
        }
        happened.push(if queued {
            Happened::QueuedTurn(prompt.clone())
        } else {
            Happened::Submitted(prompt.clone())
        });
        let submitted = json!({"hook_event_name": "UserPromptSubmit", "prompt": prompt});
        happened.push(CodexHarness::hook("UserPromptSubmit", submitted));
        // What the request carries is what `UserPromptSubmit` added.
        happened.push(Happened::Request(Call::Starts));
        let request = json!({"hook_event_name": "PreModelRequest"});
        happened.push(CodexHarness::hook("PreModelRequest", request));
        happened.push(Happened::Drew);
        happened
    }

    /// The turn is over (its `Stop` answered, or stopped): idle.
    fn turn_over(&mut self, now: u64) -> Vec<Happened> {
        self.phase = Phase::Idle;
        self.set_active(false, now);
        vec![Happened::TurnEnded, Happened::Drew]
    }

    /// Esc, or a denied approval: `Interrupt`, no `Stop`, the queue paused.
    fn interrupted(&mut self, now: u64) -> Vec<Happened> {
        self.server.paused = true;
        let mut happened = vec![CodexHarness::hook(
            "Interrupt",
            json!({"hook_event_name": "Interrupt"}),
        )];
        happened.extend(self.turn_over(now));
        happened
    }

    fn command(&mut self, command: &str, now: u64) -> Vec<Happened> {
        match command {
            "/clear" => {
                let started = self.server.new_thread();
                self.tell_launcher(vec![started], now);
                self.history = false;
                self.session = Some("clear");
                vec![Happened::ContextCleared, Happened::Drew]
            }
            _ => {
                let length = self.rng.between(300, 1_500);
                self.phase = Phase::Compacting {
                    ends_at: now + length,
                };
                self.set_active(true, now);
                let pre = json!({"hook_event_name": "PreCompact", "trigger": "manual"});
                vec![CodexHarness::hook("PreCompact", pre), Happened::Drew]
            }
        }
    }

    /// A key while the startup modal is open: it takes every key.
    fn modal_key(&mut self, browsing: bool, key: Key) -> Vec<Happened> {
        let text = match &key {
            Key::Text(text) => text.as_str(),
            _ => "",
        };
        self.modal = match (browsing, &key, text) {
            (false, Key::Enter, _) | (false, _, "1") => Modal::Open { browsing: true },
            (false, Key::Escape, _) | (false, _, "2" | "3") => Modal::None,
            (true, Key::Escape, _) | (true, _, "2") => Modal::None,
            _ => return Vec::new(),
        };
        vec![Happened::Drew]
    }

    fn key(&mut self, key: Key, now: u64) -> Vec<Happened> {
        if let Modal::Open { browsing } = self.modal {
            return self.modal_key(browsing, key);
        }
        if self.reconnecting {
            // Text goes into the composer; a Return sends nothing.
            return match key {
                Key::Text(text) | Key::Paste(text) => {
                    self.composer.push_str(&text);
                    self.drew()
                }
                Key::Backspace => {
                    self.composer.pop();
                    self.drew()
                }
                Key::CtrlU => {
                    self.composer.clear();
                    self.drew()
                }
                _ => Vec::new(),
            };
        }
        match (self.phase, key) {
            (Phase::Dialog { left, continued }, Key::Enter) => self.approved(left, continued, now),
            (Phase::Dialog { left, continued }, Key::Text(text)) if text == "1" => {
                self.approved(left, continued, now)
            }
            (Phase::Dialog { .. }, Key::Text(text)) if text == "2" => self.interrupted(now),
            (Phase::Dialog { .. }, Key::Escape) => self.interrupted(now),
            (Phase::Dialog { .. } | Phase::Asking { .. }, _) => Vec::new(),
            (Phase::Busy { .. }, Key::Escape) => self.interrupted(now),
            (_, Key::Text(text) | Key::Paste(text)) => {
                self.composer.push_str(&text);
                self.drew()
            }
            (_, Key::Backspace) => {
                self.composer.pop();
                self.drew()
            }
            // Ctrl-U kills the line back to its start: the one-line
            // composer, its cursor at the end, is empty.
            (_, Key::CtrlU) => {
                self.composer.clear();
                self.drew()
            }
            (Phase::Idle, Key::Enter) if COMMANDS.contains(&self.composer.as_str()) => {
                let command = std::mem::take(&mut self.composer);
                self.command(&command, now)
            }
            (Phase::Idle, Key::Enter) if !self.composer.is_empty() => {
                let prompt = std::mem::take(&mut self.composer);
                self.start_turn(prompt, false, now)
            }
            (Phase::Busy { .. } | Phase::Stopping { .. }, Key::Enter)
                if !self.composer.is_empty() =>
            {
                // A steer: the text joins the running turn.
                let steer = std::mem::take(&mut self.composer);
                vec![Happened::Submitted(steer), Happened::Drew]
            }
            _ => Vec::new(),
        }
    }

    /// The screen moves, once the TUI draws at all.
    fn drew(&self) -> Vec<Happened> {
        if self.phase == Phase::Starting {
            Vec::new()
        } else {
            vec![Happened::Drew]
        }
    }

    fn approved(&mut self, left: u64, continued: bool, now: u64) -> Vec<Happened> {
        self.phase = Phase::Busy {
            ends_at: now + left,
            continued,
            tool: Tool::Runs {
                ends: now + left / 2,
            },
            streams_at: u64::MAX,
            streaming: false,
        };
        vec![Happened::Drew]
    }

    fn event(&mut self, event: Event, now: u64) -> Vec<Happened> {
        match event {
            Event::ModalOpens => {
                self.modal = Modal::Open { browsing: false };
                vec![Happened::Drew]
            }
            Event::ComposerUp => {
                if let Modal::After(after) = self.modal {
                    self.schedule(now + after, Event::ModalOpens);
                }
                self.phase = Phase::Idle;
                let started = self.server.new_thread();
                self.tell_launcher(vec![started], now);
                vec![Happened::Drew]
            }
            Event::ToServer(line) => {
                let handled = self.server.handle(&line);
                self.tell_launcher(handled.to_launcher, now);
                if handled.kick {
                    let after = self.rng.between(20, 50);
                    self.schedule(now + after, Event::Kick);
                }
                Vec::new()
            }
            Event::ToLauncher(line) => self.launcher_fed(Input::Message(line), now),
            Event::Kick if self.phase == Phase::Idle => match self.server.take_next() {
                Some((item, changed)) => {
                    self.tell_launcher(vec![changed], now);
                    self.start_turn(item.text, true, now)
                }
                None => Vec::new(),
            },
            Event::Kick => Vec::new(),
            Event::ServerDies if !self.native.had_turn() || self.hook_running => {
                // A thread with no turn cannot be resumed (the launcher
                // would end the TUI, which the model does not play), and a
                // hook of Codex's running dies with the server: later.
                self.schedule(now + 2_000, Event::ServerDies);
                Vec::new()
            }
            Event::ServerDies => self.server_dies(now),
            Event::ServerBack => {
                self.server.restarted();
                self.listening = true;
                Vec::new()
            }
            Event::TuiBack => {
                self.reconnecting = false;
                let line = self.server.reconnected();
                self.tell_launcher(line.into_iter().collect(), now);
                let after = self.rng.between(20, 50);
                self.schedule(now + after, Event::Kick);
                vec![Happened::Drew]
            }
        }
    }

    /// The app-server is killed: what it was saying is lost, a turn it ran
    /// ends with no `Stop`, and the TUI shows "Reconnecting" until it is
    /// back (it retries about 3.2 s after the loss, then every 4 s).
    fn server_dies(&mut self, now: u64) -> Vec<Happened> {
        self.events.retain(|_, event| {
            !matches!(
                event,
                Event::ToServer(_) | Event::ToLauncher(_) | Event::Kick
            )
        });
        if self.phase != Phase::Starting {
            self.phase = Phase::Idle;
        }
        self.reconnecting = true;
        let back = self.rng.between(3_200, 4_000);
        self.schedule(now + back, Event::TuiBack);
        self.listening = false;
        let exited = Input::ServerExited {
            status: "signal: 9 (SIGKILL)".into(),
            last_error: None,
        };
        let mut happened = self.launcher_fed(exited, now);
        let closed = Input::Closed("end of stream without a close frame".into());
        happened.extend(self.launcher_fed(closed, now));
        happened.push(Happened::Drew);
        happened
    }

    fn turn_timeout(&mut self, now: u64) -> Vec<Happened> {
        match self.phase {
            Phase::Compacting { ends_at } if ends_at <= now => {
                self.phase = Phase::Idle;
                self.history = false;
                self.session = Some("compact");
                self.set_active(false, now);
                let post = json!({"hook_event_name": "PostCompact", "trigger": "manual"});
                vec![
                    Happened::ContextCompacted,
                    CodexHarness::hook("PostCompact", post),
                    Happened::Drew,
                ]
            }
            Phase::Busy {
                ends_at,
                continued,
                tool,
                streams_at,
                streaming,
            } => match tool {
                Tool::Starts { at, asks } if at <= now && at < ends_at => {
                    let pre = json!({"hook_event_name": "PreToolUse", "tool_name": "exec_command"});
                    let mut happened = vec![CodexHarness::hook("PreToolUse", pre)];
                    if asks {
                        self.phase = Phase::Asking {
                            left: ends_at - now,
                            continued,
                        };
                        let asked = json!({"hook_event_name": "PermissionRequest", "tool_name": "exec_command"});
                        happened.push(CodexHarness::hook("PermissionRequest", asked));
                    } else {
                        self.phase = Phase::Busy {
                            ends_at,
                            continued,
                            tool: Tool::Runs {
                                ends: now + (ends_at - now) / 2,
                            },
                            streams_at,
                            streaming,
                        };
                    }
                    happened.push(Happened::Drew);
                    happened
                }
                Tool::Runs { ends } if ends <= now && ends < ends_at => {
                    self.phase = Phase::Busy {
                        ends_at,
                        continued,
                        tool: Tool::None,
                        streams_at,
                        streaming,
                    };
                    let post =
                        json!({"hook_event_name": "PostToolUse", "tool_name": "exec_command"});
                    vec![
                        CodexHarness::hook("PostToolUse", post),
                        Happened::Request(Call::Follows),
                        Happened::Drew,
                    ]
                }
                _ if ends_at <= now => {
                    self.phase = Phase::Stopping { continued };
                    let stop = json!({"hook_event_name": "Stop", "stop_hook_active": continued});
                    vec![CodexHarness::hook("Stop", stop)]
                }
                _ if streams_at <= now && streams_at < ends_at => {
                    self.phase = Phase::Busy {
                        ends_at,
                        continued,
                        tool,
                        streams_at: u64::MAX,
                        streaming: true,
                    };
                    // The Working line goes: the screen looks idle.
                    vec![Happened::Drew]
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn turn_deadline(&self) -> Option<u64> {
        match self.phase {
            Phase::Compacting { ends_at } => Some(ends_at),
            Phase::Busy {
                ends_at,
                tool,
                streams_at,
                ..
            } => Some(
                match tool {
                    Tool::None => ends_at,
                    Tool::Starts { at, .. } => at.min(ends_at),
                    Tool::Runs { ends } => ends.min(ends_at),
                }
                .min(streams_at),
            ),
            _ => None,
        }
    }

    fn streaming(&self) -> bool {
        matches!(
            self.phase,
            Phase::Busy {
                streaming: true,
                tool: Tool::None,
                ..
            }
        )
    }
}

impl HarnessModel for CodexHarness {
    fn provider(&self) -> &'static str {
        "codex"
    }

    fn has_native_idle_path(&self) -> bool {
        true
    }

    fn hook_timeout_ms(&self, event: &str) -> u64 {
        match event {
            QUEUE => u64::try_from(QUEUE_CALL_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
            "Interrupt" | "SessionEnd" => 3_000,
            _ => 30_000,
        }
    }

    /// A queued delivery reaches the model when its turn starts, not when
    /// the launcher is given it.
    fn copies_reaching_model(&self, event: &str, _answer: &HookAnswer) -> usize {
        usize::from(event != QUEUE)
    }

    fn asks_at_a_turns_end(&self, event: &str) -> bool {
        event == "Stop"
    }

    /// The launcher's calls are its own, beside the harness's hooks.
    fn a_request_may_wait_for(&self, event: &str) -> bool {
        event != QUEUE && event != LAUNCH
    }

    /// The thread's first prompt brings its `SessionStart` (`clear`).
    fn queued_before_a_clears_first_prompt(&self) -> Vec<String> {
        if self.session == Some("clear") {
            self.server.queued_texts()
        } else {
            Vec::new()
        }
    }

    fn commands(&self) -> &'static [&'static str] {
        &COMMANDS
    }

    fn started(&mut self, now_ms: u64) -> Vec<Happened> {
        let actions = std::mem::take(&mut self.launcher_starts);
        let up = self.rng.between(300, 700);
        self.schedule(now_ms + up, Event::ComposerUp);
        if let Some(after) = self.dies_after.take() {
            self.schedule(now_ms + after, Event::ServerDies);
        }
        let happened = self.launcher_did(actions, now_ms);
        self.one_hook_at_a_time(happened)
    }

    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        let keys = self.decoder.feed(bytes);
        let happened = keys
            .into_iter()
            .flat_map(|key| self.key(key, now_ms))
            .collect();
        self.one_hook_at_a_time(happened)
    }

    fn next_deadline_ms(&self) -> Option<u64> {
        [
            self.events.keys().next().map(|(at, _)| *at),
            self.turn_deadline(),
            self.native.next_deadline().map(Time::as_millis),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn handle_timeout(&mut self, now_ms: u64) -> Vec<Happened> {
        let mut happened = Vec::new();
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 > now_ms {
                break;
            }
            let event = entry.remove();
            happened.extend(self.event(event, now_ms));
        }
        if self.turn_deadline().is_some_and(|at| at <= now_ms) {
            happened.extend(self.turn_timeout(now_ms));
        }
        if self
            .native
            .next_deadline()
            .is_some_and(|at| at.as_millis() <= now_ms)
        {
            self.native.handle_timeout(Time::from_millis(now_ms));
            let outputs = std::iter::from_fn(|| self.native.poll_output()).collect();
            happened.extend(self.launcher_did(outputs, now_ms));
        }
        self.one_hook_at_a_time(happened)
    }

    fn hook_answered(
        &mut self,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened> {
        let mut happened = Vec::new();
        if event != QUEUE && event != LAUNCH {
            // The next hook runs once this one has returned.
            self.hook_running = false;
            happened.extend(self.hooks_waiting.drain(..));
        }
        happened.extend(self.answered(event, call, answer, now_ms));
        self.one_hook_at_a_time(happened)
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        self.screen(revision)
    }

    fn view(&self) -> View {
        let composer = self.composer.clone();
        if let Modal::Open { .. } = self.modal {
            return View::Dialog;
        }
        match self.phase {
            Phase::Starting | Phase::Idle => View::Idle { composer },
            Phase::Dialog { .. } => View::Dialog,
            _ => View::Busy { composer },
        }
    }

    fn is_quiet(&self) -> bool {
        self.phase == Phase::Idle
            && self.composer.is_empty()
            && !self.server.has_queued()
            && !matches!(self.modal, Modal::Open { .. })
    }

    /// The app-server's queue starts a turn under the hooks-review modal
    /// too: it types nothing into it.
    fn takes_a_delivery_now(&self) -> bool {
        self.phase == Phase::Idle && self.composer.is_empty() && !self.server.has_queued()
    }
}

impl CodexHarness {
    fn answered(
        &mut self,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened> {
        match (event, self.phase) {
            (QUEUE, _) => {
                let answer = answer.cloned();
                self.launcher_fed(Input::Answer { call, answer }, now_ms)
            }
            ("PermissionRequest", Phase::Asking { left, continued }) => {
                // It prints nothing, ever: the dialog is drawn now.
                self.phase = Phase::Dialog { left, continued };
                vec![Happened::Drew]
            }
            ("Stop", Phase::Stopping { continued }) => {
                let blocks =
                    answer.is_some_and(|answer| answer.stdout.contains(r#""decision":"block""#));
                if blocks && !continued {
                    // The reason is the turn's next input: it goes on once.
                    let length = self.rng.between(self.turn_ms / 3, self.turn_ms);
                    self.phase = Phase::Busy {
                        ends_at: now_ms + length,
                        continued: true,
                        tool: Tool::None,
                        streams_at: u64::MAX,
                        streaming: false,
                    };
                    return vec![Happened::Request(Call::Continues), Happened::Drew];
                }
                self.turn_over(now_ms)
            }
            _ => Vec::new(),
        }
    }

    fn screen(&self, revision: u64) -> Snapshot {
        let name = match (self.phase, self.modal) {
            _ if self.reconnecting => "app-server-gone-reconnecting",
            (_, Modal::Open { browsing: true }) => "hooks-browser",
            (phase, _) => self.screen_of(phase),
        };
        if name.is_empty() {
            let mut blank = screens()["eval-idle-empty"].clone();
            blank.rows = vec![String::new(); blank.rows.len()];
            blank.runs.clear();
            blank.revision = revision;
            return blank;
        }
        let mut snapshot = if name == "draft" {
            // The composer as Codex draws what it holds, on the screen the
            // idle state would show without it.
            let base = self.screen_of_empty_composer();
            with_composer_text(&screens()[base], &self.composer, false)
        } else {
            screens()[name].clone()
        };
        snapshot.revision = revision;
        snapshot
    }

    /// The idle capture this state shows with an empty composer.
    fn screen_of_empty_composer(&self) -> &'static str {
        if self.session == Some("compact") {
            "after-compaction"
        } else if self.history {
            "idle-after-turn"
        } else {
            "eval-idle-empty"
        }
    }

    /// The capture a phase is drawn with (`""`: nothing drawn yet).
    fn screen_of(&self, phase: Phase) -> &'static str {
        match phase {
            Phase::Starting => "",
            Phase::Idle if self.composer.starts_with('/') => "slash-menu",
            Phase::Idle if !self.composer.is_empty() => "draft",
            Phase::Idle => self.screen_of_empty_composer(),
            Phase::Dialog { .. } => "approval-dialog",
            _ if !self.composer.is_empty() => "busy-draft",
            Phase::Busy {
                tool: Tool::Runs { .. },
                ..
            } => "busy-command-running",
            _ if self.streaming() => "busy-streaming-looks-idle",
            _ => "busy",
        }
    }
}
