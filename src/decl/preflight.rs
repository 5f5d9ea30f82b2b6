//! What a valid declaration still needs from the machine it runs on: the
//! variables its commands name, the programs they run and the harness's
//! working directory.
//!
//! A file can be valid and still not start: `command "my-agent-tui"` with
//! no such program, a `cwd` that does not exist, `$ST_HOOKS` unset. Those
//! are facts of this machine, not of the file, so they are checked apart
//! from validation (which stays the same wherever it runs): `ding check`
//! reports them (an unset variable as an error, the rest as warnings, since
//! the file may be meant for another machine) and `ding up` refuses to
//! start with any of them, before anything is spawned, naming what is
//! missing. The lookup follows exec's own rule: a program with a `/` is a
//! path (relative to the harness's `cwd`), a bare name is searched in
//! `PATH` (the declared `env`'s `PATH` if it sets one, as the harness
//! would see it).

use std::ffi::OsString;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::expand::{ExpandError, expand_argv};
use super::spec::AgentSpec;

/// One thing the machine lacks for an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A command names a variable that is unset or empty here.
    Variable {
        what: &'static str,
        error: ExpandError,
    },
    /// The program is not found (on `PATH`, or at its path).
    ProgramNotFound {
        what: &'static str,
        program: String,
        searched: Option<OsString>,
    },
    /// The program exists but is not an executable file.
    NotExecutable { what: &'static str, path: PathBuf },
    /// The harness's working directory does not exist.
    MissingCwd { cwd: PathBuf },
    /// The harness's working directory is not a directory.
    CwdNotDirectory { cwd: PathBuf },
}

/// Which process a problem keeps from starting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concerns {
    /// The PTY host's harness (`command`).
    Harness,
    /// The sidecar's adapter (`adapter { command }`).
    Adapter,
    /// Both: they run in the same `cwd`.
    Both,
}

/// The `what` of a problem in the adapter's command.
const ADAPTER_COMMAND: &str = "adapter `command`";

impl Problem {
    /// Whether the file itself cannot work here whatever else is done: an
    /// unset variable has no value to start with on this machine.
    pub fn is_error_for_check(&self) -> bool {
        matches!(self, Problem::Variable { .. })
    }

    pub fn concerns(&self) -> Concerns {
        match self {
            Problem::Variable { what, .. }
            | Problem::ProgramNotFound { what, .. }
            | Problem::NotExecutable { what, .. } => {
                if *what == ADAPTER_COMMAND {
                    Concerns::Adapter
                } else {
                    Concerns::Harness
                }
            }
            Problem::MissingCwd { .. } | Problem::CwdNotDirectory { .. } => Concerns::Both,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Variable { what, error } => write!(f, "{what}: {error}"),
            Problem::ProgramNotFound {
                what,
                program,
                searched: Some(path),
            } => write!(
                f,
                "{what}: program `{program}` is not found on PATH ({})",
                path.to_string_lossy()
            ),
            Problem::ProgramNotFound {
                what,
                program,
                searched: None,
            } => write!(f, "{what}: program `{program}` does not exist"),
            Problem::NotExecutable { what, path } => {
                write!(f, "{what}: `{}` is not an executable file", path.display())
            }
            Problem::MissingCwd { cwd } => {
                write!(f, "`cwd` {} does not exist", cwd.display())
            }
            Problem::CwdNotDirectory { cwd } => {
                write!(f, "`cwd` {} is not a directory", cwd.display())
            }
        }
    }
}

/// The harness argv and the adapter argv of `spec`, expanded with `lookup`
/// (the environment they will be spawned from), and every problem found.
pub fn preflight(spec: &AgentSpec, lookup: impl Fn(&str) -> Option<OsString>) -> Vec<Problem> {
    let mut problems = Vec::new();
    match std::fs::metadata(&spec.cwd) {
        Ok(meta) if !meta.is_dir() => problems.push(Problem::CwdNotDirectory {
            cwd: spec.cwd.clone(),
        }),
        Ok(_) => {}
        Err(_) => problems.push(Problem::MissingCwd {
            cwd: spec.cwd.clone(),
        }),
    }
    // The harness sees the declared PATH if the declaration sets one.
    let path_var = spec
        .env
        .get("PATH")
        .map(OsString::from)
        .or_else(|| lookup("PATH"));
    let commands = [
        ("`command`", spec.command.as_deref()),
        (ADAPTER_COMMAND, spec.adapter_command()),
    ];
    for (what, argv) in commands {
        let Some(argv) = argv else { continue };
        match expand_argv(argv, &lookup) {
            Err(error) => problems.push(Problem::Variable { what, error }),
            Ok(expanded) => {
                if let Some(program) = expanded.first()
                    && let Err(problem) = find_program(what, program, &spec.cwd, path_var.as_ref())
                {
                    problems.push(problem);
                }
            }
        }
    }
    problems
}

