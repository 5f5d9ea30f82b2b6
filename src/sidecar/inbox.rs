//! The durable inbox: a Maildir-like directory with `tmp/`, `new/` and
//! `archive/` under the agent's declared inbox root.
//!
//! A message is accepted once it is in `new/` and `new/` is fsynced:
//! [`Inbox::deliver`] writes `tmp/X` (exclusive create), fsyncs it, renames
//! it to `new/X` without ever replacing a file, and fsyncs `new/`. Unread
//! means "present in `new/`"; archiving is a rename to `archive/X`, and a
//! file that leaves `new/` any other way (deleted, moved elsewhere) is just
//! as finished for DING. FIFO is filename order (see [`naming`]).
//!
//! [`Inbox::scan_unread`] lists `new/` for the engine's `InboxScan`. Names
//! starting with `.` are skipped: editors, `rsync` and other tools create
//! hidden temporary files in the directories they write to, and those are
//! never messages (a writer that wants a file read renames it to a visible
//! name). Every other entry that cannot be a message (a name that is not
//! UTF-8, a directory, an entry the filesystem refuses to describe) is
//! returned as [`Unreadable`] so that status lists it; nothing in `new/` is
//! ever silently dropped. An error about one entry (a link that loops,
//! `EACCES`, `ENAMETOOLONG`, `EIO`) is that entry's reason and never stops
//! the scan: any sender can plant such an entry, and one planted entry must
//! not hide the rest of the backlog. Only an error of the listing itself
//! fails a scan, because a partial listing would read as messages gone.
//!
//! Directories are created with mode 0700 and checked with
//! [`Privacy::NoForeignWrites`]: an inbox owned by another user or writable
//! by group or others is refused, because anyone who can write into it can
//! put words in front of the agent. This module decides nothing about
//! delivery; it only moves files and reports what is there.
//!
//! [`naming`]: super::naming

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use super::crash_point::{self, CrashPoint};
use super::naming::NameClock;
use crate::core::message::{InvalidName, MessageName};
use crate::durable::{fsync_dir, rename_no_replace};
use crate::private_dir::{Privacy, check_dir, current_uid, ensure_dir};

/// The largest message body [`Inbox::deliver`] accepts. Messages are
/// prompts, not payloads; the limit turns `ding send x /dev/zero` into an
/// error instead of a full disk.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// The longest sender (`--from`) accepted, in bytes.
pub const MAX_SENDER_BYTES: usize = 128;

/// Files in `tmp/` older than this are stale: their writer died between
/// create and rename (the Maildir convention's 36 hours).
pub const STALE_TMP_AGE: Duration = Duration::from_secs(36 * 3600);

/// How many fresh names [`Inbox::deliver`] tries before giving up. A
/// collision needs the same microsecond, pid and 32 random bits, so a
/// second attempt is already a sign of something odd.
const NAME_ATTEMPTS: usize = 8;

/// An inbox root whose `tmp/`, `new/` and `archive/` exist and passed the
/// ownership and permission checks.
#[derive(Debug)]
pub struct Inbox {
    root: PathBuf,
    tmp: PathBuf,
    new: PathBuf,
    archive: PathBuf,
    clock: Mutex<NameClock>,
}

/// What is in `new/`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Valid message names, in FIFO (bytewise filename) order.
    pub unread: Vec<MessageName>,
    /// Entries that cannot be messages, in directory order; status lists
    /// them so a person can rename or remove them.
    pub unreadable: Vec<Unreadable>,
}

/// An entry of `new/` that is neither hidden nor a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    pub name: OsString,
    pub reason: UnreadableReason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnreadableReason {
    /// The filesystem refused to say what the entry is (or, for a link,
    /// what it names): the OS error number. A link that names itself
    /// (`ELOOP`), a target beyond reach (`EACCES`), a target path too long
    /// (`ENAMETOOLONG`), a failing disk (`EIO`).
    Inaccessible(i32),
    /// The filename is not UTF-8, so no transport can name it.
    NotUtf8,
    /// The filename is not a valid message name.
    InvalidName(InvalidName),
    /// A directory (or socket, FIFO, device, dangling link) rather than
    /// a regular file.
    NotAFile,
}

