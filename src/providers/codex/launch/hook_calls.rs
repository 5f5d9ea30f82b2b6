//! The launcher's calls on the hook channel, made from its poll loop: each
//! is one connection to the adapter's `DING_HOOK_SOCKET`, one call line
//! out and one answer line back (the relay's wire, `adapter::relay`), then
//! the receipt, and none of it blocks the loop. A parked `queue` call may
//! stay open for an hour; a `launch` call is answered at once.
//!
//! The receipt goes as soon as the answer is read: the answer is handed to
//! the native path of this very process in the same turn of the loop, so
//! it is passed on as far as the hook channel is concerned.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use mio::net::UnixStream;
use mio::{Interest, Registry, Token};

use crate::adapter::HookAnswer;
use crate::adapter::hook_wire::{MAX_ANSWER_BYTES, RECEIPT_LINE};
use crate::adapter::relay::{RelayFailure, read_answer};

use crate::adapter::native_idle::wire::LaunchReport;

/// Which call a connection carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Called {
    /// The native path's `queue` call with this number.
    Queue(u64),
    /// A `launch` report.
    Launch(LaunchReport),
}

/// A call's end: its answer, or why there is none.
pub type Ended = (Called, Result<HookAnswer, RelayFailure>);

struct Open {
    called: Called,
    stream: UnixStream,
    /// What of the call line the socket has not taken yet.
    unsent: Vec<u8>,
    /// The answer so far.
    read: Vec<u8>,
}

/// Every call open on the hook channel, each under its own token.
pub struct HookCalls {
    socket: Option<PathBuf>,
    next_token: usize,
    open: BTreeMap<Token, Open>,
}

impl HookCalls {
    /// Calls go to `socket` (none: nothing is called); their tokens count
    /// up from `first_token`.
    pub fn new(socket: Option<PathBuf>, first_token: usize) -> HookCalls {
        HookCalls {
            socket,
            next_token: first_token,
            open: BTreeMap::new(),
        }
    }

    pub fn owns(&self, token: Token) -> bool {
        self.open.contains_key(&token)
    }

    /// Makes `called` with `line`; an end known at once (no adapter
    /// listening) goes to `ended`. Without a hook channel nothing is made.
    pub fn start(
        &mut self,
        registry: &Registry,
        called: Called,
        line: String,
        ended: &mut Vec<Ended>,
    ) {
        let Some(socket) = &self.socket else {
            return;
        };
        let mut stream = match UnixStream::connect(socket) {
            Ok(stream) => stream,
            Err(err) => return ended.push((called, Err(RelayFailure::Connect(err)))),
        };
        let token = Token(self.next_token);
        self.next_token += 1;
        let both = Interest::READABLE | Interest::WRITABLE;
        if let Err(err) = registry.register(&mut stream, token, both) {
            return ended.push((called, Err(RelayFailure::Io(err))));
        }
        let open = Open {
            called,
            stream,
            unsent: line.into_bytes(),
            read: Vec::new(),
        };
        self.open.insert(token, open);
        self.on_ready(registry, token, ended);
    }

    /// Call `token`'s socket was ready: writes what is left of its line,
    /// reads what came of its answer; a call that ended goes to `ended`.
    pub fn on_ready(&mut self, registry: &Registry, token: Token, ended: &mut Vec<Ended>) {
        let Some(open) = self.open.get_mut(&token) else {
            return;
        };
        let Some(end) = open.step() else {
            return;
        };
        if let Some(mut open) = self.open.remove(&token) {
            if end.is_ok() {
                // Best effort, and a few bytes on a socket just read from.
                let _ = open
                    .stream
                    .write_all(format!("{RECEIPT_LINE}\n").as_bytes());
            }
            let _ = registry.deregister(&mut open.stream);
            ended.push((open.called, end));
        }
    }
}

