//! The Anthropic Messages API as Claude Code 2.1.328 speaks it, for the
//! loopback model server: `POST /v1/messages` (Claude Code adds
//! `?beta=true`), streamed as server-sent events when `stream` is true, and
//! `POST /v1/messages/count_tokens`.
//!
//! What a request looks like (observed, docs/providers/model-servers.md):
//! `system` is a list of text blocks; `messages` alternate `user` and
//! `assistant`, and may also hold `system` messages, which is how hook
//! context and environment facts arrive (a `system` message may follow
//! the last `user` one). Harness reminders are `<system-reminder>` text
//! blocks inside `user` messages. After a tool call the last `user` message
//! holds a `tool_result` block, and a prompt queued during the turn rides
//! beside it as a text block.
//!
//! The tools it offers (13, in manual mode and in plan mode alike) include
//! `Bash`, `Write`, `Edit` and `AskUserQuestion`; `ExitPlanMode` and
//! `EnterPlanMode` are deferred: only named in the environment `system`
//! message ("available via ToolSearch"), yet a direct call works.
//! `mock:edit` is a `Write` call, `mock:choice` an `AskUserQuestion` call
//! and `mock:plan` an `ExitPlanMode` call, offered only in plan mode.

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::Request;
use crate::model_server::{
    Event, Ids, Reading, Reply, RoleText, WireFormat, prompt_text, slow_pieces,
};
use crate::script::{Class, Command, Plan, ToolCall};

/// The name of Claude Code's command tool.
const COMMAND_TOOL: &str = "Bash";
/// Its tool that creates or overwrites a file (`mock:edit`).
const WRITE_TOOL: &str = "Write";
/// Its tool that asks the human a question with options (`mock:choice`).
const QUESTION_TOOL: &str = "AskUserQuestion";
/// Its tool that asks the human to approve the plan (`mock:plan`).
const PLAN_TOOL: &str = "ExitPlanMode";

pub struct Messages;

pub fn wire_format() -> Box<dyn WireFormat> {
    Box::new(Messages)
}

impl WireFormat for Messages {
    fn read(&self, request: &Request, body: Option<&Value>) -> Reading {
        let class = match (request.method.as_str(), request.path()) {
            ("POST", "/v1/messages/count_tokens") => Class::CountTokens,
            ("POST", "/v1/messages") => match body {
                Some(body) => classify(body),
                None => Class::Unknown,
            },
            _ => Class::Unknown,
        };
        // The Bash tool waits for its command (up to its timeout): none
        // is still running.
        Reading::from_body(class, body, latest_prompt, texts)
    }

    fn offers(&self, body: &Value, call: &ToolCall) -> bool {
        match call {
            ToolCall::Edit { .. } => offered(body, WRITE_TOOL),
            ToolCall::Choice { .. } => offered(body, QUESTION_TOOL),
            // A deferred tool: named in the environment message, not in
            // `tools`, and callable only in plan mode (outside it the call
            // fails at once, "You are not in plan mode", with no dialog).
            ToolCall::PlanApproval { .. } => {
                plan_mode(body).is_some()
                    && (offered(body, PLAN_TOOL)
                        || texts(body).iter().any(|text| text.text.contains(PLAN_TOOL)))
            }
        }
    }

    fn render(&self, _request: &Request, body: Option<&Value>, plan: &Plan, ids: &Ids) -> Reply {
        let model = body
            .and_then(|body| body["model"].as_str())
            .unwrap_or("mock-model");
        let stream = body.is_some_and(|body| body["stream"] == true);
        let (blocks, stop_reason, pace) = match plan {
            Plan::NotFound => return Reply::NotFound,
            Plan::Tokens(tokens) => return Reply::Json(json!({"input_tokens": tokens})),
            // Never planned: no reading here has a still-running command.
            Plan::Wait(_) => (
                vec![Block::Text(vec!["mock: nothing to wait for.".into()])],
                "end_turn",
                Duration::ZERO,
            ),
            Plan::Text(text) => (
                vec![Block::Text(vec![text.clone()])],
                "end_turn",
                Duration::ZERO,
            ),
            // The session name it asked for, as the JSON its schema wants.
            Plan::Title(title) => {
                let name = title
                    .to_lowercase()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join("-");
                let text = json!({"name": name}).to_string();
                (vec![Block::Text(vec![text])], "end_turn", Duration::ZERO)
            }
            Plan::Tool(call) => (tool_blocks(call, body, ids), "tool_use", Duration::ZERO),
            // Claude Code keeps what is inside <summary> and asks again
            // (with a stronger instruction) when there is none.
            Plan::Summary(summary) => {
                let text = format!("<analysis>mock</analysis>\n<summary>{summary}</summary>");
                (vec![Block::Text(vec![text])], "end_turn", Duration::ZERO)
            }
            Plan::Slow { text, seconds } => {
                let (pieces, pace) = slow_pieces(text, *seconds);
                (vec![Block::Text(pieces)], "end_turn", pace)
            }
            Plan::Command(command) => (
                vec![Block::Tool(
                    ids.fresh("toolu"),
                    COMMAND_TOOL,
                    tool_input(command),
                )],
                "tool_use",
                Duration::ZERO,
            ),
        };
        let message_id = ids.fresh("msg");
        if stream {
            Reply::Events(events(&message_id, model, &blocks, stop_reason, pace))
        } else {
            Reply::Json(whole_message(&message_id, model, &blocks, stop_reason))
        }
    }
}

