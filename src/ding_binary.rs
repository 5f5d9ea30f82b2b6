//! Which `ding` file starts the other processes (PTY hosts, sidecars), and
//! what to do when it is gone.
//!
//! A running `ding` starts the others by running its own executable again.
//! An upgrade in place (`make install`, `cargo install`, a package manager)
//! writes a new file and renames it over the old path: the running image
//! then has no name, and Linux shows `/proc/self/exe` as `PATH (deleted)`.
//! Running that name fails with ENOENT forever, so a supervisor that kept
//! trying would stay up doing nothing while its service manager, which
//! only restarts what exits, never steps in. The file now at PATH is what
//! the person installed, so that is what runs; when nothing is at PATH any
//! more (uninstalled) the error is [`BinaryGone`], on which a supervisor
//! exits with failure so its service manager sees it.

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The suffix Linux appends to `/proc/PID/exe` once the file it ran was
/// unlinked or renamed over.
const UNLINKED: &[u8] = b" (deleted)";

/// The file this `ding` was started from is gone and nothing took its
/// place: no `ding` can be started again from here.
#[derive(Debug)]
pub struct BinaryGone {
    pub path: PathBuf,
}

impl fmt::Display for BinaryGone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the ding binary {} is gone (removed, and nothing installed in its place)",
            self.path.display()
        )
    }
}

impl std::error::Error for BinaryGone {}

/// The `ding` binary to start the others with: the running one, or the
/// file that replaced it at the same path.
pub fn ding_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locate the ding binary")?;
    Ok(installed_at(exe, |path| path.is_file())?)
}

/// How hook commands and launchers spell this `ding` by default: its path
/// (so that it is found whatever `PATH` the harness gives its hooks), or
/// `ding` when the path cannot be told or is not UTF-8.
pub fn ding_program() -> String {
    ding_binary()
        .ok()
        .and_then(|path| path.to_str().map(str::to_string))
        .unwrap_or_else(|| "ding".to_string())
}

/// `exe` as `/proc/self/exe` names it, resolved to a file that exists:
/// itself, or, once it was replaced, the file at its original path.
fn installed_at(exe: PathBuf, exists: impl Fn(&Path) -> bool) -> Result<PathBuf, BinaryGone> {
    if exists(&exe) {
        return Ok(exe);
    }
    let bytes = exe.as_os_str().as_bytes();
    let original = match bytes.strip_suffix(UNLINKED) {
        Some(stem) => PathBuf::from(OsString::from_vec(stem.to_vec())),
        None => exe,
    };
    if exists(&original) {
        Ok(original)
    } else {
        Err(BinaryGone { path: original })
    }
}

/// Whether `err` says the binary is gone ([`BinaryGone`]).
pub fn is_binary_gone(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.is::<BinaryGone>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn present(paths: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |path| paths.iter().any(|p| Path::new(p) == path)
    }

    #[test]
    fn a_running_binary_is_itself() {
        let found = installed_at("/opt/bin/ding".into(), present(&["/opt/bin/ding"]));
        assert_eq!(found.unwrap(), PathBuf::from("/opt/bin/ding"));
    }

    #[test]
    fn a_replaced_binary_is_the_file_now_at_its_path() {
        let found = installed_at(
            "/opt/bin/ding (deleted)".into(),
            present(&["/opt/bin/ding"]),
        );
        assert_eq!(found.unwrap(), PathBuf::from("/opt/bin/ding"));
    }

    #[test]
    fn a_removed_binary_is_gone_and_says_its_path() {
        let gone = installed_at("/opt/bin/ding (deleted)".into(), present(&[])).unwrap_err();
        assert_eq!(gone.path, PathBuf::from("/opt/bin/ding"));
        assert!(gone.to_string().contains("/opt/bin/ding is gone"));
        assert!(is_binary_gone(&anyhow::Error::new(gone).context("start")));
    }

    #[test]
    fn a_file_really_named_deleted_is_kept_while_it_exists() {
        let found = installed_at(
            "/opt/bin/ding (deleted)".into(),
            present(&["/opt/bin/ding (deleted)"]),
        );
        assert_eq!(found.unwrap(), PathBuf::from("/opt/bin/ding (deleted)"));
    }
}
