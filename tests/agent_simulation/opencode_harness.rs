//! A model of OpenCode 1.18.33 with DING's two plugins loaded, for the
//! whole-agent simulation: written from what the real binary was seen to
//! do (`docs/providers/opencode-findings.md`) and drawn with the screens
//! captured from it (`fixtures/providers/opencode/snapshots/`), which the
//! provider reads exactly as it reads the real TUI. DING's plugins run as
//! their Rust model (`opencode_plugins.rs`): the TUI plugin is the native
//! idle path's reporter, the server plugin relays the turn boundaries.
//! DING never types into it: every byte the world writes is the person's.
//!
//! * the TUI starts on the home screen (no session yet), its first frame
//!   0.8 to 3.5 s after the start (findings 6: 3.5 s); DING's server
//!   plugin says `plugin.loaded` as it loads, the TUI plugin just before
//!   the first frame, and makes its first report then (`new`, idle);
//! * a prompt (Return on a non-empty composer, or the TUI plugin's
//!   `promptAsync`) runs the server plugin's `chat.message` and is held
//!   until it returns (findings 1.4: the composer is cleared at once, the
//!   prompt drawn only then); its answer's context is a text part of that
//!   very message. The message is then saved (`message.part.updated`):
//!   into an idle session it starts a turn (`session.status` busy, one
//!   model request, with a new session's title request beside it), into a
//!   busy one it waits, drawn `QUEUED`, and the loop takes it as the next
//!   request when the turn ends, with no idle between (findings 4.2);
//! * on the home screen a prompt first creates a session and shows it; so
//!   does the TUI plugin's delivery there (findings 4.4), the person's
//!   draft following into the session's composer, byte-exact;
//! * a person's draft is never touched by a `promptAsync` (findings 4.1:
//!   10 of 10 byte-exact);
//! * a turn may run a tool (`tool.execute.before`, then the awaited
//!   `tool.execute.after`, whose answer rides the tool-result request), and
//!   a tool may ask first: the permission dialog (`permission.asked`),
//!   whose Enter allows and Esc rejects (typed characters are ignored by
//!   it); a rejected permission ends the turn;
//! * Esc once while busy only says `esc again to interrupt`; Esc again
//!   interrupts the turn, and idle is said twice, the second time once
//!   the partial reply is saved (findings 5);
//! * the server's events reach the TUI plugin 1 to 5 ms after they
//!   happen, in order; the plugins' calls reach DING as the world's hook
//!   calls do, each on a connection of its own, in no set order;
//! * a message waiting behind a turn that is interrupted, or whose
//!   permission is rejected, is **stranded**: stored and drawn, no request
//!   made for it; it rides the next request of that session (findings 4.2,
//!   4.3);
//! * a turn ends with `session.status` idle and `session.idle`; no event
//!   says a session is idle at startup (findings 5);
//! * Ctrl+P opens the command palette and Ctrl+X L the sessions picker,
//!   boxes no hook announces (`picker-commands`, `picker-sessions`), which
//!   the person mostly closes with Esc; a turn started behind one runs
//!   (findings 4.3b), but DING must not start one there.
//!
//! Not modelled: `/new` and choosing another session in the picker (the
//! world has one context; a delivery that lands in a session the TUI no
//! longer shows runs its turn there, undrawn, as findings 3 saw it),
//! `/compact`, subagents, shell mode, pastes of the person's.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use ding::adapter::HookAnswer;
use ding::adapter::timing::QUEUE_CALL_TIMEOUT;
use ding::demo::keys::{Key, KeyDecoder};
use ding::providers::opencode::plugins::LOADED;
use ding::providers::opencode::timing::{CALL_TIMEOUT, NOTE_TIMEOUT};
use ding::pty::wire::Snapshot;
use serde_json::{Value, json};

use crate::harness::{Call, Happened, HarnessModel, View, captured};
use crate::opencode_plugins::{self, Act, ROUTE_EVERY_MS, Route, Status, TuiEvent, TuiPlugin};
use crate::support::rng::Rng;

