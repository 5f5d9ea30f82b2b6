//! OpenAI Chat Completions as OpenCode 1.18.33 speaks it through its
//! `@ai-sdk/openai-compatible` provider, for the loopback model server:
//! `POST /v1/chat/completions` (the provider's `baseURL` is the server's
//! `/v1`), streamed as server-sent events when the body says `stream: true`
//! (OpenCode always does), else one JSON reply.
//!
//! What a request looks like (observed, docs/providers/model-servers.md):
//! `messages` is the whole conversation: one `system` message (the agent's
//! instructions and environment), `user` messages, `assistant` messages
//! (text `content`, or `tool_calls`), and one `tool` message per tool call
//! (`tool_call_id`, its output as `content`). `content` is a string or a
//! list of `{"type":"text","text":...}` parts. Tools are `{"type":
//! "function","function":{"name","parameters"}}`; the build agent offers
//! `bash`, `edit`, `glob`, `grep`, `question`, `read`, `skill`, `task`,
//! `todowrite`, `webfetch` and `write`. The headers carry the session id
//! (`x-session-id`), not a turn's: turns are counted from the prompts.
//!
//! A tool output followed by a user message is one of two things: a prompt
//! the person queued while the tool ran (OpenCode sends it beside the
//! result, in the same turn: a `tool-result`), or the person's next prompt
//! after the turn stopped at that tool, because they rejected its
//! permission, dismissed its question or interrupted it (OpenCode ends the
//! turn there and the next prompt follows the stopped tool's output: a
//! `prompt`, a new turn). The stopped tool's output says which (`The user
//! rejected permission to use this specific tool call.`, `The user
//! dismissed this question`, `User aborted the command`, `Tool execution
//! aborted`).
//!
//! A new session's first prompt makes two requests: OpenCode's title
//! request (the title agent's `system` message "You are a title
//! generator…", then a `user` message "Generate a title for this
//! conversation:" and the prompt itself, no tools), then the turn's own
//! call. The title request ends with the person's prompt, so it is told
//! apart by its instruction, not by its last message, and answered with a
//! title: it is not a model call of the turn. A compaction (`/compact`) is
//! the compaction agent's request, no tools, whose last `user` message asks
//! for a summary of the conversation to continue from: answered with the
//! compaction summary, not a model call of the turn either.
//!
//! The stream is what the AI SDK's client parses: `data:` lines of
//! `chat.completion.chunk` objects and nothing else (no event name). The
//! stream ends with its connection: the client skips a `data: [DONE]`
//! line but does not need one, so none is sent. The last chunk carries the
//! `finish_reason` (`stop`, `tool_calls`) and the `usage`.
//!
//! Dialog directives are rendered as far as the request offers their
//! tools: `write` for an edit, `question` for a choice. OpenCode 1.18.33
//! has no plan-approval tool outside its experimental plan mode: not
//! rendered (the reply says there is no such tool here).

use std::time::Duration;

use serde_json::{Value, json};

use crate::http::Request;
use crate::model_server::{
    Event, Ids, Reading, Reply, RoleText, WireFormat, prompt_text, slow_pieces,
};
use crate::script::{Class, Command, Plan, ToolCall};

pub struct ChatCompletions;

pub fn wire_format() -> Box<dyn WireFormat> {
    Box::new(ChatCompletions)
}

/// The one path the provider calls (`baseURL` + `/chat/completions`).
pub const PATH: &str = "/v1/chat/completions";

/// OpenCode's shell tool.
const SHELL_TOOL: &str = "bash";
/// Its tool that creates (or overwrites) a file.
const WRITE_TOOL: &str = "write";
/// Its tool that asks the human questions with options.
const CHOICE_TOOL: &str = "question";

/// How the title agent's instruction starts.
const TITLE_INSTRUCTION: &str = "You are a title generator";
/// The user message the title request puts before the prompt.
const TITLE_REQUEST: &str = "Generate a title for this conversation";

/// How the compaction agent's instruction starts.
const COMPACTION_INSTRUCTION: &str = "You are a context summarization agent";
/// What the compaction request's last user message asks for.
const COMPACTION_MARKS: [&str; 2] = ["summary", "summarize"];

/// What the output of a tool at which the turn stopped says: the person
/// rejected its permission, dismissed its question, or interrupted it.
const STOPPED_TOOL: [&str; 4] = [
    "The user rejected permission to use this specific tool call.",
    "The user dismissed this question",
    "User aborted the command",
    "Tool execution aborted",
];

impl WireFormat for ChatCompletions {
    fn read(&self, request: &Request, body: Option<&Value>) -> Reading {
        let class = match (request.method.as_str(), request.path(), body) {
            ("POST", PATH, Some(body)) => {
                if is_title_request(body) {
                    Class::Title
                } else if is_compaction(body) {
                    Class::Compaction
                } else {
                    classify(body)
                }
            }
            _ => Class::Unknown,
        };
        Reading::from_body(class, body, latest_prompt, texts)
    }

