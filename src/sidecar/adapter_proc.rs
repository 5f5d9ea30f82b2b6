//! The adapter child process: spawned from an opaque argv with no shell,
//! stdin carrying the downlink (sidecar to adapter lines), stdout read as
//! protocol lines, stderr read as log lines.
//!
//! This file only moves bytes. What the lines mean is the engine's business,
//! and when to (re)spawn is the engine's decision; the runtime registers the
//! two pipes with its poll loop and reaps the child on SIGCHLD.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::lines::{Line, LineBuffer};
use crate::core::protocol::MAX_LINE_BYTES;

/// The longest stderr line logged whole; the rest of a longer line is dropped.
const MAX_STDERR_LINE: usize = 4096;

/// Where a pipe stands after draining it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drained {
    /// Read until `WouldBlock`; more may come.
    Open,
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
        // std resets the signal mask and SIGPIPE disposition in the child, so
        // the sidecar's blocked signals do not leak into the adapter.
        let mut child = Command::new(program)
            .args(args)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
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

    /// Reads stdout until `WouldBlock` or end of file, appending protocol lines.
    pub fn drain_stdout(&mut self, out: &mut Vec<Line>) -> Drained {
        let drained = drain(self.stdout.as_mut(), &mut self.stdout_lines, out);
        if drained == Drained::Eof {
            self.stdout = None;
        }
        drained
    }

    /// Reads stderr until `WouldBlock` or end of file, appending log lines.
    pub fn drain_stderr(&mut self, out: &mut Vec<Line>) -> Drained {
        let drained = drain(self.stderr.as_mut(), &mut self.stderr_lines, out);
        if drained == Drained::Eof {
            self.stderr = None;
        }
        drained
    }

    /// The exit status, if the child has exited (reaping it).
    pub fn try_reap(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Asks the child to stop (SIGTERM); the caller reaps it later.
    pub fn terminate(&self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
    }

    /// Stops the child at once (SIGKILL); the caller reaps it later.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
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
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => {
                out.extend(lines.finish());
                return Drained::Eof;
            }
            Ok(n) => lines.push(&chunk[..n], out),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Drained::Open,
            Err(_) => {
                out.extend(lines.finish());
                return Drained::Eof;
            }
        }
    }
}

/// Sets `O_NONBLOCK` so reads end in `WouldBlock` instead of stalling the loop.
pub fn set_nonblocking<F: AsFd>(file: &F) -> io::Result<()> {
    let flags = fcntl(file.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(file.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}
