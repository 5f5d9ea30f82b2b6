//! Starting the harness on a fresh PTY, sizing that PTY, and decoding how the
//! harness ended.
//!
//! The child gets the slave side as its controlling terminal in a new
//! session, with a clean signal state (`signals::start_clean`: the host's
//! blocked mask and any inherited ignored signal undone), and is exec'd
//! directly (no shell). Reaping and deciding what an exit means belong to the host.

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::libc;
use nix::pty::{Winsize, openpty};
use nix::sys::wait::WaitStatus;
use nix::unistd::{Pid, setsid};

use crate::pty::wire::{ChildState, Size};
use crate::signals;

nix::ioctl_write_ptr_bad!(ioctl_set_winsize, libc::TIOCSWINSZ, Winsize);
nix::ioctl_read_bad!(ioctl_get_winsize, libc::TIOCGWINSZ, Winsize);
nix::ioctl_write_int_bad!(ioctl_set_controlling_tty, libc::TIOCSCTTY);

/// The `TERM` the harness gets when neither the host's environment nor
/// `--env` sets one: the terminal the host's screen model emulates.
pub const DEFAULT_TERM: &str = "xterm-256color";

/// A started child: its pid and the master side of its PTY (non-blocking,
/// close-on-exec).
pub struct Spawned {
    pub pid: Pid,
    pub master: OwnedFd,
}

/// What to run and how.
pub struct Launch<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// Set in addition to the inherited environment, in this order.
    pub env: &'a [(OsString, OsString)],
    pub size: Size,
}

pub fn spawn(launch: &Launch<'_>) -> Result<Spawned> {
    let Some((program, args)) = launch.argv.split_first() else {
        bail!("no command to run");
    };
    // Said apart, because exec reports a missing directory and a missing
    // program alike (ENOENT) and would blame the program for both.
    match std::fs::metadata(launch.cwd) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!(
            "cannot start `{program}`: its working directory {} is not a directory",
            launch.cwd.display()
        ),
        Err(err) => bail!(
            "cannot start `{program}`: its working directory {}: {err}",
            launch.cwd.display()
        ),
    }
    let pty = openpty(Some(&winsize(launch.size)), None).context("open a pty")?;
    set_flags(&pty.master)?;
    let stdin = pty.slave.try_clone().context("dup pty slave")?;
    let stdout = pty.slave.try_clone().context("dup pty slave")?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(launch.cwd)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(pty.slave));
    // SAFETY: the closure only calls async-signal-safe functions (setsid,
    // ioctl) between fork and exec.
    unsafe {
        command.pre_exec(|| {
            setsid()?;
            ioctl_set_controlling_tty(0, 0)?;
            Ok(())
        });
    }
    signals::start_clean(&mut command);
    let child = command.spawn().map_err(|err| {
        let why = match err.kind() {
            std::io::ErrorKind::NotFound if program.contains('/') => {
                format!("`{program}` does not exist")
            }
            std::io::ErrorKind::NotFound => {
                format!("`{program}` is not found on PATH")
            }
            _ => format!("`{program}`: {err}"),
        };
        anyhow::anyhow!(
            "cannot start the program: {why} (in {})",
            launch.cwd.display()
        )
    })?;
    // `Command` closed its copies of the slave in the parent when it dropped
    // the Stdio values; the master is ours alone.
    let pid = i32::try_from(child.id()).context("child pid out of range")?;
    Ok(Spawned {
        pid: Pid::from_raw(pid),
        master: pty.master,
    })
}

fn set_flags(master: &OwnedFd) -> Result<()> {
    let fd = master.as_fd();
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).context("get pty flags")?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).context("make pty non-blocking")?;
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).context("make pty close-on-exec")?;
    Ok(())
}

pub fn winsize(size: Size) -> Winsize {
    Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// Sets the size of the terminal behind `fd`; the kernel sends SIGWINCH to
/// its foreground process group.
pub fn set_size<F: AsFd>(fd: &F, size: Size) -> Result<()> {
    let ws = winsize(size);
    // SAFETY: TIOCSWINSZ reads one winsize from a valid pointer.
    unsafe { ioctl_set_winsize(fd.as_fd().as_raw_fd(), &ws) }.context("set terminal size")?;
    Ok(())
}

/// The size of the terminal behind `fd`, if it is one.
pub fn get_size<F: AsFd>(fd: &F) -> Option<Size> {
    let mut ws = winsize(Size { cols: 0, rows: 0 });
    // SAFETY: TIOCGWINSZ writes one winsize to a valid pointer.
    unsafe { ioctl_get_winsize(fd.as_fd().as_raw_fd(), &mut ws) }.ok()?;
    (ws.ws_col > 0 && ws.ws_row > 0).then_some(Size {
        cols: ws.ws_col,
        rows: ws.ws_row,
    })
}

/// How a reaped child ended, or `None` for a status that is not an end
/// (stopped, continued).
pub fn exit_state(status: WaitStatus) -> Option<ChildState> {
    match status {
        WaitStatus::Exited(_, code) => Some(ChildState::Exited { code }),
        WaitStatus::Signaled(_, signal, _) => Some(ChildState::Killed {
            signal: signal as i32,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn_error(argv: &[&str], cwd: &Path) -> String {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        match spawn(&Launch {
            argv: &argv,
            cwd,
            env: &[],
            size: Size { cols: 80, rows: 24 },
        }) {
            Ok(_) => panic!("{argv:?} started"),
            Err(err) => format!("{err:#}"),
        }
    }

    #[test]
    fn a_missing_directory_and_a_missing_program_are_told_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gone = dir.path().join("gone");
        let err = spawn_error(&["sh"], &gone);
        assert!(
            err.starts_with("cannot start `sh`: its working directory ") && err.contains("gone"),
            "{err}"
        );
        let err = spawn_error(&["surely-no-such-program-here"], dir.path());
        assert!(
            err.starts_with(
                "cannot start the program: `surely-no-such-program-here` is not found on PATH"
            ),
            "{err}"
        );
        let err = spawn_error(&["./missing"], dir.path());
        assert!(err.contains("`./missing` does not exist"), "{err}");
    }
}
