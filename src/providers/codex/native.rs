//! The native idle path, the launcher's half: a state machine from what
//! Codex's app-server says (replies, notifications) and what the adapter
//! answers (a delivery to queue) to what the launcher does (RPC requests,
//! calls on the hook channel). Time is passed in and nothing here does
//! I/O, so every rule is tested without Codex (`launch.rs` does the I/O).
//!
//! The launcher is a second client of the app-server the TUI uses. It:
//!
//! 1. `initialize`s with `experimentalApi` (the queue methods need it),
//!    reads `hooks/list` (are DING's hooks there and trusted?), finds the
//!    TUI's thread (`thread/loaded/list`, then every non-ephemeral
//!    `thread/started`: `/clear` starts a new one), and checks that
//!    `thread/queue/list` answers;
//! 2. tells the adapter, in a `queue` call on the hook channel, the
//!    thread's status and which of DING's deliveries wait in its queue. The
//!    adapter parks that call while the thread is idle and nothing of
//!    DING's waits (the same test, [`QueueReport::may_deliver`], on both
//!    sides), so it holds the terminal; once work is pending it claims it
//!    and answers with the text;
//! 3. queues that text with `thread/queue/add` under its own
//!    `clientUserMessageId`: Codex starts the turn when the thread is idle
//!    and never steers it into a running one; `UserPromptSubmit` then
//!    carries exactly that text (the adapter's receipt);
//! 4. calls again whenever what it reports changes, and when the answer
//!    says the parked call expired (`parked: expired`) while it could still
//!    deliver; a call declined or replaced waits for the next change;
//! 5. resumes the queue (`thread/queue/start`) when a delivery of DING's
//!    still waits after the thread has been idle for [`RESUME_AFTER`]:
//!    Esc and a denied approval pause Codex's queue silently;
//! 6. when the thread changes, deletes DING's items from the old one (the
//!    adapter reports `clear`, so their files are pending again), and on
//!    exit deletes what is left (the queue is persisted per thread).
//!
//! Any RPC failure before the path is ready (an older or newer Codex, the
//! experimental API refused) makes it [`Action::Unavailable`]: the launcher
//! then says why and never parks, and idle work takes the terminal path.

use serde_json::{Value, json};
use std::collections::HashMap;

use super::launcher_wire::{ListedHook, QueueAnswer, QueueReport};
use super::rpc::{self, Incoming};
use super::timing::{CALL_RETRY, RESUME_AFTER, SERVER_RESTARTS};
use super::trust::is_ours;
use crate::adapter::{HookAnswer, ParkAnswer};
use crate::core::time::Time;

/// The prefix of DING's `clientUserMessageId`s.
pub const ID_PREFIX: &str = "ding-";

/// What the launcher does when the app-server died under the TUI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Start it again on the same socket: the TUI reconnects to it.
    Restart,
    /// End the TUI (the harness exits), saying why.
    EndTheTui(String),
}

/// The launcher's choice once its app-server is gone (`why`), the thread
/// having had a turn or not, after `restarts` restarts already. Only a
/// thread with a turn has a rollout a new app-server can load: a fresh one
/// stays read-only for good (findings §12), and so does a TUI whose server
/// keeps dying.
pub fn after_server_lost(why: &str, had_turn: bool, restarts: u32, most: u32) -> Recovery {
    if !had_turn {
        return Recovery::EndTheTui(format!(
            "{why}; the conversation had no turn yet, so no new app-server can resume it: ending the TUI"
        ));
    }
    if restarts >= most {
        return Recovery::EndTheTui(format!(
            "{why}; it was started again {restarts} times already: ending the TUI"
        ));
    }
    Recovery::Restart
}

/// What the launcher does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send this line to the app-server.
    Send(String),
    /// Make a `queue` call on the hook channel with this report; `call`
    /// numbers it.
    Call { call: u64, report: QueueReport },
    /// The native path cannot work here: say why, and stop.
    Unavailable(String),
    /// The app-server died under the TUI: say so to the adapter (`why`),
    /// then start it again on the same socket and, once it listens,
    /// connect and hand over [`Native::reconnected`]'s actions (`restart`),
    /// or end the TUI (see [`after_server_lost`]).
    ServerLost { why: String, restart: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Purpose {
    Initialize,
    HooksList,
    LoadedList,
    Probe,
    /// `thread/queue/add` of the delivery with this `clientUserMessageId`.
    Add(String),
    List,
    Start,
    Delete,
}

/// A delivery of DING's in Codex's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Queued {
    client_id: String,
    /// Codex's id for it, once `thread/queue/add` answered.
    server_id: Option<String>,
}

