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
//! their values. The environment points the API at the mock model.
//!
//! To make Gemini CLI ask something at startup (`Setup::ask_at_startup`)
//! folder trust stays on and the project is not trusted: it then asks
//! whether to trust the folder, "Trust folder" highlighted.
//!
//! Permission modes: `manual` is the CLI's default approval mode, which
//! asks before a command that changes anything (`echo` alone it allows);
//! `auto` adds `--allowed-tools run_shell_command`, so commands run
//! without asking.

use std::fs;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::eval::launch::{Launch, MOCK_API_KEY, Permission, Setup};

/// The settings file under the home.
const SETTINGS: &str = ".gemini/settings.json";

pub fn prepare(setup: &Setup) -> Result<Launch> {
    let cwd = setup.create_dirs()?;
    let path = setup.home.join(SETTINGS);
    let existing = match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not JSON", path.display()))?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(err) => return Err(err).with_context(|| format!("read {}", path.display())),
    };
    let settings = first_run_answered(existing, !setup.ask_at_startup)?;
    let parent = path.parent().context("the settings file has a directory")?;
    fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
    let text = serde_json::to_string_pretty(&settings).context("encode settings.json")?;
    fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
    let mut argv = vec![setup.binary.to_string_lossy().into_owned()];
    if setup.permission == Permission::Auto {
        argv.extend(["--allowed-tools".into(), "run_shell_command".into()]);
    }
    Ok(Launch {
        argv,
        env: [
            ("HOME", setup.home.to_string_lossy().as_ref()),
            ("GOOGLE_GEMINI_BASE_URL", setup.model_url.as_str()),
            ("GEMINI_API_KEY", MOCK_API_KEY),
        ]
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .to_vec(),
        cwd,
    })
}

/// `settings` with every first-run question answered; the folder trust
/// check on (and the folder untrusted) unless `trusted`. Values the file
/// already has are kept, but for the trust check, which is what the
/// caller asked for.
fn first_run_answered(mut settings: Value, trusted: bool) -> Result<Value> {
    let answers = [
        (
            ["security", "auth", "selectedType"],
            json!("gemini-api-key"),
        ),
        (["general", "enableAutoUpdate", ""], json!(false)),
        (
            ["general", "enableAutoUpdateNotification", ""],
            json!(false),
        ),
        (["privacy", "usageStatisticsEnabled", ""], json!(false)),
        (["telemetry", "enabled", ""], json!(false)),
        (["ide", "enabled", ""], json!(false)),
        (["ide", "hasSeenNudge", ""], json!(true)),
        (["ui", "showCompatibilityWarnings", ""], json!(false)),
    ];
    for (path, value) in answers {
        let keys: Vec<&str> = path.into_iter().filter(|key| !key.is_empty()).collect();
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

fn object<'a>(value: &'a mut Value, what: &str) -> Result<&'a mut Map<String, Value>> {
    value
        .as_object_mut()
        .with_context(|| format!("{what} is not a JSON object"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn setup(dir: &Path, permission: Permission) -> Setup {
        Setup {
            binary: PathBuf::from("/opt/gemini.js"),
            home: dir.join("home"),
            cwd: dir.join("project"),
            model_url: "http://127.0.0.1:9".into(),
            permission,
            ask_at_startup: false,
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
        assert_eq!(env["HOME"], json!(dir.path().join("home")));
        let written = settings(dir.path());
        assert_eq!(
            written["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(written["security"]["folderTrust"]["enabled"], false);
        assert_eq!(written["ui"]["showCompatibilityWarnings"], false);
        assert_eq!(written["ide"]["hasSeenNudge"], true);
        let auto = prepare(&setup(dir.path(), Permission::Auto)).expect("prepare");
        assert_eq!(
            auto.argv,
            ["/opt/gemini.js", "--allowed-tools", "run_shell_command"]
        );
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
