//! DING's OpenCode server plugin, run by Node against scripted adapters on
//! the hook channel: what it sends, what it does with each answer, and
//! that it never keeps the person's work waiting on DING: no socket means
//! no hooks at all, a socket nobody listens on costs nothing, and a
//! wedged adapter costs at most the plugin's call timeout, after which
//! OpenCode goes on as if the inbox were empty.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::Duration;

use ding::providers::opencode::plugins::SERVER;
use ding::providers::opencode::timing::CALL_TIMEOUT;
use serde_json::{Value, json};

/// Runs `hook` of the server plugin once in Node, with `socket` as
/// `DING_HOOK_SOCKET` (none: unset), on a prompt `text` (or a tool result);
/// returns what the driver printed: the hooks it found, the parts or
/// output after the hook, and how long the hook took.
fn run_hook(dir: &Path, socket: Option<&Path>, hook: &str) -> Value {
    std::fs::write(dir.join("package.json"), "{\"type\":\"module\"}\n").unwrap();
    std::fs::write(dir.join("ding-server.js"), SERVER.text()).unwrap();
    let driver = r#"
import { DingServer } from "./ding-server.js";
const hooks = await DingServer({});
const hook = process.argv[2];
const started = Date.now();
let result = null;
if (hook === "chat.message" && hooks[hook]) {
  const output = { message: { id: "msg_1" }, parts: [{ id: "prt_1", type: "text", text: "fix the build", messageID: "msg_1", sessionID: "ses_1" }] };
  await hooks[hook]({ sessionID: "ses_1", messageID: "msg_1" }, output);
  result = output.parts;
}
if (hook === "subagent") {
  await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1", parentID: "ses_parent" } } } });
  const output = { message: { id: "msg_1" }, parts: [{ id: "prt_1", type: "text", text: "explore", messageID: "msg_1", sessionID: "ses_1" }] };
  await hooks["chat.message"]({ sessionID: "ses_1", messageID: "msg_1" }, output);
  result = output.parts;
}
if (hook === "queued") {
  await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_1", status: { type: "busy" } } } });
  const output = { message: { id: "msg_1" }, parts: [{ id: "prt_1", type: "text", text: "and then", messageID: "msg_1", sessionID: "ses_1" }] };
  await hooks["chat.message"]({ sessionID: "ses_1", messageID: "msg_1" }, output);
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_1" } } });
  const later = { message: { id: "msg_2" }, parts: [{ id: "prt_2", type: "text", text: "at idle", messageID: "msg_2", sessionID: "ses_1" }] };
  await hooks["chat.message"]({ sessionID: "ses_1", messageID: "msg_2" }, later);
  result = output.parts;
}
if (hook === "tool.execute.after" && hooks[hook]) {
  const output = { title: "bash", output: "done", metadata: {} };
  await hooks[hook]({ tool: "bash", sessionID: "ses_1", callID: "c1", args: {} }, output);
  result = output.output;
}
console.log(JSON.stringify({ hooks: Object.keys(hooks), result, tookMs: Date.now() - started }));
process.exit(0);
"#;
    std::fs::write(dir.join("driver.mjs"), driver).unwrap();
    let mut command = Command::new("node");
    command.arg("driver.mjs").arg(hook).current_dir(dir);
    for name in [
        "DING_HOOK_SOCKET",
        "DING_RUNTIME_DIR",
        "DING_SESSION",
        "DING_INCARNATION",
        "DING_GENERATION",
    ] {
        command.env_remove(name);
    }
    if let Some(socket) = socket {
        command
            .env("DING_HOOK_SOCKET", socket)
            .env("DING_SESSION", "host.worker")
            .env("DING_INCARNATION", "inc-1")
            .env("DING_GENERATION", "sha256:g");
    }
    let output = command
        .output()
        .expect("node runs (npm installs the harnesses, and Node with them)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("the driver's line")
}

/// An adapter that answers every call with `answer` (none: never answers)
/// and hands back each call line and whatever followed the answer (the
/// receipt).
fn adapter(socket: &Path, answer: Option<Value>) -> thread::JoinHandle<Vec<(Value, String)>> {
    let listener = UnixListener::bind(socket).unwrap();
    thread::spawn(move || {
        let mut seen = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            let call: Value = serde_json::from_str(&line).unwrap();
            let done = call["event"] != "plugin.loaded";
            let mut after = String::new();
            match &answer {
                Some(answer) => {
                    let mut writer = stream;
                    writer.write_all(format!("{answer}\n").as_bytes()).unwrap();
                    let _ = reader.read_to_string(&mut after);
                }
                None => {
                    // Wedged: read until the plugin gives up and closes.
                    let _ = reader.read_to_string(&mut after);
                }
            }
            seen.push((call, after));
            if done {
                break;
            }
        }
        seen
    })
}

#[test]
fn without_ding_the_plugin_registers_no_hook() {
    let dir = tempfile::tempdir().unwrap();
    let ran = run_hook(dir.path(), None, "chat.message");
    assert_eq!(ran["hooks"], json!([]), "{ran}");
}

