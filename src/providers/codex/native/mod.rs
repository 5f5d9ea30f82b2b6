//! The native idle path, the launcher's half: a sans-IO machine from what
//! Codex's app-server says (replies, notifications, its connection and its
//! process ending) and what the adapter answers (a delivery to queue) to
//! what the launcher does (RPC requests, calls on the hook channel, an
//! app-server started again). Time is passed in and nothing here does
//! I/O, so every rule is tested without Codex; the launcher's poll loop
//! (`launch/shell.rs`) only moves bytes.
//!
//! The contract is the adapter machine's and the engine's: feed an
//! [`Input`] with [`QueuePath::handle_input`] (or the time with
//! [`QueuePath::handle_timeout`]), then drain [`QueuePath::poll_output`]
//! until it is empty, carrying out each [`Output`] in order, before the
//! next input; sleep until [`QueuePath::next_deadline`] (none: nothing to
//! wait for). Every output that asks for something names the input that
//! answers it.
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
//!    exit deletes what is left (the queue is persisted per thread);
//! 7. when the app-server dies under the TUI, says so to the adapter
//!    (`native-down`) and starts it again or ends the TUI
//!    ([`after_server_lost`]).
//!
//! Any RPC failure before the path is ready (an older or newer Codex, the
//! experimental API refused) turns it off: the launcher then says why
//! (`native-unavailable`) and never parks, and idle work takes the
//! terminal path.

mod conversation;
mod replies;
mod server;
mod timers;

use serde_json::{Value, json};
use std::collections::VecDeque;

use super::rpc::{self, Incoming};
use super::thread_status::ThreadStatus;
use super::timing::{
    CALL_RETRY, EXIT_GRACE, LAUNCH_CALL_TIMEOUT, LAUNCH_RETRY, LISTEN_DEADLINE, LISTEN_POLL,
    RESUME_AFTER, SERVER_GONE_WAIT, SERVER_RESTARTS,
};
use crate::adapter::native_idle::wire::{LaunchMode, LaunchReport, QueueAnswer, QueueReport};
use crate::adapter::{HookAnswer, ParkAnswer};
use crate::core::time::Time;
use conversation::{Conversation, Purpose};
pub use replies::ID_PREFIX;
use replies::{Queued, changed_status, listed_ids, ours_listed, ours_queued, started_thread};
use server::Link;
pub use server::{Recovery, after_server_lost};
pub use timers::Timer;
use timers::TimerTable;

/// What the launcher knows of its world that the machine needs to say why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Setup {
    /// The project (for `hooks/list`).
    pub cwd: String,
    /// The app-server's socket and its log, as paths are shown.
    pub socket: String,
    pub server_log: String,
}

/// Something that happened, with the time it was read.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// The connection asked for by [`Output::Connect`] is open (its
    /// WebSocket upgrade answered and checked).
    Connected,
    /// The connection asked for by [`Output::Connect`] could not be made
    /// (nothing listens yet, or the upgrade was refused): why.
    ConnectFailed(String),
    /// One text message from the app-server.
    Message(String),
    /// The connection to the app-server closed: how, as its transport said.
    Closed(String),
    /// The app-server process exited (`status`, as an exit status is
    /// shown), with the last error its log said, if any.
    ServerExited {
        status: String,
        last_error: Option<String>,
    },
    /// [`Output::StartServer`] started a new app-server.
    ServerStarted,
    /// [`Output::StartServer`] could not: why.
    ServerNotStarted(String),
    /// The adapter answered `queue` call `call`, or could not be reached
    /// (`None`: no channel, the connection failed, an unreadable answer).
    Answer {
        call: u64,
        answer: Option<HookAnswer>,
    },
    /// The `launch` call of [`Output::Tell`] found no adapter listening.
    TellUnreached(LaunchReport),
    /// The TUI exited (its status is the launcher's to keep).
    TuiExited,
}

