//! `ding ls`: every agent that ran here, one line each: its harness, PTY
//! host and sidecar states, unread and held counts, policy and the
//! declaration it runs from. `ding status` without a name prints the same.
//!
//! An agent is anything with a record in the state directory or a pid file
//! in the runtime directory, under a name that can be an agent's (anything
//! else found there is not listed, and its name never printed). Everything
//! printed is escaped by the one rule, as in `ding status`.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};
use serde::Serialize;

use super::agent_state::{Harness, Processes};
use super::agent_status::{AgentStatus, agent_status};
use super::help::help_asked;
use super::remote::Remote;
use crate::core::config::Policy;
use crate::core::ownership::MessageState;
use crate::escape::escape;
use crate::sidecar::agent_record::FILE as AGENT_RECORD;
use crate::sidecar::escaped_json::to_json_pretty;
use crate::sidecar::paths::{AgentPaths, DirsEnv, check_agent_name};
use crate::sidecar::status_document::StatusReport;

const HELP: &str = "\
Usage: ding ls [HOST:] [--json]

List every agent that ran here: its harness (starting, running, restarting,
exited), PTY host and sidecar (running, not-answering, dead, stopped), how
many messages are unread and how many of them are held, its policy and the
declaration it runs from. HOST: lists the agents of another host, asking
its ding over ssh (as `ding send HOST:NAME` does).

  --json       print one object per agent
  -h, --help   this help
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let mut as_json = false;
    let mut remote = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Long("json") => as_json = true,
            Arg::Value(value) if remote.is_none() => {
                let value = value.string()?;
                match Remote::parse(&value) {
                    Some(host) if host.agent.is_empty() => remote = Some(host),
                    _ => bail!("`{value}` is not HOST:\nUsage: ding ls [HOST:] [--json]"),
                }
            }
            other => bail!("{}\nUsage: ding ls [HOST:] [--json]", other.unexpected()),
        }
    }
    if let Some(remote) = remote {
        return super::remote::show(&remote, "ls", as_json);
    }
    list(&DirsEnv::from_process(), as_json)
}

/// The names of every agent that left a record or a pid file here.
pub fn agent_names(env: &DirsEnv) -> Result<Vec<String>> {
    let probe = AgentPaths::resolve("probe", env)?;
    let mut names = BTreeSet::new();
    let bases = [
        (probe.state_dir().parent(), AGENT_RECORD),
        (probe.runtime_dir().parent(), "pty.pid"),
        (probe.runtime_dir().parent(), "sidecar.pid"),
    ];
    for (base, marker) in bases {
        let Some(base) = base else { continue };
        names.extend(names_with(base, marker));
    }
    Ok(names.into_iter().collect())
}

/// Directories under `base`, named like agents, that hold `marker`.
fn names_with(base: &Path, marker: &str) -> Vec<String> {
    fs::read_dir(base)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok())
                .filter(|entry| fs::symlink_metadata(entry.path().join(marker)).is_ok())
                .filter_map(|entry| entry.file_name().into_string().ok())
                .filter(|name| check_agent_name(name).is_ok())
                .collect()
        })
        .unwrap_or_default()
}

/// One agent's line, as `ding ls --json` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Summary {
    Listed(AgentSummary),
    /// Its status could not be assembled at all (its record cannot be
    /// read, say): listed with why, so it does not hide the others.
    Failed {
        agent: String,
        error: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSummary {
    pub agent: String,
    #[serde(flatten)]
    pub processes: Processes,
    pub unread: usize,
    pub held: usize,
    pub policy: Option<Policy>,
    /// Shown lossily if not UTF-8.
    pub declaration: Option<String>,
    /// Why the running sidecar's status cannot be read, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar_status_error: Option<String>,
}

impl AgentSummary {
    pub fn of(status: &AgentStatus) -> AgentSummary {
        let document = &status.document;
        AgentSummary {
            agent: document.agent().to_string(),
            processes: status.processes,
            unread: document.unread(),
            held: held(document),
            policy: document.policy(),
            declaration: document
                .declaration()
                .map(|path| path.to_string_lossy().into_owned()),
            sidecar_status_error: status.sidecar_status_error.clone(),
        }
    }
}

/// How many unread messages are held: those with a hold, or listed from
/// disk, every pending one (nothing delivers while no sidecar runs).
fn held(document: &StatusReport) -> usize {
    match document {
        StatusReport::Live(live) => live.engine.held().map_or(0, |(_, count)| count),
        StatusReport::FromDisk(disk) => disk
            .engine
            .messages
            .iter()
            .filter(|message| message.state == MessageState::Pending)
            .count(),
    }
}

pub fn list(env: &DirsEnv, as_json: bool) -> Result<ExitCode> {
    let mut summaries = Vec::new();
    for name in agent_names(env)? {
        let paths = AgentPaths::resolve(&name, env)?;
        // One agent that cannot be read does not hide the others.
        summaries.push(match agent_status(&name, &paths) {
            Ok(status) => Summary::Listed(AgentSummary::of(&status)),
            Err(err) => Summary::Failed {
                agent: name,
                error: format!("{err:#}"),
            },
        });
    }
    let mut out = std::io::stdout();
    if as_json {
        // Through a `Value`, whose maps sort their keys, as always.
        let summaries = serde_json::to_value(&summaries)?;
        writeln!(out, "{}", to_json_pretty(&summaries)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if summaries.is_empty() {
        writeln!(out, "no agents have run here yet")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "{:<20} {:<20} {:<14} {:<14} {:>6} {:>5}  {:<25} DECLARATION",
        "AGENT", "HARNESS", "PTY HOST", "SIDECAR", "UNREAD", "HELD", "POLICY"
    )?;
    for summary in &summaries {
        writeln!(out, "{}", row(summary))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn row(summary: &Summary) -> String {
    let summary = match summary {
        Summary::Listed(summary) => summary,
        Summary::Failed { agent, error } => {
            return format!("{:<20} error: {}", escape(agent), escape(error));
        }
    };
    let harness = match summary.processes.harness {
        Harness::Exited { code, .. } => format!("exited ({code})"),
        Harness::Killed { signal, .. } => format!("exited (signal {signal})"),
        harness => harness.word().to_string(),
    };
    let row = format!(
        "{:<20} {harness:<20} {:<14} {:<14} {:>6} {:>5}  {:<25} {}",
        escape(&summary.agent),
        summary.processes.pty_host.word(),
        summary.processes.sidecar.word(),
        summary.unread,
        summary.held,
        summary.policy.map_or("-", Policy::token),
        summary
            .declaration
            .as_deref()
            .map_or_else(|| "-".into(), escape),
    );
    match &summary.sidecar_status_error {
        Some(why) => format!("{row}  ({})", escape(why)),
        None => row,
    }
}
