//! `ding up AGENT.kdl`: start (or adopt) an agent's PTY host and sidecar.
//!
//! Both run in the background in their own sessions, with logs in the
//! agent's runtime directory. What already runs is adopted, never restarted
//! behind the user's back: a sidecar whose fingerprint differs from the
//! declaration is reported as drift, field by field, and only `--replace`
//! restarts it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use std::io::Write;

use anyhow::{Context, Result, bail};
use lexopt::{Arg, ValueExt};
use serde_json::Value;

use super::agent_decl::load_agent;
use super::help_asked;
use crate::decl::{AgentSpec, FingerprintInput, drift, expand_argv_from_env};
use crate::pty::client::Client;
use crate::sidecar::adapter_group;
use crate::sidecar::control::{
    live_pid, query_status, spawn_detached, spawn_detached_with, stop, wait_started, write_pid,
};
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::runtime::STOP_WITHIN;

const HELP: &str = "\
Usage: ding up AGENT.kdl [--agent NAME] [--replace]

Start the declared agent: its harness in a PTY host, then its DING sidecar,
both in the background. If they already run they are adopted: a sidecar
whose declaration changed is reported as drift and left running.

  --agent NAME   the agent to start (needed if the file declares several)
  --replace      restart the sidecar even if it runs (applies drift)
  -h, --help     this help
";

/// How long `ding up` waits for each process to answer.
const READY_TIMEOUT: Duration = Duration::from_secs(15);

struct Options {
    declaration: PathBuf,
    agent: Option<String>,
    replace: bool,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let (mut declaration, mut agent, mut replace) = (None, None, false);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("agent") => agent = Some(parser.value()?.string()?),
            Arg::Long("replace") => replace = true,
            Arg::Value(value) if declaration.is_none() => declaration = Some(PathBuf::from(value)),
            other => bail!("{}\nRun `ding up -h` for usage", other.unexpected()),
        }
    }
    let Some(declaration) = declaration else {
        bail!(
            "`ding up` needs a declaration file\nUsage: ding up AGENT.kdl [--agent NAME] [--replace]"
        );
    };
    Ok(Some(Options {
        declaration,
        agent,
        replace,
    }))
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let declaration = std::fs::canonicalize(&options.declaration)
        .with_context(|| format!("cannot open {}", options.declaration.display()))?;
    let spec = load_agent(&declaration, options.agent.as_deref())?;
    let paths = AgentPaths::resolve(&spec.name, &DirsEnv::from_process())?;
    paths.ensure_runtime_dir()?;
    paths.ensure_state_dir()?;
    let exe = std::env::current_exe().context("locate the ding binary")?;

    let pty = ensure_pty_host(&exe, &spec, &paths)?;
    let sidecar = ensure_sidecar(&exe, &declaration, &spec, &paths, options.replace)?;
    writeln!(std::io::stdout(), "agent {}: {pty}; {sidecar}", spec.name)?;
    writeln!(
        std::io::stdout(),
        "  policy     {}",
        spec.ding.policy.token()
    )?;
    writeln!(std::io::stdout(), "  inbox      {}", spec.inbox.display())?;
    writeln!(
        std::io::stdout(),
        "  pty        {} (log {})",
        paths.pty_socket().display(),
        paths.pty_log().display()
    )?;
    writeln!(
        std::io::stdout(),
        "  sidecar    {} (log {})",
        paths.sidecar_socket().display(),
        paths.sidecar_log().display()
    )?;
    writeln!(
        std::io::stdout(),
        "  next       ding attach {0}   ding status {0}   ding send {0} FILE   ding down {0}",
        spec.name
    )?;
    Ok(ExitCode::SUCCESS)
}

fn pty_answers(socket: &Path) -> bool {
    Client::connect(socket)
        .and_then(|mut client| client.status())
        .is_ok()
}