/// How a filename seen in `new/` (by a scan or a watch event) is treated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameClass {
    /// Starts with `.`: a tool's temporary file, ignored.
    Hidden,
    Message(MessageName),
    Unreadable(UnreadableReason),
}

/// Classifies one filename from `new/` by its name alone: the first half
/// of [`Inbox::classify`], enough for a file that has already left.
pub fn classify_name(name: &OsStr) -> NameClass {
    if name.as_encoded_bytes().starts_with(b".") {
        return NameClass::Hidden;
    }
    let Some(text) = name.to_str() else {
        return NameClass::Unreadable(UnreadableReason::NotUtf8);
    };
    match MessageName::new(text) {
        Ok(message) => NameClass::Message(message),
        Err(invalid) => NameClass::Unreadable(UnreadableReason::InvalidName(invalid)),
    }
}

/// Checks a `--from` sender: 1 to [`MAX_SENDER_BYTES`] bytes of letters,
/// digits, spaces and `._@+-:/#`, not starting or ending with a space. The
/// sender becomes a header line the agent reads, so newlines and control or
/// bidirectional-override characters, which could forge more headers or
/// disguise the text, are refused rather than rewritten.
pub fn check_sender(who: &str) -> Result<()> {
    let allowed = |c: char| c.is_alphanumeric() || " ._@+-:/#".contains(c);
    if who.is_empty()
        || who.len() > MAX_SENDER_BYTES
        || who.starts_with(' ')
        || who.ends_with(' ')
        || !who.chars().all(allowed)
    {
        bail!(
            "sender {who:?} is not allowed\nhint: use letters, digits, spaces and `._@+-:/#`, at most {MAX_SENDER_BYTES} bytes"
        );
    }
    Ok(())
}

/// The bytes of a delivered file: `From: WHO`, an empty line, then the body
/// unchanged when there is a sender; the body alone otherwise.
pub fn compose(body: &[u8], from: Option<&str>) -> Result<Vec<u8>> {
    if body.len() > MAX_MESSAGE_BYTES {
        bail!(
            "message is {} bytes, more than the limit of {MAX_MESSAGE_BYTES}",
            body.len()
        );
    }
    let Some(who) = from else {
        return Ok(body.to_vec());
    };
    check_sender(who)?;
    let mut content = format!("From: {who}\n\n").into_bytes();
    content.extend_from_slice(body);
    Ok(content)
}

impl Inbox {
    /// Opens the inbox at `root`, creating `root` and its subdirectories
    /// (mode 0700) when missing.
    pub fn open_or_create(root: &Path) -> Result<Inbox> {
        Inbox::open_as(root, current_uid(), true)
    }

    /// Opens the inbox at `root`, which must exist; missing subdirectories
    /// are created. For commands that act on an existing inbox, so that a
    /// mistyped path is an error rather than a new empty inbox.
    pub fn open(root: &Path) -> Result<Inbox> {
        Inbox::open_as(root, current_uid(), false)
    }

