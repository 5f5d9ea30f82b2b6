//! The launcher's connection to its app-server: a WebSocket (RFC 6455,
//! the maintained `tungstenite`) over a non-blocking Unix socket, stepped
//! by the launcher's poll loop and never blocking it.
//!
//! `tungstenite` does the protocol: the upgrade, with its
//! `Sec-WebSocket-Accept` checked; masked client frames; fragments;
//! ping, pong and close. This file only feeds it the socket's readiness:
//! a handshake that would block ([`HandshakeError::Interrupted`]) goes on
//! when the socket is ready again, a read runs until `WouldBlock`, and what
//! could not be written waits in `tungstenite`'s buffer until the socket is
//! writable. Text messages only; each is one JSON value.
//!
//! The server is Codex's own app-server, started by the launcher on a 0600
//! socket in the agent's 0700 runtime directory.

use std::io;
use std::path::Path;

use mio::net::UnixStream;
use mio::{Interest, Registry, Token};
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::MidHandshake;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{ClientHandshake, Error, HandshakeError, Message, WebSocket};

/// The largest message accepted (a `hooks/list` answer is a few KiB; a
/// turn's notifications are small): a bigger one ends the connection.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// What the link has to say after the socket was ready.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// The upgrade was answered and checked: messages flow.
    Connected,
    /// The upgrade failed: why. The link is gone.
    Refused(String),
    /// One text message.
    Text(String),
    /// The connection closed (a close frame, the end of the stream, an
    /// error): how. The link is gone.
    Closed(String),
}

enum State {
    Upgrading(MidHandshake<ClientHandshake<UnixStream>>),
    Open(WebSocket<UnixStream>),
    Gone,
}

/// One connection to the app-server.
pub struct Link {
    state: State,
}

