//! `ding send`: deliver one message into an agent's inbox and print its
//! name once it is durable.
//!
//! The body comes from a file or stdin; the delivery protocol (tmp, fsync,
//! rename, fsync `new/`) is [`Inbox::deliver`]'s, and which inbox NAME
//! means is `inbox_target`'s.

use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::{Arg, ValueExt};

use super::exit::Failure;
use super::help::help_asked;
use super::inbox_target::{self, InboxFlags};
use super::remote::{self, Remote};
use crate::core::message::MessageName;
use crate::escape::displayable;
use crate::sidecar::inbox::{Inbox, MAX_MESSAGE_BYTES};

const USAGE: &str = "\
Usage: ding send [HOST:]NAME [FILE|-|--text TEXT] [--from WHO] [--decl AGENT.kdl | --inbox DIR] [--create]";

const SHORT_HELP: &str = "\
Usage: ding send [HOST:]NAME [FILE|-|--text TEXT] [--from WHO] [--decl AGENT.kdl | --inbox DIR] [--create]

Deliver FILE (or stdin, or TEXT) to agent NAME's inbox; print the message's name.
  --text TEXT         send TEXT (and a line feed) as the message
  --from WHO          add a `From: WHO` header line
  --decl AGENT.kdl    find NAME's inbox in this declaration
  --inbox DIR         use this inbox root
  --create            create the inbox if it does not exist
  -h, --help          this help (--help says more)
";

const LONG_HELP: &str = "\
Usage: ding send [HOST:]NAME [FILE|-|--text TEXT] [--from WHO] [--decl AGENT.kdl | --inbox DIR] [--create]

Delivers one message to agent NAME: the contents of FILE, or stdin when
FILE is `-` or absent, or TEXT followed by a line feed with --text (at most
16 MiB). It writes INBOX/tmp/X, fsyncs it,
renames it to INBOX/new/X (never replacing a file), fsyncs INBOX/new, and
only then prints X on stdout.

Once X is printed the message is accepted: its data and its name in new/
have reached stable storage as far as fsync promises, so it survives a
crash of any process, and a power loss on storage that honours fsync. It
stays unread, in FIFO position by X (names sort by arrival time), until
the agent archives it. If ding send fails it prints no name; a failure
after the rename (including one printing X) says so on stderr and names X.

The inbox is found in this order: NAME's `inbox` in --decl AGENT.kdl;
--inbox DIR; DING_INBOX, when DING_AGENT is NAME (both are set inside a
harness DING runs); the inbox agent NAME's sidecar last ran with. An inbox
that does not exist is refused (a mistyped --inbox would otherwise make a
new inbox nobody reads), unless --create creates it with mode 0700; one
owned by another user or writable by group or others is refused.

HOST:NAME sends to agent NAME on another host over ssh: the body is read
here and goes on ssh's stdin to `ding send NAME -` there, which makes it
durable on that host and prints its name; only then is the name printed
here. ssh runs as `ssh -o BatchMode=yes -T -- HOST ...` (DING_SSH names
another program, DING_REMOTE_DING the remote ding); --decl and --inbox
do not apply. See docs/operating.md, section Senders on other hosts.

Options:
  --text TEXT         the message is TEXT and a line feed (instead of FILE)
  --from WHO          the sender, written as a first line `From: WHO`
                      followed by an empty line; letters, digits, spaces
                      and `._@+-:/#`, at most 128 bytes
  --decl AGENT.kdl    the declaration that names NAME's inbox
  --inbox DIR         the inbox root (the directory holding new/)
  --create            create the inbox (and its new/, tmp/, archive/) if it
                      does not exist
  -h                  short help
  --help              this help

Exit status: 0 delivered, 1 the inbox does not exist (without --create),
2 usage or I/O error, 4 no agent NAME is known. See docs/inbox.md.
";

#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    agent: String,
    /// `None` or `-` reads stdin.
    file: Option<PathBuf>,
    text: Option<String>,
    from: Option<String>,
    target: InboxFlags,
    create: bool,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut agent = None;
    let mut options = Options::default();
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT_HELP, LONG_HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("from") => options.from = Some(parser.value()?.string()?),
            Arg::Long("text") => options.text = Some(parser.value()?.string()?),
            Arg::Long("create") => options.create = true,
            Arg::Long("decl") => options.target.decl = Some(parser.value()?.into()),
            Arg::Long("inbox") => options.target.inbox = Some(parser.value()?.into()),
            Arg::Value(value) if agent.is_none() => agent = Some(value.string()?),
            Arg::Value(value) if options.file.is_none() => options.file = Some(value.into()),
            other => bail!("{}\n{USAGE}", other.unexpected()),
        }
    }
    let Some(agent) = agent else {
        bail!("`ding send` needs an agent name\n{USAGE}");
    };
    if options.text.is_some() && options.file.is_some() {
        bail!("give either FILE or --text TEXT, not both\n{USAGE}");
    }
    options.agent = agent;
    Ok(Some(options))
}

