//! `ding adapter codex launch [--ding P] [--idle-path native|terminal] --
//! CODEX [ARGS...]`: the harness command of a Codex agent, run by the PTY
//! host (so everything it starts carries the `DING_*` identity and dies with
//! the PTY host's process group).
//!
//! * **native** (the default): starts Codex's own `app-server` on
//!   `$DING_RUNTIME_DIR/codex.sock` with DING's hooks and their trust
//!   (`trust::config_args`) and the user's `-c`/`-p`/`--enable`/`--disable`
//!   arguments, waits for the socket, runs the TUI as `CODEX --remote
//!   unix://SOCKET ARGS...` on the terminal, and meanwhile drives the
//!   native idle path (`native/`) as a second client of the app-server,
//!   from one thread around one poll loop (`shell.rs`). Hooks run in the
//!   app-server, so it is started here, under the PTY host. When the TUI
//!   exits, DING's leftover queue items are deleted and the app-server is
//!   ended by its pid; the exit status is the TUI's. An app-server that
//!   dies under the TUI is started again on the same socket (the TUI
//!   reconnects to it) while the thread has a turn to resume, at most
//!   `SERVER_RESTARTS` times; otherwise the TUI is ended and the launcher
//!   exits with status 1 (`native::after_server_lost`).
//! * **terminal**: tells the adapter which hooks it declares, then becomes
//!   `CODEX HOOK-ARGS ARGS...` (embedded: the TUI runs the hooks itself).
//!   Any `-c` argument also keeps Codex from starting its shared daemon.
//!
//! Nothing the launcher says goes to the terminal (the TUI owns it): its
//! log is `$DING_RUNTIME_DIR/codex-launch.log`, the app-server's
//! `codex-app-server.log` beside it.
//!
//! * `app_server`: the app-server process: started, started again, ended.
//! * `link`: the WebSocket to it (`tungstenite` over a non-blocking socket).
//! * `hook_calls`: the calls on the adapter's hook channel.
//! * `shell`: the poll loop that moves bytes between them and the machine.
//! * `log`: the launcher's own log.

mod app_server;
mod hook_calls;
mod link;
mod log;
mod shell;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use anyhow::{Context, Result, bail};

use super::hooks::LAUNCH;
use super::timing::LAUNCH_CALL_TIMEOUT;
use super::trust::{PROVIDER, config_args, declared_events};
use crate::adapter::compile::IdlePath;
use crate::adapter::native_idle::wire::{LaunchMode, LaunchReport};
use crate::adapter::relay;
use crate::signals::{read_through_signalfd, start_clean};
use crate::wait::{RETRY_EVERY, wait_for};
use app_server::AppServer;
use log::Log;
use nix::sys::signal::Signal;

/// The app-server's socket, in the agent's runtime directory.
pub const SOCKET_NAME: &str = "codex.sock";

/// What the launcher was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRequest {
    pub ding: String,
    pub native: bool,
    pub program: String,
    pub args: Vec<String>,
}

/// Parses `launch`'s arguments.
pub fn parse(args: Vec<OsString>) -> Result<LaunchRequest> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut ding = None;
    let mut native = true;
    let mut argv = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("ding") => ding = Some(parser.value()?.string()?),
            Long("idle-path") => {
                native = IdlePath::parse(&parser.value()?.string()?)? == IdlePath::Native
            }
            Value(value) => argv.push(value.string()?),
            other => bail!("{}", other.unexpected()),
        }
        if !argv.is_empty() {
            for value in parser.raw_args()? {
                argv.push(value.string()?);
            }
        }
    }
    let Some((program, args)) = argv.split_first() else {
        bail!(
            "usage: ding adapter codex launch [--ding P] [--idle-path native|terminal] -- CODEX [ARGS...]"
        );
    };
    // By default the hooks run this very `ding`, by its path: they then
    // find it whatever PATH Codex gives its hooks.
    let ding = ding.unwrap_or_else(crate::ding_binary::ding_program);
    Ok(LaunchRequest {
        ding,
        native,
        program: program.clone(),
        args: args.to_vec(),
    })
}

/// The user's arguments that configure Codex (for the app-server as well
/// as the TUI): `-c`/`--config K=V`, `-p`/`--profile P`, `--enable F`,
/// `--disable F`.
pub fn config_of(args: &[String]) -> Vec<String> {
    const WITH_VALUE: [&str; 6] = ["-c", "--config", "-p", "--profile", "--enable", "--disable"];
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if WITH_VALUE.contains(&word.as_str()) {
            if let Some(value) = words.next() {
                out.extend([word.clone(), value.clone()]);
            }
        } else if WITH_VALUE
            .iter()
            .any(|flag| flag.starts_with("--") && word.starts_with(&format!("{flag}=")))
        {
            out.push(word.clone());
        }
    }
    out
}

