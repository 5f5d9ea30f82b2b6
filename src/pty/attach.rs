//! The interactive side of `ding attach`: the user's terminal in raw mode,
//! keystrokes to the host as data frames, terminal output back to the
//! screen, SIGWINCH as resize frames, and a detach key.
//!
//! Like dtach's `attach.c`, this is a small poll loop over stdin, the
//! socket and a signalfd. The user's terminal settings are restored on every
//! way out: normal return, error, panic (a drop guard) and SIGTERM/SIGHUP
//! (read through the signalfd, so the loop returns normally). Frame shapes
//! are in `wire`; the host decides what input means.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::raw_mode::RawMode;
use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use nix::sys::signalfd::SignalFd;

use crate::pty::child::get_size;
use crate::pty::client::Client;
use crate::pty::wire::{ChildState, FrameKind, Parsed, parse_frame, push_frame, resize_payload};

/// The default detach key, Ctrl-\ as in dtach.
pub const DEFAULT_DETACH_KEY: u8 = 0x1c;

/// How an attach session ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttachEnd {
    Detached,
    ChildExited(ChildState),
    HostClosed,
    Signalled(Signal),
}

/// Parses a detach key written as `^X`, `^\`, `^?` or `none`.
pub fn parse_detach_key(text: &str) -> Result<Option<u8>> {
    if text == "none" {
        return Ok(None);
    }
    match text.as_bytes() {
        [b'^', b'?'] => Ok(Some(0x7f)),
        [b'^', c] if (b'@'..=b'_').contains(&c.to_ascii_uppercase()) => {
            Ok(Some(c.to_ascii_uppercase() ^ 0x40))
        }
        _ => bail!("--detach-key wants ^X (a control key) or `none`, got `{text}`"),
    }
}

/// Attaches the calling terminal to the host at `socket` until detach,
/// child exit, host hangup or a terminating signal.
pub fn run(socket: &Path, detach_key: Option<u8>) -> Result<AttachEnd> {
    let stdin = io::stdin();
    let stdin_fd = stdin.as_fd();
    let is_tty = nix::unistd::isatty(stdin_fd).unwrap_or(false);

    let signals = crate::signals::read_through_signalfd(&[
        Signal::SIGWINCH,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGINT,
    ])?;

    let mut client = Client::connect(socket)?;
    let host_size = client.status()?.size;
    let (mut stream, mut inbuf) = client.attach()?;

    let raw = if is_tty {
        Some(RawMode::enter(stdin_fd)?)
    } else {
        None
    };
    if let Some(size) = get_size(&stdin_fd).filter(|size| *size != host_size) {
        send_frame(&mut stream, FrameKind::Resize, &resize_payload(size))?;
    }
    let end = pump(&mut stream, &mut inbuf, stdin_fd, &signals, detach_key);
    if is_tty {
        // Leave the user's terminal usable whatever the application left
        // set: main screen, no bracketed paste, visible cursor, plain text.
        let mut out = io::stdout();
        let _ = out.write_all(b"\x1b[?1049l\x1b[?2004l\x1b[?25h\x1b[0m\r\n");
        let _ = out.flush();
    }
    drop(raw);
    end
}

fn pump(
    stream: &mut UnixStream,
    inbuf: &mut Vec<u8>,
    stdin_fd: BorrowedFd<'_>,
    signals: &SignalFd,
    detach_key: Option<u8>,
) -> Result<AttachEnd> {
    let mut stdout = io::stdout().lock();
    let mut chunk = [0u8; 64 * 1024];
    let mut stdin_open = true;
    loop {
        // Frames that arrived with the attach reply come first.
        while let Parsed::Frame {
            kind,
            payload,
            consumed,
        } = parse_frame(inbuf)
        {
            inbuf.drain(..consumed);
            match kind {
                FrameKind::Data => {
                    stdout.write_all(&payload).context("write to terminal")?;
                }
                FrameKind::Exit => {
                    stdout.flush().context("write to terminal")?;
                    let state =
                        serde_json::from_slice(&payload).unwrap_or(ChildState::Exited { code: -1 });
                    return Ok(AttachEnd::ChildExited(state));
                }
                FrameKind::Resize | FrameKind::Detach => {}
            }
        }
        if let Parsed::Invalid(why) = parse_frame(inbuf) {
            bail!("the pty host sent a bad frame: {why}");
        }
        stdout.flush().context("write to terminal")?;

        let stream_fd = stream.as_fd();
        let mut fds = vec![
            PollFd::new(stream_fd, PollFlags::POLLIN),
            PollFd::new(signals.as_fd(), PollFlags::POLLIN),
        ];
        if stdin_open {
            fds.push(PollFd::new(stdin_fd, PollFlags::POLLIN));
        }
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(err) => return Err(err).context("poll"),
        }
        let ready = |fd: &PollFd<'_>| {
            fd.revents().is_some_and(|r| {
                r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
            })
        };
        let (socket_ready, signal_ready) = (ready(&fds[0]), ready(&fds[1]));
        let stdin_ready = fds.get(2).is_some_and(ready);
        drop(fds);

        if signal_ready {
            while let Ok(Some(info)) = signals.read_signal() {
                match Signal::try_from(info.ssi_signo as i32) {
                    Ok(Signal::SIGWINCH) => {
                        if let Some(size) = get_size(&stdin_fd) {
                            send_frame(stream, FrameKind::Resize, &resize_payload(size))?;
                        }
                    }
                    Ok(signal) => {
                        let _ = send_frame(stream, FrameKind::Detach, &[]);
                        return Ok(AttachEnd::Signalled(signal));
                    }
                    Err(_) => {}
                }
            }
        }
        if socket_ready {
            match stream.read(&mut chunk) {
                Ok(0) => return Ok(AttachEnd::HostClosed),
                Ok(n) => inbuf.extend_from_slice(&chunk[..n]),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err).context("read from pty host"),
            }
        }
        if stdin_ready {
            let n = match nix::unistd::read(stdin_fd, &mut chunk) {
                Ok(n) => n,
                Err(Errno::EINTR | Errno::EAGAIN) => continue,
                Err(err) => return Err(err).context("read from terminal"),
            };
            if n == 0 {
                // Input ended (a pipe, not a terminal); keep showing output.
                stdin_open = false;
                continue;
            }
            let keys = &chunk[..n];
            let cut = detach_key.and_then(|key| keys.iter().position(|&b| b == key));
            let to_send = &keys[..cut.unwrap_or(n)];
            if !to_send.is_empty() {
                send_frame(stream, FrameKind::Data, to_send)?;
            }
            if cut.is_some() {
                send_frame(stream, FrameKind::Detach, &[])?;
                return Ok(AttachEnd::Detached);
            }
        }
    }
}

fn send_frame(stream: &mut UnixStream, kind: FrameKind, payload: &[u8]) -> Result<()> {
    let mut frame = Vec::with_capacity(payload.len() + 5);
    push_frame(&mut frame, kind, payload);
    stream.write_all(&frame).context("write to pty host")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detach_keys_parse_like_caret_notation() {
        assert_eq!(parse_detach_key("^\\").expect("key"), Some(0x1c));
        assert_eq!(parse_detach_key("^a").expect("key"), Some(0x01));
        assert_eq!(parse_detach_key("^X").expect("key"), Some(0x18));
        assert_eq!(parse_detach_key("^?").expect("key"), Some(0x7f));
        assert_eq!(parse_detach_key("none").expect("key"), None);
        for bad in ["x", "^", "^1", "ctrl-x"] {
            assert!(parse_detach_key(bad).is_err(), "{bad}");
        }
    }
}
