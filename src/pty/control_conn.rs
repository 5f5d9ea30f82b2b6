//! One non-blocking connection to a PTY host's control socket, for a mio
//! loop: requests are queued and written as the socket takes them, and
//! whatever arrives is cut into server lines.
//!
//! The sidecar's link and the adapter kit's screen view both stand on it;
//! what a line means, and what was asked, is theirs. Writability is asked
//! for only while queued bytes wait (derived from the queue, not toggled),
//! so a quiet connection never wakes the loop.

use std::io::{self, Read, Write};
use std::path::Path;

use mio::net::UnixStream;
use mio::{Interest, Registry, Token};

use crate::lines::{Line, LineBuffer};
use crate::pty::wire::{Request, ServerLine};

/// What one read brought.
#[derive(Debug)]
pub enum Received {
    Line(Box<ServerLine>),
    /// A line that is not a server line (kept as the parse error).
    Unreadable(String),
}

pub struct ControlConn {
    token: Token,
    stream: UnixStream,
    outbox: Vec<u8>,
    lines: LineBuffer,
    writable: bool,
}

impl ControlConn {
    /// Connects to the host at `path`, registered readable on `token`.
    /// Lines longer than `max_line` end the connection when read.
    pub fn connect(
        path: &Path,
        registry: &Registry,
        token: Token,
        max_line: usize,
    ) -> io::Result<ControlConn> {
        let mut stream = UnixStream::connect(path)?;
        registry.register(&mut stream, token, Interest::READABLE)?;
        Ok(ControlConn {
            token,
            stream,
            outbox: Vec::new(),
            lines: LineBuffer::new(max_line),
            writable: false,
        })
    }

    /// Queues one request; [`ControlConn::flush`] writes it.
    pub fn queue(&mut self, request: &Request) {
        // Serializing our own request types cannot fail.
        if let Ok(mut line) = serde_json::to_vec(request) {
            line.push(b'\n');
            self.outbox.extend_from_slice(&line);
        }
    }

    /// Writes what the socket takes, and asks for writability while bytes
    /// still wait. An error means the connection is unusable.
    pub fn flush(&mut self, registry: &Registry) -> io::Result<()> {
        let mut sent = 0;
        while sent < self.outbox.len() {
            match self.stream.write(&self.outbox[sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => sent += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
        }
        self.outbox.drain(..sent);
        let want = !self.outbox.is_empty();
        if want != self.writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            registry.reregister(&mut self.stream, self.token, interest)?;
            self.writable = want;
        }
        Ok(())
    }

    /// Reads until `WouldBlock`, appending what arrived. `Err(why)` when the
    /// host closed the connection, it failed, or a line was too long; lines
    /// read before that are still appended.
    pub fn read(&mut self, out: &mut Vec<Received>) -> Result<(), String> {
        let mut chunk = [0u8; 64 * 1024];
        let mut lines = Vec::new();
        let mut lost = None;
        loop {
            match self.stream.read(&mut chunk) {
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
                Line::Complete(bytes) => out.push(match serde_json::from_slice(&bytes) {
                    Ok(line) => Received::Line(Box::new(line)),
                    Err(err) => Received::Unreadable(err.to_string()),
                }),
                Line::TooLong { len } => {
                    lost.get_or_insert(format!("pty host line of at least {len} bytes"));
                }
            }
        }
        lost.map_or(Ok(()), Err)
    }

    /// Deregisters and drops the connection.
    pub fn close(mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.stream);
    }
}
