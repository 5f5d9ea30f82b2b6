//! A scratch home in which Claude Code 2.1.328 starts straight into an
//! empty composer against the loopback model, with no first-run dialog.
//!
//! `<home>/.claude.json` carries what the first run would ask for:
//! `hasCompletedOnboarding` (the welcome and login flow), `theme` (the
//! theme picker), `projects.<cwd>.hasTrustDialogAccepted` (the folder
//! trust dialog) and `customApiKeyResponses.approved` (the "Detected a
//! custom API key" dialog, whose default answer is No). Claude Code writes
//! its own state into the same file, so an existing file is merged, never
//! replaced. The environment points the API at the mock model and turns
//! off traffic the mock cannot answer (updates, telemetry).
//!
//! To make Claude Code ask something at startup (`Setup::ask_at_startup`)
//! the project is marked untrusted: it then asks whether to trust the
//! folder, "No, exit" selected.
//!
//! Permission modes: both start in `--permission-mode manual` (Claude
//! Code's default is `auto`, whose safety check runs on Anthropic's server
//! and fails against a mock: it stops the turn with a dialog). `auto` adds
//! `--allowedTools Bash`, so commands run without asking;
//! `bypassPermissions` is refused when running as root, as CI does.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::home_files::{object, read_json, write_json};
use crate::launch::{Launch, MOCK_API_KEY, Permission, Setup};

pub fn prepare(setup: &Setup) -> Result<Launch> {
    let cwd = setup.create_dirs()?;
    let config_path = setup.home.join(".claude.json");
    let config = first_run_answered(read_json(&config_path)?, &cwd, !setup.ask_at_startup)?;
    write_json(&config_path, &config)?;
    let mut argv = vec![
        setup.binary.to_string_lossy().into_owned(),
        "--permission-mode".into(),
        "manual".into(),
    ];
    if setup.permission == Permission::Auto {
        argv.extend(["--allowedTools".into(), "Bash".into()]);
    }
    Ok(Launch::new(
        argv,
        &[
            ("HOME", setup.home.to_string_lossy().as_ref()),
            ("ANTHROPIC_BASE_URL", setup.model_url.as_str()),
            ("ANTHROPIC_API_KEY", MOCK_API_KEY),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ],
        cwd,
    ))
}

/// `config` with every first-run question answered for project `cwd`,
/// the folder's trust as `trusted` says (untrusted: Claude Code asks).
fn first_run_answered(mut config: Value, cwd: &Path, trusted: bool) -> Result<Value> {
    let root = object(&mut config, ".claude.json")?;
    root.insert("hasCompletedOnboarding".into(), json!(true));
    root.entry("theme").or_insert(json!("dark"));
    let responses = object(
        root.entry("customApiKeyResponses")
            .or_insert(json!({"approved": [], "rejected": []})),
        "customApiKeyResponses",
    )?;
    let approved = responses.entry("approved").or_insert(json!([]));
    let list = approved
        .as_array_mut()
        .context("customApiKeyResponses.approved is not a list")?;
    if !list.iter().any(|key| key == MOCK_API_KEY) {
        list.push(json!(MOCK_API_KEY));
    }
    let projects = object(root.entry("projects").or_insert(json!({})), "projects")?;
    let project = object(
        projects
            .entry(cwd.to_string_lossy().into_owned())
            .or_insert(json!({})),
        "the project entry",
    )?;
    project.insert("hasTrustDialogAccepted".into(), json!(trusted));
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use std::fs;
    use std::path::PathBuf;

    fn setup(dir: &Path, permission: Permission) -> Setup {
        Setup {
            binary: PathBuf::from("/opt/claude"),
            home: dir.join("home"),
            cwd: dir.join("project"),
            model_url: "http://127.0.0.1:9".into(),
            permission,
            ask_at_startup: false,
            outside_dirs: Vec::new(),
        }
    }

    #[test]
    fn asked_to_ask_at_startup_the_project_is_untrusted_so_claude_asks_about_the_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let trusted = prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        let untrusted = Setup {
            ask_at_startup: true,
            ..setup(dir.path(), Permission::Manual)
        };
        assert_eq!(prepare(&untrusted).expect("prepare"), trusted);
        let config: Value =
            serde_json::from_slice(&fs::read(dir.path().join("home/.claude.json")).expect("read"))
                .expect("json");
        let cwd = fs::canonicalize(dir.path().join("project")).expect("cwd");
        assert_eq!(
            config["projects"][cwd.to_string_lossy().as_ref()]["hasTrustDialogAccepted"],
            false
        );
        assert_eq!(config["hasCompletedOnboarding"], true);
    }

    #[test]
    fn the_home_answers_every_first_run_question_and_the_env_points_at_the_mock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let launch = prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        let cwd = fs::canonicalize(dir.path().join("project")).expect("cwd");
        assert_eq!(launch.cwd, cwd);
        assert_eq!(launch.argv, ["/opt/claude", "--permission-mode", "manual"]);
        let env: Map<String, Value> = launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(env["ANTHROPIC_API_KEY"], MOCK_API_KEY);
        assert_eq!(env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"], "1");
        assert_eq!(env["HOME"], json!(dir.path().join("home")));
        let config: Value =
            serde_json::from_slice(&fs::read(dir.path().join("home/.claude.json")).expect("read"))
                .expect("json");
        assert_eq!(config["hasCompletedOnboarding"], true);
        assert_eq!(
            config["customApiKeyResponses"]["approved"],
            json!([MOCK_API_KEY])
        );
        assert_eq!(
            config["projects"][cwd.to_string_lossy().as_ref()]["hasTrustDialogAccepted"],
            true
        );
        let auto = prepare(&setup(dir.path(), Permission::Auto)).expect("prepare");
        assert_eq!(
            auto.argv,
            [
                "/opt/claude",
                "--permission-mode",
                "manual",
                "--allowedTools",
                "Bash"
            ]
        );
    }

    #[test]
    fn an_existing_config_is_merged_and_preparing_twice_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("home")).expect("mkdir");
        fs::write(
            dir.path().join("home/.claude.json"),
            r#"{"numStartups": 3, "theme": "light", "customApiKeyResponses": {"approved": ["other"]}}"#,
        )
        .expect("write");
        prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        let once = fs::read(dir.path().join("home/.claude.json")).expect("read");
        prepare(&setup(dir.path(), Permission::Manual)).expect("prepare again");
        assert_eq!(
            fs::read(dir.path().join("home/.claude.json")).expect("read"),
            once
        );
        let config: Value = serde_json::from_slice(&once).expect("json");
        assert_eq!(config["numStartups"], 3);
        assert_eq!(config["theme"], "light");
        assert_eq!(
            config["customApiKeyResponses"]["approved"],
            json!(["other", MOCK_API_KEY])
        );
    }

    #[test]
    fn a_config_that_is_not_json_is_refused_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("home")).expect("mkdir");
        fs::write(dir.path().join("home/.claude.json"), "{nope").expect("write");
        assert!(prepare(&setup(dir.path(), Permission::Manual)).is_err());
        assert_eq!(
            fs::read_to_string(dir.path().join("home/.claude.json")).expect("read"),
            "{nope"
        );
    }
}
