//! `ding attach`: connect this terminal to a running `ding pty` host.
//!
//! Argument parsing only; the terminal handling is `pty::attach`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::pty::attach::{self, AttachEnd, DEFAULT_DETACH_KEY, parse_detach_key};
use crate::pty::wire::ChildState;
use crate::sidecar::paths::{AgentPaths, DirsEnv};

const SHORT: &str = "\
Usage: ding attach NAME | --socket PATH [--detach-key ^X|none]

Attach this terminal to a `ding pty` host: agent NAME's, or any by socket.

Options:
  NAME                an agent started by `ding up`
  --socket PATH       the host's control socket
  --detach-key KEY    detach key as ^X, or `none` (default ^\\)
  -h, --help          print help
";

const LONG: &str = "
The screen is redrawn from the host's model on attach. Keystrokes reach the
program in order and move the terminal's revision like any other input, so
a pending conditional send by the sidecar will conflict rather than mix with
your typing. Detaching leaves the program running.

Exit status: 0 detached (or the program ended), 1 the host closed the
connection, 3 no PTY host answers, 4 no agent NAME ever ran here.
";

#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    pub socket: PathBuf,
    /// The agent named, if the socket was found by its name.
    pub agent: Option<String>,
    pub detach_key: Option<u8>,
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(args) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(name) = &args.agent {
        super::agent_state::known_agent(name)?;
        if super::agent_state::pty_status(&args.socket).is_none() {
            return Err(super::exit::Failure::NotRunning.because(format!(
                "the pty host of agent `{name}` does not answer\nhint: `ding status {name}` says why; `ding up AGENT.kdl` starts it"
            )));
        }
    }
    let end = attach::run(&args.socket, args.detach_key)?;
    let (message, code) = match end {
        AttachEnd::Detached => ("detached".to_string(), 0),
        AttachEnd::ChildExited(ChildState::Exited { code }) => {
            (format!("the program exited with code {code}"), 0)
        }
        AttachEnd::ChildExited(ChildState::Killed { signal }) => {
            (format!("the program was killed by signal {signal}"), 0)
        }
        AttachEnd::ChildExited(ChildState::Running { .. }) => ("the program ended".into(), 0),
        AttachEnd::HostClosed => ("the pty host closed the connection".into(), 1),
        AttachEnd::Signalled(signal) => (format!("detached on {signal}"), 0),
    };
    // The terminal may be gone (a closed window): nothing to say it to.
    let _ = writeln!(std::io::stderr(), "[ding: {message}]");
    Ok(ExitCode::from(code))
}

/// `None` when help was printed.
pub fn parse(parser: &mut lexopt::Parser) -> Result<Option<Args>> {
    let mut socket = None;
    let mut agent = None;
    let mut detach_key = Some(DEFAULT_DETACH_KEY);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT, format_args!("{SHORT}{LONG}"))? {
            return Ok(None);
        }
        match arg {
            Long("socket") => socket = Some(PathBuf::from(parser.value()?)),
            Long("detach-key") => detach_key = parse_detach_key(&parser.value()?.string()?)?,
            Value(name) if socket.is_none() => {
                let name = name.string()?;
                let paths = AgentPaths::resolve(&name, &DirsEnv::from_process())?;
                socket = Some(paths.pty_socket());
                agent = Some(name);
            }
            other => return Err(other.unexpected().into()),
        }
    }
    let Some(socket) = socket else {
        bail!("an agent NAME or --socket PATH is required\n{SHORT}");
    };
    Ok(Some(Args {
        socket,
        agent,
        detach_key,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Option<Args>> {
        parse(&mut lexopt::Parser::from_args(args.iter().copied()))
    }

    #[test]
    fn test_detach_key_defaults_to_ctrl_backslash() {
        let args = parse_args(&["--socket", "s"])
            .expect("parses")
            .expect("not help");
        assert_eq!(args.detach_key, Some(0x1c));
    }

    #[test]
    fn test_detach_key_can_be_changed_or_disabled() {
        let args = parse_args(&["--socket", "s", "--detach-key", "^x"])
            .expect("parses")
            .expect("not help");
        assert_eq!(args.detach_key, Some(0x18));
        let args = parse_args(&["--socket", "s", "--detach-key", "none"])
            .expect("parses")
            .expect("not help");
        assert_eq!(args.detach_key, None);
    }

    #[test]
    fn test_socket_is_required() {
        assert!(parse_args(&[]).is_err());
    }

    #[test]
    fn test_agent_name_means_its_runtime_socket() {
        let args = parse_args(&["worker"]).unwrap().unwrap();
        // $XDG_RUNTIME_DIR/ding/worker, or /tmp/ding-UID/worker without it.
        assert!(
            args.socket.ends_with("worker/pty.sock"),
            "{}",
            args.socket.display()
        );
        assert!(parse_args(&["../escape"]).is_err(), "names are checked");
    }
}
