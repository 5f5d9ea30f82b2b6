//! A small blocking client of the PTY host's control socket, for
//! `ding attach`, tests, supervisors and the sidecar.
//!
//! One request at a time: write a line, read lines until the reply (pushes
//! that arrive first on a watching connection are kept for `next_push`).
//! The client owns the line framing and error mapping; it makes no
//! decisions about what to send.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::core::identity::Identity;
use crate::pty::transport::WireStep;
use crate::pty::wire::{
    ErrorKind, HostStatus, Push, Quiet, Reply, Request, SendIfReply, ServerLine, Size, Snapshot,
};

/// An error reply from the host, kept typed so callers can tell
/// `busy` from `malformed-request` (downcast the anyhow error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = serde_json::to_value(self.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        write!(f, "pty host refused the request ({kind}): {}", self.message)
    }
}

impl std::error::Error for HostError {}

/// No reply arrived in time. N.B. the outcome of the request is unknown: a
/// `send` or `send-if` queued behind other transactions may still be written
/// later, so a caller must treat it as possibly delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyTimedOut;

impl fmt::Display for ReplyTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out waiting for the pty host's reply; the request may still take effect")
    }
}

impl std::error::Error for ReplyTimedOut {}

/// A connection to a PTY host.
pub struct Client {
    stream: UnixStream,
    /// Bytes read but not yet consumed as lines.
    buf: Vec<u8>,
    pushes: VecDeque<Push>,
    timeout: Option<Duration>,
}

impl Client {
    /// Connects to the host's socket. Replies are awaited for at most 30 s
    /// by default (`set_timeout` changes it; `None` waits forever), so a
    /// wedged host cannot hang a caller forever. A transaction may wait up to
    /// 5 s itself and queue behind others, hence the generous default.
    pub fn connect(path: &Path) -> Result<Client> {
        let stream = UnixStream::connect(path)
            .with_context(|| format!("connect to pty host at {}", path.display()))?;
        Ok(Client {
            stream,
            buf: Vec::new(),
            pushes: VecDeque::new(),
            timeout: Some(Duration::from_secs(30)),
        })
    }

    pub fn set_timeout(&mut self, timeout: Option<Duration>) {
        self.timeout = timeout;
    }

    /// Sends one request and returns its reply; an error reply becomes a
    /// [`HostError`].
    pub fn request(&mut self, request: &Request) -> Result<Reply> {
        let mut line = serde_json::to_vec(request).context("encode request")?;
        line.push(b'\n');
        self.write_raw(&line)?;
        self.read_reply()
    }