impl Open {
    /// Writes and reads as far as the socket goes now; the call's end, once
    /// it has come.
    fn step(&mut self) -> Option<Result<HookAnswer, RelayFailure>> {
        while !self.unsent.is_empty() {
            match self.stream.write(&self.unsent) {
                Ok(0) => return Some(Err(RelayFailure::Io(io::ErrorKind::WriteZero.into()))),
                Ok(n) => {
                    self.unsent.drain(..n);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return None,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Some(Err(RelayFailure::Io(err))),
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                // The end of the stream: what came is all the answer there is.
                Ok(0) => return Some(read_answer(&self.read)),
                Ok(n) => {
                    self.read.extend_from_slice(&chunk[..n]);
                    if let Some(end) = self.read.iter().position(|&byte| byte == b'\n') {
                        return Some(read_answer(&self.read[..=end]));
                    }
                    if self.read.len() > MAX_ANSWER_BYTES {
                        return Some(Err(RelayFailure::TooLong));
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return None,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Some(Err(RelayFailure::Io(err))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixListener;

    use mio::{Events, Poll};

    /// A call is sent whole, its answer read back, and the receipt sent;
    /// a call nobody listens for ends at once; a refusal is no answer.
    #[test]
    fn a_call_is_answered_and_receipted_and_an_absent_adapter_is_said_at_once() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("hook.sock");
        let mut poll = Poll::new().expect("poll");
        let mut calls = HookCalls::new(Some(path.clone()), 100);
        let mut ended = Vec::new();
        calls.start(poll.registry(), Called::Queue(1), "{}\n".into(), &mut ended);
        assert!(
            matches!(
                &ended[..],
                [(Called::Queue(1), Err(RelayFailure::Connect(_)))]
            ),
            "{ended:?}"
        );
        let listener = UnixListener::bind(&path).expect("bind");
        let long = format!("{{\"payload\":\"{}\"}}\n", "x".repeat(300_000));
        let mut ended = Vec::new();
        calls.start(poll.registry(), Called::Queue(2), long.clone(), &mut ended);
        assert!(ended.is_empty(), "open: {ended:?}");
        let (stream, _) = listener.accept().expect("accept");
        let mut adapter = BufReader::new(stream);
        let mut events = Events::with_capacity(8);
        let mut line = Vec::new();
        adapter
            .get_ref()
            .set_read_timeout(Some(std::time::Duration::from_millis(10)))
            .expect("timeout");
        // The line is longer than a socket buffer: written as it is read.
        while !line.ends_with(b"\n") {
            poll.poll(&mut events, Some(std::time::Duration::from_millis(10)))
                .expect("poll");
            for event in events.iter() {
                calls.on_ready(poll.registry(), event.token(), &mut ended);
            }
            // A timeout keeps what was read (`read_until`'s promise).
            let _ = adapter.read_until(b'\n', &mut line);
        }
        assert_eq!(line, long.as_bytes());
        adapter
            .get_ref()
            .set_read_timeout(None)
            .expect("no timeout");
        let answer = HookAnswer {
            stdout: "queued\n".into(),
            ..HookAnswer::default()
        };
        let reply = format!("{}\n", answer.to_line());
        adapter
            .get_ref()
            .write_all(reply.as_bytes())
            .expect("answer");
        while ended.is_empty() {
            poll.poll(&mut events, Some(std::time::Duration::from_secs(5)))
                .expect("poll");
            for event in events.iter() {
                calls.on_ready(poll.registry(), event.token(), &mut ended);
            }
        }
        assert!(
            matches!(&ended[..], [(Called::Queue(2), Ok(got))] if *got == answer),
            "{ended:?}"
        );
        let mut receipt = String::new();
        adapter.read_line(&mut receipt).expect("receipt");
        assert_eq!(receipt, format!("{RECEIPT_LINE}\n"));
        assert!(!calls.owns(Token(101)), "closed once answered");

        let report = LaunchReport {
            mode: crate::adapter::native_idle::wire::LaunchMode::NativeDown,
            declared: None,
            error: Some("gone".into()),
        };
        let mut ended = Vec::new();
        calls.start(
            poll.registry(),
            Called::Launch(report),
            "{}\n".into(),
            &mut ended,
        );
        let (mut stream, _) = listener.accept().expect("accept");
        stream
            .write_all(b"{\"error\":\"refused\",\"message\":\"no\"}\n")
            .expect("refuse");
        while ended.is_empty() {
            poll.poll(&mut events, Some(std::time::Duration::from_secs(5)))
                .expect("poll");
            for event in events.iter() {
                calls.on_ready(poll.registry(), event.token(), &mut ended);
            }
        }
        assert!(
            matches!(
                &ended[..],
                [(Called::Launch(_), Err(RelayFailure::Refused(_)))]
            ),
            "{ended:?}"
        );
        let mut none = HookCalls::new(None, 100);
        let mut ended = Vec::new();
        none.start(poll.registry(), Called::Queue(3), "{}\n".into(), &mut ended);
        assert!(ended.is_empty(), "no channel: nothing is called");
    }
}
