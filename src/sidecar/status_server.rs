//! The sidecar's own control socket (`sidecar.sock`): `ding status` and
//! `ding up` ask it for the live status and the running fingerprint.
//!
//! Each connection sends one request line and gets one reply line, then the
//! sidecar closes it. The socket is private (0700 directory, 0600 socket) and
//! every peer's uid must be the sidecar's, exactly as for the PTY host.
//! Replies are queued and written as the peer reads, never blocking the loop.
//!
//! What a peer can make the sidecar hold is bounded: its request line (at
//! most [`MAX_REQUEST`] bytes, refused as soon as it passes that, newline or
//! not) and one reply. Nothing is read after the request, so a peer that
//! pipelines more and never reads has its bytes wait in its own socket
//! buffer. At most [`MAX_PEERS`] connections are open at once; a new one
//! past that closes the oldest, so peers that never read cannot keep the
//! socket from answering anyone else.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Result;
use mio::net::{UnixListener, UnixStream};
use mio::{Interest, Registry, Token};
use serde::Deserialize;

use super::lines::{Line, LineBuffer};
use crate::pty::socket::{bind_private, peer_credentials};
use crate::pty::wire::is_object_text;

/// The longest request line accepted.
pub const MAX_REQUEST: usize = 4096;
/// Most connections open at once; each holds at most one status document.
pub const MAX_PEERS: usize = 8;

/// A request a peer may make.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StatusRequest {
    /// The whole status, as JSON.
    Status {},
}

struct Peer {
    stream: UnixStream,
    lines: LineBuffer,
    /// The reply; `outbox[sent..]` is still to be written. An offset rather
    /// than draining the front, which would move a many-megabyte status
    /// once per socket-buffer's worth written.
    outbox: Vec<u8>,
    sent: usize,
    answered: bool,
}

impl Peer {
    fn unsent(&self) -> &[u8] {
        &self.outbox[self.sent.min(self.outbox.len())..]
    }
}

pub struct StatusServer {
    listener: UnixListener,
    token: Token,
    /// By token; tokens only grow, so the first is the oldest.
    peers: BTreeMap<Token, Peer>,
    next_token: usize,
    uid: u32,
}

impl StatusServer {
    /// Binds `path` privately. Peer tokens start at `first_peer_token`.
    pub fn bind(
        path: &Path,
        registry: &Registry,
        token: Token,
        first_peer_token: usize,
    ) -> Result<StatusServer> {
        let mut listener = bind_private(path)?;
        registry.register(&mut listener, token, Interest::READABLE)?;
        Ok(StatusServer {
            listener,
            token,
            peers: BTreeMap::new(),
            next_token: first_peer_token,
            uid: nix::unistd::geteuid().as_raw(),
        })
    }

    pub fn owns(&self, token: Token) -> bool {
        token == self.token || self.peers.contains_key(&token)
    }

    /// Handles readiness on the listener or a peer. Returns the peer's
    /// request when one arrived; answer it with [`StatusServer::reply`].
    pub fn on_ready(&mut self, registry: &Registry, token: Token) -> Option<StatusRequest> {
        if token == self.token {
            self.accept(registry);
            return None;
        }
        let peer = self.peers.get_mut(&token)?;
        let (request, closed) = read_request(peer);
        if request.is_some() {
            return request;
        }
        let done = closed || write_out(peer);
        self.settle(registry, token, done);
        None
    }

    /// Queues `reply` (one line, no newline) for the peer and writes what it can.
    pub fn reply(&mut self, registry: &Registry, token: Token, mut reply: Vec<u8>) {
        let Some(peer) = self.peers.get_mut(&token) else {
            return;
        };
        reply.push(b'\n');
        peer.outbox = reply;
        peer.sent = 0;
        let done = write_out(peer);
        self.settle(registry, token, done);
    }

