//! Senders on other hosts (OPS-25): `ding send HOST:NAME`, `ding ls
//! HOST:` and `ding status HOST:NAME` run the remote ding through ssh.
//! Here ssh is a stand-in (`DING_SSH`) that runs the command line it is
//! given in another agent's world, as the real ssh would run it on the
//! other host, and plays a host that cannot be reached and one that
//! answers with escape sequences.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use support::sidecar_agent::*;

/// The local side: a world of its own with no agent, whose `ding` reaches
/// `far`'s world through the stand-in ssh.
struct Near {
    agent: Agent,
    ssh: std::path::PathBuf,
}

impl Near {
    fn new(far: &Agent) -> Near {
        let agent = Agent::new("near", "");
        let ssh = agent.path("ssh");
        let exports: String = far
            .env_vars()
            .iter()
            .map(|(key, value)| {
                format!(
                    "export {key}='{}'\n",
                    value.to_string_lossy().replace('\'', r"'\''")
                )
            })
            .collect();
        let log = agent.path("ssh.log");
        fs::write(
            &ssh,
            format!(
                r#"#!/bin/sh
# A stand-in for `ssh [OPTIONS] -- HOST COMMAND`: logs what it was given
# and runs COMMAND with the other world's environment, as ssh would run it
# on the other host.
for arg in "$@"; do printf '%s\n' "$arg" >> '{log}'; done
while [ "$1" != "--" ]; do shift; done
shift
host=$1
shift
case "$host" in
  down) echo "ssh: connect to host down port 22: Connection refused" >&2; exit 255 ;;
  evil) printf 'agent \033]52;c;eA==\007 evil\n'; printf 'bad \033[2J\n' >&2; exit 3 ;;
  hung) exec sleep 600 ;;
  flood) head -c 70000000 /dev/zero; exit 0 ;;
  *evil-name*) printf 'said\n' >&2; exit 3 ;;
esac
{exports}exec sh -c "$1"
"#,
                log = log.display()
            ),
        )
        .expect("write the stand-in ssh");
        fs::set_permissions(&ssh, fs::Permissions::from_mode(0o755)).expect("chmod");
        Near { agent, ssh }
    }

    fn ding(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.ding_with(args, stdin, &[])
    }

    fn ding_with(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let mut command: Command = self.agent.command(args);
        command.envs(env.iter().copied());
        command
            .env("DING_SSH", &self.ssh)
            .env("DING_REMOTE_DING", DING)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("run ding");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin)
            .expect("write stdin");
        child.wait_with_output().expect("wait")
    }

    fn ssh_log(&self) -> String {
        fs::read_to_string(self.agent.path("ssh.log")).unwrap_or_default()
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The body goes on ssh's stdin, the remote `ding send` makes it durable
/// in the agent's inbox there, and the local command prints the name the
/// remote side printed: the file that is there.
#[test]
fn a_message_sent_to_another_host_is_durable_there_before_its_name_is_printed() {
    let far = Agent::new("far", &aggressive_decl("far", SLEEPING_HARNESS));
    far.up(&[]);
    let near = Near::new(&far);
    let body = b"line one\n\x00binary \xff and 'quotes' $(not run)\n";
    let out = near.ding(&["send", "box:far", "-", "--from", "lead"], body);
    assert!(out.status.success(), "{}", stderr(&out));
    let name = stdout(&out).trim_end().to_string();
    let delivered = far.path("inbox/far/new").join(&name);
    let written = fs::read(&delivered).expect("the message is in the remote inbox");
    assert_eq!(written, [b"From: lead\n\n".as_slice(), body].concat());
    let log = near.ssh_log();
    assert!(
        log.starts_with("-o\nBatchMode=yes\n-T\n--\nbox\n"),
        "ssh's arguments: {log}"
    );

    let out = near.ding(&["send", "box:far", "--text", "hello"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let name = stdout(&out).trim_end().to_string();
    assert_eq!(
        fs::read_to_string(far.path("inbox/far/new").join(name)).expect("second"),
        "hello\n"
    );
}

/// What the remote side refuses keeps its exit status and its reason;
/// ssh's own failure is a refusal that says how to check the connection;
/// options that name local files are refused.
#[test]
fn a_remote_failure_keeps_its_exit_status_and_reason() {
    let far = Agent::new("far2", "");
    let near = Near::new(&far);
    let out = near.ding(&["send", "box:nobody", "--text", "x"], b"");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("box: "), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "no name printed");

    let out = near.ding(&["send", "down:far2", "--text", "x"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("down: ssh: connect to host down port 22: Connection refused"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("ssh to down failed (exit status 255)"));
    assert!(stdout(&out).is_empty(), "no name printed");

    let out = near.ding(&["send", "box:far2", "--inbox", "x", "--text", "x"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--inbox names a file on this host"));
}

/// `ding ls HOST:` and `ding status HOST:NAME` print the remote answer
/// (JSON read and written again), and whatever the remote side prints is
/// escaped before it reaches the terminal.
#[test]
fn ls_and_status_of_another_host_are_its_answers_escaped() {
    let far = Agent::new("far3", &aggressive_decl("far3", SLEEPING_HARNESS));
    far.up(&[]);
    let near = Near::new(&far);
    let out = near.ding(&["ls", "box:", "--json"], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("ls JSON");
    assert_eq!(listed[0]["agent"], "far3", "{listed}");
    let out = near.ding(&["status", "box:far3"], b"");
    assert!(stdout(&out).starts_with("agent far3: "), "{}", stdout(&out));
    let out = near.ding(&["status", "box:far3", "--json"], b"");
    let status: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    assert_eq!(status["harness"]["state"], "running", "{status}");

    let out = near.ding(&["ls", "evil:"], b"");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "agent \\u{1b}]52;c;eA==\\u{7} evil\n");
    assert_eq!(stderr(&out), "evil: bad \\u{1b}[2J\n");
}

/// What another host can do to this side is bounded: an agent name it
/// would read as an option is refused here, a host name is escaped where
/// it is printed, a remote side that floods its output or never answers
/// ends the command with the reason instead of filling the memory or
/// hanging it.
#[test]
fn another_host_cannot_hang_flood_or_inject_through_ding() {
    let far = Agent::new("far", "");
    let near = Near::new(&far);
    let out = near.ding(&["status", "box:--decl=/etc/passwd"], b"");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("is not allowed"), "{out:?}");
    assert!(
        !fs::read_to_string(near.agent.path("ssh.log"))
            .unwrap_or_default()
            .contains("--decl"),
        "nothing reached the remote side"
    );

    let out = near.ding(&["status", "evil-name\x1b[2J:worker"], b"");
    assert!(!stderr(&out).contains('\x1b'), "{out:?}");
    assert!(
        stderr(&out).contains("evil-name\\u{1b}[2J: said"),
        "{out:?}"
    );

    let started = std::time::Instant::now();
    let out = near.ding_with(
        &["status", "hung:worker"],
        b"",
        &[("DING_REMOTE_TIMEOUT", "1")],
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(
        stderr(&out).contains("did not answer within 1 s"),
        "{out:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    let out = near.ding(&["ls", "flood:"], b"");
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr(&out).contains("printed more than"), "{out:?}");
}
