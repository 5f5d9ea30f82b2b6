//! DING's entries in a harness's hook settings: merged into the user's
//! file, never clobbering it, and checked for presence.
//!
//! Harnesses keep hooks in a JSON document of this shape (the one both
//! real harnesses use):
//!
//! ```json
//! {"hooks": {"Stop": [{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]}}
//! ```
//!
//! [`merge`] puts each wanted handler in place exactly once, in a group of
//! DING's own at the end of its event's list, and removes DING handlers
//! that are no longer wanted (an older version's); the user's handlers,
//! groups and every other setting are left as they are. Which handlers are
//! DING's is the caller's rule (`is_ours`), typically "its command runs
//! `ding hook PROVIDER ...`". Running it twice changes nothing the second
//! time. A document of another shape is refused, never repaired.
//!
//! [`edit_file`] applies such an edit to a file: a missing file is an empty
//! document, an unparseable one is refused with the reason (and left as
//! it is), and the file is rewritten atomically only when its content
//! changes.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::escape::escape_path;
use crate::private_file::{read_regular, replace};

/// One handler wanted under `event` (in a group with `matcher`, if any).
#[derive(Clone, Debug, PartialEq)]
pub struct HookEntry {
    pub event: String,
    pub matcher: Option<String>,
    pub handler: Value,
}

/// Puts `wanted` into `settings` (see the module docs).
pub fn merge(
    settings: &mut Value,
    wanted: &[HookEntry],
    is_ours: &dyn Fn(&Value) -> bool,
) -> Result<()> {
    let root = settings
        .as_object_mut()
        .context("the settings are not a JSON object")?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .context("`hooks` in the settings is not a JSON object")?;
    for (event, groups) in hooks.iter_mut() {
        let groups = groups
            .as_array_mut()
            .with_context(|| format!("`hooks.{event}` is not a list"))?;
        for (index, group) in groups.iter_mut().enumerate() {
            let handlers = group
                .get_mut("hooks")
                .and_then(Value::as_array_mut)
                .with_context(|| format!("`hooks.{event}[{index}].hooks` is not a list"))?;
            handlers.retain(|handler| !is_ours(handler));
        }
        // Only groups that held nothing but DING's handlers disappear.
        groups.retain(|group| {
            group["hooks"]
                .as_array()
                .is_none_or(|handlers| !handlers.is_empty())
        });
    }
    for entry in wanted {
        let groups = hooks
            .entry(entry.event.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .with_context(|| format!("`hooks.{}` is not a list", entry.event))?;
        let ours = groups.iter_mut().find(|group| {
            group["matcher"].as_str() == entry.matcher.as_deref()
                && group["hooks"]
                    .as_array()
                    .is_some_and(|handlers| !handlers.is_empty() && handlers.iter().all(is_ours))
        });
        match ours {
            Some(group) => {
                if let Some(handlers) = group["hooks"].as_array_mut() {
                    handlers.push(entry.handler.clone());
                }
            }
            None => {
                let mut group = Map::new();
                if let Some(matcher) = &entry.matcher {
                    group.insert("matcher".into(), Value::String(matcher.clone()));
                }
                group.insert("hooks".into(), Value::Array(vec![entry.handler.clone()]));
                groups.push(Value::Object(group));
            }
        }
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|groups| !groups.is_empty()));
    Ok(())
}

/// The wanted entries `settings` lacks (an entry counts only if exactly
/// that handler is under its event, in a group with its matcher).
pub fn missing<'a>(settings: &Value, wanted: &'a [HookEntry]) -> Vec<&'a HookEntry> {
    wanted
        .iter()
        .filter(|entry| {
            let groups = settings["hooks"][&entry.event].as_array();
            !groups.is_some_and(|groups| {
                groups.iter().any(|group| {
                    group["matcher"].as_str() == entry.matcher.as_deref()
                        && group["hooks"]
                            .as_array()
                            .is_some_and(|handlers| handlers.contains(&entry.handler))
                })
            })
        })
        .collect()
}

/// The largest settings file read. A harness's settings are a few KiB; a
/// bigger file is not one, and is refused rather than read whole.
pub const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// Reads a JSON settings file: `{}` if it does not exist; an error naming
/// the file if it cannot be read or parsed, is not a regular file (a FIFO
/// would block the read forever, a device never end), or is larger than
/// [`MAX_SETTINGS_BYTES`]. Symbolic links are resolved first (settings
/// often live in a dotfiles repository); what they lead to is read as
/// [`read_regular`] reads DING's own files, unopened unless regular.
pub fn read_file(path: &Path) -> Result<Value> {
    let shown = escape_path(path);
    let target = match fs::canonicalize(path) {
        Ok(target) => target,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Value::Object(Map::new())),
        Err(err) => return Err(err).with_context(|| format!("read {shown}")),
    };
    let bytes = match read_regular(&target, MAX_SETTINGS_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(Value::Object(Map::new())),
        Err(problem) => bail!("cannot read {shown}: {problem}; it was left as it is"),
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{shown} is not valid JSON; it was left as it is (fix it, or move it away, and run again)"
        )
    })
}