    fn settle(&mut self, registry: &Registry, token: Token, done: bool) {
        if done {
            if let Some(mut peer) = self.peers.remove(&token) {
                let _ = registry.deregister(&mut peer.stream);
            }
        } else if let Some(peer) = self.peers.get_mut(&token) {
            // Once answered, only the reply matters: the peer's further
            // bytes are never read, and no longer wake the loop.
            let interest = if peer.answered {
                Interest::WRITABLE
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
                        let _ = stream.write_all(b"{\"error\":\"forbidden\",\"message\":\"peer uid is not the sidecar's\"}\n");
                        continue;
                    }
                    if self.peers.len() >= MAX_PEERS
                        && let Some((_, mut oldest)) = self.peers.pop_first()
                    {
                        let _ = registry.deregister(&mut oldest.stream);
                    }
                    let token = Token(self.next_token);
                    self.next_token += 1;
                    if registry
                        .register(&mut stream, token, Interest::READABLE)
                        .is_ok()
                    {
                        let peer = Peer {
                            stream,
                            lines: LineBuffer::new(MAX_REQUEST),
                            outbox: Vec::new(),
                            sent: 0,
                            answered: false,
                        };
                        self.peers.insert(token, peer);
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }
}

/// Reads what the peer sent, up to its first line and never past it.
/// Returns that request (once), and whether the peer closed its side or
/// failed before sending one.
fn read_request(peer: &mut Peer) -> (Option<StatusRequest>, bool) {
    if peer.answered {
        return (None, false);
    }
    let mut chunk = [0u8; MAX_REQUEST];
    let mut lines = Vec::new();
    while lines.is_empty() {
        match peer.stream.read(&mut chunk) {
            Ok(0) => return (None, true),
            Ok(n) => peer.lines.push(&chunk[..n], &mut lines),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return (None, false),
            Err(_) => return (None, true),
        }
    }
    // Whatever followed the first line in this chunk is dropped unread.
    let Some(line) = lines.into_iter().next() else {
        return (None, false);
    };
    peer.answered = true;
    match judge_request(line) {
        Ok(request) => (Some(request), false),
        Err(mut reply) => {
            reply.push(b'\n');
            peer.outbox = reply;
            peer.sent = 0;
            (None, false)
        }
    }
}

/// A peer's first line: the request, or the error line (no newline) to
/// answer with: `malformed-request` for anything but a known request, and
/// `oversized-request` for a line past [`MAX_REQUEST`].
pub fn judge_request(line: Line) -> Result<StatusRequest, Vec<u8>> {
    let error = match line {
        // serde also reads the request from an array (`["status"]`).
        Line::Complete(bytes) if !is_object_text(&bytes) => serde_json::json!({
            "error": "malformed-request",
            "message": "a request is a JSON object",
        }),
        Line::Complete(bytes) => match serde_json::from_slice::<StatusRequest>(&bytes) {
            Ok(request) => return Ok(request),
            Err(err) => {
                serde_json::json!({"error": "malformed-request", "message": err.to_string()})
            }
        },
        Line::TooLong { .. } => serde_json::json!({"error": "oversized-request"}),
    };
    Err(error.to_string().into_bytes())
}

/// Writes queued reply bytes. Returns true once the reply is fully written
/// (the connection is then closed) or the peer is gone.
fn write_out(peer: &mut Peer) -> bool {
    while !peer.unsent().is_empty() {
        let unsent = peer.outbox.get(peer.sent..).unwrap_or_default();
        match peer.stream.write(unsent) {
            Ok(0) => return true,
            Ok(n) => peer.sent += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
    peer.answered
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only `{"op":"status"}` asks for the status: not the array serde
    /// would also read as it (found by AFL++), not one with more fields.
    #[test]
    fn only_the_status_object_is_a_request() {
        let judged = |line: &[u8]| judge_request(Line::Complete(line.to_vec()));
        assert_eq!(judged(br#"{"op":"status"}"#), Ok(StatusRequest::Status {}));
        for line in [
            &br#"["status"]"#[..],
            br#"{"op":"status","x":1}"#,
            b"status",
            br#"{"op":0}"#,
        ] {
            let reply = judged(line).expect_err("refused");
            let reply: serde_json::Value = serde_json::from_slice(&reply).expect("JSON");
            assert_eq!(reply["error"], "malformed-request", "{line:?}");
        }
        let reply = judge_request(Line::TooLong {
            len: MAX_REQUEST + 1,
        })
        .expect_err("refused");
        assert_eq!(reply, br#"{"error":"oversized-request"}"#);
    }
}
