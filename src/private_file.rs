//! Files DING keeps in its own directories (journal, agent record, pid
//! files, logs), read and written so that whatever was planted in their
//! place can neither hang nor redirect a process.
//!
//! A FIFO opened for reading blocks until a writer comes, a symbolic link
//! sends a write somewhere else, a device or an endless file has no end.
//! So every such file is read through [`read_regular`]: refused by
//! `lstat` unless it is a regular file, then opened with `O_NOFOLLOW |
//! O_NONBLOCK | O_NOCTTY | O_CLOEXEC`, checked again with `fstat` (the
//! same file `lstat` saw), and read up to a bound. Writes go through
//! [`replace`] (a fresh exclusive tmp file renamed over the name, which
//! replaces a planted FIFO or link instead of opening it) and logs are
//! opened by [`open_log`] with the same checks. Who may own the
//! directories is `private_dir`'s business.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

/// What a path is, when it is not a regular file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Directory,
    SymbolicLink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

/// Why a file was not read.
#[derive(Debug)]
pub enum FileProblem {
    /// Something other than a regular file is there.
    NotRegular(FileKind),
    /// The file is larger than the bound for its kind.
    TooLarge { size: u64, limit: u64 },
    /// The system refused (permissions, I/O).
    Io(io::Error),
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Directory => "a directory",
            FileKind::SymbolicLink => "a symbolic link",
            FileKind::Fifo => "a FIFO",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "not a regular file",
        })
    }
}

impl fmt::Display for FileProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileProblem::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            FileProblem::TooLarge { size, limit } => {
                write!(f, "it is {size} bytes, more than the limit of {limit}")
            }
            FileProblem::Io(err) => err.fmt(f),
        }
    }
}

impl std::error::Error for FileProblem {}

/// What `file_type` is, unless it is a regular file.
fn kind_of(file_type: fs::FileType) -> Option<FileKind> {
    let kind = if file_type.is_file() {
        return None;
    } else if file_type.is_dir() {
        FileKind::Directory
    } else if file_type.is_symlink() {
        FileKind::SymbolicLink
    } else if file_type.is_fifo() {
        FileKind::Fifo
    } else if file_type.is_socket() {
        FileKind::Socket
    } else if file_type.is_char_device() {
        FileKind::CharDevice
    } else if file_type.is_block_device() {
        FileKind::BlockDevice
    } else {
        FileKind::Other
    };
    Some(kind)
}

/// Opens an existing regular file at `path` with `options` plus
/// `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY`, or says why not. `None` when
/// nothing is there.
fn open_regular(path: &Path, options: &mut OpenOptions) -> Result<Option<File>, FileProblem> {
    let seen = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(FileProblem::Io(err)),
    };
    if let Some(kind) = kind_of(seen.file_type()) {
        return Err(FileProblem::NotRegular(kind));
    }
    let file = match options
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        // Replaced by a link between the lstat and the open.
        Err(err) if err.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(FileProblem::NotRegular(FileKind::SymbolicLink));
        }
        Err(err) => return Err(FileProblem::Io(err)),
    };
    let opened = file.metadata().map_err(FileProblem::Io)?;
    if let Some(kind) = kind_of(opened.file_type()) {
        return Err(FileProblem::NotRegular(kind));
    }
    if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) {
        // Replaced between the lstat and the open: refuse what we did not
        // inspect rather than guess.
        return Err(FileProblem::NotRegular(FileKind::Other));
    }
    Ok(Some(file))
}

/// Opens the regular file at `path` for reading, with the same refusals as
/// [`read_regular`] (for a reader that follows a growing log).
pub fn open_for_reading(path: &Path) -> Result<Option<File>, FileProblem> {
    open_regular(path, OpenOptions::new().read(true))
}

/// Reads the regular file at `path`, at most `limit` bytes. `Ok(None)` when
/// nothing is there; anything but a regular file is refused unopened, and
/// a larger file is refused without being read whole.
pub fn read_regular(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, FileProblem> {
    let Some(file) = open_regular(path, OpenOptions::new().read(true))? else {
        return Ok(None);
    };
    let size = file.metadata().map_err(FileProblem::Io)?.len();
    if size > limit {
        return Err(FileProblem::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // One byte past the limit is enough to know it grew too large.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(FileProblem::Io)?;
    if bytes.len() as u64 > limit {
        return Err(FileProblem::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(Some(bytes))
}

/// The last `max` bytes of the regular file at `path` (all of it when it
/// is shorter), with the same refusals as [`read_regular`].
pub fn read_tail(path: &Path, max: u64) -> Result<Option<Vec<u8>>, FileProblem> {
    let Some(mut file) = open_regular(path, OpenOptions::new().read(true))? else {
        return Ok(None);
    };
    let size = file.metadata().map_err(FileProblem::Io)?.len();
    file.seek(SeekFrom::Start(size.saturating_sub(max)))
        .map_err(FileProblem::Io)?;
    let mut bytes = Vec::new();
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(FileProblem::Io)?;
    Ok(Some(bytes))
}

/// `path` with `.tmp` appended: where [`replace`] stages its bytes.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    PathBuf::from(tmp)
}

/// Replaces `path` with `bytes` atomically: a fresh `PATH.tmp` (any old one
/// is unlinked first, and the exclusive create never follows a link or
/// opens a FIFO), fsynced, renamed over `path`, and the directory fsynced.
/// Whatever was at `path` (a FIFO, a link) is replaced, never opened; a
/// directory there is an error. The new file gets `mode`, or the
/// permissions of the regular file it replaces (a user's own file keeps
/// the mode they gave it).
pub fn replace(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    replace_with(path, bytes, mode, |_| {})
}

/// The steps of [`replace`] between which a crash leaves a distinct state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaceStep {
    /// `PATH.tmp` holds the new bytes durably; `PATH` is still the old file.
    TmpDurable,
    /// `PATH` is the new file; the rename is not yet fsynced.
    Renamed,
}

/// [`replace`], calling `at` as each [`ReplaceStep`] is reached (the
/// journal's crash points hook in here).
pub fn replace_with(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    mut at: impl FnMut(ReplaceStep),
) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => meta.permissions().mode() & 0o7777,
        _ => mode,
    };
    let tmp = tmp_path(path);
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::NotFound => {}
        Err(err) => return Err(with_path(err, "cannot remove", &tmp)),
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|err| with_path(err, "cannot create", &tmp))?;
    file.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|err| with_path(err, "cannot chmod", &tmp))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| with_path(err, "cannot write", &tmp))?;
    drop(file);
    at(ReplaceStep::TmpDurable);
    fs::rename(&tmp, path).map_err(|err| {
        let _ = fs::remove_file(&tmp);
        with_path(err, "cannot replace", path)
    })?;
    at(ReplaceStep::Renamed);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    crate::durable::fsync_dir(dir).map_err(|err| with_path(err, "cannot fsync", dir))
}

