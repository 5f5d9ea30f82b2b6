//! The sidecar room: everything between the disk, the PTY host, the adapter
//! and the sans-IO engine in [`crate::core`].
//!
//! * `runtime`: the mio loop (`ding sidecar`);
//! * `control`: the CLI's side: status queries, pid files, detached starts;
//! * `agent_record`: what a sidecar last ran with, for `ding status` and `ding up`;
//! * `adapter_proc`: the adapter child, its process group and its pipes;
//! * `adapter_group`: the adapter's group as `ding up`/`ding down` see it;
//! * `inbox_watch`: inotify on `new/`;
//! * `pty_link`: the connection to the PTY host's control socket;
//! * `status_server`: `sidecar.sock`, answering `ding status`;
//! * `status_document`: the status document it answers with, defined once
//!   for the CLI that reads it back (and for the one listed from disk);
//! * `log`: JSON or human log lines, bounded: `log_limit` counts repeated
//!   records, [`crate::log_file`] caps and rotates the file;
//! * `escaped_json`: JSON written by the escape rule, for logs and status;
//! * `inbox`: the Maildir-like inbox (`tmp/`, `new/`, `archive/`): deliver,
//!   archive, scan;
//! * `naming`: sortable, unique arrival names for delivered files;
//! * `journal_store`: the ownership journal on disk, written atomically;
//! * `paths`: the per-agent runtime and state directories and the files in
//!   them.
//!
//! Line framing ([`crate::lines`]), the private files in those directories
//! ([`crate::private_file`]) and fsync with no-replace renames
//! ([`crate::durable`]) are the bottom floor's, shared with the PTY host
//! and the adapter kit.

pub mod adapter_group;
mod adapter_proc;
pub mod agent_record;
pub mod control;
mod crash_point;
pub mod escaped_json;
pub mod inbox;
mod inbox_watch;
pub mod journal_store;
pub mod log;
mod log_limit;
mod naming;
pub mod paths;
pub mod pty_link;
pub mod runtime;
pub mod status_document;
pub mod status_server;
