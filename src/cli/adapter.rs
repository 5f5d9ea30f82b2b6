//! `ding adapter PROVIDER [ARGS]`: run a provider's DING adapter.
//!
//! The sidecar starts it through the launcher `ding hooks install` writes
//! (`$ST_HOOKS/PROVIDER-ding-adapter`); the provider is looked up in the
//! registry (`providers`), so this file names none.

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::{Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::providers;

fn help() -> String {
    format!(
        "\
Usage: ding adapter PROVIDER [ARGS]...

Run PROVIDER's DING adapter ({}). The sidecar starts it, through the
launcher that `ding hooks install DIR` writes; it talks protocol v1 on
stdout and reads the downlink on stdin (docs/adapter-protocol.md).
`ding adapter PROVIDER --help` lists the provider's own options.
",
        providers::harness_names()
    )
}

pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let help = help();
    let Some(arg) = parser.next()? else {
        bail!(
            "`ding adapter` needs a provider: {}",
            providers::harness_names()
        );
    };
    if help_asked(&arg, &help, &help)? {
        return Ok(ExitCode::SUCCESS);
    }
    let name = match arg {
        Value(value) => value.string()?,
        other => bail!("{}\nRun `ding adapter -h` for usage", other.unexpected()),
    };
    let Some(adapter) = providers::by_harness(&name) else {
        bail!(
            "no adapter for `{name}`; adapters: {}",
            providers::harness_names()
        );
    };
    let args: Vec<OsString> = parser.raw_args()?.collect();
    (adapter.run)(args)?;
    Ok(ExitCode::SUCCESS)
}
