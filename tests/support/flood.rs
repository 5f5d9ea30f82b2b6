//! Hostile peers for the resource-bound tests: sockets that pipeline
//! requests and never read a reply, and the memory figures of a process
//! under them (read from /proc, so bounds are asserted on memory, not on
//! time).

use std::fs;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// A memory figure of `pid` in KiB, from /proc/PID/status: `VmRSS` (now)
/// or `VmHWM` (the peak so far).
pub fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} for pid {pid}"))
}

/// `count` connections to `socket`, non-blocking.
pub fn connect_peers(socket: &Path, count: usize) -> Vec<UnixStream> {
    (0..count)
        .map(|_| {
            let stream = UnixStream::connect(socket).expect("connect");
            stream.set_nonblocking(true).expect("non-blocking");
            stream
        })
        .collect()
}

/// How one peer's part of a flood ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipelined {
    /// Bytes the other side accepted (into its socket buffer or beyond).
    pub written: usize,
    /// The other side closed the connection.
    pub closed: bool,
}

/// Writes `total` bytes of `pattern`, repeated, into every peer, reading
/// nothing back. Stops when every peer wrote all of it or was closed, or
/// when no peer could take a single byte for `stuck_after` (the other side
/// stopped reading).
pub fn pipeline_without_reading(
    peers: &mut [UnixStream],
    pattern: &[u8],
    total: usize,
    stuck_after: Duration,
) -> Vec<Pipelined> {
    let block = pattern.repeat((64 * 1024 / pattern.len()).max(1));
    let mut ends = vec![
        Pipelined {
            written: 0,
            closed: false
        };
        peers.len()
    ];
    loop {
        for (peer, end) in peers.iter_mut().zip(ends.iter_mut()) {
            while end.written < total && !end.closed {
                let start = end.written % block.len();
                let stop = block.len().min(start + (total - end.written));
                match peer.write(&block[start..stop]) {
                    Ok(n) => end.written += n,
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => end.closed = true,
                }
            }
        }
        let waiting: Vec<usize> = (0..peers.len())
            .filter(|&i| ends[i].written < total && !ends[i].closed)
            .collect();
        if waiting.is_empty() {
            return ends;
        }
        let mut fds: Vec<PollFd> = waiting
            .iter()
            .map(|&i| PollFd::new(peers[i].as_fd(), PollFlags::POLLOUT))
            .collect();
        let millis = u16::try_from(stuck_after.as_millis()).unwrap_or(u16::MAX);
        if poll(&mut fds, PollTimeout::from(millis)).expect("poll") == 0 {
            return ends;
        }
    }
}
