//! The sidecar room: everything between the disk, the PTY host, the adapter
//! and the sans-IO engine in [`crate::core`].
//!
//! * `inbox`: the Maildir-like inbox (`tmp/`, `new/`, `archive/`): deliver,
//!   archive, scan;
//! * `naming`: sortable, unique arrival names for delivered files;
//! * `journal_store`: the ownership journal on disk, written atomically;
//! * `paths`: the per-agent runtime and state directories and the files in
//!   them;
//! * `private_dir`: creating and checking directories only their owner may
//!   change;
//! * `durable`: fsync and no-replace rename helpers.

pub mod durable;
pub mod inbox;
pub mod journal_store;
pub mod naming;
pub mod paths;
pub mod private_dir;
