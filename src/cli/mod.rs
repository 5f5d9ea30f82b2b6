//! The `ding` command line: subcommand dispatch and hand-written help.
//!
//! Each subcommand lives in its own file and exposes `run(parser) -> Result<ExitCode>`.
//! Errors print their whole anyhow chain and exit 2; a broken pipe on stdout is
//! success, as in ripgrep, because `ding status | head` is a normal thing to do.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::ValueExt;

pub mod agent_decl;
pub mod archive;
pub mod attach;
pub mod check;
pub mod demo_adapter;
pub mod demo_agent;
pub mod down;
pub mod eval_harness_env;
pub mod eval_model_server;
pub mod eval_run;
pub mod hook;
pub mod inbox_target;
pub mod intervene;
pub mod pty;
pub mod send;
pub mod sidecar;
pub mod status;
pub mod up;

const USAGE: &str = "\
ding: deliver durable inbox work to terminal agents, safely

Usage: ding <COMMAND> [ARGS]

Commands:
  up          start (or adopt) an agent's PTY host and sidecar
  down        stop an agent's sidecar and PTY host
  status      show why each unread message is where it is
  send        deliver a message to an agent's inbox, durably
  archive     mark messages done: move them from new/ to archive/
  attach      attach this terminal to a running `ding pty`
  intervene   type supervisor input into an agent's terminal now
  check       validate agent declarations, print their fingerprints
  hook        relay a harness hook call to the agent's adapter
  sidecar     run one agent's DING sidecar in the foreground
  pty         run a command in the reference PTY host
  help        print this help

Run `ding <COMMAND> --help` for a command's options.
";

/// Runs the command line and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("ding: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut parser = lexopt::Parser::from_env();
    let command = match parser.next()? {
        Some(lexopt::Arg::Value(value)) => value.string()?,
        Some(lexopt::Arg::Short('h')) | Some(lexopt::Arg::Long("help")) | None => {
            write!(std::io::stdout(), "{USAGE}")?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(other) => bail!("{}", other.unexpected()),
    };
    match command.as_str() {
        "check" => check::run(&mut parser),
        "send" => send::run(&mut parser),
        "archive" => archive::run(&mut parser),
        "sidecar" => sidecar::run(&mut parser),
        "status" => status::run(&mut parser),
        "up" => up::run(&mut parser),
        "down" => down::run(&mut parser),
        "intervene" => intervene::run(&mut parser),
        "pty" => pty::run(&mut parser),
        "attach" => attach::run(&mut parser),
        "hook" => hook::run(&mut parser),
        // Hidden: the bundled demo agent and adapter that `make demo` runs.
        "demo-agent" => demo_agent::run(&mut parser),
        "demo-adapter" => demo_adapter::run(&mut parser),
        // Hidden: the loopback model server and the harness homes that the
        // real-harness tests and the evaluation use.
        "eval-model-server" => eval_model_server::run(&mut parser),
        "eval-harness-env" => eval_harness_env::run(&mut parser),
        // Hidden: the A/B evaluation on the real harnesses (`make eval`).
        "eval-run" => eval_run::run(&mut parser),
        "help" => {
            write!(std::io::stdout(), "{USAGE}")?;
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command `{other}`\nRun `ding --help` for the list of commands"),
    }
}

/// Prints a subcommand's help if `arg` asks for it (`-h` the short text,
/// `--help` the long one) and says whether it did. It writes rather than
/// `print!`s, so a closed stdout is an error (a broken pipe, success for
/// `main`) instead of a panic.
pub fn help_asked(arg: &lexopt::Arg<'_>, short: impl Display, long: impl Display) -> Result<bool> {
    let mut out = std::io::stdout();
    match arg {
        lexopt::Arg::Short('h') => write!(out, "{short}")?,
        lexopt::Arg::Long("help") => write!(out, "{long}")?,
        _ => return Ok(false),
    }
    Ok(true)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
