//! `ding restart NAME`: start the agent's harness again, as a new
//! incarnation, without touching anything else.
//!
//! The PTY host ends the harness (SIGHUP to its process group, SIGKILL 2 s
//! later) and starts the same command again; the sidecar and the inbox are
//! untouched, so nothing is lost: the engine sees the new incarnation, and
//! what was rung into the old one rings again into the new one (spec §7).
//! A harness that exits within its start grace fails the command, with how
//! it ended and its last screen lines.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use super::agent_state::{AgentState, known_agent};
use super::exit::Failure;
use super::launch::{await_started, restart_harness};

const HELP: &str = "\
Usage: ding restart NAME

Restart the agent's harness: its PTY host ends it (SIGHUP to its process
group, SIGKILL 2 s later) and starts the same command again, as a new
incarnation. The sidecar and the inbox are untouched, so nothing is lost:
messages rung into the old incarnation ring again into the new one. To run
a changed command, use `ding up AGENT.kdl --replace`.

Exit status: 0 restarted, 1 the harness exited within 500 ms of starting
(how, and its last screen lines, are printed), 3 no PTY host runs (`ding up`
starts one), 4 no agent NAME ever ran here.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(name) = super::help::only_agent_name(parser, HELP, "Usage: ding restart NAME")? else {
        return Ok(ExitCode::SUCCESS);
    };
    let paths = known_agent(&name)?;
    let before = AgentState::probe(&paths);
    let Some(host) = before.host.as_ref() else {
        return Err(Failure::NotRunning.because(format!(
            "the pty host of agent `{name}` is {}\nhint: `ding up AGENT.kdl` starts it",
            before.pty_host.word()
        )));
    };
    let old = host.incarnation.clone();
    let incarnation = restart_harness(&paths.pty_socket())?;
    await_started(&name, &paths)?;
    let mut out = std::io::stdout();
    writeln!(
        out,
        "agent {name}: harness restarted (incarnation {old} -> {incarnation})"
    )?;
    for line in AgentState::probe(&paths).lines() {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}
