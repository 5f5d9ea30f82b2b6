//! The Claude Code hook configuration DING's adapter relies on: what
//! `ding compile-agent claude` merges into the project's settings, and
//! what the adapter checks is there.
//!
//! Claude Code 2.1.328 reads hooks from `<cwd>/.claude/settings.json`,
//! `<cwd>/.claude/settings.local.json` and `~/.claude/settings.json`, and
//! runs all of them. DING writes `.claude/settings.local.json` (the local,
//! uncommitted one: its hooks name this machine's `ding`), merged with
//! whatever the user keeps there. Each hook runs `ding hook claude EVENT`
//! through `sh -c`, guarded: where `ding` cannot be found the command exits
//! 0 with nothing printed.
//!
//! Two kinds of handler:
//!
//! * **turn hooks**, synchronous, one per event the adapter reads
//!   ([`TURN_EVENTS`]);
//! * the **wake** hook, `ding hook claude wake`, in the background with
//!   `asyncRewake` on `SessionStart`, `UserPromptSubmit`, `Stop` and
//!   `FileChanged` (the inbox's `new/`, watched through the paths
//!   `SessionStart` returns): the adapter parks it, and its answer (exit 2,
//!   the work on stderr) wakes an idle session with no terminal input.
//!   Re-armed at every turn edge (an Esc-interrupted turn fires no `Stop`,
//!   but its prompt fired `UserPromptSubmit`) and on every inbox change.

use serde_json::{Value, json};

use super::timing::{WAKE_HOOK_TIMEOUT_SECS, WAKE_RELAY_TIMEOUT_SECS};
use crate::adapter::compile::guarded_hook_command;
use crate::adapter::hook_config::HookEntry;

/// Where `ding compile-agent claude` writes the hooks, under the project.
pub const SETTINGS_FILE: &str = ".claude/settings.local.json";

/// The provider name in `ding hook claude EVENT`.
pub const PROVIDER: &str = "claude";

/// The synchronous hooks, in the order they are written.
pub const TURN_EVENTS: [&str; 8] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "StopFailure",
    "Notification",
    "PreCompact",
];

/// The events that (re-)arm the wake hook.
pub const WAKE_EVENTS: [&str; 4] = ["SessionStart", "UserPromptSubmit", "Stop", "FileChanged"];

/// The `ding hook` event name of the wake hook.
pub const WAKE: &str = "wake";

/// The prefix Claude Code puts before the wake hook's stderr for the model
/// (`rewakeMessage`; by default it calls the text a "Stop hook blocking
/// error").
pub const WAKE_MESSAGE: &str = "DING, the inbox service (not the user), says:";

/// The line Claude Code shows for a wake (`rewakeSummary`).
pub const WAKE_SUMMARY: &str = "ding: unread inbox work";

/// The hook command for `event`, running `ding` as `program` (a shell word
/// is written as is, anything else single-quoted), guarded so that a
/// `ding` the harness cannot find fails nothing ([`guarded_hook_command`]).
pub fn command(program: &str, event: &str) -> String {
    if event == WAKE {
        guarded_hook_command(
            program,
            &format!("{PROVIDER} {WAKE} --timeout {WAKE_RELAY_TIMEOUT_SECS}"),
        )
    } else {
        guarded_hook_command(program, &format!("{PROVIDER} {event}"))
    }
}

/// Whether a handler is one of DING's (any version's): its command runs
/// `ding hook claude ...`.
pub fn is_ours(handler: &Value) -> bool {
    handler["command"]
        .as_str()
        .is_some_and(|command| command.contains(&format!(" hook {PROVIDER} ")))
}

/// Every handler DING wants, with `ding` spelled `program`; with `wake`
/// off (the terminal idle path), no wake hook.
pub fn hook_entries(program: &str, wake: bool) -> Vec<HookEntry> {
    let turn = TURN_EVENTS.iter().map(|event| HookEntry {
        event: (*event).to_string(),
        matcher: None,
        handler: json!({"type": "command", "command": command(program, event)}),
    });
    let wakes = if wake { &WAKE_EVENTS[..] } else { &[] };
    let wake = wakes.iter().map(|event| HookEntry {
        event: (*event).to_string(),
        matcher: None,
        handler: json!({
            "type": "command",
            "command": command(program, WAKE),
            "asyncRewake": true,
            "timeout": WAKE_HOOK_TIMEOUT_SECS,
            "rewakeMessage": WAKE_MESSAGE,
            "rewakeSummary": WAKE_SUMMARY,
        }),
    });
    turn.chain(wake).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_quote_an_odd_program_and_stay_recognizable() {
        assert_eq!(
            command("ding", "Stop"),
            "command -v ding >/dev/null 2>&1 && exec ding hook claude Stop; exit 0"
        );
        assert_eq!(
            command("/opt/my tools/ding", "Stop"),
            "command -v '/opt/my tools/ding' >/dev/null 2>&1 && exec '/opt/my tools/ding' hook claude Stop; exit 0"
        );
        assert!(command("ding", WAKE).contains(&format!(
            "exec ding hook claude wake --timeout {WAKE_RELAY_TIMEOUT_SECS};"
        )));
        for entry in hook_entries("/opt/it's/ding", true) {
            assert!(is_ours(&entry.handler), "{:?}", entry.handler);
        }
        assert!(!is_ours(&json!({"command": "notify-send done"})));
    }

    #[test]
    fn every_wake_handler_waits_less_than_claude_lets_it() {
        assert!(
            hook_entries("ding", false)
                .iter()
                .all(|entry| entry.handler["asyncRewake"].is_null())
        );
        let wakes: Vec<HookEntry> = hook_entries("ding", true)
            .into_iter()
            .filter(|entry| entry.handler["asyncRewake"] == true)
            .collect();
        assert_eq!(wakes.len(), WAKE_EVENTS.len());
        for entry in wakes {
            assert!(WAKE_RELAY_TIMEOUT_SECS < entry.handler["timeout"].as_u64().unwrap_or(0));
        }
    }
}
