//! The hook side of the hook channel: what `ding hook PROVIDER EVENT` does
//! inside the harness.
//!
//! It reads the provider's payload from stdin (bounded), sends one
//! [`HookCall`] to the adapter on `DING_HOOK_SOCKET`, waits for the answer,
//! and hands back what to print and how to exit. It never breaks or blocks
//! the harness for long: when the adapter cannot be reached, refuses the
//! call, or does not answer in time, the answer is empty with exit 0, so
//! the harness carries on exactly as without DING (and the work stays
//! unread in the inbox, for the terminal path or the next hook).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::hook_wire::{
    HOOK_WIRE_VERSION, HookAnswer, HookCall, MAX_ANSWER_BYTES, MAX_PAYLOAD_BYTES, RECEIPT_LINE,
};
use super::incarnation::identity_from_env;
use super::timing::PAYLOAD_DEADLINE;

/// Where the hook channel is: `DING_HOOK_SOCKET`, else `hook.sock` in
/// `DING_RUNTIME_DIR`.
pub fn socket_from_env() -> Option<PathBuf> {
    let get = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    get("DING_HOOK_SOCKET")
        .map(PathBuf::from)
        .or_else(|| get("DING_RUNTIME_DIR").map(|dir| PathBuf::from(dir).join("hook.sock")))
}

/// Why a call got the empty answer (for `--explain`, never printed otherwise).
#[derive(Debug)]
pub enum RelayFailure {
    NoSocket,
    Connect(io::Error),
    Io(io::Error),
    Refused(String),
    Unreadable(String),
    /// The answer line passed [`MAX_ANSWER_BYTES`]; it was not read whole.
    TooLong,
}

/// The open connection of an answered call: [`Receipt::send`] tells the
/// adapter that the answer was passed on (printed for the harness). Dropped
/// unsent, the adapter takes it that the answer went nowhere.
pub struct Receipt(UnixStream);

impl Receipt {
    /// Sends the receipt. Best effort: an adapter that asked for none has
    /// closed the connection already.
    pub fn send(mut self) {
        let mut line = RECEIPT_LINE.to_string();
        line.push('\n');
        let _ = self.0.write_all(line.as_bytes());
    }
}

/// Reads the payload from `input` until EOF, at most [`MAX_PAYLOAD_BYTES`]
/// and [`PAYLOAD_DEADLINE`]. Returns the JSON (or `null`) and whether it was
/// too long.
pub fn read_payload<R: Read + AsFd>(input: &mut R) -> (serde_json::Value, bool) {
    let deadline = Instant::now() + PAYLOAD_DEADLINE;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let millis = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => break,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() > MAX_PAYLOAD_BYTES {
                    return (serde_json::Value::Null, true);
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let payload = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    (payload, false)
}

/// The line of one call (newline included): what [`call`] sends, and what
/// a caller that cannot block sends itself.
pub fn call_line(
    provider: &str,
    event: &str,
    payload: serde_json::Value,
    payload_too_long: bool,
    timeout: Duration,
) -> String {
    let call = HookCall {
        v: HOOK_WIRE_VERSION,
        provider: provider.to_string(),
        event: event.to_string(),
        identity: identity_from_env(),
        payload,
        payload_too_long,
        timeout_ms: u64::try_from(timeout.as_millis()).ok(),
    };
    let mut line = call.to_line();
    line.push('\n');
    line
}

/// An answer line as read (at most [`MAX_ANSWER_BYTES`] and one more, so
/// that a longer one is told apart), read back.
pub fn read_answer(answer: &[u8]) -> Result<HookAnswer, RelayFailure> {
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(RelayFailure::TooLong);
    }
    let answer = String::from_utf8_lossy(answer);
    if let Ok(answer) = serde_json::from_str::<HookAnswer>(&answer) {
        return Ok(answer);
    }
    match serde_json::from_str::<super::hook_wire::HookRefusal>(&answer) {
        Ok(refusal) => Err(RelayFailure::Refused(format!(
            "{}: {}",
            refusal.error, refusal.message
        ))),
        Err(_) => Err(RelayFailure::Unreadable(answer.chars().take(200).collect())),
    }
}

/// Sends one call and waits at most `timeout` for its answer; the answer
/// comes with the connection to send its [`Receipt`] on once it is passed
/// on.
pub fn call(
    socket: &Path,
    provider: &str,
    event: &str,
    payload: serde_json::Value,
    payload_too_long: bool,
    timeout: Duration,
) -> Result<(HookAnswer, Receipt), RelayFailure> {
    let line = call_line(provider, event, payload, payload_too_long, timeout);
    let mut stream = UnixStream::connect(socket).map_err(RelayFailure::Connect)?;
    stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.set_read_timeout(Some(timeout)))
        .map_err(RelayFailure::Io)?;
    stream
        .write_all(line.as_bytes())
        .map_err(RelayFailure::Io)?;
    let receipt = stream.try_clone().map_err(RelayFailure::Io)?;
    let mut reader = BufReader::new(stream).take(MAX_ANSWER_BYTES as u64 + 1);
    let mut answer = Vec::new();
    reader
        .read_until(b'\n', &mut answer)
        .map_err(RelayFailure::Io)?;
    read_answer(&answer).map(|answer| (answer, Receipt(receipt)))
}
