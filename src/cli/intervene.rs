//! `ding intervene NAME TEXT`: explicit supervisor input.
//!
//! This is not DING delivery: it bypasses every policy and goes through the
//! PTY host's unconditional `send`, which logs it as an intervention. Use it
//! to answer a dialog or unstick an agent by hand.

use std::process::ExitCode;

use std::io::Write;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_state::known_agent;
use super::exit::Failure;
use super::help::help_asked;
use crate::pty::client::Client;
use crate::pty::transport::WireStep;

const HELP: &str = "\
Usage: ding intervene NAME TEXT [--no-enter]

Type TEXT into the agent's terminal now, followed by Return, whatever the
agent is doing. Logged by the PTY host as an intervention, never as DING
delivery.

  --no-enter   type TEXT without pressing Return
  -h, --help   this help

Exit status: 0 typed, 3 no PTY host answers, 4 no agent NAME ever ran here.
";

/// The pause before Return, longer than paste-burst Enter suppression.
const ENTER_DELAY_MS: u64 = 200;

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let (mut name, mut text, mut enter) = (None, None, true);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Arg::Long("no-enter") => enter = false,
            Arg::Value(value) if name.is_none() => name = Some(value.string()?),
            Arg::Value(value) if text.is_none() => text = Some(value.string()?),
            other => bail!("{}\nRun `ding intervene -h` for usage", other.unexpected()),
        }
    }
    let (Some(name), Some(text)) = (name, text) else {
        bail!("`ding intervene` needs an agent name and a text\nUsage: ding intervene NAME TEXT");
    };
    let paths = known_agent(&name)?;
    let mut steps = vec![WireStep::Write(text.into_bytes())];
    if enter {
        steps.push(WireStep::WaitMs(ENTER_DELAY_MS));
        steps.push(WireStep::Write(b"\r".to_vec()));
    }
    let mut client = Client::connect(&paths.pty_socket()).map_err(|err| {
        Failure::NotRunning.because(format!(
            "the pty host of agent `{name}` does not answer ({err:#})\nhint: `ding status {name}` says why"
        ))
    })?;
    let (revision, written) = client.send(&steps)?;
    writeln!(
        std::io::stdout(),
        "{name}: intervention of {written} bytes written (revision {revision})"
    )?;
    Ok(ExitCode::SUCCESS)
}
