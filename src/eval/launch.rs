//! How to start a real harness against a loopback model: the setup a
//! harness room is given, the launch it answers with, and that launch as
//! JSON or as an agent declaration for `ding up`.
//!
//! The harness rooms (`providers::*::home`) write the scratch home (the
//! files that make the harness start straight into an empty composer, with
//! no first-run dialog) and say which argv and environment run it. This
//! module only carries and prints their answer.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use ding::decl::Draft;

/// Whether the harness asks the human before running a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    /// Commands that change anything wait for the human's answer in a
    /// dialog.
    Manual,
    /// Commands run without asking.
    Auto,
}

impl Permission {
    pub fn parse(text: &str) -> Result<Permission> {
        match text {
            "manual" => Ok(Permission::Manual),
            "auto" => Ok(Permission::Auto),
            other => bail!("--permission wants `manual` or `auto`, got `{other}`"),
        }
    }
}

/// What a harness room needs to prepare a harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The harness's native executable.
    pub binary: PathBuf,
    /// A scratch directory that becomes the harness's home; created if
    /// missing. Everything the harness writes stays under it.
    pub home: PathBuf,
    /// The project directory the harness works in; created if missing.
    pub cwd: PathBuf,
    /// The model server's base URL, `http://127.0.0.1:PORT`.
    pub model_url: String,
    pub permission: Permission,
    /// Whether the harness is to ask the person something at startup, in a
    /// dialog of its own (each harness room knows what its harness asks
    /// unprompted: whether to trust the folder, whether to trust a hook).
    pub ask_at_startup: bool,
    /// Directories outside the project that the harness's own tools are to
    /// be able to write (the evaluation's markers, which a dialog's consent
    /// creates); a harness that confines its tools to a workspace gets them
    /// added to it.
    pub outside_dirs: Vec<PathBuf>,
}

/// The API key every prepared harness sends: any string works against the
/// mock model; short enough (at most 20 characters) that a harness that
/// remembers keys by their tail remembers all of it.
pub const MOCK_API_KEY: &str = "mock-model-key";

impl Setup {
    /// Creates the home and the project directory; returns the project
    /// directory's canonical path, which is how the harness will see it
    /// (its trust settings are keyed by it).
    pub fn create_dirs(&self) -> Result<PathBuf> {
        for dir in [&self.home, &self.cwd] {
            fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
        }
        fs::canonicalize(&self.cwd).with_context(|| format!("resolve {}", self.cwd.display()))
    }
}

/// How to run the prepared harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub argv: Vec<String>,
    /// Variables to set on top of the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

impl Launch {
    /// The harness run as `argv` in `cwd`, with `variables` set (the
    /// scratch home's, at least `HOME`).
    pub fn new(argv: Vec<String>, variables: &[(&str, &str)], cwd: PathBuf) -> Launch {
        Launch {
            argv,
            env: variables
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            cwd,
        }
    }

    /// `{"argv":[...],"env":{...},"cwd":"..."}`.
    pub fn to_json(&self) -> Value {
        let env: serde_json::Map<String, Value> = self
            .env
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        json!({"argv": self.argv, "env": env, "cwd": self.cwd.to_string_lossy()})
    }

    /// An agent declaration `agent "NAME"` that runs this launch under the
    /// default (aggressive) policy. Its `ding {}` block is left to whoever
    /// chooses a policy.
    pub fn declaration(&self, agent: &str) -> String {
        Draft {
            name: agent.to_string(),
            command: self.argv.clone(),
            cwd: Some(self.cwd.clone()),
            env: self.env.clone(),
            ..Draft::default()
        }
        .render()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            argv: vec!["/opt/h/bin".into(), "--flag".into(), "a \"q\" \\ b".into()],
            env: vec![
                ("HOME".into(), "/s/home".into()),
                ("KEY".into(), "x\ty".into()),
            ],
            cwd: PathBuf::from("/s/project"),
        }
    }

    #[test]
    fn the_declaration_is_valid_and_keeps_argv_env_and_cwd_exactly() {
        let text = launch().declaration("worker");
        let checked =
            ding::decl::check_bytes("gen.kdl", text.as_bytes(), std::path::Path::new("/s"));
        assert_eq!(checked.diagnostics, [], "{}", checked.render_diagnostics());
        let [agent] = checked.agents.as_slice() else {
            panic!("one agent: {text}");
        };
        assert_eq!(agent.name, "worker");
        assert_eq!(agent.command.as_deref(), Some(launch().argv.as_slice()));
        assert_eq!(agent.cwd, PathBuf::from("/s/project"));
        let env: Vec<(String, String)> = agent.env.clone().into_iter().collect();
        assert_eq!(env, launch().env);
    }

    #[test]
    fn the_json_form_names_argv_env_and_cwd() {
        let value = launch().to_json();
        assert_eq!(value["argv"][2], "a \"q\" \\ b");
        assert_eq!(value["env"]["KEY"], "x\ty");
        assert_eq!(value["cwd"], "/s/project");
    }

    #[test]
    fn permission_words_are_exact() {
        assert_eq!(Permission::parse("manual").ok(), Some(Permission::Manual));
        assert_eq!(Permission::parse("auto").ok(), Some(Permission::Auto));
        assert!(Permission::parse("Manual").is_err());
    }
}
