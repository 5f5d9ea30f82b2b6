//! `ding-eval model-server`: the scripted loopback model server
//! that real harnesses talk to in tests and in the evaluation.
//!
//! This file turns argv into `model_server::Options` and a wire
//! format looked up by name in `harnesses`; the names themselves live
//! there, never here.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use crate::harnesses::{self, Harness};
use crate::model_server::{self, Options};
use ding::cli::help::help_asked;

fn short() -> String {
    format!(
        "\
Usage: ding-eval model-server --api API --log FILE [--port N] [--port-file FILE]

Serve a scripted mock model on 127.0.0.1, logging every request.

Options:
  --api API         the model API to speak: {}
  --log FILE        append one JSON line per request to FILE
  --port N          the port (default 0: pick a free one)
  --port-file FILE  write the port to FILE once listening
  -h, --help        print help
",
        harnesses::api_names()
    )
}

const LONG: &str = "
The latest prompt chooses the reply: `mock:run N` (a command tool call that
runs N seconds), `mock:permission PATH` (a command that needs permission and
creates PATH), `mock:slow N` (text streamed over N seconds), else a short
text. After a tool result the reply is text, which ends the turn. Each log
line has the request's path, class (prompt, tool-result, title,
count-tokens, side, unknown), turn and call number, prompt, reply, ids,
texts, headers (secrets redacted) and full body. It serves until killed.
See docs/providers/model-servers.md.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some((harness, options)) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    model_server::run((harness.wire_format)(), &options)?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<(&'static Harness, Options)>> {
    let mut api = None;
    let mut log = None;
    let mut port = 0;
    let mut port_file = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, short(), format_args!("{}{LONG}", short()))? {
            return Ok(None);
        }
        match arg {
            Long("api") => api = Some(parser.value()?.string()?),
            Long("log") => log = Some(PathBuf::from(parser.value()?)),
            Long("port") => port = parser.value()?.parse()?,
            Long("port-file") => port_file = Some(PathBuf::from(parser.value()?)),
            other => return Err(other.unexpected().into()),
        }
    }
    let api = api.with_context(|| format!("--api is required: {}", harnesses::api_names()))?;
    let Some(harness) = harnesses::by_api(&api) else {
        bail!("unknown --api `{api}`: {}", harnesses::api_names());
    };
    let log = log.context("--log FILE is required")?;
    Ok(Some((
        harness,
        Options {
            port,
            log,
            port_file,
        },
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<(&'static Harness, Options)>> {
        parse(&mut lexopt::Parser::from_args(args.iter().copied()))
    }

    #[test]
    fn every_provider_api_is_accepted_by_name() {
        for harness in &harnesses::HARNESSES {
            let (found, options) = parse_args(&["--api", harness.api, "--log", "l"])
                .expect("parses")
                .expect("options");
            assert_eq!(found.api, harness.api);
            assert_eq!(options.port, 0);
            assert_eq!(options.log, PathBuf::from("l"));
            assert_eq!(options.port_file, None);
        }
    }

    #[test]
    fn test_port_and_port_file() {
        let api = harnesses::HARNESSES[0].api;
        let (_, options) = parse_args(&[
            "--api",
            api,
            "--log",
            "l",
            "--port",
            "8",
            "--port-file",
            "p",
        ])
        .expect("parses")
        .expect("options");
        assert_eq!(options.port, 8);
        assert_eq!(options.port_file, Some(PathBuf::from("p")));
        assert!(parse_args(&["--api", api, "--log", "l", "--port", "70000"]).is_err());
    }

    #[test]
    fn api_and_log_are_required_and_unknown_apis_are_refused() {
        assert!(parse_args(&["--log", "l"]).is_err());
        assert!(parse_args(&["--api", harnesses::HARNESSES[0].api]).is_err());
        assert!(parse_args(&["--api", "nope", "--log", "l"]).is_err());
        assert!(parse_args(&["--turbo"]).is_err());
    }
}
