//! `ding hook PROVIDER EVENT`: what a harness's hook configuration runs.
//!
//! It relays one hook call to the agent's adapter over the hook channel and
//! prints the adapter's answer (stdout, stderr, exit code). It never breaks
//! the harness: without an adapter to answer in time, it prints nothing and
//! exits 0, and the work stays unread in the inbox.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use lexopt::prelude::*;

use super::help::help_asked;
use crate::adapter::hook_wire::{HookAnswer, PROBE_ANSWER, PROBE_VARIABLE};
use crate::adapter::relay::{self, RelayFailure};

const SHORT: &str = "\
Usage: ding hook PROVIDER EVENT [--timeout SECS] [--explain]

Relay one harness hook call (payload JSON on stdin) to the agent's adapter,
and print its answer. Run by the harness, from the hook configuration that
`ding compile-agent` writes.

Options:
  --timeout SECS   wait at most this long for the answer (default 10)
  --explain        say on stderr why the answer was empty, if it was
  -h, --help       print help
";

const LONG: &str = "
The hook channel is DING_HOOK_SOCKET (else hook.sock in DING_RUNTIME_DIR),
both set by the PTY host inside the harness. The call carries the harness
identity from DING_SESSION, DING_INCARNATION and DING_GENERATION. When the
adapter cannot be reached, refuses the call or does not answer in time, the
answer is empty and the exit code 0: the harness carries on as it would
without DING. Whatever fails inside `ding hook` itself (its arguments, a
closed output) ends the same way.
";

struct Options {
    provider: String,
    event: String,
    timeout: Duration,
    explain: bool,
}

/// Runs the hook, and whatever fails inside it (its own arguments, a
/// closed stdout, a panic) ends as "nothing to add" with exit 0: a DING
/// hook never blocks, slows or changes the person's own work. Only the
/// adapter's answer sets another exit code (a provider may mean one).
pub fn run(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let explain = std::env::args().any(|arg| arg == "--explain");
    if !explain {
        // A panic's message on stderr is text a harness may show the
        // person as the hook's complaint.
        std::panic::set_hook(Box::new(|_| {}));
    }
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| relay_once(parser)));
    match ran {
        Ok(Ok(code)) => Ok(code),
        Ok(Err(err)) => {
            if explain {
                let _ = writeln!(std::io::stderr(), "ding hook: answering nothing: {err:#}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(_) => Ok(ExitCode::SUCCESS),
    }
}

fn relay_once(parser: &mut lexopt::Parser) -> Result<ExitCode> {
    let Some(options) = parse(parser)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if std::env::var_os(PROBE_VARIABLE).is_some_and(|value| !value.is_empty()) {
        // `ding check --adapters` runs a hook command as the harness
        // would, to see that it reaches a `ding`.
        writeln!(std::io::stdout(), "{PROBE_ANSWER}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let answer = match relay::socket_from_env() {
        None => Err(RelayFailure::NoSocket),
        Some(socket) => {
            let (payload, too_long) = relay::read_payload(&mut std::io::stdin());
            relay::call(
                &socket,
                &options.provider,
                &options.event,
                payload,
                too_long,
                options.timeout,
            )
        }
    };
    let (answer, receipt) = match answer {
        Ok((answer, receipt)) => (answer, Some(receipt)),
        Err(failure) => {
            if options.explain {
                // Never `eprintln!`: a hook that panics on a closed stderr
                // would fail the harness's hook instead of answering nothing.
                let _ = writeln!(
                    std::io::stderr(),
                    "ding hook: answering nothing: {failure:?}"
                );
            }
            (HookAnswer::default(), None)
        }
    };
    // Printed in full, or no receipt: files the answer carries then go back
    // to unread work instead of being taken as in a context they never
    // reached.
    let mut stdout = std::io::stdout();
    let printed = stdout
        .write_all(answer.stdout.as_bytes())
        .and_then(|()| stdout.flush());
    let mut stderr = std::io::stderr();
    let _ = stderr
        .write_all(answer.stderr.as_bytes())
        .and_then(|()| stderr.flush());
    if let Err(err) = printed {
        // Not passed on: no receipt, so the files go back to unread work.
        return Err(anyhow::Error::new(err).context("print the answer"));
    }
    if let Some(receipt) = receipt {
        receipt.send();
    }
    Ok(ExitCode::from(u8::try_from(answer.exit).unwrap_or(1)))
}

fn parse(parser: &mut lexopt::Parser) -> Result<Option<Options>> {
    let mut words = Vec::new();
    let mut timeout = Duration::from_secs(10);
    let mut explain = false;
    while let Some(arg) = parser.next()? {
        if help_asked(&arg, SHORT, format_args!("{SHORT}{LONG}"))? {
            return Ok(None);
        }
        match arg {
            Long("timeout") => {
                let secs: u64 = parser.value()?.parse()?;
                if !(1..=86_400).contains(&secs) {
                    bail!("--timeout wants 1..=86400 seconds, got {secs}");
                }
                timeout = Duration::from_secs(secs);
            }
            Long("explain") => explain = true,
            Value(value) if words.len() < 2 => words.push(value.string()?),
            other => return Err(other.unexpected().into()),
        }
    }
    let [provider, event]: [String; 2] = words
        .try_into()
        .map_err(|_| anyhow::anyhow!("usage: ding hook PROVIDER EVENT"))?;
    Ok(Some(Options {
        provider,
        event,
        timeout,
        explain,
    }))
}
