//! `ding-eval type`: the evaluation's typist types one line into an
//! agent's terminal, one keystroke at a time at a person's pace, then
//! Return, exactly as in a trial; prints each keystroke's moment and size
//! as JSON. For trying the typist on a pane by hand, and for the test that
//! checks the PTY host sees its keys as a person's.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lexopt::prelude::*;
use serde_json::json;

use crate::rng::Rng;
use crate::typist::{Pace, Typist};
use ding::cli::help::help_asked;

const HELP: &str = "\
Usage: ding-eval type --socket PATH [--seed S] TEXT

Type TEXT, then Return, into the terminal of the PTY host listening on
PATH (the agent's pty.sock), as the evaluation's typist does: one `send`
per keystroke, at a person's pace drawn from seed S (default 1). Prints
one JSON object: the text, and each keystroke's unix time and bytes.

Options:
  --socket PATH  the PTY host's control socket
  --seed S       the seed of the pace
  -h, --help     print help
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let (mut socket, mut seed, mut text) = (None, 1, None);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Long("socket") => socket = Some(PathBuf::from(parser.value()?)),
            Long("seed") => seed = parser.value()?.parse::<u64>()?,
            Value(value) if text.is_none() => text = Some(value.string()?),
            other => return Err(other.unexpected().into()),
        }
    }
    let socket = socket.context("--socket PATH is required")?;
    let text = text.context("name the TEXT to type")?;
    let plan = Pace::new(&mut Rng::new(seed)).line(&text);
    let mut typist = Typist::connect(&socket)?;
    typist.perform(&plan, Instant::now())?;
    let keys: Vec<_> = typist
        .typed
        .iter()
        .map(|typed| json!({"unixMs": typed.unix_ms, "bytes": typed.bytes.len()}))
        .collect();
    let out = json!({"text": plan.text(), "submits": plan.submits(), "keys": keys});
    writeln!(std::io::stdout(), "{out}")?;
    Ok(ExitCode::SUCCESS)
}
