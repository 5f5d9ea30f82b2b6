//! `ding demo-adapter` (hidden): the scripted adapter for the demo agent.
//!
//! This file turns argv and the environment into `demo::adapter::Options`
//! and runs the adapter on stdout.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::demo::adapter::{self, Options};

const SHORT: &str = "\
Usage: ding demo-adapter [--socket PATH] [--heartbeat-ms N] [--valid-for-ms N]

Report the demo agent's activity as adapter protocol v1 lines on stdout.

Options:
  --socket PATH       the PTY host's socket (default: $DING_PTY_SOCKET)
  --heartbeat-ms N    while wanted, report at least this often (default 4000)
  --valid-for-ms N    validForMs of every line (default 5000)
  -h, --help          print help
";

const LONG: &str = "
Built on the adapter kit: while the sidecar wants evidence (its downlink on
stdin), one `activity` line per screen change (revision pushes, coalesced)
and per heartbeat, with the snapshot's revision; nothing at all while it does
not. Ready screen: idle; working: active; confirmation menu or an unknown
screen: unknown. The composer is empty when it shows only the dim
placeholder. The identity is the one the sidecar sends; run by hand (stdin
not a pipe), evidence is always wanted and the identity is the PTY host's.
See docs/demo.md.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse(parser, std::env::var_os("DING_PTY_SOCKET"))? else {
        return Ok(ExitCode::SUCCESS);
    };
    adapter::run(&options)?;
    Ok(ExitCode::SUCCESS)
}

/// `None` when help was printed. `env_socket` is `DING_PTY_SOCKET`.
pub fn parse(
    parser: &mut lexopt::Parser,
    env_socket: Option<std::ffi::OsString>,
) -> Result<Option<Options>> {
    let mut socket = env_socket
        .filter(|value| !value.is_empty())
        .map(PathBuf::from);
    let mut heartbeat = Duration::from_millis(4000);
    let mut valid_for = Duration::from_millis(5000);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT, format_args!("{SHORT}{LONG}"))? {
            return Ok(None);
        }
        match arg {
            Long("socket") => socket = Some(PathBuf::from(parser.value()?)),
            Long("heartbeat-ms") => heartbeat = positive_ms("--heartbeat-ms", parser)?,
            Long("valid-for-ms") => valid_for = positive_ms("--valid-for-ms", parser)?,
            other => return Err(other.unexpected().into()),
        }
    }
    let Some(socket) = socket else {
        bail!("no pty socket: set DING_PTY_SOCKET or pass --socket PATH");
    };
    Ok(Some(Options {
        socket,
        heartbeat,
        valid_for,
    }))
}

fn positive_ms(flag: &str, parser: &mut lexopt::Parser) -> Result<Duration> {
    let ms: u64 = parser.value()?.parse()?;
    if ms == 0 || ms > 600_000 {
        bail!("{flag} wants 1..=600000 milliseconds, got {ms}");
    }
    Ok(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str], env: Option<&str>) -> Result<Option<Options>> {
        parse(
            &mut lexopt::Parser::from_args(args.iter().copied()),
            env.map(Into::into),
        )
    }

    #[test]
    fn socket_comes_from_the_environment_and_the_flag_wins() {
        let options = parse_args(&[], Some("/run/a.sock"))
            .expect("parses")
            .expect("options");
        assert_eq!(options.socket, PathBuf::from("/run/a.sock"));
        assert_eq!(options.heartbeat, Duration::from_millis(4000));
        assert_eq!(options.valid_for, Duration::from_millis(5000));
        let options = parse_args(&["--socket", "b.sock"], Some("/run/a.sock"))
            .expect("parses")
            .expect("options");
        assert_eq!(options.socket, PathBuf::from("b.sock"));
    }

    #[test]
    fn no_socket_is_an_error() {
        assert!(parse_args(&[], None).is_err());
        assert!(parse_args(&[], Some("")).is_err());
    }

    #[test]
    fn test_heartbeat_ms() {
        let options = parse_args(&["--heartbeat-ms", "50"], Some("s"))
            .expect("parses")
            .expect("options");
        assert_eq!(options.heartbeat, Duration::from_millis(50));
        assert!(parse_args(&["--heartbeat-ms", "0"], Some("s")).is_err());
    }

    #[test]
    fn test_valid_for_ms() {
        let options = parse_args(&["--valid-for-ms", "750"], Some("s"))
            .expect("parses")
            .expect("options");
        assert_eq!(options.valid_for, Duration::from_millis(750));
        assert!(parse_args(&["--valid-for-ms", "600001"], Some("s")).is_err());
    }
}
