//! Where the log lines of DING's long-running processes go (the sidecar's
//! and the PTY host's): stderr, which `ding up` points at `sidecar.log` and
//! `pty.log`. When stderr is that very file, the file is capped: once it
//! holds [`LOG_MAX_BYTES`], it is renamed to `NAME.1` (replacing the
//! previous generation) and a fresh file takes its place on stderr, and on
//! stdout if that pointed at the file too. The log of one process thus
//! never takes much more than twice the cap, whatever is logged.
//!
//! When stderr is anything else (a terminal, a pipe, another file) lines
//! are written to it as they are and nothing is rotated.
//!
//! A log write can fail (a full runtime filesystem, a closed pipe, EIO).
//! That is never fatal and never a panic, unlike `eprintln!`: the process
//! it would end runs an agent's harness. The sink counts the lines it
//! could not write and remembers since when writes fail
//! ([`LogSink::failing`]), for the process's status to show; the first
//! line that goes through again ends the failure, and the caller logs how
//! many were lost (see [`Written::Recovered`]).

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::libc;
use nix::sys::stat::{SFlag, fstat};
use serde::Serialize;

use crate::wall_clock::now_rfc3339;

/// The size at which a log file is rotated.
pub const LOG_MAX_BYTES: u64 = 4 * 1024 * 1024;

pub struct LogSink {
    fd: RawFd,
    rotation: Option<Rotation>,
    failing: Option<LogFailure>,
    /// The last write stopped inside a line: the next one that goes
    /// through starts on a line of its own.
    broken_line: bool,
}

/// Log writes that fail: since when and how many lines were lost.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogFailure {
    /// The wall-clock time (RFC 3339 UTC) of the first failed write.
    pub since: String,
    /// Lines not written (in whole or in part) since then.
    pub lost_lines: u64,
    /// The error of the latest failed write.
    pub error: String,
}

/// What [`LogSink::write_line`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    /// The line is in the log.
    Line,
    /// The file was rotated first (the previous generation's path), then
    /// the line written.
    Rotated(PathBuf),
    /// The line is in the log, and it ends a failure: these lines were lost
    /// before it.
    Recovered(LogFailure),
    /// The line could not be written (counted in [`LogSink::failing`]).
    Lost,
}

impl Written {
    /// The record the log writes right after this line, if any:
    /// `log-rotated` naming the previous generation, or
    /// `log-writes-recovered` with how many lines were lost and since when.
    pub fn note(&self) -> Option<serde_json::Value> {
        match self {
            Written::Line | Written::Lost => None,
            Written::Rotated(previous) => Some(serde_json::json!({
                "event": "log-rotated",
                "previous": previous,
            })),
            Written::Recovered(failure) => Some(serde_json::json!({
                "event": "log-writes-recovered",
                "failingSince": failure.since,
                "lostLines": failure.lost_lines,
                "error": failure.error,
            })),
        }
    }
}

struct Rotation {
    path: PathBuf,
    max: u64,
    written: u64,
    /// Other descriptors that pointed at the same file (stdout).
    also: Vec<RawFd>,
}

impl LogSink {
    /// Lines to stderr; capped and rotated if stderr is the file at `path`.
    pub fn stderr(path: Option<&Path>) -> LogSink {
        LogSink::on_fd(
            libc::STDERR_FILENO,
            &[libc::STDOUT_FILENO],
            path,
            LOG_MAX_BYTES,
        )
    }

    /// Lines to descriptor `fd`, rotated at `max` bytes if it is the regular
    /// file at `path`; `also` are repointed with it when they were that file.
    pub fn on_fd(fd: RawFd, also: &[RawFd], path: Option<&Path>, max: u64) -> LogSink {
        let rotation = path.and_then(|path| {
            let (dev, ino, size) = regular_file_behind(fd)?;
            let on_disk = fs::symlink_metadata(path).ok()?;
            if !on_disk.is_file() || (on_disk.dev(), on_disk.ino()) != (dev, ino) {
                return None;
            }
            let also = also
                .iter()
                .copied()
                .filter(|&other| {
                    regular_file_behind(other).is_some_and(|(d, i, _)| (d, i) == (dev, ino))
                })
                .collect();
            Some(Rotation {
                path: path.to_path_buf(),
                max,
                written: size,
                also,
            })
        });
        LogSink {
            fd,
            rotation,
            failing: None,
            broken_line: false,
        }
    }

