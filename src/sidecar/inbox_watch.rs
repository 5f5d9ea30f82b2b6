//! Watching the inbox's `new/` directory with inotify.
//!
//! Files arrive in `new/` by rename (IN_MOVED_TO) or, from careless writers,
//! by creation (IN_CREATE); they leave by rename to `archive/` (IN_MOVED_FROM)
//! or deletion (IN_DELETE). Every entry is reported, directories included:
//! what an entry is, is decided by the inbox's one classification, never
//! here.
//!
//! A watch follows an inode, not a path, so three watches keep it on the
//! path: `new/` itself; the root, so that a `new/` that is deleted, replaced
//! or created later is watched again; and the root's parent, so that a
//! root that is moved away, deleted or replaced (`mv inbox inbox.old;
//! mkdir inbox`) is noticed and the new one watched. Whenever events may
//! have been lost (queue overflow, a directory replaced) the caller is told
//! to rescan: the directory on disk is the authority, events are only
//! hints.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// What the caller should do about the inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboxEvent {
    /// An entry appeared in `new/`.
    Added(OsString),
    /// An entry left `new/`.
    Removed(OsString),
    /// Events may have been lost: list `new/` again.
    Rescan,
}

pub struct InboxWatch {
    inotify: Inotify,
    root: PathBuf,
    new_dir: PathBuf,
    /// The root's name in its parent, to recognise its parent's events.
    root_name: OsString,
    /// The watch on the root's parent, if it has one.
    parent_watch: Option<WatchDescriptor>,
    /// The watch on the root, while it exists.
    root_watch: Option<WatchDescriptor>,
    /// The watch on `new/`, while it exists.
    new_watch: Option<WatchDescriptor>,
}

/// A watched directory that is itself gone: its watch is dead.
const SELF_GONE: AddWatchFlags = AddWatchFlags::IN_DELETE_SELF
    .union(AddWatchFlags::IN_MOVE_SELF)
    .union(AddWatchFlags::IN_IGNORED);

const NEW_DIR_EVENTS: AddWatchFlags = AddWatchFlags::IN_MOVED_TO
    .union(AddWatchFlags::IN_CREATE)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_DELETE_SELF)
    .union(AddWatchFlags::IN_MOVE_SELF)
    .union(AddWatchFlags::IN_ONLYDIR);

/// Entries of a directory coming and going (the root's `new`, the
/// parent's root), and the directory itself going.
const DIR_ENTRY_EVENTS: AddWatchFlags = AddWatchFlags::IN_CREATE
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_DELETE_SELF)
    .union(AddWatchFlags::IN_MOVE_SELF)
    .union(AddWatchFlags::IN_ONLYDIR);

impl InboxWatch {
    /// Watches `root`, `root/new` and the root's parent. The caller scans
    /// right after this, so nothing that arrived before the watch existed is
    /// missed.
    pub fn new(root: &Path) -> io::Result<InboxWatch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        let root_watch = Some(inotify.add_watch(root, DIR_ENTRY_EVENTS)?);
        let parent_watch = match root.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => {
                Some(inotify.add_watch(parent, DIR_ENTRY_EVENTS)?)
            }
            _ => None,
        };
        let new_dir = root.join("new");
        let new_watch = inotify.add_watch(&new_dir, NEW_DIR_EVENTS).ok();
        Ok(InboxWatch {
            inotify,
            root: root.to_path_buf(),
            new_dir,
            root_name: root.file_name().unwrap_or_default().to_owned(),
            parent_watch,
            root_watch,
            new_watch,
        })
    }

    pub fn fd(&self) -> RawFd {
        self.inotify.as_fd().as_raw_fd()
    }

    /// Reads every pending event (until `EAGAIN`) and appends what they mean.
    pub fn drain(&mut self, out: &mut Vec<InboxEvent>) -> io::Result<()> {
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) => events,
                Err(Errno::EAGAIN) => return Ok(()),
                Err(Errno::EINTR) => continue,
                Err(err) => return Err(err.into()),
            };
            for event in events {
                let mask = event.mask;
                let wd = Some(event.wd);
                if mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    out.push(InboxEvent::Rescan);
                } else if wd == self.new_watch {
                    self.on_new_dir_event(mask, event.name, out);
                } else if wd == self.root_watch {
                    if mask.intersects(SELF_GONE) {
                        // The root itself moved or went: follow the path.
                        self.root_watch = None;
                        self.rewatch_root();
                        out.push(InboxEvent::Rescan);
                    } else if is_named(&event.name, "new".as_ref()) {
                        // `new/` itself was created, replaced or removed.
                        self.rewatch_new();
                        out.push(InboxEvent::Rescan);
                    }
                } else if wd == self.parent_watch {
                    if mask.intersects(SELF_GONE) {
                        // Only the path matters; a parent that is gone
                        // cannot be followed further up.
                        self.parent_watch = None;
                    } else if is_named(&event.name, &self.root_name) {
                        // A root moved, deleted or created at the path.
                        self.rewatch_root();
                        out.push(InboxEvent::Rescan);
                    }
                }
            }
        }
    }

    fn on_new_dir_event(
        &mut self,
        mask: AddWatchFlags,
        name: Option<OsString>,
        out: &mut Vec<InboxEvent>,
    ) {
        if mask.intersects(SELF_GONE) {
            self.new_watch = None;
            self.rewatch_new();
            out.push(InboxEvent::Rescan);
            return;
        }
        let Some(name) = name else { return };
        if mask.intersects(AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CREATE) {
            out.push(InboxEvent::Added(name));
        } else if mask.intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_DELETE) {
            out.push(InboxEvent::Removed(name));
        }
    }

    /// Watches whatever directory is at the root's path now, and its `new/`
    /// (a fresh directory gets fresh watches; old ones are dropped).
    fn rewatch_root(&mut self) {
        if let Some(old) = self.root_watch.take() {
            let _ = self.inotify.rm_watch(old);
        }
        self.root_watch = self.inotify.add_watch(&self.root, DIR_ENTRY_EVENTS).ok();
        self.rewatch_new();
    }

    /// Watches `new/` again if it exists now.
    fn rewatch_new(&mut self) {
        if let Some(old) = self.new_watch.take() {
            let _ = self.inotify.rm_watch(old);
        }
        self.new_watch = self.inotify.add_watch(&self.new_dir, NEW_DIR_EVENTS).ok();
    }

    /// Whether `new/` is currently watched.
    #[cfg(test)]
    pub fn watching_new(&self) -> bool {
        self.new_watch.is_some()
    }
}

