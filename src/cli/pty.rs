//! `ding pty`: run a command in the reference PTY host.
//!
//! This file turns argv into a `host::Config` (checking only what the user
//! wrote) and hands over to `pty::host::run`; the host does the rest.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::pty::host::{self, Config};
use crate::pty::identity::LaunchSpec;
use crate::pty::wire::Size;

const SHORT: &str = "\
Usage: ding pty --socket PATH --session NAME [--cwd DIR] [--env K=V|K]...
                [--inbox DIR] [--runtime-dir DIR] [--size COLSxROWS]
                [--exit-with-child[=GRACE]] [--launch JSON] [--log FILE]
                -- CMD [ARGS]...

Run CMD in a PTY served on a private control socket.

Options:
  --socket PATH              control socket (its directory must be 0700)
  --session NAME             the session name reported to clients
  --cwd DIR                  working directory of CMD (default: current)
  --env K=V                  set a variable for CMD (repeatable; the value
                             is visible in `ps`)
  --env K                    declare K, taking its value from this host's
                             own environment (nothing secret in `ps`)
  --inbox DIR                exported to CMD as DING_INBOX
  --runtime-dir DIR          exported to CMD as DING_RUNTIME_DIR
  --size COLSxROWS           initial terminal size (default 80x24)
  --exit-with-child[=GRACE]  end the host GRACE after CMD exits (default 1s)
  --launch JSON              a JSON object describing the launch, given back
                             by `status` as `launch` (at most 64 KiB)
  --log FILE                 stderr is FILE: cap and rotate it there
  -h, --help                 print help
";

const LONG: &str = "
The host keeps one revision counter that moves on every input write, every
output chunk, every resize and every start of CMD, and performs send-if
(compare-and-send) atomically against it. CMD's environment gets
DING_SESSION, DING_INCARNATION, DING_GENERATION, DING_PTY_SOCKET, DING_INBOX
and DING_RUNTIME_DIR. GRACE is milliseconds, or a number with `ms` or `s`.
The protocol is described in docs/pty-protocol.md.
";

/// Parsed `ding pty` arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub socket: PathBuf,
    pub session: String,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
    pub inbox: Option<PathBuf>,
    pub runtime_dir: Option<PathBuf>,
    pub size: Size,
    pub exit_with_child: Option<Duration>,
    pub launch: Option<serde_json::Value>,
    pub log: Option<PathBuf>,
    pub argv: Vec<String>,
}

/// The largest `--launch` object accepted.
const MAX_LAUNCH_BYTES: usize = 64 * 1024;

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(args) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let cwd = match args.cwd {
        Some(dir) => std::path::absolute(&dir).context("resolve --cwd")?,
        None => std::env::current_dir().context("read the current directory")?,
    };
    let config = Config {
        socket: args.socket,
        session: args.session,
        spec: LaunchSpec {
            argv: args.argv,
            cwd,
            env: args.env,
            inbox: args.inbox,
            runtime_dir: args.runtime_dir,
        },
        size: args.size,
        exit_with_child: args.exit_with_child,
        launch: args.launch,
        log: args.log,
    };
    let code = host::run(config)?;
    Ok(ExitCode::from(code))
}