/// Applies `edit` to the JSON file at `path` (creating it and its
/// directory if needed) and writes it back atomically, pretty-printed, if
/// anything changed. Returns whether it did.
pub fn edit_file(path: &Path, edit: impl FnOnce(&mut Value) -> Result<()>) -> Result<bool> {
    let before = read_file(path)?;
    let mut after = before.clone();
    let shown = escape_path(path);
    edit(&mut after).with_context(|| format!("cannot merge into {shown}"))?;
    if after == before && path.exists() {
        return Ok(false);
    }
    let Some(name) = path.file_name() else {
        bail!("{shown} names no file");
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    let mut text = serde_json::to_string_pretty(&after).context("encode the settings")?;
    text.push('\n');
    let _ = name;
    replace(path, text.as_bytes(), 0o644).with_context(|| format!("write {shown}"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(handler: &Value) -> bool {
        handler["command"]
            .as_str()
            .is_some_and(|command| command.starts_with("ding hook demo "))
    }

    fn wanted() -> Vec<HookEntry> {
        vec![
            HookEntry {
                event: "Stop".into(),
                matcher: None,
                handler: json!({"type": "command", "command": "ding hook demo Stop"}),
            },
            HookEntry {
                event: "Stop".into(),
                matcher: None,
                handler: json!({"type": "command", "command": "ding hook demo wake", "async": true}),
            },
            HookEntry {
                event: "PreToolUse".into(),
                matcher: Some("Bash".into()),
                handler: json!({"type": "command", "command": "ding hook demo PreToolUse"}),
            },
        ]
    }

    #[test]
    fn the_users_hooks_and_settings_stay_and_a_second_merge_changes_nothing() {
        let mut settings = json!({
            "model": "x",
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "notify-me"}]}],
                "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]
            }
        });
        let user = settings.clone();
        merge(&mut settings, &wanted(), &ours).expect("merge");
        assert_eq!(settings["model"], "x");
        assert_eq!(
            settings["hooks"]["PostToolUse"],
            user["hooks"]["PostToolUse"]
        );
        assert_eq!(settings["hooks"]["Stop"][0], user["hooks"]["Stop"][0]);
        assert_eq!(
            settings["hooks"]["Stop"][1]["hooks"],
            json!([wanted()[0].handler, wanted()[1].handler])
        );
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "Bash");
        assert!(missing(&settings, &wanted()).is_empty());
        let once = settings.clone();
        merge(&mut settings, &wanted(), &ours).expect("merge again");
        assert_eq!(settings, once);
    }

    #[test]
    fn an_older_ding_handler_is_replaced_and_a_group_it_shared_keeps_the_users() {
        let mut settings = json!({"hooks": {
            "Stop": [{"hooks": [
                {"type": "command", "command": "ding hook demo Stop --old"},
                {"type": "command", "command": "mine"}
            ]}],
            "Notification": [{"hooks": [{"type": "command", "command": "ding hook demo Notification"}]}]
        }});
        merge(&mut settings, &wanted(), &ours).expect("merge");
        assert_eq!(
            settings["hooks"]["Stop"][0]["hooks"],
            json!([{"type": "command", "command": "mine"}])
        );
        assert!(
            settings["hooks"].get("Notification").is_none(),
            "{settings}"
        );
        assert_eq!(missing(&settings, &wanted()), Vec::<&HookEntry>::new());
        let mut partial = settings.clone();
        partial["hooks"]["Stop"][1]["hooks"]
            .as_array_mut()
            .expect("list")
            .pop();
        assert_eq!(missing(&partial, &wanted()), vec![&wanted()[1]]);
    }

    #[test]
    fn settings_of_another_shape_are_refused() {
        for bad in [
            json!([]),
            json!({"hooks": []}),
            json!({"hooks": {"Stop": {}}}),
            json!({"hooks": {"Stop": [{"hooks": {}}]}}),
        ] {
            let mut settings = bad.clone();
            assert!(merge(&mut settings, &wanted(), &ours).is_err(), "{bad}");
        }
    }

    /// A FIFO, a directory or an oversized file as the settings is refused
    /// at once and left as it is; before, a FIFO hung `compile-agent` and a
    /// 300 MB file was read whole.
    #[test]
    fn settings_that_are_not_a_small_regular_file_are_refused_at_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
        let err = read_file(&fifo).unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
        let err = read_file(dir.path()).unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
        let big = dir.path().join("big.json");
        fs::File::create(&big)
            .and_then(|file| file.set_len(MAX_SETTINGS_BYTES + 1))
            .expect("sparse file");
        let err = read_file(&big).unwrap_err();
        assert!(format!("{err:#}").contains("more than the"), "{err:#}");
        let target = dir.path().join("dotfiles.json");
        fs::write(&target, "{\"a\": 1}").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert_eq!(
            read_file(&link).expect("followed"),
            serde_json::json!({"a": 1})
        );
    }

    #[test]
    fn a_file_is_created_merged_rewritten_only_on_change_and_refused_if_unreadable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(".harness/settings.json");
        let edit = |settings: &mut Value| merge(settings, &wanted(), &ours);
        assert!(edit_file(&path, edit).expect("create"));
        let first = fs::read_to_string(&path).expect("read");
        assert!(!edit_file(&path, edit).expect("again"), "idempotent");
        assert_eq!(fs::read_to_string(&path).expect("read"), first);
        fs::write(&path, "{\"hooks\": {").expect("break it");
        let err = edit_file(&path, edit).expect_err("refused");
        assert!(format!("{err:#}").contains("not valid JSON"), "{err:#}");
        assert_eq!(fs::read_to_string(&path).expect("read"), "{\"hooks\": {");
    }
}
