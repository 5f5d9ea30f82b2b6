//! `ding down NAME`: stop an agent's sidecar (and with it the adapter's
//! process group), then its PTY host (and with it the harness), waiting for
//! each. The inbox and the journal stay on disk.
//!
//! An agent that is already stopped is success (as `systemctl stop` of a
//! stopped unit); a name that never ran here is "unknown agent" (exit 4).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use std::io::Write;

use anyhow::Result;

use crate::sidecar::adapter_group;
use crate::sidecar::agent_record::AgentRecord;
use crate::sidecar::control::{live_pid, recorded_pid, stop};
use crate::sidecar::paths::AgentPaths;
use crate::sidecar::runtime::STOP_WITHIN;

const HELP: &str = "\
Usage: ding down NAME

Stop the agent's sidecar (it finishes or abandons its in-flight request,
writes its journal and stops its adapter), then its PTY host, which hangs up
the harness. Unread messages stay in the inbox.

Exit status: 0 stopped (or already stopped), 4 no agent NAME ever ran here.
";

/// How long the PTY host gets after SIGTERM: it gives the harness 2 s after
/// the hangup before SIGKILL.
pub const PTY_HOST_GRACE: Duration = Duration::from_secs(5);
/// How long the sidecar gets after SIGTERM: all it may take, and a second.
pub const SIDECAR_GRACE: Duration = Duration::from_secs(STOP_WITHIN.as_secs() + 1);

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(name) = super::only_agent_name(parser, HELP, "Usage: ding down NAME")? else {
        return Ok(ExitCode::SUCCESS);
    };
    let paths = super::agent_state::known_agent(&name)?;
    // First, so that a supervisor that sees a process go while this runs
    // knows it is stopped on purpose and does not start it again.
    mark_stopped_on_purpose(&paths);
    let mut out = std::io::stdout();
    for line in stop_agent(&name, &paths) {
        writeln!(out, "{line}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Marks the agent stopped on purpose, until the next `ding up`.
fn mark_stopped_on_purpose(paths: &AgentPaths) {
    if paths.ensure_runtime_dir().is_ok() {
        let _ = crate::sidecar::private_file::replace(&paths.down_marker(), b"", 0o600);
    }
}

/// Whether the agent was stopped on purpose (`ding down`) since it was
/// last started.
pub fn stopped_on_purpose(paths: &AgentPaths) -> bool {
    std::fs::symlink_metadata(paths.down_marker()).is_ok()
}

/// Whether agent `paths` left anything here: a record of its sidecar, or
/// a pid file of either process.
pub fn ever_ran(paths: &AgentPaths) -> bool {
    matches!(AgentRecord::load(paths.state_dir()), Ok(Some(_)))
        || recorded_pid(&paths.sidecar_pid()).is_some()
        || recorded_pid(&paths.pty_pid()).is_some()
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
