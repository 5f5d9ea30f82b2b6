//! Directories only their owner may change: creation with mode 0700 and the
//! ownership and permission checks every DING directory passes before use.
//!
//! Whoever can write into an inbox can put words in front of an agent, and
//! whoever can write into a runtime or state directory can impersonate the
//! PTY host or forge ownership. So a directory owned by another user, or
//! writable by group or others, is refused with an error that says how to
//! fix it; DING never chmods an existing directory behind the user's back.
//! What each directory holds is decided by `inbox` and `paths`.

use std::fs::{self, DirBuilder};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// How private a directory must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// Others may read and list it but never write: inboxes and the state
    /// directory, which a user may want to inspect with other tools.
    NoForeignWrites,
    /// Nobody but the owner may even look, and it must not be a symbolic
    /// link: runtime directories holding sockets, often under a shared
    /// `/tmp` where anyone could have created the path first.
    OwnerOnly,
}

impl Privacy {
    fn forbidden_mode_bits(self) -> u32 {
        match self {
            Privacy::NoForeignWrites => 0o022,
            Privacy::OwnerOnly => 0o077,
        }
    }
}

/// The effective uid of this process: the owner every DING directory needs.
pub fn current_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Creates `path` and its missing parents with mode 0700 (less the umask),
/// then checks `path` itself with [`check_dir`]. Existing directories are
/// checked, never changed.
pub fn ensure_dir(path: &Path, uid: u32, privacy: Privacy) -> Result<()> {
    match DirBuilder::new().recursive(true).mode(0o700).create(path) {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(err) => {
            return Err(err).with_context(|| format!("cannot create {}", path.display()));
        }
    }
    check_dir(path, uid, privacy)
}

/// Refuses a path that is not a directory, is owned by another uid than
/// `uid`, has the mode bits `privacy` forbids, or (for
/// [`Privacy::OwnerOnly`]) is a symbolic link.
pub fn check_dir(path: &Path, uid: u32, privacy: Privacy) -> Result<()> {
    let metadata = match privacy {
        Privacy::OwnerOnly => fs::symlink_metadata(path),
        Privacy::NoForeignWrites => fs::metadata(path),
    }
    .with_context(|| format!("cannot inspect {}", path.display()))?;
    if metadata.file_type().is_symlink() {
        bail!(
            "{} is a symbolic link; refusing to use it for private runtime files",
            path.display()
        );
    }
    if !metadata.is_dir() {
        bail!("{} is not a directory", path.display());
    }
    if metadata.uid() != uid {
        bail!(
            "{} is owned by uid {}, not by uid {uid}; refusing to use it",
            path.display(),
            metadata.uid()
        );
    }
    let mode = metadata.mode() & 0o7777;
    if mode & privacy.forbidden_mode_bits() != 0 {
        let (what, fix) = match privacy {
            Privacy::NoForeignWrites => ("writable by group or others", "go-w"),
            Privacy::OwnerOnly => ("accessible to group or others", "go-rwx"),
        };
        bail!(
            "{} is {what} (mode {mode:04o}); refusing to use it\nhint: chmod {fix} {}",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Refuses `path` (a directory of adapter launchers, or a launcher
/// itself) if anyone but `uid` or root owns it or if group or others may
/// write it: whoever can change a launcher runs code as the agent. The
/// same rule as [`Privacy::NoForeignWrites`], with root also trusted,
/// since a launcher directory may be installed system-wide.
pub fn check_no_foreign_writes(path: &Path, uid: u32) -> Result<()> {
    let shown = crate::escape::escape_path(path);
    let metadata = fs::metadata(path).with_context(|| format!("cannot inspect {shown}"))?;
    if metadata.uid() != uid && metadata.uid() != 0 {
        bail!(
            "{shown} is owned by uid {}, not by uid {uid} or root; refusing to run what it holds",
            metadata.uid()
        );
    }
    let mode = metadata.mode() & 0o7777;
    if mode & 0o022 != 0 {
        bail!(
            "{shown} is writable by group or others (mode {mode:04o}): anyone could change the adapter it runs\nhint: chmod go-w {shown}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_launcher_directory_writable_by_others_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        chmod(temp.path(), 0o777);
        let err = check_no_foreign_writes(temp.path(), current_uid()).unwrap_err();
        assert!(format!("{err:#}").contains("chmod go-w"), "{err:#}");
        chmod(temp.path(), 0o755);
        check_no_foreign_writes(temp.path(), current_uid()).unwrap();
        // Another user's directory is refused; root's is trusted.
        let other = check_no_foreign_writes(temp.path(), current_uid().wrapping_add(7));
        if current_uid() == 0 {
            other.unwrap();
        } else {
            assert!(format!("{:#}", other.unwrap_err()).contains("not by uid"));
        }
    }

    #[test]
    fn created_directories_are_owner_only() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("a/b");
        ensure_dir(&dir, current_uid(), Privacy::OwnerOnly).unwrap();
        let mode = fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        // A second call accepts what the first made.
        ensure_dir(&dir, current_uid(), Privacy::OwnerOnly).unwrap();
    }

    #[test]
    fn group_writable_directory_is_refused_with_a_chmod_hint() {
        let temp = tempfile::tempdir().unwrap();
        chmod(temp.path(), 0o775);
        let err = check_dir(temp.path(), current_uid(), Privacy::NoForeignWrites).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("writable by group or others"), "{text}");
        assert!(text.contains("chmod go-w"), "{text}");
    }

    #[test]
    fn readable_directory_passes_no_foreign_writes_but_not_owner_only() {
        let temp = tempfile::tempdir().unwrap();
        chmod(temp.path(), 0o755);
        check_dir(temp.path(), current_uid(), Privacy::NoForeignWrites).unwrap();
        let err = check_dir(temp.path(), current_uid(), Privacy::OwnerOnly).unwrap_err();
        assert!(format!("{err:#}").contains("chmod go-rwx"));
    }

    #[test]
    fn directory_of_another_uid_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let someone_else = current_uid().wrapping_add(1);
        let err = check_dir(temp.path(), someone_else, Privacy::NoForeignWrites).unwrap_err();
        assert!(format!("{err:#}").contains("is owned by uid"));
    }

    #[test]
    fn symlink_is_refused_for_owner_only_directories() {
        let temp = tempfile::tempdir().unwrap();
        let real = temp.path().join("real");
        ensure_dir(&real, current_uid(), Privacy::OwnerOnly).unwrap();
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let err = check_dir(&link, current_uid(), Privacy::OwnerOnly).unwrap_err();
        assert!(format!("{err:#}").contains("symbolic link"));
        check_dir(&link, current_uid(), Privacy::NoForeignWrites).unwrap();
    }

    #[test]
    fn a_file_is_not_a_directory() {
        let temp = tempfile::tempdir().unwrap();
        let file = temp.path().join("f");
        fs::write(&file, b"x").unwrap();
        let err = ensure_dir(&file, current_uid(), Privacy::NoForeignWrites).unwrap_err();
        assert!(format!("{err:#}").contains("not a directory"), "{err:#}");
    }
}
