//! `HOST:NAME`: an agent on another host, reached over ssh.
//!
//! Fleets of agents span machines, and a supervisor on one host sends work
//! to inboxes on others. DING adds no network listener of its own for
//! that: ssh already authenticates both ends, encrypts, and is what every
//! operator has set up and audits. `ding send HOST:NAME` runs `ding send
//! NAME -` on HOST through ssh with the body on stdin; the remote `ding
//! send` makes the message durable there and prints its name, and only
//! then does the local command print it. `ding ls HOST:` and `ding status
//! HOST:NAME` run their remote forms the same way.
//!
//! The ssh program is `DING_SSH` (default `ssh`), run as `ssh -o
//! BatchMode=yes -T -- HOST COMMAND`: never a password prompt in the
//! middle of a pipeline, no terminal. The remote `ding` is
//! `DING_REMOTE_DING` (default `ding`, found on the remote `PATH`). What
//! the remote side prints is text from another machine: it is escaped by
//! the one rule before it reaches the local terminal, and so is the host
//! name printed beside it. It is bounded too ([`MAX_STDOUT`],
//! [`MAX_STDERR`]), and the whole exchange has a deadline
//! (`DING_REMOTE_TIMEOUT` seconds, default [`DEFAULT_TIMEOUT`]): a remote
//! side that hangs or floods ends the command with the reason, never hangs
//! it or fills the memory.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::exit::Failure;
use crate::escape::displayable;
use crate::sidecar::escaped_json::to_json_pretty;
use crate::sidecar::paths::check_agent_name;

/// An agent on another host: `HOST:NAME` (`NAME` empty for `ding ls
/// HOST:`). HOST is whatever ssh takes (`user@host`, an alias of the ssh
/// config, `[::1]`); the split is at the last `:`, which no agent name
/// holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    pub host: String,
    pub agent: String,
}

impl Remote {
    /// The remote form of `target`, if it is one.
    pub fn parse(target: &str) -> Option<Remote> {
        let (host, agent) = target.rsplit_once(':')?;
        if host.is_empty() || host.starts_with('-') {
            return None;
        }
        Some(Remote {
            host: host.to_string(),
            agent: agent.to_string(),
        })
    }
}

/// The most a remote command may print on stdout: a status listing ten
/// thousand unread files is a few MB.
pub const MAX_STDOUT: u64 = 64 * 1024 * 1024;
/// The most a remote command may print on stderr.
pub const MAX_STDERR: u64 = 1024 * 1024;
/// How long a remote command may take, unless `DING_REMOTE_TIMEOUT` says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl Remote {
    /// Refuses an agent name the remote `ding` would take for something
    /// else (an option, a path): the same names as here. An empty name
    /// asks for the remote host's list.
    pub fn check_agent(&self) -> Result<()> {
        if self.agent.is_empty() {
            return Ok(());
        }
        check_agent_name(&self.agent)
            .map_err(|refused| Failure::Usage.because(format!("{refused:#}")))
    }

    /// The host, as it may be printed on this terminal.
    pub fn shown_host(&self) -> String {
        displayable(&self.host)
    }
}

