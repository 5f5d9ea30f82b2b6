//! Exit codes: one table for every `ding` command, so scripts can tell
//! "it is not running" from "there is no such agent" (as `systemctl` does)
//! and "your declaration is wrong" from "something broke". The table is
//! [`SUCCESS`] and [`Failure::meaning`]; `docs/operating.md` prints it, and
//! a test keeps the two equal.
//!
//! A command fails with a code by returning an error built here; any other
//! error is code 2.

use std::fmt;
use std::process::ExitCode;

use anyhow::Result;

/// Why a command failed, as an exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Refused or failed for a reason the message gives (code 1).
    Refused,
    /// Usage error or unexpected failure (code 2).
    Usage,
    /// Known, but not running (code 3).
    NotRunning,
    /// No such agent (code 4).
    UnknownAgent,
}

/// What exit status 0 means.
pub const SUCCESS: &str =
    "success; for `ding status`: the harness, the PTY host and the sidecar all run";

impl Failure {
    /// What the code means, as the documentation's table says it.
    pub fn meaning(self) -> &'static str {
        match self {
            Failure::Refused => {
                "refused or failed, with the reason printed: an invalid declaration, an agent that cannot start here or whose harness exited while starting, an agent started from another declaration file, an inbox that does not exist, a FILE not archived"
            }
            Failure::Usage => {
                "usage error (an unknown option, a missing argument), or an unexpected error (I/O, a process that does not answer)"
            }
            Failure::NotRunning => {
                "not running: the agent is known, but it (or the part asked for) does not run; `ding status` still prints what it knows"
            }
            Failure::UnknownAgent => {
                "unknown agent: no agent of that name ever ran here, nor is one declared where it was looked for"
            }
        }
    }

    pub const ALL: [Failure; 4] = [
        Failure::Refused,
        Failure::Usage,
        Failure::NotRunning,
        Failure::UnknownAgent,
    ];

    pub fn code(self) -> u8 {
        match self {
            Failure::Refused => 1,
            Failure::Usage => 2,
            Failure::NotRunning => 3,
            Failure::UnknownAgent => 4,
        }
    }

    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self.code())
    }

    /// An error that makes `ding` exit with this code.
    pub fn because(self, message: impl fmt::Display) -> anyhow::Error {
        anyhow::Error::new(Failed {
            failure: self,
            message: message.to_string(),
        })
    }
}

/// An error carrying its exit code.
#[derive(Debug)]
pub struct Failed {
    pub failure: Failure,
    message: String,
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failed {}

/// The exit code for an error chain: the code of the outermost [`Failed`]
/// in it, 1 for an invalid declaration, else 2.
pub fn code_of(err: &anyhow::Error) -> u8 {
    for cause in err.chain() {
        if let Some(failed) = cause.downcast_ref::<Failed>() {
            return failed.failure.code();
        }
        if cause
            .downcast_ref::<crate::decl::InvalidDeclaration>()
            .is_some()
        {
            return Failure::Refused.code();
        }
    }
    Failure::Usage.code()
}

/// A binary's exit code for `outcome`: an error is printed after `binary:`
/// and exits with its code from the table; a closed stdout is success, as
/// for any filter whose reader went away.
pub fn exit_code_of(binary: &str, outcome: Result<ExitCode>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{binary}: {}", error_text(&err));
            ExitCode::from(code_of(&err))
        }
    }
}

/// An error chain as printed: errors quote paths and filenames that are not
/// ours, so each line is made displayable by the one rule
/// ([`crate::escape`]); the line breaks between our own lines stay.
pub fn error_text(err: &anyhow::Error) -> String {
    format!("{err:#}")
        .split('\n')
        .map(crate::escape::displayable)
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn codes_are_distinct_and_survive_context() {
        let codes: std::collections::BTreeSet<u8> = Failure::ALL.iter().map(|f| f.code()).collect();
        assert_eq!(codes.len(), Failure::ALL.len());
        let err = Err::<(), _>(Failure::NotRunning.because("agent w is not running"))
            .context("cannot attach")
            .unwrap_err();
        assert_eq!(code_of(&err), 3);
        assert_eq!(code_of(&anyhow::anyhow!("disk on fire")), 2);
    }
}
