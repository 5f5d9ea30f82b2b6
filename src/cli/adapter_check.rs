//! `ding check --adapters`: run an agent's adapter once in check mode
//! (`DING_ADAPTER_CHECK=1`, see `adapter::kit::main`) and read its verdict.
//!
//! The adapter argv is opaque, as everywhere: it is expanded from this
//! environment and started with no shell; only its exit status and first
//! line of output are read, made printable.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::adapter::harness_env::{DECLARED_ENV_VARIABLE, declared_json};
use crate::adapter::kit::{CHECK_VARIABLE, HARNESS_VARIABLE};
use crate::decl::expand_argv_from_env;
use crate::escape::escape;
use crate::private_dir::{check_no_foreign_writes, current_uid};
use crate::wait::{POLL_EVERY, wait_for};

/// How long an adapter may take to say whether its setup is complete.
const CHECK_DEADLINE: Duration = Duration::from_secs(10);

/// Refuses a launcher that someone else could change: the program file
/// and the directory holding it (`$ST_HOOKS`, for the launchers `ding
/// hooks install` writes) must not be writable by group or others, and
/// must belong to this user or root. A bare name found on `PATH` is the
/// system's business, as for any program.
fn check_launcher(program: &Path) -> anyhow::Result<()> {
    let Some(dir) = program.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    check_no_foreign_writes(dir, current_uid())?;
    check_no_foreign_writes(program, current_uid())
}

/// Runs the adapter `argv` in check mode: whether it passed, and what it
/// said (its first line of output, or why there is none). The declared
/// harness argv, expanded, goes along in [`HARNESS_VARIABLE`]: an adapter
/// whose hooks come with the harness command checks them there. So do the
/// declared variables `env`, in [`DECLARED_ENV_VARIABLE`] (secrets left
/// out): with this environment they are what the harness will run in.
pub fn run(
    argv: &[String],
    harness: Option<&[String]>,
    env: &BTreeMap<String, String>,
) -> (bool, String) {
    let argv = match expand_argv_from_env(argv) {
        Ok(argv) => argv,
        Err(err) => return (false, err.to_string()),
    };
    let harness = harness
        .map(|harness| {
            expand_argv_from_env(harness)
                .map(|argv| {
                    argv.iter()
                        .map(|arg| arg.to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_else(|_| harness.to_vec())
        })
        .map(|argv: Vec<String>| serde_json::Value::from(argv).to_string())
        .unwrap_or_default();
    let Some((program, args)) = argv.split_first() else {
        return (false, "empty adapter command".into());
    };
    if let Err(refused) = check_launcher(Path::new(program)) {
        return (false, format!("{refused:#}"));
    }
    let child = Command::new(program)
        .args(args)
        .env(CHECK_VARIABLE, "1")
        .env(HARNESS_VARIABLE, harness)
        .env(DECLARED_ENV_VARIABLE, declared_json(env))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => {
            return (
                false,
                format!("cannot start {}: {err}", program.to_string_lossy()),
            );
        }
    };
    let ended = wait_for(CHECK_DEADLINE, POLL_EVERY, || match child.try_wait() {
        Ok(Some(status)) => Some(Some(status)),
        Ok(None) => None,
        Err(_) => Some(None),
    });
    let Some(Some(status)) = ended else {
        let _ = child.kill();
        let _ = child.wait();
        return (
            false,
            format!("no answer within {} s", CHECK_DEADLINE.as_secs()),
        );
    };
    let mut out = String::new();
    for stream in [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn Read>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn Read>),
    ]
    .into_iter()
    .flatten()
    {
        let mut text = String::new();
        let _ = stream.take(64 * 1024).read_to_string(&mut text);
        if out.trim().is_empty() {
            out = text;
        }
    }
    let line = escape(
        out.lines()
            .find(|line| !line.trim().is_empty())
            .unwrap_or(""),
    );
    let line = line.trim_start_matches("ding: ").to_string();
    match (status.success(), line.is_empty()) {
        (true, false) => (true, line),
        (true, true) => (false, "the adapter said nothing".into()),
        (false, _) => (
            false,
            if line.is_empty() {
                format!("exited with {status}")
            } else {
                line
            },
        ),
    }
}
