//! The control socket's security: a private directory, a 0600 socket, and
//! the peer uid check on every connection.
//!
//! Anyone who can connect can type into the terminal, so the host trusts
//! nothing but its own uid. This module owns the filesystem checks and
//! `SO_PEERCRED`; what a connection may then do is the host's business.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::Path;

use anyhow::{Context, Result, bail};
use mio::net::UnixListener;
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::sys::stat::{Mode, umask};

use crate::private_dir::{Privacy, current_uid, ensure_dir};

/// Longest path a `sockaddr_un` holds, without the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

/// Creates (0700) or checks the socket's directory, removes a stale socket,
/// and binds a listener whose file is 0600. Refuses a directory owned by
/// another uid or open to group or others, a symlinked directory, and a path
/// where another host is still listening.
pub fn bind_private(path: &Path) -> Result<UnixListener> {
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        bail!(
            "socket path {} is longer than {MAX_SOCKET_PATH} bytes",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    ensure_dir(dir, current_uid(), Privacy::OwnerOnly).context("socket directory")?;
    remove_stale_socket(path)?;
    // The umask makes the socket 0600 from the moment it exists; the chmod
    // after it is belt and braces for filesystems that ignore the umask.
    let previous = umask(Mode::from_bits_truncate(0o177));
    let bound = UnixListener::bind(path);
    umask(previous);
    let listener = bound.with_context(|| format!("bind control socket {}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .with_context(|| format!("chmod 0600 {}", path.display()))?;
    Ok(listener)
}

fn remove_stale_socket(path: &Path) -> Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err).with_context(|| format!("inspect {}", path.display())),
        Ok(meta) => meta,
    };
    if !meta.file_type().is_socket() {
        bail!("{} exists and is not a socket", path.display());
    }
    if StdUnixStream::connect(path).is_ok() {
        bail!("another host is already listening on {}", path.display());
    }
    fs::remove_file(path).with_context(|| format!("remove stale socket {}", path.display()))
}

/// `(uid, pid)` of the process at the other end of a connected Unix socket,
/// as the kernel recorded them at connect time (`SO_PEERCRED`).
pub fn peer_credentials<F: std::os::fd::AsFd>(stream: &F) -> io::Result<(u32, i32)> {
    getsockopt(stream, PeerCredentials)
        .map(|cred| (cred.uid(), cred.pid()))
        .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};

    #[test]
    fn refuses_a_symlinked_directory() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let real = tmp.path().join("real");
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&real)
            .expect("mkdir");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        let err = bind_private(&link.join("pty.sock")).expect_err("refused");
        assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
        assert!(!real.join("pty.sock").exists());
    }

    #[test]
    fn binds_a_0600_socket_and_replaces_a_stale_one() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("run/pty.sock");
        drop(bind_private(&path).expect("bound"));
        // The listener is gone but its file remains: stale, so rebinding works.
        let listener = bind_private(&path).expect("rebound");
        let mode = fs::metadata(&path).expect("meta").mode() & 0o777;
        assert_eq!(mode, 0o600);
        let err = bind_private(&path).expect_err("in use");
        assert!(format!("{err:#}").contains("already listening"), "{err:#}");
        let client = StdUnixStream::connect(&path).expect("connect");
        let (uid, pid) = peer_credentials(&client).expect("cred");
        assert_eq!(uid, current_uid());
        assert_eq!(pid, std::process::id() as i32);
        drop(listener);
    }
}