/// Reads at most one byte more than the limit, so an endless input is
/// refused without being buffered.
fn read_body(agent: &str, file: Option<&PathBuf>) -> Result<Vec<u8>> {
    let limit = MAX_MESSAGE_BYTES as u64 + 1;
    let mut body = Vec::new();
    match file {
        Some(path) if path.as_os_str() != "-" => {
            File::open(path)
                .map_err(|err| {
                    let hint = if err.kind() == std::io::ErrorKind::NotFound {
                        format!(
                            "\nhint: FILE names a file to send; to send text, write `ding send {agent} --text {}` or pipe it: `echo ... | ding send {agent} -`",
                            quoted(&path.to_string_lossy())
                        )
                    } else {
                        String::new()
                    };
                    anyhow::anyhow!("cannot open {}: {err}{hint}", path.display())
                })?
                .take(limit)
                .read_to_end(&mut body)
                .with_context(|| format!("cannot read {}", path.display()))?;
        }
        _ => {
            std::io::stdin()
                .lock()
                .take(limit)
                .read_to_end(&mut body)
                .context("cannot read the message from stdin")?;
        }
    }
    Ok(body)
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(remote) = Remote::parse(&options.agent) {
        return send_remote(&options, &remote);
    }
    let root = inbox_target::resolve(
        &options.agent,
        &options.target,
        |key| std::env::var_os(key),
        inbox_target::recorded_inbox,
    )?;
    // Validate the sender before waiting on stdin for a body.
    if let Some(who) = &options.from {
        crate::sidecar::inbox::check_sender(who)?;
    }
    if !options.create && std::fs::symlink_metadata(&root).is_err() {
        return Err(Failure::Refused.because(format!(
            "the inbox of agent {} does not exist: {}\nhint: the path may be mistyped, or the agent has not started yet (`ding up` creates its inbox); --create creates it",
            options.agent,
            root.display()
        )));
    }
    let body = match &options.text {
        Some(text) => format!("{text}\n").into_bytes(),
        None => read_body(&options.agent, options.file.as_ref())?,
    };
    let inbox = Inbox::open_or_create(&root)?;
    let name = inbox.deliver(&body, options.from.as_deref())?;
    let mut stdout = std::io::stdout().lock();
    // The message is durable now. If its name cannot be printed (a full
    // disk, a closed pipe), say so and name it here: a sender that saw only
    // an error would send it again. The cause is kept as text, not as the
    // I/O error, so that a broken pipe is a failure here, not the quiet
    // success it is for other commands.
    if let Err(err) = writeln!(stdout, "{name}").and_then(|()| stdout.flush()) {
        bail!(
            "delivered {name} into {}, but could not print its name: {err}",
            inbox.unread_dir().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `ding send HOST:NAME`: the body read here, sent on ssh's stdin to
/// `ding send NAME -` on HOST; the name printed only once the remote side
/// printed it, that is, once the message is durable there.
fn send_remote(options: &Options, remote: &Remote) -> Result<ExitCode> {
    if options.target.decl.is_some() {
        remote::refuse_local_option("--decl", remote)?;
    }
    if options.target.inbox.is_some() {
        remote::refuse_local_option("--inbox", remote)?;
    }
    crate::sidecar::paths::check_agent_name(&remote.agent)?;
    if let Some(who) = &options.from {
        crate::sidecar::inbox::check_sender(who)?;
    }
    let body = match &options.text {
        Some(text) => format!("{text}\n").into_bytes(),
        None => read_body(&options.agent, options.file.as_ref())?,
    };
    if body.len() > MAX_MESSAGE_BYTES {
        bail!("the message is larger than {MAX_MESSAGE_BYTES} bytes");
    }
    let mut args = vec!["send", remote.agent.as_str(), "-"];
    if let Some(who) = &options.from {
        args.extend(["--from", who.as_str()]);
    }
    if options.create {
        args.push("--create");
    }
    let ran = remote::run(&remote.host, &args, &body)?;
    remote::relay_stderr(&remote.host, &ran);
    if ran.code != 0 {
        return remote::exit_code(&remote.host, &ran);
    }
    let printed = String::from_utf8_lossy(&ran.stdout);
    let name = printed.trim_end_matches('\n');
    let is_a_name = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_graphic())
        && MessageName::new(name).is_ok();
    if !is_a_name {
        return Err(Failure::Refused.because(format!(
            "{}'s ding send exited 0 but printed no message name ({}): whether the message was delivered is unknown\nhint: `ding status {}:{}` lists the remote inbox",
            remote.shown_host(),
            displayable(&printed),
            remote.shown_host(),
            remote.agent
        )));
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{name}").and_then(|()| stdout.flush()) {
        bail!(
            "delivered {name} to agent {} on {}, but could not print its name: {err}",
            remote.agent,
            remote.shown_host()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `text` as one shell word, in single quotes.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        let mut parser = lexopt::Parser::from_args(args.iter().copied());
        parse_options(&mut parser)
    }

    #[test]
    fn name_then_optional_file() {
        let options = parse(&["worker"]).unwrap().unwrap();
        assert_eq!(options.agent, "worker");
        assert_eq!(options.file, None);
        let options = parse(&["worker", "msg.md"]).unwrap().unwrap();
        assert_eq!(options.file, Some(PathBuf::from("msg.md")));
        assert!(parse(&["worker", "a.md", "b.md"]).is_err());
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn text_is_a_message_and_excludes_a_file() {
        let options = parse(&["worker", "--text", "hello there"])
            .unwrap()
            .unwrap();
        assert_eq!(options.text.as_deref(), Some("hello there"));
        assert!(parse(&["worker", "a.md", "--text", "x"]).is_err());
        assert!(parse(&["worker", "--create"]).unwrap().unwrap().create);
    }

    #[test]
    fn from_flag_takes_a_sender() {
        let options = parse(&["--from", "lead", "worker", "-"]).unwrap().unwrap();
        assert_eq!(options.from.as_deref(), Some("lead"));
        assert_eq!(options.file, Some(PathBuf::from("-")));
    }

    #[test]
    fn decl_and_inbox_flags_take_paths() {
        let options = parse(&["worker", "--decl", "a.kdl"]).unwrap().unwrap();
        assert_eq!(options.target.decl, Some(PathBuf::from("a.kdl")));
        let options = parse(&["worker", "--inbox", "in/w"]).unwrap().unwrap();
        assert_eq!(options.target.inbox, Some(PathBuf::from("in/w")));
        assert!(parse(&["worker", "--inbox"]).is_err());
    }
}