/// What the launcher does next, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Connect to the app-server's socket and upgrade the connection to a
    /// WebSocket, replacing any old one: [`Input::Connected`] or
    /// [`Input::ConnectFailed`] answers it.
    Connect,
    /// Send this text message to the app-server.
    Send(String),
    /// Make `queue` call `call` on the hook channel with this report:
    /// [`Input::Answer`] answers it. No timer waits for it: the adapter
    /// answers a parked call at its hold (`QUEUE_HOLD`, with the call's
    /// own `QUEUE_CALL_TIMEOUT` said in it), and an adapter that dies
    /// closes the connection.
    Call { call: u64, report: QueueReport },
    /// Make a `launch` call with this report (answered at once; nothing is
    /// awaited but [`Input::TellUnreached`] when no adapter listens).
    Tell(LaunchReport),
    /// Start the app-server again on the same socket, ending the old one if
    /// it still runs: [`Input::ServerStarted`] or
    /// [`Input::ServerNotStarted`] answers it.
    StartServer,
    /// End the TUI (`SIGTERM`); [`Input::TuiExited`] follows.
    EndTui,
    /// A line for the launcher's log.
    Log(String),
}

/// The launcher's side of the native idle path (see the module docs).
#[derive(Debug)]
pub struct QueuePath {
    setup: Setup,
    link: Link,
    conv: Conversation,
    next_id: u64,
    call: u64,
    /// The thread has run a turn: it has a rollout a restarted app-server
    /// can load.
    had_turn: bool,
    /// How many times the app-server was started again.
    restarts: u32,
    /// How the app-server exited, once it has, while its connection was
    /// still open.
    exited: Option<String>,
    /// The newest `launch` report and when it was first offered.
    telling: Option<(LaunchReport, Time)>,
    /// Why the launcher ended the TUI, if it did.
    ended_tui: Option<String>,
    timers: TimerTable,
    outputs: VecDeque<Output>,
}

impl QueuePath {
    /// The path at `now`, asking first to connect to the app-server that
    /// the launcher started and saw listening.
    pub fn new(setup: Setup, _now: Time) -> QueuePath {
        let mut path = QueuePath {
            setup,
            link: Link::Connecting,
            conv: Conversation::default(),
            next_id: 1,
            call: 0,
            had_turn: false,
            restarts: 0,
            exited: None,
            telling: None,
            ended_tui: None,
            timers: TimerTable::default(),
            outputs: VecDeque::new(),
        };
        path.outputs.push_back(Output::Connect);
        path
    }

    /// The next thing to do, until `None`.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`QueuePath::handle_timeout`] next has something to do; `None`
    /// when nothing is awaited (no wake-up).
    pub fn next_deadline(&self) -> Option<Time> {
        self.timers.next()
    }

    /// Whether the launcher may exit: the TUI has gone and nothing more is
    /// awaited.
    pub fn is_done(&self) -> bool {
        self.link == Link::Done
    }

    /// Why the launcher ended the TUI, if it did: the launcher then exits
    /// with failure, and says why once the TUI has left the terminal.
    pub fn ended_tui(&self) -> Option<&str> {
        self.ended_tui.as_deref()
    }

    /// The thread the TUI shows, once known.
    pub fn thread(&self) -> Option<&str> {
        self.conv.thread.as_deref()
    }

    /// Whether the thread has run a turn (see [`after_server_lost`]).
    pub fn had_turn(&self) -> bool {
        self.had_turn
    }

    /// One input at `now`; its outputs wait in [`QueuePath::poll_output`].
    pub fn handle_input(&mut self, input: Input, now: Time) {
        match input {
            Input::Connected => self.on_connected(),
            Input::ConnectFailed(why) => self.on_connect_failed(why, now),
            Input::Message(text) => self.on_message(&text, now),
            Input::Closed(closed) => self.on_closed(closed, now),
            Input::ServerExited { status, last_error } => {
                self.on_server_exited(status, last_error, now)
            }
            Input::ServerStarted => self.try_listening(now),
            Input::ServerNotStarted(why) => self.restart_failed(&why, now),
            Input::Answer { call, answer } => self.on_answer(call, answer.as_ref(), now),
            Input::TellUnreached(report) => self.on_tell_unreached(report, now),
            Input::TuiExited => self.on_tui_exited(now),
        }
        self.after_input(now);
    }

    /// Time passed: whatever timer came by `now` (a timer that has not come
    /// yet does nothing, so an early wake-up is harmless).
    pub fn handle_timeout(&mut self, now: Time) {
        for timer in Timer::ALL {
            if !self.timers.take_expired(timer, now) {
                continue;
            }
            match timer {
                Timer::CallRetry => {
                    if let Some(report) = self.conv.reported.clone().filter(|_| self.reporting()) {
                        self.call_now(report);
                    }
                }
                Timer::Resume => self.resume(),
                Timer::ServerGone => {
                    if let Link::Lost { closed } = &self.link {
                        let closed = closed.clone();
                        self.server_lost("the app-server's connection closed", &closed, now);
                    }
                }
                Timer::Listen => self.try_listening(now),
                Timer::TellRetry => {
                    if let Some((report, _)) = &self.telling {
                        self.outputs.push_back(Output::Tell(report.clone()));
                    }
                }
                Timer::Exit => self.link = Link::Done,
            }
        }
        self.after_input(now);
    }