/// The launcher's side of the native idle path (see the module docs).
#[derive(Debug)]
pub struct Native {
    cwd: String,
    thread: Option<String>,
    status: String,
    idle_since: Option<Time>,
    resumed: bool,
    ours: Vec<Queued>,
    failed: Vec<String>,
    hooks: Option<Vec<ListedHook>>,
    ready: bool,
    stopped: bool,
    pending: HashMap<u64, Purpose>,
    next_id: u64,
    call: u64,
    /// The report of the newest call, while it may still be open.
    reported: Option<QueueReport>,
    retry_at: Option<Time>,
    /// The thread has run a turn: it has a rollout a restarted app-server
    /// can load.
    had_turn: bool,
    /// How many times the app-server was started again.
    restarts: u32,
}

impl Native {
    /// Starts the conversation with the app-server; `cwd` is the project
    /// (for `hooks/list`).
    pub fn start(cwd: &str) -> (Native, Vec<Action>) {
        let mut native = Native::fresh(cwd);
        let actions = native.initialize();
        (native, actions)
    }

    /// The state of a conversation with an app-server that has not begun.
    fn fresh(cwd: &str) -> Native {
        Native {
            cwd: cwd.to_string(),
            thread: None,
            status: "unknown".into(),
            idle_since: None,
            resumed: false,
            ours: Vec::new(),
            failed: Vec::new(),
            hooks: None,
            ready: false,
            stopped: false,
            pending: HashMap::new(),
            next_id: 1,
            call: 0,
            reported: None,
            retry_at: None,
            had_turn: false,
            restarts: 0,
        }
    }

    fn initialize(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        self.request(
            &mut actions,
            Purpose::Initialize,
            "initialize",
            json!({
                "clientInfo": {"name": "ding", "version": env!("CARGO_PKG_VERSION")},
                "capabilities": {"experimentalApi": true},
            }),
        );
        actions
    }

    /// The connection to the app-server closed (`why`: how it ended). A
    /// thread with a turn gets a new app-server, at most
    /// [`SERVER_RESTARTS`] times; else the TUI is ended and the path stops.
    /// Either way nothing is asked of, or reported about, the old one.
    pub fn on_closed(&mut self, why: &str) -> Vec<Action> {
        if self.stopped {
            return Vec::new();
        }
        match after_server_lost(why, self.had_turn, self.restarts, SERVER_RESTARTS) {
            Recovery::Restart => {
                // What the old server was asked or told is void; DING's
                // deliveries still in its queue are found again when the
                // new one lists it. The thread's past, the restarts, and
                // the numbering of requests and calls carry on.
                *self = Native {
                    had_turn: self.had_turn,
                    restarts: self.restarts + 1,
                    next_id: self.next_id,
                    call: self.call,
                    ..Native::fresh(&self.cwd)
                };
                vec![Action::ServerLost {
                    why: format!(
                        "{why}; starting it again ({} of {SERVER_RESTARTS})",
                        self.restarts
                    ),
                    restart: true,
                }]
            }
            Recovery::EndTheTui(why) => {
                self.stopped = true;
                vec![Action::ServerLost {
                    why,
                    restart: false,
                }]
            }
        }
    }

    /// The new app-server listens and the launcher is connected to it:
    /// the conversation starts again (the TUI's thread is found once the
    /// TUI has reconnected).
    pub fn reconnected(&mut self) -> Vec<Action> {
        if self.stopped {
            return Vec::new();
        }
        self.initialize()
    }

    /// The thread the TUI shows, once known.
    pub fn thread(&self) -> Option<&str> {
        self.thread.as_deref()
    }

    fn request(
        &mut self,
        actions: &mut Vec<Action>,
        purpose: Purpose,
        method: &str,
        params: Value,
    ) {
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(id, purpose);
        actions.push(Action::Send(rpc::request(id, method, params)));
    }

    fn fail(&mut self, actions: &mut Vec<Action>, why: String) {
        if !self.stopped {
            self.stopped = true;
            actions.push(Action::Unavailable(why));
        }
    }

