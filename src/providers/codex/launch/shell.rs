//! The native launcher's process shell: one thread, one mio poll loop that
//! moves bytes between the app-server, the adapter's hook channel, the
//! children's ends and the native path's machine (`native/`), and holds
//! no policy of its own.
//!
//! | token | source | becomes |
//! |---|---|---|
//! | `SIGNALS` | a signalfd of `SIGCHLD` | [`Input::TuiExited`], [`Input::ServerExited`] |
//! | `LINK` | the app-server's socket (a WebSocket) | [`Input::Connected`], [`Input::Message`], [`Input::Closed`], ... |
//! | one per call, from `FIRST_CALL` | a call on the hook channel | [`Input::Answer`], [`Input::TellUnreached`] |
//!
//! Each turn of the loop feeds what arrived to the machine with the time it
//! was read, carries out every output (an output that fails at once, or
//! that is answered at once, becomes the next input), writes what waits
//! for the app-server, and sleeps in `poll` until the machine's next
//! deadline: with nothing awaited the machine names none, and the loop
//! sleeps with no timeout.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::process::{Child, ExitStatus};

use anyhow::{Context, Result};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::signalfd::SignalFd;

use super::super::hooks::{LAUNCH, QUEUE};
use super::super::native::{Input, Output, QueuePath, Setup};
use super::super::timing::LAUNCH_CALL_TIMEOUT;
use super::super::trust::PROVIDER;
use super::app_server::{AppServer, terminate};
use super::hook_calls::{Called, Ended, HookCalls};
use super::link::{Link, LinkEvent};
use super::log::{Log, abbreviated, worth_logging};
use crate::adapter::clock::Clock;
use crate::adapter::relay::{self, RelayFailure};
use crate::adapter::timing::QUEUE_CALL_TIMEOUT;

const SIGNALS: Token = Token(0);
const LINK: Token = Token(1);
const FIRST_CALL: usize = 100;

/// Everything the loop moves bytes between.
pub struct Shell {
    poll: Poll,
    signals: SignalFd,
    clock: Clock,
    machine: QueuePath,
    tui: Child,
    tui_status: Option<ExitStatus>,
    server: AppServer,
    /// The pid of the app-server whose exit the machine was told.
    told_exit_of: Option<u32>,
    link: Option<Link>,
    calls: HookCalls,
    log: Log,
}

impl Shell {
    /// The loop around `tui` and `server`; `signals` reads `SIGCHLD` (made
    /// before either child was started, so that no end is missed).
    pub fn new(
        tui: Child,
        server: AppServer,
        signals: SignalFd,
        log: Log,
        cwd: String,
    ) -> Result<Shell> {
        let poll = Poll::new().context("create poll")?;
        poll.registry()
            .register(
                &mut SourceFd(&signals.as_fd().as_raw_fd()),
                SIGNALS,
                Interest::READABLE,
            )
            .context("register the signalfd")?;
        let clock = Clock::start();
        let setup = Setup {
            cwd,
            socket: server.socket().display().to_string(),
            server_log: server.log_path().display().to_string(),
        };
        Ok(Shell {
            poll,
            signals,
            machine: QueuePath::new(setup, clock.now()),
            clock,
            tui,
            tui_status: None,
            server,
            told_exit_of: None,
            link: None,
            calls: HookCalls::new(relay::socket_from_env(), FIRST_CALL),
            log,
        })
    }

    /// Runs until the TUI has exited and the machine awaits nothing more;
    /// returns the TUI's status (a failure if the launcher ended it, whose
    /// reason is said now that the TUI has left the terminal: said while it
    /// still drew, it landed over its last frame).
    pub fn run(mut self) -> Result<ExitStatus> {
        self.carry_out();
        // A child that ended before the loop began: its SIGCHLD waits in
        // the signalfd, and is read on the first turn anyway.
        self.on_signals();
        let mut events = Events::with_capacity(64);
        while !self.machine.is_done() {
            let timeout = self.machine.next_deadline().map(|at| self.clock.until(at));
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            for event in events.iter() {
                match event.token() {
                    SIGNALS => self.on_signals(),
                    LINK => self.on_link(),
                    token => self.on_call(token),
                }
            }
            let now = self.clock.now();
            self.machine.handle_timeout(now);
            self.carry_out();
        }
        self.link = None;
        self.server.end_all();
        let status = match self.tui_status {
            Some(status) => status,
            None => self.tui.wait().context("wait for the TUI")?,
        };
        if let Some(why) = self.machine.ended_tui() {
            eprintln!("ding: {why}");
            return Ok(failure());
        }
        Ok(status)
    }

    fn feed(&mut self, input: Input) {
        let now = self.clock.now();
        self.machine.handle_input(input, now);
        self.carry_out();
    }

    /// Carries out every output the machine has; what that makes happen at
    /// once is fed back in (and its outputs carried out in turn).
    fn carry_out(&mut self) {
        while let Some(output) = self.machine.poll_output() {
            let mut results = Vec::new();
            self.perform(output, &mut results);
            for input in results {
                let now = self.clock.now();
                self.machine.handle_input(input, now);
            }
        }
    }