/// A subagent's prompt, as its session's events said, carries nothing.
#[test]
fn a_subagent_s_prompt_is_said_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let calls = adapter(
        &socket,
        Some(json!({"stdout": "", "stderr": "", "exit": 0})),
    );
    let ran = run_hook(dir.path(), Some(&socket), "subagent");
    assert_eq!(ran["result"].as_array().map(Vec::len), Some(1), "{ran}");
    let seen = calls.join().unwrap();
    let (call, _) = seen.last().unwrap();
    assert_eq!(call["payload"]["parentID"], "ses_parent");
}

/// A prompt sent while its session runs a turn waits behind it, where an
/// Esc or a rejected permission can strand it: the plugin says so, from
/// the session's own status events.
#[test]
fn a_prompt_sent_during_a_turn_is_said_to_be_queued() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let calls = adapter(
        &socket,
        Some(json!({"stdout": "", "stderr": "", "exit": 0})),
    );
    run_hook(dir.path(), Some(&socket), "queued");
    let seen = calls.join().unwrap();
    let prompts: Vec<&Value> = seen
        .iter()
        .map(|(call, _)| call)
        .filter(|call| call["event"] == "chat.message")
        .collect();
    // (The scripted adapter takes one call; the prompt at idle after it
    // is `claimed_work_rides_the_prompt_...`'s, `queued: false`.)
    assert_eq!(prompts.len(), 1, "{seen:?}");
    assert_eq!(prompts[0]["payload"]["queued"], true);
}

#[test]
fn an_adapter_that_is_not_there_costs_the_prompt_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("gone.sock");
    let ran = run_hook(dir.path(), Some(&socket), "chat.message");
    assert_eq!(ran["result"].as_array().map(Vec::len), Some(1), "{ran}");
    assert!(
        ran["tookMs"].as_u64().unwrap() < CALL_TIMEOUT.as_millis() as u64,
        "{ran}"
    );
}

#[test]
fn a_wedged_adapter_costs_at_most_the_call_timeout_and_the_prompt_goes_on_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let calls = adapter(&socket, None);
    let ran = run_hook(dir.path(), Some(&socket), "chat.message");
    let took = Duration::from_millis(ran["tookMs"].as_u64().unwrap());
    assert!(took >= CALL_TIMEOUT, "{ran}");
    assert!(took < CALL_TIMEOUT * 2, "{ran}");
    assert_eq!(ran["result"].as_array().map(Vec::len), Some(1), "{ran}");
    let seen = calls.join().unwrap();
    let (call, _) = seen.last().unwrap();
    assert_eq!(call["event"], "chat.message");
}

#[test]
fn claimed_work_rides_the_prompt_as_a_hidden_part_and_the_receipt_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let answer = json!({"stdout": "{\"context\":\"[ding] 1 unread\"}\n", "stderr": "", "exit": 0});
    let calls = adapter(&socket, Some(answer));
    let ran = run_hook(dir.path(), Some(&socket), "chat.message");
    let parts = ran["result"].as_array().expect("parts");
    assert_eq!(parts.len(), 2, "{ran}");
    assert_eq!(parts[1]["text"], "[ding] 1 unread");
    assert_eq!(parts[1]["synthetic"], true);
    assert_eq!(parts[1]["messageID"], "msg_1");
    let seen = calls.join().unwrap();
    let (loaded, _) = &seen[0];
    assert_eq!(loaded["event"], "plugin.loaded");
    assert_eq!(loaded["payload"]["plugin"], "server");
    let (call, after) = seen.last().unwrap();
    assert_eq!(call["v"], 1);
    assert_eq!(call["provider"], "opencode");
    assert_eq!(call["identity"]["incarnation"], "inc-1");
    assert_eq!(
        call["payload"],
        json!({"sessionID": "ses_1", "parentID": null, "text": "fix the build", "queued": false})
    );
    assert_eq!(after.trim(), ding::adapter::hook_wire::RECEIPT_LINE);
}

#[test]
fn claimed_work_rides_a_tool_result() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let answer = json!({"stdout": "{\"context\":\"[ding] 1 unread\"}\n", "stderr": "", "exit": 0});
    let calls = adapter(&socket, Some(answer));
    let ran = run_hook(dir.path(), Some(&socket), "tool.execute.after");
    assert_eq!(ran["result"], "done\n\n[ding] 1 unread", "{ran}");
    let seen = calls.join().unwrap();
    let (call, after) = seen.last().unwrap();
    assert_eq!(call["event"], "tool.execute.after");
    assert_eq!(after.trim(), ding::adapter::hook_wire::RECEIPT_LINE);
}

#[test]
fn an_answer_that_is_not_ding_s_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hook.sock");
    let refusal = json!({"error": "refused", "message": "another provider"});
    let calls = adapter(&socket, Some(refusal));
    let ran = run_hook(dir.path(), Some(&socket), "chat.message");
    assert_eq!(ran["result"].as_array().map(Vec::len), Some(1), "{ran}");
    let seen = calls.join().unwrap();
    let (_, after) = seen.last().unwrap();
    assert!(
        after.is_empty(),
        "no receipt for an answer not used: {after:?}"
    );
}
