//! A private Unix socket where each connection sends one request line and
//! gets one reply line: the shape of the sidecar's status socket and of the
//! adapter kit's hook channel.
//!
//! The socket is bound privately (0700 directory, 0600 socket) and every
//! peer's uid must be ours (`SO_PEERCRED`). What a peer can make the server
//! hold is bounded: its request line (at most `max_request` bytes, refused
//! as soon as it passes that, newline or not) and one reply. Nothing is read
//! past the request: a peer that pipelines more has its bytes wait in its
//! own socket buffer, and after the reply is queued the connection no longer
//! wakes the loop for reading. At most `max_peers` connections are open at
//! once; a new one past that closes the oldest, so peers that never read
//! cannot keep the socket from answering anyone else.
//!
//! A reply may be given at once or later (a hook that waits for a claim's
//! answer); it is written as the peer reads, never blocking the loop, and the
//! connection closes once it is written. A peer that hangs up before its
//! answer is reported, so the caller can forget what it was doing for it.

use std::collections::BTreeMap;
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

/// The bounds of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest request line, newline excluded.
    pub max_request: usize,
    /// The most connections open at once.
    pub max_peers: usize,
}

struct Peer {
    stream: UnixStream,
    lines: LineBuffer,
    /// Whether its request line has been taken.
    asked: bool,
    /// The reply; `outbox[sent..]` is still to be written. An offset rather
    /// than draining the front, which would move a many-megabyte reply once
    /// per socket-buffer's worth written.
    outbox: Vec<u8>,
    sent: usize,
    answered: bool,
}

pub struct LineServer {
    listener: UnixListener,
    token: Token,
    /// By token; tokens only grow, so the first is the oldest.
    peers: BTreeMap<Token, Peer>,
    next_token: usize,
    uid: u32,
    limits: Limits,
}

impl LineServer {
    /// Binds `path` privately. Peer tokens are counted from `first_peer_token`
    /// upwards, so the caller must keep the tokens above it free.
    pub fn bind(
        path: &Path,
        registry: &Registry,
        token: Token,
        first_peer_token: usize,
        limits: Limits,
    ) -> Result<LineServer> {
        let mut listener = bind_private(path)?;
        registry.register(&mut listener, token, Interest::READABLE)?;
        Ok(LineServer {
            listener,
            token,
            peers: BTreeMap::new(),
            next_token: first_peer_token,
            uid: nix::unistd::geteuid().as_raw(),
            limits,
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
            return self.accept(registry, events);
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
            // Until its answer, a peer is watched for hanging up; once
            // answered, only the reply matters.
            let interest = if peer.answered {
                Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let _ = registry.reregister(&mut peer.stream, token, interest);
        }
    }

    fn accept(&mut self, registry: &Registry, events: &mut Vec<ServerEvent>) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    if peer_credentials(&stream).ok().map(|(uid, _)| uid) != Some(self.uid) {
                        let _ = stream.write_all(
                            b"{\"error\":\"forbidden\",\"message\":\"peer uid is not ours\"}\n",
                        );
                        continue;
                    }
                    if self.peers.len() >= self.limits.max_peers
                        && let Some((oldest, mut peer)) = self.peers.pop_first()
                    {
                        let _ = registry.deregister(&mut peer.stream);
                        if !peer.answered {
                            events.push(ServerEvent::Gone { peer: oldest });
                        }
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
                                lines: LineBuffer::new(self.limits.max_request),
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

/// Reads what the peer sent, up to its first line and never past it,
/// reporting that line once. After it, a read only looks for the peer
/// hanging up (a byte it sends then is dropped). Returns whether the peer
/// closed its side or failed.
fn read_request(peer: &mut Peer, token: Token, events: &mut Vec<ServerEvent>) -> bool {
    let mut chunk = [0u8; 4096];
    let mut lines = Vec::new();
    loop {
        if peer.asked {
            // One byte at a time: whatever follows the request is not ours
            // to buffer, only the hang-up matters.
            let mut probe = [0u8; 1];
            match peer.stream.read(&mut probe) {
                Ok(0) => return true,
                Ok(_) => return false,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
                Err(_) => return true,
            }
        }
        match peer.stream.read(&mut chunk) {
            Ok(0) => {
                lines.extend(peer.lines.finish());
                if let Some(line) = lines.into_iter().next() {
                    take(peer, token, line, events);
                }
                return true;
            }
            Ok(n) => peer.lines.push(&chunk[..n], &mut lines),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
        // Whatever followed the first line in this chunk is dropped unread.
        if let Some(line) = lines.drain(..).next() {
            take(peer, token, line, events);
            return false;
        }
    }
}

fn take(peer: &mut Peer, token: Token, line: Line, events: &mut Vec<ServerEvent>) {
    peer.asked = true;
    peer.lines = LineBuffer::new(0);
    events.push(match line {
        Line::Complete(line) => ServerEvent::Request { peer: token, line },
        Line::TooLong { len } => ServerEvent::TooLong { peer: token, len },
    });
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
