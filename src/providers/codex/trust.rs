//! DING's Codex hooks and their trust, declared per invocation.
//!
//! Codex 0.169.0 runs a hook only once it is trusted: `hooks.state` holds,
//! per hook key, the `trusted_hash` the user reviewed. The hash is
//! computable offline (`docs/providers/codex-findings.md` §1, confirmed for
//! every vector in `fixtures/providers/codex/trust/`):
//!
//! * identity: `{"event_name": E, "matcher": M (if any), "hooks": [{"type":
//!   "command", "command": C, "timeout": T, "async": A, "statusMessage": S
//!   (if any)}]}` with `E` the event in snake case, `T` the timeout (default
//!   600, at least 1, and at most 3 for `SessionEnd` and `Interrupt`, which
//!   Codex clamps and hashes clamped);
//! * hash: `sha256:` and the hex SHA-256 of that JSON, compact, keys sorted
//!   at every level, UTF-8 unescaped;
//! * key: `SOURCE:EVENT_SNAKE:GROUP:HANDLER`, where `SOURCE` is
//!   `/<session-flags>/config.toml` for `-c` arguments.
//!
//! So the launcher (`launch/`) gives Codex DING's hooks and exactly their
//! trust as `-c hooks.EVENT=[...]` and `-c hooks.state={...}` arguments:
//! no file is written, the user's own hooks keep their review state, and
//! DING's hooks run only in sessions DING launched. (The alternatives, and
//! why not: `docs/providers/codex.md`.)

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::adapter::compile::shell_word;

/// The provider name in `ding hook codex EVENT`.
pub const PROVIDER: &str = "codex";

/// Where Codex says `-c` hooks come from, in their keys.
pub const SESSION_FLAGS_SOURCE: &str = "/<session-flags>/config.toml";

/// The hooks DING declares, each with its timeout in seconds: above `ding
/// hook`'s own 10 s, except the two Codex clamps to 3 s (declared as 3, so
/// that what is declared is what is hashed).
pub const HOOKS: [(&str, u64); 11] = [
    ("SessionStart", 30),
    ("UserPromptSubmit", 30),
    ("PreModelRequest", 30),
    ("PreToolUse", 30),
    ("PermissionRequest", 30),
    ("PostToolUse", 30),
    ("PreCompact", 30),
    ("PostCompact", 30),
    ("Stop", 30),
    ("Interrupt", 3),
    ("SessionEnd", 3),
];

/// The events whose timeouts Codex clamps to 3 s.
const CLAMPED_TO_3S: [&str; 2] = ["SessionEnd", "Interrupt"];

/// One command hook as Codex hashes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handler {
    pub command: String,
    /// Seconds; `None`: Codex's default (600).
    pub timeout: Option<u64>,
    pub is_async: bool,
    pub status_message: Option<String>,
}

/// `PreToolUse` -> `pre_tool_use`.
pub fn snake(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (index, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if index > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The trust hash of one handler alone in its group under `event`.
pub fn trusted_hash(event: &str, handler: &Handler, matcher: Option<&str>) -> String {
    let mut timeout = handler.timeout.unwrap_or(600).max(1);
    if CLAMPED_TO_3S.contains(&event) {
        timeout = timeout.min(3);
    }
    let mut hook = json!({
        "type": "command",
        "command": handler.command,
        "timeout": timeout,
        "async": handler.is_async,
    });
    if let Some(message) = &handler.status_message {
        hook["statusMessage"] = Value::String(message.clone());
    }
    let mut identity = json!({"event_name": snake(event), "hooks": [hook]});
    if let Some(matcher) = matcher {
        identity["matcher"] = Value::String(matcher.into());
    }
    // serde_json's map is ordered by key: its compact form is canonical.
    let digest = Sha256::digest(identity.to_string().as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// The key of the first handler of the first group under `event` in
/// `source`.
pub fn key(source: &str, event: &str) -> String {
    format!("{source}:{}:0:0", snake(event))
}

/// The hook command for `event`, running `ding` as `program`.
pub fn command(program: &str, event: &str) -> String {
    format!("{} hook {PROVIDER} {event}", shell_word(program))
}

/// Whether a hook command is one of DING's (any version's).
pub fn is_ours(command: &str) -> bool {
    command.contains(&format!(" hook {PROVIDER} "))
}

/// DING's handler for `event` with timeout `timeout`.
fn handler(program: &str, event: &str, timeout: u64) -> Handler {
    Handler {
        command: command(program, event),
        timeout: Some(timeout),
        is_async: false,
        status_message: None,
    }
}

/// The `-c` arguments that declare DING's hooks (with `ding` spelled
/// `program`) and trust exactly them, for one invocation.
pub fn config_args(program: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut state = Vec::new();
    for (event, timeout) in HOOKS {
        let handler = handler(program, event, timeout);
        args.push("-c".to_string());
        args.push(format!(
            "hooks.{event}=[{{hooks=[{{type=\"command\",command={},timeout={timeout}}}]}}]",
            toml_string(&handler.command)
        ));
        state.push(format!(
            "{}={{trusted_hash={}}}",
            toml_string(&key(SESSION_FLAGS_SOURCE, event)),
            toml_string(&trusted_hash(event, &handler, None))
        ));
    }
    args.push("-c".to_string());
    args.push(format!("hooks.state={{{}}}", state.join(",")));
    args
}

/// The events whose hooks `args` (a Codex argv tail) declares with DING's
/// commands: what the launcher tells the adapter it passed.
pub fn declared_events(args: &[String]) -> Vec<String> {
    args.windows(2)
        .filter(|pair| pair[0] == "-c" || pair[0] == "--config")
        .filter_map(|pair| {
            let (key, value) = pair[1].split_once('=')?;
            let event = key.strip_prefix("hooks.")?;
            (event != "state" && is_ours(value)).then(|| event.to_string())
        })
        .collect()
}

/// `text` as a TOML basic string. JSON's string escapes are a subset of
/// TOML's, so serde_json's encoding is one.
pub fn toml_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_snake_cased_as_codex_keys_them() {
        assert_eq!(snake("PreToolUse"), "pre_tool_use");
        assert_eq!(snake("SessionEnd"), "session_end");
        assert_eq!(
            key(SESSION_FLAGS_SOURCE, "UserPromptSubmit"),
            "/<session-flags>/config.toml:user_prompt_submit:0:0"
        );
    }

    #[test]
    fn the_arguments_declare_and_trust_every_hook_and_read_back() {
        let args = config_args("/opt/my tools/ding");
        assert_eq!(args.len(), 2 * (HOOKS.len() + 1));
        assert!(args.iter().step_by(2).all(|flag| flag == "-c"));
        assert_eq!(
            args[1],
            "hooks.SessionStart=[{hooks=[{type=\"command\",command=\"'/opt/my tools/ding' hook codex SessionStart\",timeout=30}]}]"
        );
        let state = args.last().expect("state");
        assert!(state.starts_with("hooks.state={\"/<session-flags>/config.toml:session_start:0:0\"={trusted_hash=\"sha256:"));
        assert_eq!(
            declared_events(&args),
            HOOKS.map(|(event, _)| event.to_string()).to_vec()
        );
        assert!(
            declared_events(&[
                "-c".into(),
                "hooks.Stop=[{hooks=[{command=\"notify\"}]}]".into()
            ])
            .is_empty()
        );
    }

    #[test]
    fn toml_strings_escape_quotes_and_backslashes() {
        assert_eq!(toml_string("/a \"b\"\\c"), r#""/a \"b\"\\c""#);
    }
}