/// `ding adapter codex launch ...`.
pub fn main(args: Vec<OsString>) -> Result<()> {
    let request = parse(args)?;
    let runtime = runtime_dir()?;
    let mut log = Log::open(&runtime.join("codex-launch.log"));
    if !request.native {
        return embedded(&request, &mut log);
    }
    let status = native(&request, &runtime, log)?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The agent's runtime directory, else a private one of the launcher's.
fn runtime_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("DING_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let template = std::env::temp_dir().join("ding-codex-XXXXXX");
    nix::unistd::mkdtemp(&template).context("create a private directory for the app-server socket")
}

/// The terminal path: report the hooks, then become Codex.
fn embedded(request: &LaunchRequest, log: &mut Log) -> Result<()> {
    let hooks = config_args(&request.ding);
    let report = LaunchReport {
        mode: LaunchMode::Embedded,
        declared: Some(declared_events(&hooks)),
        error: None,
    };
    tell_adapter(&relay::socket_from_env(), &report, log);
    let err = Command::new(&request.program)
        .args(&hooks)
        .args(&request.args)
        .exec();
    Err(err).with_context(|| format!("run {}", request.program))
}

/// The native path: app-server, TUI, and the loop between them and the
/// adapter. Returns the TUI's exit status.
fn native(request: &LaunchRequest, runtime: &Path, mut log: Log) -> Result<ExitStatus> {
    // Before any child: SIGCHLD is read through the signalfd from here on
    // (the children start with it unblocked: `start_clean`).
    let signals = read_through_signalfd(&[Signal::SIGCHLD])?;
    let socket = runtime.join(SOCKET_NAME);
    let mut argv = vec![
        request.program.clone(),
        "app-server".into(),
        "--listen".into(),
        format!("unix://{}", socket.display()),
    ];
    argv.extend(config_args(&request.ding));
    argv.extend(config_of(&request.args));
    let url = argv[3].clone();
    let server_log = runtime.join("codex-app-server.log");
    let mut server = AppServer::start(argv, socket, server_log, &mut log)?;
    let mut command = Command::new(&request.program);
    command.args(["--remote", &url]).args(&request.args);
    let tui = match start_clean(&mut command).spawn() {
        Ok(tui) => tui,
        Err(err) => {
            server.end_all();
            return Err(err).with_context(|| format!("start {} --remote", request.program));
        }
    };
    let cwd = std::env::current_dir()
        .map(|dir| dir.to_string_lossy().into_owned())
        .unwrap_or_default();
    shell::Shell::new(tui, server, signals, log, cwd)?.run()
}

/// One `launch` call, answered at once, from the embedded path (it becomes
/// Codex right after). The sidecar may start the adapter a moment after
/// the PTY host started the launcher: a hook channel not there yet is
/// waited for, briefly.
fn tell_adapter(hook_socket: &Option<PathBuf>, report: &LaunchReport, log: &mut Log) {
    let Some(socket) = hook_socket else {
        return;
    };
    let payload = serde_json::to_value(report).unwrap_or_default();
    let mut absent = None;
    let answered = wait_for(LAUNCH_CALL_TIMEOUT, RETRY_EVERY, || {
        let call = relay::call(
            socket,
            PROVIDER,
            LAUNCH,
            payload.clone(),
            false,
            LAUNCH_CALL_TIMEOUT,
        );
        match call {
            Err(failure @ relay::RelayFailure::Connect(_)) => {
                absent = Some(failure);
                None
            }
            other => Some(other),
        }
    });
    if let Some(failure) = answered.map_or(absent, Result::err) {
        log.line(&format!(
            "the adapter did not take the launch call: {failure:?}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<OsString> {
        text.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn the_codex_argv_follows_the_options_untouched() {
        let request = parse(words(
            "--ding /opt/ding -- codex -c model=\"x\" --no-alt-screen",
        ))
        .expect("parse");
        assert_eq!(request.ding, "/opt/ding");
        assert!(request.native);
        assert_eq!(request.program, "codex");
        assert_eq!(request.args, ["-c", "model=\"x\"", "--no-alt-screen"]);
        let terminal = parse(words("--idle-path terminal codex --help")).expect("parse");
        assert!(!terminal.native);
        assert_eq!(
            (terminal.program.as_str(), terminal.args.as_slice()),
            ("codex", &["--help".to_string()][..])
        );
        assert!(parse(words("--idle-path")).is_err());
        assert!(parse(Vec::new()).is_err());
    }

    #[test]
    fn configuration_arguments_go_to_the_app_server_too() {
        let args: Vec<String> = [
            "-c",
            "a=1",
            "--no-alt-screen",
            "-p",
            "work",
            "--enable=x",
            "--disable",
            "y",
            "prompt",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            config_of(&args),
            ["-c", "a=1", "-p", "work", "--enable=x", "--disable", "y"]
        );
    }
}