    /// After every input: the adapter is called again if what it would be
    /// told changed, and the resume timer follows the thread.
    fn after_input(&mut self, now: Time) {
        self.report();
        let resume = (self.reporting()
            && self.conv.thread.is_some()
            && !self.conv.resumed
            && !self.conv.ours.is_empty())
        .then_some(self.conv.idle_since)
        .flatten()
        .map(|since| (since + RESUME_AFTER).max(now));
        self.timers.set_or_stop(Timer::Resume, resume);
    }

    fn on_connected(&mut self) {
        match self.link {
            Link::Connecting | Link::Restarting { .. } => {
                self.link = Link::Open;
                self.timers.stop(Timer::Listen);
                self.initialize();
            }
            _ => {}
        }
    }

    /// Tries to connect to an app-server started again; a try that neither
    /// connects nor fails (an upgrade never answered) counts until the
    /// deadline, no longer.
    fn try_listening(&mut self, now: Time) {
        let Link::Restarting { until, .. } = self.link else {
            return;
        };
        if now >= until {
            let why = format!(
                "the app-server did not listen on {} within {LISTEN_DEADLINE:?}",
                self.setup.socket
            );
            return self.restart_failed(&why, now);
        }
        self.outputs.push_back(Output::Connect);
        self.timers.set(Timer::Listen, until);
    }

    fn on_connect_failed(&mut self, why: String, now: Time) {
        match &self.link {
            Link::Connecting => {
                self.outputs
                    .push_back(Output::Log(format!("no RPC connection: {why}")));
                self.tell(
                    LaunchMode::NativeUnavailable,
                    format!("connect to the app-server: {why}"),
                    now,
                );
                self.link = Link::Off;
            }
            // Not listening yet: looked at again shortly, and once more at
            // the deadline.
            Link::Restarting { until, .. } if now < *until => {
                let until = *until;
                self.timers
                    .set(Timer::Listen, (now + LISTEN_POLL).min(until));
            }
            Link::Restarting { .. } => {
                let why = format!(
                    "the app-server did not listen on {} within {LISTEN_DEADLINE:?} ({why})",
                    self.setup.socket
                );
                self.restart_failed(&why, now);
            }
            _ => {}
        }
    }

    fn on_closed(&mut self, closed: String, now: Time) {
        match self.link {
            Link::Open => match self.exited.take() {
                Some(status) => {
                    let ended = format!("the app-server exited ({status})");
                    self.server_lost(&ended, &closed, now);
                }
                None => {
                    // How it ended comes with its exit, a moment later.
                    self.link = Link::Lost { closed };
                    self.timers.set(Timer::ServerGone, now + SERVER_GONE_WAIT);
                }
            },
            Link::Exiting => self.link = Link::Done,
            _ => {}
        }
    }

    fn on_server_exited(&mut self, status: String, last_error: Option<String>, now: Time) {
        match &self.link {
            Link::Lost { closed } => {
                let closed = closed.clone();
                self.timers.stop(Timer::ServerGone);
                self.server_lost(&format!("the app-server exited ({status})"), &closed, now);
            }
            Link::Restarting { .. } => {
                let said = last_error.map_or(String::new(), |error| format!(": {error}"));
                let why = format!(
                    "the app-server exited before it listened ({status}){said} (log: {})",
                    self.setup.server_log
                );
                self.restart_failed(&why, now);
            }
            // Its connection closes next: the loss is decided then.
            Link::Open | Link::Connecting => self.exited = Some(status),
            _ => {}
        }
    }

