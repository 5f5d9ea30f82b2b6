//! A scratch `CODEX_HOME` in which Codex CLI 0.169.0 starts straight into
//! an empty composer against the loopback model, with no first-run dialog.
//!
//! `config.toml` names a model provider `mock` on the model server's
//! `/v1` (`wire_api = "responses"`, the key read from the variable that
//! `env_key` names), the approval policy and sandbox for the permission
//! mode, and trusts the project (no "do you trust this folder" dialog).
//! Without an auth file Codex asks no login question once a provider with
//! an `env_key` is chosen. The file is this room's own: a prepared home is
//! a scratch home, and `config.toml` is written whole every time.
//!
//! Permission modes: `manual` is `approval_policy = "on-request"` with
//! `sandbox_mode = "read-only"` (a command the model asks to run outside
//! the sandbox opens an approval dialog; Codex 0.169 refuses
//! `"untrusted"`); `auto` is `"never"` with `"danger-full-access"`.
//!
//! Codex starts a background `codex app-server` daemon by default (copied
//! under `CODEX_HOME/packages/`, about 400 MB, and it outlives the TUI);
//! this home keeps that default, so what runs is what users run. Whoever
//! starts the harness ends the daemon too (docs/providers/model-servers.md).

use std::fs;

use anyhow::{Context, Result};

use crate::launch::{Launch, MOCK_API_KEY, Permission, Setup};

use ding::providers::codex::trust::toml_string;

/// The variable `config.toml`'s `env_key` names.
pub const API_KEY_VARIABLE: &str = "MOCK_MODEL_API_KEY";

/// The model name Codex is told to use (Codex warns that it has no
/// metadata for it, in its footer, and works).
pub const MODEL: &str = "mock-model";

pub fn prepare(setup: &Setup) -> Result<Launch> {
    let cwd = setup.create_dirs()?;
    let codex_home = setup.home.join(".codex");
    fs::create_dir_all(&codex_home).with_context(|| format!("create {}", codex_home.display()))?;
    let config = config_toml(&setup.model_url, setup.permission, &cwd.to_string_lossy());
    let path = codex_home.join("config.toml");
    fs::write(&path, config).with_context(|| format!("write {}", path.display()))?;
    let hooks = codex_home.join("hooks.json");
    if setup.ask_at_startup {
        fs::write(&hooks, USERS_OWN_HOOK).with_context(|| format!("write {}", hooks.display()))?;
    }
    Ok(Launch::new(
        vec![setup.binary.to_string_lossy().into_owned()],
        &[
            ("HOME", setup.home.to_string_lossy().as_ref()),
            ("CODEX_HOME", codex_home.to_string_lossy().as_ref()),
            (API_KEY_VARIABLE, MOCK_API_KEY),
        ],
        cwd,
    ))
}

/// A hook of the person's own that Codex has not been told to trust: at
/// startup Codex 0.169.0 asks about it ("Hooks need review"), in every
/// mode, DING's launcher included (an untrusted folder, by contrast, it
/// asks about only in a git repository, and never under the launcher's
/// remote app-server). It does nothing if trusted.
const USERS_OWN_HOOK: &str =
    r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"true","timeout":5}]}]}}"#;

/// The whole `config.toml`.
fn config_toml(model_url: &str, permission: Permission, cwd: &str) -> String {
    let (approval, sandbox) = match permission {
        Permission::Manual => ("on-request", "read-only"),
        Permission::Auto => ("never", "danger-full-access"),
    };
    let base_url = format!("{}/v1", model_url.trim_end_matches('/'));
    format!(
        "# Written by `ding-eval harness-env`: Codex against a loopback mock model.\n\
         model = {model}\n\
         model_provider = \"mock\"\n\
         approval_policy = \"{approval}\"\n\
         sandbox_mode = \"{sandbox}\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [model_providers.mock]\n\
         name = \"mock\"\n\
         base_url = {base_url}\n\
         wire_api = \"responses\"\n\
         env_key = \"{API_KEY_VARIABLE}\"\n\
         \n\
         [projects.{cwd}]\n\
         trust_level = \"trusted\"\n",
        model = toml_string(MODEL),
        base_url = toml_string(&base_url),
        cwd = toml_string(cwd),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn setup(dir: &Path, permission: Permission) -> Setup {
        Setup {
            binary: PathBuf::from("/opt/codex"),
            home: dir.join("home"),
            cwd: dir.join("project"),
            model_url: "http://127.0.0.1:9/".into(),
            permission,
            ask_at_startup: false,
            outside_dirs: Vec::new(),
        }
    }

    #[test]
    fn asked_to_ask_at_startup_a_hook_of_the_persons_own_is_left_untrusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let trusted = prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        assert!(!dir.path().join("home/.codex/hooks.json").exists());
        let untrusted = Setup {
            ask_at_startup: true,
            ..setup(dir.path(), Permission::Manual)
        };
        assert_eq!(prepare(&untrusted).expect("prepare"), trusted);
        let hooks: serde_json::Value = serde_json::from_slice(
            &fs::read(dir.path().join("home/.codex/hooks.json")).expect("hooks.json"),
        )
        .expect("json");
        assert_eq!(
            hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "true"
        );
        let config =
            fs::read_to_string(dir.path().join("home/.codex/config.toml")).expect("config");
        assert!(!config.contains("hooks.state"), "{config}");
    }

    #[test]
    fn the_config_names_the_mock_provider_and_trusts_the_project() {
        let dir = tempfile::tempdir().expect("tempdir");
        let launch = prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        let cwd = fs::canonicalize(dir.path().join("project")).expect("cwd");
        assert_eq!(launch.argv, ["/opt/codex"]);
        assert_eq!(launch.cwd, cwd);
        let codex_home = dir.path().join("home/.codex");
        assert!(
            launch
                .env
                .contains(&("CODEX_HOME".into(), codex_home.to_string_lossy().into()))
        );
        assert!(
            launch
                .env
                .contains(&(API_KEY_VARIABLE.into(), MOCK_API_KEY.into()))
        );
        let config = fs::read_to_string(codex_home.join("config.toml")).expect("config");
        for line in [
            "model_provider = \"mock\"",
            "approval_policy = \"on-request\"",
            "sandbox_mode = \"read-only\"",
            "base_url = \"http://127.0.0.1:9/v1\"",
            "wire_api = \"responses\"",
            "env_key = \"MOCK_MODEL_API_KEY\"",
            &format!("[projects.\"{}\"]", cwd.display()),
            "trust_level = \"trusted\"",
        ] {
            assert!(config.lines().any(|l| l == line), "{line} in:\n{config}");
        }
    }

    #[test]
    fn auto_permission_never_asks() {
        let config = config_toml("http://h", Permission::Auto, "/p");
        assert!(config.contains("approval_policy = \"never\""), "{config}");
        assert!(
            config.contains("sandbox_mode = \"danger-full-access\""),
            "{config}"
        );
    }
}