/// A content block of the reply: text in pieces, or a tool call.
enum Block {
    Text(Vec<String>),
    Tool(String, &'static str, Value),
}

/// Claude Code 2.1.328 compaction (`/compact`, or automatic): the last
/// `user` message is its summary instruction, with the tools still offered.
const COMPACTION_INSTRUCTION: &str =
    "Your task is to create a detailed summary of the conversation so far";

/// Whether a model call answers a prompt or a tool result: the last `user`
/// message decides (trailing `system` messages are context, not input).
fn classify(body: &Value) -> Class {
    if is_naming_request(body) {
        return Class::Title;
    }
    let Some(last_user) = last_user_message(body) else {
        return Class::Side;
    };
    if latest_prompt(body).is_some_and(|prompt| prompt.contains(COMPACTION_INSTRUCTION)) {
        return Class::Compaction;
    }
    let has_tool_result = blocks(&last_user["content"])
        .iter()
        .any(|block| block["type"] == "tool_result");
    if has_tool_result {
        Class::ToolResult
    } else {
        Class::Prompt
    }
}

/// Claude Code 2.1.328 names the session (seen right after a plan is
/// approved, before the tool result goes out): a request with no tools
/// whose output must be JSON holding just a `name`. It is not a turn.
fn is_naming_request(body: &Value) -> bool {
    let format = &body["output_config"]["format"];
    format["type"] == "json_schema"
        && format["schema"]["required"] == json!(["name"])
        && body["tools"].as_array().is_none_or(Vec::is_empty)
}

fn last_user_message(body: &Value) -> Option<&Value> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
}

/// The text the human submitted last: the last `user` message's text
/// blocks, without the harness's own `<system-reminder>` blocks.
fn latest_prompt(body: &Value) -> Option<String> {
    let message = last_user_message(body)?;
    let content = &message["content"];
    if let Some(text) = content.as_str() {
        return prompt_text([text]);
    }
    prompt_text(
        blocks(content)
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str()),
    )
}

/// Every text the model sees: `system`, then each message's text blocks
/// and tool results, with their roles.
fn texts(body: &Value) -> Vec<RoleText> {
    let mut out = Vec::new();
    push_texts(&mut out, "system", &body["system"]);
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("unknown");
        push_texts(&mut out, role, &message["content"]);
    }
    out
}

fn push_texts(out: &mut Vec<RoleText>, role: &str, content: &Value) {
    if let Some(text) = content.as_str() {
        out.push(RoleText::new(role, text));
        return;
    }
    for block in blocks(content) {
        match block["type"].as_str() {
            Some("text") => {
                if let Some(text) = block["text"].as_str() {
                    out.push(RoleText::new(role, text));
                }
            }
            Some("tool_result") => push_texts(out, "tool", &block["content"]),
            _ => {}
        }
    }
}

fn blocks(content: &Value) -> &[Value] {
    content.as_array().map_or(&[], Vec::as_slice)
}

/// The `Bash` tool's input. Its timeout (milliseconds, at most ten
/// minutes) outlasts the command, so a long run is not cut short.
fn tool_input(command: &Command) -> Value {
    let timeout_ms = (u64::from(command.seconds) + 60).min(600) * 1000;
    json!({
        "command": command.line,
        "description": command.description,
        "timeout": timeout_ms,
    })
}

