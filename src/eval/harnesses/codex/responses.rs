//! The OpenAI Responses API as Codex CLI 0.169.0 speaks it, for the
//! loopback model server: `POST /v1/responses`, always streamed as
//! server-sent events.
//!
//! What a request looks like (observed, docs/providers/model-servers.md):
//! `input` is a list of items: `message`s with role `developer` (the
//! harness's instructions and hook context) or `user` (harness context in
//! `<environment_context>` elements, then the prompt), `function_call`s and
//! their `function_call_output`s. The header `x-codex-turn-metadata` (also
//! `client_metadata` in the body) carries the harness's `turn_id`, and
//! `thread_source: "thread_title"` on the title request Codex makes after
//! a prompt; that request also asks for a JSON `{"title": ...}` through
//! `text.format` and offers no tools. A compaction (`/compact`) request
//! says `request_kind: "compaction"` there (a turn says `"turn"`).
//!
//! The dialog directives (`mock:edit`, `mock:choice`, `mock:plan`) are
//! rendered only as far as the request shows they work: the tools it
//! offers, and its collaboration mode (the latest `<collaboration_mode>`
//! developer message, Default or Plan). For the mock model Codex offers no
//! `apply_patch` tool (no model metadata), so an edit is an `apply_patch`
//! heredoc through `exec_command`, which Codex intercepts as a file change;
//! a freeform `apply_patch` tool, when offered, gets the patch itself.
//! `request_user_input` is offered everywhere and works only where its
//! description says (Plan mode by default). A plan to approve is Plan
//! mode's `<proposed_plan>` reply: Codex has no tool for it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::Request;
use crate::model_server::{
    Event, Ids, Reading, Reply, RoleText, WireFormat, prompt_text, slow_pieces,
};
use crate::script::{Class, Command, Plan, ToolCall};

pub struct Responses;

pub fn wire_format() -> Box<dyn WireFormat> {
    Box::new(Responses)
}

impl WireFormat for Responses {
    fn read(&self, request: &Request, body: Option<&Value>) -> Reading {
        let metadata = turn_metadata(request, body);
        let class = match (request.method.as_str(), request.path(), body) {
            ("POST", "/v1/responses", Some(body)) => {
                if is_title_request(&metadata, body) {
                    Class::Title
                } else if metadata["request_kind"] == "compaction" {
                    Class::Compaction
                } else {
                    classify(body)
                }
            }
            _ => Class::Unknown,
        };
        Reading {
            turn_key: metadata["turn_id"].as_str().map(str::to_string),
            still_running: body.and_then(still_running),
            ..Reading::from_body(class, body, latest_prompt, texts)
        }
    }

    fn offers(&self, body: &Value, call: &ToolCall) -> bool {
        match call {
            ToolCall::Edit { .. } => edit_tool(body).is_some(),
            ToolCall::Choice { .. } => choice_works(body),
            ToolCall::PlanApproval { .. } => in_plan_mode(body),
        }
    }

    fn render(&self, request: &Request, body: Option<&Value>, plan: &Plan, ids: &Ids) -> Reply {
        let empty = Value::Null;
        let body = body.unwrap_or(&empty);
        let model = body["model"].as_str().unwrap_or("mock-model");
        let response_id = ids.fresh("resp");
        let (item, pieces, pace) = match plan {
            Plan::NotFound => return Reply::NotFound,
            Plan::Tokens(tokens) => return Reply::Json(json!({"input_tokens": tokens})),
            Plan::Text(text) | Plan::Summary(text) => (
                Item::Message(ids.fresh("msg")),
                vec![text.clone()],
                Duration::ZERO,
            ),
            // Plan mode's approval is a reply, not a tool call: Codex asks
            // "Implement this plan?" once the turn that proposed it ends.
            Plan::Tool(ToolCall::PlanApproval { plan }) => (
                Item::Message(ids.fresh("msg")),
                vec![proposed_plan(plan)],
                Duration::ZERO,
            ),
            Plan::Tool(ToolCall::Choice { question, options }) => (
                choice_item(question, options, ids),
                Vec::new(),
                Duration::ZERO,
            ),
            Plan::Tool(call @ ToolCall::Edit { path, content }) => {
                match edit_item(body, path, content, ids) {
                    Some(item) => (item, Vec::new(), Duration::ZERO),
                    // Not offered (`offers`): the server never plans one here.
                    None => (
                        Item::Message(ids.fresh("msg")),
                        vec![format!("mock: no {} tool here.", call.what())],
                        Duration::ZERO,
                    ),
                }
            }
            Plan::Title(title) => (
                Item::Message(ids.fresh("msg")),
                vec![json!({"title": title}).to_string()],
                Duration::ZERO,
            ),
            Plan::Slow { text, seconds } => {
                let (pieces, pace) = slow_pieces(text, *seconds);
                (Item::Message(ids.fresh("msg")), pieces, pace)
            }
            Plan::Wait(session) => {
                let call = Item::Call {
                    id: ids.fresh("fc"),
                    call_id: ids.fresh("call"),
                    name: "write_stdin",
                    arguments: wait_arguments(session).to_string(),
                };
                (call, Vec::new(), Duration::ZERO)
            }
            Plan::Command(command) => {
                let sandboxed =
                    turn_metadata(request, Some(body))["sandbox_mode"] != "danger-full-access";
                let (name, arguments) = tool_call(body, command, sandboxed);
                let call = Item::Call {
                    id: ids.fresh("fc"),
                    call_id: ids.fresh("call"),
                    name,
                    arguments: arguments.to_string(),
                };
                (call, Vec::new(), Duration::ZERO)
            }
        };
        Reply::Events(events(&response_id, model, &item, &pieces, pace))
    }
}

