//! The document `ding status --json` prints, serialized straight from typed
//! parts.
//!
//! Why typed: with 100,000 unread messages the document is about 19 MB, and
//! building it as a `serde_json::Value` first cost a tree of maps ten times
//! that size, which the allocator then kept. Serializing borrowed parts
//! writes the bytes once and holds nothing afterwards.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::inbox::Unreadable;
use crate::core::config::Policy;
use crate::core::escape::escape_bytes;
use crate::core::status::EngineStatus;
use crate::decl::FingerprintInput;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDocument<'a> {
    pub agent: &'a str,
    pub running: bool,
    pub pid: u32,
    pub uptime_ms: u64,
    pub policy: Policy,
    pub fingerprint: String,
    pub fingerprint_input: FingerprintInput,
    /// The declaration file the sidecar was started from: whose agent it is.
    #[serde(serialize_with = "lossy_path")]
    pub declaration: &'a Path,
    #[serde(serialize_with = "lossy_path")]
    pub inbox: &'a Path,
    #[serde(serialize_with = "lossy_path")]
    pub pty_socket: PathBuf,
    pub pty_connected: bool,
    pub adapter_command: Option<&'a [String]>,
    pub adapter_pid: Option<u32>,
    #[serde(serialize_with = "lossy_path")]
    pub journal: PathBuf,
    /// Why the journal found at start was quarantined.
    pub journal_warning: Option<&'a str>,
    /// Why saving the journal fails, while it does.
    pub journal_write_error: Option<&'a str>,
    /// Since when the sidecar's log writes fail, while they do.
    pub log_write_failure: Option<&'a crate::log_file::LogFailure>,
    pub unreadable: Vec<UnreadableView>,
    pub engine: EngineStatus,
    /// One human line per message, in FIFO order (what `ding status` shows).
    pub lines: Vec<String>,
}

/// An entry of `new/` that cannot be a message, as status shows it.
#[derive(Serialize)]
pub struct UnreadableView {
    /// The name as people see it, escaped by the one rule
    /// ([`crate::core::escape`]): a byte that is not UTF-8 is `\x{hex}`,
    /// so the entry can be found and renamed.
    pub name: String,
    /// Why it is not delivered, in words.
    pub reason: String,
}

impl UnreadableView {
    pub fn of(entry: &Unreadable) -> UnreadableView {
        UnreadableView {
            name: escape_bytes(entry.name.as_encoded_bytes()),
            reason: entry.reason.to_string(),
        }
    }
}

impl StatusDocument<'_> {
    /// The document as one JSON line (no newline).
    pub fn to_json(&self) -> Vec<u8> {
        match serde_json::to_vec(self) {
            Ok(bytes) => bytes,
            Err(err) => serde_json::json!({
                "error": "status-unserializable",
                "message": err.to_string(),
            })
            .to_string()
            .into_bytes(),
        }
    }
}

/// Paths that are not UTF-8 are shown lossily rather than failing the whole
/// answer (serde refuses them).
fn lossy_path<S: serde::Serializer>(path: &impl AsRef<Path>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(&path.as_ref().to_string_lossy())
}