/// `None` when help was printed.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<Args>> {
    let mut socket = None;
    let mut session = None;
    let mut cwd = None;
    let mut env = BTreeMap::new();
    let mut inbox = None;
    let mut runtime_dir = None;
    let mut size = Size { cols: 80, rows: 24 };
    let mut exit_with_child = None;
    let mut launch = None;
    let mut log = None;
    let mut argv: Vec<String> = Vec::new();
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT, format_args!("{SHORT}{LONG}"))? {
            return Ok(None);
        }
        match arg {
            Long("socket") => socket = Some(PathBuf::from(parser.value()?)),
            Long("session") => session = Some(parser.value()?.string()?),
            Long("cwd") => cwd = Some(PathBuf::from(parser.value()?)),
            Long("env") => {
                let (key, value) = parse_env(&parser.value()?.string()?)?;
                env.insert(key, value);
            }
            Long("launch") => {
                let text = parser.value()?.string()?;
                if text.len() > MAX_LAUNCH_BYTES {
                    bail!(
                        "--launch is {} bytes, more than {MAX_LAUNCH_BYTES}",
                        text.len()
                    );
                }
                let value: serde_json::Value =
                    serde_json::from_str(&text).context("--launch wants a JSON object")?;
                if !value.is_object() {
                    bail!("--launch wants a JSON object");
                }
                launch = Some(value);
            }
            Long("inbox") => inbox = Some(PathBuf::from(parser.value()?)),
            Long("log") => log = Some(PathBuf::from(parser.value()?)),
            Long("runtime-dir") => runtime_dir = Some(PathBuf::from(parser.value()?)),
            Long("size") => size = parse_size(&parser.value()?.string()?)?,
            Long("exit-with-child") => {
                let grace = match parser.optional_value() {
                    Some(value) => parse_grace(&value.string()?)?,
                    None => Duration::from_secs(1),
                };
                exit_with_child = Some(grace);
            }
            Value(first) => {
                argv.push(first.string()?);
                for rest in parser.raw_args()? {
                    argv.push(
                        rest.into_string()
                            .map_err(|raw| anyhow::anyhow!("argument {raw:?} is not UTF-8"))?,
                    );
                }
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let Some(socket) = socket else {
        bail!("--socket PATH is required\n{SHORT}");
    };
    let Some(session) = session else {
        bail!("--session NAME is required\n{SHORT}");
    };
    if argv.is_empty() {
        bail!("no command given; put it after `--`\n{SHORT}");
    }
    Ok(Some(Args {
        socket,
        session,
        cwd,
        env,
        inbox,
        runtime_dir,
        size,
        exit_with_child,
        launch,
        log,
        argv,
    }))
}

/// `K=V`, or `K` alone: K's value in this process's environment, so a
/// secret reaches CMD without ever being an argument.
fn parse_env(text: &str) -> Result<(String, String)> {
    let (key, value) = match text.split_once('=') {
        Some((key, value)) => (key, value.to_string()),
        None => {
            let value = std::env::var(text).map_err(|_| {
                anyhow::anyhow!(
                    "--env {text} takes the value of {text} from this process's environment, but it is not set there"
                )
            })?;
            (text, value)
        }
    };
    if key.is_empty() {
        bail!("--env wants K=V or K with a non-empty K, got `{text}`");
    }
    Ok((key.to_string(), value))
}

/// `COLSxROWS`, each 1..=1000.
pub fn parse_size(text: &str) -> Result<Size> {
    let parse = || -> Option<Size> {
        let (cols, rows) = text.split_once(['x', 'X'])?;
        let size = Size {
            cols: cols.parse().ok()?,
            rows: rows.parse().ok()?,
        };
        (1..=1000).contains(&size.cols).then_some(())?;
        (1..=1000).contains(&size.rows).then_some(())?;
        Some(size)
    };
    parse().with_context(|| format!("--size wants COLSxROWS within 1x1..1000x1000, got `{text}`"))
}

/// `500`, `500ms` or `2s`.
pub fn parse_grace(text: &str) -> Result<Duration> {
    let parsed = if let Some(ms) = text.strip_suffix("ms") {
        ms.parse().ok().map(Duration::from_millis)
    } else if let Some(s) = text.strip_suffix('s') {
        s.parse().ok().map(Duration::from_secs)
    } else {
        text.parse().ok().map(Duration::from_millis)
    };
    parsed
        .with_context(|| format!("--exit-with-child wants a grace like 500ms or 2s, got `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<Args>> {
        let mut parser = lexopt::Parser::from_args(args.iter().copied());
        parse(&mut parser)
    }

    #[test]
    fn test_command_after_double_dash_keeps_its_flags() {
        let args = parse_args(&[
            "--socket",
            "s",
            "--session",
            "n",
            "--",
            "bash",
            "--norc",
            "-i",
        ])
        .expect("parses")
        .expect("not help");
        assert_eq!(args.argv, ["bash", "--norc", "-i"]);
        assert_eq!(args.socket, PathBuf::from("s"));
        assert_eq!(args.session, "n");
    }

    #[test]
    fn test_env_is_repeatable_and_a_value_may_hold_equals() {
        let args = parse_args(&[
            "--socket",
            "s",
            "--session",
            "n",
            "--env",
            "A=1",
            "--env",
            "B=x=y",
            "--",
            "true",
        ])
        .expect("parses")
        .expect("not help");
        assert_eq!(args.env.get("B").map(String::as_str), Some("x=y"));
        assert_eq!(args.env.len(), 2);
    }

    #[test]
    fn test_env_without_a_value_takes_it_from_the_hosts_environment() {
        let with_env = |env: &str| {
            parse_args(&[
                "--socket",
                "s",
                "--session",
                "n",
                "--env",
                env,
                "--",
                "true",
            ])
        };
        // PATH is set for every test process; a name nobody sets is not.
        let path = std::env::var("PATH").expect("PATH");
        let args = with_env("PATH").expect("parses").expect("not help");
        assert_eq!(args.env.get("PATH"), Some(&path));
        let err = with_env("DING_TEST_SURELY_UNSET_VARIABLE").unwrap_err();
        assert!(format!("{err:#}").contains("not set there"), "{err:#}");
        assert!(with_env("=1").is_err(), "an empty name");
    }

    #[test]
    fn test_size_and_grace_values() {
        assert_eq!(
            parse_size("100x50").expect("size"),
            Size {
                cols: 100,
                rows: 50
            }
        );
        for bad in ["100", "0x5", "5x0", "1001x5", "axb"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_grace("250").expect("ms"), Duration::from_millis(250));
        assert_eq!(
            parse_grace("250ms").expect("ms"),
            Duration::from_millis(250)
        );
        assert_eq!(parse_grace("2s").expect("s"), Duration::from_secs(2));
        assert!(parse_grace("soon").is_err());
    }

    #[test]
    fn test_exit_with_child_value_is_optional() {
        let bare = parse_args(&[
            "--socket",
            "s",
            "--session",
            "n",
            "--exit-with-child",
            "--",
            "true",
        ])
        .expect("parses")
        .expect("not help");
        assert_eq!(bare.exit_with_child, Some(Duration::from_secs(1)));
        let given = parse_args(&[
            "--socket",
            "s",
            "--session",
            "n",
            "--exit-with-child=0",
            "--",
            "true",
        ])
        .expect("parses")
        .expect("not help");
        assert_eq!(given.exit_with_child, Some(Duration::ZERO));
    }

    #[test]
    fn test_socket_session_and_command_are_required() {
        assert!(parse_args(&["--session", "n", "--", "true"]).is_err());
        assert!(parse_args(&["--socket", "s", "--", "true"]).is_err());
        assert!(parse_args(&["--socket", "s", "--session", "n"]).is_err());
    }
}