/// The remote side's exit status and what it printed.
pub struct Ran {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// `args` as one command line for the remote shell (ssh hands the remote
/// side a string, not a list): every word single-quoted.
pub fn command_line(args: &[&str]) -> String {
    let ding = std::env::var("DING_REMOTE_DING").unwrap_or_else(|_| "ding".into());
    std::iter::once(ding.as_str())
        .chain(args.iter().copied())
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Runs the remote `ding ARGS` on `host` with `stdin` as its input.
pub fn run(host: &str, args: &[&str], stdin: &[u8]) -> Result<Ran> {
    let ssh: OsString = std::env::var_os("DING_SSH").unwrap_or_else(|| "ssh".into());
    let mut child = Command::new(&ssh)
        .args(["-o", "BatchMode=yes", "-T", "--", host])
        .arg(command_line(args))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {} (DING_SSH)", ssh.to_string_lossy()))?;
    let mut input = child.stdin.take().context("ssh's stdin")?;
    let body = stdin.to_vec();
    // Written beside the reads: a remote side that answers before reading
    // all of its input must not deadlock against a full pipe.
    let writer = thread::spawn(move || {
        let written = input.write_all(&body);
        drop(input);
        written
    });
    // The deadline: past it, ssh is killed, which closes its pipes and so
    // ends the reads below.
    let timeout = timeout_from_env()?;
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        let expired = finished.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout);
        if expired {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        expired
    });
    let err_pipe = child.stderr.take().context("ssh's stderr")?;
    let reader = thread::spawn(move || read_bounded(err_pipe, MAX_STDERR));
    let out_pipe = child.stdout.take().context("ssh's stdout")?;
    let stdout = read_bounded(out_pipe, MAX_STDOUT);
    if stdout.is_err() {
        // Too much: stop the remote side instead of reading the rest.
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    }
    let status = child.wait().context("wait for ssh")?;
    let _ = done.send(());
    let expired = watchdog.join().unwrap_or(false);
    let stderr = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reading ssh's stderr panicked"))?;
    // A remote side that exited without reading its input is not an error
    // of ours: its status says what happened.
    let _ = writer.join();
    if expired {
        return Err(Failure::Refused.because(format!(
            "{} did not answer within {} s (DING_REMOTE_TIMEOUT)",
            displayable(host),
            timeout.as_secs()
        )));
    }
    let stdout = stdout.map_err(|limit| {
        Failure::Refused.because(format!(
            "{} printed more than {limit} bytes; stopped reading it",
            displayable(host)
        ))
    })?;
    let stderr = stderr.map_err(|limit| {
        Failure::Refused.because(format!(
            "{} printed more than {limit} bytes of errors; stopped reading them",
            displayable(host)
        ))
    })?;
    Ok(Ran {
        code: status.code().unwrap_or(255),
        stdout,
        stderr,
    })
}

/// Reads `pipe` to its end, or fails with `limit` once it passes it.
fn read_bounded(pipe: impl Read, limit: u64) -> Result<Vec<u8>, u64> {
    let mut bytes = Vec::new();
    match pipe.take(limit + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > limit => Err(limit),
        Ok(_) => Ok(bytes),
        // A read error ends what there is to read.
        Err(_) => Ok(bytes),
    }
}

/// `DING_REMOTE_TIMEOUT` (whole seconds, 1..=86400), else
/// [`DEFAULT_TIMEOUT`].
fn timeout_from_env() -> Result<Duration> {
    let Some(value) = std::env::var_os("DING_REMOTE_TIMEOUT").filter(|v| !v.is_empty()) else {
        return Ok(DEFAULT_TIMEOUT);
    };
    let text = value.to_string_lossy();
    match text.parse::<u64>() {
        Ok(secs) if (1..=86_400).contains(&secs) => Ok(Duration::from_secs(secs)),
        _ => Err(Failure::Usage.because(format!(
            "DING_REMOTE_TIMEOUT wants whole seconds from 1 to 86400, got `{}`",
            displayable(&text)
        ))),
    }
}

/// What the remote side said on stderr, escaped, line by line, to stderr.
pub fn relay_stderr(host: &str, ran: &Ran) {
    let host = displayable(host);
    for line in String::from_utf8_lossy(&ran.stderr).lines() {
        eprintln!("{host}: {}", displayable(line));
    }
}

/// The exit status to return for the remote side's: its own (the same
/// table of codes), or 1 when ssh itself failed (255: no connection, no
/// key, an unknown host) or the remote `ding` could not run (126, 127).
pub fn exit_code(host: &str, ran: &Ran) -> Result<ExitCode> {
    let host = displayable(host);
    match ran.code {
        0..=4 => Ok(ExitCode::from(ran.code as u8)),
        code => Err(Failure::Refused.because(format!(
            "ssh to {host} failed (exit status {code}): the remote side said nothing DING can act on\nhint: `ssh -o BatchMode=yes {host} ding --version` must work without a prompt (docs/operating.md, section Senders on other hosts); DING_SSH names the ssh program, DING_REMOTE_DING the remote ding"
        ))),
    }
}

