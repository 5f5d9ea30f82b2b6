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
//! buffer. At most [`MAX_PEERS`] connections are open at once. A new one
//! past that closes a silent one (connected, asked nothing), else one whose
//! reply sat unread for a second, else it is answered `busy` at once and
//! the asker tries again (`control::status_listing_within`): nobody is cut
//! off in the middle of a reply it is reading, and peers that never read
//! cannot keep the socket from answering anyone else.

use std::path::Path;

use anyhow::Result;
use mio::{Registry, Token};
use serde::Deserialize;

use crate::core::status::MessageWindow;
use crate::line_server::{Limits, LineServer, ServerEvent, WhenFull};
use crate::lines::Line;
use crate::pty::wire::is_object_text;

/// The longest request line accepted.
pub const MAX_REQUEST: usize = 4096;
/// Most connections open at once; each holds at most one status document.
pub const MAX_PEERS: usize = 8;

/// A request a peer may make.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StatusRequest {
    /// The status, as JSON, listing the unread files of `messages`
    /// (every one when it is absent; all are counted in any case).
    Status {
        #[serde(default)]
        messages: Option<MessageWindow>,
    },
}

/// The status socket: a [`LineServer`] that reads [`StatusRequest`]s and
/// answers malformed and over-long ones itself.
pub struct StatusServer {
    server: LineServer,
}

impl StatusServer {
    /// Binds `path` privately. Peer tokens start at `first_peer_token`.
    pub fn bind(
        path: &Path,
        registry: &Registry,
        token: Token,
        first_peer_token: usize,
    ) -> Result<StatusServer> {
        let limits = Limits {
            max_request: MAX_REQUEST,
            max_peers: MAX_PEERS,
            when_full: WhenFull::RefuseBusy,
        };
        Ok(StatusServer {
            server: LineServer::bind(path, registry, token, first_peer_token, limits)?,
        })
    }

    pub fn owns(&self, token: Token) -> bool {
        self.server.owns(token)
    }

    /// Connections wait to be accepted (a flood stopped the last accept
    /// loop at its budget): call [`StatusServer::on_ready`] with the
    /// listener's token before sleeping.
    pub fn has_backlog(&self) -> bool {
        self.server.has_backlog()
    }

    /// Handles readiness on the listener or a peer. Returns each request
    /// that arrived, with its peer (a peer's request is read as soon as it
    /// is accepted, so the listener's readiness can bring several); answer
    /// each with [`StatusServer::reply`].
    pub fn on_ready(&mut self, registry: &Registry, token: Token) -> Vec<(Token, StatusRequest)> {
        let mut events = Vec::new();
        self.server.on_ready(registry, token, &mut events);
        let mut requests = Vec::new();
        for event in events {
            let (peer, judged) = match event {
                ServerEvent::Request { peer, line } => (peer, judge_request(Line::Complete(line))),
                ServerEvent::TooLong { peer, len } => (peer, judge_request(Line::TooLong { len })),
                // Status replies ask for no receipt.
                ServerEvent::Gone { .. }
                | ServerEvent::Receipt { .. }
                | ServerEvent::NoReceipt { .. } => continue,
            };
            match judged {
                Ok(parsed) => requests.push((peer, parsed)),
                Err(refusal) => self.server.reply(registry, peer, &refusal),
            }
        }
        requests
    }

    /// Queues `reply` (one line, no newline) for the peer and writes what it can.
    pub fn reply(&mut self, registry: &Registry, token: Token, reply: &[u8]) {
        self.server.reply(registry, token, reply);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Only `{"op":"status"}` asks for the status: not the array serde
    /// would also read as it (found by AFL++), not one with more fields.
    #[test]
    fn only_the_status_object_is_a_request() {
        let judged = |line: &[u8]| judge_request(Line::Complete(line.to_vec()));
        assert_eq!(
            judged(br#"{"op":"status"}"#),
            Ok(StatusRequest::Status { messages: None })
        );
        assert_eq!(
            judged(br#"{"op":"status","messages":{"ends":5}}"#),
            Ok(StatusRequest::Status {
                messages: Some(MessageWindow::Ends(5))
            })
        );
        assert_eq!(
            judged(br#"{"op":"status","messages":{"page":{"after":"a.md","limit":2}}}"#),
            Ok(StatusRequest::Status {
                messages: Some(MessageWindow::Page {
                    after: Some(crate::core::message::MessageName::new("a.md").unwrap()),
                    limit: 2
                })
            })
        );
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
