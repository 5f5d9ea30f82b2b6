//! The few system calls durability rests on: fsync of a directory, a
//! rename that never replaces its target, and a whole-file replacement
//! that is either the old file or the new one after a crash.
//!
//! A rename is only durable once the directory holding the new entry is
//! fsynced; a plain `rename(2)` silently replaces an existing target, which
//! in an inbox would destroy a message. Which files to write and in what
//! order is decided by `inbox` and `journal_store`.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

/// Flushes `dir`'s entries (creations, renames, removals) to stable storage.
/// Opened with `O_DIRECTORY`, so a FIFO planted in its place fails at once
/// instead of blocking the open.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_DIRECTORY)
        .open(dir)?
        .sync_all()
}

/// Renames `from` to `to` unless `to` exists, in which case it fails with
/// [`io::ErrorKind::AlreadyExists`] and changes nothing.
///
/// Uses `renameat2(RENAME_NOREPLACE)`. Filesystems that do not support the
/// flag get the Maildir classic instead: `link` (which also refuses an
/// existing target) then `unlink`. A crash between those two leaves the
/// file under both names; the target name is the one that counts.
pub fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    match renameat2(AT_FDCWD, from, AT_FDCWD, to, RenameFlags::RENAME_NOREPLACE) {
        Ok(()) => Ok(()),
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP) => {
            std::fs::hard_link(from, to)?;
            std::fs::remove_file(from)
        }
        Err(errno) => Err(io::Error::from(errno)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn rename_no_replace_keeps_an_existing_target() {
        let temp = tempfile::tempdir().unwrap();
        let from = temp.path().join("from");
        let to = temp.path().join("to");
        fs::write(&from, b"new").unwrap();
        fs::write(&to, b"old").unwrap();
        let err = rename_no_replace(&from, &to).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&to).unwrap(), b"old");
        assert_eq!(fs::read(&from).unwrap(), b"new");
    }

    #[test]
    fn rename_no_replace_moves_to_a_free_name() {
        let temp = tempfile::tempdir().unwrap();
        let from = temp.path().join("from");
        let to = temp.path().join("to");
        fs::write(&from, b"body").unwrap();
        rename_no_replace(&from, &to).unwrap();
        assert!(!from.exists());
        assert_eq!(fs::read(&to).unwrap(), b"body");
        fsync_dir(temp.path()).unwrap();
    }

    #[test]
    fn rename_of_a_missing_file_is_not_found() {
        let temp = tempfile::tempdir().unwrap();
        let err = rename_no_replace(&temp.path().join("a"), &temp.path().join("b")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn fsync_of_a_fifo_planted_as_the_directory_fails_at_once() {
        let temp = tempfile::tempdir().unwrap();
        let fifo = temp.path().join("dir");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Without O_DIRECTORY this open would wait for a writer forever.
        assert!(fsync_dir(&fifo).is_err());
    }
}
