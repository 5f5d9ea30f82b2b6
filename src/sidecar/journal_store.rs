//! The ownership journal on disk: `journal.json` in the agent's state
//! directory, replaced atomically on every change.
//!
//! [`JournalStore::save`] writes `journal.json.tmp`, fsyncs it, renames it
//! over `journal.json` and fsyncs the directory, so after a crash at any
//! point the file is either the previous journal or the new one, never a
//! mix. A leftover `journal.json.tmp` is never read and is overwritten by
//! the next save. One sidecar per agent writes the journal; keeping it the
//! only one is the runtime's job, as is deciding when to save (the engine
//! says when ownership changed; see [`crate::core::journal`]).
//!
//! The file is read by [`read_regular`]: never through a symbolic link,
//! never blocking on a FIFO, at most [`MAX_JOURNAL_BYTES`]. Whatever else
//! is found there counts as unreadable, like bad content.
//!
//! A journal that cannot be read as this build's format (damaged disk, a
//! hand edit, a newer ding, a FIFO or directory in its place) must not stop
//! the agent: [`JournalStore::load`] renames it aside to `journal.json.corrupt-<UTC time>` and reports
//! [`Loaded::Quarantined`], and the runtime starts without ownership. The
//! inbox on disk stays the authority for what is unread, so no message is
//! lost; the cost is that files that were staged or hook-owned count as
//! pending again and may be rung once more.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::crash_point::{self, CrashPoint};
use super::naming::{micros_since_epoch, utc_stamp};
use crate::core::journal::{JOURNAL_VERSION, Journal};
use crate::durable::fsync_dir;
use crate::private_dir::{Privacy, current_uid, ensure_dir};
use crate::private_file::{FileProblem, ReplaceStep, read_regular, replace_with};

/// The journal's file name in the state directory.
pub const JOURNAL_FILE: &str = "journal.json";
#[cfg(test)]
const JOURNAL_TMP_FILE: &str = "journal.json.tmp";

/// The largest journal read: about half a million owned files. A larger
/// file is treated as unreadable (quarantined), never read into memory.
pub const MAX_JOURNAL_BYTES: u64 = 64 * 1024 * 1024;

/// The journal file of one agent.
#[derive(Clone, Debug)]
pub struct JournalStore {
    dir: PathBuf,
}

/// What [`JournalStore::load`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// No journal: a first start, or nothing was ever owned.
    Missing,
    Restored(Journal),
    /// The file was unreadable and now lives at `moved_to`; start without
    /// ownership and log [`Loaded::warning`].
    Quarantined {
        moved_to: PathBuf,
        reason: String,
    },
}

/// What is at the journal's path, read without changing anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    Missing,
    Journal(Journal),
    /// Bad content, another version, or not a regular file at all.
    Unreadable(String),
}

impl Loaded {
    /// The journal to hand to the engine, if any.
    pub fn into_journal(self) -> Option<Journal> {
        match self {
            Loaded::Restored(journal) => Some(journal),
            Loaded::Missing | Loaded::Quarantined { .. } => None,
        }
    }

    /// A line for the log when the journal was quarantined.
    pub fn warning(&self) -> Option<String> {
        match self {
            Loaded::Quarantined { moved_to, reason } => Some(format!(
                "unreadable journal moved to {} ({reason}); starting without ownership, so staged or hook-owned messages may ring again",
                moved_to.display()
            )),
            Loaded::Missing | Loaded::Restored(_) => None,
        }
    }
}

impl JournalStore {
    /// A store in `state_dir`; nothing is touched until `load` or `save`.
    pub fn new(state_dir: &Path) -> JournalStore {
        JournalStore {
            dir: state_dir.to_path_buf(),
        }
    }

    /// `STATE_DIR/journal.json`.
    pub fn path(&self) -> PathBuf {
        self.dir.join(JOURNAL_FILE)
    }