/// Where exec would find `program`: a path with a `/` (relative to `cwd`),
/// else the first executable of that name in `path`.
pub fn find_program(
    what: &'static str,
    program: &OsString,
    cwd: &Path,
    path: Option<&OsString>,
) -> Result<PathBuf, Problem> {
    let shown = program.to_string_lossy().into_owned();
    if program.as_bytes().contains(&b'/') {
        let candidate = cwd.join(program);
        return match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(candidate),
            Ok(_) => Err(Problem::NotExecutable {
                what,
                path: candidate,
            }),
            Err(_) => Err(Problem::ProgramNotFound {
                what,
                program: shown,
                searched: None,
            }),
        };
    }
    let searched = path.cloned().unwrap_or_default();
    for dir in std::env::split_paths(&searched) {
        // An empty PATH entry means the current directory, as for exec.
        let dir = if dir.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            dir
        };
        let candidate = dir.join(program);
        if std::fs::metadata(&candidate)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        {
            return Ok(candidate);
        }
    }
    Err(Problem::ProgramNotFound {
        what,
        program: shown,
        searched: Some(searched),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::check_bytes;

    fn spec(text: &str, dir: &Path) -> AgentSpec {
        let checked = check_bytes("t.kdl", text.as_bytes(), dir);
        assert!(!checked.has_errors(), "{}", checked.render_diagnostics());
        checked.agents.into_iter().next().expect("one agent")
    }

    #[test]
    fn a_missing_program_a_missing_cwd_and_an_unset_variable_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let agent = spec(
            r#"agent "w" {
  command "my-agent-tui"
  cwd "nowhere"
  ding {
    delivery "turn-boundary+fresh-idle"
    adapter { command "$ST_HOOKS/adapter" }
  }
}"#,
            dir.path(),
        );
        let problems = preflight(&agent, |name| {
            (name == "PATH").then(|| OsString::from("/nonexistent-bin"))
        });
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 3, "{shown:?}");
        assert!(shown[0].starts_with("`cwd` ") && shown[0].ends_with("nowhere does not exist"));
        assert_eq!(
            shown[1],
            "`command`: program `my-agent-tui` is not found on PATH (/nonexistent-bin)"
        );
        assert!(
            shown[2].starts_with("adapter `command`: `$ST_HOOKS` is not set"),
            "{}",
            shown[2]
        );
        assert!(problems[2].is_error_for_check());
        assert!(!problems[1].is_error_for_check());
    }

    #[test]
    fn programs_are_found_the_way_exec_finds_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).expect("bin");
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").expect("tool");
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::write(bin.join("plain"), "").expect("plain");
        let path = Some(OsString::from(format!("/nonexistent:{}", bin.display())));
        assert_eq!(
            find_program("c", &"tool".into(), dir.path(), path.as_ref()),
            Ok(tool.clone())
        );
        assert!(find_program("c", &"plain".into(), dir.path(), path.as_ref()).is_err());
        assert_eq!(
            find_program("c", &"bin/tool".into(), dir.path(), None),
            Ok(tool)
        );
        assert!(matches!(
            find_program("c", &"bin/plain".into(), dir.path(), None),
            Err(Problem::NotExecutable { .. })
        ));
    }

    #[test]
    fn the_declared_path_is_the_one_searched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let agent = spec(
            r#"agent "w" {
  command "sh"
  env { PATH "/nonexistent-bin"; }
}"#,
            dir.path(),
        );
        let problems = preflight(&agent, |name| {
            (name == "PATH").then(|| OsString::from("/bin:/usr/bin"))
        });
        assert!(
            matches!(&problems[..], [Problem::ProgramNotFound { .. }]),
            "{problems:?}"
        );
    }
}
