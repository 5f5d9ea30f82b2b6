//! `ding demo-agent` (hidden): the bundled generic demo agent.
//!
//! This file turns argv into `demo::terminal::Options` (checking only what
//! the user wrote) and hands over to the terminal loop.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::demo::agent::Config;
use crate::demo::terminal::{self, Options};

const SHORT: &str = "\
Usage: ding demo-agent [--transcript FILE] [--turn-ms N] [--menu-every N]

A small terminal agent for demos and tests (run it under `ding pty`).

Options:
  --transcript FILE  append one JSON line per event to FILE
  --turn-ms N        how long a turn keeps the agent busy (default 3000)
  --menu-every N     every Nth turn ends in a confirmation menu (0: never)
  -h, --help         print help
";

const LONG: &str = "
Return submits the composer and starts a turn; text typed during a turn
stays in the composer and Return queues it until the turn ends. The menu
takes Return as the highlighted answer (1. Yes). Bracketed paste is literal
composer text. Ctrl-C twice, or Ctrl-D on an empty composer, quits.
Transcript events: submitted, queued, turn-start, menu-shown, menu-answered,
turn-end, each with `t` in Unix milliseconds. See docs/demo.md.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    terminal::run(&options)?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut config = Config::default();
    let mut transcript = None;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT, format_args!("{SHORT}{LONG}"))? {
            return Ok(None);
        }
        match arg {
            Long("transcript") => transcript = Some(PathBuf::from(parser.value()?)),
            Long("turn-ms") => {
                let ms: u64 = parser.value()?.parse()?;
                if ms > 3_600_000 {
                    bail!("--turn-ms wants at most 3600000 (an hour), got {ms}");
                }
                config.turn = Duration::from_millis(ms);
            }
            Long("menu-every") => config.menu_every = parser.value()?.parse()?,
            other => return Err(other.unexpected().into()),
        }
    }
    Ok(Some(Options { config, transcript }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<Options>> {
        parse(&mut lexopt::Parser::from_args(args.iter().copied()))
    }

    #[test]
    fn defaults_are_three_second_turns_and_no_menu() {
        let options = parse_args(&[]).expect("parses").expect("options");
        assert_eq!(options.config, Config::default());
        assert_eq!(options.config.turn, Duration::from_millis(3000));
        assert_eq!(options.config.menu_every, 0);
        assert_eq!(options.transcript, None);
    }

    #[test]
    fn test_transcript() {
        let options = parse_args(&["--transcript", "t.jsonl"])
            .expect("parses")
            .expect("options");
        assert_eq!(options.transcript, Some(PathBuf::from("t.jsonl")));
    }

    #[test]
    fn test_turn_ms() {
        let options = parse_args(&["--turn-ms", "250"])
            .expect("parses")
            .expect("options");
        assert_eq!(options.config.turn, Duration::from_millis(250));
        assert!(parse_args(&["--turn-ms", "-1"]).is_err());
        assert!(parse_args(&["--turn-ms", "3600001"]).is_err());
    }

    #[test]
    fn test_menu_every() {
        let options = parse_args(&["--menu-every", "2"])
            .expect("parses")
            .expect("options");
        assert_eq!(options.config.menu_every, 2);
        assert!(parse_args(&["--menu-every", "x"]).is_err());
    }

    #[test]
    fn unknown_flags_are_refused() {
        assert!(parse_args(&["--turbo"]).is_err());
    }
}