    fn offers(&self, body: &Value, call: &ToolCall) -> bool {
        match call {
            ToolCall::Edit { .. } => offered(body, WRITE_TOOL),
            ToolCall::Choice { .. } => offered(body, CHOICE_TOOL),
            ToolCall::PlanApproval { .. } => false,
        }
    }

    fn render(&self, request: &Request, body: Option<&Value>, plan: &Plan, ids: &Ids) -> Reply {
        if request.path() != PATH {
            return Reply::NotFound;
        }
        let empty = Value::Null;
        let body = body.unwrap_or(&empty);
        let model = body["model"].as_str().unwrap_or("mock-model");
        let completion_id = ids.fresh("chatcmpl");
        let (output, pace) = match plan {
            // No token counts in this API: a count is never planned here.
            Plan::NotFound | Plan::Tokens(_) => return Reply::NotFound,
            Plan::Text(text) | Plan::Summary(text) | Plan::Title(text) => {
                (Output::Text(vec![text.clone()]), Duration::ZERO)
            }
            Plan::Slow { text, seconds } => {
                let (pieces, pace) = slow_pieces(text, *seconds);
                (Output::Text(pieces), pace)
            }
            // The shell tool waits for its command: nothing is left
            // running to wait for (`still_running` is never read here).
            Plan::Wait(_) => (
                Output::Text(vec!["mock: nothing is still running.".into()]),
                Duration::ZERO,
            ),
            Plan::Command(command) => (
                Output::Call {
                    id: ids.fresh("call"),
                    name: SHELL_TOOL,
                    arguments: shell_arguments(command),
                },
                Duration::ZERO,
            ),
            Plan::Tool(ToolCall::Edit { path, content }) => (
                Output::Call {
                    id: ids.fresh("call"),
                    name: WRITE_TOOL,
                    arguments: json!({"filePath": path, "content": content}),
                },
                Duration::ZERO,
            ),
            Plan::Tool(ToolCall::Choice { question, options }) => (
                Output::Call {
                    id: ids.fresh("call"),
                    name: CHOICE_TOOL,
                    arguments: choice_arguments(question, options),
                },
                Duration::ZERO,
            ),
            Plan::Tool(call @ ToolCall::PlanApproval { .. }) => (
                Output::Text(vec![format!("mock: no {} tool here.", call.what())]),
                Duration::ZERO,
            ),
        };
        if body["stream"] == true {
            Reply::Events(events(&completion_id, model, &output, pace))
        } else {
            Reply::Json(completion(&completion_id, model, &output))
        }
    }
}

/// What the assistant answers.
enum Output {
    /// Text, in the pieces it is streamed in.
    Text(Vec<String>),
    /// One call of a function tool.
    Call {
        id: String,
        name: &'static str,
        arguments: Value,
    },
}

impl Output {
    fn finish_reason(&self) -> &'static str {
        match self {
            Output::Text(_) => "stop",
            Output::Call { .. } => "tool_calls",
        }
    }

    fn tool_calls(&self) -> Option<Value> {
        match self {
            Output::Text(_) => None,
            Output::Call {
                id,
                name,
                arguments,
            } => Some(json!([{
                "index": 0,
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()},
            }])),
        }
    }
}

/// `bash` arguments for `command`. The tool has no description field in
/// 1.18.33; its timeout (milliseconds, two minutes by default) is set to
/// outlast the command.
fn shell_arguments(command: &Command) -> Value {
    json!({
        "command": command.line,
        "timeout": (u64::from(command.seconds) + 10) * 1000,
    })
}

/// `question` arguments asking `question` with `options`.
fn choice_arguments(question: &str, options: &[String]) -> Value {
    let options: Vec<Value> = options
        .iter()
        .map(|label| json!({"label": label, "description": format!("Pick {label}.")}))
        .collect();
    json!({"questions": [{
        "question": question,
        "header": "Mock",
        "options": options,
        "multiple": false,
    }]})
}

