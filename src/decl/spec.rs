//! The "high" declaration: a typed `AgentSpec` with every default applied.
//!
//! This is what the rest of ding consumes. Paths are absolute and
//! normalised; the adapter and harness argv stay literal (`$ST_HOOKS` is
//! expanded only at spawn time, by `expand`). Building one is `lower`'s job;
//! fingerprinting it is `fingerprint`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::core::config::{EngineConfig, Policy, Tunables};

/// One declared agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// Unique in its file; `[A-Za-z0-9][A-Za-z0-9._-]*`, at most 64 bytes.
    pub name: String,
    /// The harness argv, run without a shell. `None` when the declaration
    /// names no `command`: DING can deliver to such an agent, but nothing
    /// can launch it (`ding check` warns).
    pub command: Option<Vec<String>>,
    /// Where the harness runs. Defaults to the declaration's directory.
    pub cwd: PathBuf,
    /// The inbox root (`new/`, `tmp/`, `archive/` live under it). Defaults
    /// to `inbox/<name>` beside the declaration.
    pub inbox: PathBuf,
    /// Extra environment for the harness, sorted by name.
    pub env: BTreeMap<String, String>,
    pub ding: DingSpec,
}

/// The lowered `ding { ... }` block (or its absence).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DingSpec {
    pub policy: Policy,
    /// Present exactly when `policy.uses_adapter()`.
    pub adapter: Option<AdapterSpec>,
    pub tunables: Tunables,
}

impl Default for DingSpec {
    /// What an agent without a `ding` block gets: the aggressive policy with
    /// every tunable at its default, exactly as before declarations existed.
    fn default() -> Self {
        DingSpec {
            policy: Policy::Aggressive,
            adapter: None,
            tunables: Tunables::default(),
        }
    }
}

/// The opaque adapter executable. Core never looks inside this argv.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSpec {
    /// Literal argv, non-empty, program first; may contain `$ST_HOOKS`.
    pub command: Vec<String>,
}

impl AgentSpec {
    /// The inbox's unread directory, where accepted messages wait.
    pub fn unread_dir(&self) -> PathBuf {
        self.inbox.join("new")
    }

    /// The engine's configuration for this agent.
    pub fn engine_config(&self) -> EngineConfig {
        let mut config = EngineConfig::new(
            self.ding.policy,
            self.name.clone(),
            self.unread_dir().to_string_lossy().into_owned(),
        );
        config.tunables = self.ding.tunables.clone();
        config
    }

    /// The adapter argv, literal, when the policy runs one.
    pub fn adapter_command(&self) -> Option<&[String]> {
        self.ding
            .adapter
            .as_ref()
            .map(|adapter| adapter.command.as_slice())
    }
}
