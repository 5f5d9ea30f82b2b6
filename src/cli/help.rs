//! Help as every command prints it, for both binaries (`ding` and
//! `ding-eval`): `-h` and `--help`, `BINARY help COMMAND`, and the commands
//! that take one agent name.

use std::fmt::Display;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::ValueExt;

/// `BINARY help [COMMAND]`: the top-level `usage`, or COMMAND's long help
/// (what `dispatch` prints for `COMMAND --help`).
pub fn help_command(
    binary: &str,
    usage: &str,
    commands: &[&str],
    parser: &mut lexopt::Parser,
    dispatch: fn(&str, &mut lexopt::Parser) -> Result<ExitCode>,
) -> Result<ExitCode> {
    match parser.next()? {
        None => {
            write!(std::io::stdout(), "{usage}")?;
            Ok(ExitCode::SUCCESS)
        }
        Some(lexopt::Arg::Value(command)) => {
            let command = command.string()?;
            if !commands.contains(&command.as_str()) {
                bail!("unknown command `{command}`\nRun `{binary} help` for the list of commands");
            }
            dispatch(&command, &mut lexopt::Parser::from_args(["--help"]))
        }
        Some(other) => bail!("{}\nUsage: {binary} help [COMMAND]", other.unexpected()),
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

/// The one argument of a command that takes an agent NAME and nothing
/// else (`ding down`, `ding restart`); `None` when help was printed.
pub fn only_agent_name(
    parser: &mut lexopt::Parser,
    help: &str,
    usage: &str,
) -> Result<Option<String>> {
    let mut name = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, help, help)? {
            return Ok(None);
        }
        match arg {
            lexopt::Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            other => bail!("{}\n{usage}", other.unexpected()),
        }
    }
    match name {
        Some(name) => Ok(Some(name)),
        None => bail!("an agent name is needed\n{usage}"),
    }
}