/// The tool calls that carry out `call`, in order. A plan approval in
/// plan mode first writes the plan to the session's plan file: Claude Code
/// shows the plan approval ("Ready to code?", the plan, three options) only
/// for a plan it reads from that file, and the short "Exit plan mode?" with
/// none. It runs the two calls in order and answers both in one tool-result
/// request.
fn tool_blocks(call: &ToolCall, body: Option<&Value>, ids: &Ids) -> Vec<Block> {
    let mut blocks = Vec::new();
    let input = match call {
        ToolCall::Edit { path, content } => {
            json!({"file_path": path, "content": content})
        }
        ToolCall::Choice { question, options } => {
            let options: Vec<Value> = options
                .iter()
                .map(|label| json!({"label": label, "description": format!("Take {label}.")}))
                .collect();
            json!({"questions": [{
                "question": question,
                "header": "Mock",
                "options": options,
                "multiSelect": false,
            }]})
        }
        ToolCall::PlanApproval { plan } => {
            if let Some(file) = body.and_then(plan_mode).flatten() {
                blocks.push(Block::Tool(
                    ids.fresh("toolu"),
                    WRITE_TOOL,
                    json!({"file_path": file, "content": plan}),
                ));
            }
            // Claude Code reads the plan from the file; `plan` is what it
            // shows when there is none (a rejected plan's box).
            json!({"plan": plan})
        }
    };
    blocks.push(Block::Tool(ids.fresh("toolu"), tool_name(call), input));
    blocks
}

fn tool_name(call: &ToolCall) -> &'static str {
    match call {
        ToolCall::Edit { .. } => WRITE_TOOL,
        ToolCall::Choice { .. } => QUESTION_TOOL,
        ToolCall::PlanApproval { .. } => PLAN_TOOL,
    }
}

/// Whether the request's `tools` hold one named `name`.
fn offered(body: &Value, name: &str) -> bool {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|tool| tool["name"] == name)
}

/// What Claude Code 2.1.328 tells the model when plan mode starts, goes on,
/// or comes back, and when it ends (by ExitPlanMode or by Shift-Tab); the
/// latest of them says whether the session is in plan mode.
const PLAN_MODE_ON: [&str; 3] = [
    "Plan mode is active.",
    "Plan mode still active",
    "## Re-entering Plan Mode",
];
const PLAN_MODE_OFF: &str = "## Exited Plan Mode";

/// Where those reminders name the plan file: the path follows each of
/// these, up to a space (a trailing `.` or `)` is the sentence's).
const PLAN_FILE_AFTER: [&str; 4] = [
    "create your plan at ",
    "A plan file already exists at ",
    "A plan file exists at ",
    "Read-only except plan file (",
];

/// `Some` when the conversation is in plan mode, with the plan file the
/// latest reminder named (if it named one).
fn plan_mode(body: &Value) -> Option<Option<String>> {
    let mut mode = None;
    for text in texts(body) {
        let text = text.text.as_str();
        let on = PLAN_MODE_ON
            .iter()
            .filter_map(|marker| text.rfind(marker))
            .max();
        let off = text.rfind(PLAN_MODE_OFF);
        if on.is_some_and(|on| off.is_none_or(|off| on > off)) {
            mode = Some(plan_file(text).or(mode.flatten()));
        } else if off.is_some() {
            mode = None;
        }
    }
    mode
}

fn plan_file(text: &str) -> Option<String> {
    PLAN_FILE_AFTER.iter().find_map(|marker| {
        let start = text.find(marker)? + marker.len();
        let path = text[start..].split_whitespace().next()?;
        let path = path.trim_end_matches(['.', ')']);
        (path.starts_with('/') && path.ends_with(".md")).then(|| path.to_string())
    })
}

fn usage() -> Value {
    json!({
        "input_tokens": 1000,
        "output_tokens": 10,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

fn events(
    id: &str,
    model: &str,
    blocks: &[Block],
    stop_reason: &str,
    pace: Duration,
) -> Vec<Event> {
    let mut events = vec![Event::now(json!({
        "type": "message_start",
        "message": {
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(),
        },
    }))];
    for (index, block) in blocks.iter().enumerate() {
        match block {
            Block::Text(pieces) => {
                events.push(Event::now(json!({
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""},
                })));
                for piece in pieces {
                    events.push(Event::after(
                        pace,
                        json!({
                            "type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        }),
                    ));
                }
            }
            Block::Tool(tool_id, name, input) => {
                events.push(Event::now(json!({
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
                })));
                events.push(Event::now(json!({
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()},
                })));
            }
        }
        events.push(Event::now(
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(Event::now(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 10},
    })));
    events.push(Event::now(json!({"type": "message_stop"})));
    events
}

fn whole_message(id: &str, model: &str, blocks: &[Block], stop_reason: &str) -> Value {
    let content: Vec<Value> = blocks
        .iter()
        .map(|block| match block {
            Block::Text(pieces) => json!({"type": "text", "text": pieces.concat()}),
            Block::Tool(tool_id, name, input) => {
                json!({"type": "tool_use", "id": tool_id, "name": name, "input": input})
            }
        })
        .collect();
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": usage(),
    })
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