    fn open_as(root: &Path, uid: u32, create_root: bool) -> Result<Inbox> {
        if create_root {
            ensure_dir(root, uid, Privacy::NoForeignWrites)
        } else if !root.exists() {
            bail!("no inbox at {}", root.display());
        } else {
            check_dir(root, uid, Privacy::NoForeignWrites)
        }
        .context("unusable inbox")?;
        let inbox = Inbox {
            root: root.to_path_buf(),
            tmp: root.join("tmp"),
            new: root.join("new"),
            archive: root.join("archive"),
            clock: Mutex::new(NameClock::new()),
        };
        for dir in [&inbox.tmp, &inbox.new, &inbox.archive] {
            ensure_dir(dir, uid, Privacy::NoForeignWrites).context("unusable inbox")?;
        }
        Ok(inbox)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn tmp_dir(&self) -> &Path {
        &self.tmp
    }

    /// `new/`: where unread messages wait.
    pub fn unread_dir(&self) -> &Path {
        &self.new
    }

    pub fn archive_dir(&self) -> &Path {
        &self.archive
    }

    /// Delivers one message and returns its name once it is durable in
    /// `new/`: the file's data and its directory entry have both been
    /// fsynced. See [`compose`] for what `from` adds to the body.
    ///
    /// An error after the rename (only the fsync of `new/` can fail there)
    /// names the file: it is visible in `new/` but not promised to survive
    /// a power loss.
    pub fn deliver(&self, body: &[u8], from: Option<&str>) -> Result<MessageName> {
        let content = compose(body, from)?;
        for _ in 0..NAME_ATTEMPTS {
            let name = self
                .clock
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .next_name();
            if self.write_and_publish(&name, &content)? {
                fsync_dir(&self.new).with_context(|| {
                    format!(
                        "delivered {name} into {} but could not fsync the directory; it may not survive a power loss",
                        self.new.display()
                    )
                })?;
                return Ok(name);
            }
        }
        bail!(
            "could not find a free message name in {} after {NAME_ATTEMPTS} attempts",
            self.new.display()
        )
    }

    /// Writes `tmp/NAME`, fsyncs it and renames it to `new/NAME`. `false`
    /// when the name is taken in either directory (nothing is left behind).
    fn write_and_publish(&self, name: &MessageName, content: &[u8]) -> Result<bool> {
        let staging = self.tmp.join(name.as_str());
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&staging)
        {
            Ok(file) => file,
            Err(err) if err.kind() == ErrorKind::AlreadyExists => return Ok(false),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot create {}", staging.display()));
            }
        };
        let written = file
            .write_all(content)
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write {}", staging.display()));
        drop(file);
        let published = written.and_then(|()| {
            rename_no_replace(&staging, &self.new.join(name.as_str())).map_err(anyhow::Error::from)
        });
        match published {
            Ok(()) => Ok(true),
            Err(err) => {
                // Best effort: a leftover would only be a stale tmp file.
                let _ = fs::remove_file(&staging);
                let taken = err
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == ErrorKind::AlreadyExists);
                if taken {
                    Ok(false)
                } else {
                    Err(err).with_context(|| {
                        format!(
                            "cannot move {} into {}",
                            staging.display(),
                            self.new.display()
                        )
                    })
                }
            }
        }
    }

    /// Moves `new/NAME` to `archive/NAME` and fsyncs both directories.
    /// `name` must be a bare filename; an existing `archive/NAME` is never
    /// replaced.
    pub fn archive(&self, name: &str) -> Result<()> {
        let message = MessageName::new(name).map_err(|invalid| {
            let hint = match Path::new(name).file_name().and_then(OsStr::to_str) {
                Some(base) if name.contains('/') => {
                    format!("\nhint: give the bare filename `{base}`")
                }
                _ => String::new(),
            };
            anyhow::anyhow!("`{name}` is not a message name: {invalid}{hint}")
        })?;
        let from = self.new.join(message.as_str());
        let to = self.archive.join(message.as_str());
        match rename_no_replace(&from, &to) {
            Ok(()) => {}
            Err(err) if err.kind() == ErrorKind::NotFound => {
                if to.exists() {
                    bail!(
                        "{message} is already archived (in {})",
                        self.archive.display()
                    );
                }
                bail!("no unread message {message} in {}", self.new.display());
            }
            Err(err) if err.kind() == ErrorKind::AlreadyExists => {
                bail!(
                    "cannot archive {message}: {} already exists and is a different file; move it aside first",
                    to.display()
                );
            }
            Err(err) => {
                return Err(err).with_context(|| format!("cannot archive {}", from.display()));
            }
        }
        fsync_dir(&self.archive)
            .and_then(|()| fsync_dir(&self.new))
            .with_context(|| {
                format!("archived {message} but could not fsync the inbox directories")
            })
    }

    /// Lists `new/`: messages in FIFO order, plus every entry that cannot be
    /// a message. Hidden (`.`-prefixed) entries are skipped. Each entry is
    /// classified as [`Inbox::classify`] does it, so an entry that cannot be
    /// inspected is listed as unreadable and the scan goes on; only an
    /// error of the directory listing itself fails it.
    pub fn scan_unread(&self) -> Result<Scan> {
        let mut scan = Scan::default();
        let entries = fs::read_dir(&self.new)
            .with_context(|| format!("cannot list {}", self.new.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", self.new.display()))?;
            let name = entry.file_name();
            // The directory listing usually says what the entry is; when it
            // does not (some filesystems), `classify_entry` asks.
            let listed = entry.file_type().ok();
            let class = classify_entry(&self.new, &name, listed);
            crash_point::reach(CrashPoint::MidScan);
            match class {
                // Gone between readdir and this check: just archived; the
                // next scan or event accounts for it.
                None | Some(NameClass::Hidden) => {}
                Some(NameClass::Message(message)) => scan.unread.push(message),
                Some(NameClass::Unreadable(reason)) => {
                    scan.unreadable.push(Unreadable { name, reason })
                }
            }
        }
        scan.unread.sort_unstable();
        Ok(scan)
    }

    /// Classifies the entry `name` of `new/` as it is now: by its name, and
    /// for a message name by what the entry is. A regular file (or a
    /// symbolic link to one) is a message; a directory, FIFO, socket,
    /// device or dangling link is [`UnreadableReason::NotAFile`]; one the
    /// filesystem refuses to describe is [`UnreadableReason::Inaccessible`].
    /// `None` when the entry is gone. Only `lstat`/`stat` are used: nothing
    /// is opened, so nothing planted there can block. Watch events and
    /// scans both come through here, so they always agree.
    pub fn classify(&self, name: &OsStr) -> Option<NameClass> {
        classify_entry(&self.new, name, None)
    }
    /// Files in `tmp/` last modified more than [`STALE_TMP_AGE`] before
    /// `now`, sorted: writers that died before their rename. Listed for a
    /// person to look at, never deleted.
    pub fn stale_tmp(&self, now: SystemTime) -> Result<Vec<OsString>> {
        let mut stale = Vec::new();
        let entries = fs::read_dir(&self.tmp)
            .with_context(|| format!("cannot list {}", self.tmp.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("cannot list {}", self.tmp.display()))?;
            let modified = match entry.metadata().and_then(|meta| meta.modified()) {
                Ok(modified) => modified,
                // Renamed into new/ while we looked: not stale.
                Err(err) if err.kind() == ErrorKind::NotFound => continue,
                Err(err) => {
                    return Err(err)
                        .with_context(|| format!("cannot inspect {}", entry.path().display()));
                }
            };
            let age = now.duration_since(modified).unwrap_or(Duration::ZERO);
            if age > STALE_TMP_AGE {
                stale.push(entry.file_name());
            }
        }
        stale.sort_unstable();
        Ok(stale)
    }
}

