//! `ding compile-agent opencode`: the agent declaration for OpenCode under
//! `turn-boundary+fresh-idle`, and DING's two plugins in the project's
//! OpenCode configuration (`plugins.rs`).
//!
//! It writes `.opencode/ding-server.js` and `.opencode/ding-tui.js` under
//! the project (replaced: they are DING's, and a newer DING writes newer
//! ones), and adds them to the `plugin` lists of `.opencode/opencode.json`
//! and `.opencode/tui.json`, keeping everything else there (the person's
//! own plugins and settings). Running it again changes nothing. The
//! declaration runs `opencode` (or the given argv) in the project, with the
//! adapter `$ST_HOOKS/opencode-ding-adapter --project DIR`, so the adapter
//! can say in `ding status` whether the plugins are still configured.
//! Secrets never go into it: OpenCode reads its keys (or its login) from
//! the environment of `ding up` or its own configuration.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::adapter::compile::{CompileRequest, Compiled, IdlePath, Written, adapter_command};
use crate::adapter::hook_config::edit_file;
use crate::decl::Draft;
use crate::private_file::replace;

use super::adapter::PROVIDER;
use super::plugins::{CONFIG_DIR, PLUGINS, Plugin};

/// The program a declaration runs when no argv is given: the installed
/// OpenCode on `PATH`.
pub const DEFAULT_PROGRAM: &str = "opencode";

pub fn compile(request: &CompileRequest) -> Result<Compiled> {
    if let Some(settings) = &request.settings {
        bail!(
            "opencode takes no --settings ({}): DING's plugins go into the project's {CONFIG_DIR}/ directory",
            settings.display()
        );
    }
    if request.idle == IdlePath::Terminal {
        bail!(
            "opencode has no terminal idle path: DING never types into OpenCode (its idle work goes through the session's own prompt call)"
        );
    }
    let mut written = Vec::new();
    for plugin in PLUGINS {
        written.push(write_plugin(request, &plugin)?);
        written.push(list_plugin(request, &plugin)?);
    }
    let project = request.cwd.to_string_lossy().into_owned();
    let adapter_args = vec!["--project".to_string(), project];
    let command = if request.command.is_empty() {
        vec![DEFAULT_PROGRAM.to_string()]
    } else {
        request.command.clone()
    };
    let declaration = Draft {
        name: request.agent.clone(),
        comments: vec![
            "Written by `ding compile-agent opencode`: OpenCode under DING's careful policy.".into(),
            format!(
                "DING's plugins are in {}/ (no byte is ever typed into OpenCode).",
                request.cwd.join(CONFIG_DIR).display()
            ),
            "$ST_HOOKS is the directory `ding hooks install DIR` wrote the adapter into: set it for `ding up`.".into(),
            "No secret is written here: export the model key (or log in) where you run `ding up`.".into(),
        ],
        command,
        cwd: Some(request.cwd.clone()),
        inbox: request.inbox.clone(),
        env: request.env.clone(),
        adapter: Some(adapter_command(PROVIDER, &adapter_args)),
    };
    Ok(Compiled {
        declaration,
        written,
    })
}

/// Writes the plugin's file, unless it already holds exactly its text.
fn write_plugin(request: &CompileRequest, plugin: &Plugin) -> Result<Written> {
    let path = plugin.file_path(&request.cwd);
    let text = plugin.text();
    let changed = std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str());
    if changed {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
        }
        replace(&path, text.as_bytes(), 0o644)
            .with_context(|| format!("write {}", path.display()))?;
    }
    Ok(Written {
        path,
        what: format!("DING's OpenCode {} plugin", plugin.name),
        changed,
    })
}

/// Adds the plugin to its configuration's `plugin` list, keeping the rest.
fn list_plugin(request: &CompileRequest, plugin: &Plugin) -> Result<Written> {
    let path = plugin.config_path(&request.cwd);
    let changed = edit_file(&path, |config| add_to_list(config, plugin))?;
    Ok(Written {
        path,
        what: format!(
            "OpenCode configuration loading DING's {} plugin",
            plugin.name
        ),
        changed,
    })
}

fn add_to_list(config: &mut Value, plugin: &Plugin) -> Result<()> {
    let Some(object) = config.as_object_mut() else {
        bail!("it is not a JSON object");
    };
    if plugin.is_listed(&Value::Object(object.clone())) {
        return Ok(());
    }
    match object.entry("plugin").or_insert_with(|| json!([])) {
        Value::Array(list) => list.push(Value::String(plugin.spec())),
        _ => bail!("its `plugin` is not a list"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn request(cwd: &std::path::Path) -> CompileRequest {
        CompileRequest::example(cwd)
    }

    fn config(dir: &Path, file: &str) -> Value {
        let text = std::fs::read_to_string(dir.join(CONFIG_DIR).join(file)).expect("config");
        serde_json::from_str(&text).expect("json")
    }

    /// The person's own plugins and settings stay; DING's are added once,
    /// and a second run changes nothing.
    #[test]
    fn the_plugins_are_merged_into_the_configuration_and_a_second_run_changes_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let opencode = dir.path().join(CONFIG_DIR);
        std::fs::create_dir_all(&opencode).unwrap();
        std::fs::write(
            opencode.join("opencode.json"),
            r#"{"plugin": ["their-plugin"], "model": "theirs/model"}"#,
        )
        .unwrap();
        let first = compile(&request(dir.path())).expect("compiled");
        assert!(first.written.iter().all(|written| written.changed));
        let server = config(dir.path(), "opencode.json");
        assert_eq!(
            server["plugin"],
            json!(["their-plugin", "./ding-server.js"])
        );
        assert_eq!(server["model"], "theirs/model");
        assert_eq!(
            config(dir.path(), "tui.json")["plugin"],
            json!(["./ding-tui.js"])
        );
        let text = std::fs::read_to_string(opencode.join("ding-tui.js")).unwrap();
        assert_eq!(text, super::super::plugins::TUI.text());
        let again = compile(&request(dir.path())).expect("compiled again");
        assert!(again.written.iter().all(|written| !written.changed));
        assert_eq!(
            again
                .declaration
                .adapter
                .as_deref()
                .map(|argv| argv[1..].to_vec()),
            Some(vec![
                "--project".to_string(),
                dir.path().display().to_string()
            ])
        );
    }

    /// There is no terminal path to ask for, no settings file to name, and a
    /// configuration that is not an object is left alone.
    #[test]
    fn what_cannot_be_done_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let terminal = CompileRequest {
            idle: IdlePath::Terminal,
            ..request(dir.path())
        };
        let refused = compile(&terminal).unwrap_err().to_string();
        assert!(refused.contains("never types into OpenCode"), "{refused}");
        let settings = CompileRequest {
            settings: Some("x.json".into()),
            ..request(dir.path())
        };
        assert!(compile(&settings).is_err());
        let opencode = dir.path().join(CONFIG_DIR);
        std::fs::create_dir_all(&opencode).unwrap();
        std::fs::write(opencode.join("tui.json"), "[1, 2]").unwrap();
        let refused = format!("{:#}", compile(&request(dir.path())).unwrap_err());
        assert!(refused.contains("not a JSON object"), "{refused}");
        assert_eq!(
            std::fs::read_to_string(opencode.join("tui.json")).unwrap(),
            "[1, 2]"
        );
    }
}
