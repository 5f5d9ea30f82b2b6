//! Where one agent's runtime files and durable state live, and what the
//! files in them are called, so that every process agrees on the names.
//!
//! * Runtime directory (sockets, pid files, logs; gone at logout or reboot
//!   and that is fine): `$XDG_RUNTIME_DIR/ding/NAME`, or
//!   `/tmp/ding-<uid>/NAME` when `XDG_RUNTIME_DIR` is unset. Both levels
//!   are created with mode 0700 and refused if they are symbolic links, are
//!   owned by another uid or are accessible to group or others
//!   ([`Privacy::OwnerOnly`]): under a shared `/tmp` anyone could have
//!   created `ding-<uid>` first, to read or hijack the sockets.
//! * State directory (the ownership journal, which must survive a reboot):
//!   `$XDG_STATE_HOME/ding/NAME`, or `$HOME/.local/state/ding/NAME`;
//!   created 0700, refused if owned by another uid or writable by group or
//!   others ([`Privacy::NoForeignWrites`]).
//!
//! XDG variables that are empty or relative are ignored, as the XDG base
//! directory specification requires. The environment comes in as a
//! [`DirsEnv`] value so tests never touch the process environment. This
//! module creates directories; it opens no file in them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::journal_store::JOURNAL_FILE;
use crate::decl::{MAX_AGENT_NAME_BYTES, is_valid_agent_name};
use crate::private_dir::{Privacy, current_uid, ensure_dir};

/// The part of the environment the directories depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirsEnv {
    pub xdg_runtime_dir: Option<OsString>,
    pub xdg_state_home: Option<OsString>,
    pub home: Option<OsString>,
    /// The effective uid: the owner the directories must have.
    pub uid: u32,
}

impl DirsEnv {
    /// Reads `XDG_RUNTIME_DIR`, `XDG_STATE_HOME`, `HOME` and the euid.
    pub fn from_process() -> DirsEnv {
        DirsEnv::from_lookup(|key| std::env::var_os(key), current_uid())
    }

    /// Builds from any variable lookup, for tests and embedding.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>, uid: u32) -> DirsEnv {
        DirsEnv {
            xdg_runtime_dir: lookup("XDG_RUNTIME_DIR"),
            xdg_state_home: lookup("XDG_STATE_HOME"),
            home: lookup("HOME"),
            uid,
        }
    }
}

/// One agent's runtime and state directories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentPaths {
    /// `$XDG_RUNTIME_DIR/ding` or `/tmp/ding-<uid>`: shared by all agents.
    runtime_base: PathBuf,
    runtime: PathBuf,
    state: PathBuf,
    uid: u32,
}

/// An absolute path from an XDG variable, or `None` if unset, empty or
/// relative.
fn absolute(value: Option<&OsString>) -> Option<PathBuf> {
    value.map(PathBuf::from).filter(|path| path.is_absolute())
}

/// Agent names become directory names; the declaration's rule
/// ([`is_valid_agent_name`]) keeps them single, harmless path components.
pub fn check_agent_name(name: &str) -> Result<()> {
    if !is_valid_agent_name(name) {
        bail!(
            "agent name {name:?} is not allowed\nhint: agent names use letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most {MAX_AGENT_NAME_BYTES} bytes"
        );
    }
    Ok(())
}

impl AgentPaths {
    /// Computes the directories of agent `name`; touches nothing.
    pub fn resolve(name: &str, env: &DirsEnv) -> Result<AgentPaths> {
        check_agent_name(name)?;
        let runtime_base = match absolute(env.xdg_runtime_dir.as_ref()) {
            Some(runtime_dir) => runtime_dir.join("ding"),
            None => PathBuf::from(format!("/tmp/ding-{}", env.uid)),
        };
        let state_base = match (
            absolute(env.xdg_state_home.as_ref()),
            absolute(env.home.as_ref()),
        ) {
            (Some(state_home), _) => state_home.join("ding"),
            (None, Some(home)) => home.join(".local/state/ding"),
            (None, None) => bail!(
                "cannot place the state directory of agent {name}: neither XDG_STATE_HOME nor HOME is set to an absolute path"
            ),
        };
        Ok(AgentPaths {
            runtime: runtime_base.join(name),
            runtime_base,
            state: state_base.join(name),
            uid: env.uid,
        })
    }

    pub fn runtime_dir(&self) -> &Path {
        &self.runtime
    }

    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// Creates the runtime directory and checks it and its base.
    pub fn ensure_runtime_dir(&self) -> Result<()> {
        ensure_dir(&self.runtime_base, self.uid, Privacy::OwnerOnly)?;
        ensure_dir(&self.runtime, self.uid, Privacy::OwnerOnly)
    }

    /// Creates the state directory and checks it.
    pub fn ensure_state_dir(&self) -> Result<()> {
        ensure_dir(&self.state, self.uid, Privacy::NoForeignWrites)
    }

    /// The PTY host's control socket.
    pub fn pty_socket(&self) -> PathBuf {
        self.runtime.join("pty.sock")
    }

    /// The sidecar's status and control socket.
    pub fn sidecar_socket(&self) -> PathBuf {
        self.runtime.join("sidecar.sock")
    }

    /// The hook channel: the adapter listens here; hooks running inside the
    /// harness connect (the harness's environment names it).
    pub fn hook_socket(&self) -> PathBuf {
        self.runtime.join("hook.sock")
    }

