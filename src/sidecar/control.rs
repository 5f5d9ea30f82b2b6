//! The client side of an agent's processes, for the CLI: ask a running
//! sidecar for its status, find live processes by pid file, start them
//! detached in their own session, and stop them. Pid files and logs go
//! through `private_file`, so a FIFO or link planted in their place can
//! neither hang `ding status` / `ding down` nor redirect a write.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::status_document::LiveStatus;
use crate::core::status::MessageWindow;
use crate::line_server::BUSY_REPLY;
use crate::private_file::{open_log, read_regular, read_tail, replace};
use crate::wait::{POLL_EVERY, RETRY_EVERY, wait_for, wait_until};

/// How long a CLI waits for a sidecar's status reply.
const STATUS_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a CLI keeps asking a sidecar that answers `busy` (serving as
/// many askers as it does at once): each `busy` shows it alive, so this
/// is longer than the silence that counts as "not answering".
const BUSY_PATIENCE: Duration = Duration::from_secs(30);

/// Asks the sidecar listening on `socket` for its status document.
pub fn query_status(socket: &Path) -> Result<LiveStatus> {
    let reply = status_reply_within(socket, STATUS_TIMEOUT)?;
    Ok(LiveStatus::from_reply(&reply)?)
}

/// The sidecar's reply to a status request as it came, without its
/// newline, waiting at most `timeout` for each answer (and asking again
/// on `busy`, see [`status_listing_within`]): an error only when no reply
/// came.
/// [`LiveStatus::from_reply`] reads it.
pub fn status_reply_within(socket: &Path, timeout: Duration) -> Result<Vec<u8>> {
    status_listing_within(socket, timeout, &MessageWindow::All)
}

/// [`status_reply_within`], the document listing only the unread files of
/// `window` (all are counted).
pub fn status_listing_within(
    socket: &Path,
    timeout: Duration,
    window: &MessageWindow,
) -> Result<Vec<u8>> {
    // A sidecar answering as many as it serves at once says `busy`, and
    // one that needs room closes a reader that took nothing of its reply
    // for a second (a process slowed by a loaded machine): both answered,
    // so `timeout` (how long a silent sidecar is given) starts again with
    // each ask, for at most BUSY_PATIENCE in all.
    let answered = wait_for(
        BUSY_PATIENCE.max(timeout),
        RETRY_EVERY,
        || match status_listing_once(socket, timeout, window) {
            Ok(Asked::AskAgain) => None,
            Ok(Asked::Reply(reply)) => Some(Ok(reply)),
            Err(err) => Some(Err(err)),
        },
    );
    answered.unwrap_or_else(|| {
        Err(anyhow!(
            "the sidecar stayed busy answering others for {} s",
            BUSY_PATIENCE.max(timeout).as_secs()
        ))
    })
}

/// What one status request got.
enum Asked {
    /// The whole reply line, without its newline.
    Reply(Vec<u8>),
    /// `busy`, or the connection closed before the reply was whole (made
    /// room for another asker while this one was slow to read): ask again.
    AskAgain,
}

fn status_listing_once(socket: &Path, timeout: Duration, window: &MessageWindow) -> Result<Asked> {
    let mut stream = UnixStream::connect(socket)
        .with_context(|| format!("connect to sidecar at {}", socket.display()))?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut request = match window {
        MessageWindow::All => serde_json::json!({"op": "status"}),
        window => serde_json::json!({"op": "status", "messages": window}),
    }
    .to_string();
    request.push('\n');
    // A sidecar that is busy says so as it accepts, and closes before the
    // request could be read: its answer is read all the same.
    let written = stream.write_all(request.as_bytes());
    let mut line = Vec::new();
    let read = BufReader::new(stream).read_until(b'\n', &mut line);
    if line.ends_with(b"\n") && line[..line.len() - 1] == BUSY_REPLY[..BUSY_REPLY.len() - 1] {
        return Ok(Asked::AskAgain);
    }
    written?;
    read.context("read the sidecar's status")?;
    if line.pop() != Some(b'\n') {
        return Ok(Asked::AskAgain);
    }
    Ok(Asked::Reply(line))
}

/// The longest pid file read: a pid and a newline.
const MAX_PID_FILE_BYTES: u64 = 64;

/// The pid recorded in `pid_file`, if that process is alive. A pid file
/// that is not a regular file, or holds anything but a pid, names none.
pub fn live_pid(pid_file: &Path) -> Option<i32> {
    recorded_pid(pid_file).filter(|&pid| is_alive(pid))
}

/// The pid recorded in `pid_file`, alive or not: a pid file whose process
/// is gone is how a killed process is told from a stopped one (a clean
/// stop removes the file).
pub fn recorded_pid(pid_file: &Path) -> Option<i32> {
    let bytes = read_regular(pid_file, MAX_PID_FILE_BYTES).ok()??;
    let pid: i32 = std::str::from_utf8(&bytes).ok()?.trim().parse().ok()?;
    (pid > 0).then_some(pid)
}

/// Whether process `pid` exists and has not exited.
pub fn is_alive(pid: i32) -> bool {
    pid > 0 && is_running(Pid::from_raw(pid))
}

/// Records `pid` in `pid_file`, replacing whatever is there.
pub fn write_pid(pid_file: &Path, pid: u32) -> Result<()> {
    replace(pid_file, format!("{pid}\n").as_bytes(), 0o600)
        .with_context(|| format!("cannot write {}", pid_file.display()))
}

/// Whether `pid` exists and has not exited. A zombie has exited: it is only
/// waiting for its parent (often init, for our detached processes) to reap
/// it, and `kill(pid, 0)` still succeeds on it, so a sidecar killed with
/// SIGKILL would otherwise look alive until init gets round to it.
fn is_running(pid: Pid) -> bool {
    if kill(pid, None).is_err() {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the parenthesised command name.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

/// Starts `program args` detached: its own session, a clean signal state,
/// `env` added to its environment (values never on its command line),
/// stdin `/dev/null`, stdout and stderr appended to `log`. Returns its pid.
pub fn spawn_detached(
    program: &Path,
    args: &[std::ffi::OsString],
    env: &[(String, String)],
    log: &Path,
) -> Result<u32> {
    let log_file = open_log(log).with_context(|| format!("cannot open log {}", log.display()))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file);
    // SAFETY: setsid is async-signal-safe and touches no memory of ours; it
    // runs in the forked child before exec, so the process outlives this
    // command's terminal and its hangups.
    unsafe {
        command.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    crate::signals::start_clean(&mut command);
    let child = command
        .spawn()
        .with_context(|| format!("start {}", program.display()))?;
    Ok(child.id())
}

/// Waits until `ready` says the process `pid`, just started with its output
/// in `log`, has come up. If it exits first this fails at once, quoting the
/// log's last line (where a failed start says why); after `timeout` it
/// fails saying so.
pub fn wait_started(
    what: &str,
    pid: u32,
    log: &Path,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<()> {
    let process = Pid::from_raw(pid as i32);
    let came_up = wait_for(timeout, POLL_EVERY, || {
        if ready() {
            return Some(Ok(()));
        }
        if !is_running(process) {
            let why = last_line(log).unwrap_or_else(|| "(it logged nothing)".into());
            return Some(Err(anyhow!(
                "the {what} (pid {pid}) exited before it came up: {why}\nsee {}",
                log.display()
            )));
        }
        None
    });
    came_up.unwrap_or_else(|| {
        Err(anyhow!(
            "the {what} did not come up within {} s; see {}",
            timeout.as_secs(),
            log.display()
        ))
    })
}

/// The last non-empty line of `log`, from its last few kilobytes.
fn last_line(log: &Path) -> Option<String> {
    let tail = read_tail(log, 8 * 1024).ok()??;
    let text = String::from_utf8_lossy(&tail);
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(str::to_string)
}

/// Sends SIGTERM to `pid` and waits for it to go; SIGKILL after `grace`.
/// Returns true if it had to be killed.
pub fn stop(pid: i32, grace: Duration) -> bool {
    let pid = Pid::from_raw(pid);
    if kill(pid, Signal::SIGTERM).is_err() {
        return false;
    }
    if wait_until(grace, || !is_running(pid)) {
        return false;
    }
    let _ = kill(pid, Signal::SIGKILL);
    wait_until(Duration::from_secs(2), || !is_running(pid));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_is_not_running() {
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = Pid::from_raw(child.id() as i32);
        // Exited but not reaped: a zombie until `wait`.
        assert!(wait_until(Duration::from_secs(5), || !is_running(pid)));
        assert!(kill(pid, None).is_ok(), "still a zombie, not reaped");
        child.wait().expect("reap");
        assert!(!is_running(pid));
    }
}
