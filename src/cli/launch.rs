//! Starting an agent's two processes, the way `ding up`, `ding restart`
//! and the supervisor all do it.
//!
//! The PTY host gets everything on its command line except the values of
//! the declared environment: those travel in its own environment and the
//! command line names them only (`--env NAME`), so no secret shows in `ps`
//! or `/proc/PID/cmdline`. It also gets the [`LaunchRecord`] (`--launch`):
//! which declaration it was started from and the fingerprint input of its
//! launch (command, cwd, environment names and a digest of the values,
//! size), which it gives back in `status` so that drift and ownership can
//! be judged against what truly runs, not against a file beside it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::agent_state::{Harness, START_GRACE, pty_status};
use super::exit::Failure;
use crate::decl::{AgentSpec, Concerns, Fingerprinted, LaunchInput, Problem, preflight};
use crate::pty::wire::HostStatus;
use crate::sidecar::control::{query_status, spawn_detached, wait_started, write_pid};
use crate::sidecar::paths::AgentPaths;
use crate::wait::{POLL_EVERY, RETRY_EVERY, wait_for};

/// How long a starting process may take to answer.
pub const READY_TIMEOUT: Duration = Duration::from_secs(15);

/// What a PTY host was started from, as it reports it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchRecord {
    /// The declaration file (canonical): whose agent this is.
    pub declaration: PathBuf,
    pub fingerprint: String,
    pub input: LaunchInput,
}

impl LaunchRecord {
    pub fn of(spec: &AgentSpec, declaration: &Path) -> LaunchRecord {
        let input = spec.launch_input();
        LaunchRecord {
            declaration: declaration.to_path_buf(),
            fingerprint: input.fingerprint(),
            input,
        }
    }

    /// The record a running host reports, if it was started with one this
    /// ding can read.
    pub fn from_status(status: &HostStatus) -> Option<LaunchRecord> {
        serde_json::from_value(status.launch.clone()?).ok()
    }
}

