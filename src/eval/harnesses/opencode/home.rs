//! A scratch home in which OpenCode 1.18.33 starts straight into an empty
//! composer against the loopback model, asks nothing, and reaches nothing
//! but the model server.
//!
//! `<home>/.config/opencode/opencode.json` (OpenCode's global config; the
//! environment points every XDG directory into the home, so nothing of the
//! real user's is read or written) names a provider `mock` of type
//! `@ai-sdk/openai-compatible` whose `baseURL` is the model server's `/v1`
//! and whose key is read from `MOCK_MODEL_API_KEY`, enables only that
//! provider, uses its one model (also for titles: `small_model`), turns
//! sharing and auto-update off, and sets the permissions below. An existing
//! file is merged, never replaced: keys it already has keep their values,
//! but for the provider's `baseURL`, the enabled providers, the models and
//! the permissions, which are what the caller asked for.
//!
//! **The stub plugin directory.** At startup OpenCode makes sure each
//! configuration directory it reads holds `@opencode-ai/plugin` (the
//! plugins' library): unless the directory has a `node_modules/` and a
//! `package-lock.json` whose root lists every dependency of its
//! `package.json` and the plugin package, it starts an npm install in the
//! background, which without a registry hangs. The directories it reads
//! are the global config directory, every `.opencode/` from the project up
//! to its git worktree (to `/` outside one), `<home>/.opencode/`, and
//! `OPENCODE_CONFIG_DIR`. So each of them that is the home's or the
//! project's (the global one, which this home creates, and
//! `<project>/.opencode/`, and `<home>/.opencode/` when it exists) gets
//! `node_modules/@opencode-ai/plugin`, a symbolic link to the package the
//! harness install holds beside the binary (`scripts/install-harnesses.sh`
//! installs it), and that dependency merged into its `package.json` and
//! `package-lock.json`. The project's is made here even when there is none
//! yet: the careful arm's compiler writes DING's plugins into it after
//! this.
//!
//! The environment: `HOME` and the four XDG directories inside the home,
//! and `OPENCODE_DISABLE_MODELS_FETCH` (no model list from models.dev),
//! `OPENCODE_DISABLE_AUTOUPDATE` and `OPENCODE_DISABLE_LSP_DOWNLOAD`. With
//! them a session's only connection is to the model server (checked with
//! `strace -f -e trace=connect`: no other address, no DNS lookup).
//!
//! Permission modes, as OpenCode's `permission` setting: `manual` asks
//! before every shell command but the mock model's own harmless ones
//! (`echo mock-run-start`, `sleep N`, `echo mock-run-done`: OpenCode
//! matches each command of a compound line) and before every file edit;
//! `auto` allows both. In both, each of `Setup::outside_dirs` (the
//! evaluation's markers) is an allowed external directory: OpenCode asks
//! first before a tool touches a path outside the project ("Access
//! external directory"), which would be a second dialog before the
//! command's own.
//!
//! OpenCode 1.18.33 asks nothing at startup (no trust, login or onboarding
//! question): `Setup::ask_at_startup` changes nothing, and its pane says it
//! has no startup keys.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use crate::home_files::{object, read_json, write_json};
use crate::launch::{Launch, MOCK_API_KEY, Permission, Setup};

/// The variable the provider's `apiKey` is read from.
pub const API_KEY_VARIABLE: &str = "MOCK_MODEL_API_KEY";

/// The model OpenCode is told to use, under the provider `mock`.
pub const MODEL: &str = "mock-model";

/// The plugins' library each configuration directory must hold.
const PLUGIN_PACKAGE: &str = "@opencode-ai/plugin";

