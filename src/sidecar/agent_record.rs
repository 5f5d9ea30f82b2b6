//! What a sidecar last ran with, kept in the agent's state directory so that
//! `ding status NAME` can still list the inbox when nothing is running, and
//! `ding up` can compare a declaration with what runs. Written with
//! [`replace`] and read with [`read_regular`], so whatever was planted in
//! its place is replaced or refused, never opened.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::decl::FingerprintInput;
use crate::private_file::{read_regular, replace};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRecord {
    pub agent: String,
    /// The declaration file the sidecar was started from.
    pub declaration: PathBuf,
    pub inbox: PathBuf,
    pub fingerprint: String,
    pub fingerprint_input: FingerprintInput,
}

pub const FILE: &str = "agent.json";

/// The largest record read; a real one is a few kilobytes.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

impl AgentRecord {
    /// Writes the record atomically into `state_dir`.
    pub fn save(&self, state_dir: &Path) -> Result<()> {
        let text = serde_json::to_vec_pretty(self)?;
        replace(&state_dir.join(FILE), &text, 0o600).context("cannot save the agent record")
    }

    /// The record in `state_dir`, if one was written.
    pub fn load(state_dir: &Path) -> Result<Option<AgentRecord>> {
        let path = state_dir.join(FILE);
        let bytes = read_regular(&path, MAX_RECORD_BYTES)
            .with_context(|| format!("cannot read {}", path.display()))?;
        match bytes {
            Some(bytes) => {
                Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
                    format!("cannot parse {}", path.display())
                })?))
            }
            None => Ok(None),
        }
    }
}
