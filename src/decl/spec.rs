//! The "high" declaration: a typed `AgentSpec` with every default applied.
//!
//! This is what the rest of ding consumes. Paths are absolute and
//! normalised; the adapter and harness argv stay literal (`$ST_HOOKS` is
//! expanded only at spawn time, by `expand`). Building one is `lower`'s job;
//! fingerprinting it is `fingerprint`'s.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// The harness's terminal size at launch (until someone attaches and
    /// resizes it). Defaults to 80x24.
    pub size: TerminalSize,
    pub ding: DingSpec,
}

/// A terminal size in character cells, each side 1 to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TerminalSize {
    pub cols: u16,
    pub rows: u16,
}

impl TerminalSize {
    /// The largest side: the PTY host refuses more.
    pub const MAX_SIDE: u16 = 1000;

    /// `COLSxROWS`, each side 1 to [`TerminalSize::MAX_SIDE`].
    pub fn parse(text: &str) -> Option<TerminalSize> {
        let (cols, rows) = text.split_once('x')?;
        let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if !digits(cols) || !digits(rows) {
            return None;
        }
        let size = TerminalSize {
            cols: cols.parse().ok()?,
            rows: rows.parse().ok()?,
        };
        let side = 1..=TerminalSize::MAX_SIDE;
        (side.contains(&size.cols) && side.contains(&size.rows)).then_some(size)
    }
}

impl Default for TerminalSize {
    fn default() -> Self {
        TerminalSize { cols: 80, rows: 24 }
    }
}

impl std::fmt::Display for TerminalSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.cols, self.rows)
    }
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
