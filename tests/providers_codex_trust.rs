//! Codex's hook trust, computed offline, against what the real Codex
//! 0.169.0 app-server reported (`fixtures/providers/codex/trust/`): every
//! `currentHash` of `hooks-list.json` (a matcher, a status message, a
//! default timeout, a second handler, quotes and non-ASCII text), every
//! vector for `ding hook codex EVENT`, and the `-c` arguments the launcher
//! passes, whose `hooks.state` must trust exactly those hooks.

use std::fs;
use std::path::Path;

use ding::providers::codex::trust::{
    HOOKS, Handler, SESSION_FLAGS_SOURCE, config_args, key, snake, trusted_hash,
};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/codex/trust")
        .join(name);
    serde_json::from_str(&fs::read_to_string(&path).expect("fixture")).expect("JSON")
}

fn handler(value: &Value) -> Handler {
    Handler {
        command: value["command"].as_str().expect("command").into(),
        timeout: value["timeout"].as_u64(),
        is_async: value["async"].as_bool().unwrap_or(false),
        status_message: value["statusMessage"].as_str().map(String::from),
    }
}

#[test]
fn every_hash_the_app_server_reported_is_computed_offline() {
    let hooks = fixture("hooks.json");
    let listed = fixture("hooks-list.json");
    let entries: Vec<&Value> = listed["result"]["data"]
        .as_array()
        .expect("data")
        .iter()
        .flat_map(|cwd| cwd["hooks"].as_array().expect("hooks"))
        .collect();
    assert_eq!(entries.len(), 15);
    for entry in entries {
        // KEY = SOURCE:EVENT_SNAKE:GROUP:HANDLER
        let key_text = entry["key"].as_str().expect("key");
        let mut parts = key_text.rsplitn(4, ':');
        let (handler_at, group_at, event_snake) = (
            parts
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .expect("handler"),
            parts
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .expect("group"),
            parts.next().expect("event"),
        );
        let source = parts.next().expect("source");
        let (event, groups) = hooks["hooks"]
            .as_object()
            .expect("hooks")
            .iter()
            .find(|(event, _)| snake(event) == event_snake)
            .expect("the event in hooks.json");
        let group = &groups[group_at];
        let computed = trusted_hash(
            event,
            &handler(&group["hooks"][handler_at]),
            group["matcher"].as_str(),
        );
        assert_eq!(computed, entry["currentHash"], "{key_text}");
        if (group_at, handler_at) == (0, 0) {
            assert_eq!(key(source, event), key_text);
        }
    }
}

#[test]
fn the_vectors_for_dings_own_hooks_are_what_codex_trusted() {
    let vectors = fixture("ding-hook-vectors.json");
    let vectors = vectors["vectors"].as_array().expect("vectors");
    assert_eq!(vectors.len(), 14, "every event");
    for vector in vectors {
        let event = vector["event"].as_str().expect("event");
        assert_eq!(vector["appServer"]["trustStatus"], "trusted", "{event}");
        assert_eq!(
            trusted_hash(event, &handler(vector), None),
            vector["appServer"]["currentHash"],
            "{event}"
        );
        assert_eq!(key(SESSION_FLAGS_SOURCE, event), vector["key"], "{event}");
    }
}

/// The launcher's `-c` arguments declare each of DING's hooks and trust it
/// with the hash Codex computed for that very definition (timeouts 30, and
/// 3 for the two Codex clamps, which hash the same as the vectors' 30).
#[test]
fn the_launchers_arguments_trust_exactly_the_hooks_they_declare() {
    let vectors = fixture("ding-hook-vectors.json");
    let args = config_args("ding");
    let state = args.last().expect("state");
    for (event, _) in HOOKS {
        let vector = vectors["vectors"]
            .as_array()
            .expect("vectors")
            .iter()
            .find(|vector| vector["event"] == event)
            .expect("a vector");
        let entry = format!(
            "\"{}\"={{trusted_hash=\"{}\"}}",
            vector["key"].as_str().expect("key"),
            vector["trustedHash"].as_str().expect("hash")
        );
        assert!(state.contains(&entry), "{event}: {entry} in {state}");
        assert!(
            args.iter().any(|arg| arg.starts_with(&format!(
                "hooks.{event}=[{{hooks=[{{type=\"command\",command=\"ding hook codex {event}\","
            ))),
            "{event} declared"
        );
    }
    assert_eq!(state.matches("trusted_hash").count(), HOOKS.len());
}
