//! Where the PTY host's identity values come from: a fresh random
//! incarnation per child start, and the generation hash of the launch spec.
//!
//! The comparison of identities belongs to the send-if path in the host; the
//! meaning of the tuple belongs to `core::identity`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// Everything that shapes a launch. Its canonical JSON (fields in this order,
/// environment sorted by name) is what `generation` hashes, so two hosts
/// started with the same spec report the same generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchSpec {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Variables given with `--env`; the inherited environment is not part
    /// of the spec, because it varies with whoever started the host.
    pub env: BTreeMap<String, String>,
    pub inbox: Option<PathBuf>,
    pub runtime_dir: Option<PathBuf>,
}

impl LaunchSpec {
    /// `sha256:<hex>` of the canonical JSON of the spec.
    pub fn generation(&self) -> String {
        // Serializing plain strings, paths and a BTreeMap cannot fail except
        // for non-UTF-8 paths, which are hashed through their lossy form.
        let canonical = serde_json::to_vec(self).unwrap_or_else(|_| {
            format!(
                "{:?}|{}|{:?}|{:?}|{:?}",
                self.argv,
                self.cwd.to_string_lossy(),
                self.env,
                self.inbox
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
                self.runtime_dir
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
            )
            .into_bytes()
        });
        format!("sha256:{}", hex(&Sha256::digest(&canonical)))
    }
}

/// A fresh incarnation: 128 bits from the OS random source, as hex.
pub fn fresh_incarnation() -> Result<String> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("read /dev/urandom for a fresh incarnation")?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            argv: vec!["bash".into(), "--norc".into()],
            cwd: PathBuf::from("/srv/agent"),
            env: BTreeMap::from([("B".into(), "2".into()), ("A".into(), "1".into())]),
            inbox: Some(PathBuf::from("/srv/inbox")),
            runtime_dir: None,
        }
    }

    #[test]
    fn generation_is_stable_for_the_same_spec() {
        let generation = spec().generation();
        assert_eq!(generation, spec().generation());
        assert!(generation.starts_with("sha256:"));
        assert_eq!(generation.len(), "sha256:".len() + 64);
    }

    #[test]
    fn generation_changes_with_argv_cwd_or_env() {
        let base = spec().generation();
        let mut argv = spec();
        argv.argv.push("-i".into());
        let mut cwd = spec();
        cwd.cwd = PathBuf::from("/elsewhere");
        let mut env = spec();
        env.env.insert("C".into(), "3".into());
        for changed in [argv, cwd, env] {
            assert_ne!(changed.generation(), base);
        }
    }

    #[test]
    fn incarnations_are_fresh() {
        let a = fresh_incarnation().expect("urandom");
        let b = fresh_incarnation().expect("urandom");
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
