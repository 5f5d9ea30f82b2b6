//! DING's two OpenCode plugins as the whole-agent simulation runs them:
//! the simulation cannot run JavaScript, so this is a Rust model of
//! `src/providers/opencode/plugins/tui.js` and `server.js`, kept in step
//! with them. Each piece names the JavaScript it mirrors:
//!
//! * [`TuiPlugin`] is `tui.js`'s `tui` function, the native idle path's
//!   reporter: `shown()` and `statusOf()` ([`TuiPlugin::report`], over the
//!   TUI's own state as OpenCode's events filled it: [`TuiPlugin::heard`]),
//!   `offer()` ([`TuiPlugin::offer`]: one `queue` call open, a new one
//!   only when the report changed or none is open), the `mine.then(...)`
//!   handler ([`TuiPlugin::answered`]: no answer → `retry` after
//!   `CALL_RETRY_MS`; an answer with no delivery → `drop()`, and an
//!   `expired` or `declined` one offered again; a delivery → `receipt()`, `handed.set`,
//!   `send()`), `send()`'s end ([`TuiPlugin::sent`]: a refused prompt
//!   moves its id from `handed` to `failed`; then `offered = null;
//!   offer()`), `started()` (a `message.part.updated` text part equal to
//!   a delivery's text: [`TuiPlugin::part_saved`]), `relay()` (an event of
//!   another session than the one shown is not relayed: [`TuiPlugin::relay`])
//!   and the 200 ms route `watch` ([`ROUTE_EVERY_MS`]).
//! * [`server_payload`] is `server.js`'s payload for `chat.message`
//!   (`promptText`: the prompt's own text; `queued`: its `busy` set, kept
//!   from the `session.status` and `session.idle` events its `event` hook
//!   sees) and the tool hooks (`parentID`:
//!   `parentOf`, always `null` here: the model runs no subagent), and
//!   [`context`] its `context(got)`: the text an answer adds, to the
//!   prompt's parts or to the tool's output.
//!
//! The hook channel itself (`call.js`) is the world's: a call that gets no
//! answer line (no adapter, its timeout) resolves to nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ding::adapter::{HookAnswer, ParkAnswer};
use ding::providers::opencode::timing::CALL_RETRY;
use serde_json::{Value, json};

/// `tui.js`'s `ROUTE_EVERY_MS`: how often the route is compared.
pub const ROUTE_EVERY_MS: u64 = 200;

/// `tui.js`'s `NEW`: the conversation reported on the home screen.
pub const NEW: &str = ding::providers::opencode::plugins::NEW_SESSION;

/// `CALL_RETRY_MS`, as `ding compile-agent opencode` writes it.
pub fn call_retry_ms() -> u64 {
    millis(CALL_RETRY)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// What the TUI shows (`api.route.current`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Home,
    Session(String),
}

/// A session's status as the TUI's state holds it
/// (`api.state.session.status(id)`), from the server's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Idle,
    Busy,
}

/// A server event as it reaches the TUI plugin (`api.event.on`).
#[derive(Clone, Debug)]
pub enum TuiEvent {
    Created(String),
    Status(String, Status),
    /// `session.idle`.
    Idle(String),
    PermissionAsked(String),
    PermissionReplied(String),
    /// `message.part.updated` of a text part: the user message was saved.
    PartText(String),
}

