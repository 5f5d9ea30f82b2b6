//! The harness's last exit, kept beside the PTY host's socket until the
//! next start: what `ding status` shows of a harness that is no longer
//! running, as systemd's "Result: exit-code" does for a unit. Without it a
//! harness that exited at once left `ding status` saying only `stopped`
//! once `ding up` had stopped its PTY host again.
//!
//! The host writes the record when its child ends (how it ended, when, the
//! last lines of its screen) and removes it when it starts a child; it is
//! written whole and renamed into place, so a reader sees all or nothing.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::wire::{ChildState, Snapshot};
use crate::private_file;

/// The record's file name in the agent's runtime directory.
const FILE: &str = "last-exit.json";

/// How many of the screen's last non-blank rows are kept: enough for an
/// error message and its hint.
pub const SCREEN_LINES: usize = 8;

/// A record larger than this is not one the host wrote (8 rows of a very
/// wide terminal fit well within it).
const MAX_BYTES: u64 = 256 * 1024;

/// How the harness ended, when, and what its screen said last.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastExit {
    /// `{"state":"exited","code":N}` or `{"state":"killed","signal":N}`.
    pub child: ChildState,
    /// RFC 3339, UTC.
    pub at: String,
    /// The incarnation that ended.
    pub incarnation: String,
    /// The last non-blank rows of its screen, trailing blanks trimmed,
    /// oldest first (raw: whoever prints them escapes them).
    pub screen: Vec<String>,
}

impl LastExit {
    /// The record of `child`'s end at `at`, with the last rows of `screen`.
    pub fn of(child: ChildState, at: String, incarnation: &str, screen: &Snapshot) -> LastExit {
        let rows: Vec<String> = screen
            .rows
            .iter()
            .map(|row| row.trim_end().to_string())
            .filter(|row| !row.is_empty())
            .collect();
        let keep = rows.len().saturating_sub(SCREEN_LINES);
        LastExit {
            child,
            at,
            incarnation: incarnation.to_string(),
            screen: rows[keep..].to_vec(),
        }
    }

    /// `exited with code 3` or `was killed by signal 9`.
    pub fn how(&self) -> String {
        match self.child {
            ChildState::Exited { code } => format!("exited with code {code}"),
            ChildState::Killed { signal } => format!("was killed by signal {signal}"),
            ChildState::Running { pid } => format!("was running (pid {pid})"),
        }
    }
}

/// Where the record of the agent whose runtime directory is `dir` lives.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Writes the record, owner-only, replacing the last one.
pub fn write(dir: &Path, record: &LastExit) -> io::Result<()> {
    let bytes = serde_json::to_vec(record).map_err(io::Error::other)?;
    private_file::replace(&path(dir), &bytes, 0o600)
}

/// Removes the record: a new start begins a new story.
pub fn clear(dir: &Path) {
    let _ = std::fs::remove_file(path(dir));
}

/// The record, if there is one that reads as one (anything else, a
/// symlink included, is no record).
pub fn read(dir: &Path) -> Option<LastExit> {
    let file = path(dir);
    let meta = std::fs::symlink_metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(rows: &[&str]) -> Snapshot {
        let size = crate::pty::wire::Size { cols: 80, rows: 24 };
        let mut snapshot = crate::pty::screen::Screen::new(size).snapshot(0);
        snapshot.rows = rows.iter().map(|row| row.to_string()).collect();
        snapshot
    }

    #[test]
    fn keeps_the_last_non_blank_rows_trimmed() {
        let mut rows = vec!["banner", "", "   "];
        let numbered: Vec<String> = (0..10).map(|n| format!("line {n}   ")).collect();
        rows.extend(numbered.iter().map(String::as_str));
        rows.push("");
        let record = LastExit::of(
            ChildState::Exited { code: 3 },
            "t".into(),
            "i",
            &screen(&rows),
        );
        assert_eq!(record.screen.len(), SCREEN_LINES);
        assert_eq!(record.screen.first().map(String::as_str), Some("line 2"));
        assert_eq!(record.screen.last().map(String::as_str), Some("line 9"));
        assert_eq!(record.how(), "exited with code 3");
    }

    #[test]
    fn written_read_back_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None);
        let record = LastExit::of(
            ChildState::Killed { signal: 9 },
            "2026-12-05T00:00:00.000000Z".into(),
            "inc",
            &screen(&["bye \u{1b}[31m"]),
        );
        write(dir.path(), &record).unwrap();
        assert_eq!(read(dir.path()), Some(record));
        clear(dir.path());
        assert_eq!(read(dir.path()), None);
    }

    #[test]
    fn what_is_not_a_record_is_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(path(dir.path()), b"{not json").unwrap();
        assert_eq!(read(dir.path()), None);
        std::fs::remove_file(path(dir.path())).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", path(dir.path())).unwrap();
        assert_eq!(read(dir.path()), None);
    }
}
