//! A private Unix socket where each connection sends one request line and
//! gets one reply line: the shape of the adapter kit's hook channel (and of
//! the sidecar's status socket).
//!
//! The socket is bound privately (0700 directory, 0600 socket) and every
//! peer's uid must be ours (`SO_PEERCRED`). A request longer than the bound
//! is answered by the caller as an error and never buffered whole. A reply
//! may be given at once or later (a hook that waits for a claim's answer);
//! it is queued and written as the peer reads, never blocking the loop, and
//! the connection closes once it is written. A peer that hangs up before its
//! answer is reported, so the caller can forget what it was doing for it.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Result;
use mio::net::{UnixListener, UnixStream};
use mio::{Interest, Registry, Token};

use crate::pty::socket::{bind_private, peer_credentials};
use crate::sidecar::lines::{Line, LineBuffer};

/// What happened on the server.
#[derive(Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// A peer's one request line (without its newline).
    Request { peer: Token, line: Vec<u8> },
    /// A peer's request was longer than the bound; answer it with an error.
    TooLong { peer: Token, len: usize },
    /// A peer hung up before it was answered.
    Gone { peer: Token },
}

struct Peer {
    stream: UnixStream,
    lines: LineBuffer,
    asked: bool,
    /// The reply; `outbox[sent..]` is still to be written.
    outbox: Vec<u8>,
    sent: usize,
    answered: bool,
}

pub struct LineServer {
    listener: UnixListener,
    token: Token,
    peers: HashMap<Token, Peer>,
    next_token: usize,
    uid: u32,
    max_request: usize,
}

impl LineServer {
    /// Binds `path` privately. Peer tokens are counted from `first_peer_token`
    /// upwards, so the caller must keep the tokens above it free.
    pub fn bind(
        path: &Path,
        registry: &Registry,
        token: Token,
        first_peer_token: usize,
        max_request: usize,
    ) -> Result<LineServer> {
        let mut listener = bind_private(path)?;
        registry.register(&mut listener, token, Interest::READABLE)?;
        Ok(LineServer {
            listener,
            token,
            peers: HashMap::new(),
            next_token: first_peer_token,
            uid: nix::unistd::geteuid().as_raw(),
            max_request,
        })
    }

    pub fn owns(&self, token: Token) -> bool {
        token == self.token || self.peers.contains_key(&token)
    }

    /// Connections open now (answered or not).
    pub fn peers(&self) -> usize {
        self.peers.len()
    }

    /// Handles readiness on the listener or a peer, appending what happened.
    pub fn on_ready(&mut self, registry: &Registry, token: Token, events: &mut Vec<ServerEvent>) {
        if token == self.token {
            return self.accept(registry);
        }
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        let closed = read_request(peer, token, events);
        let written = write_out(peer);
        if closed && !peer.answered {
            events.push(ServerEvent::Gone { peer: token });
        }
        self.settle(registry, token, closed || written);
    }

    /// Queues `reply` (one line, no newline) for the peer and writes what it
    /// can; the connection closes once it is written. A peer that is gone is
    /// ignored.
    pub fn reply(&mut self, registry: &Registry, token: Token, reply: &[u8]) {
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        if peer.answered {
            return;
        }
        peer.answered = true;
        peer.outbox = Vec::with_capacity(reply.len() + 1);
        peer.outbox.extend_from_slice(reply);
        peer.outbox.push(b'\n');
        peer.sent = 0;
        let done = write_out(peer);
        self.settle(registry, token, done);
    }

    fn settle(&mut self, registry: &Registry, token: Token, done: bool) {
        if done {
            if let Some(mut peer) = self.peers.remove(&token) {
                let _ = registry.deregister(&mut peer.stream);
            }
            return;
        }
        if let Some(peer) = self.peers.get_mut(&token) {
            let interest = if peer.sent < peer.outbox.len() {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let _ = registry.reregister(&mut peer.stream, token, interest);
        }
    }

    fn accept(&mut self, registry: &Registry) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    if peer_credentials(&stream).ok().map(|(uid, _)| uid) != Some(self.uid) {
                        let _ = stream.write_all(
                            b"{\"error\":\"forbidden\",\"message\":\"peer uid is not ours\"}\n",
                        );
                        continue;
                    }
                    let token = Token(self.next_token);
                    self.next_token += 1;
                    if registry
                        .register(&mut stream, token, Interest::READABLE)
                        .is_ok()
                    {
                        self.peers.insert(
                            token,
                            Peer {
                                stream,
                                lines: LineBuffer::new(self.max_request),
                                asked: false,
                                outbox: Vec::new(),
                                sent: 0,
                                answered: false,
                            },
                        );
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }
}

/// Reads what the peer sent, reporting its first line once. Returns whether
/// the peer closed its side or failed. Bytes after the first line are read
/// and dropped, so a chatty peer cannot make the server hold them.
fn read_request(peer: &mut Peer, token: Token, events: &mut Vec<ServerEvent>) -> bool {
    let mut chunk = [0u8; 16 * 1024];
    let mut lines = Vec::new();
    let mut closed = false;
    loop {
        match peer.stream.read(&mut chunk) {
            Ok(0) => {
                closed = true;
                break;
            }
            Ok(n) if !peer.asked => peer.lines.push(&chunk[..n], &mut lines),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
            Err(_) => {
                closed = true;
                break;
            }
        }
    }
    if closed && !peer.asked {
        lines.extend(peer.lines.finish());
    }
    if !peer.asked
        && let Some(line) = lines.into_iter().next()
    {
        peer.asked = true;
        peer.lines = LineBuffer::new(0);
        events.push(match line {
            Line::Complete(line) => ServerEvent::Request { peer: token, line },
            Line::TooLong { len } => ServerEvent::TooLong { peer: token, len },
        });
    }
    closed
}

/// Writes queued reply bytes. Returns true once the reply is fully written
/// (the connection is then closed) or the peer is gone.
fn write_out(peer: &mut Peer) -> bool {
    while peer.sent < peer.outbox.len() {
        match peer.stream.write(&peer.outbox[peer.sent..]) {
            Ok(0) => return true,
            Ok(n) => peer.sent += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
    peer.answered
}