    /// The app-server is gone (`ended`: how; `closed`: how its connection
    /// closed). A thread with a turn gets a new app-server, at most
    /// [`SERVER_RESTARTS`] times; else the TUI is ended and the path stops.
    /// Either way nothing is asked of, or reported about, the old one.
    fn server_lost(&mut self, ended: &str, closed: &str, now: Time) {
        let why = format!("{ended} ({closed})");
        self.timers.stop(Timer::CallRetry);
        match after_server_lost(&why, self.had_turn, self.restarts, SERVER_RESTARTS) {
            Recovery::Restart => {
                // What the old server was asked or told is void; DING's
                // deliveries still in its queue are found again when the
                // new one lists it. The thread's past, the restarts, and
                // the numbering of requests and calls carry on.
                self.conv = Conversation::default();
                self.restarts += 1;
                let why = format!(
                    "{why}; starting it again ({} of {SERVER_RESTARTS})",
                    self.restarts
                );
                self.outputs.push_back(Output::Log(why.clone()));
                self.tell(LaunchMode::NativeDown, why.clone(), now);
                self.link = Link::Restarting {
                    why,
                    until: now + LISTEN_DEADLINE,
                };
                self.outputs.push_back(Output::StartServer);
            }
            Recovery::EndTheTui(why) => self.end_the_tui(why, now),
        }
    }

    /// The app-server could not be started again (`err`): the path is down
    /// for good, and the TUI is ended.
    fn restart_failed(&mut self, err: &str, now: Time) {
        let Link::Restarting { why, .. } = &self.link else {
            return;
        };
        let why = why.clone();
        self.timers.stop(Timer::Listen);
        self.end_the_tui(
            format!("{why}, but it could not be: {err}; ending the TUI"),
            now,
        );
    }

    fn end_the_tui(&mut self, why: String, now: Time) {
        self.outputs.push_back(Output::Log(why.clone()));
        self.tell(LaunchMode::NativeDown, why.clone(), now);
        self.outputs.push_back(Output::EndTui);
        self.ended_tui = Some(why);
        self.link = Link::Off;
    }

    /// Says to the adapter what became of the native path.
    fn tell(&mut self, mode: LaunchMode, why: String, now: Time) {
        if mode == LaunchMode::NativeUnavailable {
            self.outputs
                .push_back(Output::Log(format!("native idle path unavailable: {why}")));
        }
        let report = LaunchReport {
            mode,
            declared: None,
            error: Some(why),
        };
        self.telling = Some((report.clone(), now));
        self.timers.stop(Timer::TellRetry);
        self.outputs.push_back(Output::Tell(report));
    }

    /// The sidecar may start the adapter a moment after the PTY host
    /// started the launcher: a hook channel not there yet is offered the
    /// report again, briefly.
    fn on_tell_unreached(&mut self, report: LaunchReport, now: Time) {
        let Some((newest, since)) = &self.telling else {
            return;
        };
        if *newest == report && now < *since + LAUNCH_CALL_TIMEOUT {
            self.timers.set(Timer::TellRetry, now + LAUNCH_RETRY);
        }
    }

    fn on_tui_exited(&mut self, now: Time) {
        if self.link != Link::Open {
            self.link = Link::Done;
            return;
        }
        // DING's items still queued would run if this thread were resumed
        // later: delete them, waiting a moment for the answers.
        let deletes = self.delete_ours(self.conv.thread.clone());
        if deletes == 0 {
            self.link = Link::Done;
            return;
        }
        self.outputs.push_back(Output::Log(format!(
            "deleting {deletes} leftover deliveries"
        )));
        self.link = Link::Exiting;
        self.timers.set(Timer::Exit, now + EXIT_GRACE);
    }

    /// Deletes DING's items from `thread`'s queue; how many.
    fn delete_ours(&mut self, thread: Option<String>) -> usize {
        let Some(thread) = thread else {
            return 0;
        };
        let mut deletes = 0;
        for queued in std::mem::take(&mut self.conv.ours) {
            if let Some(server_id) = queued.server_id {
                self.request(
                    Purpose::Delete,
                    "thread/queue/delete",
                    json!({"threadId": thread, "queuedSubmissionId": server_id}),
                );
                deletes += 1;
            }
        }
        deletes
    }

    fn initialize(&mut self) {
        self.request(
            Purpose::Initialize,
            "initialize",
            json!({
                "clientInfo": {"name": "ding", "version": env!("CARGO_PKG_VERSION")},
                "capabilities": {"experimentalApi": true},
            }),
        );
    }

    fn request(&mut self, purpose: Purpose, method: &str, params: Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.conv.pending.insert(id, purpose);
        self.outputs
            .push_back(Output::Send(rpc::request(id, method, params)));
    }

