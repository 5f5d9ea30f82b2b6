//! `ding down NAME...` (or `--decl AGENT.kdl`): stop each agent's sidecar
//! (and with it the adapter's process group), then its PTY host (and with
//! it the harness), waiting for each; several agents at once. The inbox
//! and the journal stay on disk.
//!
//! An agent that is already stopped is success (as `systemctl stop` of a
//! stopped unit); a name that never ran here is "unknown agent" (exit 4).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_decl::load_agents;
use super::agent_state::{ever_ran, known_agent};
use super::fleet;

use crate::sidecar::adapter_group;
use crate::sidecar::control::{live_pid, stop};
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::runtime::STOP_WITHIN;

const USAGE: &str = "Usage: ding down NAME... | ding down --decl AGENT.kdl";

const HELP: &str = "\
Usage: ding down NAME... | ding down --decl AGENT.kdl

Stop each named agent (or every agent of the declaration AGENT.kdl that
has run here): its sidecar (it finishes or abandons its in-flight request,
writes its journal and stops its adapter), then its PTY host, which hangs
up the harness. Unread messages stay in the inbox. Several agents stop at
once (up to 32 at a time); each one's lines print in the order given.

  --decl AGENT.kdl   stop the agents this declaration declares
  -h, --help         this help

Exit status: 0 stopped (or already stopped), 4 a NAME never ran here (the
others are stopped all the same; the last line names it).
";

/// How long the PTY host gets after SIGTERM: it gives the harness 2 s after
/// the hangup before SIGKILL.
pub const PTY_HOST_GRACE: Duration = Duration::from_secs(5);
/// How long the sidecar gets after SIGTERM: all it may take, and a second.
pub const SIDECAR_GRACE: Duration = Duration::from_secs(STOP_WITHIN.as_secs() + 1);

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(names) = parse_names(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let outcomes = fleet::each_at_once(&names, fleet::AT_ONCE, |target| match target {
        Target::Named(name) => known_agent(name).map(|paths| down(name, &paths)),
        Target::Declared(name) => {
            let paths = AgentPaths::resolve(name, &DirsEnv::from_process())?;
            Ok(if ever_ran(&paths) {
                down(name, &paths)
            } else {
                vec![format!("{name}: never ran here")]
            })
        }
    });
    let mut out = std::io::stdout();
    let mut failure = None;
    let mut failed = Vec::new();
    for (target, outcome) in names.iter().zip(outcomes) {
        match outcome {
            Ok(lines) => {
                for line in lines {
                    writeln!(out, "{line}")?;
                }
            }
            Err(err) => {
                eprintln!("ding: {}", super::exit::error_text(&err));
                failure.get_or_insert(super::exit::code_of(&err));
                failed.push(target.name().to_string());
            }
        }
    }
    if let Some(line) = fleet::failed_line("were not stopped", &failed, names.len()) {
        eprintln!("ding: {line}");
    }
    Ok(failure.map_or(ExitCode::SUCCESS, ExitCode::from))
}

/// An agent to stop: named on the command line (it must have run here),
/// or declared in `--decl`'s file (one that never ran is nothing to stop).
enum Target {
    Named(String),
    Declared(String),
}

impl Target {
    fn name(&self) -> &str {
        match self {
            Target::Named(name) | Target::Declared(name) => name,
        }
    }
}

/// The agents to stop, in the order given; `None` when help was asked.
fn parse_names(parser: &mut lexopt::Parser) -> Result<Option<Vec<Target>>> {
    let mut targets = Vec::new();
    while let Some(arg) = parser.next()? {
        if super::help::help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("decl") => {
                let file = PathBuf::from(parser.value()?);
                let (_, specs) = load_agents(&file, &[])?;
                targets.extend(specs.into_iter().map(|spec| Target::Declared(spec.name)));
            }
            Arg::Value(value) => targets.push(Target::Named(value.string()?)),
            other => bail!("{}\n{USAGE}", other.unexpected()),
        }
    }
    if targets.is_empty() {
        bail!("an agent name or --decl AGENT.kdl is needed\n{USAGE}");
    }
    Ok(Some(targets))
}

/// Stops one agent that ran here; says what it did, one line each.
fn down(name: &str, paths: &AgentPaths) -> Vec<String> {
    // First, so that a supervisor that sees a process go while this runs
    // knows it is stopped on purpose and does not start it again.
    mark_stopped_on_purpose(paths);
    stop_agent(name, paths)
}

/// Marks the agent stopped on purpose, until the next `ding up`.
fn mark_stopped_on_purpose(paths: &AgentPaths) {
    if paths.ensure_runtime_dir().is_ok() {
        let _ = crate::private_file::replace(&paths.down_marker(), b"", 0o600);
    }
}

/// Whether the agent was stopped on purpose (`ding down`) since it was
/// last started.
pub fn stopped_on_purpose(paths: &AgentPaths) -> bool {
    std::fs::symlink_metadata(paths.down_marker()).is_ok()
}

/// Stops the sidecar, what a killed sidecar left of its adapter's group,
/// then the PTY host; says what it did, one line each.
pub fn stop_agent(name: &str, paths: &AgentPaths) -> Vec<String> {
    let mut lines = vec![stop_recorded(
        name,
        "sidecar",
        &paths.sidecar_pid(),
        SIDECAR_GRACE,
    )];
    if let Some(group) = adapter_group::end_orphaned(paths) {
        // The sidecar did not stop its adapter (it was killed, now or
        // earlier): what was left of the adapter's group is gone now.
        lines.push(format!(
            "{name}: adapter left behind (process group {group}) killed"
        ));
    }
    lines.push(stop_pty_host(name, paths));
    lines
}

/// Stops the PTY host (and with it the harness); says how.
pub fn stop_pty_host(name: &str, paths: &AgentPaths) -> String {
    stop_recorded(name, "pty host", &paths.pty_pid(), PTY_HOST_GRACE)
}

/// Stops the sidecar; says how.
pub fn stop_sidecar(name: &str, paths: &AgentPaths) -> String {
    stop_recorded(name, "sidecar", &paths.sidecar_pid(), SIDECAR_GRACE)
}

/// Stops the process recorded in `pid_file`, if it runs, and says how.
fn stop_recorded(name: &str, what: &str, pid_file: &Path, grace: Duration) -> String {
    let Some(pid) = live_pid(pid_file) else {
        let _ = std::fs::remove_file(pid_file);
        return format!("{name}: {what} not running");
    };
    let killed = stop(pid, grace);
    let _ = std::fs::remove_file(pid_file);
    let how = if killed {
        format!("killed after {} s", grace.as_secs())
    } else {
        "stopped".to_string()
    };
    format!("{name}: {what} (pid {pid}) {how}")
}