fn usage() -> Value {
    json!({"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010})
}

/// One `chat.completion.chunk` with `delta` and, on the last, the finish
/// reason and usage.
fn chunk(completion_id: &str, model: &str, delta: Value, finish: Option<&str>) -> Value {
    let mut chunk = json!({
        "id": completion_id,
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    if finish.is_some() {
        chunk["usage"] = usage();
    }
    chunk
}

/// The stream: the text's pieces `pace` apart (or the tool call), then the
/// chunk that ends the reply.
fn events(completion_id: &str, model: &str, output: &Output, pace: Duration) -> Vec<Event> {
    let mut events = Vec::new();
    match output {
        Output::Text(pieces) => {
            for (index, piece) in pieces.iter().enumerate() {
                let (after, delta) = if index == 0 {
                    (
                        Duration::ZERO,
                        json!({"role": "assistant", "content": piece}),
                    )
                } else {
                    (pace, json!({"content": piece}))
                };
                events.push(Event::unnamed(
                    after,
                    chunk(completion_id, model, delta, None),
                ));
            }
        }
        Output::Call { .. } => events.push(Event::unnamed(
            Duration::ZERO,
            chunk(
                completion_id,
                model,
                json!({"role": "assistant", "content": null, "tool_calls": output.tool_calls()}),
                None,
            ),
        )),
    }
    events.push(Event::unnamed(
        Duration::ZERO,
        chunk(
            completion_id,
            model,
            json!({}),
            Some(output.finish_reason()),
        ),
    ));
    events
}

/// The whole reply as one `chat.completion` (a request without `stream`).
fn completion(completion_id: &str, model: &str, output: &Output) -> Value {
    let mut message = json!({"role": "assistant", "content": null});
    match output {
        Output::Text(pieces) => message["content"] = json!(pieces.concat()),
        Output::Call { .. } => message["tool_calls"] = json!(output.tool_calls()),
    }
    json!({
        "id": completion_id,
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": output.finish_reason()}],
        "usage": usage(),
    })
}

/// Whether the request offers the function tool `name`.
fn offered(body: &Value, name: &str) -> bool {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|tool| tool["function"]["name"] == name)
}

fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map_or(&[], Vec::as_slice)
}

fn role(message: &Value) -> &str {
    message["role"].as_str().unwrap_or("")
}

/// The texts of a message's `content`: the string, or each text part.
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

/// The title agent's request: its instruction, or the user message that
/// asks for a title, and no tools.
fn is_title_request(body: &Value) -> bool {
    !offers_tools(body)
        && messages(body).iter().any(|message| {
            let texts = content_texts(&message["content"]);
            match role(message) {
                "system" => texts
                    .iter()
                    .any(|text| text.trim_start().starts_with(TITLE_INSTRUCTION)),
                "user" => texts
                    .iter()
                    .any(|text| text.trim_start().starts_with(TITLE_REQUEST)),
                _ => false,
            }
        })
}

/// The compaction agent's request: no tools, and its instruction, or a
/// last user message that asks for a summary.
fn is_compaction(body: &Value) -> bool {
    if offers_tools(body) {
        return false;
    }
    let instructed = messages(body).iter().any(|message| {
        role(message) == "system"
            && content_texts(&message["content"])
                .iter()
                .any(|text| text.trim_start().starts_with(COMPACTION_INSTRUCTION))
    });
    if instructed {
        return true;
    }
    let Some(last) = messages(body).iter().rev().find(|m| role(m) == "user") else {
        return false;
    };
    content_texts(&last["content"]).iter().any(|text| {
        let text = text.to_lowercase();
        COMPACTION_MARKS.iter().any(|mark| text.contains(mark))
    })
}

fn offers_tools(body: &Value) -> bool {
    body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty())
}

/// A model call answers a tool result when the messages after the latest
/// assistant message are tool outputs, with or without a prompt queued
/// behind them (it rides the result); it answers a prompt when they are
/// user messages only, or when a user message follows a tool at which the
/// turn stopped. A request with neither is a side request.
fn classify(body: &Value) -> Class {
    let after_assistant: Vec<&Value> = messages(body)
        .iter()
        .rev()
        .take_while(|message| role(message) != "assistant")
        .collect();
    let outputs: Vec<&Value> = after_assistant
        .iter()
        .copied()
        .filter(|message| role(message) == "tool")
        .collect();
    let prompted = after_assistant
        .iter()
        .any(|message| role(message) == "user");
    let turn_stopped = prompted && outputs.iter().any(|output| stopped(output));
    if !outputs.is_empty() && !turn_stopped {
        Class::ToolResult
    } else if prompted {
        Class::Prompt
    } else {
        Class::Side
    }
}

/// Whether a tool output says the turn stopped at its tool.
fn stopped(output: &Value) -> bool {
    content_texts(&output["content"]).iter().any(|text| {
        STOPPED_TOOL
            .iter()
            .any(|said| text.trim() == *said || text.contains(&format!("\n{said}\n")))
    })
}

/// The words of the last user message after the latest tool output (none
/// after a tool output means the request has no new prompt), harness
/// context left out.
fn latest_prompt(body: &Value) -> Option<String> {
    let message = messages(body)
        .iter()
        .rev()
        .take_while(|message| role(message) != "tool")
        .find(|message| role(message) == "user")?;
    prompt_text(content_texts(&message["content"]))
}

/// Every text the model would see, with its role: each message's text
/// content (`system`, `user`, `assistant`) and each tool output (`tool`).
fn texts(body: &Value) -> Vec<RoleText> {
    let mut texts = Vec::new();
    for message in messages(body) {
        let role = match role(message) {
            "" => "unknown",
            role => role,
        };
        for text in content_texts(&message["content"]) {
            texts.push(RoleText::new(role, text));
        }
    }
    texts
}

#[cfg(test)]
#[path = "chat_completions_tests.rs"]
mod tests;