    /// Any RPC failure before the path is ready: off for good.
    fn fail(&mut self, why: String, now: Time) {
        if self.link == Link::Open {
            self.tell(LaunchMode::NativeUnavailable, why, now);
            self.link = Link::Off;
        }
    }

    /// One message from the app-server. While the TUI exits, only the
    /// answers to the deletes count, until all have come.
    fn on_message(&mut self, text: &str, now: Time) {
        if self.link == Link::Exiting {
            if let Some(Incoming::Reply { id, .. }) = rpc::classify(text) {
                self.conv.pending.remove(&id);
            }
            if self.conv.pending.is_empty() {
                self.timers.stop(Timer::Exit);
                self.link = Link::Done;
            }
            return;
        }
        if self.link != Link::Open {
            return;
        }
        match rpc::classify(text) {
            Some(Incoming::Reply { id, result }) => {
                if let Some(purpose) = self.conv.pending.remove(&id) {
                    self.on_reply(purpose, result, now);
                }
            }
            Some(Incoming::Notification { method, params }) => {
                self.on_notification(&method, &params, now)
            }
            // Never answered: approvals belong to the human at the TUI.
            Some(Incoming::Request { .. }) | None => {}
        }
    }

    fn on_reply(&mut self, purpose: Purpose, result: Result<Value, Value>, now: Time) {
        let result = match (purpose.clone(), result) {
            (_, Ok(result)) => result,
            (Purpose::Add(client_id), Err(_)) => return self.conv.add_failed(&client_id),
            (Purpose::List | Purpose::Start | Purpose::Delete, Err(_)) => return,
            (_, Err(error)) => {
                let why = format!("{purpose:?}: {}", rpc::error_text(&error));
                return self.fail(why, now);
            }
        };
        match purpose {
            Purpose::Initialize => {
                self.outputs
                    .push_back(Output::Send(rpc::notification("initialized")));
                let cwd = self.setup.cwd.clone();
                self.request(Purpose::HooksList, "hooks/list", json!({"cwds": [cwd]}));
                self.request(Purpose::LoadedList, "thread/loaded/list", json!({}));
            }
            Purpose::HooksList => self.conv.hooks = Some(ours_listed(&result)),
            Purpose::LoadedList => {
                let first = result["data"].as_array().and_then(|ids| ids.first());
                if self.conv.thread.is_none()
                    && let Some(id) = first.and_then(Value::as_str)
                {
                    self.conv.thread = Some(id.to_string());
                    self.set_status(ThreadStatus::Idle, now);
                    self.list(Purpose::Probe);
                }
            }
            Purpose::Probe => {
                // DING's deliveries already in the queue (an app-server
                // started again after the last one died: the queue is kept
                // per thread) are this launcher's to watch and report.
                self.conv.ours.extend(ours_queued(&result));
                self.conv.ready = true;
            }
            Purpose::Add(client_id) => {
                if let Some(queued) = self
                    .conv
                    .ours
                    .iter_mut()
                    .find(|queued| queued.client_id == client_id)
                {
                    queued.server_id = result["queuedSubmission"]["id"].as_str().map(String::from);
                }
            }
            Purpose::List => self.conv.keep_listed(&listed_ids(&result)),
            Purpose::Start => self.list(Purpose::List),
            Purpose::Delete => {}
        }
    }

    /// Asks for the thread's queue (`Probe`: first, to be ready; `List`:
    /// again, to see what left it).
    fn list(&mut self, purpose: Purpose) {
        if let Some(thread) = self.conv.thread.clone() {
            self.request(purpose, "thread/queue/list", json!({"threadId": thread}));
        }
    }

    fn set_status(&mut self, status: ThreadStatus, now: Time) {
        self.had_turn |= status == ThreadStatus::Active;
        self.conv.set_status(status, now);
    }

