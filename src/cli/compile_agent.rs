//! `ding compile-agent PROVIDER`: an agent declaration for a real harness
//! under `turn-boundary+fresh-idle`, and the harness's hook configuration
//! merged into its settings.
//!
//! This file parses the neutral request and prints or writes the result;
//! the provider (from the registry) decides the declaration's command and
//! adapter arguments and merges its own settings file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::adapter::compile::{CompileRequest, IdlePath, is_secret_name, secret_refusal};
use crate::decl::{is_valid_agent_name, is_valid_env_name};
use crate::escape::{escape, escape_path};
use crate::private_file::replace;
use crate::providers;

fn short() -> String {
    format!(
        "\
Usage: ding compile-agent PROVIDER [--name NAME] [--cwd DIR] [--inbox DIR]
       [--env NAME=VALUE]... [--settings FILE] [--ding PROGRAM] [--out FILE]
       [--idle-path native|terminal] [-- PROGRAM ARGS...]

Print an agent declaration that runs PROVIDER's harness ({}) under
turn-boundary+fresh-idle with its DING adapter, and merge the hooks that
adapter relies on into the harness's settings (never replacing the user's).

Options:
  --name NAME        the agent's name (default: PROVIDER)
  --cwd DIR          the harness's working directory (default: the current one)
  --inbox DIR        the agent's inbox (default: inbox/NAME beside the declaration)
  --env NAME=VALUE   a variable for the harness (repeatable; never a secret)
  --settings FILE    where the hooks go (default: the provider's, under DIR)
  --ding PROGRAM     how the hooks run ding (default: this ding's path)
  --out FILE         write the declaration there instead of printing it
  --idle-path PATH   how idle work arrives: `native` (the provider's own
                     wake, if it has one; the default) or `terminal` (typed
                     under a fresh idle lease only)
  -- PROGRAM ARGS    the harness argv (default: the provider's installed program)
  -h, --help         print help
",
        providers::harness_names()
    )
}

const LONG: &str = "
Running it again changes nothing that is already right. Settings that are
not valid JSON are refused and left untouched. Secrets (variables whose
names say KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL or AUTH) are refused:
the harness inherits them from the environment of `ding up`. The
declaration's adapter command is the literal `$ST_HOOKS/PROVIDER-ding-adapter`
(see `ding hooks install`). Provider pages: docs/providers/.
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some((harness, request, out)) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let Some(adapter) = providers::by_harness(&harness) else {
        bail!(
            "no agent compiler for `{harness}`; providers: {}",
            providers::harness_names()
        );
    };
    let compiled = (adapter.compile)(&request)?;
    let text = compiled.declaration.render();
    let base = out
        .as_ref()
        .and_then(|path| path.parent().map(PathBuf::from))
        .unwrap_or_else(|| request.cwd.clone());
    // Read back before anything is written or printed: the file must
    // declare exactly the agent asked for, so no value (a path with a
    // carriage return, say) can smuggle in another.
    let warnings = compiled
        .declaration
        .check_text(&text, &base)
        .map_err(|refused| anyhow::anyhow!("{refused}"))?;
    let mut stderr = std::io::stderr();
    write!(stderr, "{warnings}")?;
    for written in &compiled.written {
        writeln!(
            stderr,
            "{}: {} ({})",
            written.what,
            escape_path(&written.path),
            if written.changed {
                "merged"
            } else {
                "already in place"
            }
        )?;
    }
    match out {
        Some(path) => {
            let unchanged = std::fs::read(&path).is_ok_and(|bytes| bytes == text.as_bytes());
            if !unchanged {
                path.file_name().context("--out names no file")?;
                replace(&path, text.as_bytes(), 0o644)
                    .with_context(|| format!("write {}", escape_path(&path)))?;
            }
            writeln!(
                stderr,
                "declaration: {} ({})",
                escape_path(&path),
                if unchanged {
                    "already in place"
                } else {
                    "written"
                }
            )?;
        }
        None => write!(std::io::stdout(), "{text}")?,
    }
    Ok(ExitCode::SUCCESS)
}

type Parsed = (String, CompileRequest, Option<PathBuf>);

fn parse(parser: &mut lexopt::Parser) -> Result<Option<Parsed>> {
    let (mut harness, mut name, mut cwd, mut inbox) = (None, None, None, None);
    let (mut env, mut settings, mut out) = (Vec::new(), None, None);
    let mut ding = None;
    let mut idle = IdlePath::Native;
    let mut command = Vec::new();
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, short(), format_args!("{}{LONG}", short()))? {
            return Ok(None);
        }
        match arg {
            Long("name") => name = Some(parser.value()?.string()?),
            Long("cwd") => cwd = Some(PathBuf::from(parser.value()?)),
            Long("inbox") => inbox = Some(PathBuf::from(parser.value()?)),
            Long("settings") => settings = Some(PathBuf::from(parser.value()?)),
            Long("ding") => ding = Some(parser.value()?.string()?),
            Long("out") => out = Some(PathBuf::from(parser.value()?)),
            Long("idle-path") => idle = IdlePath::parse(&parser.value()?.string()?)?,
            Long("env") => {
                let pair = parser.value()?.string()?;
                let Some((key, value)) = pair.split_once('=') else {
                    bail!("--env wants NAME=VALUE, got `{pair}`");
                };
                if !is_valid_env_name(key) {
                    bail!(
                        "--env wants NAME=VALUE with NAME of letters, digits and `_`, not starting with a digit; got `{}`",
                        escape(key)
                    );
                }
                if is_secret_name(key) {
                    bail!("{}", secret_refusal(key));
                }
                env.push((key.to_string(), value.to_string()));
            }
            Value(value) if harness.is_none() => harness = Some(value.string()?),
            Value(value) => command.push(value.string()?),
            other => bail!(
                "{}\nRun `ding compile-agent -h` for usage",
                other.unexpected()
            ),
        }
    }
    let Some(harness) = harness else {
        bail!(
            "`ding compile-agent` needs a provider: {}",
            providers::harness_names()
        );
    };
    let agent = name.unwrap_or_else(|| harness.clone());
    if !is_valid_agent_name(&agent) {
        bail!(
            "`{}` is not a valid agent name (letters, digits, `.`, `_`, `-`)",
            escape(&agent)
        );
    }
    let cwd = match cwd {
        Some(dir) => std::path::absolute(dir).context("resolve --cwd")?,
        None => std::env::current_dir().context("read the current directory")?,
    };
    let inbox = inbox
        .map(std::path::absolute)
        .transpose()
        .context("resolve --inbox")?;
    // This `ding`, by its path: the hooks then run it wherever the harness
    // runs them, whatever that environment's PATH says.
    let ding = ding.unwrap_or_else(crate::ding_binary::ding_program);
    Ok(Some((
        harness,
        CompileRequest {
            agent,
            cwd,
            inbox,
            command,
            env,
            settings,
            ding,
            idle,
        },
        out,
    )))
}
