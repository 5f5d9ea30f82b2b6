//! `ding compile-agent gemini`: the agent declaration for Gemini CLI under
//! `turn-boundary+fresh-idle`, and the hooks it relies on merged into the
//! project's `.gemini/settings.json` (see `settings.rs`).
//!
//! The declaration runs `gemini` (or the given argv) in the project, with
//! the adapter `$ST_HOOKS/gemini-ding-adapter --settings FILE`, so the
//! adapter can say in `ding status` whether the hooks are still there.
//! Secrets never go into it: the harness inherits `GEMINI_API_KEY` (or a
//! login) from the environment of `ding up`. Gemini CLI has no native
//! idle path, so `--idle-path` changes nothing: idle work is the typed
//! notice. An `--env` under which Gemini CLI runs headless or draws no
//! colour (`environment.rs`) is refused, and nothing is written.

use anyhow::Result;

use crate::adapter::compile::{CompileRequest, Compiled};
use crate::adapter::settings_compile::{self, SettingsHarness};

use super::settings::{PROVIDER, SETTINGS_FILE, hook_entries, is_ours};

/// The program a declaration runs when no argv is given: the installed
/// Gemini CLI on `PATH`.
pub const DEFAULT_PROGRAM: &str = "gemini";

/// Gemini CLI, for the kit's settings-file compiler.
const HARNESS: SettingsHarness = SettingsHarness {
    provider: PROVIDER,
    title: "Gemini CLI",
    settings_file: SETTINGS_FILE,
    default_program: DEFAULT_PROGRAM,
    where_hooks_run: " (they run only in a trusted folder)",
    key_variable: "GEMINI_API_KEY",
    is_ours,
};

pub fn compile(request: &CompileRequest) -> Result<Compiled> {
    // Before anything is written: a variable that runs Gemini CLI headless
    // or without colour leaves DING nothing to read.
    super::environment::check_declared(&request.env).map_err(anyhow::Error::msg)?;
    settings_compile::compile(request, &HARNESS, &hook_entries(&request.ding), &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn request(cwd: &std::path::Path) -> CompileRequest {
        CompileRequest::example(cwd)
    }

    /// `--env CI=false` (the advice docs/providers/gemini.md once gave) draws Gemini CLI
    /// without colour: refused, with the fix, and nothing is written.
    #[test]
    fn an_env_that_stops_gemini_drawing_its_screen_is_refused_before_any_write() {
        let dir = tempfile::tempdir().expect("tempdir");
        for env in [
            vec![("CI", "false")],
            vec![("CI", "true"), ("GITHUB_ACTIONS", "false")],
            vec![("NO_COLOR", "1")],
            vec![("TERM", "dumb")],
            vec![("FORCE_COLOR", "0")],
        ] {
            let request = CompileRequest {
                env: env
                    .iter()
                    .map(|(name, value)| (name.to_string(), value.to_string()))
                    .collect(),
                ..request(dir.path())
            };
            let refused = compile(&request).expect_err("refused").to_string();
            assert!(refused.starts_with("--env "), "{refused}");
            assert!(refused.contains("unset"), "{refused}");
            assert!(!dir.path().join(SETTINGS_FILE).exists(), "{env:?}");
        }
        let both_false = CompileRequest {
            env: vec![
                ("CI".into(), "false".into()),
                ("GITHUB_ACTIONS".into(), "false".into()),
            ],
            ..request(dir.path())
        };
        assert!(compile(&both_false).is_ok());
    }

    #[test]
    fn the_hooks_merge_beside_the_users_and_twice_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join(SETTINGS_FILE);
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(
            &file,
            r#"{"ui": {"theme": "GitHub"}, "hooks": {"AfterAgent": [{"matcher": "*", "hooks": [{"type": "command", "command": "notify-send done"}]}]}}"#,
        )
        .expect("write");
        let compiled = compile(&request(dir.path())).expect("compile");
        assert!(compiled.written[0].changed);
        let settings: Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        assert_eq!(settings["ui"]["theme"], "GitHub");
        let after_agent = settings["hooks"]["AfterAgent"].as_array().expect("list");
        assert_eq!(after_agent.len(), 2, "{after_agent:?}");
        assert_eq!(after_agent[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(
            after_agent[1]["hooks"][0]["command"],
            super::super::settings::command(&crate::ding_binary::ding_program(), "AfterAgent")
        );
        assert_eq!(after_agent[1]["matcher"], "*");
        let again = compile(&request(dir.path())).expect("compile again");
        assert!(!again.written[0].changed);
        assert_eq!(compiled.declaration.command, ["gemini"]);
        let adapter = compiled.declaration.adapter.expect("adapter");
        assert!(
            adapter.join(" ").ends_with(&format!(
                "gemini-ding-adapter --settings {}",
                file.display()
            )),
            "{adapter:?}"
        );
    }
}