impl Link {
    /// Connects to `path` (a local socket answers at once or refuses) and
    /// readies the upgrade, registered under `token`; [`Link::on_ready`]
    /// carries it out, at once and whenever the socket is ready.
    pub fn connect(path: &Path, registry: &Registry, token: Token) -> io::Result<Link> {
        let mut stream = UnixStream::connect(path)?;
        registry.register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)?;
        let request = "ws://localhost/"
            .into_client_request()
            .map_err(io::Error::other)?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let upgrade =
            ClientHandshake::start(stream, request, Some(config)).map_err(io::Error::other)?;
        Ok(Link {
            state: State::Upgrading(upgrade),
        })
    }

    /// The socket was ready (or the link was just made): goes on with the
    /// upgrade, or reads every message there is and writes what waits.
    pub fn on_ready(&mut self, events: &mut Vec<LinkEvent>) {
        if let State::Upgrading(_) = self.state {
            let State::Upgrading(upgrade) = std::mem::replace(&mut self.state, State::Gone) else {
                return;
            };
            match upgrade.handshake() {
                Ok((socket, _response)) => {
                    self.state = State::Open(socket);
                    events.push(LinkEvent::Connected);
                }
                Err(HandshakeError::Interrupted(upgrade)) => {
                    self.state = State::Upgrading(upgrade);
                    return;
                }
                Err(HandshakeError::Failure(err)) => {
                    events.push(LinkEvent::Refused(format!("no WebSocket upgrade: {err}")));
                    return;
                }
            }
        }
        self.read(events);
    }

    /// Reads until the socket has nothing more (answering pings and
    /// writing what waits on the way, as `tungstenite` does on a read).
    fn read(&mut self, events: &mut Vec<LinkEvent>) {
        let State::Open(socket) = &mut self.state else {
            return;
        };
        loop {
            match socket.read() {
                Ok(Message::Text(text)) => events.push(LinkEvent::Text(text.as_str().to_string())),
                // Codex sends text; a binary message that is UTF-8 reads
                // as one, anything else is no message of its.
                Ok(Message::Binary(bytes)) => {
                    if let Ok(text) = std::str::from_utf8(&bytes) {
                        events.push(LinkEvent::Text(text.to_string()));
                    }
                }
                Ok(Message::Close(frame)) => {
                    let why = frame.map_or("a close frame".to_string(), |frame| {
                        format!("a close frame: {} {}", frame.code, frame.reason)
                    });
                    return self.close(why, events);
                }
                Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
                Err(Error::Io(err)) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(Error::Io(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return self.close(closed_why(err), events),
            }
        }
    }

    /// Queues one text message and writes what the socket takes now; the
    /// rest goes with [`Link::flush`] once it is writable. `Err`: the link
    /// cannot send (not open, or closed now: then `events` says so).
    pub fn send(&mut self, text: &str, events: &mut Vec<LinkEvent>) -> Result<(), String> {
        let State::Open(socket) = &mut self.state else {
            return Err("not connected".into());
        };
        match socket.write(Message::text(text)) {
            Ok(()) => {}
            Err(Error::Io(err)) if err.kind() == io::ErrorKind::WouldBlock => {}
            Err(err) => {
                let why = closed_why(err);
                self.close(why.clone(), events);
                return Err(why);
            }
        }
        self.flush(events);
        Ok(())
    }

    /// Writes what waits, as far as the socket takes it.
    pub fn flush(&mut self, events: &mut Vec<LinkEvent>) {
        let State::Open(socket) = &mut self.state else {
            return;
        };
        match socket.flush() {
            Ok(()) => {}
            Err(Error::Io(err)) if err.kind() == io::ErrorKind::WouldBlock => {}
            Err(err) => self.close(closed_why(err), events),
        }
    }

    fn close(&mut self, why: String, events: &mut Vec<LinkEvent>) {
        self.state = State::Gone;
        events.push(LinkEvent::Closed(why));
    }
}

/// How a connection ended, in a few words.
fn closed_why(err: Error) -> String {
    match err {
        Error::ConnectionClosed | Error::AlreadyClosed => "closed".into(),
        Error::Io(err) if err.kind() == io::ErrorKind::UnexpectedEof => "end of stream".into(),
        Error::Protocol(tungstenite::error::ProtocolError::ResetWithoutClosingHandshake) => {
            "end of stream without a close frame".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;

    use mio::{Events, Poll};
    use tungstenite::handshake::server::NoCallback;
    use tungstenite::{ServerHandshake, accept};

    const CLIENT: Token = Token(1);

    impl Link {
        /// Whether messages flow (the upgrade done, the connection not
        /// closed).
        fn is_open(&self) -> bool {
            matches!(self.state, State::Open(_))
        }
    }

    /// A listening socket in a private directory.
    fn listener() -> (tempfile::TempDir, std::path::PathBuf, UnixListener) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ws.sock");
        let listener = UnixListener::bind(&path).expect("bind");
        (dir, path, listener)
    }

    /// The server's end of a WebSocket, upgraded by `tungstenite` itself,
    /// stepped in this thread as the client's end is.
    enum Server {
        Upgrading(MidHandshake<ServerHandshake<std::os::unix::net::UnixStream, NoCallback>>),
        Open(WebSocket<std::os::unix::net::UnixStream>),
    }

    impl Server {
        fn step(self) -> Server {
            match self {
                Server::Upgrading(upgrade) => match upgrade.handshake() {
                    Ok(socket) => Server::Open(socket),
                    Err(HandshakeError::Interrupted(upgrade)) => Server::Upgrading(upgrade),
                    Err(HandshakeError::Failure(err)) => panic!("server upgrade: {err}"),
                },
                open => open,
            }
        }
    }

    /// Polls the client's socket and steps both ends until `done` says so
    /// of what the client read, in one thread; at most `turns` turns.
    fn drive(
        poll: &mut Poll,
        link: &mut Link,
        server: &mut Option<Server>,
        done: impl Fn(&[LinkEvent]) -> bool,
    ) -> Vec<LinkEvent> {
        let mut events = Vec::new();
        link.on_ready(&mut events);
        let mut ready = Events::with_capacity(8);
        for _ in 0..200 {
            if done(&events) {
                return events;
            }
            if let Some(step) = server.take() {
                *server = Some(step.step());
            }
            poll.poll(&mut ready, Some(std::time::Duration::from_millis(20)))
                .expect("poll");
            link.on_ready(&mut events);
        }
        panic!("not done: {events:?}");
    }

    /// The client upgrades against `tungstenite`'s own server (which
    /// checks the key and answers with its accept, which the client
    /// checks), reads a text sent in three fragments with a ping between
    /// them, answers the ping by itself, sends a text, and sees the close.
    #[test]
    fn a_client_upgrades_answers_pings_and_reads_fragmented_text() {
        let (_dir, path, listener) = listener();
        let mut poll = Poll::new().expect("poll");
        let mut link = Link::connect(&path, poll.registry(), CLIENT).expect("connect");
        let (stream, _) = listener.accept().expect("accept");
        stream.set_nonblocking(true).expect("nonblocking");
        let upgrade = match accept(stream) {
            Err(HandshakeError::Interrupted(upgrade)) => upgrade,
            other => panic!("the request is not sent before the client steps: {other:?}"),
        };
        let mut server = Some(Server::Upgrading(upgrade));
        let events = drive(&mut poll, &mut link, &mut server, |events| {
            events.contains(&LinkEvent::Connected)
        });
        assert_eq!(events, [LinkEvent::Connected]);
        assert!(link.is_open());
        let Some(Server::Open(mut socket)) = server.take().map(Server::step) else {
            panic!("the server upgraded");
        };
        // A text in three fragments, a ping between the first two (control
        // frames may come between fragments, RFC 6455 §5.4).
        let fragments = [
            (false, 0x1, &b"{\"a\""[..]),
            (true, 0x9, &b"p!"[..]),
            (false, 0x0, &b":"[..]),
            (true, 0x0, &b"1}"[..]),
        ];
        for (fin, opcode, payload) in fragments {
            let head = [u8::from(fin) << 7 | opcode, payload.len() as u8];
            socket.get_mut().write_all(&head).expect("head");
            socket.get_mut().write_all(payload).expect("payload");
        }
        let mut server = None;
        let events = drive(&mut poll, &mut link, &mut server, |events| {
            !events.is_empty()
        });
        assert_eq!(events, [LinkEvent::Text("{\"a\":1}".into())]);
        let mut events = Vec::new();
        link.send("{\"id\":1}", &mut events).expect("send");
        assert!(events.is_empty(), "{events:?}");
        // The server reads the client's pong, then its text, both masked
        // (tungstenite's server refuses unmasked client frames). Both were
        // written before `send` returned: the reads find them.
        let timeout = Some(std::time::Duration::from_secs(5));
        socket.get_mut().set_nonblocking(false).expect("blocking");
        socket.get_mut().set_read_timeout(timeout).expect("timeout");
        let read = [socket.read().expect("pong"), socket.read().expect("text")];
        assert_eq!(
            read,
            [Message::Pong(b"p!"[..].into()), Message::text("{\"id\":1}")]
        );
        socket.close(None).expect("close");
        socket.flush().expect("flush");
        let events = drive(&mut poll, &mut link, &mut server, |events| {
            !events.is_empty()
        });
        assert!(
            matches!(&events[..], [LinkEvent::Closed(why)] if why.starts_with("a close frame")),
            "{events:?}"
        );
        assert!(!link.is_open());
    }

    /// A server that answers the upgrade with the wrong
    /// `Sec-WebSocket-Accept` is refused; one that hangs up mid-message is
    /// a closed connection.
    #[test]
    fn a_wrong_accept_is_refused_and_a_hang_up_is_a_close() {
        let (_dir, path, listener) = listener();
        let mut poll = Poll::new().expect("poll");
        let mut link = Link::connect(&path, poll.registry(), CLIENT).expect("connect");
        let (mut stream, _) = listener.accept().expect("accept");
        let mut none = None;
        drive(&mut poll, &mut link, &mut none, |_| true);
        let mut request = [0u8; 1024];
        let read = stream.read(&mut request).expect("request");
        assert!(
            String::from_utf8_lossy(&request[..read]).contains("Sec-WebSocket-Key: "),
            "a real upgrade request"
        );
        stream
            .write_all(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                  Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
            )
            .expect("answer");
        let events = drive(&mut poll, &mut link, &mut none, |events| !events.is_empty());
        assert!(
            matches!(&events[..], [LinkEvent::Refused(why)] if why.contains("no WebSocket upgrade")),
            "{events:?}"
        );
        assert!(!link.is_open());

        let mut link = Link::connect(&path, poll.registry(), Token(2)).expect("connect");
        let (stream, _) = listener.accept().expect("accept");
        stream.set_nonblocking(true).expect("nonblocking");
        let Err(HandshakeError::Interrupted(upgrade)) = accept(stream) else {
            panic!("waits for the request");
        };
        let mut server = Some(Server::Upgrading(upgrade));
        drive(&mut poll, &mut link, &mut server, |events| {
            events.contains(&LinkEvent::Connected)
        });
        let Some(Server::Open(mut socket)) = server.take().map(Server::step) else {
            panic!("the server upgraded");
        };
        // Half a text frame, then the end of the stream.
        socket.get_mut().write_all(&[0x81, 10, b'{']).expect("half");
        drop(socket);
        let events = drive(&mut poll, &mut link, &mut none, |events| !events.is_empty());
        assert!(matches!(&events[..], [LinkEvent::Closed(_)]), "{events:?}");
        let mut events = Vec::new();
        assert!(link.send("{}", &mut events).is_err(), "nothing to send on");
        assert!(
            Link::connect(&path.with_extension("absent"), poll.registry(), Token(3)).is_err(),
            "no socket, no link"
        );
    }
}
