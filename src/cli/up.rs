//! `ding up AGENT.kdl`: start (or adopt) the agents of a declaration: each
//! one's PTY host running its harness, then its DING sidecar.
//!
//! Both run in the background in their own sessions, with logs in the
//! agent's runtime directory. What already runs is adopted, never restarted
//! behind the user's back: a PTY host or sidecar whose launch differs from
//! the declaration is reported as drift, field by field, and only
//! `--replace` restarts it (saying which one). An agent started from
//! another declaration file is not adopted at all: agent names are per
//! user, and `--takeover` is how a declaration claims a name another one
//! runs. A harness that has exited is started again (`up` means up).
//!
//! Nothing is started for an agent that cannot start here (an unset
//! variable, a missing program or `cwd`: `check_startable`), and a harness
//! that exits within its start grace is a failed `up`, with its exit status
//! and its last screen lines: the processes this `up` started for it are
//! stopped again, so the next `up` starts clean.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_state::{AgentState, Process};
use super::down::{stop_agent, stop_pty_host, stop_sidecar};
use super::exit::Failure;
use super::fleet;
use super::help::help_asked;
use super::launch::{
    LaunchRecord, await_started, check_startable, restart_harness, start_pty_host, start_sidecar,
};
use crate::decl::{AgentSpec, FieldDrift, drift};
use crate::ding_binary::ding_binary;
use crate::escape::escape;
use crate::sidecar::adapter_group;
use crate::sidecar::paths::{AgentPaths, DirsEnv};

const USAGE: &str =
    "Usage: ding up AGENT.kdl [--agent NAME]... [--replace] [--takeover] [--foreground]";

const HELP: &str = "\
Usage: ding up AGENT.kdl [--agent NAME]... [--replace] [--takeover] [--foreground]

Start the declared agents (all of them, or each --agent NAME): the harness
in a PTY host, then the DING sidecar, both in the background. What already
runs is adopted; a PTY host or sidecar whose declaration changed is reported
as drift, field by field, and left running. A harness that has exited is
started again.

  --agent NAME   start only this agent (repeatable)
  --replace      restart the PTY host and/or the sidecar whose launch drifted
                 (a new PTY host restarts the harness)
  --takeover     stop an agent of the same name started from another
                 declaration file, and start this one's
  --foreground   stay in the foreground supervising the agents: a PTY host or
                 sidecar that dies is started again; SIGTERM stops them all
                 (what `ding systemd-unit` runs)
  -h, --help     this help

The agents start at once (up to 32 at a time), and each one's report
prints in the declaration's order. Nothing is started for an agent that
cannot start here (a variable of its commands unset, its program not
found, its cwd missing), and a harness that exits within 500 ms of
starting fails the command with its exit status and its last screen
lines; the last line names every agent that did not start. Exit status: 0
every agent is up, 1 one could not be started (the reason is printed), 2
usage or unexpected error.
";

pub struct Options {
    pub declaration: PathBuf,
    pub agents: Vec<String>,
    pub replace: bool,
    pub takeover: bool,
    pub foreground: bool,
}

pub fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut options = Options {
        declaration: PathBuf::new(),
        agents: Vec::new(),
        replace: false,
        takeover: false,
        foreground: false,
    };
    let mut declaration = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("agent") => options.agents.push(parser.value()?.string()?),
            Arg::Long("replace") => options.replace = true,
            Arg::Long("takeover") => options.takeover = true,
            Arg::Long("foreground") => options.foreground = true,
            Arg::Value(value) if declaration.is_none() => declaration = Some(PathBuf::from(value)),
            other => bail!("{}\n{USAGE}", other.unexpected()),
        }
    }
    let Some(declaration) = declaration else {
        bail!("`ding up` needs a declaration file\n{USAGE}");
    };
    options.declaration = declaration;
    Ok(Some(options))
}

/// Starts each of `specs` once (`ding up` without `--foreground`; the
/// supervisor of `supervise.rs` starts them through [`up`] too, and keeps
/// them running).
pub fn start_all(declaration: &Path, specs: &[AgentSpec], options: &Options) -> Result<ExitCode> {
    // The agents start at once (each waits out its own start window), and
    // their reports print in the declaration's order.
    let outcomes =
        fleet::each_at_once(specs, fleet::AT_ONCE, |spec| up(declaration, spec, options));
    let mut failure = None;
    let mut failed = Vec::new();
    for (spec, outcome) in specs.iter().zip(outcomes) {
        match outcome {
            Ok(report) => write!(std::io::stdout(), "{report}")?,
            Err(err) => {
                eprintln!("ding: {}", super::exit::error_text(&err));
                failure.get_or_insert(super::exit::code_of(&err));
                failed.push(spec.name.clone());
            }
        }
    }
    if let Some(line) = fleet::failed_line("did not start", &failed, specs.len()) {
        eprintln!("ding: {line}");
    }
    Ok(failure.map_or(ExitCode::SUCCESS, ExitCode::from))
}

