//! The adapter child process: spawned from an opaque argv with no shell,
//! stdin carrying the downlink (sidecar to adapter lines), stdout read as
//! protocol lines, stderr read as log lines.
//!
//! The adapter leads its own process group and starts with a clean signal
//! state ([`crate::signals::start_clean`]), so it can be stopped: every
//! signal goes to the whole group, which is how helpers the adapter forked
//! stop with it. The group lives as long as the adapter: when the adapter
//! exits or is replaced, whatever is left in its group is killed.
//!
//! This file only moves bytes and signals. What the lines mean is the
//! engine's business, and when to (re)spawn is the engine's decision; the
//! runtime registers the two pipes with its poll loop and reaps the child on
//! SIGCHLD.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::core::protocol::MAX_LINE_BYTES;
use crate::lines::{Line, LineBuffer};
use crate::nonblocking::set_nonblocking;
use crate::signals;
use crate::wait::wait_until;

/// How long the adapter's process group has, after SIGTERM, to exit before
/// it gets SIGKILL when the sidecar stops.
pub const ADAPTER_STOP_GRACE: Duration = Duration::from_secs(2);
/// How long a stop waits for a group that got SIGKILL to be gone.
pub const ADAPTER_KILL_WAIT: Duration = Duration::from_secs(1);

/// The longest stderr line logged whole; the rest of a longer line is dropped.
const MAX_STDERR_LINE: usize = 4096;

/// Most bytes taken from one adapter pipe per turn of the sidecar's loop.
/// The lines they hold are handled before more is read, so an adapter that
/// writes without pause costs bounded memory, and status requests and the
/// PTY are served between its turns.
pub const PIPE_READ_BUDGET: usize = 64 * 1024;

/// Where a pipe stands after draining it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drained {
    /// Read until `WouldBlock`; more may come, and poll will say so.
    Open,
    /// [`PIPE_READ_BUDGET`] was read; more may be waiting, and poll will
    /// not say so again: read again next turn.
    Budget,
    /// The writer closed it.
    Eof,
}

/// The most downlink bytes queued for an adapter that does not read its
/// stdin. Past it, further lines are dropped (and logged): the adapter is not
/// listening, and the sidecar must not grow for it.
pub const MAX_STDIN_QUEUE: usize = 256 * 1024;

pub struct AdapterProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Downlink bytes not yet taken by the pipe, written from `stdin_sent`.
    stdin_queue: Vec<u8>,
    stdin_sent: usize,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    stdout_lines: LineBuffer,
    stderr_lines: LineBuffer,
}