/// The output item of a reply.
enum Item {
    Message(String),
    Call {
        id: String,
        call_id: String,
        name: &'static str,
        arguments: String,
    },
    /// A call of a freeform (`custom`) tool: its input is plain text.
    Custom {
        id: String,
        call_id: String,
        name: &'static str,
        input: String,
    },
}

/// Codex's tool that asks the human a question with options.
const CHOICE_TOOL: &str = "request_user_input";

/// Codex's file-editing tool.
const PATCH_TOOL: &str = "apply_patch";

/// The tool named `name` among the request's tools, if offered.
fn offered<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|tool| tool["name"] == name)
}

/// How a request lets the model change a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EditTool {
    /// `apply_patch` as a freeform tool (`type: "custom"` with a grammar):
    /// what Codex 0.169 offers a model whose metadata asks for it (every
    /// model it bundles; `freeform` is the only `apply_patch_tool_type` it
    /// accepts).
    Freeform,
    /// No `apply_patch` tool (the mock model has no metadata, and Codex's
    /// fallback offers none), but `exec_command`: Codex intercepts a command
    /// that is an `apply_patch` heredoc and applies it as a file change,
    /// approval dialog included.
    Exec,
}

fn edit_tool(body: &Value) -> Option<EditTool> {
    if offered(body, PATCH_TOOL).is_some_and(|tool| tool["type"] == "custom") {
        return Some(EditTool::Freeform);
    }
    offered(body, "exec_command").map(|_| EditTool::Exec)
}

/// The collaboration mode the request runs in, from the latest
/// `<collaboration_mode>` instructions Codex sent (`Default`, `Plan`), if
/// any. The whole history is in every request, so the latest one is the
/// mode now.
fn collaboration_mode(body: &Value) -> Option<&'static str> {
    let latest = texts(body)
        .into_iter()
        .rev()
        .find(|text| text.role == "developer" && text.text.starts_with("<collaboration_mode>"))?;
    let heading = latest.text["<collaboration_mode>".len()..]
        .lines()
        .next()
        .unwrap_or("");
    if heading.starts_with("# Plan Mode") {
        Some("Plan")
    } else if heading.starts_with("# Collaboration Mode: Default") {
        Some("Default")
    } else {
        None
    }
}

/// Whether the request is in Plan mode (a person picks it with `/plan` or
/// Shift+Tab): there a final reply with a `<proposed_plan>` block makes
/// Codex ask whether to implement it.
fn in_plan_mode(body: &Value) -> bool {
    collaboration_mode(body) == Some("Plan")
}

/// Whether `request_user_input` is offered and works in the request's
/// mode. Codex 0.169 offers it in every mode, but its description says
/// where it works ("only available in Plan mode"; "in Default or Plan
/// mode" with the feature `default_mode_request_user_input`); elsewhere a
/// call comes back as an error with no dialog.
fn choice_works(body: &Value) -> bool {
    let Some(tool) = offered(body, CHOICE_TOOL) else {
        return false;
    };
    let description = tool["description"].as_str().unwrap_or("");
    let Some((_, modes)) = description.split_once("only available in ") else {
        return true;
    };
    collaboration_mode(body).is_some_and(|mode| {
        modes
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word == mode)
    })
}

/// A final reply holding `plan` as Codex's Plan mode asks for it.
fn proposed_plan(plan: &str) -> String {
    format!("<proposed_plan>\n{plan}\n</proposed_plan>")
}