/// What one `up` did to one agent's process.
struct Step {
    /// One line of the report's first line: `pty host started`.
    summary: String,
    /// Lines of detail (drift), indented under it.
    details: Vec<String>,
    /// This `up` started the process (so a failed start stops it again).
    started: bool,
}

impl Step {
    fn just(summary: impl Into<String>) -> Step {
        Step {
            summary: summary.into(),
            details: Vec::new(),
            started: false,
        }
    }

    fn started(summary: impl Into<String>) -> Step {
        Step {
            started: true,
            ..Step::just(summary)
        }
    }
}

/// Starts or adopts one agent; returns the report to print.
pub fn up(declaration: &Path, spec: &AgentSpec, options: &Options) -> Result<String> {
    let paths = AgentPaths::resolve(&spec.name, &DirsEnv::from_process())?;
    paths.ensure_runtime_dir()?;
    paths.ensure_state_dir()?;
    // Started on purpose now: a supervisor keeps it up again.
    let _ = std::fs::remove_file(paths.down_marker());
    let exe = ding_binary()?;
    let mut state = AgentState::probe(&paths);
    let mut notes = Vec::new();
    if let Some(owner) = other_owner(&state, declaration) {
        if !options.takeover {
            return Err(Failure::Refused.because(format!(
                "agent `{}` runs from {}, not from {}\nhint: agent names are per user: rename one of them, stop it (`ding down {}`), or take the name over with `ding up {} --takeover`",
                spec.name,
                escape(&owner.display().to_string()),
                escape(&declaration.display().to_string()),
                spec.name,
                escape(&declaration.display().to_string()),
            )));
        }
        notes.extend(stop_agent(&spec.name, &paths));
        notes.push(format!(
            "{}: taken over from {}",
            spec.name,
            escape(&owner.display().to_string())
        ));
        state = AgentState::probe(&paths);
    }
    let harness_drift = harness_drift(&state, spec);
    let sidecar_drift = sidecar_drift(&state, spec);
    let restart_pty = !state.pty_host.is_running()
        || (options.replace && harness_drift.as_ref().is_none_or(|f| !f.is_empty()));
    let restart_sidecar = !state.sidecar.is_running()
        || (options.replace && sidecar_drift.as_ref().is_none_or(|f| !f.is_empty()));
    let rerun_harness = !restart_pty && state.harness.has_ended();
    check_startable(spec, restart_pty || rerun_harness, restart_sidecar)?;

    let pty = if restart_pty {
        wait_for_starting(&spec.name, "pty host", state.pty_host)?;
        let mut summary = match state.pty_host {
            Process::Running { pid } => {
                let line = stop_pty_host(&spec.name, &paths);
                notes.push(line);
                format!("pty host replaced (was pid {pid}; the harness restarts)")
            }
            Process::Dead { pid } => format!("pty host started (pid {pid} had died)"),
            _ => "pty host started".to_string(),
        };
        start_pty_host(&exe, spec, declaration, &paths)?;
        if state.pty_host.is_running() {
            summary = format!("{summary}: {}", field_names(harness_drift.as_deref()));
        }
        Step::started(summary)
    } else if rerun_harness {
        let ended = state.harness.end().unwrap_or_default();
        restart_harness(&paths.pty_socket())?;
        // It runs the launch the host has: drift is still drift.
        Step {
            started: true,
            summary: format!("pty host adopted; the harness had {ended}: started again"),
            ..adopted("pty host", harness_drift.as_deref())
        }
    } else {
        adopted("pty host", harness_drift.as_deref())
    };
    let sidecar = if restart_sidecar {
        let summary = match state.sidecar {
            Process::Running { pid } => {
                notes.push(stop_sidecar(&spec.name, &paths));
                format!(
                    "sidecar replaced (was pid {pid}): {}",
                    field_names(sidecar_drift.as_deref())
                )
            }
            Process::Dead { pid } => format!("sidecar started (pid {pid} had died)"),
            _ => "sidecar started".to_string(),
        };
        // No sidecar runs now: an adapter a killed one left behind would
        // act beside the new one's.
        adapter_group::end_orphaned(&paths);
        if let Err(err) = start_sidecar(&exe, spec, declaration, &paths) {
            if pty.started {
                stop_agent(&spec.name, &paths);
            }
            return Err(err);
        }
        Step::started(summary)
    } else {
        adopted("sidecar", sidecar_drift.as_deref())
    };
    if pty.started
        && let Err(err) = await_started(&spec.name, &paths)
    {
        // Leave nothing this `up` started: the next one starts clean.
        if restart_pty {
            if sidecar.started {
                stop_sidecar(&spec.name, &paths);
            }
            stop_pty_host(&spec.name, &paths);
            return Err(Failure::Refused.because(format!(
                "{err:#}\n  ding up stopped the processes it started for `{0}`; `ding logs {0}` has their logs",
                spec.name
            )));
        }
        return Err(err);
    }
    Ok(report(spec, declaration, &paths, &notes, &pty, &sidecar))
}