/// What the plugin does that the harness model carries out.
#[derive(Debug)]
pub enum Act {
    /// A call on the hook channel (`call("queue", ...)`): its answer is
    /// given back with [`TuiPlugin::answered`].
    Queue { payload: Value, call: u64 },
    /// A call nothing waits on (`note(event, payload)`).
    Note { event: &'static str, payload: Value },
    /// `send(conversation, delivery)`: on the home screen a session is
    /// created and shown first, then the text goes with `promptAsync`.
    Send {
        conversation: String,
        id: String,
        text: String,
    },
    /// `retry = setTimeout(..., CALL_RETRY_MS)`.
    RetryIn(u64),
}

/// `tui.js`'s state.
#[derive(Default)]
pub struct TuiPlugin {
    /// `handed`: deliveries sent whose prompt has not shown up, by id, in
    /// the order they were handed (a JavaScript `Map`).
    handed: Vec<(String, String)>,
    failed: Vec<String>,
    open: Option<u64>,
    offered: Option<String>,
    retry: bool,
    /// The conversation each `queue` call reported (the `now` its `then`
    /// closes over).
    reported: BTreeMap<u64, String>,
    /// The TUI's state (`api.state.session`): statuses, open permissions,
    /// known sessions.
    statuses: BTreeMap<String, Status>,
    permissions: BTreeMap<String, u32>,
    known: BTreeSet<String>,
}

impl TuiPlugin {
    /// `statusOf(shown())`, and the report `report()` makes.
    pub fn report(&self, route: &Route) -> Value {
        let (conversation, status) = match route {
            Route::Home => (NEW.to_string(), "idle"),
            Route::Session(id) => {
                let status = if self.permissions.get(id).copied().unwrap_or(0) > 0 {
                    "active"
                } else {
                    match self.statuses.get(id) {
                        None if self.known.contains(id) => "idle",
                        None => "unknown",
                        Some(Status::Idle) => "idle",
                        Some(Status::Busy) => "active",
                    }
                };
                (id.clone(), status)
            }
        };
        let queued: Vec<&String> = self.handed.iter().map(|(id, _)| id).collect();
        json!({"conversation": conversation, "status": status, "queued": queued, "failed": self.failed})
    }

    /// `offer()`: a new `queue` call unless one is open with this very
    /// report. `next_call` numbers it.
    pub fn offer(&mut self, route: &Route, next_call: &mut u64) -> Option<Act> {
        let now = self.report(route);
        let key = now.to_string();
        if self.open.is_some() && self.offered.as_ref() == Some(&key) {
            return None;
        }
        self.offered = Some(key);
        self.failed.clear();
        *next_call += 1;
        let call = *next_call;
        self.open = Some(call);
        let conversation = now["conversation"].as_str().unwrap_or(NEW).to_string();
        self.reported.insert(call, conversation);
        Some(Act::Queue { payload: now, call })
    }

    /// The retry's timer fired: `retry = null; offered = null; offer()`.
    pub fn retry_fired(&mut self, route: &Route, next_call: &mut u64) -> Option<Act> {
        self.retry = false;
        self.offered = None;
        self.offer(route, next_call)
    }

