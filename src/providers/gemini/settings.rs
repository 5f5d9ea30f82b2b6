//! The Gemini CLI hook configuration DING's adapter relies on: what `ding
//! compile-agent gemini` merges into the settings, and what the adapter
//! checks is there.
//!
//! Gemini CLI 0.61.0 reads hooks from the user's `~/.gemini/settings.json`
//! and the project's `<cwd>/.gemini/settings.json` (and a system file),
//! and runs all of them, but only in a trusted folder (findings, 4). DING
//! writes the project's file by default, merged with whatever the user
//! keeps there. Each hook runs `ding hook gemini EVENT` through the shell,
//! named `ding-EVENT` (the name Gemini CLI shows while it runs).
//!
//! All hooks are synchronous: Gemini CLI has no background hook, and no
//! hook starts a turn at idle (findings, 4c); idle work goes by the
//! terminal.

use serde_json::{Value, json};

use super::timing::HOOK_TIMEOUT_MS;
use crate::adapter::compile::guarded_hook_command;
use crate::adapter::hook_config::HookEntry;

/// Where `ding compile-agent gemini` writes the hooks, under the project.
pub const SETTINGS_FILE: &str = ".gemini/settings.json";

/// The provider name in `ding hook gemini EVENT`.
pub const PROVIDER: &str = "gemini";

/// The hooks, in the order they are written.
pub const EVENTS: [&str; 8] = [
    "SessionStart",
    "BeforeAgent",
    "BeforeTool",
    "AfterTool",
    "AfterAgent",
    "Notification",
    "PreCompress",
    "SessionEnd",
];

/// Gemini CLI's matcher for every tool (and every source).
const EVERY: &str = "*";

/// The hook command for `event`, running `ding` as `program` (a shell word
/// is written as is, anything else single-quoted), guarded so that a
/// `ding` the harness cannot find fails nothing ([`guarded_hook_command`]):
/// Gemini CLI blocks the person's prompt on a hook that fails.
pub fn command(program: &str, event: &str) -> String {
    guarded_hook_command(program, &format!("{PROVIDER} {event}"))
}

/// Whether a handler is one of DING's (any version's): its command runs
/// `ding hook gemini ...`.
pub fn is_ours(handler: &Value) -> bool {
    handler["command"]
        .as_str()
        .is_some_and(|command| command.contains(&format!(" hook {PROVIDER} ")))
}

/// Every handler DING wants, with `ding` spelled `program`.
pub fn hook_entries(program: &str) -> Vec<HookEntry> {
    EVENTS
        .iter()
        .map(|event| HookEntry {
            event: (*event).to_string(),
            matcher: Some(EVERY.into()),
            handler: json!({
                "name": format!("ding-{event}"),
                "type": "command",
                "command": command(program, event),
                "timeout": HOOK_TIMEOUT_MS,
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_an_odd_program_and_stay_recognizable() {
        assert_eq!(
            command("ding", "AfterAgent"),
            "command -v ding >/dev/null 2>&1 && exec ding hook gemini AfterAgent; exit 0"
        );
        assert!(
            command("/opt/my tools/ding", "AfterAgent")
                .contains("exec '/opt/my tools/ding' hook gemini AfterAgent;")
        );
        for entry in hook_entries("/opt/it's/ding") {
            assert!(is_ours(&entry.handler), "{:?}", entry.handler);
            assert_eq!(entry.matcher.as_deref(), Some("*"));
        }
        assert!(!is_ours(&json!({"command": "notify-send done"})));
    }
}
