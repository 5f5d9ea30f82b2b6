//! Picking agents out of a declaration file, shared by the commands that
//! act on declared agents (`ding sidecar`, `ding up`, `ding down --decl`,
//! `ding systemd-unit`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::exit::Failure;

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

/// The canonical declaration and the agents `names` picks from it (all of
/// them when `names` is empty).
pub fn load_agents(file: &Path, names: &[String]) -> Result<(PathBuf, Vec<AgentSpec>)> {
    let declaration =
        std::fs::canonicalize(file).with_context(|| format!("cannot open {}", file.display()))?;
    let agents = decl::load_file(&declaration)?;
    if names.is_empty() {
        return Ok((declaration, agents));
    }
    let mut picked = Vec::new();
    for name in names {
        match agents.iter().find(|agent| agent.name == *name) {
            Some(agent) => picked.push(agent.clone()),
            None => {
                let declared: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
                return Err(Failure::UnknownAgent.because(format!(
                    "no agent `{name}` in {}\nhint: it declares {}",
                    declaration.display(),
                    declared.join(", ")
                )));
            }
        }
    }
    Ok((declaration, picked))
}
