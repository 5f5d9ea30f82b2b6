//! The few system calls durability rests on: fsync of a directory, a
//! rename that never replaces its target, and a whole-file replacement
//! that is either the old file or the new one after a crash.
//!
//! A rename is only durable once the directory holding the new entry is
//! fsynced; a plain `rename(2)` silently replaces an existing target, which
//! in an inbox would destroy a message. Which files to write and in what
//! order is decided by `inbox` and `journal_store`.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};

/// Flushes `dir`'s entries (creations, renames, removals) to stable storage.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
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

/// Replaces `path` with `bytes` atomically: writes `tmp` (same directory),
/// fsyncs it, renames it over `path` and fsyncs the directory. A new file
/// gets `mode`; a replaced one keeps its own permissions.
pub fn replace_file(path: &Path, tmp: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(err) if err.kind() == io::ErrorKind::NotFound => mode,
        Err(err) => return Err(err),
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(tmp)?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(tmp, path)?;
    fsync_dir(
        path.parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
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
    fn replace_file_keeps_the_permissions_of_the_file_it_replaces() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("settings.json");
        let tmp = temp.path().join(".settings.json.tmp");
        replace_file(&path, &tmp, b"one", 0o640).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        replace_file(&path, &tmp, b"two", 0o644).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!tmp.exists());
    }

    #[test]
    fn rename_of_a_missing_file_is_not_found() {
        let temp = tempfile::tempdir().unwrap();
        let err = rename_no_replace(&temp.path().join("a"), &temp.path().join("b")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
