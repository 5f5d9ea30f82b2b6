//! What a sidecar last ran with, kept in the agent's state directory so that
//! `ding status NAME` can still list the inbox when nothing is running, and
//! `ding up` can compare a declaration with what runs.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::durable::fsync_dir;
use crate::decl::FingerprintInput;

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

const FILE: &str = "agent.json";

impl AgentRecord {
    /// Writes the record atomically into `state_dir`.
    pub fn save(&self, state_dir: &Path) -> Result<()> {
        let path = state_dir.join(FILE);
        let tmp = state_dir.join(format!("{FILE}.tmp"));
        let text = serde_json::to_vec_pretty(self)?;
        fs::write(&tmp, text).with_context(|| format!("write {}", tmp.display()))?;
        fs::File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, &path).with_context(|| format!("rename to {}", path.display()))?;
        fsync_dir(state_dir)?;
        Ok(())
    }

    /// The record in `state_dir`, if one was written.
    pub fn load(state_dir: &Path) -> Result<Option<AgentRecord>> {
        let path = state_dir.join(FILE);
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(
                serde_json::from_slice(&bytes)
                    .with_context(|| format!("parse {}", path.display()))?,
            )),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("read {}", path.display())),
        }
    }
}