    /// One message from the app-server.
    pub fn on_message(&mut self, text: &str, now: Time) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.stopped {
            return actions;
        }
        match rpc::classify(text) {
            Some(Incoming::Reply { id, result }) => {
                if let Some(purpose) = self.pending.remove(&id) {
                    self.on_reply(purpose, result, now, &mut actions);
                }
            }
            Some(Incoming::Notification { method, params }) => {
                self.on_notification(&method, &params, now, &mut actions)
            }
            // Never answered: approvals belong to the human at the TUI.
            Some(Incoming::Request { .. }) | None => {}
        }
        self.report(&mut actions);
        actions
    }

    fn on_reply(
        &mut self,
        purpose: Purpose,
        result: Result<Value, Value>,
        now: Time,
        actions: &mut Vec<Action>,
    ) {
        let result = match (purpose.clone(), result) {
            (_, Ok(result)) => result,
            (Purpose::Add(client_id), Err(_)) => return self.on_add_failed(&client_id),
            (Purpose::List | Purpose::Start | Purpose::Delete, Err(_)) => return,
            (_, Err(error)) => {
                let why = format!("{purpose:?}: {}", rpc::error_text(&error));
                return self.fail(actions, why);
            }
        };
        match purpose {
            Purpose::Initialize => {
                actions.push(Action::Send(rpc::notification("initialized")));
                let cwd = self.cwd.clone();
                self.request(
                    actions,
                    Purpose::HooksList,
                    "hooks/list",
                    json!({"cwds": [cwd]}),
                );
                self.request(
                    actions,
                    Purpose::LoadedList,
                    "thread/loaded/list",
                    json!({}),
                );
            }
            Purpose::HooksList => self.hooks = Some(ours_listed(&result)),
            Purpose::LoadedList => {
                let first = result["data"].as_array().and_then(|ids| ids.first());
                if self.thread.is_none()
                    && let Some(id) = first.and_then(Value::as_str)
                {
                    self.thread = Some(id.to_string());
                    self.set_status("idle", now);
                    self.probe(actions);
                }
            }
            Purpose::Probe => {
                // DING's deliveries already in the queue (an app-server
                // started again after the last one died: the queue is kept
                // per thread) are this launcher's to watch and report.
                self.ours.extend(ours_queued(&result));
                self.ready = true;
            }
            Purpose::Add(client_id) => {
                if let Some(queued) = self
                    .ours
                    .iter_mut()
                    .find(|queued| queued.client_id == client_id)
                {
                    queued.server_id = result["queuedSubmission"]["id"].as_str().map(String::from);
                }
            }
            Purpose::List => {
                let listed: Vec<&str> = result["data"]
                    .as_array()
                    .map(|items| {
                        items
                            .iter()
                            .filter_map(|item| item["clientUserMessageId"].as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                // Gone from the queue: its turn started (or it was deleted).
                self.ours.retain(|queued| {
                    queued.server_id.is_none() || listed.contains(&queued.client_id.as_str())
                });
            }
            Purpose::Start => self.list(actions),
            Purpose::Delete => {}
        }
    }

    fn on_add_failed(&mut self, client_id: &str) {
        self.ours.retain(|queued| queued.client_id != client_id);
        self.failed.push(client_id.to_string());
    }

    fn probe(&mut self, actions: &mut Vec<Action>) {
        if let Some(thread) = self.thread.clone() {
            self.request(
                actions,
                Purpose::Probe,
                "thread/queue/list",
                json!({"threadId": thread}),
            );
        }
    }

    fn list(&mut self, actions: &mut Vec<Action>) {
        if let Some(thread) = self.thread.clone() {
            self.request(
                actions,
                Purpose::List,
                "thread/queue/list",
                json!({"threadId": thread}),
            );
        }
    }

    /// Whether the thread has run a turn (see [`after_server_lost`]).
    pub fn had_turn(&self) -> bool {
        self.had_turn
    }

    fn set_status(&mut self, status: &str, now: Time) {
        self.had_turn |= status == "active";
        if status != self.status {
            self.status = status.to_string();
            self.idle_since = (status == "idle").then_some(now);
            self.resumed = false;
        }
    }

    fn on_notification(
        &mut self,
        method: &str,
        params: &Value,
        now: Time,
        actions: &mut Vec<Action>,
    ) {
        match method {
            "thread/started" => {
                let thread = &params["thread"];
                let real = thread["ephemeral"] != true && thread["parentThreadId"].is_null();
                let Some(id) = thread["id"].as_str().filter(|_| real) else {
                    return;
                };
                if self.thread.as_deref() == Some(id) {
                    return;
                }
                // A new thread in the TUI (`/clear`): DING's items in the old
                // one would never be seen; the adapter reports `clear`.
                let old = self.thread.replace(id.to_string());
                if let Some(old) = old {
                    for queued in std::mem::take(&mut self.ours) {
                        if let Some(server_id) = queued.server_id {
                            self.request(
                                actions,
                                Purpose::Delete,
                                "thread/queue/delete",
                                json!({"threadId": old, "queuedSubmissionId": server_id}),
                            );
                        }
                    }
                }
                self.status = String::new();
                self.set_status("idle", now);
                if !self.ready {
                    self.probe(actions);
                }
            }
            // A thread none was loaded for when asked: an app-server
            // started again loads the TUI's thread only once the TUI has
            // reconnected (findings §12). Ask again which it is, each time
            // (an answer asked for just before would not say).
            "thread/status/changed" if self.thread.is_none() => {
                self.request(
                    actions,
                    Purpose::LoadedList,
                    "thread/loaded/list",
                    json!({}),
                );
            }
            "thread/status/changed" if params["threadId"].as_str() == self.thread.as_deref() => {
                let status = params["status"]["type"].as_str().unwrap_or("unknown");
                self.set_status(status, now);
                // A turn started or ended: was it one of DING's? (Codex
                // does not always say `thread/queue/changed` when a queued
                // item starts.)
                if !self.ours.is_empty() {
                    self.list(actions);
                }
            }
            "thread/queue/changed"
                if params["threadId"].as_str() == self.thread.as_deref()
                    && !self.ours.is_empty() =>
            {
                self.list(actions);
            }
            _ => {}
        }
    }

    /// What the launcher tells the adapter now.
    fn current_report(&self) -> QueueReport {
        QueueReport {
            thread_id: self.thread.clone(),
            status: self.status.clone(),
            queued: self
                .ours
                .iter()
                .map(|queued| queued.client_id.clone())
                .collect(),
            failed: self.failed.clone(),
            hooks: None,
        }
    }

    /// Calls the adapter again if what it would be told changed.
    fn report(&mut self, actions: &mut Vec<Action>) {
        if !self.ready || self.stopped {
            return;
        }
        let report = self.current_report();
        if self.reported.as_ref() == Some(&report) {
            return;
        }
        self.call_now(actions, report);
    }

    fn call_now(&mut self, actions: &mut Vec<Action>, report: QueueReport) {
        self.call += 1;
        self.reported = Some(report.clone());
        self.failed.clear();
        self.retry_at = None;
        actions.push(Action::Call {
            call: self.call,
            report: QueueReport {
                // Codex's list of hooks goes with the first call only.
                hooks: self.hooks.take(),
                ..report
            },
        });
    }

    /// The adapter answered call `call`, or could not be reached (`None`).
    pub fn on_answer(&mut self, call: u64, answer: Option<&HookAnswer>, now: Time) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.stopped {
            return actions;
        }
        if let Some(delivery) = answer.and_then(QueueAnswer::read) {
            // Whichever call it answers: its files are claimed for it.
            let (id, text) = (delivery.id, delivery.text);
            match self.thread.clone() {
                Some(thread) if id.starts_with(ID_PREFIX) && !text.is_empty() => {
                    self.ours.push(Queued {
                        client_id: id.clone(),
                        server_id: None,
                    });
                    self.request(
                        &mut actions,
                        Purpose::Add(id.clone()),
                        "thread/queue/add",
                        json!({
                            "threadId": thread,
                            "clientUserMessageId": id,
                            "input": [{"type": "text", "text": text, "text_elements": []}],
                        }),
                    );
                }
                _ => self.failed.push(id),
            }
        } else if call == self.call {
            match answer.map(|answer| answer.parked) {
                // Unreachable: try again shortly with the same report.
                None => self.retry_at = Some(now + CALL_RETRY),
                // Parked, then expired, with the offer still good: make it
                // again. Declined or replaced: wait for the report to change.
                Some(Some(ParkAnswer::Expired)) if self.may_deliver() => {
                    if let Some(report) = self.reported.clone() {
                        self.call_now(&mut actions, report);
                    }
                }
                // A hook said a turn runs: the thread is not idle, whatever
                // the notifications said last (an Esc and a prompt at once
                // can report the interrupt's idle after the new turn's
                // start). Taken as said (nothing to call about), so that
                // its next idle is a change and is reported.
                Some(Some(ParkAnswer::Declined)) => {
                    self.set_status("active", now);
                    if let Some(reported) = self.reported.as_mut() {
                        reported.status = self.status.clone();
                    }
                }
                Some(_) => {}
            }
        }
        self.report(&mut actions);
        actions
    }

    fn may_deliver(&self) -> bool {
        self.reported.as_ref().is_some_and(QueueReport::may_deliver)
    }

    /// When [`Native::on_time`] next has something to do.
    pub fn next_deadline(&self) -> Option<Time> {
        let resume = (!self.resumed && !self.ours.is_empty())
            .then_some(self.idle_since)
            .flatten()
            .map(|since| since + RESUME_AFTER);
        [self.retry_at, resume].into_iter().flatten().min()
    }

    /// Time passed: a retry of an unreachable adapter, or a paused queue
    /// to resume.
    pub fn on_time(&mut self, now: Time) -> Vec<Action> {
        let mut actions = Vec::new();
        if self.stopped || !self.ready {
            return actions;
        }
        if self.retry_at.is_some_and(|at| at <= now)
            && let Some(report) = self.reported.clone()
        {
            self.call_now(&mut actions, report);
        }
        let paused = !self.resumed
            && !self.ours.is_empty()
            && self
                .idle_since
                .is_some_and(|since| now >= since + RESUME_AFTER);
        if paused && let Some(thread) = self.thread.clone() {
            self.resumed = true;
            self.request(
                &mut actions,
                Purpose::Start,
                "thread/queue/start",
                json!({"threadId": thread}),
            );
        }
        actions
    }

    /// Whether every request sent has been answered.
    pub fn settled(&self) -> bool {
        self.pending.is_empty()
    }

    /// The requests that delete what is left of DING's in the queue (on
    /// exit).
    pub fn leftovers(&mut self) -> Vec<Action> {
        let mut actions = Vec::new();
        let Some(thread) = self.thread.clone() else {
            return actions;
        };
        for queued in std::mem::take(&mut self.ours) {
            if let Some(server_id) = queued.server_id {
                self.request(
                    &mut actions,
                    Purpose::Delete,
                    "thread/queue/delete",
                    json!({"threadId": thread, "queuedSubmissionId": server_id}),
                );
            }
        }
        actions
    }
}

/// DING's deliveries in a `thread/queue/list` answer.
fn ours_queued(result: &Value) -> Vec<Queued> {
    result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let client_id = item["clientUserMessageId"].as_str()?;
            client_id.starts_with(ID_PREFIX).then(|| Queued {
                client_id: client_id.to_string(),
                server_id: item["id"].as_str().map(String::from),
            })
        })
        .collect()
}

