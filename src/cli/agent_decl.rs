//! Picking one agent out of a declaration file, shared by the commands that
//! act on a declared agent (`ding sidecar`, `ding up`).

use std::path::Path;

use anyhow::{Result, bail};

use crate::decl::{self, AgentSpec};

/// Loads `path` and returns the agent `name`, or the only agent when `name`
/// is `None`. Every declaration error is reported, with positions.
pub fn load_agent(path: &Path, name: Option<&str>) -> Result<AgentSpec> {
    let agents = decl::load_file(path)?;
    match name {
        Some(name) => match agents.into_iter().find(|agent| agent.name == name) {
            Some(agent) => Ok(agent),
            None => bail!("no agent `{name}` in {}", path.display()),
        },
        None => {
            let mut agents = agents.into_iter();
            match (agents.next(), agents.next()) {
                (Some(agent), None) => Ok(agent),
                (None, _) => bail!("{} declares no agent", path.display()),
                (Some(first), Some(second)) => bail!(
                    "{} declares several agents (`{}`, `{}`, ...)\nhint: pick one with --agent NAME",
                    path.display(),
                    first.name,
                    second.name
                ),
            }
        }
    }
}
