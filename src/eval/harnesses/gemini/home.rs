//! A scratch home in which Gemini CLI 0.61.0 starts straight into an empty
//! composer against the loopback model, with no first-run dialog.
//!
//! `<home>/.gemini/settings.json` carries what the first run would ask or
//! nag about (docs/providers/gemini-findings.md, "Clean model-free
//! start"): `security.auth.selectedType` (the auth dialog and the API key
//! entry), `security.folderTrust.enabled: false` (the folder trust dialog;
//! hooks run only in a trusted folder), no auto-update, no usage
//! statistics or telemetry, no IDE integration and no true-colour warning.
//! An existing file is merged, never replaced: keys it already has keep
//! their values. The environment points the API at the mock model, and
//! sets `CI` and `GITHUB_ACTIONS` to `false`: Gemini CLI runs headless,
//! whatever its terminal, when either is `true` (as on a CI machine), and
//! then prints "No input provided via stdin" and exits. Both, never `CI`
//! alone: Gemini CLI draws no colour while `CI` is set, whatever its
//! value, and its composer cannot be read without colour; `GITHUB_ACTIONS`
//! beside it gives 24-bit colour back (`environment.rs`).
//!
//! Gemini CLI's file tools refuse a path outside its workspace, so each of
//! `Setup::outside_dirs` (the evaluation's markers) is included in it
//! (`context.includeDirectories`). Only those: an included directory's
//! files are listed in the session context the model reads, and the
//! inbox, beside the project, must not be. Each is also trusted in
//! `<home>/.gemini/trustedFolders.json`: with folder trust on (below),
//! Gemini CLI otherwise asks a second question at startup, "Do you trust the
//! following folders being added to this workspace?", that no person in a
//! trial is there to answer (the markers are the evaluation's, not the
//! project's).
//!
//! To make Gemini CLI ask something at startup (`Setup::ask_at_startup`)
//! folder trust stays on and the project is not trusted: it then asks
//! whether to trust the folder, "Trust folder" highlighted.
//!
//! Permission modes, as a policy file of the home
//! (`.gemini/policies/mock-commands.toml`, which Gemini CLI loads from the
//! user's policies directory): `manual` lets the mock model's own harmless
//! command run (`echo mock-run-start`, `sleep`, `echo mock-run-done`: the
//! CLI checks each part of a compound command) and asks before any other,
//! as the CLI's default approval mode does; `auto` lets every command run.
//! (`tools.allowed` or `--allowed-tools` would deny every command not
//! listed, with no dialog: "Tool execution denied by policy".)

use std::fs;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::home_files::{object, read_json, write_json, write_text};
use crate::launch::{Launch, MOCK_API_KEY, Permission, Setup};

/// The settings file under the home.
const SETTINGS: &str = ".gemini/settings.json";

/// The policy file under the home.
const POLICY: &str = ".gemini/policies/mock-commands.toml";

/// The trusted folders file under the home.
const TRUSTED_FOLDERS: &str = ".gemini/trustedFolders.json";

/// The policy rule for each permission mode.
fn policy(permission: Permission) -> String {
    let prefix = match permission {
        Permission::Manual => {
            "commandPrefix = [\"echo mock-run-start\", \"sleep\", \"echo mock-run-done\"]\n"
        }
        Permission::Auto => "",
    };
    format!(
        "# Written by ding-eval harness-env: the mock model's commands.\n\
         [[rule]]\ntoolName = \"run_shell_command\"\n{prefix}decision = \"allow\"\npriority = 200\n"
    )
}