/// The captures each state is drawn with.
const SCREENS: [&str; 13] = [
    "home-startup",
    "home-draft",
    "idle-session-empty",
    "idle-after-esc-with-queued-delivery",
    "idle-draft",
    "busy-empty",
    "busy-esc-once",
    "busy-after-prompt-async",
    "busy-draft",
    "dialog-permission",
    "dialog-permission-after-prompt-async",
    "picker-commands",
    "picker-sessions",
];

/// The draft each draft capture holds, which the model's text replaces.
const DRAFTS: [(&str, &str); 3] = [
    ("idle-draft", "a one-line draft"),
    ("busy-draft", "typed while busy"),
    ("home-draft", "a home draft"),
];

fn screens() -> &'static BTreeMap<&'static str, Snapshot> {
    static SCREENS_READ: OnceLock<BTreeMap<&'static str, Snapshot>> = OnceLock::new();
    SCREENS_READ.get_or_init(|| captured("fixtures/providers/opencode/snapshots", &SCREENS))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// This model's random streams: `seed ^ STREAM` (its own draws) and
/// `seed ^ STREAM ^ 1` (the person's pickers), no other draw's.
const STREAM: u64 = 0x0c_1833_0c0d;

/// A user message of a session.
#[derive(Clone, Debug)]
struct Message {
    text: String,
    /// A delivery of DING's (`promptAsync`), not the person's prompt.
    ding: bool,
    /// What the server plugin's `chat.message` answer added to it.
    context: Option<String>,
    /// It was sent while its session ran a turn (`queued` on its
    /// `chat.message`): DING added nothing to it.
    queued: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    None,
    Starts {
        at: u64,
        asks: bool,
    },
    Runs {
        ends: u64,
    },
    /// `tool.execute.after` runs, awaited; `left` of the turn after it.
    Returning {
        left: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Busy {
        ends_at: u64,
        tool: Tool,
        /// Esc was pressed once: the next one interrupts.
        esc_once: bool,
    },
    /// The permission dialog; `left` of the turn after it.
    Permission {
        left: u64,
    },
}

struct Session {
    phase: Phase,
    /// Messages saved while a turn ran: the next request takes them.
    queue: Vec<Message>,
    /// Messages saved and never answered: the next request takes them.
    stranded: Vec<Message>,
}

enum Event {
    /// The server plugin loads.
    ServerPluginLoads,
    /// The TUI is up: its plugin loads and reports, the first frame.
    ComposerUp,
    /// A server event reaches the TUI (and its plugin).
    ToTui(TuiEvent),
    /// The TUI plugin's route watch ticks.
    RouteWatch,
    /// The TUI plugin's retry timer.
    Retry,
    /// The TUI plugin's `session.create` returns, on the home screen.
    Create { id: String, text: String },
    /// The TUI plugin's `promptAsync` reaches the server.
    PromptAsync {
        session: String,
        id: String,
        text: String,
    },
    /// `promptAsync` returned to the TUI plugin (`ok`: 204).
    Sent { id: String, ok: bool },
}

pub struct OpenCodeHarness {
    rng: Rng,
    persons: Rng,
    turn_ms: u64,
    up: bool,
    route: Route,
    sessions: BTreeMap<String, Session>,
    next_session: u64,
    composer: String,
    picker: Option<&'static str>,
    decoder: KeyDecoder,
    plugin: TuiPlugin,
    /// The route the plugin's watch last compared, and when it ticks.
    watched: Route,
    watch_from: u64,
    watch_due: bool,
    events: BTreeMap<(u64, u64), Event>,
    next_event: u64,
    next_call: u64,
    /// `chat.message` calls the server plugin awaits, and the message each
    /// holds (with its session).
    held: BTreeMap<u64, (String, Message)>,
    /// `tool.execute.after` calls awaited, and their session.
    tools: BTreeMap<u64, String>,
    /// Deliveries the TUI plugin is sending (created, prompt on its way).
    sending: usize,
    /// When the last server event reaches the TUI.
    tui_last: u64,
}

impl OpenCodeHarness {
    pub fn new(turn: Duration, seed: u64) -> OpenCodeHarness {
        OpenCodeHarness {
            rng: Rng(seed ^ STREAM),
            persons: Rng(seed ^ STREAM ^ 1),
            turn_ms: u64::try_from(turn.as_millis()).unwrap_or(1_000),
            up: false,
            route: Route::Home,
            sessions: BTreeMap::new(),
            next_session: 0,
            composer: String::new(),
            picker: None,
            decoder: KeyDecoder::new(),
            plugin: TuiPlugin::default(),
            watched: Route::Home,
            watch_from: 0,
            watch_due: false,
            events: BTreeMap::new(),
            next_event: 0,
            next_call: 0,
            held: BTreeMap::new(),
            tools: BTreeMap::new(),
            sending: 0,
            tui_last: 0,
        }
    }

    fn schedule(&mut self, at: u64, event: Event) {
        self.next_event += 1;
        self.events.insert((at, self.next_event), event);
    }

    /// A server event reaches the TUI 1 to 5 ms later, in the order the
    /// server published them (one event stream).
    fn tell_tui(&mut self, event: TuiEvent, now: u64) {
        let lag = self.rng.between(1, 5);
        let at = (now + lag).max(self.tui_last);
        self.tui_last = at;
        self.schedule(at, Event::ToTui(event));
    }

    fn hook(&mut self, event: &'static str, payload: Value) -> (Happened, u64) {
        self.next_call += 1;
        let call = self.next_call;
        (
            Happened::Hook {
                event,
                payload,
                call,
            },
            call,
        )
    }

    fn shown(&self) -> Option<&str> {
        match &self.route {
            Route::Home => None,
            Route::Session(id) => Some(id.as_str()),
        }
    }

    fn shown_phase(&self) -> Option<Phase> {
        self.shown()
            .and_then(|id| self.sessions.get(id))
            .map(|session| session.phase)
    }

    /// What the plugin did, carried out.
    fn acted(&mut self, acts: Vec<Act>, now: u64) -> Vec<Happened> {
        let mut happened = Vec::new();
        for act in acts {
            match act {
                Act::Queue { payload, call } => happened.push(Happened::Hook {
                    event: ding::providers::opencode::hooks::QUEUE,
                    payload,
                    call,
                }),
                Act::Note { event, payload } => happened.push(self.hook(event, payload).0),
                Act::Send {
                    conversation,
                    id,
                    text,
                } => {
                    self.sending += 1;
                    if conversation == opencode_plugins::NEW {
                        let after = self.rng.between(3, 15);
                        self.schedule(now + after, Event::Create { id, text });
                    } else {
                        let after = self.rng.between(2, 10);
                        let session = conversation;
                        self.schedule(now + after, Event::PromptAsync { session, id, text });
                    }
                }
                Act::RetryIn(after) => self.schedule(now + after, Event::Retry),
            }
        }
        happened
    }

    /// The route changed: the plugin's watch sees it at its next tick.
    fn route_moved(&mut self, now: u64) {
        if self.watch_due || !self.up {
            return;
        }
        self.watch_due = true;
        let since = now.saturating_sub(self.watch_from);
        let tick = self.watch_from + (since / ROUTE_EVERY_MS + 1) * ROUTE_EVERY_MS;
        self.schedule(tick, Event::RouteWatch);
    }

    /// A new session, shown now (the first prompt on the home screen, or
    /// the TUI plugin's delivery there): the draft stays in the composer.
    fn new_session(&mut self, now: u64) -> String {
        self.next_session += 1;
        let id = format!("ses_{:04}", self.next_session);
        self.sessions.insert(
            id.clone(),
            Session {
                phase: Phase::Idle,
                queue: Vec::new(),
                stranded: Vec::new(),
            },
        );
        self.tell_tui(TuiEvent::Created(id.clone()), now);
        self.route = Route::Session(id.clone());
        self.route_moved(now);
        id
    }

    /// A prompt goes into `session`: the server plugin's `chat.message`
    /// runs, and the prompt waits for it.
    fn prompt(&mut self, session: String, text: String, ding: bool) -> Vec<Happened> {
        // The server plugin's `busy` set: the session's turn (its
        // `session.status` events reach the server plugin at once).
        let queued = self
            .sessions
            .get(&session)
            .is_some_and(|state| state.phase != Phase::Idle);
        let payload = opencode_plugins::server_payload(&session, Some((&text, queued)), None);
        let (hook, call) = self.hook("chat.message", payload);
        let message = Message {
            text,
            ding,
            context: None,
            queued,
        };
        self.held.insert(call, (session, message));
        vec![hook, Happened::Drew]
    }

    /// `chat.message` returned: the message is saved, and starts a turn or
    /// waits behind the one running.
    fn prompt_goes_on(
        &mut self,
        call: u64,
        answer: Option<&HookAnswer>,
        now: u64,
    ) -> Vec<Happened> {
        let Some((id, mut message)) = self.held.remove(&call) else {
            return Vec::new();
        };
        message.context = opencode_plugins::context(answer);
        self.tell_tui(TuiEvent::PartText(message.text.clone()), now);
        let Some(session) = self.sessions.get_mut(&id) else {
            return Vec::new();
        };
        if session.phase == Phase::Idle {
            return self.start_turn(&id, vec![message], now);
        }
        session.queue.push(message);
        vec![Happened::Drew]
    }

    /// A turn starts in `id` on `messages` (after any stranded ones): one
    /// model request (a new session's title request beside it is the
    /// session's, whoever prompts first, and not counted).
    fn start_turn(&mut self, id: &str, messages: Vec<Message>, now: u64) -> Vec<Happened> {
        self.start_turn_on(id, messages, now)
    }

    /// [`OpenCodeHarness::start_turn`]: its first request is a free moment
    /// of the person's only on a prompt of theirs sent at idle
    /// ([`Call::StartsQueued`] otherwise).
    fn start_turn_on(&mut self, id: &str, messages: Vec<Message>, now: u64) -> Vec<Happened> {
        let persons = messages.iter().filter(|message| !message.ding);
        let request =
            if persons.clone().count() > 0 && persons.clone().all(|message| message.queued) {
                Call::StartsQueued
            } else {
                Call::Starts
            };
        let length = self.rng.between(self.turn_ms / 2, self.turn_ms * 3 / 2);
        let tool = if self.rng.chance(40) {
            Tool::Starts {
                at: now + length / 3,
                asks: self.rng.chance(25),
            }
        } else {
            Tool::None
        };
        let Some(session) = self.sessions.get_mut(id) else {
            return Vec::new();
        };
        session.phase = Phase::Busy {
            ends_at: now + length,
            tool,
            esc_once: false,
        };
        let mut carried = std::mem::take(&mut session.stranded);
        carried.extend(messages);
        let mut happened = Vec::new();
        for message in carried {
            happened.push(if message.ding {
                Happened::QueuedTurn(message.text)
            } else {
                Happened::Submitted(message.text)
            });
            if let Some(context) = message.context {
                happened.push(Happened::ContextReaches(context));
            }
        }
        happened.push(Happened::Request(request));
        happened.push(Happened::Drew);
        self.tell_tui(TuiEvent::Status(id.to_string(), Status::Busy), now);
        happened
    }

    /// The turn of `id` is over (ended, interrupted, or its permission
    /// rejected: `stranding` what waits behind it).
    fn turn_over(&mut self, id: &str, stranding: bool, now: u64) -> Vec<Happened> {
        self.turn_ends(id, stranding, false, now)
    }

    /// [`OpenCodeHarness::turn_over`]; `interrupted` (Esc Esc): idle is
    /// said again once the partial reply is saved (findings 5).
    fn turn_ends(
        &mut self,
        id: &str,
        stranding: bool,
        interrupted: bool,
        now: u64,
    ) -> Vec<Happened> {
        let Some(session) = self.sessions.get_mut(id) else {
            return Vec::new();
        };
        session.phase = Phase::Idle;
        let waiting = std::mem::take(&mut session.queue);
        let mut happened = vec![Happened::TurnEnded, Happened::Drew];
        if !waiting.is_empty() && !stranding {
            // The loop takes them as its next request: no idle between.
            happened.extend(self.start_turn(id, waiting, now));
            return happened;
        }
        if let Some(session) = self.sessions.get_mut(id) {
            session.stranded.extend(waiting);
        }
        self.tell_tui(TuiEvent::Status(id.to_string(), Status::Idle), now);
        self.tell_tui(TuiEvent::Idle(id.to_string()), now);
        if interrupted {
            let saved = now + self.rng.between(20, 80);
            self.tell_tui(TuiEvent::Status(id.to_string(), Status::Idle), saved);
            self.tell_tui(TuiEvent::Idle(id.to_string()), saved);
        }
        happened
    }

    fn set_phase(&mut self, id: &str, phase: Phase) {
        if let Some(session) = self.sessions.get_mut(id) {
            session.phase = phase;
        }
    }

    /// A session's turn at its next moment.
    fn turn_timeout(&mut self, id: String, now: u64) -> Vec<Happened> {
        let Some(Phase::Busy {
            ends_at,
            tool,
            esc_once,
        }) = self.sessions.get(&id).map(|session| session.phase)
        else {
            return Vec::new();
        };
        match tool {
            Tool::Starts { at, asks } if at <= now && at < ends_at => {
                if asks {
                    self.set_phase(
                        &id,
                        Phase::Permission {
                            left: ends_at - now,
                        },
                    );
                    self.tell_tui(TuiEvent::PermissionAsked(id), now);
                    return vec![Happened::Drew];
                }
                self.set_phase(
                    &id,
                    Phase::Busy {
                        ends_at,
                        tool: Tool::Runs {
                            ends: now + (ends_at - now) / 2,
                        },
                        esc_once,
                    },
                );
                let payload = opencode_plugins::server_payload(&id, None, Some("bash"));
                vec![self.hook("tool.execute.before", payload).0]
            }
            Tool::Runs { ends } if ends <= now && ends < ends_at => {
                self.set_phase(
                    &id,
                    Phase::Busy {
                        ends_at,
                        tool: Tool::Returning {
                            left: ends_at - now,
                        },
                        esc_once,
                    },
                );
                let payload = opencode_plugins::server_payload(&id, None, Some("bash"));
                let (hook, call) = self.hook("tool.execute.after", payload);
                self.tools.insert(call, id);
                vec![hook]
            }
            Tool::None | Tool::Starts { .. } | Tool::Runs { .. } if ends_at <= now => {
                self.turn_over(&id, false, now)
            }
            _ => Vec::new(),
        }
    }

    fn turn_deadline(&self) -> Option<u64> {
        self.sessions
            .values()
            .filter_map(|session| match session.phase {
                Phase::Busy { ends_at, tool, .. } => match tool {
                    Tool::None => Some(ends_at),
                    Tool::Starts { at, .. } => Some(at.min(ends_at)),
                    Tool::Runs { ends } => Some(ends.min(ends_at)),
                    Tool::Returning { .. } => None,
                },
                _ => None,
            })
            .min()
    }

    /// `tool.execute.after` returned: the tool's result goes back, what
    /// the answer appended with it, and the turn goes on.
    fn tool_returned(&mut self, call: u64, now: u64) -> Vec<Happened> {
        let Some(id) = self.tools.remove(&call) else {
            return Vec::new();
        };
        let Some(Phase::Busy {
            tool: Tool::Returning { left },
            esc_once,
            ..
        }) = self.sessions.get(&id).map(|session| session.phase)
        else {
            return Vec::new();
        };
        self.set_phase(
            &id,
            Phase::Busy {
                ends_at: now + left,
                tool: Tool::None,
                esc_once,
            },
        );
        self.tell_tui(TuiEvent::Status(id, Status::Busy), now);
        vec![Happened::Request(Call::Follows), Happened::Drew]
    }

    fn event(&mut self, event: Event, now: u64) -> Vec<Happened> {
        match event {
            Event::ServerPluginLoads => {
                let payload = json!({"plugin": "server", "version": 1});
                vec![self.hook(LOADED, payload).0]
            }
            Event::ComposerUp => {
                self.up = true;
                self.watch_from = now;
                self.watched = self.route.clone();
                let payload = json!({"plugin": "tui", "version": 1});
                let mut happened = vec![self.hook(LOADED, payload).0];
                let offer = self
                    .plugin
                    .offer(&self.route, &mut self.next_call)
                    .into_iter()
                    .collect();
                happened.extend(self.acted(offer, now));
                happened.push(Happened::Drew);
                happened
            }
            Event::ToTui(event) => {
                let acts = self.plugin.heard(event, &self.route, &mut self.next_call);
                self.acted(acts, now)
            }
            Event::RouteWatch => {
                self.watch_due = false;
                if self.watched == self.route {
                    return Vec::new();
                }
                self.watched = self.route.clone();
                let acts = self
                    .plugin
                    .route_changed(&self.route, &mut self.next_call)
                    .into_iter()
                    .collect();
                self.acted(acts, now)
            }
            Event::Retry => {
                let acts = self
                    .plugin
                    .retry_fired(&self.route, &mut self.next_call)
                    .into_iter()
                    .collect();
                self.acted(acts, now)
            }
            Event::Create { id, text } => {
                // `session.create`, then `route.navigate` to it.
                let session = self.new_session(now);
                let after = self.rng.between(2, 10);
                self.schedule(now + after, Event::PromptAsync { session, id, text });
                vec![Happened::Drew]
            }
            Event::PromptAsync { session, id, text } => {
                // The server takes it (204) and runs it in the background;
                // once in a while it refuses it (an error answer).
                let ok = self.sessions.contains_key(&session) && !self.rng.chance(2);
                let after = self.rng.between(1, 3);
                self.schedule(now + after, Event::Sent { id, ok });
                if !ok {
                    return Vec::new();
                }
                self.prompt(session, text, true)
            }
            Event::Sent { id, ok } => {
                self.sending = self.sending.saturating_sub(1);
                let acts = self.plugin.sent(&id, ok, &self.route, &mut self.next_call);
                self.acted(acts, now)
            }
        }
    }

    fn key(&mut self, key: Key, now: u64) -> Vec<Happened> {
        if self.picker.is_some() {
            return match key {
                Key::Escape | Key::Enter => {
                    self.picker = None;
                    vec![Happened::Drew]
                }
                _ => Vec::new(),
            };
        }
        let shown = self.shown().map(str::to_string);
        match (self.shown_phase(), key) {
            // The permission dialog: Enter allows, Esc rejects; typed
            // characters are ignored.
            (Some(Phase::Permission { left }), Key::Enter) => {
                let id = shown.expect("a session");
                self.tell_tui(TuiEvent::PermissionReplied(id.clone()), now);
                self.set_phase(
                    &id,
                    Phase::Busy {
                        ends_at: now + left,
                        tool: Tool::Runs {
                            ends: now + left / 2,
                        },
                        esc_once: false,
                    },
                );
                let payload = opencode_plugins::server_payload(&id, None, Some("bash"));
                vec![self.hook("tool.execute.before", payload).0, Happened::Drew]
            }
            (Some(Phase::Permission { .. }), Key::Escape) => {
                let id = shown.expect("a session");
                self.tell_tui(TuiEvent::PermissionReplied(id.clone()), now);
                self.turn_over(&id, true, now)
            }
            (Some(Phase::Permission { .. }), _) => Vec::new(),
            (
                Some(Phase::Busy {
                    ends_at,
                    tool,
                    esc_once,
                }),
                Key::Escape,
            ) => {
                let id = shown.expect("a session");
                if esc_once {
                    // Interrupted: what waits behind the turn is stranded.
                    if let Tool::Returning { .. } = tool {
                        self.tools.retain(|_, session| *session != id);
                    }
                    return self.turn_ends(&id, true, true, now);
                }
                self.set_phase(
                    &id,
                    Phase::Busy {
                        ends_at,
                        tool,
                        esc_once: true,
                    },
                );
                vec![Happened::Drew]
            }
            (_, Key::Text(text) | Key::Paste(text)) => {
                self.composer.push_str(&text);
                vec![Happened::Drew]
            }
            (_, Key::Backspace) => {
                self.composer.pop();
                vec![Happened::Drew]
            }
            (_, Key::CtrlU) => {
                self.composer.clear();
                vec![Happened::Drew]
            }
            (_, Key::Enter) if !self.composer.is_empty() && self.up => {
                let text = std::mem::take(&mut self.composer);
                let id = match shown {
                    Some(id) => id,
                    None => self.new_session(now),
                };
                self.prompt(id, text, false)
            }
            _ => Vec::new(),
        }
    }

    fn with_draft(&self, name: &'static str) -> Snapshot {
        let sample = DRAFTS
            .iter()
            .find(|(capture, _)| *capture == name)
            .map(|(_, sample)| *sample)
            .expect("a draft capture");
        let mut snapshot = screens()[name].clone();
        let row = usize::from(snapshot.cursor.row);
        let cols = usize::from(snapshot.size.cols);
        let Some(at) = snapshot
            .runs
            .iter()
            .position(|run| usize::from(run.row) == row && run.text == sample)
        else {
            return snapshot;
        };
        let col = usize::from(snapshot.runs[at].col);
        let room = cols.saturating_sub(col + 3).max(1);
        let text: String = self.composer.chars().take(room).collect();
        let length = text.chars().count();
        snapshot.runs[at].text = text.clone();
        if let Some(pad) = snapshot.runs.get_mut(at + 1)
            && usize::from(pad.row) == row
        {
            let end = usize::from(pad.col) + pad.text.chars().count();
            pad.col = u16::try_from(col + length).unwrap_or(0);
            pad.text = " ".repeat(end.saturating_sub(col + length));
        }
        let before: String = snapshot.rows[row].chars().take(col).collect();
        snapshot.rows[row] = format!("{before}{text}");
        snapshot.cursor.col = u16::try_from(col + length).unwrap_or(0);
        snapshot
    }

    /// The capture this state is drawn with (`""`: nothing drawn yet).
    fn screen_name(&self) -> &'static str {
        if !self.up {
            return "";
        }
        if let Some(picker) = self.picker {
            return picker;
        }
        let drafted = !self.composer.is_empty();
        let Some(id) = self.shown() else {
            return if drafted {
                "home-draft"
            } else {
                "home-startup"
            };
        };
        let session = &self.sessions[id];
        let queued = session.queue.iter().any(|message| message.ding);
        match session.phase {
            Phase::Idle if drafted => "idle-draft",
            Phase::Idle if !session.stranded.is_empty() => "idle-after-esc-with-queued-delivery",
            Phase::Idle => "idle-session-empty",
            Phase::Permission { .. } if queued => "dialog-permission-after-prompt-async",
            Phase::Permission { .. } => "dialog-permission",
            Phase::Busy { .. } if drafted => "busy-draft",
            Phase::Busy { esc_once: true, .. } => "busy-esc-once",
            Phase::Busy { .. } if queued => "busy-after-prompt-async",
            Phase::Busy { .. } => "busy-empty",
        }
    }
}

impl HarnessModel for OpenCodeHarness {
    fn provider(&self) -> &'static str {
        "opencode"
    }

    fn has_native_idle_path(&self) -> bool {
        true
    }

    fn hook_timeout_ms(&self, event: &str) -> u64 {
        match event {
            "queue" => millis(QUEUE_CALL_TIMEOUT),
            "chat.message" | "tool.execute.after" => millis(CALL_TIMEOUT),
            _ => millis(NOTE_TIMEOUT),
        }
    }

    /// What `chat.message` adds rides its message's request (which a
    /// stranded message waits for), said then; a delivery reaches the
    /// model when its turn starts.
    fn copies_reaching_model(&self, event: &str, _answer: &HookAnswer) -> usize {
        usize::from(event != "queue" && event != "chat.message")
    }

    /// No hook asks at a turn's end: OpenCode has none that can continue
    /// a finished turn.
    fn asks_at_a_turns_end(&self, _event: &str) -> bool {
        false
    }

    /// A request waits for the server plugin's awaited hooks only; the
    /// TUI plugin's calls and the notes wait for nothing.
    fn a_request_may_wait_for(&self, event: &str) -> bool {
        matches!(event, "chat.message" | "tool.execute.after")
    }

    fn started(&mut self, now_ms: u64) -> Vec<Happened> {
        let loads = self.rng.between(100, 600);
        self.schedule(now_ms + loads, Event::ServerPluginLoads);
        let up = self.rng.between(800, 3_500).max(loads + 1);
        self.schedule(now_ms + up, Event::ComposerUp);
        Vec::new()
    }

    fn read_input(&mut self, bytes: &[u8], now_ms: u64) -> Vec<Happened> {
        let idle = self.picker.is_none()
            && self.up
            && matches!(
                self.shown_phase(),
                None | Some(Phase::Idle | Phase::Busy { .. })
            );
        match bytes {
            [0x10] if idle => {
                self.picker = Some("picker-commands");
                return vec![Happened::Drew];
            }
            [0x18, b'l'] if idle => {
                self.picker = Some("picker-sessions");
                return vec![Happened::Drew];
            }
            _ => {}
        }
        let keys = self.decoder.feed(bytes);
        keys.into_iter()
            .flat_map(|key| self.key(key, now_ms))
            .collect()
    }

    fn next_deadline_ms(&self) -> Option<u64> {
        [
            self.events.keys().next().map(|(at, _)| *at),
            self.turn_deadline(),
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
        let due: Vec<String> = self
            .sessions
            .keys()
            .filter(|id| {
                let session = &self.sessions[*id];
                matches!(session.phase, Phase::Busy { .. })
            })
            .cloned()
            .collect();
        if self.turn_deadline().is_some_and(|at| at <= now_ms) {
            for id in due {
                happened.extend(self.turn_timeout(id, now_ms));
            }
        }
        happened
    }

    fn hook_answered(
        &mut self,
        event: &'static str,
        call: u64,
        answer: Option<&HookAnswer>,
        now_ms: u64,
    ) -> Vec<Happened> {
        match event {
            "queue" => {
                let acts = self
                    .plugin
                    .answered(call, answer, &self.route, &mut self.next_call);
                self.acted(acts, now_ms)
            }
            "chat.message" => self.prompt_goes_on(call, answer, now_ms),
            "tool.execute.after" => self.tool_returned(call, now_ms),
            _ => Vec::new(),
        }
    }

    fn snapshot(&mut self, revision: u64) -> Snapshot {
        let name = self.screen_name();
        let mut snapshot = match name {
            "" => {
                let mut blank = screens()["home-startup"].clone();
                blank.rows = vec![String::new(); blank.rows.len()];
                blank.runs.clear();
                blank
            }
            "idle-draft" | "busy-draft" | "home-draft" => self.with_draft(name),
            _ => screens()[name].clone(),
        };
        snapshot.revision = revision;
        snapshot
    }

    fn view(&self) -> View {
        let composer = self.composer.clone();
        if self.picker.is_some() {
            return View::Dialog;
        }
        match self.shown_phase() {
            None | Some(Phase::Idle) => View::Idle { composer },
            Some(Phase::Busy { .. }) => View::Busy { composer },
            Some(Phase::Permission { .. }) => View::Dialog,
        }
    }

    /// Idle, nothing typed, no prompt on its way or waiting, no picker.
    fn is_quiet(&self) -> bool {
        self.up
            && self.picker.is_none()
            && self.composer.is_empty()
            && self.held.is_empty()
            && self.sending == 0
            && self
                .sessions
                .values()
                .all(|session| session.phase == Phase::Idle && session.queue.is_empty())
    }

    fn unannounced_dialog(&self) -> Option<&'static str> {
        self.picker
    }

    fn answer_keys(&mut self) -> Option<(Vec<u8>, u64)> {
        let keys = if self.picker.is_some() {
            // Most close a picker; some take what it shows (the same
            // session, here).
            if self.persons.chance(85) {
                b"\x1b".to_vec()
            } else {
                b"\r".to_vec()
            }
        } else if let Some(Phase::Permission { .. }) = self.shown_phase() {
            // Enter allows; Esc rejects.
            if self.persons.chance(60) {
                b"\r".to_vec()
            } else {
                b"\x1b".to_vec()
            }
        } else {
            return None;
        };
        Some((keys, self.persons.between(300, 2_500)))
    }

    fn person_acts(&mut self) -> Option<(Vec<u8>, u64)> {
        if !self.up || self.picker.is_some() || !self.composer.is_empty() {
            return None;
        }
        if !matches!(self.shown_phase(), None | Some(Phase::Idle)) || !self.persons.chance(6) {
            return None;
        }
        let keys = if self.persons.chance(50) {
            vec![0x10]
        } else {
            vec![0x18, b'l']
        };
        Some((keys, self.persons.between(100, 1_500)))
    }
}