/// Opens the log at `path` for appending (creating it with mode 0600),
/// refusing anything but a regular file, so a planted FIFO cannot block
/// the opener nor a link send the log elsewhere.
pub fn open_log(path: &Path) -> Result<File, FileProblem> {
    if let Some(file) = open_regular(path, OpenOptions::new().append(true))? {
        return clear_nonblocking(file);
    }
    // Missing: create it; `O_EXCL` refuses whatever appeared meanwhile.
    let file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(FileProblem::Io)?;
    clear_nonblocking(file)
}

/// The log is handed to child processes as their stdout and stderr; a
/// regular file ignores `O_NONBLOCK`, but they should not inherit it.
fn clear_nonblocking(file: File) -> Result<File, FileProblem> {
    fcntl(&file, FcntlArg::F_SETFL(OFlag::O_APPEND))
        .map_err(|errno| FileProblem::Io(errno.into()))?;
    Ok(file)
}

fn with_path(err: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{what} {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn replace_keeps_the_permissions_of_the_regular_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("settings.json");
        replace(&path, b"one", 0o640).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        replace(&path, b"two", 0o644).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(!tmp_path(&path).exists());
    }

    use super::*;
    use std::os::unix::net::UnixListener;

    fn mkfifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    }

    /// A FIFO, a symlink, a directory, a socket: each refused at once, by kind.
    #[test]
    fn anything_but_a_regular_file_is_refused_without_blocking() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        mkfifo(&dir.join("fifo"));
        fs::write(dir.join("real"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        fs::create_dir(dir.join("dir")).unwrap();
        let _listener = UnixListener::bind(dir.join("sock")).unwrap();
        for (name, kind) in [
            ("fifo", FileKind::Fifo),
            ("link", FileKind::SymbolicLink),
            ("dir", FileKind::Directory),
            ("sock", FileKind::Socket),
        ] {
            match read_regular(&dir.join(name), 100) {
                Err(FileProblem::NotRegular(found)) => assert_eq!(found, kind, "{name}"),
                other => panic!("{name}: {other:?}"),
            }
        }
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 100),
            Err(FileProblem::NotRegular(FileKind::CharDevice))
        ));
        assert_eq!(
            read_regular(&dir.join("real"), 100).unwrap(),
            Some(b"x".to_vec())
        );
        assert_eq!(read_regular(&dir.join("missing"), 100).unwrap(), None);
    }

    #[test]
    fn a_file_over_the_bound_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("big");
        fs::write(&path, vec![b'x'; 101]).unwrap();
        let err = read_regular(&path, 100).unwrap_err();
        assert!(matches!(
            err,
            FileProblem::TooLarge {
                size: 101,
                limit: 100
            }
        ));
        assert_eq!(
            read_regular(&path, 101).unwrap().map(|b| b.len()),
            Some(101)
        );
    }

    #[test]
    fn replace_puts_a_file_in_place_of_a_fifo_or_a_link_and_never_writes_through_them() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let target = dir.join("outside");
        fs::write(&target, b"untouched").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("link")).unwrap();
        replace(&dir.join("link"), b"new", 0o600).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"untouched");
        assert_eq!(
            read_regular(&dir.join("link"), 10).unwrap(),
            Some(b"new".to_vec())
        );
        mkfifo(&dir.join("fifo"));
        // A FIFO planted as the tmp file, too: it is unlinked, not opened.
        mkfifo(&tmp_path(&dir.join("fifo")));
        replace(&dir.join("fifo"), b"pid", 0o600).unwrap();
        assert_eq!(
            read_regular(&dir.join("fifo"), 10).unwrap(),
            Some(b"pid".to_vec())
        );
        fs::create_dir(dir.join("dir")).unwrap();
        let err = replace(&dir.join("dir"), b"x", 0o600).unwrap_err();
        assert!(err.to_string().contains("cannot replace"), "{err}");
        assert!(
            !tmp_path(&dir.join("dir")).exists(),
            "no tmp file left behind"
        );
    }

    #[test]
    fn a_log_is_appended_to_and_a_planted_fifo_refused() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("log");
        open_log(&path).unwrap().write_all(b"one\n").unwrap();
        open_log(&path).unwrap().write_all(b"two\n").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one\ntwo\n");
        let fifo = temp.path().join("fifo");
        mkfifo(&fifo);
        assert!(matches!(
            open_log(&fifo),
            Err(FileProblem::NotRegular(FileKind::Fifo))
        ));
    }
}
