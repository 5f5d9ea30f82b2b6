//! Raw mode for a terminal this process owns, undone when dropped: the one
//! guard `ding attach` and the demo agent share.
//!
//! `cfmakeraw` turns off echo, line editing and signal keys, so every byte
//! reaches the program as typed; the saved settings come back on every way
//! out (return, error, panic unwinding), because a shell left in raw mode is
//! a broken terminal for the person who typed the command.

use std::os::fd::BorrowedFd;

use anyhow::{Context, Result};
use nix::sys::termios::{self, SetArg, Termios};

/// The terminal's settings before raw mode, restored on drop.
pub struct RawMode<'a> {
    fd: BorrowedFd<'a>,
    saved: Termios,
}

impl<'a> RawMode<'a> {
    /// Puts the terminal on `fd` in raw mode.
    pub fn enter(fd: BorrowedFd<'a>) -> Result<RawMode<'a>> {
        let saved = termios::tcgetattr(fd).context("read terminal settings")?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(fd, SetArg::TCSADRAIN, &raw).context("enter raw mode")?;
        Ok(RawMode { fd, saved })
    }
}

impl Drop for RawMode<'_> {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(self.fd, SetArg::TCSADRAIN, &self.saved);
    }
}
