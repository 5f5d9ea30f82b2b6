//! Non-blocking file descriptors, for every process's poll loop: a read
//! that has nothing ends in `WouldBlock` instead of stalling the loop.

use std::io;
use std::os::fd::AsFd;

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// Sets `O_NONBLOCK` so reads end in `WouldBlock` instead of stalling the loop.
pub fn set_nonblocking<F: AsFd>(file: &F) -> io::Result<()> {
    let flags = fcntl(file.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(file.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}
