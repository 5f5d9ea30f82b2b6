//! Watching the inbox's `new/` directory with inotify.
//!
//! Files arrive in `new/` by rename (IN_MOVED_TO) or, from careless writers,
//! by creation (IN_CREATE); they leave by rename to `archive/` (IN_MOVED_FROM)
//! or deletion (IN_DELETE). The root is watched too, so that a `new/` that is
//! deleted, replaced or created later is watched again. Whenever events may
//! have been lost (queue overflow, `new/` replaced) the caller is told to
//! rescan: the directory on disk is the authority, events are only hints.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// What the caller should do about the inbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboxEvent {
    /// A file appeared in `new/`.
    Added(OsString),
    /// A file left `new/`.
    Removed(OsString),
    /// Events may have been lost: list `new/` again.
    Rescan,
}

pub struct InboxWatch {
    inotify: Inotify,
    new_dir: PathBuf,
    /// The watch on `new/`, while it exists.
    new_watch: Option<WatchDescriptor>,
    root_watch: WatchDescriptor,
}

const NEW_DIR_EVENTS: AddWatchFlags = AddWatchFlags::IN_MOVED_TO
    .union(AddWatchFlags::IN_CREATE)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_DELETE_SELF)
    .union(AddWatchFlags::IN_MOVE_SELF)
    .union(AddWatchFlags::IN_ONLYDIR);

const ROOT_EVENTS: AddWatchFlags = AddWatchFlags::IN_CREATE
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_ONLYDIR);

impl InboxWatch {
    /// Watches `root` and `root/new`. The caller scans right after this, so
    /// nothing that arrived before the watch existed is missed.
    pub fn new(root: &Path) -> io::Result<InboxWatch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        let root_watch = inotify.add_watch(root, ROOT_EVENTS)?;
        let new_dir = root.join("new");
        let new_watch = inotify.add_watch(&new_dir, NEW_DIR_EVENTS).ok();
        Ok(InboxWatch {
            inotify,
            new_dir,
            new_watch,
            root_watch,
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
                if mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    out.push(InboxEvent::Rescan);
                } else if Some(event.wd) == self.new_watch {
                    self.on_new_dir_event(mask, event.name, out);
                } else if event.wd == self.root_watch
                    && event.name.as_deref() == Some("new".as_ref())
                {
                    // `new/` itself was created, replaced or removed.
                    self.rewatch();
                    out.push(InboxEvent::Rescan);
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
        if mask.intersects(
            AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF | AddWatchFlags::IN_IGNORED,
        ) {
            self.new_watch = None;
            self.rewatch();
            out.push(InboxEvent::Rescan);
            return;
        }
        let Some(name) = name else { return };
        if mask.contains(AddWatchFlags::IN_ISDIR) {
            return;
        }
        if mask.intersects(AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CREATE) {
            out.push(InboxEvent::Added(name));
        } else if mask.intersects(AddWatchFlags::IN_MOVED_FROM | AddWatchFlags::IN_DELETE) {
            out.push(InboxEvent::Removed(name));
        }
    }

    /// Watches `new/` again if it exists now (a fresh directory gets a fresh
    /// watch; the old descriptor, if any, is dropped).
    fn rewatch(&mut self) {
        if let Some(old) = self.new_watch.take() {
            let _ = self.inotify.rm_watch(old);
        }
        self.new_watch = self.inotify.add_watch(&self.new_dir, NEW_DIR_EVENTS).ok();
    }

    /// Whether `new/` is currently watched.
    pub fn watching_new(&self) -> bool {
        self.new_watch.is_some()
    }
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
}
