//! `ding-eval`: the evaluation's own binary, apart from the `ding` that
//! users install. It holds what only the evaluation and the real-harness
//! tests need: the loopback model servers, the harnesses' scratch homes,
//! and the A/B runner with its typist. `ding` holds only what runs agents
//! (this code is not linked into it: nothing of `ding` reaches it).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::ValueExt;

use ding::cli::exit::exit_code_of;
use ding::cli::help::{help_asked, help_command};

pub mod harness_env;
pub mod model_server;
pub mod run;
pub mod trial;
pub mod type_line;

const USAGE: &str = "\
ding-eval: the A/B evaluation of DING on real harnesses, and its parts

Usage: ding-eval <COMMAND> [ARGS]
       ding-eval help [COMMAND]

Commands:
  run           the A/B evaluation (`make eval`; docs/evaluation.md)
  model-server  a scripted loopback model server in a harness's wire format
  harness-env   prepare a scratch home in which a real harness talks to it
  trial         one trial of one row and arm, its facts as JSON
  type          the typist types one line into an agent's terminal
  help          print this help, or a command's

Run `ding-eval help COMMAND` (or `ding-eval COMMAND --help`) for a
command's options. The trials drive the `ding` next to this binary
(`run --ding PATH` another).
";

/// Every command `ding-eval help COMMAND` knows.
pub const COMMANDS: &[&str] = &["run", "model-server", "harness-env", "trial", "type"];

/// Runs the command line and turns its outcome into an exit code.
pub fn main() -> ExitCode {
    exit_code_of("ding-eval", dispatch_args())
}

fn dispatch_args() -> Result<ExitCode> {
    let mut parser = lexopt::Parser::from_env();
    let command = match parser.next()? {
        Some(lexopt::Arg::Value(value)) => value.string()?,
        Some(arg) => {
            if help_asked(&arg, USAGE, USAGE)? {
                return Ok(ExitCode::SUCCESS);
            }
            bail!(
                "{}\nRun `ding-eval --help` for the list of commands",
                arg.unexpected()
            )
        }
        None => {
            write!(std::io::stdout(), "{USAGE}")?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    if command == "help" {
        return help_command("ding-eval", USAGE, COMMANDS, &mut parser, dispatch);
    }
    dispatch(&command, &mut parser)
}

fn dispatch(command: &str, parser: &mut lexopt::Parser) -> Result<ExitCode> {
    match command {
        "run" => run::run(parser),
        "model-server" => model_server::run(parser),
        "harness-env" => harness_env::run(parser),
        "trial" => trial::run(parser),
        "type" => type_line::run(parser),
        other => {
            bail!("unknown command `{other}`\nRun `ding-eval --help` for the list of commands")
        }
    }
}