/// Refuses, listing every problem, if `spec` cannot be started here:
/// `harness` checks what the PTY host needs, `adapter` what the sidecar
/// needs (the variables of the adapter's command).
pub fn check_startable(spec: &AgentSpec, harness: bool, adapter: bool) -> Result<()> {
    let problems: Vec<Problem> = preflight(spec, |name| std::env::var_os(name))
        .into_iter()
        .filter(|problem| match problem.concerns() {
            Concerns::Harness => harness,
            Concerns::Adapter => adapter,
            Concerns::Both => harness || adapter,
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    Err(Failure::Refused.because(format!(
        "agent `{}` cannot start here:\n{}\nhint: `ding check` lists what an agent needs from this machine",
        spec.name,
        list.join("\n")
    )))
}

/// The session name of the agent's terminal: `HOST.NAME`.
fn session(spec: &AgentSpec) -> String {
    let host = nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}.{}", spec.name)
}

/// How to start a PTY host: its arguments, and the environment (the
/// declared values, named only in the arguments) to start it with.
pub struct PtyHostCommand {
    pub args: Vec<OsString>,
    pub env: Vec<(String, String)>,
}

/// `ding pty`'s arguments for `spec`, and its environment.
pub fn pty_host_command(
    spec: &AgentSpec,
    declaration: &Path,
    paths: &AgentPaths,
) -> Result<PtyHostCommand> {
    let Some(command) = &spec.command else {
        return Err(Failure::Refused.because(format!(
            "agent `{}` declares no `command`, so there is no harness to launch\nhint: add `command \"prog\" \"arg\"...` to its agent block",
            spec.name
        )));
    };
    let argv = crate::decl::expand_argv_from_env(command)
        .map_err(|err| Failure::Refused.because(format!("agent `{}`: {err}", spec.name)))?;
    let record = serde_json::to_string(&LaunchRecord::of(spec, declaration))?;
    let mut args: Vec<OsString> = vec![
        "pty".into(),
        "--socket".into(),
        paths.pty_socket().into(),
        "--session".into(),
        session(spec).into(),
        "--cwd".into(),
        spec.cwd.clone().into(),
        "--inbox".into(),
        spec.inbox.clone().into(),
        "--runtime-dir".into(),
        paths.runtime_dir().into(),
        "--size".into(),
        spec.size.to_string().into(),
        "--launch".into(),
        record.into(),
        "--log".into(),
        paths.pty_log().into(),
    ];
    // `ding archive NAME FILE` run inside the harness finds its inbox by
    // DING_AGENT (and the host's DING_INBOX).
    let mut env = vec![("DING_AGENT".to_string(), spec.name.clone())];
    env.extend(spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    for (key, _) in &env {
        args.push("--env".into());
        args.push(key.into());
    }
    args.push("--".into());
    args.extend(argv);
    Ok(PtyHostCommand { args, env })
}

/// Starts the PTY host of `spec` and waits until it answers; returns its
/// pid. A host that exits first fails at once with the reason it logged.
pub fn start_pty_host(
    exe: &Path,
    spec: &AgentSpec,
    declaration: &Path,
    paths: &AgentPaths,
) -> Result<u32> {
    let command = pty_host_command(spec, declaration, paths)?;
    let pid = spawn_detached(exe, &command.args, &command.env, &paths.pty_log())?;
    write_pid(&paths.pty_pid(), pid)?;
    wait_started("pty host", pid, &paths.pty_log(), READY_TIMEOUT, || {
        pty_status(&paths.pty_socket()).is_some()
    })
    .map_err(|err| {
        // It never ran: nothing is dead, nothing to stop.
        let _ = std::fs::remove_file(paths.pty_pid());
        Failure::Refused.because(format!("agent `{}`: {err:#}", spec.name))
    })?;
    Ok(pid)
}

/// Starts the sidecar of `spec` and waits until it answers with the
/// declaration's fingerprint; returns its pid.
pub fn start_sidecar(
    exe: &Path,
    spec: &AgentSpec,
    declaration: &Path,
    paths: &AgentPaths,
) -> Result<u32> {
    let args: Vec<OsString> = vec![
        "sidecar".into(),
        declaration.into(),
        "--agent".into(),
        spec.name.clone().into(),
    ];
    let pid = spawn_detached(exe, &args, &[], &paths.sidecar_log())?;
    let fingerprint = spec.fingerprint();
    wait_started("sidecar", pid, &paths.sidecar_log(), READY_TIMEOUT, || {
        query_status(&paths.sidecar_socket()).is_ok_and(|status| status.fingerprint == fingerprint)
    })
    .map_err(|err| Failure::Refused.because(format!("agent `{}`: {err:#}", spec.name)))?;
    Ok(pid)
}

/// Waits until the harness the host at `paths` just started has run for
/// [`START_GRACE`], and returns its state then. One that exits sooner is a
/// failed start: the error says how it ended and what its screen said last
/// (where a harness prints why it gave up), escaped.
pub fn await_started(name: &str, paths: &AgentPaths) -> Result<Harness> {
    let mut last = Harness::Unknown;
    let settled = wait_for(START_GRACE + READY_TIMEOUT, POLL_EVERY, || {
        last = pty_status(&paths.pty_socket())
            .as_ref()
            .map_or(Harness::Unknown, Harness::of);
        match last {
            Harness::Running { .. } => Some(Ok(last)),
            ended if ended.has_ended() => Some(Err(Failure::Refused.because(format!(
                "agent `{}`: the harness {} within {} ms of starting{}",
                name,
                ended.end().unwrap_or_default(),
                START_GRACE.as_millis(),
                screen_tail(&paths.pty_socket())
            )))),
            _ => None,
        }
    });
    // Neither running nor ended by the deadline: the state as last seen.
    settled.unwrap_or(Ok(last))
}

/// The last non-empty lines of the screen, as `\n  its screen ended
/// with:\n    | LINE...`, escaped; empty when the screen is blank.
pub fn screen_tail(socket: &Path) -> String {
    let Ok(mut client) = crate::pty::client::Client::connect(socket) else {
        return String::new();
    };
    client.set_timeout(Some(Duration::from_secs(3)));
    let Ok(snapshot) = client.snapshot() else {
        return String::new();
    };
    let rows: Vec<&String> = snapshot
        .rows
        .iter()
        .filter(|row| !row.trim().is_empty())
        .collect();
    if rows.is_empty() {
        return "\n  (its screen is blank)".into();
    }
    let tail = &rows[rows.len().saturating_sub(8)..];
    let mut text = String::from("\n  its screen ended with:");
    for row in tail {
        text.push_str("\n    | ");
        text.push_str(&crate::escape::escape(row.trim_end()));
    }
    text
}

/// Restarts the harness of the PTY host at `socket`; returns the new
/// incarnation. The host refuses a restart while input is in flight (a
/// delivery takes at most 5 s, and may queue behind another), so a busy
/// host is asked again until it has landed.
pub fn restart_harness(socket: &Path) -> Result<String> {
    let mut busy = None;
    let restarted = wait_for(READY_TIMEOUT, RETRY_EVERY, || {
        let mut client = match crate::pty::client::Client::connect(socket) {
            Ok(client) => client,
            Err(err) => return Some(Err(err)),
        };
        // The host answers once the old harness is reaped (SIGKILL after 2 s).
        client.set_timeout(Some(Duration::from_secs(10)));
        match client.restart() {
            Ok((incarnation, _)) => Some(Ok(incarnation)),
            Err(err)
                if err
                    .downcast_ref::<crate::pty::client::HostError>()
                    .is_some_and(|host| host.kind == crate::pty::wire::ErrorKind::Busy) =>
            {
                busy = Some(err);
                None
            }
            Err(err) => Some(Err(err.context("restart the harness"))),
        }
    });
    // Busy until the deadline: the host's last answer says so.
    restarted.unwrap_or_else(|| {
        let err = busy.unwrap_or_else(|| anyhow::anyhow!("the pty host stayed busy"));
        Err(err.context("restart the harness"))
    })
}