pub fn prepare(setup: &Setup) -> Result<Launch> {
    let cwd = setup.create_dirs()?;
    let path = setup.home.join(SETTINGS);
    let mut settings = first_run_answered(read_json(&path)?, !setup.ask_at_startup)?;
    let trusted_path = setup.home.join(TRUSTED_FOLDERS);
    let mut trusted = read_json(&trusted_path)?;
    for dir in &setup.outside_dirs {
        fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
        include_directory(&mut settings, dir)?;
        object(&mut trusted, "trustedFolders.json")?
            .insert(dir.to_string_lossy().into_owned(), json!("TRUST_FOLDER"));
    }
    write_json(&path, &settings)?;
    if !setup.outside_dirs.is_empty() {
        write_json(&trusted_path, &trusted)?;
    }
    write_text(&setup.home.join(POLICY), &policy(setup.permission))?;
    Ok(Launch::new(
        vec![setup.binary.to_string_lossy().into_owned()],
        &[
            ("HOME", setup.home.to_string_lossy().as_ref()),
            ("GOOGLE_GEMINI_BASE_URL", setup.model_url.as_str()),
            ("GEMINI_API_KEY", MOCK_API_KEY),
            ("CI", "false"),
            ("GITHUB_ACTIONS", "false"),
        ],
        cwd,
    ))
}

/// `settings` with every first-run question answered; the folder trust
/// check on (and the folder untrusted) unless `trusted`. Values the file
/// already has are kept, but for the trust check, which is what the
/// caller asked for.
fn first_run_answered(mut settings: Value, trusted: bool) -> Result<Value> {
    let answers: [(&[&str], Value); 8] = [
        (
            &["security", "auth", "selectedType"],
            json!("gemini-api-key"),
        ),
        (&["general", "enableAutoUpdate"], json!(false)),
        (&["general", "enableAutoUpdateNotification"], json!(false)),
        (&["privacy", "usageStatisticsEnabled"], json!(false)),
        (&["telemetry", "enabled"], json!(false)),
        (&["ide", "enabled"], json!(false)),
        (&["ide", "hasSeenNudge"], json!(true)),
        (&["ui", "showCompatibilityWarnings"], json!(false)),
    ];
    for (keys, value) in answers {
        let (last, parents) = keys.split_last().context("a settings path has a key")?;
        let mut table = object(&mut settings, "settings.json")?;
        for key in parents {
            table = object(table.entry(*key).or_insert(json!({})), key)?;
        }
        table.entry(*last).or_insert(value);
    }
    let security = object(&mut settings, "settings.json")?
        .entry("security")
        .or_insert(json!({}));
    let trust = object(
        object(security, "security")?
            .entry("folderTrust")
            .or_insert(json!({})),
        "folderTrust",
    )?;
    trust.insert("enabled".into(), json!(!trusted));
    Ok(settings)
}