    /// Writes `line` and a newline, rotating the file first when it is at
    /// its cap. Never fails: a write that does not go through is counted.
    pub fn write_line(&mut self, line: &str) -> Written {
        let rotated = match &self.rotation {
            Some(rotation) if rotation.written >= rotation.max => self.rotate(),
            _ => None,
        };
        let mut bytes = Vec::with_capacity(line.len() + 2);
        if self.broken_line {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let (written, error) = write_all(self.fd, &bytes);
        if let Some(rotation) = &mut self.rotation {
            rotation.written = rotation.written.saturating_add(written as u64);
        }
        match error {
            Some(error) => {
                self.broken_line = written > 0;
                let failure = self.failing.get_or_insert_with(|| LogFailure {
                    since: now_rfc3339(),
                    lost_lines: 0,
                    error: String::new(),
                });
                failure.lost_lines += 1;
                failure.error = error.to_string();
                Written::Lost
            }
            None => {
                self.broken_line = false;
                match (self.failing.take(), rotated) {
                    (Some(failure), _) => Written::Recovered(failure),
                    (None, Some(previous)) => Written::Rotated(previous),
                    (None, None) => Written::Line,
                }
            }
        }
    }

    /// Since when log writes fail, and how many lines were lost; `None`
    /// while they go through.
    pub fn failing(&self) -> Option<&LogFailure> {
        self.failing.as_ref()
    }

    fn rotate(&mut self) -> Option<PathBuf> {
        let rotation = self.rotation.as_mut()?;
        let mut previous = OsString::from(rotation.path.as_os_str());
        previous.push(".1");
        let previous = PathBuf::from(previous);
        let fresh = fs::rename(&rotation.path, &previous).and_then(|()| {
            OpenOptions::new()
                .append(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&rotation.path)
        });
        let file = match fresh {
            Ok(file) => file,
            // Keep writing where we are; try again at the next line.
            Err(_) => return None,
        };
        for &target in std::iter::once(&self.fd).chain(&rotation.also) {
            // SAFETY: dup2 onto a descriptor this process owns and means
            // to replace; `file` stays valid for the call.
            unsafe { libc::dup2(file.as_raw_fd(), target) };
        }
        rotation.written = 0;
        Some(previous)
    }
}

/// Device, inode and size of the regular file behind `fd`, if it is one.
fn regular_file_behind(fd: RawFd) -> Option<(u64, u64, u64)> {
    // SAFETY: the descriptor is only borrowed for the fstat call; an
    // invalid one makes fstat fail, nothing more.
    let stat = fstat(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
    (kind == SFlag::S_IFREG).then_some((
        stat.st_dev,
        stat.st_ino,
        u64::try_from(stat.st_size).unwrap_or(0),
    ))
}

/// Writes all of `bytes` unless the descriptor fails; returns how much went
/// and, if not all of it, why.
fn write_all(fd: RawFd, mut bytes: &[u8]) -> (usize, Option<nix::errno::Errno>) {
    let mut total = 0;
    while !bytes.is_empty() {
        // SAFETY: as in `regular_file_behind`.
        match nix::unistd::write(unsafe { BorrowedFd::borrow_raw(fd) }, bytes) {
            // A write that takes nothing would take nothing again.
            Ok(0) => return (total, Some(nix::errno::Errno::EIO)),
            Ok(n) => {
                total += n;
                bytes = &bytes[n..];
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return (total, Some(errno)),
        }
    }
    (total, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;

    fn open_log(path: &Path) -> RawFd {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open log")
            .into_raw_fd()
    }

    #[test]
    fn the_file_is_rotated_at_its_cap_into_one_previous_generation() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sidecar.log");
        let fd = open_log(&path);
        let also = open_log(&path);
        let mut sink = LogSink::on_fd(fd, &[also], Some(&path), 100);
        let line = "x".repeat(39);
        let mut rotations = 0;
        for _ in 0..30 {
            if let Written::Rotated(previous) = sink.write_line(&line) {
                assert_eq!(previous, dir.path().join("sidecar.log.1"));
                rotations += 1;
            }
        }
        // 40 bytes a line, rotated once 100 are written: every third line.
        assert_eq!(rotations, 9);
        let current = fs::metadata(&path).expect("current").len();
        let previous = fs::metadata(dir.path().join("sidecar.log.1"))
            .expect("previous")
            .len();
        assert_eq!((current, previous), (120, 120));
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "one previous generation only: {names:?}");
        // The other descriptor follows the current file.
        assert_eq!(write_all(also, b"tail\n"), (5, None));
        assert!(fs::read_to_string(&path).expect("read").ends_with("tail\n"));
        // SAFETY: both descriptors are this test's own.
        unsafe {
            libc::close(fd);
            libc::close(also);
        }
    }

    #[test]
    fn a_descriptor_that_is_not_the_named_file_is_never_rotated() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sidecar.log");
        let other = dir.path().join("elsewhere.log");
        fs::write(&path, "").expect("create");
        let fd = open_log(&other);
        let mut sink = LogSink::on_fd(fd, &[], Some(&path), 10);
        for _ in 0..10 {
            assert_eq!(sink.write_line("a line longer than the cap"), Written::Line);
        }
        assert_eq!(fs::metadata(&other).expect("other").len(), 270);
        assert!(!dir.path().join("sidecar.log.1").exists());
        // SAFETY: the descriptor is this test's own.
        unsafe { libc::close(fd) };
    }

    /// A log on a full device loses lines without failing or panicking,
    /// says since when and how many, and the first line that goes through
    /// again reports the loss and ends it. `/dev/full` fails every write
    /// with ENOSPC, as a full runtime filesystem does.
    #[test]
    fn a_write_that_fails_is_counted_and_the_next_that_succeeds_ends_it() {
        let full = OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
            .into_raw_fd();
        let mut sink = LogSink::on_fd(full, &[], None, LOG_MAX_BYTES);
        assert_eq!(sink.write_line("one"), Written::Lost);
        assert_eq!(sink.write_line("two"), Written::Lost);
        let failure = sink.failing().expect("failing").clone();
        assert_eq!(failure.lost_lines, 2);
        assert!(failure.error.contains("No space left"), "{failure:?}");
        assert!(failure.since.ends_with('Z'), "{failure:?}");

        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pty.log");
        let good = open_log(&path);
        // SAFETY: both descriptors are this test's own; the sink's now
        // points at the file.
        unsafe {
            libc::dup2(good, full);
            libc::close(good);
        }
        assert_eq!(sink.write_line("three"), Written::Recovered(failure));
        assert_eq!(sink.failing(), None);
        assert_eq!(sink.write_line("four"), Written::Line);
        assert_eq!(fs::read_to_string(&path).expect("read"), "three\nfour\n");
        // SAFETY: as above.
        unsafe { libc::close(full) };
    }
}
