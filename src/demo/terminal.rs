//! The demo agent's terminal loop: raw mode, alternate screen, bracketed
//! paste, and a blocking `poll` over stdin and a signalfd, with a timeout
//! for the next turn tick.
//!
//! This is the only part of the demo agent that touches file descriptors.
//! Keys go to the state machine (`agent.rs`), frames come from `render.rs`,
//! events go to the transcript. It redraws only when the view changed, so an
//! idle demo agent writes nothing and the PTY revision stays put (a program
//! that repaints on a timer would defeat every compare-and-send).
//! The terminal is restored on every way out: return, error, SIGTERM and
//! SIGHUP (read through the signalfd) and panics (a drop guard).

use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::time::Instant;

use crate::raw_mode::RawMode;
use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;

use crate::demo::agent::{Agent, Config};
use crate::demo::keys::KeyDecoder;
use crate::demo::render;
use crate::demo::transcript::Transcript;
use crate::pty::child::get_size;
use crate::pty::wire::Size;

/// Alternate screen on, bracketed paste on.
const ENTER: &[u8] = b"\x1b[?1049h\x1b[?2004h";
/// Bracketed paste off, cursor visible, main screen back.
const LEAVE: &[u8] = b"\x1b[?2004l\x1b[?25h\x1b[?1049l";
/// The size used when stdout is not a terminal.
const FALLBACK_SIZE: Size = Size { cols: 80, rows: 24 };

/// `ding demo-agent` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub config: Config,
    pub transcript: Option<PathBuf>,
}

/// Raw mode and the demo agent's screen modes, undone when dropped (the
/// screen modes first, while the terminal is still raw).
struct TerminalGuard<'a> {
    _raw: RawMode<'a>,
}

impl<'a> TerminalGuard<'a> {
    fn enter(fd: BorrowedFd<'a>) -> Result<TerminalGuard<'a>> {
        let raw = RawMode::enter(fd)?;
        write_all(ENTER)?;
        Ok(TerminalGuard { _raw: raw })
    }
}

impl Drop for TerminalGuard<'_> {
    fn drop(&mut self) {
        let _ = write_all(LEAVE);
    }
}

/// Writes a whole frame with as few `write` calls as the terminal allows.
/// Not through std's stdout, whose line buffering would split every frame
/// at its last newline and let a snapshot catch the screen half drawn.
fn write_all(mut bytes: &[u8]) -> Result<()> {
    let stdout = io::stdout();
    while !bytes.is_empty() {
        match nix::unistd::write(&stdout, bytes) {
            Ok(0) => bail!("the terminal accepted no bytes"),
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(err) => return Err(err).context("write to the terminal"),
        }
    }
    Ok(())
}

/// Runs the demo agent on this process's terminal until it quits, stdin
/// ends, or SIGTERM/SIGHUP arrives.
pub fn run(options: &Options) -> Result<()> {
    let stdin = io::stdin();
    let stdin_fd = stdin.as_fd();
    if !nix::unistd::isatty(stdin_fd).unwrap_or(false) {
        bail!("demo-agent needs a terminal on stdin (run it under `ding pty`)");
    }
    let mut transcript = match &options.transcript {
        Some(path) => Some(Transcript::open(path)?),
        None => None,
    };
    let signals = crate::signals::read_through_signalfd(&[
        Signal::SIGWINCH,
        Signal::SIGTERM,
        Signal::SIGHUP,
    ])?;

    let _guard = TerminalGuard::enter(stdin_fd)?;
    let mut agent = Agent::new(options.config);
    let mut decoder = KeyDecoder::new();
    let mut size = get_size(&io::stdout()).unwrap_or(FALLBACK_SIZE);
    let mut buf = [0u8; 16 * 1024];
    loop {
        while let Some(event) = agent.poll_event() {
            if let Some(transcript) = transcript.as_mut() {
                transcript.record(&event)?;
            }
        }
        if agent.wants_exit() {
            return Ok(());
        }
        if agent.take_redraw() {
            write_all(&render::encode(&render::frame(
                &agent, size.cols, size.rows,
            )))?;
        }
        let timeout = match agent.next_deadline() {
            None => PollTimeout::NONE,
            Some(at) => {
                // Round up so we never wake a hair early and spin.
                let wait = at.saturating_duration_since(Instant::now());
                let ms = wait.as_micros().div_ceil(1000);
                PollTimeout::try_from(ms.min(60_000) as i32).unwrap_or(PollTimeout::MAX)
            }
        };
        let mut fds = [
            PollFd::new(stdin_fd, PollFlags::POLLIN),
            PollFd::new(signals.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, timeout) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(err) => return Err(err).context("poll"),
        }
        let input_ready = fds[0].revents().is_some_and(|r| !r.is_empty());
        let signal_ready = fds[1].revents().is_some_and(|r| !r.is_empty());
        if signal_ready {
            while let Some(info) = signals.read_signal().context("read signalfd")? {
                if info.ssi_signo == Signal::SIGWINCH as u32 {
                    size = get_size(&io::stdout()).unwrap_or(FALLBACK_SIZE);
                    // Redraw even for the same size: the program cannot know
                    // what the terminal kept.
                    write_all(&render::encode(&render::frame(
                        &agent, size.cols, size.rows,
                    )))?;
                } else {
                    return Ok(());
                }
            }
        }
        if input_ready {
            // Read the fd itself, not std's buffered stdin, so no byte
            // waits in a buffer that poll cannot see.
            let n = match nix::unistd::read(stdin_fd, &mut buf) {
                Ok(n) => n,
                Err(Errno::EINTR | Errno::EAGAIN) => continue,
                // EIO: the terminal hung up.
                Err(_) => return Ok(()),
            };
            if n == 0 {
                return Ok(());
            }
            let now = Instant::now();
            for key in decoder.feed(&buf[..n]) {
                agent.handle_key(key, now);
            }
        }
        agent.handle_timeout(Instant::now());
    }
}
