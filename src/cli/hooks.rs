//! `ding hooks install DIR`: write the adapter launchers that declarations
//! name as `$ST_HOOKS/PROVIDER-ding-adapter`.
//!
//! One small shell script per provider with an adapter (from the registry,
//! so this file names none), each `exec`-ing this very `ding` binary as
//! `ding adapter PROVIDER`. Written atomically; running it again rewrites
//! nothing that is already right.

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::adapter::compile::launcher_name;
use crate::escape::escape_path;
use crate::private_dir::{check_no_foreign_writes, current_uid};
use crate::private_file::replace;
use crate::providers;

const HELP: &str = "\
Usage: ding hooks install DIR [--ding PATH]

Write one adapter launcher per provider into DIR (created if missing):
DIR/PROVIDER-ding-adapter, which runs `ding adapter PROVIDER`. A
declaration names it as `$ST_HOOKS/PROVIDER-ding-adapter`; start `ding up`
with ST_HOOKS=DIR in its environment.

  --ding PATH   the ding the launchers run (default: this one)
  -h, --help    this help
";

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let (mut verb, mut dir, mut ding) = (None, None, None);
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, HELP, HELP)? {
            return Ok(ExitCode::SUCCESS);
        }
        match arg {
            Long("ding") => ding = Some(PathBuf::from(parser.value()?)),
            Value(value) if verb.is_none() => verb = Some(value.string()?),
            Value(value) if dir.is_none() => dir = Some(PathBuf::from(value)),
            other => bail!("{}\nRun `ding hooks -h` for usage", other.unexpected()),
        }
    }
    match verb.as_deref() {
        Some("install") => {}
        Some(other) => bail!("unknown `ding hooks {other}`; the verb is `install`"),
        None => bail!("usage: ding hooks install DIR [--ding PATH]"),
    }
    let Some(dir) = dir else {
        bail!("usage: ding hooks install DIR [--ding PATH]");
    };
    let ding = match ding {
        Some(path) => std::path::absolute(&path).context("resolve --ding")?,
        None => std::env::current_exe().context("locate the ding binary")?,
    };
    // A new directory is the user's alone (0755: the harness reads it);
    // an existing one must not be writable by anyone else, as an inbox
    // must not: whoever can change a launcher runs code as the agent.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(&dir)
        .with_context(|| format!("create {}", escape_path(&dir)))?;
    check_no_foreign_writes(&dir, current_uid())?;
    let mut out = std::io::stdout();
    for provider in &providers::ROOMS {
        let path = dir.join(launcher_name(provider.harness));
        let changed = install(&path, &launcher(&ding, provider.harness))?;
        writeln!(
            out,
            "{} {}",
            escape_path(&path),
            if changed { "written" } else { "unchanged" }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The launcher script for `provider`, running `ding`.
pub fn launcher(ding: &Path, provider: &str) -> String {
    let ding = ding.to_string_lossy().replace('\'', "'\\''");
    format!(
        "#!/bin/sh\n# DING's {provider} adapter, written by `ding hooks install`. A declaration\n# runs it as `adapter {{ command \"$ST_HOOKS/{name}\" }}`.\nexec '{ding}' adapter {provider} \"$@\"\n",
        name = launcher_name(provider)
    )
}

/// Writes `text` to `path` (mode 0755) unless it already holds exactly it.
fn install(path: &Path, text: &str) -> Result<bool> {
    if std::fs::read(path).is_ok_and(|bytes| bytes == text.as_bytes()) {
        return Ok(false);
    }
    replace(path, text.as_bytes(), 0o755)
        .with_context(|| format!("write {}", escape_path(path)))?;
    Ok(true)
}