    fn on_notification(&mut self, method: &str, params: &Value, now: Time) {
        match method {
            "thread/started" => {
                let Some(id) = started_thread(params) else {
                    return;
                };
                if self.conv.thread.as_deref() == Some(id) {
                    return;
                }
                // A new thread in the TUI (`/clear`): DING's items in the old
                // one would never be seen; the adapter reports `clear`.
                let old = self.conv.thread.replace(id.to_string());
                self.delete_ours(old);
                // A new thread is idle afresh, whatever the old one was.
                self.conv.status = ThreadStatus::Unknown;
                self.set_status(ThreadStatus::Idle, now);
                if !self.conv.ready {
                    self.list(Purpose::Probe);
                }
            }
            // A thread none was loaded for when asked: an app-server
            // started again loads the TUI's thread only once the TUI has
            // reconnected (findings §12). Ask again which it is, each time
            // (an answer asked for just before would not say).
            "thread/status/changed" if self.conv.thread.is_none() => {
                self.request(Purpose::LoadedList, "thread/loaded/list", json!({}));
            }
            "thread/status/changed"
                if params["threadId"].as_str() == self.conv.thread.as_deref() =>
            {
                self.set_status(changed_status(params), now);
                // A turn started or ended: was it one of DING's? (Codex
                // does not always say `thread/queue/changed` when a queued
                // item starts.)
                if !self.conv.ours.is_empty() {
                    self.list(Purpose::List);
                }
            }
            "thread/queue/changed"
                if params["threadId"].as_str() == self.conv.thread.as_deref()
                    && !self.conv.ours.is_empty() =>
            {
                self.list(Purpose::List);
            }
            _ => {}
        }
    }

    /// Whether reports go to the adapter: the path is on and ready.
    fn reporting(&self) -> bool {
        self.link == Link::Open && self.conv.ready
    }

    /// Calls the adapter again if what it would be told changed.
    fn report(&mut self) {
        if !self.reporting() {
            return;
        }
        let report = self.conv.report();
        if self.conv.reported.as_ref() == Some(&report) {
            return;
        }
        self.call_now(report);
    }

    fn call_now(&mut self, report: QueueReport) {
        self.call += 1;
        self.conv.reported = Some(report.clone());
        self.conv.failed.clear();
        self.timers.stop(Timer::CallRetry);
        self.outputs.push_back(Output::Call {
            call: self.call,
            report: QueueReport {
                // Codex's list of hooks goes with the first call only.
                hooks: self.conv.hooks.take(),
                ..report
            },
        });
    }

    /// The adapter answered call `call`, or could not be reached (`None`).
    fn on_answer(&mut self, call: u64, answer: Option<&HookAnswer>, now: Time) {
        if !self.link.answers_count() {
            return;
        }
        if let Some(delivery) = answer.and_then(QueueAnswer::read) {
            // Whichever call it answers: its files are claimed for it.
            let (id, text) = (delivery.id, delivery.text);
            match self.conv.thread.clone() {
                Some(thread)
                    if self.link == Link::Open && id.starts_with(ID_PREFIX) && !text.is_empty() =>
                {
                    self.conv.ours.push(Queued {
                        client_id: id.clone(),
                        server_id: None,
                    });
                    self.request(
                        Purpose::Add(id.clone()),
                        "thread/queue/add",
                        json!({
                            "threadId": thread,
                            "clientUserMessageId": id,
                            "input": [{"type": "text", "text": text, "text_elements": []}],
                        }),
                    );
                }
                _ => self.conv.failed.push(id),
            }
        } else if call == self.call {
            match answer.map(|answer| answer.parked) {
                // Unreachable: try again shortly with the same report.
                None => self.timers.set(Timer::CallRetry, now + CALL_RETRY),
                // Parked, then expired, with the offer still good: make it
                // again. Declined or replaced: wait for the report to change.
                Some(Some(ParkAnswer::Expired)) if self.conv.may_deliver() => {
                    if let Some(report) = self.conv.reported.clone().filter(|_| self.reporting()) {
                        self.call_now(report);
                    }
                }
                // A hook said a turn runs: the thread is not idle, whatever
                // the notifications said last (an Esc and a prompt at once
                // can report the interrupt's idle after the new turn's
                // start). Taken as said (nothing to call about), so that
                // its next idle is a change and is reported.
                Some(Some(ParkAnswer::Declined)) => {
                    self.set_status(ThreadStatus::Active, now);
                    if let Some(reported) = self.conv.reported.as_mut() {
                        reported.status = self.conv.status.conversation();
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// A paused queue with a delivery of DING's in it: resumed once per
    /// idle spell.
    fn resume(&mut self) {
        if !self.reporting() || self.conv.resumed || self.conv.ours.is_empty() {
            return;
        }
        if let Some(thread) = self.conv.thread.clone() {
            self.conv.resumed = true;
            self.request(
                Purpose::Start,
                "thread/queue/start",
                json!({"threadId": thread}),
            );
        }
    }
}

#[cfg(test)]
mod tests;