    /// Writes raw bytes (tests use it for malformed requests).
    ///
    /// A host that refused the connection (wrong uid) closes it at once, so
    /// a failed write first looks for the refusal the host sent. The error is
    /// never a bare `BrokenPipe`, which `main` would take for a closed stdout.
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        let Err(err) = self.stream.write_all(bytes) else {
            return Ok(());
        };
        let soon = Some(Instant::now() + Duration::from_millis(200));
        if let Ok(Some(ServerLine::Error(refusal))) = self.read_line(soon) {
            return Err(HostError {
                kind: refusal.error,
                message: refusal.message,
            }
            .into());
        }
        bail!("the pty host closed the connection ({err})")
    }

    /// Reads lines until a reply or error, keeping pushes for `next_push`.
    pub fn read_reply(&mut self) -> Result<Reply> {
        let deadline = self.timeout.map(|t| Instant::now() + t);
        loop {
            let Some(line) = self.read_line(deadline)? else {
                return Err(ReplyTimedOut.into());
            };
            match line {
                ServerLine::Reply(reply) => return Ok(reply),
                ServerLine::Error(err) => {
                    return Err(HostError {
                        kind: err.error,
                        message: err.message,
                    }
                    .into());
                }
                ServerLine::Push(push) => self.pushes.push_back(push),
            }
        }
    }

    pub fn status(&mut self) -> Result<HostStatus> {
        match self.request(&Request::Status {})? {
            Reply::Status(status) => Ok(status),
            other => bail!("unexpected reply to status: {other:?}"),
        }
    }

    pub fn snapshot(&mut self) -> Result<Snapshot> {
        match self.request(&Request::Snapshot {})? {
            Reply::Snapshot(snapshot) => Ok(snapshot),
            other => bail!("unexpected reply to snapshot: {other:?}"),
        }
    }

    /// The compare-and-send. Anything but `Sent` means zero bytes reached
    /// the terminal (but `Interrupted`, which says how many did).
    pub fn send_if(
        &mut self,
        identity: &Identity,
        expected_revision: u64,
        steps: &[WireStep],
    ) -> Result<SendIfReply> {
        self.send_if_quiet(identity, expected_revision, steps, Quiet::default())
    }

    /// The compare-and-send with a time fence: also refused (`Unsettled`)
    /// unless the person's input and the program's output have been quiet
    /// as long as `quiet` asks.
    pub fn send_if_quiet(
        &mut self,
        identity: &Identity,
        expected_revision: u64,
        steps: &[WireStep],
        quiet: Quiet,
    ) -> Result<SendIfReply> {
        self.send_if_holding(identity, expected_revision, steps, quiet, None, None)
    }

    /// [`Client::send_if_quiet`], and once written a person's typed text is
    /// held for at most `hold_input_ms`, until this client's next
    /// transaction has run (docs/pty-protocol.md §3, item 6); should a
    /// person's input end the hold first, the host writes `withdraw`
    /// before it (item 7).
    pub fn send_if_holding(
        &mut self,
        identity: &Identity,
        expected_revision: u64,
        steps: &[WireStep],
        quiet: Quiet,
        hold_input_ms: Option<u64>,
        withdraw: Option<&[WireStep]>,
    ) -> Result<SendIfReply> {
        let request = Request::SendIf {
            session: identity.session.clone(),
            incarnation: identity.incarnation.clone(),
            generation: identity.generation.clone(),
            expected_revision,
            steps: steps.to_vec(),
            quiet_input_ms: quiet.input_ms,
            settled_output_ms: quiet.output_ms,
            hold_input_ms,
            withdraw: withdraw.map(<[WireStep]>::to_vec),
        };
        match self.request(&request)? {
            Reply::SendIf(result) => Ok(result),
            other => bail!("unexpected reply to send-if: {other:?}"),
        }
    }

    /// Unconditional intervention; returns `(revision, written)`.
    pub fn send(&mut self, steps: &[WireStep]) -> Result<(u64, usize)> {
        let request = Request::Send {
            steps: steps.to_vec(),
            origin: crate::pty::wire::Origin::Intervention,
        };
        match self.request(&request)? {
            Reply::Send { revision, written } => Ok((revision, written)),
            other => bail!("unexpected reply to send: {other:?}"),
        }
    }

    /// Returns the revision after the resize.
    pub fn resize(&mut self, size: Size) -> Result<u64> {
        let request = Request::Resize {
            cols: size.cols,
            rows: size.rows,
        };
        match self.request(&request)? {
            Reply::Resize { revision } => Ok(revision),
            other => bail!("unexpected reply to resize: {other:?}"),
        }
    }

    /// Returns the new incarnation and the revision after the start.
    pub fn restart(&mut self) -> Result<(String, u64)> {
        match self.request(&Request::Restart {})? {
            Reply::Restart {
                incarnation,
                revision,
            } => Ok((incarnation, revision)),
            other => bail!("unexpected reply to restart: {other:?}"),
        }
    }

    /// Makes this a watching connection; returns the revision at that
    /// moment. Pushes then arrive through `next_push`.
    pub fn watch(&mut self) -> Result<u64> {
        match self.request(&Request::Watch {})? {
            Reply::Watch { revision } => Ok(revision),
            other => bail!("unexpected reply to watch: {other:?}"),
        }
    }

    /// The next push, waiting at most `timeout`; `None` on timeout.
    pub fn next_push(&mut self, timeout: Duration) -> Result<Option<Push>> {
        if let Some(push) = self.pushes.pop_front() {
            return Ok(Some(push));
        }
        let deadline = Instant::now() + timeout;
        match self.read_line(Some(deadline))? {
            None => Ok(None),
            Some(ServerLine::Push(push)) => Ok(Some(push)),
            Some(other) => bail!("unexpected line on a watch stream: {other:?}"),
        }
    }

    /// Waits until a push shows the revision above `revision`, returning
    /// the revision seen; `None` on timeout. Needs `watch` first.
    pub fn wait_revision_above(&mut self, revision: u64, timeout: Duration) -> Result<Option<u64>> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_push(left)? {
                None => return Ok(None),
                Some(Push::Revision { revision: seen, .. })
                | Some(Push::Exit { revision: seen, .. })
                | Some(Push::Start { revision: seen, .. })
                    if seen > revision =>
                {
                    return Ok(Some(seen));
                }
                Some(_) => {}
            }
        }
    }

    /// Switches to attach mode. Returns the stream and any frame bytes that
    /// arrived with the reply.
    pub fn attach(mut self) -> Result<(UnixStream, Vec<u8>)> {
        match self.request(&Request::Attach {})? {
            Reply::Attach { .. } => Ok((self.stream, self.buf)),
            other => bail!("unexpected reply to attach: {other:?}"),
        }
    }

    /// Reads one line. `Ok(None)` when the deadline passes first.
    fn read_line(&mut self, deadline: Option<Instant>) -> Result<Option<ServerLine>> {
        loop {
            if let Some(end) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=end).collect();
                let parsed = serde_json::from_slice(&line[..end]).with_context(|| {
                    format!("parse host line {:?}", String::from_utf8_lossy(&line))
                })?;
                return Ok(Some(parsed));
            }
            let wait = match deadline {
                Some(at) => {
                    let left = at.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(None);
                    }
                    Some(left)
                }
                None => None,
            };
            self.stream
                .set_read_timeout(wait)
                .context("set socket timeout")?;
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => bail!("the pty host closed the connection"),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err).context("read from pty host"),
            }
        }
    }
}
