//! The `ding` command line: subcommand dispatch and hand-written help.
//!
//! Each subcommand lives in its own file and exposes `run(parser) -> Result<ExitCode>`.
//! Errors print their whole anyhow chain, made displayable, and exit with the code of the
//! table in [`exit`]; a broken pipe on stdout is success, as in ripgrep, because
//! `ding status | head` is a normal thing to do.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::ValueExt;

mod adapter;
mod adapter_check;
mod agent_decl;
pub mod agent_state;
pub mod agent_status;
mod archive;
mod attach;
mod check;
mod compile_agent;
mod demo_adapter;
mod demo_agent;
mod down;
pub mod exit;
mod fleet;
pub mod help;
mod hook;
mod hooks;
mod inbox_target;
mod intervene;
mod launch;
mod logs;
mod ls;
mod pty;
mod remote;
mod restart;
mod send;
mod sidecar;
mod snapshot;
pub mod status;
mod status_pages;
pub mod supervise;
mod systemd_unit;
mod up;

const USAGE: &str = "\
ding: deliver durable inbox work to terminal agents, safely

Usage: ding <COMMAND> [ARGS]
       ding --version | -V
       ding help [COMMAND]

Commands:
  up          start (or adopt) the agents of a declaration
  down        stop an agent's sidecar and PTY host
  restart     restart an agent's harness (a new incarnation)
  status      show why each unread message is where it is
  ls          list every agent: harness, sidecar, unread, held
  send        deliver a message to an agent's inbox, durably
  archive     mark messages done: move them from new/ to archive/
  attach      attach this terminal to an agent's terminal
  snapshot    print an agent's screen as text
  logs        print (or follow) an agent's logs
  intervene   type supervisor input into an agent's terminal now
  check       validate agent declarations, print their fingerprints
  systemd-unit  print a systemd user unit that keeps an agent up
  hook        relay a harness hook call to the agent's adapter
  hooks       install the adapter launchers into a $ST_HOOKS directory
  compile-agent  write a real harness's declaration and hook configuration
  adapter     run a provider's DING adapter (the sidecar starts it)
  sidecar     run one agent's DING sidecar in the foreground
  pty         run a command in the reference PTY host
  demo-agent  the bundled demo agent: a small TUI to try DING on
  demo-adapter  the demo agent's adapter (the sidecar starts it)
  help        print this help, or a command's

Run `ding help COMMAND` (or `ding COMMAND --help`) for a command's options.
Exit status: 0 success, 1 refused or failed, 2 usage or unexpected error,
3 not running, 4 unknown agent (see docs/sidecar.md).
";

/// `ding --version`: the crate version and the commit it was built from
/// (`build.rs` embeds it; `unknown` outside a git checkout).
pub const VERSION: &str = concat!(
    "ding ",
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("DING_COMMIT"),
    ")"
);

/// Runs the command line and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    exit::exit_code_of("ding", run())
}

fn run() -> Result<ExitCode> {
    let mut parser = lexopt::Parser::from_env();
    let command = match parser.next()? {
        Some(lexopt::Arg::Value(value)) => value.string()?,
        Some(lexopt::Arg::Short('h')) | Some(lexopt::Arg::Long("help")) | None => {
            write!(std::io::stdout(), "{USAGE}")?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(lexopt::Arg::Short('V')) | Some(lexopt::Arg::Long("version")) => {
            writeln!(std::io::stdout(), "{VERSION}")?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(other) => bail!(
            "{}\nRun `ding --help` for the list of commands",
            other.unexpected()
        ),
    };
    if command == "help" {
        return help::help_command("ding", USAGE, COMMANDS, &mut parser, dispatch);
    }
    dispatch(&command, &mut parser)
}

/// Every command `ding help COMMAND` knows.
pub const COMMANDS: &[&str] = &[
    "up",
    "down",
    "restart",
    "status",
    "ls",
    "send",
    "archive",
    "attach",
    "snapshot",
    "logs",
    "intervene",
    "check",
    "systemd-unit",
    "hook",
    "hooks",
    "compile-agent",
    "adapter",
    "sidecar",
    "pty",
    "demo-agent",
    "demo-adapter",
];

fn dispatch(command: &str, parser: &mut lexopt::Parser) -> Result<ExitCode> {
    match command {
        "check" => check::run(parser),
        "send" => send::run(parser),
        "archive" => archive::run(parser),
        "sidecar" => sidecar::run(parser),
        "status" => status::run(parser),
        "ls" => ls::run(parser),
        "restart" => restart::run(parser),
        "snapshot" => snapshot::run(parser),
        "logs" => logs::run(parser),
        "systemd-unit" => systemd_unit::run(parser),
        "up" => run_up(parser),
        "down" => down::run(parser),
        "intervene" => intervene::run(parser),
        "pty" => pty::run(parser),
        "attach" => attach::run(parser),
        "hook" => hook::run(parser),
        "hooks" => hooks::run(parser),
        "compile-agent" => compile_agent::run(parser),
        "adapter" => adapter::run(parser),
        "demo-agent" => demo_agent::run(parser),
        "demo-adapter" => demo_adapter::run(parser),
        other => bail!("unknown command `{other}`\nRun `ding --help` for the list of commands"),
    }
}

/// `ding up`: each declared agent started once, or, with `--foreground`,
/// started and kept running by the supervisor. Dispatched here, so that
/// neither of the two files imports the other.
fn run_up(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = up::parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let (declaration, specs) = agent_decl::load_agents(&options.declaration, &options.agents)?;
    if options.foreground {
        supervise::run(&declaration, &specs, &options)
    } else {
        up::start_all(&declaration, &specs, &options)
    }
}