/// The declaration another file's agent of this name runs from, if any.
fn other_owner(state: &AgentState, declaration: &Path) -> Option<PathBuf> {
    let from_host = state
        .host
        .as_ref()
        .and_then(LaunchRecord::from_status)
        .map(|record| record.declaration);
    let from_sidecar = state
        .live_status()
        .map(|status| status.declaration.to_path_buf());
    [from_host, from_sidecar]
        .into_iter()
        .flatten()
        .find(|owner| owner != declaration)
}

/// The fields in which the running PTY host's launch differs from the
/// declaration: `None` when it runs but cannot say (started by an older
/// ding), empty when it matches or does not run.
pub fn harness_drift(state: &AgentState, spec: &AgentSpec) -> Option<Vec<FieldDrift>> {
    let Some(host) = &state.host else {
        return Some(Vec::new());
    };
    let record = LaunchRecord::from_status(host)?;
    Some(drift(&record.input, &spec.launch_input()))
}

/// The fields in which the running sidecar differs from the declaration,
/// as [`harness_drift`]: `None` when its status is not one this ding reads.
pub fn sidecar_drift(state: &AgentState, spec: &AgentSpec) -> Option<Vec<FieldDrift>> {
    match &state.sidecar_status {
        None => Some(Vec::new()),
        Some(answer) => {
            let running = &answer.as_ref().ok()?.fingerprint_input;
            Some(drift(running, &spec.fingerprint_input()))
        }
    }
}

/// `command, cwd changed`, or that the running process cannot say.
fn field_names(fields: Option<&[FieldDrift]>) -> String {
    match fields {
        Some(fields) if !fields.is_empty() => {
            let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
            format!("{} changed", names.join(", "))
        }
        Some(_) => "nothing changed".into(),
        None => "its launch was unknown".into(),
    }
}

fn adopted(what: &str, fields: Option<&[FieldDrift]>) -> Step {
    match fields {
        Some([]) => Step::just(format!("{what} adopted")),
        Some(fields) => Step {
            summary: format!("{what} adopted with DRIFT, not restarted (--replace restarts it)"),
            details: fields
                .iter()
                .map(|field| {
                    format!(
                        "{what} drift   {}: running {} -> declared {}",
                        escape(&field.field),
                        escape(&field.old),
                        escape(&field.new)
                    )
                })
                .collect(),
            started: false,
        },
        None => Step {
            summary: format!(
                "{what} adopted, its launch unknown (started by an older ding; --replace restarts it)"
            ),
            details: Vec::new(),
            started: false,
        },
    }
}

/// A process that is alive but does not answer yet may be starting: give
/// it the time a start takes; one that stays silent is hung.
fn wait_for_starting(name: &str, what: &str, process: Process) -> Result<()> {
    if let Process::NotAnswering { pid } = process {
        return Err(Failure::Refused.because(format!(
            "agent `{name}`: the {what} (pid {pid}) runs but does not answer\nhint: `ding down {name}` stops it"
        )));
    }
    Ok(())
}

fn report(
    spec: &AgentSpec,
    declaration: &Path,
    paths: &AgentPaths,
    notes: &[String],
    pty: &Step,
    sidecar: &Step,
) -> String {
    // The state as it is now, after the start grace.
    let state = AgentState::probe(paths);
    let mut out = String::new();
    for note in notes {
        out.push_str(&format!("{note}\n"));
    }
    out.push_str(&format!(
        "agent {}: {}; {}\n",
        spec.name, pty.summary, sidecar.summary
    ));
    for line in pty.details.iter().chain(&sidecar.details) {
        out.push_str(&format!("  {line}\n"));
    }
    for line in state.lines() {
        out.push_str(&format!("{line}\n"));
    }
    let shown = |path: &Path| escape(&path.display().to_string());
    out.push_str(&format!("  declaration  {}\n", shown(declaration)));
    out.push_str(&format!("  policy       {}\n", spec.ding.policy.token()));
    out.push_str(&format!("  inbox        {}\n", shown(&spec.inbox)));
    out.push_str(&format!(
        "  logs         {} and {} (`ding logs {}`)\n",
        shown(&paths.pty_log()),
        shown(&paths.sidecar_log()),
        spec.name
    ));
    out.push_str(&format!(
        "  next         ding attach {0}   ding status {0}   ding send {0} FILE   ding down {0}\n",
        spec.name
    ));
    out
}