/// `dir` among `context.includeDirectories`, once.
fn include_directory(settings: &mut Value, dir: &std::path::Path) -> Result<()> {
    let context = object(settings, "settings.json")?
        .entry("context")
        .or_insert(json!({}));
    let list = object(context, "context")?
        .entry("includeDirectories")
        .or_insert(json!([]))
        .as_array_mut()
        .context("context.includeDirectories is not a list")?;
    let dir = json!(dir.to_string_lossy());
    if !list.contains(&dir) {
        list.push(dir);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use std::path::{Path, PathBuf};

    fn setup(dir: &Path, permission: Permission) -> Setup {
        Setup {
            binary: PathBuf::from("/opt/gemini.js"),
            home: dir.join("home"),
            cwd: dir.join("project"),
            model_url: "http://127.0.0.1:9".into(),
            permission,
            ask_at_startup: false,
            outside_dirs: Vec::new(),
        }
    }

    fn settings(dir: &Path) -> Value {
        serde_json::from_slice(&fs::read(dir.join("home").join(SETTINGS)).expect("read"))
            .expect("json")
    }

    #[test]
    fn the_home_answers_every_first_run_question_and_the_env_points_at_the_mock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let launch = prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        assert_eq!(
            launch.cwd,
            fs::canonicalize(dir.path().join("project")).expect("cwd")
        );
        assert_eq!(launch.argv, ["/opt/gemini.js"]);
        let env: Map<String, Value> = launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        assert_eq!(env["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(env["GEMINI_API_KEY"], MOCK_API_KEY);
        // Interactive even where the machine says it is CI, and in colour.
        assert_eq!(
            (&env["CI"], &env["GITHUB_ACTIONS"]),
            (&json!("false"), &json!("false"))
        );
        let harness_env = ding::adapter::HarnessEnv::new(
            [("CI".to_string(), "true".to_string())],
            launch.env.clone(),
        );
        assert_eq!(
            ding::providers::gemini::environment::judge(&harness_env),
            None
        );
        assert_eq!(env["HOME"], json!(dir.path().join("home")));
        let written = settings(dir.path());
        assert_eq!(
            written["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(written["security"]["folderTrust"]["enabled"], false);
        assert_eq!(written["ui"]["showCompatibilityWarnings"], false);
        assert_eq!(written["ide"]["hasSeenNudge"], true);
        assert!(written["context"]["includeDirectories"].is_null());
        let markers = dir.path().join("markers");
        let outside = Setup {
            outside_dirs: vec![markers.clone()],
            ..setup(dir.path(), Permission::Manual)
        };
        prepare(&outside).expect("prepare");
        prepare(&outside).expect("prepare again");
        assert_eq!(
            settings(dir.path())["context"]["includeDirectories"],
            json!([markers.to_string_lossy()])
        );
        assert!(markers.is_dir());
        // Trusted, so that folder trust asks nothing about it; the file
        // keeps what the person trusted themselves.
        let trusted_path = dir.path().join("home").join(TRUSTED_FOLDERS);
        let trusted = || -> Value {
            serde_json::from_slice(&fs::read(&trusted_path).expect("trusted folders"))
                .expect("JSON")
        };
        assert_eq!(
            trusted()[markers.to_string_lossy().as_ref()],
            "TRUST_FOLDER"
        );
        fs::write(&trusted_path, r#"{"/src/mine": "TRUST_PARENT"}"#).expect("write");
        prepare(&outside).expect("prepare");
        assert_eq!(trusted()["/src/mine"], "TRUST_PARENT");
        assert_eq!(
            trusted()[markers.to_string_lossy().as_ref()],
            "TRUST_FOLDER"
        );
        let policy = || fs::read_to_string(dir.path().join("home").join(POLICY)).expect("policy");
        assert!(policy().contains("commandPrefix = [\"echo mock-run-start\", \"sleep\""));
        let auto = prepare(&setup(dir.path(), Permission::Auto)).expect("prepare");
        assert_eq!(auto.argv, ["/opt/gemini.js"]);
        assert!(!policy().contains("commandPrefix"), "{}", policy());
        assert!(policy().contains("toolName = \"run_shell_command\""));
    }

    #[test]
    fn asked_to_ask_at_startup_folder_trust_is_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let asking = Setup {
            ask_at_startup: true,
            ..setup(dir.path(), Permission::Manual)
        };
        prepare(&asking).expect("prepare");
        assert_eq!(
            settings(dir.path())["security"]["folderTrust"]["enabled"],
            true
        );
        prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        assert_eq!(
            settings(dir.path())["security"]["folderTrust"]["enabled"],
            false
        );
    }

    #[test]
    fn an_existing_file_is_merged_and_preparing_twice_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("home/.gemini")).expect("mkdir");
        fs::write(
            dir.path().join("home").join(SETTINGS),
            r#"{"ui": {"theme": "GitHub", "showCompatibilityWarnings": true}, "hooks": {"BeforeTool": []}}"#,
        )
        .expect("write");
        prepare(&setup(dir.path(), Permission::Manual)).expect("prepare");
        let once = fs::read(dir.path().join("home").join(SETTINGS)).expect("read");
        prepare(&setup(dir.path(), Permission::Manual)).expect("prepare again");
        assert_eq!(
            fs::read(dir.path().join("home").join(SETTINGS)).expect("read"),
            once
        );
        let written = settings(dir.path());
        assert_eq!(written["ui"]["theme"], "GitHub");
        assert_eq!(written["ui"]["showCompatibilityWarnings"], true);
        assert_eq!(written["hooks"]["BeforeTool"], json!([]));
        assert_eq!(written["telemetry"]["enabled"], false);
    }

    #[test]
    fn a_file_that_is_not_json_is_refused_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("home/.gemini")).expect("mkdir");
        fs::write(dir.path().join("home").join(SETTINGS), "{nope").expect("write");
        assert!(prepare(&setup(dir.path(), Permission::Manual)).is_err());
        assert_eq!(
            fs::read_to_string(dir.path().join("home").join(SETTINGS)).expect("read"),
            "{nope"
        );
    }
}