    pub fn sidecar_pid(&self) -> PathBuf {
        self.runtime.join("sidecar.pid")
    }

    pub fn pty_pid(&self) -> PathBuf {
        self.runtime.join("pty.pid")
    }

    /// The adapter's process group, while the sidecar runs one.
    pub fn adapter_pid(&self) -> PathBuf {
        self.runtime.join("adapter.pid")
    }

    /// Present while the agent was stopped on purpose (`ding down`), until
    /// the next `ding up`: a supervisor leaves such an agent stopped.
    pub fn down_marker(&self) -> PathBuf {
        self.runtime.join("stopped-by-down")
    }

    pub fn sidecar_log(&self) -> PathBuf {
        self.runtime.join("sidecar.log")
    }

    pub fn pty_log(&self) -> PathBuf {
        self.runtime.join("pty.log")
    }

    /// The ownership journal (see `journal_store`).
    pub fn journal(&self) -> PathBuf {
        self.state.join(JOURNAL_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn env(vars: &[(&str, &str)], uid: u32) -> DirsEnv {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        DirsEnv::from_lookup(|key| map.get(key).cloned(), uid)
    }

    #[test]
    fn xdg_directories_win_when_set() {
        let paths = AgentPaths::resolve(
            "worker",
            &env(
                &[
                    ("XDG_RUNTIME_DIR", "/run/user/1000"),
                    ("XDG_STATE_HOME", "/home/u/state"),
                    ("HOME", "/home/u"),
                ],
                1000,
            ),
        )
        .unwrap();
        assert_eq!(paths.runtime_dir(), Path::new("/run/user/1000/ding/worker"));
        assert_eq!(paths.state_dir(), Path::new("/home/u/state/ding/worker"));
        assert_eq!(
            paths.pty_socket(),
            Path::new("/run/user/1000/ding/worker/pty.sock")
        );
        assert_eq!(
            paths.journal(),
            Path::new("/home/u/state/ding/worker/journal.json")
        );
    }

    #[test]
    fn fallbacks_are_per_uid_tmp_and_home_local_state() {
        let paths = AgentPaths::resolve("w", &env(&[("HOME", "/home/u")], 1234)).unwrap();
        assert_eq!(paths.runtime_dir(), Path::new("/tmp/ding-1234/w"));
        assert_eq!(paths.state_dir(), Path::new("/home/u/.local/state/ding/w"));
    }

    #[test]
    fn empty_or_relative_xdg_variables_are_ignored() {
        let paths = AgentPaths::resolve(
            "w",
            &env(
                &[
                    ("XDG_RUNTIME_DIR", ""),
                    ("XDG_STATE_HOME", "rel/state"),
                    ("HOME", "/h"),
                ],
                7,
            ),
        )
        .unwrap();
        assert_eq!(paths.runtime_dir(), Path::new("/tmp/ding-7/w"));
        assert_eq!(paths.state_dir(), Path::new("/h/.local/state/ding/w"));
    }

    #[test]
    fn no_home_and_no_state_home_is_an_error() {
        let err = AgentPaths::resolve("w", &env(&[], 7)).unwrap_err();
        assert!(format!("{err:#}").contains("neither XDG_STATE_HOME nor HOME"));
    }

    #[test]
    fn agent_names_must_be_single_harmless_components() {
        for bad in ["", "..", ".hidden", "a/b", "-x", &"a".repeat(65)] {
            assert!(
                AgentPaths::resolve(bad, &env(&[("HOME", "/h")], 1)).is_err(),
                "{bad:?}"
            );
        }
        check_agent_name("worker-2.b_c").unwrap();
    }

    #[test]
    fn runtime_dirs_are_created_owner_only_and_shared_ones_refused() {
        let temp = tempfile::tempdir().unwrap();
        let run = temp.path().join("run");
        let vars = [
            ("XDG_RUNTIME_DIR", run.to_str().unwrap()),
            ("HOME", temp.path().to_str().unwrap()),
        ];
        let paths = AgentPaths::resolve("worker", &env(&vars, current_uid())).unwrap();
        paths.ensure_runtime_dir().unwrap();
        paths.ensure_state_dir().unwrap();
        for dir in [
            paths.runtime_dir(),
            run.join("ding").as_path(),
            paths.state_dir(),
        ] {
            let mode = fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{} mode {mode:o}", dir.display());
        }
        fs::set_permissions(run.join("ding"), fs::Permissions::from_mode(0o755)).unwrap();
        let err = paths.ensure_runtime_dir().unwrap_err();
        assert!(
            format!("{err:#}").contains("accessible to group or others"),
            "{err:#}"
        );
    }

    #[test]
    fn runtime_dir_of_another_uid_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let vars = [
            ("XDG_RUNTIME_DIR", temp.path().to_str().unwrap()),
            ("HOME", "/h"),
        ];
        let paths = AgentPaths::resolve("w", &env(&vars, current_uid().wrapping_add(1))).unwrap();
        // ding/ does not exist yet: it gets created (by us), then found to
        // belong to a different uid than the one the paths are for.
        let err = paths.ensure_runtime_dir().unwrap_err();
        assert!(format!("{err:#}").contains("owned by uid"), "{err:#}");
    }
}
