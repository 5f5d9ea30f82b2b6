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
//! once; a new one past that closes the oldest that still has not sent its
//! request when looked at again, of the process holding the most such
//! connections (else the oldest), so peers that connect and say nothing,
//! however many, cannot keep the socket from answering anyone else. A new
//! connection's request is read as soon as it is accepted, a silent one is
//! read again before it is closed, and at most `max_peers` connections are
//! accepted per call (see [`LineServer::has_backlog`]): a client that
//! connects and asks is answered even while a flood of silent connections
//! is being accepted around it.
//!
//! A reply may be given at once or later (a hook that waits for a claim's
//! answer); it is written as the peer reads, never blocking the loop, and the
//! connection closes once it is written. A peer that hangs up (or fails)
//! before its reply is written in full is reported as [`ServerEvent::Gone`],
//! so the caller knows the reply never arrived and can undo what it did
//! for it.
//!
//! A reply can also ask for a receipt ([`LineServer::reply_for_receipt`]):
//! the connection then stays open after the reply, for one short line by
//! which the peer says it passed the reply on ([`ServerEvent::Receipt`]).
//! A peer that closes without one is [`ServerEvent::NoReceipt`]: it got
//! the bytes, but nothing says they went further. The hook channel uses
//! it for answers that carry claimed work.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use mio::net::{UnixListener, UnixStream};
use mio::{Interest, Registry, Token};

use crate::lines::{Line, LineBuffer};
use crate::private_socket::{bind_private, peer_credentials};

/// What happened on the server.
#[derive(Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// A peer's one request line (without its newline).
    Request { peer: Token, line: Vec<u8> },
    /// A peer's request was longer than the bound; answer it with an error.
    TooLong { peer: Token, len: usize },
    /// A peer hung up (or its connection failed) before its reply was
    /// written in full: whatever the reply said did not reach it.
    Gone { peer: Token },
    /// A peer that was asked for a receipt sent it: the reply went on.
    Receipt { peer: Token },
    /// A peer that was asked for a receipt read the reply and closed (or
    /// sent something else) without one.
    NoReceipt { peer: Token },
}

/// The longest receipt line a peer may send.
pub const MAX_RECEIPT_BYTES: usize = 64;

/// The bounds of one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest request line, newline excluded.
    pub max_request: usize,
    /// The most connections open at once.
    pub max_peers: usize,
    /// What a new connection gets when `max_peers` are open and none of
    /// them is silent.
    pub when_full: WhenFull,
}

/// What a new connection gets when all `max_peers` open connections have
/// asked (a silent one is always closed first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenFull {
    /// The oldest is closed: a caller that holds its connection open for
    /// long by design (a parked hook call) makes room for a newer one.
    CloseOldest,
    /// A reply none has read for [`STALLED_AFTER`] is closed to make room;
    /// without one, the new connection is answered [`BUSY_REPLY`] at once
    /// and closed, and the asker tries again. Nobody is cut off in the
    /// middle of a reply it is reading, nobody waits without knowing why,
    /// and peers that ask and never read hold no slot for long (the status
    /// socket).
    RefuseBusy,
}

/// How long a reply may sit unread, its reader making no progress, before
/// its connection is closed to make room for another.
pub const STALLED_AFTER: Duration = Duration::from_secs(1);

/// What a connection refused for [`WhenFull::RefuseBusy`] reads.
pub const BUSY_REPLY: &[u8] =
    b"{\"error\":\"busy\",\"message\":\"every connection is being answered; ask again\"}\n";

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
    /// The reply asked for a receipt, read once the reply is written.
    wants_receipt: bool,
    receipt: Vec<u8>,
    /// The connecting process (`SO_PEERCRED`), to make room fairly.
    pid: i32,
    /// When its reply last went out in part (or it connected): a reader
    /// that takes nothing for [`STALLED_AFTER`] is stalled.
    progress_at: Instant,
}

/// Where a peer's reply stands after a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writing {
    /// Bytes of the reply (or the whole reply, not given yet) wait.
    Pending,
    /// All of it is written.
    Written,
    /// The connection failed before all of it was written.
    Failed,
}