impl AdapterProcess {
    /// Spawns `argv` (already expanded) with `env` added to the sidecar's
    /// environment. Both pipes are non-blocking.
    pub fn spawn(
        argv: &[OsString],
        env: &[(String, OsString)],
        cwd: &Path,
    ) -> io::Result<AdapterProcess> {
        let Some((program, args)) = argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty adapter command",
            ));
        };
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // Not the sidecar's blocked signals, nor anything ignored upstream:
        // the adapter must act on the SIGTERM that stops it.
        signals::start_clean(&mut command);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        if let Some(pipe) = &stdin {
            set_nonblocking(pipe)?;
        }
        if let Some(pipe) = &stdout {
            set_nonblocking(pipe)?;
        }
        if let Some(pipe) = &stderr {
            set_nonblocking(pipe)?;
        }
        Ok(AdapterProcess {
            child,
            stdin,
            stdin_queue: Vec::new(),
            stdin_sent: 0,
            stdout,
            stderr,
            stdout_lines: LineBuffer::new(MAX_LINE_BYTES),
            stderr_lines: LineBuffer::new(MAX_STDERR_LINE),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stdin_fd(&self) -> Option<RawFd> {
        self.stdin.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Queues one downlink line (newline added). Returns false, queueing
    /// nothing, when the adapter has closed its stdin or let
    /// [`MAX_STDIN_QUEUE`] bytes pile up.
    pub fn queue_line(&mut self, line: &str) -> bool {
        let queued = self.stdin_queue.len() - self.stdin_sent;
        if self.stdin.is_none() || queued + line.len() + 1 > MAX_STDIN_QUEUE {
            return false;
        }
        self.stdin_queue.extend_from_slice(line.as_bytes());
        self.stdin_queue.push(b'\n');
        true
    }

    /// Writes queued downlink bytes until the pipe is full. Returns whether
    /// bytes still wait (the runtime then asks for writability).
    pub fn flush_stdin(&mut self) -> bool {
        let Some(pipe) = self.stdin.as_mut() else {
            self.stdin_queue.clear();
            self.stdin_sent = 0;
            return false;
        };
        while self.stdin_sent < self.stdin_queue.len() {
            match pipe.write(&self.stdin_queue[self.stdin_sent..]) {
                Ok(0) => break,
                Ok(n) => self.stdin_sent += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    // The adapter closed its stdin: it does not listen.
                    self.stdin = None;
                    self.stdin_queue.clear();
                    self.stdin_sent = 0;
                    return false;
                }
            }
        }
        if self.stdin_sent == self.stdin_queue.len() {
            self.stdin_queue.clear();
            self.stdin_sent = 0;
        }
        !self.stdin_queue.is_empty()
    }

    pub fn stdout_fd(&self) -> Option<RawFd> {
        self.stdout.as_ref().map(AsRawFd::as_raw_fd)
    }

    pub fn stderr_fd(&self) -> Option<RawFd> {
        self.stderr.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// Reads stdout until `WouldBlock`, end of file or the budget, appending
    /// protocol lines.
    pub fn drain_stdout(&mut self, out: &mut Vec<Line>) -> Drained {
        let drained = drain(self.stdout.as_mut(), &mut self.stdout_lines, out);
        if drained == Drained::Eof {
            self.stdout = None;
        }
        drained
    }

    /// Reads stderr until `WouldBlock`, end of file or the budget, appending
    /// log lines.
    pub fn drain_stderr(&mut self, out: &mut Vec<Line>) -> Drained {
        let drained = drain(self.stderr.as_mut(), &mut self.stderr_lines, out);
        if drained == Drained::Eof {
            self.stderr = None;
        }
        drained
    }

    /// The exit status, if the child has exited (reaping it; asking again
    /// gives the same status).
    pub fn try_reap(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The adapter's process group: its own pid.
    fn group(&self) -> Option<Pid> {
        i32::try_from(self.child.id()).ok().map(Pid::from_raw)
    }

    fn signal_group(&self, signal: Signal) {
        if let Some(group) = self.group() {
            let _ = killpg(group, signal);
        }
    }

    /// Kills the adapter and everything left in its group at once
    /// (SIGKILL); the caller reaps the adapter later.
    pub fn kill(&mut self) {
        self.signal_group(Signal::SIGKILL);
    }

    /// Whether the adapter is reaped and nothing is left in its group.
    /// A member we may not signal (it changed its uid) is not ours to wait
    /// for; a dead member init has not reaped yet still counts, briefly.
    fn gone(&mut self) -> bool {
        self.try_reap().is_some()
            && self
                .group()
                .is_none_or(|group| killpg(group, None::<Signal>).is_err())
    }

    /// Stops the adapter's whole process group, blocking until it is gone:
    /// SIGTERM, then SIGKILL after `grace`, then at most
    /// [`ADAPTER_KILL_WAIT`] more. Reaps the adapter.
    pub fn stop(&mut self, grace: Duration) -> Stopped {
        if self.gone() {
            return Stopped::Exited;
        }
        self.signal_group(Signal::SIGTERM);
        if self.wait_gone(grace) {
            return Stopped::Exited;
        }
        self.kill();
        if self.wait_gone(ADAPTER_KILL_WAIT) {
            Stopped::Killed
        } else {
            Stopped::Lingering
        }
    }

    fn wait_gone(&mut self, patience: Duration) -> bool {
        // The sidecar is stopping: there is nothing else to do meanwhile,
        // and the group's other members send us no SIGCHLD to wait on.
        wait_until(patience, || self.gone())
    }
}

/// How [`AdapterProcess::stop`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The group was gone within the grace (or already).
    Exited,
    /// It needed SIGKILL.
    Killed,
    /// Something was still in the group after SIGKILL (a zombie whose
    /// parent does not reap it, or a process stuck in the kernel).
    Lingering,
}

impl Stopped {
    pub fn as_str(self) -> &'static str {
        match self {
            Stopped::Exited => "exited",
            Stopped::Killed => "killed",
            Stopped::Lingering => "lingering",
        }
    }
}

/// `exit code 3`, `signal 9`.
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "unknown status".to_string(),
    }
}

fn drain<R: Read>(pipe: Option<&mut R>, lines: &mut LineBuffer, out: &mut Vec<Line>) -> Drained {
    let Some(pipe) = pipe else {
        return Drained::Eof;
    };
    let mut chunk = [0u8; 16 * 1024];
    let mut taken = 0;
    loop {
        if taken >= PIPE_READ_BUDGET {
            return Drained::Budget;
        }
        match pipe.read(&mut chunk) {
            Ok(0) => {
                out.extend(lines.finish());
                return Drained::Eof;
            }
            Ok(n) => {
                lines.push(&chunk[..n], out);
                taken += n;
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Drained::Open,
            Err(_) => {
                out.extend(lines.finish());
                return Drained::Eof;
            }
        }
    }
}
