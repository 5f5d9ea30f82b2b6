//! `ding down NAME`: stop an agent's sidecar (and with it the adapter's
//! process group), then its PTY host (and with it the harness), waiting for
//! each. The inbox and the journal stay on disk.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use std::io::Write;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::help_asked;
use crate::sidecar::adapter_group;
use crate::sidecar::control::{live_pid, stop};
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::runtime::STOP_WITHIN;

const HELP: &str = "\
Usage: ding down NAME

Stop the agent's sidecar (it finishes or abandons its in-flight request,
writes its journal and stops its adapter), then its PTY host, which hangs up
the harness. Unread messages stay in the inbox.
";

/// How long the PTY host gets after SIGTERM: it gives the harness 2 s after
/// the hangup before SIGKILL.
const PTY_HOST_GRACE: Duration = Duration::from_secs(5);
/// How long the sidecar gets after SIGTERM: all it may take, and a second.
const SIDECAR_GRACE: Duration = Duration::from_secs(STOP_WITHIN.as_secs() + 1);

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let mut name = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            other => bail!("{}\nRun `ding down -h` for usage", other.unexpected()),
        }
    }
    let Some(name) = name else {
        bail!("`ding down` needs an agent name\nUsage: ding down NAME")
    };
    let paths = AgentPaths::resolve(&name, &DirsEnv::from_process())?;
    stop_recorded(&name, "sidecar", &paths.sidecar_pid(), SIDECAR_GRACE)?;
    if let Some(group) = adapter_group::end_orphaned(&paths) {
        // The sidecar did not stop its adapter (it was killed, now or
        // earlier): what was left of the adapter's group is gone now.
        writeln!(
            std::io::stdout(),
            "{name}: adapter left behind (process group {group}) killed"
        )?;
    }
    stop_recorded(&name, "pty host", &paths.pty_pid(), PTY_HOST_GRACE)?;
    Ok(ExitCode::SUCCESS)
}

/// Stops the process recorded in `pid_file`, if it runs, and says how.
fn stop_recorded(name: &str, what: &str, pid_file: &Path, grace: Duration) -> Result<()> {
    let Some(pid) = live_pid(pid_file) else {
        writeln!(std::io::stdout(), "{name}: {what} not running")?;
        return Ok(());
    };
    let killed = stop(pid, grace);
    let _ = std::fs::remove_file(pid_file);
    let how = if killed {
        format!("killed after {} s", grace.as_secs())
    } else {
        "stopped".to_string()
    };
    writeln!(std::io::stdout(), "{name}: {what} (pid {pid}) {how}")?;
    Ok(())
}
