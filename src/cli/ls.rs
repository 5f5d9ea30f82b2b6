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
use lexopt::Arg;
use serde_json::{Value, json};

use super::agent_state::{Harness, Process};
use super::help_asked;
use super::status::agent_status;
use crate::core::escape::escape;
use crate::sidecar::agent_record::FILE as AGENT_RECORD;
use crate::sidecar::escaped_json::to_json_pretty;
use crate::sidecar::paths::{AgentPaths, DirsEnv, check_agent_name};

const HELP: &str = "\
Usage: ding ls [--json]

List every agent that ran here: its harness (starting, running, restarting,
exited), PTY host and sidecar (running, not-answering, dead, stopped), how
many messages are unread and how many of them are held, its policy and the
declaration it runs from.

  --json       print one object per agent
  -h, --help   this help
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let mut as_json = false;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Long("json") => as_json = true,
            other => bail!("{}\nUsage: ding ls [--json]", other.unexpected()),
        }
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

/// One summary per agent, as `ding ls --json` prints it.
pub fn summary(document: &Value) -> Value {
    let running = document["running"].as_bool() == Some(true);
    let messages = document["engine"]["messages"].as_array();
    let held = messages
        .into_iter()
        .flatten()
        .filter(|m| !m["hold"].is_null() || (!running && m["state"] == "pending"))
        .count();
    json!({
        "agent": document["agent"],
        "harness": document["harness"],
        "ptyHost": document["ptyHost"],
        "sidecar": document["sidecar"],
        "unread": document["engine"]["unread"].as_u64().unwrap_or(0),
        "held": held,
        "policy": document["policy"],
        "declaration": document["declaration"],
    })
}

pub fn list(env: &DirsEnv, as_json: bool) -> Result<ExitCode> {
    let mut summaries = Vec::new();
    for name in agent_names(env)? {
        let paths = AgentPaths::resolve(&name, env)?;
        // One agent that cannot be read does not hide the others.
        summaries.push(match agent_status(&name, &paths) {
            Ok((document, _)) => summary(&document),
            Err(err) => json!({ "agent": name, "error": format!("{err:#}") }),
        });
    }
    let mut out = std::io::stdout();
    if as_json {
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

fn text(value: &Value) -> String {
    value.as_str().map(escape).unwrap_or_else(|| "-".into())
}

fn row(summary: &Value) -> String {
    let name = text(&summary["agent"]);
    if let Some(error) = summary.get("error") {
        return format!("{name:<20} error: {}", text(error));
    }
    let harness = match Harness::from_json(&summary["harness"]) {
        Some(Harness::Exited { code, .. }) => format!("exited ({code})"),
        Some(Harness::Killed { signal, .. }) => format!("exited (signal {signal})"),
        Some(harness) => harness.to_json()["state"]
            .as_str()
            .unwrap_or("?")
            .to_string(),
        None => "?".into(),
    };
    let process = |key: &str| Process::from_json(&summary[key]).map_or("?", Process::word);
    format!(
        "{name:<20} {harness:<20} {:<14} {:<14} {:>6} {:>5}  {:<25} {}",
        process("ptyHost"),
        process("sidecar"),
        summary["unread"].as_u64().unwrap_or(0),
        summary["held"].as_u64().unwrap_or(0),
        text(&summary["policy"]),
        text(&summary["declaration"]),
    )
}