    fn perform(&mut self, output: Output, results: &mut Vec<Input>) {
        match output {
            Output::Connect => {
                self.link = None;
                match Link::connect(self.server.socket(), self.poll.registry(), LINK) {
                    Ok(link) => {
                        self.link = Some(link);
                        self.step_link(results);
                    }
                    Err(err) => results.push(Input::ConnectFailed(err.to_string())),
                }
            }
            Output::Send(line) => {
                self.log.line(&format!("-> {}", abbreviated(&line)));
                let mut events = Vec::new();
                let sent = match self.link.as_mut() {
                    Some(link) => link.send(&line, &mut events),
                    None => Err("not connected".into()),
                };
                if let Err(err) = sent {
                    self.log.line(&format!("send failed: {err}"));
                }
                self.link_inputs(events, results);
            }
            Output::Call { call, report } => {
                let payload = report.to_payload();
                self.log.line(&format!("call {call}: {payload}"));
                let line = relay::call_line(PROVIDER, QUEUE, payload, false, QUEUE_CALL_TIMEOUT);
                let mut ended = Vec::new();
                let registry = self.poll.registry();
                self.calls
                    .start(registry, Called::Queue(call), line, &mut ended);
                self.call_inputs(ended, results);
            }
            Output::Tell(report) => {
                let payload = serde_json::to_value(&report).unwrap_or_default();
                let line = relay::call_line(PROVIDER, LAUNCH, payload, false, LAUNCH_CALL_TIMEOUT);
                let mut ended = Vec::new();
                let registry = self.poll.registry();
                self.calls
                    .start(registry, Called::Launch(report), line, &mut ended);
                self.call_inputs(ended, results);
            }
            Output::StartServer => {
                self.link = None;
                results.push(match self.server.restart() {
                    Ok(pid) => {
                        self.log.line(&format!("app-server started again: {pid}"));
                        Input::ServerStarted
                    }
                    Err(err) => Input::ServerNotStarted(format!("{err:#}")),
                });
            }
            Output::EndTui => terminate(&self.tui),
            Output::Log(line) => self.log.line(&line),
        }
    }

    /// Goes on with the link (its upgrade, its reads, what waits to be
    /// written).
    fn step_link(&mut self, results: &mut Vec<Input>) {
        let mut events = Vec::new();
        if let Some(link) = self.link.as_mut() {
            link.on_ready(&mut events);
            link.flush(&mut events);
        }
        self.link_inputs(events, results);
    }

    fn link_inputs(&mut self, events: Vec<LinkEvent>, results: &mut Vec<Input>) {
        for event in events {
            results.push(match event {
                LinkEvent::Connected => Input::Connected,
                LinkEvent::Refused(why) => {
                    self.link = None;
                    Input::ConnectFailed(why)
                }
                LinkEvent::Text(text) => {
                    if worth_logging(&text) {
                        self.log.line(&format!("<- {}", abbreviated(&text)));
                    }
                    Input::Message(text)
                }
                LinkEvent::Closed(why) => {
                    self.link = None;
                    Input::Closed(why)
                }
            });
        }
    }

    fn call_inputs(&mut self, ended: Vec<Ended>, results: &mut Vec<Input>) {
        for (called, end) in ended {
            match (called, end) {
                (Called::Queue(call), Ok(answer)) => {
                    let said = abbreviated(&answer.to_line());
                    self.log.line(&format!("answer {call}: {said}"));
                    results.push(Input::Answer {
                        call,
                        answer: Some(answer),
                    });
                }
                (Called::Queue(call), Err(_)) => {
                    self.log.line(&format!("answer {call}: unreachable"));
                    results.push(Input::Answer { call, answer: None });
                }
                (Called::Launch(report), Err(RelayFailure::Connect(_))) => {
                    results.push(Input::TellUnreached(report))
                }
                (Called::Launch(_), Err(failure)) => self.log.line(&format!(
                    "the adapter did not take the launch call: {failure:?}"
                )),
                (Called::Launch(_), Ok(_)) => {}
            }
        }
    }

    fn on_link(&mut self) {
        let mut results = Vec::new();
        self.step_link(&mut results);
        for input in results {
            self.feed(input);
        }
    }

    fn on_call(&mut self, token: Token) {
        if !self.calls.owns(token) {
            return;
        }
        let mut ended = Vec::new();
        self.calls.on_ready(self.poll.registry(), token, &mut ended);
        let mut results = Vec::new();
        self.call_inputs(ended, &mut results);
        for input in results {
            self.feed(input);
        }
    }

    /// `SIGCHLD`s coalesce: each wake-up looks at both children.
    fn on_signals(&mut self) {
        while let Ok(Some(_)) = self.signals.read_signal() {}
        if self.tui_status.is_none()
            && let Ok(Some(status)) = self.tui.try_wait()
        {
            self.tui_status = Some(status);
            self.log.line(&format!("the TUI exited ({status})"));
            self.feed(Input::TuiExited);
        }
        let pid = self.server.pid();
        let exited = self.server.exited();
        if self.told_exit_of != Some(pid)
            && let Some(status) = exited
        {
            self.told_exit_of = Some(pid);
            let last_error = self.server.last_error();
            self.feed(Input::ServerExited {
                status: status.to_string(),
                last_error,
            });
        }
    }
}

/// Status 1: the launcher ended the TUI.
fn failure() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(1 << 8)
}
