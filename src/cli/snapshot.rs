//! `ding snapshot NAME`: the agent's screen as text, now.
//!
//! The screen is the harness's to draw, so every row is printed by the one
//! escape rule (`crate::escape`): a control or escape sequence the harness
//! (or text it shows) put there never reaches the reader's terminal.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_state::known_agent;
use super::exit::Failure;
use super::help::help_asked;
use crate::escape::escape;
use crate::pty::client::Client;
use crate::sidecar::escaped_json::to_json;

const HELP: &str = "\
Usage: ding snapshot NAME [--json]

Print the agent's screen as text, one line per row (trailing blanks
trimmed), as a terminal draws it: what a terminal would act on or hide
(controls, bidi and other invisible formatting, line and paragraph
separators, spaces other than the ASCII one) and the backslash itself are
escaped as \\u{hex}; every other character prints as itself.

  --json       print the PTY host's whole snapshot (rows, cursor, styled
               runs, revision) as escaped JSON
  -h, --help   this help

Exit status: 0 printed, 3 no PTY host answers, 4 no agent NAME ever ran here.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let (mut name, mut as_json) = (None, false);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Long("json") => as_json = true,
            Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            other => bail!("{}\nUsage: ding snapshot NAME [--json]", other.unexpected()),
        }
    }
    let Some(name) = name else {
        bail!("`ding snapshot` needs an agent name\nUsage: ding snapshot NAME [--json]");
    };
    let paths = known_agent(&name)?;
    let snapshot = Client::connect(&paths.pty_socket())
        .and_then(|mut client| {
            client.set_timeout(Some(Duration::from_secs(5)));
            client.snapshot()
        })
        .map_err(|err| {
            Failure::NotRunning.because(format!(
                "the pty host of agent `{name}` does not answer ({err:#})\nhint: `ding status {name}` says why; `ding up AGENT.kdl` starts it"
            ))
        })?;
    let mut out = std::io::stdout().lock();
    if as_json {
        writeln!(out, "{}", to_json(&snapshot)?)?;
    } else {
        for row in &snapshot.rows {
            writeln!(out, "{}", escape(row.trim_end()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