/// The patch that creates `path` holding `content`.
fn add_file_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    for line in content.lines() {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// The output item that creates `path` with the edit tool the request
/// offers.
fn edit_item(body: &Value, path: &str, content: &str, ids: &Ids) -> Option<Item> {
    let patch = add_file_patch(path, content);
    Some(match edit_tool(body)? {
        EditTool::Freeform => Item::Custom {
            id: ids.fresh("ctc"),
            call_id: ids.fresh("call"),
            name: PATCH_TOOL,
            input: patch,
        },
        // The quoted delimiter keeps the shell from expanding the patch.
        EditTool::Exec => Item::Call {
            id: ids.fresh("fc"),
            call_id: ids.fresh("call"),
            name: "exec_command",
            arguments: json!({"cmd": format!("apply_patch <<'EOF'\n{patch}EOF\n")}).to_string(),
        },
    })
}

/// The `request_user_input` call asking `question` with `options` (Codex
/// adds its own "None of the above" option after them).
fn choice_item(question: &str, options: &[String], ids: &Ids) -> Item {
    let options: Vec<Value> = options
        .iter()
        .map(|label| json!({"label": label, "description": format!("Pick {label}.")}))
        .collect();
    let arguments = json!({"questions": [{
        "id": "mock_choice",
        "header": "Mock",
        "question": question,
        "options": options,
    }]});
    Item::Call {
        id: ids.fresh("fc"),
        call_id: ids.fresh("call"),
        name: CHOICE_TOOL,
        arguments: arguments.to_string(),
    }
}

/// The `x-codex-turn-metadata` object (a JSON string in the header, and
/// again under `client_metadata` in the body); `Null` when absent.
fn turn_metadata(request: &Request, body: Option<&Value>) -> Value {
    let text = request
        .header("x-codex-turn-metadata")
        .or_else(|| body?["client_metadata"]["x-codex-turn-metadata"].as_str());
    text.and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null)
}

/// Codex 0.169 title request: `thread_source` is `thread_title`, and the
/// body asks for a JSON object with just a `title`.
fn is_title_request(metadata: &Value, body: &Value) -> bool {
    let schema = &body["text"]["format"]["schema"];
    metadata["thread_source"] == "thread_title"
        || (schema["required"] == json!(["title"])
            && body["tools"].as_array().is_none_or(Vec::is_empty))
}

/// The latest input decides: a tool output continues the turn, a `user`
/// message is a prompt. `developer` messages (hook context) are skipped.
fn classify(body: &Value) -> Class {
    let latest = input(body)
        .iter()
        .rev()
        .find(|item| is_tool_output(item) || (item["type"] == "message" && item["role"] == "user"));
    match latest {
        Some(item) if is_tool_output(item) => Class::ToolResult,
        Some(_) => Class::Prompt,
        None => Class::Side,
    }
}

fn is_tool_output(item: &Value) -> bool {
    matches!(
        item["type"].as_str(),
        Some("function_call_output" | "custom_tool_call_output")
    )
}

fn input(body: &Value) -> &[Value] {
    body["input"].as_array().map_or(&[], Vec::as_slice)
}

/// The text of the last `user` message after the last tool output (none
/// after a tool output means the request has no new prompt).
fn latest_prompt(body: &Value) -> Option<String> {
    let message = input(body)
        .iter()
        .rev()
        .take_while(|item| !is_tool_output(item))
        .find(|item| item["type"] == "message" && item["role"] == "user")?;
    prompt_text(content_texts(&message["content"]))
}

fn content_texts(content: &Value) -> Vec<&str> {
    if let Some(text) = content.as_str() {
        return vec![text];
    }
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// Every text the model sees: `instructions`, each message's text parts,
/// and tool outputs, with their roles.
fn texts(body: &Value) -> Vec<RoleText> {
    let mut out = Vec::new();
    if let Some(instructions) = body["instructions"]
        .as_str()
        .filter(|text| !text.is_empty())
    {
        out.push(RoleText::new("system", instructions));
    }
    for item in input(body) {
        if item["type"] == "message" {
            let role = item["role"].as_str().unwrap_or("unknown");
            for text in content_texts(&item["content"]) {
                out.push(RoleText::new(role, text));
            }
        } else if is_tool_output(item) {
            let output = &item["output"];
            let text = output
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| output.to_string());
            out.push(RoleText::new("tool", &text));
        }
    }
    out
}

/// Codex 0.169 `exec_command` waits at most 30 s (`yield_time_ms`), then
/// answers with the output so far and `Process running with session ID N`.
const STILL_RUNNING: &str = "Process running with session ID ";