/// DING's hooks in a `hooks/list` answer.
fn ours_listed(result: &Value) -> Vec<ListedHook> {
    result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|cwd| cwd["hooks"].as_array().into_iter().flatten())
        .filter(|hook| hook["command"].as_str().is_some_and(is_ours))
        .map(|hook| {
            let event = hook["eventName"].as_str().unwrap_or_default();
            let mut chars = event.chars();
            let event: String = chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default();
            ListedHook {
                event,
                trust: hook["trustStatus"].as_str().map(String::from),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const THREAD: &str = "01a2310a-e4c0-7121-8a70-bb02e3ab2163";

    fn sent(actions: &[Action]) -> Vec<Value> {
        actions
            .iter()
            .filter_map(|action| match action {
                Action::Send(line) => serde_json::from_str(line).ok(),
                _ => None,
            })
            .collect()
    }

    fn calls(actions: &[Action]) -> Vec<(u64, Value)> {
        actions
            .iter()
            .filter_map(|action| match action {
                Action::Call { call, report } => Some((*call, report.to_payload())),
                _ => None,
            })
            .collect()
    }

    /// An answer printing `value`, as the adapter renders a delivery.
    fn printed(value: &Value) -> HookAnswer {
        HookAnswer {
            stdout: format!("{value}\n"),
            parked: Some(ParkAnswer::Delivered),
            ..HookAnswer::default()
        }
    }

    /// A parked call's answer with nothing, saying why.
    fn ended(why: ParkAnswer) -> HookAnswer {
        HookAnswer {
            parked: Some(why),
            ..HookAnswer::default()
        }
    }

    fn reply(id: &Value, result: Value) -> String {
        json!({"id": id, "result": result}).to_string()
    }

    fn status(kind: &str) -> String {
        json!({"method": "thread/status/changed", "params": {"threadId": THREAD, "status": {"type": kind, "activeFlags": []}}}).to_string()
    }

    /// Started and initialized: the requests that follow (`initialized`,
    /// `hooks/list`, `thread/loaded/list`).
    fn initialized(now: Time) -> (Native, Vec<Value>) {
        let (mut native, actions) = Native::start("/srv/project");
        let init = &sent(&actions)[0];
        let requests = sent(&native.on_message(&reply(&init["id"], json!({})), now));
        (native, requests)
    }

    /// Up to the first call: initialize, hooks, the thread, the probe.
    fn ready(now: Time) -> (Native, u64) {
        let (mut native, actions) = Native::start("/srv/project");
        let init = &sent(&actions)[0];
        assert_eq!(init["params"]["capabilities"]["experimentalApi"], true);
        let actions = native.on_message(&reply(&init["id"], json!({})), now);
        let requests = sent(&actions);
        assert_eq!(requests[0]["method"], "initialized");
        assert_eq!(requests[1]["method"], "hooks/list");
        let hooks = json!({"data": [{"hooks": [
            {"eventName": "stop", "command": "ding hook codex Stop", "trustStatus": "trusted"},
            {"eventName": "stop", "command": "notify-send", "trustStatus": "untrusted"}
        ]}]});
        native.on_message(&reply(&requests[1]["id"], hooks), now);
        // No thread yet: the TUI's comes with thread/started; a title
        // thread (ephemeral) is not it.
        native.on_message(&reply(&requests[2]["id"], json!({"data": []})), now);
        let title = json!({"method": "thread/started", "params": {"thread": {"id": "title", "ephemeral": true}}});
        assert!(native.on_message(&title.to_string(), now).is_empty());
        let started = json!({"method": "thread/started", "params": {"thread": {"id": THREAD, "ephemeral": false, "parentThreadId": null}}});
        let probe = sent(&native.on_message(&started.to_string(), now));
        assert_eq!(probe[0]["method"], "thread/queue/list");
        let actions = native.on_message(&reply(&probe[0]["id"], json!({"data": []})), now);
        let calls = calls(&actions);
        assert_eq!(calls.len(), 1, "{actions:?}");
        let (call, payload) = &calls[0];
        assert_eq!(payload["threadId"], THREAD);
        assert_eq!(payload["status"], "idle");
        assert_eq!(
            payload["hooks"],
            json!([{"event": "Stop", "trust": "trusted"}])
        );
        (native, *call)
    }

    fn deliver(native: &mut Native, call: u64, now: Time) -> Value {
        let answer = printed(&json!({"queue": {"id": "ding-7-1", "text": "[ding] 1 unread"}}));
        let actions = native.on_answer(call, Some(&answer), now);
        let add = sent(&actions).remove(0);
        assert_eq!(add["method"], "thread/queue/add");
        assert_eq!(add["params"]["clientUserMessageId"], "ding-7-1");
        assert_eq!(add["params"]["input"][0]["text"], "[ding] 1 unread");
        let report = calls(&actions);
        assert_eq!(
            report[0].1["queued"],
            json!(["ding-7-1"]),
            "no second delivery now"
        );
        native.on_message(
            &reply(&add["id"], json!({"queuedSubmission": {"id": "q1"}})),
            now,
        );
        add
    }

    #[test]
    fn a_delivery_is_queued_with_its_exact_text_and_forgotten_once_its_turn_started() {
        let now = Time::from_millis(1_000);
        let (mut native, call) = ready(now);
        deliver(&mut native, call, now);
        let list = sent(&native.on_message(&status("active"), now));
        assert_eq!(list[0]["method"], "thread/queue/list");
        let actions = native.on_message(&reply(&list[0]["id"], json!({"data": []})), now);
        let (_, payload) = calls(&actions).pop().expect("a new report");
        assert_eq!(
            (payload["status"].as_str(), payload["queued"].clone()),
            (Some("active"), json!([]))
        );
        // A server request (an approval) is never answered.
        let approval =
            json!({"id": "s1", "method": "item/commandExecution/requestApproval", "params": {}});
        assert!(sent(&native.on_message(&approval.to_string(), now)).is_empty());
        assert_eq!(native.next_deadline(), None, "nothing to wait for");
    }

    #[test]
    fn a_paused_queue_is_resumed_once_after_the_thread_stayed_idle() {
        let now = Time::from_millis(1_000);
        let (mut native, call) = ready(now);
        deliver(&mut native, call, now);
        // Esc: the thread turns idle with DING's item still queued (paused).
        native.on_message(&status("active"), now);
        let list = sent(&native.on_message(&status("idle"), now));
        let listed = json!({"data": [{"id": "q1", "clientUserMessageId": "ding-7-1"}]});
        native.on_message(&reply(&list[0]["id"], listed), now);
        assert_eq!(native.next_deadline(), Some(now + RESUME_AFTER));
        assert!(native.on_time(now + RESUME_AFTER / 2).is_empty());
        let start = sent(&native.on_time(now + RESUME_AFTER));
        assert_eq!(start[0]["method"], "thread/queue/start");
        assert_eq!(start[0]["params"]["threadId"], THREAD);
        assert!(
            native.on_time(now + RESUME_AFTER * 3).is_empty(),
            "once per idle spell"
        );
    }

    #[test]
    fn a_new_thread_deletes_what_waited_in_the_old_one_and_is_reported() {
        let now = Time::from_millis(1_000);
        let (mut native, call) = ready(now);
        deliver(&mut native, call, now);
        let cleared = json!({"method": "thread/started", "params": {"thread": {"id": "new", "ephemeral": false, "parentThreadId": null}}});
        let actions = native.on_message(&cleared.to_string(), now);
        let delete = &sent(&actions)[0];
        assert_eq!(delete["method"], "thread/queue/delete");
        assert_eq!(
            delete["params"],
            json!({"threadId": THREAD, "queuedSubmissionId": "q1"})
        );
        let (_, payload) = calls(&actions).pop().expect("reported");
        assert_eq!(payload["threadId"], "new");
        assert_eq!(payload["queued"], json!([]));
        assert_eq!(native.thread(), Some("new"));
    }

    #[test]
    fn a_failed_add_is_reported_once_and_leftovers_are_deleted_on_exit() {
        let now = Time::from_millis(1_000);
        let (mut native, call) = ready(now);
        let answer = printed(&json!({"queue": {"id": "ding-7-1", "text": "t"}}));
        let add = sent(&native.on_answer(call, Some(&answer), now)).remove(0);
        let refused =
            json!({"id": add["id"], "error": {"code": -32600, "message": "no"}}).to_string();
        let (_, payload) = calls(&native.on_message(&refused, now))
            .pop()
            .expect("reported");
        assert_eq!(payload["failed"], json!(["ding-7-1"]));
        assert_eq!(payload["queued"], json!([]));
        let call = native.call;
        deliver(&mut native, call, now);
        let delete = sent(&native.leftovers());
        assert_eq!(delete[0]["params"]["queuedSubmissionId"], "q1");
        assert!(native.leftovers().is_empty());
    }

    #[test]
    fn a_call_is_offered_again_only_when_its_answer_says_it_expired() {
        let now = Time::from_millis(1_000);
        let (mut native, call) = ready(now);
        // Declined (a turn started, the hooks said), replaced, or answered
        // with nothing at all: wait for the report to change, however long
        // the call was open.
        let later = now + Duration::from_secs(3_600);
        for answer in [
            ended(ParkAnswer::Declined),
            ended(ParkAnswer::Replaced),
            HookAnswer::default(),
        ] {
            assert!(calls(&native.on_answer(call, Some(&answer), later)).is_empty());
        }
        // Declined because a turn runs: the thread's next idle is a
        // change, even when the notifications last said idle (an Esc and a
        // prompt at once).
        let idle_again = calls(&native.on_message(&status("idle"), later));
        assert_eq!(idle_again.len(), 1, "called again once idle");
        let call = idle_again[0].0;
        // Expired, the offer still good: made again, at once.
        let again = calls(&native.on_answer(call, Some(&ended(ParkAnswer::Expired)), now));
        assert_eq!(again.len(), 1);
        // The adapter unreachable: retry shortly with the same report.
        let current = again[0].0;
        assert!(native.on_answer(current, None, now).is_empty());
        assert_eq!(native.next_deadline(), Some(now + CALL_RETRY));
        assert_eq!(calls(&native.on_time(now + CALL_RETRY)).len(), 1);
        // An answer to an older call changes nothing.
        let expired = ended(ParkAnswer::Expired);
        assert!(native.on_answer(call, Some(&expired), later).is_empty());
    }

    #[test]
    fn a_server_lost_under_a_thread_with_a_turn_is_started_again_a_few_times() {
        let why = "the app-server exited (signal: 9)";
        assert_eq!(after_server_lost(why, true, 0, 3), Recovery::Restart);
        assert_eq!(after_server_lost(why, true, 2, 3), Recovery::Restart);
        let Recovery::EndTheTui(said) = after_server_lost(why, true, 3, 3) else {
            panic!("gives up");
        };
        assert!(said.starts_with(why) && said.contains("3 times"), "{said}");
        let Recovery::EndTheTui(said) = after_server_lost(why, false, 0, 3) else {
            panic!("a fresh thread cannot be resumed");
        };
        assert!(said.contains("no turn yet"), "{said}");
    }

    /// The native path decides what a lost app-server means: a thread
    /// with a turn gets a new one (its conversation starts again from
    /// `initialize` once connected), a few times; then, or for a fresh
    /// thread, the TUI is ended, and nothing more is asked or said.
    #[test]
    fn a_lost_server_is_replaced_while_the_thread_can_resume_and_the_tui_ended_after() {
        let now = Time::from_millis(1_000);
        let lost = |native: &mut Native| match native.on_closed("exited (signal: 9)").as_slice() {
            [Action::ServerLost { why, restart }] => (why.clone(), *restart),
            other => panic!("{other:?}"),
        };
        let (mut fresh, _) = ready(now);
        let (why, restart) = lost(&mut fresh);
        assert!(!restart && why.contains("no turn yet"), "{why}");
        assert!(fresh.on_closed("again").is_empty(), "stopped for good");
        assert!(fresh.on_time(now + RESUME_AFTER).is_empty());

        let (mut native, _) = ready(now);
        native.on_message(&status("active"), now);
        native.on_message(&status("idle"), now);
        for restarts in 1..=SERVER_RESTARTS {
            let (why, restart) = lost(&mut native);
            assert!(restart, "restart {restarts}: {why}");
            assert!(
                why.contains(&format!("({restarts} of {SERVER_RESTARTS})")),
                "{why}"
            );
            // Nothing is reported of the old server's thread meanwhile.
            assert!(calls(&native.on_message(&status("idle"), now)).is_empty());
            let again = sent(&native.reconnected());
            assert_eq!(again[0]["method"], "initialize");
        }
        let (why, restart) = lost(&mut native);
        assert!(!restart && why.contains("times"), "{why}");
        assert!(native.reconnected().is_empty());
    }

    #[test]
    fn a_thread_has_had_a_turn_once_it_was_active_and_a_new_server_s_queue_is_adopted() {
        let now = Time::from_millis(1_000);
        let (mut native, _) = ready(now);
        assert!(!native.had_turn());
        native.on_message(&status("active"), now);
        native.on_message(&status("idle"), now);
        assert!(native.had_turn());
        // A launcher started again finds DING's delivery still queued.
        let (mut native, requests) = initialized(now);
        let loaded = reply(&requests[2]["id"], json!({"data": [THREAD]}));
        let probe = sent(&native.on_message(&loaded, now)).remove(0);
        let listed = json!({"data": [
            {"id": "q7", "clientUserMessageId": "ding-41-3"},
            {"id": "q8", "clientUserMessageId": "someone-else"}
        ]});
        let (_, report) = calls(&native.on_message(&reply(&probe["id"], listed), now))
            .pop()
            .expect("the first call");
        assert_eq!(report["queued"], json!(["ding-41-3"]));
    }

    #[test]
    fn a_thread_loaded_only_after_the_start_is_found_when_it_changes() {
        let now = Time::from_millis(1_000);
        let (mut native, requests) = initialized(now);
        // A new app-server: the TUI has not reconnected yet.
        let none = reply(&requests[2]["id"], json!({"data": []}));
        assert!(native.on_message(&none, now).is_empty());
        // The TUI is back: its thread turns idle, and is asked for again.
        let asked = sent(&native.on_message(&status("idle"), now));
        assert_eq!(asked[0]["method"], "thread/loaded/list");
        let loaded = reply(&asked[0]["id"], json!({"data": [THREAD]}));
        let probe = sent(&native.on_message(&loaded, now));
        assert_eq!(probe[0]["method"], "thread/queue/list");
        assert_eq!(native.thread(), Some(THREAD));
        // Found: a change is no longer a question.
        assert!(sent(&native.on_message(&status("active"), now)).is_empty());
    }

    #[test]
    fn without_the_experimental_queue_the_native_path_is_unavailable() {
        let now = Time::from_millis(1_000);
        let (mut native, requests) = initialized(now);
        let loaded = reply(&requests[2]["id"], json!({"data": [THREAD]}));
        let probe = sent(&native.on_message(&loaded, now)).remove(0);
        let refused = json!({"id": probe["id"], "error": {"code": -32600, "message": "thread/queue/list requires experimentalApi capability"}});
        let actions = native.on_message(&refused.to_string(), now);
        assert!(
            matches!(&actions[..], [Action::Unavailable(why)] if why.contains("experimentalApi")),
            "{actions:?}"
        );
        let expired = ended(ParkAnswer::Expired);
        assert!(
            native.on_answer(1, Some(&expired), now).is_empty(),
            "stopped"
        );
    }
}
