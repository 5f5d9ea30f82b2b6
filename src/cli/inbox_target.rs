//! Which inbox `ding send NAME` and `ding archive NAME` mean.
//!
//! In this order: the agent NAME in `--decl AGENT.kdl`; else `--inbox DIR`
//! as given; else `DING_INBOX` from the environment, but only when
//! `DING_AGENT` is NAME too. The pair is what DING exports into a harness
//! it runs, so an agent can archive its own messages with no flags; the
//! name check keeps `ding send reviewer` typed inside the worker's harness
//! from landing in the worker's own inbox. Last, the inbox recorded by the
//! agent's sidecar when it last started (`agent.json` in its state
//! directory), so `ding send NAME` works for any agent that ran here.
//! Opening the inbox is `sidecar`'s job.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::exit::Failure;
use crate::decl;

/// The environment variable naming the inbox root of the agent DING runs.
pub const INBOX_VAR: &str = "DING_INBOX";
/// The environment variable naming that agent.
pub const AGENT_VAR: &str = "DING_AGENT";

/// `--decl` and `--inbox` as given on the command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InboxFlags {
    pub decl: Option<PathBuf>,
    pub inbox: Option<PathBuf>,
}

/// The inbox root of agent `name`; `env` looks up environment variables and
/// `recorded` the inbox a sidecar of that name last ran with.
pub fn resolve(
    name: &str,
    flags: &InboxFlags,
    env: impl Fn(&str) -> Option<OsString>,
    recorded: impl Fn(&str) -> Option<PathBuf>,
) -> Result<PathBuf> {
    match (&flags.decl, &flags.inbox) {
        (Some(_), Some(_)) => bail!("give either --decl or --inbox, not both"),
        (Some(file), None) => return from_declaration(name, file),
        (None, Some(dir)) => return Ok(dir.clone()),
        (None, None) => {}
    }
    let from_env = from_environment(name, &env);
    if let Ok(inbox) = from_env {
        return Ok(inbox);
    }
    if let Some(inbox) = recorded(name) {
        return Ok(inbox);
    }
    // Nothing names an inbox of NAME: no flag, no harness variable, no
    // agent of that name ever ran here.
    from_env.map_err(|err| Failure::UnknownAgent.because(format!("{err:#}")))
}

/// `DING_INBOX`, when `DING_AGENT` says it belongs to `name`.
fn from_environment(name: &str, env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let Some(inbox) = env(INBOX_VAR) else {
        bail!(
            "no agent {name} has run here, and nothing names its inbox\nhint: pass --decl AGENT.kdl or --inbox DIR (inside a harness DING runs, {AGENT_VAR} and {INBOX_VAR} are set)"
        );
    };
    match env(AGENT_VAR) {
        Some(agent) if agent == name => {}
        Some(agent) => bail!(
            "{INBOX_VAR} is the inbox of agent {}, not {name}\nhint: pass --decl AGENT.kdl or --inbox DIR to reach another agent",
            agent.to_string_lossy()
        ),
        None => bail!(
            "{INBOX_VAR} is set but {AGENT_VAR} is not, so it is unclear whose inbox it is\nhint: pass --decl AGENT.kdl or --inbox DIR"
        ),
    }
    let inbox = PathBuf::from(inbox);
    if !inbox.is_absolute() {
        bail!(
            "{INBOX_VAR} must be an absolute path, not {}",
            inbox.display()
        );
    }
    Ok(inbox)
}

/// The inbox the sidecar of agent `name` last started with, if it ran here.
pub fn recorded_inbox(name: &str) -> Option<PathBuf> {
    let paths = crate::sidecar::paths::AgentPaths::resolve(
        name,
        &crate::sidecar::paths::DirsEnv::from_process(),
    )
    .ok()?;
    let record = crate::sidecar::agent_record::AgentRecord::load(paths.state_dir()).ok()??;
    Some(record.inbox)
}

fn from_declaration(name: &str, file: &Path) -> Result<PathBuf> {
    let agents = decl::load_file(file)?;
    if let Some(agent) = agents.iter().find(|agent| agent.name == name) {
        return Ok(agent.inbox.clone());
    }
    let declared: Vec<&str> = agents.iter().map(|agent| agent.name.as_str()).collect();
    Err(Failure::UnknownAgent.because(format!(
        "no agent {name} is declared in {}\nhint: it declares {}",
        file.display(),
        declared.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn inbox_flag_is_used_as_given() {
        let flags = InboxFlags {
            decl: None,
            inbox: Some("rel/inbox".into()),
        };
        let vars = [(INBOX_VAR, "/elsewhere"), (AGENT_VAR, "w")];
        assert_eq!(
            resolve("w", &flags, env(&vars), |_| None).unwrap(),
            Path::new("rel/inbox")
        );
    }

    #[test]
    fn decl_and_inbox_together_are_refused() {
        let flags = InboxFlags {
            decl: Some("a.kdl".into()),
            inbox: Some("x".into()),
        };
        assert!(resolve("w", &flags, env(&[]), |_| None).is_err());
    }

    #[test]
    fn environment_inbox_needs_the_matching_agent_name() {
        let flags = InboxFlags::default();
        let ok = [(INBOX_VAR, "/srv/inbox/w"), (AGENT_VAR, "w")];
        assert_eq!(
            resolve("w", &flags, env(&ok), |_| None).unwrap(),
            Path::new("/srv/inbox/w")
        );
        let other = resolve("reviewer", &flags, env(&ok), |_| None).unwrap_err();
        assert!(format!("{other:#}").contains("inbox of agent w, not reviewer"));
        let anonymous =
            resolve("w", &flags, env(&[(INBOX_VAR, "/srv/inbox/w")]), |_| None).unwrap_err();
        assert!(format!("{anonymous:#}").contains("DING_AGENT is not"));
        let relative = [(INBOX_VAR, "inbox/w"), (AGENT_VAR, "w")];
        assert!(resolve("w", &flags, env(&relative), |_| None).is_err());
    }

    #[test]
    fn nothing_to_go_on_says_which_flags_help() {
        let err = resolve("w", &InboxFlags::default(), env(&[]), |_| None).unwrap_err();
        assert!(format!("{err:#}").contains("--decl AGENT.kdl or --inbox DIR"));
    }

    #[test]
    fn a_recorded_inbox_is_the_last_resort() {
        let recorded =
            |name: &str| (name == "reviewer").then(|| PathBuf::from("/srv/inbox/reviewer"));
        let inside_worker = [(INBOX_VAR, "/srv/inbox/w"), (AGENT_VAR, "w")];
        let flags = InboxFlags::default();
        assert_eq!(
            resolve("reviewer", &flags, env(&inside_worker), recorded).unwrap(),
            Path::new("/srv/inbox/reviewer")
        );
        assert_eq!(
            resolve("w", &flags, env(&inside_worker), recorded).unwrap(),
            Path::new("/srv/inbox/w")
        );
        assert!(resolve("ghost", &flags, env(&[]), recorded).is_err());
    }
}