/// [`Inbox::classify`], given the entry's type when a directory listing
/// already told it (`None`: ask the filesystem).
fn classify_entry(dir: &Path, name: &OsStr, listed: Option<fs::FileType>) -> Option<NameClass> {
    let message = match classify_name(name) {
        NameClass::Message(message) => message,
        other => return Some(other),
    };
    let path = dir.join(name);
    let inaccessible =
        |err: std::io::Error| NameClass::Unreadable(UnreadableReason::Inaccessible(errno(&err)));
    let kind = match listed {
        Some(kind) => kind,
        None => match fs::symlink_metadata(&path) {
            Ok(meta) => meta.file_type(),
            // Gone between the listing or event and this look: just
            // archived; the next scan or event accounts for it.
            Err(err) if err.kind() == ErrorKind::NotFound => return None,
            Err(err) => return Some(inaccessible(err)),
        },
    };
    let is_file = if kind.is_symlink() {
        match fs::metadata(&path) {
            Ok(target) => target.is_file(),
            // Dangling: the link is there, what it names is not. (A link
            // that vanished itself is caught by the next event or scan.)
            Err(err) if err.kind() == ErrorKind::NotFound => false,
            Err(err) => return Some(inaccessible(err)),
        }
    } else {
        kind.is_file()
    };
    Some(if is_file {
        NameClass::Message(message)
    } else {
        NameClass::Unreadable(UnreadableReason::NotAFile)
    })
}