    /// Reads the journal. `Err` only when the file exists but cannot be
    /// read or quarantined (permissions, I/O errors); bad content is
    /// quarantined instead.
    pub fn load(&self) -> Result<Loaded> {
        self.load_at(SystemTime::now())
    }

    /// Reads the journal without changing anything (for `ding status`).
    /// `Err` only for I/O errors; what cannot be used is
    /// [`Found::Unreadable`].
    pub fn read(&self) -> Result<Found> {
        let path = self.path();
        let bytes = match read_regular(&path, MAX_JOURNAL_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(Found::Missing),
            Err(problem @ FileProblem::Io(_)) => {
                return Err(problem).with_context(|| format!("cannot read {}", path.display()));
            }
            Err(problem) => return Ok(Found::Unreadable(problem.to_string())),
        };
        Ok(match serde_json::from_slice::<Journal>(&bytes) {
            Ok(journal) if journal.version == JOURNAL_VERSION => Found::Journal(journal),
            Ok(journal) => Found::Unreadable(format!(
                "journal version {} is not the supported version {JOURNAL_VERSION}",
                journal.version
            )),
            Err(err) => Found::Unreadable(format!("not a valid journal: {err}")),
        })
    }

    fn load_at(&self, now: SystemTime) -> Result<Loaded> {
        let reason = match self.read()? {
            Found::Journal(journal) => return Ok(Loaded::Restored(journal)),
            Found::Missing => return Ok(Loaded::Missing),
            Found::Unreadable(reason) => reason,
        };
        let path = self.path();
        let moved_to = self.dir.join(format!(
            "{JOURNAL_FILE}.corrupt-{}",
            utc_stamp(micros_since_epoch(now))
        ));
        fs::rename(&path, &moved_to).with_context(|| {
            format!(
                "cannot move the unreadable journal {} aside ({reason})",
                path.display()
            )
        })?;
        fsync_dir(&self.dir).with_context(|| format!("cannot fsync {}", self.dir.display()))?;
        Ok(Loaded::Quarantined { moved_to, reason })
    }