pub struct LineServer {
    listener: UnixListener,
    token: Token,
    /// By token; tokens only grow, so the first is the oldest.
    peers: BTreeMap<Token, Peer>,
    next_token: usize,
    uid: u32,
    limits: Limits,
    /// The last accept loop stopped at its budget, not at WouldBlock.
    accept_backlog: bool,
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
            accept_backlog: false,
        })
    }

    pub fn owns(&self, token: Token) -> bool {
        token == self.token || self.peers.contains_key(&token)
    }

    /// Whether connections may wait to be accepted: the last accept loop
    /// stopped at its budget. Call [`LineServer::on_ready`] with the
    /// listener's token then, before sleeping (an edge-triggered listener
    /// says nothing more about them).
    pub fn has_backlog(&self) -> bool {
        self.accept_backlog
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
        let writing = write_out(peer);
        let closed = if writing == Writing::Written && peer.wants_receipt {
            read_receipt(peer, token, events)
        } else {
            read_request(peer, token, events)
        };
        let ended = closed || writing == Writing::Failed;
        if ended && writing != Writing::Written {
            events.push(ServerEvent::Gone { peer: token });
        } else if closed && peer.wants_receipt && !events_has_receipt(events, token) {
            events.push(ServerEvent::NoReceipt { peer: token });
        }
        let done = ended || (writing == Writing::Written && !peer.wants_receipt);
        self.settle(registry, token, done);
    }

    /// Queues `reply` (one line, no newline) for the peer and writes what it
    /// can; the connection closes once it is written. A peer that is gone is
    /// ignored.
    pub fn reply(&mut self, registry: &Registry, token: Token, reply: &[u8]) {
        let mut events = Vec::new();
        self.queue_reply(registry, token, reply, false, &mut events);
    }

    /// Queues `reply` like [`LineServer::reply`], but keeps the connection
    /// open once it is written, for the peer's receipt line. Appends
    /// [`ServerEvent::Gone`] at once when the connection has already
    /// failed. The outcome comes later as `Receipt`, `NoReceipt` or
    /// `Gone`; [`LineServer::close`] gives up waiting.
    pub fn reply_for_receipt(
        &mut self,
        registry: &Registry,
        token: Token,
        reply: &[u8],
        events: &mut Vec<ServerEvent>,
    ) {
        self.queue_reply(registry, token, reply, true, events);
    }

    fn queue_reply(
        &mut self,
        registry: &Registry,
        token: Token,
        reply: &[u8],
        wants_receipt: bool,
        events: &mut Vec<ServerEvent>,
    ) {
        let Some(peer) = self.peers.get_mut(&token) else {
            if wants_receipt {
                events.push(ServerEvent::Gone { peer: token });
            }
            return;
        };
        if peer.answered {
            return;
        }
        peer.answered = true;
        peer.wants_receipt = wants_receipt;
        peer.outbox = Vec::with_capacity(reply.len() + 1);
        peer.outbox.extend_from_slice(reply);
        peer.outbox.push(b'\n');
        peer.sent = 0;
        let writing = write_out(peer);
        if writing == Writing::Failed {
            events.push(ServerEvent::Gone { peer: token });
        }
        let done = writing == Writing::Failed || (writing == Writing::Written && !wants_receipt);
        self.settle(registry, token, done);
    }

    /// Closes the connection of `token`, answered or not, reporting
    /// nothing.
    pub fn close(&mut self, registry: &Registry, token: Token) {
        self.settle(registry, token, true);
    }

    fn settle(&mut self, registry: &Registry, token: Token, done: bool) {
        if done {
            if let Some(mut peer) = self.peers.remove(&token) {
                let _ = registry.deregister(&mut peer.stream);
            }
            return;
        }
        if let Some(peer) = self.peers.get_mut(&token) {
            // Until its answer, a peer is watched for hanging up; while
            // its reply is written, only the reply matters; after it, a
            // peer that owes a receipt is read for it.
            let interest = if !peer.answered || peer.sent >= peer.outbox.len() {
                Interest::READABLE
            } else {
                Interest::WRITABLE
            };
            let _ = registry.reregister(&mut peer.stream, token, interest);
        }
    }

    /// Makes room for a new connection: closes the oldest connection that
    /// has still not sent its request when looked at now (one that has is
    /// heard instead, and kept), of the process that holds the most such
    /// connections; else the oldest of all. A process that floods the
    /// socket with silent connections thus closes its own, never the one a
    /// client opened a moment before writing its request.
    fn make_room(&mut self, registry: &Registry, events: &mut Vec<ServerEvent>) {
        if self.close_a_silent_peer(registry, events) {
            return;
        }
        if let Some((oldest, mut peer)) = self.peers.pop_first() {
            let _ = registry.deregister(&mut peer.stream);
            if !peer.answered || peer.sent < peer.outbox.len() {
                events.push(ServerEvent::Gone { peer: oldest });
            } else if peer.wants_receipt {
                events.push(ServerEvent::NoReceipt { peer: oldest });
            }
        }
    }

    /// Closes the oldest connection whose reply waits, unread, its reader
    /// having taken nothing of it for [`STALLED_AFTER`]. Returns whether
    /// one was closed.
    fn close_a_stalled_reader(
        &mut self,
        registry: &Registry,
        events: &mut Vec<ServerEvent>,
    ) -> bool {
        let stalled = self.peers.iter().find(|(_, peer)| {
            peer.answered
                && peer.sent < peer.outbox.len()
                && peer.progress_at.elapsed() >= STALLED_AFTER
        });
        let Some(token) = stalled.map(|(token, _)| *token) else {
            return false;
        };
        events.push(ServerEvent::Gone { peer: token });
        self.settle(registry, token, true);
        true
    }

    /// Closes the oldest connection of the process holding the most that
    /// have still not sent their request when looked at now (one that has
    /// is heard instead, and kept). Returns whether one was closed.
    fn close_a_silent_peer(&mut self, registry: &Registry, events: &mut Vec<ServerEvent>) -> bool {
        let mut silent_by_pid: BTreeMap<i32, usize> = BTreeMap::new();
        for peer in self.peers.values().filter(|peer| !peer.asked) {
            *silent_by_pid.entry(peer.pid).or_default() += 1;
        }
        let flooder = silent_by_pid
            .iter()
            .max_by_key(|(_, count)| **count)
            .map(|(pid, _)| *pid);
        let silent: Vec<Token> = self
            .peers
            .iter()
            .filter(|(_, peer)| !peer.asked && Some(peer.pid) == flooder)
            .map(|(token, _)| *token)
            .collect();
        for token in silent {
            let Some(peer) = self.peers.get_mut(&token) else {
                continue;
            };
            // A client that asked since it was accepted is heard now, not
            // closed for the silence it had then.
            let closed = read_request(peer, token, events);
            if closed {
                if !peer.answered {
                    events.push(ServerEvent::Gone { peer: token });
                }
                self.settle(registry, token, true);
                return true;
            }
            if !peer.asked {
                self.settle(registry, token, true);
                return true;
            }
        }
        false
    }

    /// Accepts what waits, at most `max_peers` connections a call, so that
    /// a flood of connections cannot keep the loop from answering the
    /// requests it has read (and from everything else it serves).
    fn accept(&mut self, registry: &Registry, events: &mut Vec<ServerEvent>) {
        self.accept_backlog = false;
        for _ in 0..self.limits.max_peers {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let pid = match peer_credentials(&stream) {
                        Ok((uid, pid)) if uid == self.uid => pid,
                        _ => {
                            let _ = stream.write_all(
                                b"{\"error\":\"forbidden\",\"message\":\"peer uid is not ours\"}\n",
                            );
                            continue;
                        }
                    };
                    if self.peers.len() >= self.limits.max_peers {
                        match self.limits.when_full {
                            WhenFull::CloseOldest => self.make_room(registry, events),
                            WhenFull::RefuseBusy => {
                                if !self.close_a_silent_peer(registry, events)
                                    && !self.close_a_stalled_reader(registry, events)
                                {
                                    let _ = stream.write_all(BUSY_REPLY);
                                    continue;
                                }
                            }
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
                                wants_receipt: false,
                                receipt: Vec::new(),
                                pid,
                                progress_at: Instant::now(),
                            },
                        );
                        // A client that asked at once is heard now, before
                        // more connections are accepted.
                        if let Some(peer) = self.peers.get_mut(&token)
                            && read_request(peer, token, events)
                        {
                            if !peer.answered {
                                events.push(ServerEvent::Gone { peer: token });
                            }
                            self.settle(registry, token, true);
                        }
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
        self.accept_backlog = true;
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

/// Writes queued reply bytes, and says where the reply stands.
fn write_out(peer: &mut Peer) -> Writing {
    while peer.sent < peer.outbox.len() {
        match peer.stream.write(&peer.outbox[peer.sent..]) {
            Ok(0) => return Writing::Failed,
            Ok(n) => {
                peer.sent += n;
                peer.progress_at = Instant::now();
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Writing::Pending,
            Err(_) => return Writing::Failed,
        }
    }
    if peer.answered {
        Writing::Written
    } else {
        Writing::Pending
    }
}

/// Reads a receipt line after the reply: [`ServerEvent::Receipt`] once a
/// line ends. Anything longer than [`MAX_RECEIPT_BYTES`] is not a receipt.
/// Returns whether the connection is over (receipt read, closed, failed or
/// too long).
fn read_receipt(peer: &mut Peer, token: Token, events: &mut Vec<ServerEvent>) -> bool {
    let mut chunk = [0u8; MAX_RECEIPT_BYTES + 1];
    loop {
        match peer.stream.read(&mut chunk) {
            Ok(0) => return true,
            Ok(n) => {
                peer.receipt.extend_from_slice(&chunk[..n]);
                if peer.receipt.contains(&b'\n') {
                    events.push(ServerEvent::Receipt { peer: token });
                    return true;
                }
                if peer.receipt.len() > MAX_RECEIPT_BYTES {
                    return true;
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

fn events_has_receipt(events: &[ServerEvent], token: Token) -> bool {
    events.contains(&ServerEvent::Receipt { peer: token })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll};
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixStream as StdStream;
    use std::time::{Duration, Instant};

    const LISTENER: Token = Token(0);

    struct Bench {
        poll: Poll,
        server: LineServer,
        _dir: tempfile::TempDir,
        path: std::path::PathBuf,
    }

    fn bench() -> Bench {
        bench_when_full(WhenFull::CloseOldest)
    }

    fn bench_when_full(when_full: WhenFull) -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s/line.sock");
        let poll = Poll::new().expect("poll");
        let limits = Limits {
            max_request: 1024,
            max_peers: 4,
            when_full,
        };
        let server = LineServer::bind(&path, poll.registry(), LISTENER, 10, limits).expect("bind");
        Bench {
            poll,
            server,
            _dir: dir,
            path,
        }
    }

    impl Bench {
        /// Polls until `done` holds on the events so far (or `patience`
        /// passes).
        fn events_within(
            &mut self,
            patience: Duration,
            done: impl Fn(&[ServerEvent]) -> bool,
        ) -> Vec<ServerEvent> {
            let mut all = Vec::new();
            let mut events = Events::with_capacity(16);
            let deadline = Instant::now() + patience;
            while !done(&all) && Instant::now() < deadline {
                self.poll
                    .poll(&mut events, Some(Duration::from_millis(50)))
                    .expect("poll");
                for event in events.iter() {
                    self.server
                        .on_ready(self.poll.registry(), event.token(), &mut all);
                }
                // As the runtimes do: connections waiting to be accepted
                // are taken before sleeping.
                if self.server.has_backlog() {
                    self.server
                        .on_ready(self.poll.registry(), LISTENER, &mut all);
                }
            }
            all
        }

        fn events_until(&mut self, done: impl Fn(&[ServerEvent]) -> bool) -> Vec<ServerEvent> {
            self.events_within(Duration::from_secs(5), done)
        }

        fn ask(&mut self) -> (StdStream, Token) {
            let mut client = StdStream::connect(&self.path).expect("connect");
            client.write_all(b"ask\n").expect("ask");
            let events =
                self.events_until(|e| e.iter().any(|e| matches!(e, ServerEvent::Request { .. })));
            let Some(ServerEvent::Request { peer, line }) = events.into_iter().next() else {
                panic!("no request");
            };
            assert_eq!(line, b"ask");
            (client, peer)
        }
    }

    /// A reply that asks for a receipt keeps the connection open after it
    /// is written: the peer's receipt line is `Receipt`; a peer that reads
    /// the reply and closes without one is `NoReceipt`.
    #[test]
    fn a_receipt_is_reported_and_so_is_its_absence() {
        let mut bench = bench();
        let (client, peer) = bench.ask();
        let mut events = Vec::new();
        bench
            .server
            .reply_for_receipt(bench.poll.registry(), peer, b"answer", &mut events);
        assert_eq!(events, []);
        let mut reader = BufReader::new(client.try_clone().expect("clone"));
        let mut line = String::new();
        reader.read_line(&mut line).expect("reply");
        assert_eq!(line, "answer\n");
        (&client)
            .write_all(b"{\"received\":true}\n")
            .expect("receipt");
        let events = bench.events_until(|e| !e.is_empty());
        assert_eq!(events, [ServerEvent::Receipt { peer }]);
        assert_eq!(bench.server.peers(), 0);

        let (client, peer) = bench.ask();
        bench
            .server
            .reply_for_receipt(bench.poll.registry(), peer, b"answer", &mut Vec::new());
        let mut line = String::new();
        BufReader::new(&client).read_line(&mut line).expect("reply");
        drop(client);
        let events = bench.events_until(|e| !e.is_empty());
        assert_eq!(events, [ServerEvent::NoReceipt { peer }]);
    }

    /// A peer that hangs up before its reply is written is `Gone`, whether
    /// the reply comes after the hang-up or not at all.
    #[test]
    fn a_reply_to_a_peer_that_hung_up_is_reported_gone() {
        let mut bench = bench();
        let (client, peer) = bench.ask();
        drop(client);
        let events = bench.events_until(|e| !e.is_empty());
        assert_eq!(events, [ServerEvent::Gone { peer }]);
        // A reply asking for a receipt from a peer already gone says so
        // again: whoever queued it learns the reply went nowhere.
        let mut events = Vec::new();
        bench
            .server
            .reply_for_receipt(bench.poll.registry(), peer, b"answer", &mut events);
        assert_eq!(events, [ServerEvent::Gone { peer }]);
    }

    /// Past `max_peers`, the oldest connection that said nothing is closed,
    /// not one that asked: a client that asks at once is heard (and can be
    /// answered) however many silent connections come after it.
    #[test]
    fn silent_connections_make_room_and_an_asker_is_heard_at_once() {
        let mut bench = bench();
        let silent: Vec<StdStream> = (0..3)
            .map(|_| StdStream::connect(&bench.path).expect("connect"))
            .collect();
        let (asker, peer) = bench.ask();
        let more: Vec<StdStream> = (0..10)
            .map(|_| StdStream::connect(&bench.path).expect("connect"))
            .collect();
        // Every connection accepted (a quiet window: nothing to wait for).
        let _ = bench.events_within(Duration::from_millis(200), |_| false);
        bench.server.reply(bench.poll.registry(), peer, b"answer");
        let mut line = String::new();
        BufReader::new(&asker).read_line(&mut line).expect("reply");
        assert_eq!(line, "answer\n");
        assert!(bench.server.peers() <= 4);
        drop((silent, more));
    }

    /// Under [`WhenFull::RefuseBusy`], a connection past `max_peers` is told
    /// `busy` at once while every open one is being read; once a reader
    /// has taken nothing of its reply for [`STALLED_AFTER`], it is the one
    /// closed, and the next asker is heard.
    #[test]
    fn past_the_bound_an_asker_is_told_busy_and_a_stalled_reader_makes_room() {
        let mut bench = bench_when_full(WhenFull::RefuseBusy);
        let big = vec![b'x'; 4 * 1024 * 1024];
        let askers: Vec<(StdStream, Token)> = (0..4).map(|_| bench.ask()).collect();
        for (_, peer) in &askers {
            bench.server.reply(bench.poll.registry(), *peer, &big);
        }
        let late = StdStream::connect(&bench.path).expect("connect");
        let _ = bench.events_within(Duration::from_millis(100), |_| false);
        let mut line = Vec::new();
        BufReader::new(&late)
            .read_until(b'\n', &mut line)
            .expect("busy");
        assert_eq!(line, BUSY_REPLY, "told at once, not left waiting");
        assert_eq!(bench.server.peers(), 4, "nobody was cut off for it");

        std::thread::sleep(STALLED_AFTER);
        let mut asker = StdStream::connect(&bench.path).expect("connect");
        asker.write_all(b"ask\n").expect("ask");
        let events =
            bench.events_until(|e| e.iter().any(|e| matches!(e, ServerEvent::Request { .. })));
        let oldest = askers[0].1;
        assert!(
            events.contains(&ServerEvent::Gone { peer: oldest }),
            "the oldest stalled reader made room: {events:?}"
        );
        assert_eq!(bench.server.peers(), 4);
        drop(askers);
    }
}
