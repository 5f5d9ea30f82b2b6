//! `ding archive`: move read messages from `new/` to `archive/`, which
//! tells DING they are done.
//!
//! Each FILE is archived on its own; one failure does not stop the others
//! and makes the exit status 1. The rename itself is
//! [`Inbox::archive`]'s; which inbox NAME means is `inbox_target`'s.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::{Arg, ValueExt};

use super::help::help_asked;
use super::inbox_target::{self, InboxFlags};
use crate::escape::unescape;
use crate::sidecar::inbox::Inbox;

const SHORT_HELP: &str = "\
Usage: ding archive NAME FILE... [--decl AGENT.kdl | --inbox DIR]

Move each FILE from NAME's inbox new/ to archive/ (bare filenames, as
printed; a FILE starting with `-` goes after `--`).
  --decl AGENT.kdl    find NAME's inbox in this declaration
  --inbox DIR         use this inbox root
  -h, --help          this help (--help says more)
";

const LONG_HELP: &str = "\
Usage: ding archive NAME FILE... [--decl AGENT.kdl | --inbox DIR]

Archives messages of agent NAME: renames INBOX/new/FILE to
INBOX/archive/FILE, then fsyncs both directories. FILE is the bare name
that `ding send` printed and the ring named (not a path such as new/X),
exactly as printed: a name shown with escapes (`a\\u{a}b.md`) archives the
file it names. After `--`, every argument is a FILE, even one that
starts with `-`. An existing archive/FILE is never replaced.

Archiving is how an agent says it has taken a message: DING stops
tracking it and never rings for it again. `mv new/X archive/X` inside
the inbox does exactly the same, and deleting new/X also counts as done.

The inbox is found in this order: NAME's `inbox` in --decl AGENT.kdl;
--inbox DIR; DING_INBOX, when DING_AGENT is NAME (both are set inside a
harness DING runs, so there `ding archive NAME X` needs no flag).

Options:
  --decl AGENT.kdl    the declaration that names NAME's inbox
  --inbox DIR         the inbox root (the directory holding new/)
  -h                  short help
  --help              this help

Exit status: 0 all archived, 1 some FILE was not archived (each is
reported), 2 usage error or unusable inbox. See docs/inbox.md.
";

/// Said whenever an option was unexpected or no FILE was left: a message
/// whose name starts with `-` reads as an option otherwise.
const DASH_HINT: &str =
    "hint: a FILE whose name starts with `-` goes after `--`: ding archive NAME -- FILE";

#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    agent: String,
    files: Vec<String>,
    target: InboxFlags,
}

fn parse_options(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut agent = None;
    let mut options = Options::default();
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT_HELP, LONG_HELP)? {
            return Ok(None);
        }
        match arg {
            Arg::Long("decl") => options.target.decl = Some(parser.value()?.into()),
            Arg::Long("inbox") => options.target.inbox = Some(parser.value()?.into()),
            Arg::Value(value) if agent.is_none() => agent = Some(value.string()?),
            Arg::Value(value) => options.files.push(value.string()?),
            other => bail!(
                "{}\n{DASH_HINT}\nRun `ding archive -h` for usage",
                other.unexpected()
            ),
        }
    }
    let Some(agent) = agent else {
        bail!("`ding archive` needs an agent name\nUsage: ding archive NAME FILE...");
    };
    if options.files.is_empty() {
        bail!(
            "`ding archive` needs at least one FILE\n{DASH_HINT}\nUsage: ding archive NAME FILE..."
        );
    }
    options.agent = agent;
    Ok(Some(options))
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse_options(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let root = inbox_target::resolve(
        &options.agent,
        &options.target,
        |key| std::env::var_os(key),
        inbox_target::recorded_inbox,
    )?;
    let inbox = Inbox::open(&root)?;
    let mut failed = false;
    for file in &options.files {
        if let Err(err) = inbox.archive(&as_printed(&inbox, file)) {
            // The error names the file escaped (see `main`'s error_text);
            // never `eprintln!`, which panics on a closed stderr.
            let _ = writeln!(
                std::io::stderr(),
                "ding archive: {}",
                super::exit::error_text(&err)
            );
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The filename FILE names: itself when `new/` holds a file of that name,
/// else what it reads back to by the escape rule, so a name copied from a
/// notice or `ding status` (`a\u{a}b.md`, `bad\u{1b}.md`) archives the
/// file it was printed for. A literal backslash is always printed escaped,
/// so no printed form is ever taken for another name.
fn as_printed(inbox: &Inbox, file: &str) -> String {
    if std::fs::symlink_metadata(inbox.unread_dir().join(file)).is_ok() {
        return file.to_string();
    }
    unescape(file)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| file.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        let mut parser = lexopt::Parser::from_args(args.iter().copied());
        parse_options(&mut parser)
    }

    #[test]
    fn name_then_one_or_more_files() {
        let options = parse(&["worker", "a.md", "b.md"]).unwrap().unwrap();
        assert_eq!(options.agent, "worker");
        assert_eq!(options.files, ["a.md", "b.md"]);
        assert!(parse(&["worker"]).is_err());
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn inbox_flag_takes_a_path() {
        let options = parse(&["--inbox", "in/w", "worker", "a.md"])
            .unwrap()
            .unwrap();
        assert_eq!(options.target.inbox, Some("in/w".into()));
        assert!(parse(&["worker", "a.md", "--frobnicate"]).is_err());
    }

    /// After `--` every argument is a FILE: a message named like an option
    /// (`--inbox=x.md`, `-x.md`) can be archived. Without it, the error
    /// says so.
    #[test]
    fn files_after_a_double_dash_may_start_with_a_dash() {
        let options = parse(&["worker", "--", "--inbox=x.md", "-x.md"])
            .unwrap()
            .unwrap();
        assert_eq!(options.files, ["--inbox=x.md", "-x.md"]);
        assert_eq!(options.target, InboxFlags::default());
        let err = parse(&["worker", "--inbox=x.md"]).unwrap_err();
        assert!(err.to_string().contains("goes after `--`"), "{err}");
        let err = parse(&["worker", "-x.md"]).unwrap_err();
        assert!(err.to_string().contains("goes after `--`"), "{err}");
    }

    /// A name given as the notice and status print it (escaped) archives
    /// the file it names; a file whose literal name is given is archived
    /// as it is.
    #[test]
    fn a_name_as_printed_archives_the_file_it_names() {
        let temp = tempfile::tempdir().unwrap();
        let inbox = Inbox::open_or_create(&temp.path().join("inbox")).unwrap();
        std::fs::write(inbox.unread_dir().join("a\nb.md"), "x").unwrap();
        std::fs::write(inbox.unread_dir().join("lit\\u{41}.md"), "x").unwrap();
        assert_eq!(as_printed(&inbox, "a\\u{a}b.md"), "a\nb.md");
        assert_eq!(as_printed(&inbox, "lit\\u{41}.md"), "lit\\u{41}.md");
        assert_eq!(as_printed(&inbox, "lit\\u{5c}u{41}.md"), "lit\\u{41}.md");
        inbox.archive(&as_printed(&inbox, "a\\u{a}b.md")).unwrap();
        assert!(inbox.archive_dir().join("a\nb.md").exists());
    }
}