    /// Replaces the journal atomically: tmp, fsync, rename, fsync dir (see
    /// [`replace`]). Creates the state directory (mode 0700) when missing.
    pub fn save(&self, journal: &Journal) -> Result<()> {
        ensure_dir(&self.dir, current_uid(), Privacy::NoForeignWrites)
            .context("unusable state directory")?;
        let mut bytes = serde_json::to_vec(journal).context("cannot encode the journal")?;
        bytes.push(b'\n');
        replace_with(&self.path(), &bytes, 0o600, |step| {
            crash_point::reach(match step {
                ReplaceStep::TmpDurable => CrashPoint::BeforeJournalRename,
                ReplaceStep::Renamed => CrashPoint::AfterJournalRename,
            })
        })
        .context("cannot save the journal")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::journal::{JournalEntry, Owner};
    use crate::core::message::MessageName;

    fn journal() -> Journal {
        Journal::new(vec![
            JournalEntry {
                name: MessageName::new("001.md").unwrap(),
                owner: Owner::Staged,
                at: 1500,
                incarnation: Some("pty-7".into()),
            },
            JournalEntry {
                name: MessageName::new("002.md").unwrap(),
                owner: Owner::HookOwned,
                at: 2500,
                incarnation: None,
            },
        ])
    }

    #[test]
    fn a_missing_journal_loads_as_missing() {
        let temp = tempfile::tempdir().unwrap();
        let store = JournalStore::new(&temp.path().join("state"));
        assert_eq!(store.load().unwrap(), Loaded::Missing);
    }

    #[test]
    fn saved_journal_round_trips_and_leaves_no_tmp() {
        let temp = tempfile::tempdir().unwrap();
        let store = JournalStore::new(&temp.path().join("state/worker"));
        store.save(&journal()).unwrap();
        assert_eq!(store.load().unwrap(), Loaded::Restored(journal()));
        assert!(
            !temp
                .path()
                .join("state/worker")
                .join(JOURNAL_TMP_FILE)
                .exists()
        );
        store.save(&Journal::new(Vec::new())).unwrap();
        assert_eq!(
            store.load().unwrap().into_journal(),
            Some(Journal::new(Vec::new()))
        );
    }

    #[test]
    fn a_leftover_tmp_file_is_ignored_and_then_replaced() {
        let temp = tempfile::tempdir().unwrap();
        let store = JournalStore::new(temp.path());
        store.save(&journal()).unwrap();
        // A crash mid-write leaves a torn tmp file behind.
        fs::write(temp.path().join(JOURNAL_TMP_FILE), b"{\"version\":1,\"entr").unwrap();
        assert_eq!(store.load().unwrap(), Loaded::Restored(journal()));
        store.save(&Journal::new(Vec::new())).unwrap();
        assert_eq!(
            store.load().unwrap(),
            Loaded::Restored(Journal::new(Vec::new()))
        );
    }

    #[test]
    fn corrupt_journal_is_moved_aside_with_a_warning() {
        let temp = tempfile::tempdir().unwrap();
        let store = JournalStore::new(temp.path());
        fs::write(store.path(), b"not json").unwrap();
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(86_400);
        let loaded = store.load_at(at).unwrap();
        let moved_to = temp
            .path()
            .join("journal.json.corrupt-19700102T000000000000Z");
        assert!(matches!(&loaded, Loaded::Quarantined { moved_to: m, .. } if *m == moved_to));
        assert!(loaded.warning().unwrap().contains("may ring again"));
        assert_eq!(fs::read(&moved_to).unwrap(), b"not json");
        assert_eq!(store.load().unwrap(), Loaded::Missing);
    }

    #[test]
    fn journal_of_an_unknown_version_is_quarantined_not_misread() {
        let temp = tempfile::tempdir().unwrap();
        let store = JournalStore::new(temp.path());
        fs::write(store.path(), br#"{"version":99,"entries":[]}"#).unwrap();
        let loaded = store.load().unwrap();
        let Loaded::Quarantined { reason, .. } = &loaded else {
            panic!("{loaded:?}");
        };
        assert!(reason.contains("version 99"), "{reason}");
        assert_eq!(loaded.into_journal(), None);
    }

    /// A FIFO, a symbolic link, a directory or an oversized file planted as
    /// the journal: read at once (no open blocks), reported, quarantined.
    #[test]
    fn a_journal_that_is_not_a_regular_file_or_too_large_is_quarantined_at_once() {
        type Plant = (&'static str, fn(&Path));
        let plant: [Plant; 4] = [
            ("a FIFO", |path| {
                nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap()
            }),
            ("a symbolic link", |path| {
                std::os::unix::fs::symlink("/dev/zero", path).unwrap()
            }),
            ("a directory", |path| fs::create_dir(path).unwrap()),
            ("bytes, more than the limit", |path| {
                fs::File::create(path)
                    .unwrap()
                    .set_len(MAX_JOURNAL_BYTES + 1)
                    .unwrap()
            }),
        ];
        for (what, plant) in plant {
            let temp = tempfile::tempdir().unwrap();
            let store = JournalStore::new(temp.path());
            plant(&store.path());
            let Found::Unreadable(reason) = store.read().unwrap() else {
                panic!("{what}: not unreadable");
            };
            assert!(reason.contains(what), "{what}: {reason}");
            assert!(
                store.path().symlink_metadata().is_ok(),
                "read moves nothing"
            );
            let loaded = store.load().unwrap();
            assert!(
                matches!(loaded, Loaded::Quarantined { .. }),
                "{what}: {loaded:?}"
            );
            assert_eq!(store.load().unwrap(), Loaded::Missing, "{what}");
            store.save(&journal()).unwrap();
            assert_eq!(store.load().unwrap(), Loaded::Restored(journal()), "{what}");
        }
    }
}
