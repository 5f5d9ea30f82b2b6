//! The kit's view of the terminal: one non-blocking connection to the PTY
//! host carrying a `watch` stream and `snapshot` requests.
//!
//! The kit opens it only while evidence is wanted and closes it when not,
//! so a terminal that keeps drawing wakes the adapter only while someone
//! needs to know. Pushes are coalesced by the host; snapshots are asked one
//! at a time, and each comes back with the revision it shows.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use mio::net::UnixStream;
use mio::{Interest, Registry, Token};

use crate::pty::wire::{HostStatus, Push, Reply, Request, ServerLine, Snapshot};
use crate::sidecar::lines::{Line, LineBuffer};

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
    stream: Option<UnixStream>,
    outbox: Vec<u8>,
    lines: LineBuffer,
    awaiting: VecDeque<Awaiting>,
    writable: bool,
}

impl PtyWatch {
    pub fn new(path: &Path, token: Token) -> PtyWatch {
        PtyWatch {
            path: path.to_path_buf(),
            token,
            stream: None,
            outbox: Vec::new(),
            lines: LineBuffer::new(MAX_LINE),
            awaiting: VecDeque::new(),
            writable: false,
        }
    }

    pub fn is_open(&self) -> bool {
        self.stream.is_some()
    }

    /// Whether a snapshot was asked for and has not come back.
    pub fn snapshot_pending(&self) -> bool {
        self.awaiting.contains(&Awaiting::Snapshot)
    }

    /// Connects and starts watching.
    pub fn open(&mut self, registry: &Registry) -> io::Result<()> {
        if self.stream.is_some() {
            return Ok(());
        }
        let mut stream = UnixStream::connect(&self.path)?;
        registry.register(&mut stream, self.token, Interest::READABLE)?;
        self.stream = Some(stream);
        self.lines = LineBuffer::new(MAX_LINE);
        self.awaiting.clear();
        self.outbox.clear();
        self.writable = false;
        self.queue(&Request::Watch {}, Awaiting::Watch);
        self.flush(registry)
    }

    pub fn close(&mut self, registry: &Registry) {
        if let Some(mut stream) = self.stream.take() {
            let _ = registry.deregister(&mut stream);
        }
        self.awaiting.clear();
        self.outbox.clear();
    }

    /// Asks for a snapshot (one at a time).
    pub fn request_snapshot(&mut self, registry: &Registry) -> io::Result<()> {
        if self.stream.is_none() || self.snapshot_pending() {
            return Ok(());
        }
        self.queue(&Request::Snapshot {}, Awaiting::Snapshot);
        self.flush(registry)
    }

    /// Asks for the host's status (identity, revision, child).
    pub fn request_status(&mut self, registry: &Registry) -> io::Result<()> {
        if self.stream.is_none() {
            return Ok(());
        }
        self.queue(&Request::Status {}, Awaiting::Status);
        self.flush(registry)
    }

    /// Reads what the host sent, appending events.
    pub fn on_ready(&mut self, registry: &Registry, events: &mut Vec<PtyEvent>) {
        if let Err(err) = self.flush(registry) {
            return self.lose(registry, events, format!("write to pty host: {err}"));
        }
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        let mut chunk = [0u8; 64 * 1024];
        let mut lines = Vec::new();
        let mut lost = None;
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => {
                    lost = Some("pty host closed the connection".to_string());
                    break;
                }
                Ok(n) => self.lines.push(&chunk[..n], &mut lines),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => {
                    lost = Some(format!("read from pty host: {err}"));
                    break;
                }
            }
        }
        for line in lines {
            match line {
                Line::Complete(bytes) => self.on_line(&bytes, events),
                Line::TooLong { len } => {
                    lost = Some(format!("pty host line of {len} bytes"));
                }
            }
        }
        if let Some(why) = lost {
            self.lose(registry, events, why);
        }
    }

    fn on_line(&mut self, bytes: &[u8], events: &mut Vec<PtyEvent>) {
        match serde_json::from_slice::<ServerLine>(bytes) {
            Ok(ServerLine::Push(Push::Revision { .. } | Push::Exit { .. })) => {
                events.push(PtyEvent::Moved)
            }
            Ok(ServerLine::Push(Push::Start { .. })) => {
                events.push(PtyEvent::Started);
                events.push(PtyEvent::Moved);
            }
            Ok(ServerLine::Reply(reply)) => match (self.awaiting.pop_front(), reply) {
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
            Ok(ServerLine::Error(error)) => {
                self.awaiting.pop_front();
                events.push(PtyEvent::Lost(format!(
                    "pty host refused: {}",
                    error.message
                )));
            }
            Err(err) => events.push(PtyEvent::Lost(format!("unreadable pty host line: {err}"))),
        }
    }

    fn queue(&mut self, request: &Request, awaiting: Awaiting) {
        if let Ok(mut line) = serde_json::to_vec(request) {
            line.push(b'\n');
            self.outbox.extend_from_slice(&line);
            self.awaiting.push_back(awaiting);
        }
    }

    fn flush(&mut self, registry: &Registry) -> io::Result<()> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        while !self.outbox.is_empty() {
            match stream.write(&self.outbox) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.outbox.drain(..n);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
        }
        let want = !self.outbox.is_empty();
        if want != self.writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            registry.reregister(stream, self.token, interest)?;
            self.writable = want;
        }
        Ok(())
    }

    fn lose(&mut self, registry: &Registry, events: &mut Vec<PtyEvent>, why: String) {
        self.close(registry);
        events.push(PtyEvent::Lost(why));
    }
}