fn is_named(name: &Option<OsString>, wanted: &OsStr) -> bool {
    name.as_deref() == Some(wanted)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn events(watch: &mut InboxWatch) -> Vec<InboxEvent> {
        let mut out = Vec::new();
        watch.drain(&mut out).unwrap();
        out
    }

    #[test]
    fn arrivals_and_departures_in_new_are_reported_by_name() {
        let root = tempfile::tempdir().unwrap();
        for dir in ["tmp", "new", "archive"] {
            fs::create_dir(root.path().join(dir)).unwrap();
        }
        let mut watch = InboxWatch::new(root.path()).unwrap();
        fs::write(root.path().join("tmp/a.md"), "x").unwrap();
        fs::rename(root.path().join("tmp/a.md"), root.path().join("new/a.md")).unwrap();
        fs::rename(
            root.path().join("new/a.md"),
            root.path().join("archive/a.md"),
        )
        .unwrap();
        fs::write(root.path().join("new/b.md"), "careless writer").unwrap();
        fs::remove_file(root.path().join("new/b.md")).unwrap();
        fs::create_dir(root.path().join("new/subdir")).unwrap();
        assert_eq!(
            events(&mut watch),
            [
                InboxEvent::Added("a.md".into()),
                InboxEvent::Removed("a.md".into()),
                InboxEvent::Added("b.md".into()),
                InboxEvent::Removed("b.md".into()),
                // Reported like any entry; the inbox decides what it is.
                InboxEvent::Added("subdir".into()),
            ]
        );
    }

    #[test]
    fn a_replaced_new_dir_is_watched_again_after_a_rescan() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir(root.path().join("new")).unwrap();
        let mut watch = InboxWatch::new(root.path()).unwrap();
        fs::remove_dir(root.path().join("new")).unwrap();
        assert!(events(&mut watch).contains(&InboxEvent::Rescan));
        assert!(!watch.watching_new());
        fs::create_dir(root.path().join("new")).unwrap();
        assert!(events(&mut watch).contains(&InboxEvent::Rescan));
        assert!(watch.watching_new());
        fs::write(root.path().join("new/c.md"), "x").unwrap();
        assert_eq!(events(&mut watch), [InboxEvent::Added("c.md".into())]);
    }

    #[test]
    fn a_replaced_root_is_watched_again_after_a_rescan() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("inbox");
        fs::create_dir_all(root.join("new")).unwrap();
        let mut watch = InboxWatch::new(&root).unwrap();
        fs::rename(&root, parent.path().join("inbox.old")).unwrap();
        assert!(events(&mut watch).contains(&InboxEvent::Rescan));
        // Whatever happens in the old directory is no longer the inbox.
        fs::write(parent.path().join("inbox.old/new/stale.md"), "x").unwrap();
        assert!(
            !events(&mut watch)
                .iter()
                .any(|e| *e == InboxEvent::Added("stale.md".into()))
        );
        fs::create_dir(&root).unwrap();
        assert!(events(&mut watch).contains(&InboxEvent::Rescan));
        fs::create_dir(root.join("new")).unwrap();
        assert!(events(&mut watch).contains(&InboxEvent::Rescan));
        assert!(watch.watching_new());
        fs::write(root.join("new/fresh.md"), "x").unwrap();
        assert_eq!(events(&mut watch), [InboxEvent::Added("fresh.md".into())]);
    }
}
