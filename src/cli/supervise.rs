//! `ding up --foreground`: keep a declaration's agents up, for a service
//! manager (`ding systemd-unit` prints a unit that runs this).
//!
//! What restarts what: the service manager restarts this supervisor if it
//! fails; the supervisor starts a PTY host or a sidecar that *died* again
//! (its pid file names a process that is gone: killed or crashed), as
//! `ding up` does, adopting whatever still runs, with a backoff of 1 s
//! doubling to 60 s per agent so a process that dies at once does not
//! spin; the sidecar respawns its adapter. An agent *stopped* on purpose
//! (`ding down` marks it so before it stops anything, until the next
//! `ding up`) is left stopped, and once every agent is stopped the
//! supervisor ends with success. Nobody
//! restarts a harness that exited: that is a fact to look at
//! (`ding status`), and `ding restart` or `ding up` starts it again.
//! SIGTERM, SIGINT or SIGHUP stop every agent of the declaration (as
//! `ding down`) and end the supervisor.
//!
//! An upgrade in place replaces the `ding` file under a running
//! supervisor: a restart then runs the new file at the same path
//! ([`crate::ding_binary`]). When no file is left at that path, the
//! supervisor ends with failure (leaving the agents as they are) so that
//! its service manager, which restarts only what exits, sees it.
//!
//! It looks once a second (processes adopted from an earlier `ding up`
//! are not its children, so it cannot wait for them) and at once when a
//! child of its own exits.

use std::io::Write;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::agent_state::{AgentState, Process};
use super::down::{stop_agent, stopped_on_purpose};
use super::up::{Options, up};
use crate::core::backoff::Backoff;
use crate::decl::AgentSpec;
use crate::ding_binary::is_binary_gone;
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::signals::read_through_signalfd;
use crate::wall_clock::now_rfc3339;

/// How often the supervisor looks at processes it cannot wait for.
const TICK: Duration = Duration::from_secs(1);
/// How a dead agent is started again: at once, then not before 1 s has
/// passed, doubling up to 60 s while it keeps dying; reset once it is found
/// alive.
const RESTART: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60));

struct Watched<'a> {
    spec: &'a AgentSpec,
    paths: AgentPaths,
    backoff: Backoff,
    next_try: Option<Instant>,
}

fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{} {line}", now_rfc3339());
}

pub fn run(declaration: &Path, specs: &[AgentSpec], options: &Options) -> Result<ExitCode> {
    let signals = read_through_signalfd(&crate::signals::HANDLED)?;
    let env = DirsEnv::from_process();
    let mut watched = Vec::new();
    for spec in specs {
        // A first start that fails ends the supervisor: its manager's
        // restart policy (with its own backoff) decides what follows.
        let report = up(declaration, spec, options)?;
        let _ = write!(std::io::stdout(), "{report}");
        watched.push(Watched {
            spec,
            paths: AgentPaths::resolve(&spec.name, &env)?,
            backoff: RESTART,
            next_try: None,
        });
    }
    say("supervising; SIGTERM stops every agent");
    loop {
        let mut fds = [PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(TICK.as_millis() as i32).unwrap_or(PollTimeout::NONE);
        let _ = poll(&mut fds, timeout);
        let mut stop = false;
        while let Ok(Some(info)) = signals.read_signal() {
            if info.ssi_signo as i32 != Signal::SIGCHLD as i32 {
                stop = true;
            }
        }
        // Our own children that died are zombies until reaped.
        while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
        if stop {
            for agent in &watched {
                for line in stop_agent(&agent.spec.name, &agent.paths) {
                    say(&line);
                }
            }
            say("stopped");
            return Ok(ExitCode::SUCCESS);
        }
        let now = Instant::now();
        watched.retain(|agent| {
            let state = AgentState::probe(&agent.paths);
            let stopped = stopped_on_purpose(&agent.paths)
                || (state.pty_host == Process::Stopped && state.sidecar == Process::Stopped);
            if stopped {
                say(&format!(
                    "agent {}: stopped on purpose; no longer supervised",
                    agent.spec.name
                ));
            }
            !stopped
        });
        if watched.is_empty() {
            say("every agent is stopped");
            return Ok(ExitCode::SUCCESS);
        }
        for agent in &mut watched {
            if agent.next_try.is_some_and(|at| at > now) {
                continue;
            }
            let state = AgentState::probe(&agent.paths);
            if stopped_on_purpose(&agent.paths) {
                continue;
            }
            let dead: Vec<String> = [("pty host", state.pty_host), ("sidecar", state.sidecar)]
                .into_iter()
                .filter(|(_, process)| matches!(process, Process::Dead { .. }))
                .map(|(what, process)| format!("{what} {}", process.describe()))
                .collect();
            if dead.is_empty() {
                agent.backoff.succeeded();
                agent.next_try = None;
                continue;
            }
            say(&format!(
                "agent {}: {}; starting it again",
                agent.spec.name,
                dead.join(", ")
            ));
            let delay = agent.backoff.failed();
            agent.next_try = Some(now + delay);
            match up(declaration, agent.spec, options) {
                Ok(report) => {
                    let _ = write!(std::io::stdout(), "{report}");
                }
                Err(err) if is_binary_gone(&err) => {
                    // Nothing here can start a `ding` again: end with
                    // failure so the service manager restarts the
                    // supervisor from its unit (which names the path) or
                    // reports it failed, instead of trying forever.
                    say(&format!(
                        "agent {}: {}; the supervisor ends so that its service manager sees it",
                        agent.spec.name,
                        super::exit::error_text(&err),
                    ));
                    return Ok(ExitCode::FAILURE);
                }
                Err(err) => {
                    say(&format!(
                        "agent {}: {}; trying again in {} s",
                        agent.spec.name,
                        super::exit::error_text(&err),
                        delay.as_secs()
                    ));
                }
            }
        }
    }
}