/// The remote side's standard output as local text: every line escaped.
pub fn shown(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| format!("{}\n", displayable(line)))
        .collect()
}

/// `ding ls HOST:` and `ding status HOST:[NAME]`: the remote command's
/// output, escaped (JSON read and written again by the escape rule), with
/// its exit status.
pub fn show(remote: &Remote, command: &str, json: bool) -> Result<ExitCode> {
    remote.check_agent()?;
    let mut args = vec![command];
    if !remote.agent.is_empty() {
        args.push(remote.agent.as_str());
    }
    if json {
        args.push("--json");
    }
    let ran = run(&remote.host, &args, &[])?;
    relay_stderr(&remote.host, &ran);
    let code = exit_code(&remote.host, &ran)?;
    let mut out = std::io::stdout().lock();
    if json && !ran.stdout.is_empty() {
        let document: serde_json::Value = serde_json::from_slice(&ran.stdout).map_err(|err| {
            Failure::Refused.because(format!(
                "{}'s ding {command} --json printed no JSON ({err})",
                remote.shown_host()
            ))
        })?;
        writeln!(out, "{}", to_json_pretty(&document)?)?;
    } else {
        write!(out, "{}", shown(&ran.stdout))?;
    }
    Ok(code)
}

/// Refuses an option that names something on this host for a command
/// that runs on another.
pub fn refuse_local_option(option: &str, remote: &Remote) -> Result<()> {
    bail!(
        "{option} names a file on this host, and agent `{}` is on {}: the remote ding finds the agent by its name\nhint: leave out {option}",
        displayable(&remote.agent),
        remote.shown_host()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_everything_before_the_last_colon() {
        let remote = Remote::parse("me@build-1:worker").unwrap();
        assert_eq!(
            (remote.host.as_str(), remote.agent.as_str()),
            ("me@build-1", "worker")
        );
        let remote = Remote::parse("[::1]:worker").unwrap();
        assert_eq!(remote.host, "[::1]");
        assert_eq!(Remote::parse("box:").unwrap().agent, "");
        assert_eq!(Remote::parse("worker"), None);
        assert_eq!(Remote::parse(":worker"), None);
        assert_eq!(
            Remote::parse("-oProxyCommand=x:worker"),
            None,
            "never an option"
        );
    }

    #[test]
    fn every_word_reaches_the_remote_shell_as_one_word() {
        let line = command_line(&["send", "w", "--from", "it's me; rm -rf /"]);
        assert!(
            line.ends_with(r"'send' 'w' '--from' 'it'\''s me; rm -rf /'"),
            "{line}"
        );
    }

    #[test]
    fn what_the_remote_side_prints_is_escaped() {
        assert_eq!(
            shown(b"ok\n\x1b]52;c;eA==\x07\n"),
            "ok\n\\u{1b}]52;c;eA==\\u{7}\n"
        );
    }

    #[test]
    fn an_agent_name_the_remote_ding_would_read_as_an_option_is_refused() {
        let hostile = Remote::parse("box:--decl=/etc/passwd").unwrap();
        let refused = hostile.check_agent().unwrap_err();
        assert!(format!("{refused:#}").contains("is not allowed"));
        assert!(Remote::parse("box:worker").unwrap().check_agent().is_ok());
        assert!(Remote::parse("box:").unwrap().check_agent().is_ok());
        assert_eq!(
            Remote::parse("b\x1b]0;x\x07ox:w").unwrap().shown_host(),
            "b\\u{1b}]0;x\\u{7}ox"
        );
    }

    #[test]
    fn output_past_its_bound_is_refused() {
        assert_eq!(read_bounded(&b"12345"[..], 5), Ok(b"12345".to_vec()));
        assert_eq!(read_bounded(&b"123456"[..], 5), Err(5));
    }
}