/// The session id of a command the latest tool output says is still
/// running.
fn still_running(body: &Value) -> Option<String> {
    let output = input(body).iter().rev().find(|item| is_tool_output(item))?;
    let text = output["output"].as_str()?;
    let (_, rest) = text.split_once(STILL_RUNNING)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

/// `write_stdin` arguments that poll session `session` without writing,
/// for as long as Codex allows (an empty poll may wait up to 300 s).
fn wait_arguments(session: &str) -> Value {
    let id = session
        .parse::<u64>()
        .map_or_else(|_| json!(session), |id| json!(id));
    json!({"session_id": id, "chars": "", "yield_time_ms": 300_000})
}

/// The command tool the request offers, and its arguments for `command`.
/// Codex 0.169 offers `exec_command` (unified exec: `cmd`, waiting up to
/// `yield_time_ms` before it reports a still-running process); older
/// configurations offer `shell_command` or `shell`.
///
/// A command that needs permission asks to leave the sandbox
/// (`require_escalated`), which opens the approval dialog; unless there is
/// no sandbox (`danger-full-access`), where Codex runs it as it is and would
/// refuse the escalation request under `approval_policy = "never"`.
fn tool_call(body: &Value, command: &Command, sandboxed: bool) -> (&'static str, Value) {
    let offered = |name: &str| {
        body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == name))
    };
    let wait_ms = ((u64::from(command.seconds) + 5) * 1000).min(30_000);
    let (name, mut arguments) = if offered("shell_command") && !offered("exec_command") {
        (
            "shell_command",
            json!({"command": command.line, "timeout_ms": wait_ms}),
        )
    } else if offered("shell") && !offered("exec_command") {
        (
            "shell",
            json!({"command": ["bash", "-lc", command.line], "timeout_ms": wait_ms}),
        )
    } else {
        (
            "exec_command",
            json!({"cmd": command.line, "yield_time_ms": wait_ms}),
        )
    };
    if command.needs_permission && sandboxed {
        arguments["sandbox_permissions"] = json!("require_escalated");
        arguments["justification"] = json!(command.description);
    }
    (name, arguments)
}

fn usage() -> Value {
    json!({
        "input_tokens": 1000,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 1010,
    })
}

fn events(
    response_id: &str,
    model: &str,
    item: &Item,
    pieces: &[String],
    pace: Duration,
) -> Vec<Event> {
    let response = |status: &str, output: Value| json!({"id": response_id, "object": "response", "status": status, "model": model, "output": output});
    let mut events = vec![Event::now(json!({
        "type": "response.created",
        "response": response("in_progress", json!([])),
    }))];
    let done = match item {
        Item::Message(id) => {
            let text = pieces.concat();
            let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
            events.push(Event::now(json!({
                "type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": id, "status": "in_progress", "role": "assistant", "content": []},
            })));
            events.push(Event::now(json!({
                "type": "response.content_part.added", "item_id": id, "output_index": 0,
                "content_index": 0, "part": part(""),
            })));
            for piece in pieces {
                events.push(Event::after(
                    pace,
                    json!({
                        "type": "response.output_text.delta", "item_id": id, "output_index": 0,
                        "content_index": 0, "delta": piece,
                    }),
                ));
            }
            events.push(Event::now(json!({
                "type": "response.output_text.done", "item_id": id, "output_index": 0,
                "content_index": 0, "text": text,
            })));
            events.push(Event::now(json!({
                "type": "response.content_part.done", "item_id": id, "output_index": 0,
                "content_index": 0, "part": part(&text),
            })));
            json!({"type": "message", "id": id, "status": "completed", "role": "assistant", "content": [part(&text)]})
        }
        Item::Call {
            id,
            call_id,
            name,
            arguments,
        } => {
            let call = |status: &str, arguments: &str| json!({"type": "function_call", "id": id, "call_id": call_id, "name": name, "arguments": arguments, "status": status});
            events.push(Event::now(json!({
                "type": "response.output_item.added", "output_index": 0, "item": call("in_progress", ""),
            })));
            events.push(Event::now(json!({
                "type": "response.function_call_arguments.delta", "item_id": id, "output_index": 0,
                "delta": arguments,
            })));
            events.push(Event::now(json!({
                "type": "response.function_call_arguments.done", "item_id": id, "output_index": 0,
                "arguments": arguments,
            })));
            call("completed", arguments)
        }
        Item::Custom {
            id,
            call_id,
            name,
            input,
        } => {
            let call = |status: &str, input: &str| json!({"type": "custom_tool_call", "id": id, "call_id": call_id, "name": name, "input": input, "status": status});
            events.push(Event::now(json!({
                "type": "response.output_item.added", "output_index": 0, "item": call("in_progress", ""),
            })));
            events.push(Event::now(json!({
                "type": "response.custom_tool_call_input.delta", "item_id": id, "output_index": 0,
                "delta": input,
            })));
            events.push(Event::now(json!({
                "type": "response.custom_tool_call_input.done", "item_id": id, "output_index": 0,
                "input": input,
            })));
            call("completed", input)
        }
    };
    events.push(Event::now(json!({
        "type": "response.output_item.done", "output_index": 0, "item": done,
    })));
    let mut completed = response("completed", json!([done]));
    completed["usage"] = usage();
    events.push(Event::now(
        json!({"type": "response.completed", "response": completed}),
    ));
    events
}

#[cfg(test)]
#[path = "responses_tests.rs"]
mod tests;
