//! The sidecar's connection to the PTY host's control socket.
//!
//! One non-blocking connection carries everything: `watch` pushes (revision
//! changes, restarts, child exit) and the engine's requests (`status`,
//! `send-if`, `send`), whose replies come back in request order between the
//! pushes. This file translates both ways and keeps no policy: every fact it
//! learns becomes an engine input, and every engine request becomes a line.
//! When the host goes away the engine hears `PtyUnreachable` and the link
//! reconnects with backoff (100 ms doubling to 5 s).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use mio::{Registry, Token};

use super::crash_point::{self, CrashPoint};
use crate::core::backoff::Backoff;
use crate::core::engine::{Input, Send, SendIf};
use crate::core::identity::Identity;
use crate::core::ownership::RequestId;
use crate::core::time::Time;
use crate::core::transport::{self, Transport};
use crate::pty::control_conn::{ControlConn, Received};
use crate::pty::transport::WireStep;
use crate::pty::wire::{
    ChildState, ErrorKind, HostStatus, Origin, Push, Reply, Request, SendIfReply, ServerLine,
};

/// How the link tries again after losing the host: after 100 ms, doubling
/// up to 5 s, back to 100 ms once it connects.
const RECONNECT: Backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
/// Replies and pushes are short; a status of a huge screen is not asked for.
const MAX_REPLY_LINE: usize = 1024 * 1024;

/// What a written request is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Awaiting {
    Watch,
    Status,
    SendIf(RequestId),
    Send(RequestId),
}

/// A fact the runtime should know besides engine inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkNote {
    Connected,
    Lost(String),
    ChildExited(String),
    Unexpected(String),
}

pub struct PtyLink {
    path: PathBuf,
    token: Token,
    conn: Option<ControlConn>,
    awaiting: VecDeque<Awaiting>,
    identity: Option<Identity>,
    backoff: Backoff,
    retry_at: Option<Time>,
    /// Engine inputs learned since the runtime last took them.
    inputs: Vec<Input>,
    /// Runtime notes since the runtime last took them.
    notes: Vec<LinkNote>,
}

