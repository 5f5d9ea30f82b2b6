//! `ding down NAME`: stop an agent's sidecar, then its PTY host (and with it
//! the harness). The inbox and the journal stay on disk.

use std::process::ExitCode;
use std::time::Duration;

use std::io::Write;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::help_asked;
use crate::sidecar::control::{live_pid, stop};
use crate::sidecar::paths::{AgentPaths, DirsEnv};

const HELP: &str = "\
Usage: ding down NAME

Stop the agent's sidecar (it finishes or abandons its in-flight request and
writes its journal), then its PTY host, which hangs up the harness. Unread
messages stay in the inbox.
";

const GRACE: Duration = Duration::from_secs(5);

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
    for (what, pid_file) in [
        ("sidecar", paths.sidecar_pid()),
        ("pty host", paths.pty_pid()),
    ] {
        match live_pid(&pid_file) {
            Some(pid) => {
                let killed = stop(pid, GRACE);
                let _ = std::fs::remove_file(&pid_file);
                writeln!(
                    std::io::stdout(),
                    "{name}: {what} (pid {pid}) {}",
                    if killed {
                        "killed after 5 s"
                    } else {
                        "stopped"
                    }
                )?;
            }
            None => writeln!(std::io::stdout(), "{name}: {what} not running")?,
        }
    }
    Ok(ExitCode::SUCCESS)
}