/// Starts the PTY host running the declared harness, unless one answers.
fn ensure_pty_host(exe: &Path, spec: &AgentSpec, paths: &AgentPaths) -> Result<&'static str> {
    if live_pid(&paths.pty_pid()).is_some() && pty_answers(&paths.pty_socket()) {
        return Ok("pty host adopted");
    }
    let Some(command) = &spec.command else {
        bail!(
            "agent `{}` declares no `command`, so there is no harness to launch\nhint: add `command \"prog\" \"arg\"...` to its agent block",
            spec.name
        );
    };
    let argv = expand_argv_from_env(command)?;
    let host = nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "localhost".into());
    let mut args: Vec<OsString> = vec![
        "pty".into(),
        "--socket".into(),
        paths.pty_socket().into(),
        "--session".into(),
        format!("{host}.{}", spec.name).into(),
        "--cwd".into(),
        spec.cwd.clone().into(),
        "--inbox".into(),
        spec.inbox.clone().into(),
        "--runtime-dir".into(),
        paths.runtime_dir().into(),
    ];
    // `ding archive NAME FILE` run inside the harness finds its inbox by these.
    args.push("--env".into());
    args.push(format!("DING_AGENT={}", spec.name).into());
    // Declared values travel in the host's environment, named in its argv:
    // `ps` shows every user the argv, never another user's environment.
    let env: Vec<(String, String)> = spec.env.clone().into_iter().collect();
    for (key, _) in &env {
        args.push("--pass-env".into());
        args.push(key.into());
    }
    args.push("--".into());
    args.extend(argv);
    let pid = spawn_detached_with(exe, &args, &env, &paths.pty_log())?;
    write_pid(&paths.pty_pid(), pid)?;
    wait_started("pty host", pid, &paths.pty_log(), READY_TIMEOUT, || {
        pty_answers(&paths.pty_socket())
    })?;
    Ok("pty host started")
}

/// Starts the sidecar, or adopts a running one and reports drift.
fn ensure_sidecar(
    exe: &Path,
    declaration: &Path,
    spec: &AgentSpec,
    paths: &AgentPaths,
    replace: bool,
) -> Result<String> {
    if let Some(pid) = live_pid(&paths.sidecar_pid()) {
        let status = query_status(&paths.sidecar_socket()).ok();
        let running: Option<FingerprintInput> = status
            .as_ref()
            .and_then(|status| serde_json::from_value(status["fingerprintInput"].clone()).ok());
        let fields = running
            .map(|running| drift(&running, &spec.fingerprint_input()))
            .unwrap_or_default();
        if !replace {
            if status.is_none() {
                return Ok(format!(
                    "sidecar adopted, but it does not answer on {} (fingerprint not checked; see {})",
                    paths.sidecar_socket().display(),
                    paths.sidecar_log().display()
                ));
            }
            if fields.is_empty() {
                return Ok("sidecar adopted (fingerprint matches)".into());
            }
            let mut report =
                String::from("sidecar adopted with DRIFT, not restarted (use --replace):");
            for field in fields {
                report.push_str(&format!(
                    "\n    {}: running {} -> declared {}",
                    field.field, field.old, field.new
                ));
            }
            return Ok(report);
        }
        stop(pid, Duration::from_secs(STOP_WITHIN.as_secs() + 1));
    }
    // No sidecar runs now: an adapter a killed one left behind would act
    // beside the new one's.
    adapter_group::end_orphaned(paths);
    let args: Vec<OsString> = vec![
        "sidecar".into(),
        declaration.into(),
        "--agent".into(),
        spec.name.clone().into(),
    ];
    let pid = spawn_detached(exe, &args, &paths.sidecar_log())?;
    wait_started("sidecar", pid, &paths.sidecar_log(), READY_TIMEOUT, || {
        query_status(&paths.sidecar_socket())
            .is_ok_and(|status: Value| status["fingerprint"] == spec.fingerprint())
    })?;
    Ok(if replace {
        "sidecar replaced".into()
    } else {
        "sidecar started".into()
    })
}