impl PtyLink {
    pub fn new(path: PathBuf, token: Token) -> PtyLink {
        PtyLink {
            path,
            token,
            conn: None,
            awaiting: VecDeque::new(),
            identity: None,
            backoff: RECONNECT,
            retry_at: Some(Time::ZERO),
            inputs: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// When the link wants to try connecting again, if it is down.
    pub fn retry_at(&self) -> Option<Time> {
        self.retry_at
    }

    /// Connects if a retry is due.
    pub fn poll_connect(&mut self, registry: &Registry, now: Time) {
        if self.conn.is_some() || self.retry_at.is_none_or(|due| due > now) {
            return;
        }
        match ControlConn::connect(&self.path, registry, self.token, MAX_REPLY_LINE) {
            Ok(conn) => {
                self.conn = Some(conn);
                self.retry_at = None;
                self.backoff.succeeded();
                self.awaiting.clear();
                self.queue(&Request::Watch {}, Awaiting::Watch);
                self.queue(&Request::Status {}, Awaiting::Status);
                self.flush(registry, now);
                if self.conn.is_some() {
                    self.notes.push(LinkNote::Connected);
                }
            }
            Err(err) => {
                let why = format!("connect {}: {err}", self.path.display());
                self.lose(registry, now, &why);
            }
        }
    }

    /// Writes a compare-and-send request.
    pub fn send_if(&mut self, registry: &Registry, now: Time, send: &SendIf) {
        let (quiet_input_ms, settled_output_ms) = send.fence.as_millis();
        let request = Request::SendIf {
            session: send.identity.session.clone(),
            incarnation: send.identity.incarnation.clone(),
            generation: send.identity.generation.clone(),
            expected_revision: send.expected_revision,
            steps: wire_steps(&send.transport),
            quiet_input_ms: Some(quiet_input_ms),
            settled_output_ms: Some(settled_output_ms),
            hold_input_ms: send
                .hold_input
                .map(|hold| u64::try_from(hold.as_millis()).unwrap_or(u64::MAX)),
            withdraw: send.withdraw.as_ref().map(wire_steps),
        };
        self.transact(
            registry,
            now,
            request,
            Awaiting::SendIf(send.request),
            send.request,
        );
    }

    /// Writes an unconditional send request (the aggressive policy).
    pub fn send(&mut self, registry: &Registry, now: Time, send: &Send) {
        let request = Request::Send {
            steps: wire_steps(&send.transport),
            origin: Origin::Delivery,
        };
        self.transact(
            registry,
            now,
            request,
            Awaiting::Send(send.request),
            send.request,
        );
    }

    /// Writes a transaction request, or answers it at once with an error
    /// (zero bytes written) when there is no connection to write it on.
    fn transact(
        &mut self,
        registry: &Registry,
        now: Time,
        request: Request,
        awaiting: Awaiting,
        id: RequestId,
    ) {
        if self.conn.is_none() {
            self.inputs.push(Input::PtyError {
                request: id,
                detail: "pty host not connected".into(),
            });
            return;
        }
        crash_point::reach(CrashPoint::BeforePtyWrite);
        self.queue(&request, awaiting);
        self.flush(registry, now);
    }

    /// Takes the engine inputs and runtime notes learned since the last call.
    pub fn take(&mut self) -> (Vec<Input>, Vec<LinkNote>) {
        (
            std::mem::take(&mut self.inputs),
            std::mem::take(&mut self.notes),
        )
    }

    /// Handles readiness on the link's token.
    pub fn on_ready(&mut self, registry: &Registry, now: Time) {
        self.flush(registry, now);
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let mut received = Vec::new();
        let lost = conn.read(&mut received);
        for line in received {
            match line {
                Received::Line(line) => self.on_line(*line),
                Received::Unreadable(err) => self.notes.push(LinkNote::Unexpected(format!(
                    "unreadable line from pty host: {err}"
                ))),
            }
        }
        if let Err(why) = lost {
            self.lose(registry, now, &why);
        }
    }

    fn on_line(&mut self, line: ServerLine) {
        match line {
            ServerLine::Push(push) => self.on_push(push),
            ServerLine::Reply(reply) => {
                let awaited = self.awaiting.pop_front();
                self.on_reply(awaited, reply);
            }
            ServerLine::Error(error) => {
                let detail = format!("{:?}: {}", error.error, error.message);
                match self.awaiting.pop_front() {
                    Some(Awaiting::SendIf(request) | Awaiting::Send(request))
                        if error.error == ErrorKind::ChildExited =>
                    {
                        self.inputs.push(Input::HarnessExited {
                            request: Some(request),
                            status: "exited".into(),
                        });
                    }
                    Some(Awaiting::SendIf(request) | Awaiting::Send(request)) => {
                        self.inputs.push(Input::PtyError { request, detail });
                    }
                    other => self.notes.push(LinkNote::Unexpected(format!(
                        "error reply to {other:?}: {detail}"
                    ))),
                }
            }
        }
    }

    fn on_push(&mut self, push: Push) {
        match push {
            Push::Revision { revision, .. } => self.report(revision),
            Push::Start {
                incarnation,
                revision,
            } => {
                if let Some(identity) = &mut self.identity {
                    identity.incarnation = incarnation;
                }
                self.report(revision);
                // The generation may have changed with the restart: ask.
                self.queue(&Request::Status {}, Awaiting::Status);
            }
            Push::Withdrawn { revision } => {
                self.inputs.push(Input::PtyWithdrawn { actual: revision });
                self.report(revision);
            }
            Push::Exit { child, revision } => {
                self.notes.push(LinkNote::ChildExited(format!("{child:?}")));
                self.report(revision);
                self.inputs.push(Input::HarnessExited {
                    request: None,
                    status: describe_child(child),
                });
            }
        }
    }

    fn on_reply(&mut self, awaited: Option<Awaiting>, reply: Reply) {
        match (awaited, reply) {
            (Some(Awaiting::Watch), Reply::Watch { .. }) => {}
            (Some(Awaiting::Status), Reply::Status(status)) => self.on_status(&status),
            (Some(Awaiting::SendIf(request)), Reply::SendIf(result)) => {
                let input = match result {
                    SendIfReply::Sent { revision, .. } => {
                        crash_point::reach(CrashPoint::AfterPtyWrite);
                        Input::PtySent { request, revision }
                    }
                    SendIfReply::Conflict { revision } => Input::PtyConflict {
                        request,
                        actual: revision,
                    },
                    // Another identity answered: zero bytes, and the terminal is not
                    // the one the lease was about. Ask for the identity it has.
                    SendIfReply::Mismatch { part, revision } => {
                        self.queue(&Request::Status {}, Awaiting::Status);
                        Input::PtyMismatch {
                            request,
                            part,
                            actual: revision,
                        }
                    }
                    SendIfReply::Unsettled {
                        part,
                        quiet_for_ms,
                        retry_in_ms,
                        revision,
                    } => Input::PtyUnsettled {
                        request,
                        part,
                        quiet_for: Duration::from_millis(quiet_for_ms),
                        retry_in: Duration::from_millis(retry_in_ms),
                        actual: revision,
                    },
                    SendIfReply::Interrupted { revision, written } => Input::PtyInterrupted {
                        request,
                        written,
                        actual: revision,
                    },
                    SendIfReply::Exited { .. } => Input::HarnessExited {
                        request: Some(request),
                        status: "exited".into(),
                    },
                };
                self.inputs.push(input);
            }
            (Some(Awaiting::Send(request)), Reply::Send { revision, .. }) => {
                crash_point::reach(CrashPoint::AfterPtyWrite);
                self.inputs.push(Input::PtySent { request, revision });
            }
            (awaited, reply) => self.notes.push(LinkNote::Unexpected(format!(
                "reply {reply:?} while awaiting {awaited:?}"
            ))),
        }
    }

    fn on_status(&mut self, status: &HostStatus) {
        let identity = Identity {
            session: status.session.clone(),
            incarnation: status.incarnation.clone(),
            generation: status.generation.clone(),
        };
        self.identity = Some(identity.clone());
        self.inputs.push(Input::PtyStatus {
            identity,
            revision: status.revision,
        });
        if !matches!(status.child, ChildState::Running { .. }) {
            self.inputs.push(Input::HarnessExited {
                request: None,
                status: describe_child(status.child),
            });
        }
    }

    fn report(&mut self, revision: u64) {
        if let Some(identity) = self.identity.clone() {
            self.inputs.push(Input::PtyStatus { identity, revision });
        }
    }

    fn queue(&mut self, request: &Request, awaiting: Awaiting) {
        if let Some(conn) = self.conn.as_mut() {
            conn.queue(request);
            self.awaiting.push_back(awaiting);
        }
    }

    fn flush(&mut self, registry: &Registry, now: Time) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if let Err(err) = conn.flush(registry) {
            let why = format!("write to pty host: {err}");
            self.lose(registry, now, &why);
        }
    }

    fn lose(&mut self, registry: &Registry, now: Time, why: &str) {
        let was_connected = self.conn.is_some();
        if let Some(conn) = self.conn.take() {
            conn.close(registry);
        }
        // Requests that were written may or may not have run: the engine's
        // PtyUnreachable covers that (outcome unknown).
        self.awaiting.clear();
        self.retry_at = Some(now.saturating_add(self.backoff.failed()));
        self.inputs.push(Input::PtyUnreachable);
        if was_connected || self.backoff.failures() == 1 {
            // Log the first failure of a series, not every retry.
            self.notes.push(LinkNote::Lost(why.to_string()));
        }
    }
}

/// `exit code 3`, `signal 9`: how a child's end reads in holds and logs.
pub fn describe_child(child: ChildState) -> String {
    match child {
        ChildState::Running { pid } => format!("running as pid {pid}"),
        ChildState::Exited { code } => format!("exit code {code}"),
        ChildState::Killed { signal } => format!("signal {signal}"),
    }
}

/// The engine's transport as PTY wire steps.
pub fn wire_steps(transport: &Transport) -> Vec<WireStep> {
    transport
        .steps
        .iter()
        .map(|step| match step {
            transport::Step::Write(bytes) => WireStep::Write(bytes.clone()),
            transport::Step::Paste(text) => WireStep::Paste(text.clone()),
            transport::Step::Wait(span) => {
                WireStep::WaitMs(u64::try_from(span.as_millis()).unwrap_or(u64::MAX))
            }
        })
        .collect()
}
