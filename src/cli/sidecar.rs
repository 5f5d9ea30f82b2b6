//! `ding sidecar`: run one agent's DING sidecar in the foreground.
//!
//! Normally `ding up` starts it in the background; running it by hand is for
//! debugging and for supervisors that manage processes themselves.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::agent_decl::load_agent;
use super::help::help_asked;
use crate::sidecar::log::LogFormat;
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::runtime::{self, SidecarOptions};

const HELP: &str = "\
Usage: ding sidecar AGENT.kdl [--agent NAME] [--log-format json|human]

Run the DING sidecar of one declared agent in the foreground: watch its
inbox, supervise its adapter, talk to its PTY host, and deliver by its
declared policy. Logs go to stderr, one line per decision.

  --agent NAME          the agent to run (needed if the file declares several)
  --log-format FORMAT   json (default) or human
  -h, --help            this help

It stops cleanly on SIGTERM, SIGINT or SIGHUP. `ding up` runs it for you.
";

struct Options {
    declaration: PathBuf,
    agent: Option<String>,
    log_format: LogFormat,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut declaration = None;
    let mut agent = None;
    let mut log_format = LogFormat::Json;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("agent") => agent = Some(parser.value()?.string()?),
            Arg::Long("log-format") => {
                let value = parser.value()?.string()?;
                log_format = match LogFormat::parse(&value) {
                    Some(format) => format,
                    None => bail!("unknown log format `{value}`\nhint: use json or human"),
                };
            }
            Arg::Value(value) if declaration.is_none() => declaration = Some(PathBuf::from(value)),
            other => bail!("{}\nRun `ding sidecar -h` for usage", other.unexpected()),
        }
    }
    let Some(declaration) = declaration else {
        bail!(
            "`ding sidecar` needs a declaration file\nUsage: ding sidecar AGENT.kdl [--agent NAME]"
        );
    };
    Ok(Some(Options {
        declaration,
        agent,
        log_format,
    }))
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let spec = load_agent(&options.declaration, options.agent.as_deref())?;
    let paths = AgentPaths::resolve(&spec.name, &DirsEnv::from_process())?;
    let declaration =
        std::fs::canonicalize(&options.declaration).unwrap_or(options.declaration.clone());
    runtime::run(SidecarOptions {
        spec,
        declaration,
        paths,
        log_format: options.log_format,
    })
}