    /// `mine.then(async (got) => ...)` for the `queue` call `call`.
    pub fn answered(
        &mut self,
        call: u64,
        answer: Option<&HookAnswer>,
        route: &Route,
        next_call: &mut u64,
    ) -> Vec<Act> {
        let current = self.open == Some(call);
        if current {
            self.open = None;
        }
        let conversation = self.reported.remove(&call).unwrap_or_else(|| NEW.into());
        let Some(answer) = answer else {
            // No adapter (yet): ask again in a moment, if nothing newer did.
            if current && !self.retry {
                self.retry = true;
                return vec![Act::RetryIn(call_retry_ms())];
            }
            return Vec::new();
        };
        let stdout: Value = if answer.stdout.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&answer.stdout).unwrap_or(Value::Null)
        };
        let delivery = &stdout["queue"];
        let (Some(id), Some(text)) = (delivery["id"].as_str(), delivery["text"].as_str()) else {
            let ended = matches!(
                answer.parked,
                Some(ParkAnswer::Expired | ParkAnswer::Declined)
            );
            if ended && current {
                self.offered = None;
                return self.offer(route, next_call).into_iter().collect();
            }
            return Vec::new();
        };
        self.handed.push((id.to_string(), text.to_string()));
        vec![Act::Send {
            conversation,
            id: id.to_string(),
            text: text.to_string(),
        }]
    }

    /// `send()` is over (`ok`: the prompt call was taken): a refused one is
    /// said as failed; then `offered = null; offer()`.
    pub fn sent(&mut self, id: &str, ok: bool, route: &Route, next_call: &mut u64) -> Vec<Act> {
        if !ok {
            self.handed.retain(|(handed, _)| handed != id);
            self.failed.push(id.to_string());
        }
        self.offered = None;
        self.offer(route, next_call).into_iter().collect()
    }

    /// An event of OpenCode's reached the TUI: its state changes, and the
    /// plugin's handlers run (`api.event.on(...)`).
    pub fn heard(&mut self, event: TuiEvent, route: &Route, next_call: &mut u64) -> Vec<Act> {
        let mut acts = Vec::new();
        match event {
            TuiEvent::Created(id) => {
                self.known.insert(id);
            }
            TuiEvent::Status(id, status) => {
                self.known.insert(id.clone());
                self.statuses.insert(id.clone(), status);
                let word = match status {
                    Status::Idle => "idle",
                    Status::Busy => "busy",
                };
                acts.extend(self.relay(
                    "session.status",
                    json!({"sessionID": id, "status": word}),
                    route,
                ));
                acts.extend(self.offer(route, next_call));
            }
            TuiEvent::Idle(id) => {
                self.statuses.insert(id.clone(), Status::Idle);
                acts.extend(self.relay(
                    "session.status",
                    json!({"sessionID": id, "status": "idle"}),
                    route,
                ));
                acts.extend(self.offer(route, next_call));
            }
            TuiEvent::PermissionAsked(id) => {
                *self.permissions.entry(id.clone()).or_default() += 1;
                acts.extend(self.relay("permission.asked", json!({"sessionID": id}), route));
                acts.extend(self.offer(route, next_call));
            }
            TuiEvent::PermissionReplied(id) => {
                let open = self.permissions.entry(id.clone()).or_default();
                *open = open.saturating_sub(1);
                acts.extend(self.relay("permission.replied", json!({"sessionID": id}), route));
                acts.extend(self.offer(route, next_call));
            }
            TuiEvent::PartText(text) => acts.extend(self.part_saved(&text, route, next_call)),
        }
        acts
    }

    /// `message.part.updated` of a text part: `started(part.text)` and
    /// `offer()`, while a delivery is handed.
    fn part_saved(&mut self, text: &str, route: &Route, next_call: &mut u64) -> Option<Act> {
        if self.handed.is_empty() {
            return None;
        }
        self.handed.retain(|(_, sent)| sent != text);
        self.offer(route, next_call)
    }

    /// The route `watch` saw a change: `offer()`.
    pub fn route_changed(&mut self, route: &Route, next_call: &mut u64) -> Option<Act> {
        self.offer(route, next_call)
    }

    /// `relay(event, payload)`: an event of a session the TUI does not
    /// show is not said.
    fn relay(&self, event: &'static str, payload: Value, route: &Route) -> Option<Act> {
        let shown = match route {
            Route::Home => NEW,
            Route::Session(id) => id.as_str(),
        };
        if payload["sessionID"].as_str().is_some_and(|id| id != shown) {
            return None;
        }
        Some(Act::Note { event, payload })
    }
}

/// `server.js`'s payload for `chat.message` (`text` given, and `queued`:
/// its `busy` set, from the sessions' own `session.status` events, holds
/// the session) and the tool hooks (`tool` given): the session, its parent
/// (none: the model runs no subagent), and the prompt's own text or the
/// tool.
pub fn server_payload(session: &str, text: Option<(&str, bool)>, tool: Option<&str>) -> Value {
    let mut payload = json!({"sessionID": session, "parentID": Value::Null});
    if let Some((text, queued)) = text {
        payload["text"] = text.into();
        payload["queued"] = queued.into();
    }
    if let Some(tool) = tool {
        payload["tool"] = tool.into();
    }
    payload
}

/// `server.js`'s `context(got)`: the text an answer adds (to the prompt's
/// parts, or appended to the tool's output), if any.
pub fn context(answer: Option<&HookAnswer>) -> Option<String> {
    let answer = answer?;
    let stdout: Value = serde_json::from_str(answer.stdout.trim()).ok()?;
    stdout["context"]
        .as_str()
        .filter(|text| !text.is_empty())
        .map(str::to_string)
}