/// The OS error number of `err`; `EIO` for an error that carries none
/// (std builds a few itself), which is what such an error means here.
fn errno(err: &std::io::Error) -> i32 {
    err.raw_os_error().unwrap_or(nix::libc::EIO)
}

impl fmt::Display for UnreadableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnreadableReason::NotUtf8 => f.write_str("name is not UTF-8"),
            UnreadableReason::InvalidName(invalid) => write!(f, "invalid name: {invalid}"),
            UnreadableReason::NotAFile => f.write_str("not a regular file"),
            UnreadableReason::Inaccessible(errno) => write!(
                f,
                "cannot inspect it: {}",
                std::io::Error::from_raw_os_error(*errno)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;

    fn inbox() -> (tempfile::TempDir, Inbox) {
        let temp = tempfile::tempdir().unwrap();
        let inbox = Inbox::open_or_create(&temp.path().join("inbox/worker")).unwrap();
        (temp, inbox)
    }

    #[test]
    fn open_or_create_makes_owner_only_subdirectories() {
        let (_temp, inbox) = inbox();
        for dir in [
            inbox.root(),
            inbox.tmp_dir(),
            inbox.unread_dir(),
            inbox.archive_dir(),
        ] {
            let mode = fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} has mode {mode:o}", dir.display());
        }
    }

    #[test]
    fn open_refuses_a_missing_root_and_a_world_writable_one() {
        let temp = tempfile::tempdir().unwrap();
        let err = Inbox::open(&temp.path().join("nope")).unwrap_err();
        assert!(format!("{err:#}").contains("no inbox at"), "{err:#}");
        let root = temp.path().join("shared");
        fs::create_dir(&root).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
        let err = Inbox::open_or_create(&root).unwrap_err();
        assert!(
            format!("{err:#}").contains("writable by group or others"),
            "{err:#}"
        );
    }

    #[test]
    fn open_refuses_an_inbox_of_another_user() {
        let temp = tempfile::tempdir().unwrap();
        let err = Inbox::open_as(temp.path(), current_uid().wrapping_add(1), false).unwrap_err();
        assert!(format!("{err:#}").contains("owned by uid"), "{err:#}");
    }

    #[test]
    fn deliver_leaves_the_body_in_new_and_nothing_in_tmp() {
        let (_temp, inbox) = inbox();
        let name = inbox.deliver(b"hello\n", None).unwrap();
        assert_eq!(
            fs::read(inbox.unread_dir().join(name.as_str())).unwrap(),
            b"hello\n"
        );
        assert_eq!(fs::read_dir(inbox.tmp_dir()).unwrap().count(), 0);
        assert!(name.as_str().ends_with(".md"));
    }

    #[test]
    fn deliver_with_a_sender_prepends_a_from_header() {
        let (_temp, inbox) = inbox();
        let name = inbox.deliver(b"body", Some("lead agent")).unwrap();
        let content = fs::read(inbox.unread_dir().join(name.as_str())).unwrap();
        assert_eq!(content, b"From: lead agent\n\nbody");
    }

    #[test]
    fn senders_with_newlines_or_controls_are_refused() {
        for bad in [
            "",
            " x",
            "x ",
            "a\nFrom: b",
            "a\u{202e}b",
            "tab\there",
            &"x".repeat(129),
        ] {
            assert!(check_sender(bad).is_err(), "{bad:?}");
        }
        for good in ["reviewer", "ops@host", "Zoë #2", "a/b:c+d"] {
            check_sender(good).unwrap();
        }
    }

    #[test]
    fn oversized_messages_are_refused() {
        let (_temp, inbox) = inbox();
        let err = inbox
            .deliver(&vec![b'x'; MAX_MESSAGE_BYTES + 1], None)
            .unwrap_err();
        assert!(format!("{err:#}").contains("more than the limit"));
        assert!(inbox.scan_unread().unwrap().unread.is_empty());
    }

    #[test]
    fn names_delivered_by_one_inbox_are_in_fifo_order() {
        let (_temp, inbox) = inbox();
        let sent: Vec<MessageName> = (0..50)
            .map(|i| inbox.deliver(format!("{i}").as_bytes(), None).unwrap())
            .collect();
        assert_eq!(inbox.scan_unread().unwrap().unread, sent);
    }

    #[test]
    fn archive_moves_new_to_archive_and_refuses_paths() {
        let (_temp, inbox) = inbox();
        let name = inbox.deliver(b"x", None).unwrap();
        let err = inbox.archive(&format!("new/{name}")).unwrap_err();
        assert!(format!("{err:#}").contains(&format!("give the bare filename `{name}`")));
        inbox.archive(name.as_str()).unwrap();
        assert!(!inbox.unread_dir().join(name.as_str()).exists());
        assert_eq!(
            fs::read(inbox.archive_dir().join(name.as_str())).unwrap(),
            b"x"
        );
        let again = inbox.archive(name.as_str()).unwrap_err();
        assert!(
            format!("{again:#}").contains("already archived"),
            "{again:#}"
        );
        let missing = inbox.archive("nothing.md").unwrap_err();
        assert!(format!("{missing:#}").contains("no unread message nothing.md"));
    }

    #[test]
    fn archive_never_replaces_an_archived_file_of_the_same_name() {
        let (_temp, inbox) = inbox();
        fs::write(inbox.unread_dir().join("a.md"), b"new").unwrap();
        fs::write(inbox.archive_dir().join("a.md"), b"old").unwrap();
        let err = inbox.archive("a.md").unwrap_err();
        assert!(format!("{err:#}").contains("already exists"), "{err:#}");
        assert_eq!(fs::read(inbox.archive_dir().join("a.md")).unwrap(), b"old");
        assert!(inbox.unread_dir().join("a.md").exists());
    }

    #[test]
    fn scan_skips_hidden_files_and_reports_the_unreadable() {
        let (_temp, inbox) = inbox();
        let new = inbox.unread_dir();
        fs::write(new.join("b.md"), b"").unwrap();
        fs::write(new.join("a.md"), b"").unwrap();
        fs::write(new.join(".a.md.swp"), b"").unwrap();
        fs::write(new.join(OsStr::from_bytes(b"bad-\xff.md")), b"").unwrap();
        fs::create_dir(new.join("folder")).unwrap();
        let scan = inbox.scan_unread().unwrap();
        let unread: Vec<&str> = scan.unread.iter().map(MessageName::as_str).collect();
        assert_eq!(unread, ["a.md", "b.md"]);
        let mut unreadable: Vec<(Vec<u8>, UnreadableReason)> = scan
            .unreadable
            .iter()
            .map(|u| (u.name.as_bytes().to_vec(), u.reason))
            .collect();
        unreadable.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            unreadable,
            [
                (b"bad-\xff.md".to_vec(), UnreadableReason::NotUtf8),
                (b"folder".to_vec(), UnreadableReason::NotAFile),
            ]
        );
    }

    #[test]
    fn stale_tmp_lists_only_files_older_than_36_hours() {
        let (_temp, inbox) = inbox();
        let now = SystemTime::now();
        let old = inbox.tmp_dir().join("old");
        fs::write(&old, b"").unwrap();
        let file = fs::File::options().write(true).open(&old).unwrap();
        file.set_modified(now - STALE_TMP_AGE - Duration::from_secs(60))
            .unwrap();
        fs::write(inbox.tmp_dir().join("fresh"), b"").unwrap();
        assert_eq!(inbox.stale_tmp(now).unwrap(), [OsString::from("old")]);
    }

    /// What an entry is decides, not only its name: a FIFO, a socket, a
    /// directory or a link to any of them is never a message, and a scan
    /// and a single classification (what a watch event uses) agree on each.
    #[test]
    fn only_regular_files_are_messages_whether_scanned_or_classified_one_by_one() {
        let (_temp, inbox) = inbox();
        let new = inbox.unread_dir();
        fs::write(new.join("file.md"), b"").unwrap();
        fs::write(inbox.tmp_dir().join("target"), b"").unwrap();
        std::os::unix::fs::symlink(inbox.tmp_dir().join("target"), new.join("link.md")).unwrap();
        nix::unistd::mkfifo(&new.join("fifo.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink(new.join("fifo.md"), new.join("link-to-fifo.md")).unwrap();
        std::os::unix::fs::symlink(new.join("nowhere"), new.join("dangling.md")).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(new.join("sock.md")).unwrap();
        fs::create_dir(new.join("dir.md")).unwrap();
        let scan = inbox.scan_unread().unwrap();
        let unread: Vec<&str> = scan.unread.iter().map(MessageName::as_str).collect();
        assert_eq!(unread, ["file.md", "link.md"]);
        let mut not_files: Vec<&str> = scan
            .unreadable
            .iter()
            .inspect(|entry| assert_eq!(entry.reason, UnreadableReason::NotAFile))
            .map(|entry| entry.name.to_str().unwrap())
            .collect();
        not_files.sort_unstable();
        assert_eq!(
            not_files,
            [
                "dangling.md",
                "dir.md",
                "fifo.md",
                "link-to-fifo.md",
                "sock.md"
            ]
        );
        for name in unread.iter().chain(&not_files) {
            let one = inbox.classify(OsStr::new(name)).unwrap();
            let expected = if unread.contains(name) {
                NameClass::Message(MessageName::new(name).unwrap())
            } else {
                NameClass::Unreadable(UnreadableReason::NotAFile)
            };
            assert_eq!(one, expected, "{name}");
        }
        assert_eq!(inbox.classify(OsStr::new("gone.md")), None);
        assert_eq!(
            inbox.classify(OsStr::new(".hidden")),
            Some(NameClass::Hidden)
        );
    }

    /// An entry the filesystem cannot describe is unreadable, with the
    /// error as its reason, and the messages beside it are still listed:
    /// a link that names itself (ELOOP) and a link whose target has a
    /// component longer than any name (ENAMETOOLONG), in a scan and one by
    /// one. Before, either made every scan fail and hid the whole backlog.
    #[test]
    fn an_entry_that_cannot_be_inspected_is_unreadable_and_the_scan_goes_on() {
        let (_temp, inbox) = inbox();
        let new = inbox.unread_dir();
        fs::write(new.join("01-first.md"), b"").unwrap();
        std::os::unix::fs::symlink("00-loop.md", new.join("00-loop.md")).unwrap();
        std::os::unix::fs::symlink("x".repeat(300), new.join("02-long.md")).unwrap();
        fs::write(new.join("03-last.md"), b"").unwrap();
        let scan = inbox.scan_unread().unwrap();
        let unread: Vec<&str> = scan.unread.iter().map(MessageName::as_str).collect();
        assert_eq!(unread, ["01-first.md", "03-last.md"]);
        let mut unreadable: Vec<(&str, UnreadableReason)> = scan
            .unreadable
            .iter()
            .map(|entry| (entry.name.to_str().unwrap(), entry.reason))
            .collect();
        unreadable.sort_unstable_by_key(|entry| entry.0);
        let looped = UnreadableReason::Inaccessible(nix::libc::ELOOP);
        let too_long = UnreadableReason::Inaccessible(nix::libc::ENAMETOOLONG);
        assert_eq!(
            unreadable,
            [("00-loop.md", looped), ("02-long.md", too_long)]
        );
        for (name, reason) in unreadable {
            assert_eq!(
                inbox.classify(OsStr::new(name)),
                Some(NameClass::Unreadable(reason))
            );
        }
        assert!(
            looped
                .to_string()
                .starts_with("cannot inspect it: Too many levels of symbolic links"),
            "{looped}"
        );
    }
}
