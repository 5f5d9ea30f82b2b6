//! One client connection of the host: its buffers, its mode and its
//! interest in readiness.
//!
//! This owns the byte plumbing of a connection (read in bounded chunks,
//! write what the socket takes, queue the rest) and the two backpressure
//! rules: a request client whose replies are not being read is not read
//! from either, and an attach client that falls behind is redrawn instead
//! of buffered. Every buffer of a connection is therefore bounded, whatever
//! the peer does. What the bytes mean is the host's business.

use std::io::{self, Read, Write};

use mio::Interest;
use mio::net::UnixStream;

use crate::pty::wire::{FrameKind, ServerLine, push_frame};

/// Once an attach client has this much output queued, the host stops
/// queueing terminal output for it and redraws the screen from the model
/// when it has caught up, instead of buffering without limit.
pub const MAX_ATTACH_BACKLOG: usize = 1024 * 1024;

/// Once this many reply bytes wait for a control or watch client to read
/// them, the host reads no further request from it until they drain: a
/// peer that pipelines requests and never reads its replies holds at most
/// this much (plus the one reply that crossed it), and its requests wait in
/// its own socket buffer.
pub const MAX_UNREAD_REPLIES: usize = 64 * 1024;

/// Most bytes one read takes from a client socket.
pub const READ_CHUNK: usize = 16 * 1024;

/// How a `fill_once` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// This many bytes were appended to `inbuf`; more may be waiting.
    Read(usize),
    /// The socket said WouldBlock: mio will report the next bytes.
    Drained,
    /// `inbuf` is already at the limit; nothing was read.
    Full,
    /// The peer hung up or the socket failed.
    Closed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// JSON request lines in, reply lines out.
    Control,
    /// JSON request lines in, reply and push lines out.
    Watch,
    /// Frames both ways.
    Attach,
}

pub struct Connection {
    pub stream: UnixStream,
    pub mode: Mode,
    pub peer_pid: i32,
    pub inbuf: Vec<u8>,
    pub outbuf: Vec<u8>,
    /// Close once `outbuf` is flushed (after a fatal error reply or detach).
    pub closing: bool,
    /// The connection failed or hung up; drop it now.
    pub dead: bool,
    /// Reading stopped with bytes possibly still unread (the host's input
    /// queue was full, this client's replies are unread, or its turn's
    /// budget ran out); the host must read again once it may (mio will not
    /// tell it twice).
    pub stalled: bool,
    /// Attach only: output was skipped over the backlog; redraw when flushed.
    pub needs_redraw: bool,
    /// Watch only: the revision last pushed.
    pub pushed_revision: u64,
    pub interest: Interest,
}

impl Connection {
    pub fn new(stream: UnixStream, peer_pid: i32) -> Connection {
        Connection {
            stream,
            mode: Mode::Control,
            peer_pid,
            inbuf: Vec::new(),
            outbuf: Vec::new(),
            closing: false,
            dead: false,
            stalled: false,
            needs_redraw: false,
            pushed_revision: 0,
            interest: Interest::READABLE,
        }
    }

    /// One read of at most [`READ_CHUNK`] bytes, never taking `inbuf` past
    /// `limit`.
    pub fn fill_once(&mut self, limit: usize) -> Fill {
        let room = limit.saturating_sub(self.inbuf.len()).min(READ_CHUNK);
        if room == 0 {
            return Fill::Full;
        }
        let mut chunk = [0u8; READ_CHUNK];
        loop {
            match self.stream.read(&mut chunk[..room]) {
                Ok(0) => return Fill::Closed,
                Ok(n) => {
                    self.inbuf.extend_from_slice(&chunk[..n]);
                    return Fill::Read(n);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Fill::Drained,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Fill::Closed,
            }
        }
    }

    /// Stalled, and not because of its own unread replies: reading it again
    /// may make progress (if the host's input queue has room).
    pub fn may_resume(&self) -> bool {
        self.stalled && !self.replies_unread()
    }

    /// Whether this client's unread replies stop the host from reading its
    /// next request (see [`MAX_UNREAD_REPLIES`]). Attached clients send
    /// keystrokes, which get no reply; their output has its own bound.
    pub fn replies_unread(&self) -> bool {
        self.mode != Mode::Attach && self.outbuf.len() >= MAX_UNREAD_REPLIES
    }

    /// Writes what the socket takes now.
    pub fn flush(&mut self) {
        while !self.outbuf.is_empty() {
            match self.stream.write(&self.outbuf) {
                Ok(0) => {
                    self.dead = true;
                    return;
                }
                Ok(n) => {
                    self.outbuf.drain(..n);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.dead = true;
                    return;
                }
            }
        }
        if self.closing {
            self.dead = true;
        }
    }

    pub fn send_line(&mut self, line: &ServerLine) {
        // Serializing our own wire enums cannot fail: no maps with non-string
        // keys, no non-finite floats.
        if let Ok(mut text) = serde_json::to_vec(line) {
            text.push(b'\n');
            self.outbuf.extend_from_slice(&text);
        }
    }

    /// Queues terminal output for an attach client, or marks it for a
    /// redraw when it is too far behind.
    pub fn send_output(&mut self, bytes: &[u8]) {
        if self.needs_redraw || self.outbuf.len() > MAX_ATTACH_BACKLOG {
            self.needs_redraw = true;
            return;
        }
        push_frame(&mut self.outbuf, FrameKind::Data, bytes);
    }

    /// The readiness this connection needs: always readable, writable only
    /// while output is queued.
    pub fn wanted_interest(&self) -> Interest {
        if self.outbuf.is_empty() {
            Interest::READABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        }
    }
}
