//! DING's two OpenCode plugins: where `ding compile-agent opencode` puts
//! them, the configuration entries that load them, their text (with the
//! room's timings written in), and the adapter's check that they are
//! configured and loaded.
//!
//! * The **server plugin** (`plugins/server.js`) runs in OpenCode's server:
//!   it relays the turn boundaries (`chat.message`, `tool.execute.before`,
//!   `tool.execute.after`) to the adapter on the hook channel and adds the
//!   work the adapter claims to the request being made.
//! * The **TUI plugin** (`plugins/tui.js`) runs in OpenCode's TUI, which
//!   knows the session it shows, whether that session is idle and whether
//!   a permission or a question waits in it: it is the native idle path's
//!   reporter (`adapter::native_idle`), and sends a delivery with the
//!   session's own prompt call. It also relays the events that say a turn
//!   ended, or a permission was asked or answered.
//!
//! Both speak the hook channel's wire themselves, over the socket the PTY
//! host names in their environment (`DING_HOOK_SOCKET`): no `ding` program
//! runs inside OpenCode, so none can be missing. Without that socket (an
//! OpenCode started without DING) they do nothing at all; with an adapter
//! that is stopped, missing or wedged, every call ends at once or within
//! its timeout and OpenCode goes on as if the inbox were empty.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::adapter::SettingsRead;
use crate::adapter::hook_wire::{HOOK_WIRE_VERSION, MAX_ANSWER_BYTES, RECEIPT_LINE};

use super::timing::{CALL_RETRY, CALL_TIMEOUT, NOTE_TIMEOUT};
use crate::adapter::timing::QUEUE_CALL_TIMEOUT;

/// The plugins' version: a plugin that reports another one was written by
/// another DING (`ding compile-agent opencode` writes this one).
pub const VERSION: u64 = 1;

/// The conversation the TUI plugin reports on the home screen, where no
/// session exists yet: a delivery there starts one.
pub const NEW_SESSION: &str = "new";

/// The call each plugin makes once it is loaded.
pub const LOADED: &str = "plugin.loaded";

/// OpenCode's project configuration directory, under the project.
pub const CONFIG_DIR: &str = ".opencode";
/// The server plugin's configuration file and DING's file, in it.
pub const SERVER_CONFIG: &str = "opencode.json";
pub const SERVER_FILE: &str = "ding-server.js";
/// The TUI plugin's configuration file and DING's file, in it.
pub const TUI_CONFIG: &str = "tui.json";
pub const TUI_FILE: &str = "ding-tui.js";

/// One of the two plugins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plugin {
    /// As the plugin names itself in its `plugin.loaded` call.
    pub name: &'static str,
    /// The configuration file (under [`CONFIG_DIR`]) whose `plugin` list
    /// loads it.
    pub config: &'static str,
    /// Its file, beside that configuration.
    pub file: &'static str,
    template: &'static str,
}

pub const SERVER: Plugin = Plugin {
    name: "server",
    config: SERVER_CONFIG,
    file: SERVER_FILE,
    template: include_str!("plugins/server.js"),
};

pub const TUI: Plugin = Plugin {
    name: "tui",
    config: TUI_CONFIG,
    file: TUI_FILE,
    template: include_str!("plugins/tui.js"),
};

pub const PLUGINS: [Plugin; 2] = [SERVER, TUI];

/// The part of each plugin both share (the hook channel's wire), written
/// into each in place of `//@@CALL@@`.
const CALL: &str = include_str!("plugins/call.js");

impl Plugin {
    /// How its configuration names it: relative to that file's directory.
    pub fn spec(&self) -> String {
        format!("./{}", self.file)
    }

    /// Its configuration file under `project`.
    pub fn config_path(&self, project: &Path) -> PathBuf {
        project.join(CONFIG_DIR).join(self.config)
    }

    /// Its file under `project`.
    pub fn file_path(&self, project: &Path) -> PathBuf {
        project.join(CONFIG_DIR).join(self.file)
    }

    /// Its text, with the room's timings and the wire's constants written
    /// in.
    pub fn text(&self) -> String {
        let millis = |duration: std::time::Duration| duration.as_millis().to_string();
        self.template
            .replace("//@@CALL@@\n", CALL)
            .replace("@@VERSION@@", &VERSION.to_string())
            .replace(
                "@@NEW_SESSION@@",
                &serde_json::to_string(NEW_SESSION).unwrap_or_default(),
            )
            .replace("@@WIRE@@", &HOOK_WIRE_VERSION.to_string())
            .replace(
                "@@RECEIPT@@",
                &serde_json::to_string(RECEIPT_LINE).unwrap_or_default(),
            )
            .replace("@@MAX_ANSWER_BYTES@@", &MAX_ANSWER_BYTES.to_string())
            .replace("@@CALL_TIMEOUT_MS@@", &millis(CALL_TIMEOUT))
            .replace("@@NOTE_TIMEOUT_MS@@", &millis(NOTE_TIMEOUT))
            .replace("@@QUEUE_CALL_TIMEOUT_MS@@", &millis(QUEUE_CALL_TIMEOUT))
            .replace("@@CALL_RETRY_MS@@", &millis(CALL_RETRY))
    }

    /// Whether a configuration's `plugin` list loads it.
    pub fn is_listed(&self, config: &Value) -> bool {
        config["plugin"].as_array().is_some_and(|list| {
            list.iter().any(|entry| {
                let spec = entry.as_str().or_else(|| entry[0].as_str());
                spec == Some(self.spec().as_str())
            })
        })
    }
}

