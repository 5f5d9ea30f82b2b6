//! The kit's view of the terminal: one non-blocking connection to the PTY
//! host carrying a `watch` stream and `snapshot` requests.
//!
//! The kit opens it only while evidence is wanted and closes it when not,
//! so a terminal that keeps drawing wakes the adapter only while someone
//! needs to know. Pushes are coalesced by the host; snapshots are asked one
//! at a time, and each comes back with the revision it shows.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};

use mio::{Registry, Token};

use crate::pty::control_conn::{ControlConn, Received};
use crate::pty::wire::{HostStatus, Push, Reply, Request, ServerLine, Snapshot};

/// A snapshot of a 1000x1000 screen with styles stays below this.
const MAX_LINE: usize = 32 * 1024 * 1024;

/// What the terminal told the kit.
#[derive(Debug)]
pub enum PtyEvent {
    /// Something happened on the terminal (input, output, resize, restart).
    Moved,
    /// The harness started again (a new incarnation).
    Started,
    /// The snapshot asked for.
    Snapshot(Box<Snapshot>),
    /// The status asked for.
    Status(Box<HostStatus>),
    /// The connection is gone (`why`); the kit opens a new one when it needs it.
    Lost(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Awaiting {
    Watch,
    Snapshot,
    Status,
}

pub struct PtyWatch {
    path: PathBuf,
    token: Token,
    conn: Option<ControlConn>,
    awaiting: VecDeque<Awaiting>,
}

impl PtyWatch {
    pub fn new(path: &Path, token: Token) -> PtyWatch {
        PtyWatch {
            path: path.to_path_buf(),
            token,
            conn: None,
            awaiting: VecDeque::new(),
        }
    }

    /// Whether a snapshot was asked for and has not come back.
    pub fn snapshot_pending(&self) -> bool {
        self.awaiting.contains(&Awaiting::Snapshot)
    }

    /// Connects and starts watching.
    pub fn open(&mut self, registry: &Registry) -> io::Result<()> {
        if self.conn.is_some() {
            return Ok(());
        }
        self.conn = Some(ControlConn::connect(
            &self.path, registry, self.token, MAX_LINE,
        )?);
        self.awaiting.clear();
        self.ask(registry, &Request::Watch {}, Awaiting::Watch)
    }

    pub fn close(&mut self, registry: &Registry) {
        if let Some(conn) = self.conn.take() {
            conn.close(registry);
        }
        self.awaiting.clear();
    }

    /// Asks for a snapshot (one at a time).
    pub fn request_snapshot(&mut self, registry: &Registry) -> io::Result<()> {
        if self.snapshot_pending() {
            return Ok(());
        }
        self.ask(registry, &Request::Snapshot {}, Awaiting::Snapshot)
    }

    /// Asks for the host's status (identity, revision, child).
    pub fn request_status(&mut self, registry: &Registry) -> io::Result<()> {
        self.ask(registry, &Request::Status {}, Awaiting::Status)
    }

    fn ask(
        &mut self,
        registry: &Registry,
        request: &Request,
        awaiting: Awaiting,
    ) -> io::Result<()> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        conn.queue(request);
        self.awaiting.push_back(awaiting);
        conn.flush(registry)
    }

    /// Reads what the host sent, appending events.
    pub fn on_ready(&mut self, registry: &Registry, events: &mut Vec<PtyEvent>) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if let Err(err) = conn.flush(registry) {
            return self.lose(registry, events, format!("write to pty host: {err}"));
        }
        let mut received = Vec::new();
        let lost = conn.read(&mut received);
        for line in received {
            match line {
                Received::Line(line) => self.on_line(*line, events),
                Received::Unreadable(err) => {
                    events.push(PtyEvent::Lost(format!("unreadable pty host line: {err}")))
                }
            }
        }
        if let Err(why) = lost {
            self.lose(registry, events, why);
        }
    }

    fn on_line(&mut self, line: ServerLine, events: &mut Vec<PtyEvent>) {
        match line {
            ServerLine::Push(
                Push::Revision { .. } | Push::Exit { .. } | Push::Withdrawn { .. },
            ) => events.push(PtyEvent::Moved),
            ServerLine::Push(Push::Start { .. }) => {
                events.push(PtyEvent::Started);
                events.push(PtyEvent::Moved);
            }
            ServerLine::Reply(reply) => match (self.awaiting.pop_front(), reply) {
                (Some(Awaiting::Snapshot), Reply::Snapshot(snapshot)) => {
                    events.push(PtyEvent::Snapshot(Box::new(snapshot)))
                }
                (Some(Awaiting::Watch), Reply::Watch { .. }) => events.push(PtyEvent::Moved),
                (Some(Awaiting::Status), Reply::Status(status)) => {
                    events.push(PtyEvent::Status(Box::new(status)))
                }
                (awaited, reply) => events.push(PtyEvent::Lost(format!(
                    "unexpected reply {reply:?} while awaiting {awaited:?}"
                ))),
            },
            // A snapshot refused (the child exited): what the screen shows
            // is unknown until something moves again.
            ServerLine::Error(error) => {
                self.awaiting.pop_front();
                events.push(PtyEvent::Lost(format!(
                    "pty host refused: {}",
                    error.message
                )));
            }
        }
    }

    fn lose(&mut self, registry: &Registry, events: &mut Vec<PtyEvent>, why: String) {
        self.close(registry);
        events.push(PtyEvent::Lost(why));
    }
}