/// The XDG directories under the home, by variable.
const XDG_DIRS: [(&str, &str); 4] = [
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// The mock model's own commands, which `manual` lets run unasked.
const HARMLESS_COMMANDS: [&str; 3] = ["echo mock-run-start", "sleep *", "echo mock-run-done"];

pub fn prepare(setup: &Setup) -> Result<Launch> {
    let cwd = setup.create_dirs()?;
    let plugin = plugin_package(&setup.binary)?;
    let config_dir = setup.home.join(".config/opencode");
    let path = config_dir.join("opencode.json");
    let config = configured(read_json(&path)?, setup)?;
    write_json(&path, &config)?;
    for dir in &setup.outside_dirs {
        fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    // The project's `.opencode/` always: the careful arm's compiler writes
    // DING's plugins into it after this, and OpenCode would then install
    // their library there from the registry (and wait on it for good).
    let mut config_dirs = vec![config_dir, cwd.join(".opencode")];
    config_dirs.extend(
        [setup.home.join(".opencode")]
            .into_iter()
            .filter(|dir| dir.is_dir()),
    );
    for dir in &config_dirs {
        stub_plugin_dir(dir, &plugin)?;
    }
    let home = setup.home.to_string_lossy().into_owned();
    let xdg: Vec<(&str, String)> = XDG_DIRS
        .iter()
        .map(|(name, under)| (*name, setup.home.join(under).to_string_lossy().into_owned()))
        .collect();
    let mut env: Vec<(&str, &str)> = vec![("HOME", home.as_str())];
    env.extend(xdg.iter().map(|(name, dir)| (*name, dir.as_str())));
    env.extend([
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        (API_KEY_VARIABLE, MOCK_API_KEY),
    ]);
    Ok(Launch::new(
        vec![setup.binary.to_string_lossy().into_owned()],
        &env,
        cwd,
    ))
}

/// The installed `@opencode-ai/plugin` beside the binary
/// (`node_modules/opencode-linux-x64/bin/opencode`), and its version.
struct PluginPackage {
    dir: PathBuf,
    version: String,
}

fn plugin_package(binary: &Path) -> Result<PluginPackage> {
    let node_modules = binary
        .ancestors()
        .nth(3)
        .context("the binary is not in node_modules/PACKAGE/bin/")?;
    let dir = node_modules.join(PLUGIN_PACKAGE);
    let manifest = read_json(&dir.join("package.json"))?;
    let Some(version) = manifest["version"].as_str() else {
        bail!(
            "no {PLUGIN_PACKAGE} beside {} (at {}): install the pinned harnesses with scripts/install-harnesses.sh",
            binary.display(),
            dir.display()
        );
    };
    Ok(PluginPackage {
        version: version.to_string(),
        dir: fs::canonicalize(&dir).with_context(|| format!("resolve {}", dir.display()))?,
    })
}

/// `config` with the mock provider, the model, the permissions for
/// `setup`, and no sharing or auto-update.
fn configured(mut config: Value, setup: &Setup) -> Result<Value> {
    let base_url = format!("{}/v1", setup.model_url.trim_end_matches('/'));
    let model = format!("mock/{MODEL}");
    let table = object(&mut config, "opencode.json")?;
    table.entry("autoupdate").or_insert(json!(false));
    table.entry("share").or_insert(json!("disabled"));
    table.insert("enabled_providers".into(), json!(["mock"]));
    table.insert("model".into(), json!(model));
    table.insert("small_model".into(), json!(model));
    let providers = object(table.entry("provider").or_insert(json!({})), "provider")?;
    let mock = object(
        providers.entry("mock").or_insert(json!({})),
        "provider.mock",
    )?;
    mock.insert("npm".into(), json!("@ai-sdk/openai-compatible"));
    mock.entry("name").or_insert(json!("Mock"));
    let options = object(mock.entry("options").or_insert(json!({})), "options")?;
    options.insert("baseURL".into(), json!(base_url));
    options.insert(
        "apiKey".into(),
        json!(format!("{{env:{API_KEY_VARIABLE}}}")),
    );
    let models = object(mock.entry("models").or_insert(json!({})), "models")?;
    models.entry(MODEL).or_insert(json!({"name": "Mock model"}));
    let permission = object(table.entry("permission").or_insert(json!({})), "permission")?;
    for (key, value) in permissions(setup) {
        permission.insert(key.into(), value);
    }
    Ok(config)
}

/// The `permission` entries for the mode, and the outside directories
/// allowed in both.
fn permissions(setup: &Setup) -> [(&'static str, Value); 3] {
    let outside: Map<String, Value> = setup
        .outside_dirs
        .iter()
        .map(|dir| (format!("{}/*", dir.to_string_lossy()), json!("allow")))
        .collect();
    match setup.permission {
        Permission::Manual => {
            let mut bash = Map::new();
            bash.insert("*".into(), json!("ask"));
            for command in HARMLESS_COMMANDS {
                bash.insert(command.into(), json!("allow"));
            }
            [
                ("bash", Value::Object(bash)),
                ("edit", json!("ask")),
                ("external_directory", Value::Object(outside)),
            ]
        }
        Permission::Auto => [
            ("bash", json!("allow")),
            ("edit", json!("allow")),
            ("external_directory", Value::Object(outside)),
        ],
    }
}

/// Makes `dir` a configuration directory OpenCode installs nothing into:
/// the plugin package linked under `node_modules/`, and the dependency in
/// `package.json` and `package-lock.json` (merged).
fn stub_plugin_dir(dir: &Path, plugin: &PluginPackage) -> Result<()> {
    let link = dir.join("node_modules").join(PLUGIN_PACKAGE);
    if fs::symlink_metadata(&link).is_err() {
        let parent = link.parent().context("the link has a directory")?;
        fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
        std::os::unix::fs::symlink(&plugin.dir, &link)
            .with_context(|| format!("link {}", link.display()))?;
    }
    let manifest_path = dir.join("package.json");
    let mut manifest = read_json(&manifest_path)?;
    let dependencies = object(
        object(&mut manifest, "package.json")?
            .entry("dependencies")
            .or_insert(json!({})),
        "dependencies",
    )?;
    dependencies
        .entry(PLUGIN_PACKAGE)
        .or_insert(json!(plugin.version));
    write_json(&manifest_path, &manifest)?;
    let lock_path = dir.join("package-lock.json");
    let mut lock = read_json(&lock_path)?;
    let table = object(&mut lock, "package-lock.json")?;
    table.entry("lockfileVersion").or_insert(json!(3));
    table.entry("requires").or_insert(json!(true));
    let packages = object(table.entry("packages").or_insert(json!({})), "packages")?;
    let root = object(packages.entry("").or_insert(json!({})), "packages[\"\"]")?;
    object(
        root.entry("dependencies").or_insert(json!({})),
        "dependencies",
    )?
    .entry(PLUGIN_PACKAGE)
    .or_insert(json!(plugin.version));
    packages
        .entry(format!("node_modules/{PLUGIN_PACKAGE}"))
        .or_insert(json!({"version": plugin.version}));
    write_json(&lock_path, &lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A harness install: the binary and the plugin package beside it.
    fn install(dir: &Path) -> PathBuf {
        let node_modules = dir.join("install/node_modules");
        let binary = node_modules.join("opencode-linux-x64/bin/opencode");
        fs::create_dir_all(binary.parent().unwrap()).unwrap();
        fs::write(&binary, "").unwrap();
        let plugin = node_modules.join(PLUGIN_PACKAGE);
        fs::create_dir_all(&plugin).unwrap();
        fs::write(
            plugin.join("package.json"),
            r#"{"name": "@opencode-ai/plugin", "version": "1.18.33"}"#,
        )
        .unwrap();
        binary
    }

    fn setup(dir: &Path, permission: Permission) -> Setup {
        Setup {
            binary: install(dir),
            home: dir.join("home"),
            cwd: dir.join("project"),
            model_url: "http://127.0.0.1:9/".into(),
            permission,
            ask_at_startup: false,
            outside_dirs: Vec::new(),
        }
    }

    fn read(path: &Path) -> Value {
        serde_json::from_slice(&fs::read(path).expect("read")).expect("JSON")
    }

    const CONFIG: &str = "home/.config/opencode/opencode.json";

    #[test]
    fn the_config_names_the_mock_provider_and_the_env_keeps_everything_in_the_home() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = setup(dir.path(), Permission::Manual);
        let launch = prepare(&setup).expect("prepare");
        assert_eq!(launch.argv, [setup.binary.to_string_lossy()]);
        assert_eq!(
            launch.cwd,
            fs::canonicalize(dir.path().join("project")).expect("cwd")
        );
        let env: Map<String, Value> = launch
            .env
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let home = dir.path().join("home");
        assert_eq!(env["HOME"], json!(home));
        for (name, under) in XDG_DIRS {
            assert_eq!(env[name], json!(home.join(under)), "{name}");
        }
        for flag in [
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_AUTOUPDATE",
            "OPENCODE_DISABLE_LSP_DOWNLOAD",
        ] {
            assert_eq!(env[flag], "1", "{flag}");
        }
        assert_eq!(env[API_KEY_VARIABLE], MOCK_API_KEY);
        let config = read(&dir.path().join(CONFIG));
        let mock = &config["provider"]["mock"];
        assert_eq!(mock["npm"], "@ai-sdk/openai-compatible");
        assert_eq!(mock["options"]["baseURL"], "http://127.0.0.1:9/v1");
        assert_eq!(mock["options"]["apiKey"], "{env:MOCK_MODEL_API_KEY}");
        assert!(mock["models"][MODEL].is_object());
        assert_eq!(config["enabled_providers"], json!(["mock"]));
        assert_eq!(config["model"], "mock/mock-model");
        assert_eq!(config["small_model"], "mock/mock-model");
        assert_eq!(config["share"], "disabled");
        assert_eq!(config["autoupdate"], false);
    }

    #[test]
    fn manual_asks_before_commands_but_the_mock_models_own_and_auto_never_asks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let markers = dir.path().join("markers");
        let manual = Setup {
            outside_dirs: vec![markers.clone()],
            ..setup(dir.path(), Permission::Manual)
        };
        prepare(&manual).expect("prepare");
        assert!(markers.is_dir());
        let permission = read(&dir.path().join(CONFIG))["permission"].clone();
        assert_eq!(permission["bash"]["*"], "ask");
        assert_eq!(permission["bash"]["sleep *"], "allow");
        assert_eq!(permission["bash"]["echo mock-run-start"], "allow");
        assert_eq!(permission["edit"], "ask");
        let outside = format!("{}/*", markers.display());
        assert_eq!(permission["external_directory"][&outside], "allow");
        prepare(&Setup {
            permission: Permission::Auto,
            ..manual
        })
        .expect("prepare");
        let permission = read(&dir.path().join(CONFIG))["permission"].clone();
        assert_eq!(permission["bash"], "allow");
        assert_eq!(permission["edit"], "allow");
        assert_eq!(permission["external_directory"][&outside], "allow");
    }

    #[test]
    fn every_config_dir_of_the_home_and_project_gets_the_plugin_package_and_its_lock() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setup = setup(dir.path(), Permission::Manual);
        let project_dir = dir.path().join("project/.opencode");
        fs::create_dir_all(&project_dir).expect("mkdir");
        fs::write(
            project_dir.join("package.json"),
            r#"{"name": "mine", "dependencies": {"left-pad": "1.3.0"}}"#,
        )
        .expect("write");
        prepare(&setup).expect("prepare");
        let global = dir.path().join("home/.config/opencode");
        let plugin = fs::canonicalize(dir.path().join("install/node_modules/@opencode-ai/plugin"))
            .expect("plugin");
        for config_dir in [&global, &fs::canonicalize(&project_dir).expect("dir")] {
            let link = config_dir.join("node_modules/@opencode-ai/plugin");
            assert_eq!(fs::canonicalize(&link).expect("link"), plugin);
            let lock = read(&config_dir.join("package-lock.json"));
            assert_eq!(
                lock["packages"][""]["dependencies"]["@opencode-ai/plugin"],
                "1.18.33"
            );
            assert_eq!(
                lock["packages"]["node_modules/@opencode-ai/plugin"]["version"],
                "1.18.33"
            );
            let manifest = read(&config_dir.join("package.json"));
            assert_eq!(manifest["dependencies"]["@opencode-ai/plugin"], "1.18.33");
        }
        let mine = read(&project_dir.join("package.json"));
        assert_eq!(mine["name"], "mine");
        assert_eq!(mine["dependencies"]["left-pad"], "1.3.0");
        assert!(!dir.path().join("home/.opencode").exists());
    }

    #[test]
    fn an_existing_config_is_merged_and_preparing_twice_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(CONFIG);
        fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        fs::write(
            &path,
            r#"{"theme": "nord", "share": "manual", "provider": {"other": {"npm": "x"}}, "permission": {"webfetch": "deny"}}"#,
        )
        .expect("write");
        let setup = setup(dir.path(), Permission::Manual);
        prepare(&setup).expect("prepare");
        let once = fs::read(&path).expect("read");
        let lock_path = dir.path().join("home/.config/opencode/package-lock.json");
        let lock_once = fs::read(&lock_path).expect("lock");
        prepare(&setup).expect("prepare again");
        assert_eq!(fs::read(&path).expect("read"), once);
        assert_eq!(fs::read(&lock_path).expect("lock"), lock_once);
        let config = read(&path);
        assert_eq!(config["theme"], "nord");
        assert_eq!(config["share"], "manual");
        assert_eq!(config["provider"]["other"]["npm"], "x");
        assert_eq!(config["permission"]["webfetch"], "deny");
        assert_eq!(config["enabled_providers"], json!(["mock"]));
    }

    #[test]
    fn without_the_plugin_package_beside_the_binary_it_says_how_to_install_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bare = Setup {
            binary: dir
                .path()
                .join("node_modules/opencode-linux-x64/bin/opencode"),
            ..setup(dir.path(), Permission::Manual)
        };
        let error = format!("{:#}", prepare(&bare).expect_err("refused"));
        assert!(error.contains("scripts/install-harnesses.sh"), "{error}");
    }

    #[test]
    fn a_config_that_is_not_json_is_refused_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(CONFIG);
        fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
        fs::write(&path, "{nope").expect("write");
        assert!(prepare(&setup(dir.path(), Permission::Manual)).is_err());
        assert_eq!(fs::read_to_string(&path).expect("read"), "{nope");
    }
}