/// What the adapter knows of one plugin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Seen {
    /// Whether its configuration lists it (`None`: not read, or not named).
    listed: Option<Result<bool, String>>,
    /// The version it said when it loaded, in this harness incarnation.
    loaded: Option<u64>,
}

/// The adapter's check of DING's plugins.
#[derive(Clone, Debug)]
pub struct PluginCheck {
    project: Option<PathBuf>,
    seen: [Seen; 2],
}

impl PluginCheck {
    pub fn new(project: Option<PathBuf>) -> PluginCheck {
        PluginCheck {
            project,
            seen: Default::default(),
        }
    }

    /// The configuration files to read.
    pub fn files(&self) -> Vec<PathBuf> {
        match &self.project {
            Some(project) => PLUGINS
                .iter()
                .map(|plugin| plugin.config_path(project))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The configuration files, as the shell read them.
    pub fn read(&mut self, read: &[SettingsRead]) {
        let Some(project) = &self.project else {
            return;
        };
        for (plugin, seen) in PLUGINS.iter().zip(self.seen.iter_mut()) {
            let path = plugin.config_path(project);
            if let Some(file) = read.iter().find(|file| file.path == path) {
                seen.listed = Some(match &file.settings {
                    Ok(config) => Ok(plugin.is_listed(config)),
                    Err(why) => Err(why.clone()),
                });
            }
        }
    }

    /// A plugin's `plugin.loaded` call.
    pub fn loaded(&mut self, payload: &Value) {
        let name = payload["plugin"].as_str();
        let version = payload["version"].as_u64().unwrap_or(0);
        for (plugin, seen) in PLUGINS.iter().zip(self.seen.iter_mut()) {
            if name == Some(plugin.name) {
                seen.loaded = Some(version);
            }
        }
    }

    /// A new OpenCode: its plugins load again.
    pub fn new_terminal(&mut self) {
        for seen in &mut self.seen {
            seen.loaded = None;
        }
    }

    /// What is wrong with the configuration, for people (empty: nothing).
    fn problems(&self) -> Vec<String> {
        let Some(project) = &self.project else {
            return Vec::new();
        };
        PLUGINS
            .iter()
            .zip(&self.seen)
            .filter_map(|(plugin, seen)| match &seen.listed {
                Some(Ok(true)) | None => None,
                Some(Ok(false)) => Some(format!(
                    "{} does not load {}",
                    plugin.config_path(project).display(),
                    plugin.spec()
                )),
                Some(Err(why)) => Some(why.clone()),
            })
            .collect()
    }

    /// `ding check --adapters`'s verdict.
    pub fn check_setup(&self) -> Result<String, String> {
        if self.project.is_none() {
            return Ok("opencode plugins: not checked (no --project)".into());
        }
        match self.problems() {
            problems if problems.is_empty() => Ok(format!(
                "opencode plugins configured ({} and {} under {CONFIG_DIR}/)",
                SERVER.file, TUI.file
            )),
            problems => Err(format!(
                "opencode plugins MISSING: {} (run `ding compile-agent opencode` again)",
                problems.join("; ")
            )),
        }
    }

    /// What `ding status` says of the plugins.
    pub fn remark(&self) -> String {
        let problems = self.problems();
        if !problems.is_empty() {
            return format!(
                "opencode plugins MISSING: {} (run `ding compile-agent opencode` again)",
                problems.join("; ")
            );
        }
        let state: Vec<String> = PLUGINS
            .iter()
            .zip(&self.seen)
            .map(|(plugin, seen)| match seen.loaded {
                Some(VERSION) => format!("{} loaded", plugin.name),
                Some(other) => format!(
                    "{} loaded at version {other}, not {VERSION} (run `ding compile-agent opencode` again)",
                    plugin.name
                ),
                None => format!("{} not loaded yet", plugin.name),
            })
            .collect();
        format!("opencode plugins: {}", state.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_plugin_gets_the_wire_and_the_rooms_timings_written_in() {
        for plugin in PLUGINS {
            let text = plugin.text();
            assert!(!text.contains("@@"), "{}: {text}", plugin.name);
            assert!(text.contains("function call("), "{}", plugin.name);
            assert!(
                text.contains(&format!("const VERSION = {VERSION};")),
                "{}",
                plugin.name
            );
        }
    }

    #[test]
    fn the_check_says_which_configuration_does_not_load_which_plugin() {
        let project = PathBuf::from("/p");
        let mut check = PluginCheck::new(Some(project.clone()));
        assert!(check.check_setup().is_ok());
        check.read(&[
            SettingsRead {
                path: SERVER.config_path(&project),
                settings: Ok(json!({"plugin": ["./other.js", "./ding-server.js"]})),
            },
            SettingsRead {
                path: TUI.config_path(&project),
                settings: Ok(json!({"plugin": [["./other.js", {}]]})),
            },
        ]);
        let problem = check.check_setup().unwrap_err();
        assert!(
            problem.contains("tui.json does not load ./ding-tui.js"),
            "{problem}"
        );
        assert!(!problem.contains("ding-server.js"), "{problem}");
        check.read(&[SettingsRead {
            path: TUI.config_path(&project),
            settings: Ok(json!({"plugin": [["./ding-tui.js", {}]]})),
        }]);
        assert!(check.check_setup().is_ok());
        assert_eq!(
            check.remark(),
            "opencode plugins: server not loaded yet, tui not loaded yet"
        );
        check.loaded(&json!({"plugin": "server", "version": VERSION}));
        check.loaded(&json!({"plugin": "tui", "version": 0}));
        assert!(
            check
                .remark()
                .contains("server loaded, tui loaded at version 0")
        );
        check.new_terminal();
        assert!(check.remark().contains("server not loaded yet"));
    }
}
