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

use std::time::Duration;

use serde_json::{Value, json};

use crate::eval::http::Request;
use crate::eval::model_server::{
    Event, Ids, Reading, Reply, RoleText, WireFormat, prompt_text, slow_pieces,
};
use crate::eval::script::{Class, Command, Plan};

/// The name of Claude Code's command tool.
const COMMAND_TOOL: &str = "Bash";

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
        let empty = Value::Null;
        let body = body.unwrap_or(&empty);
        Reading {
            class,
            prompt: class.is_turn_call().then(|| latest_prompt(body)).flatten(),
            texts: texts(body),
            turn_key: None,
            // The Bash tool waits for its command (up to its timeout).
            still_running: None,
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
            Plan::Text(text) | Plan::Title(text) => (
                vec![Block::Text(vec![text.clone()])],
                "end_turn",
                Duration::ZERO,
            ),
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
                vec![Block::Tool(ids.fresh("toolu"), tool_input(command))],
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
    Tool(String, Value),
}

/// Claude Code 2.1.328 compaction (`/compact`, or automatic): the last
/// `user` message is its summary instruction, with the tools still offered.
const COMPACTION_INSTRUCTION: &str =
    "Your task is to create a detailed summary of the conversation so far";

/// Whether a model call answers a prompt or a tool result: the last `user`
/// message decides (trailing `system` messages are context, not input).
fn classify(body: &Value) -> Class {
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
            Block::Tool(tool_id, input) => {
                events.push(Event::now(json!({
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": tool_id, "name": COMMAND_TOOL, "input": {}},
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
            Block::Tool(tool_id, input) => {
                json!({"type": "tool_use", "id": tool_id, "name": COMMAND_TOOL, "input": input})
            }
        })
        .collect();
    json!({
        "id": id, "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": usage(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::script::{Directive, plan, run_command};

    fn post(path: &str) -> Request {
        Request {
            method: "POST".into(),
            target: path.into(),
            ..Request::default()
        }
    }

    fn user(content: Value) -> Value {
        json!({"role": "user", "content": content})
    }

    #[test]
    fn a_prompt_is_read_without_reminders_and_a_trailing_system_message_is_context() {
        let body = json!({
            "system": [{"type": "text", "text": "You are a harness."}],
            "messages": [
                user(json!([
                    {"type": "text", "text": "<system-reminder>\nbe nice\n</system-reminder>\n"},
                    {"type": "text", "text": "please mock:run 3"},
                ])),
                {"role": "system", "content": [{"type": "text", "text": "hook context: 0001.md"}]},
            ],
        });
        let reading = Messages.read(&post("/v1/messages?beta=true"), Some(&body));
        assert_eq!(reading.class, Class::Prompt);
        assert_eq!(reading.prompt.as_deref(), Some("please mock:run 3"));
        assert_eq!(
            reading.texts.last(),
            Some(&RoleText::new("system", "hook context: 0001.md"))
        );
        assert_eq!(
            reading.texts[0],
            RoleText::new("system", "You are a harness.")
        );
    }

    #[test]
    fn a_tool_result_continues_the_turn_and_a_queued_prompt_rides_it() {
        let body = json!({"messages": [
            user(json!("mock:run 1")),
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            user(json!([
                {"type": "tool_result", "tool_use_id": "t1", "content": "mock-run-done"},
                {"type": "text", "text": "queued words"},
            ])),
        ]});
        let reading = Messages.read(&post("/v1/messages"), Some(&body));
        assert_eq!(reading.class, Class::ToolResult);
        assert_eq!(reading.prompt.as_deref(), Some("queued words"));
        assert!(
            reading
                .texts
                .contains(&RoleText::new("tool", "mock-run-done"))
        );
    }

    #[test]
    fn a_compaction_request_is_not_a_turn_and_gets_a_tagged_summary() {
        // The start of Claude Code 2.1.328's `/compact` request, as logged.
        let instruction = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n\
            - Do NOT use Read, Bash, Grep, Glob, Edit, Write, or ANY other tool.\n\n\
            Your task is to create a detailed summary of the conversation so far, paying close \
            attention to the user's explicit requests and your previous actions.";
        let body =
            json!({"stream": true, "messages": [user(json!("hi")), user(json!(instruction))]});
        let reading = Messages.read(&post("/v1/messages?beta=true"), Some(&body));
        assert_eq!(reading.class, Class::Compaction);
        assert_eq!(reading.prompt, None);
        let plan = plan(Class::Compaction, &Directive::Text, 1, None);
        let Reply::Events(events) =
            Messages.render(&post("/v1/messages"), Some(&body), &plan, &Ids::new("n"))
        else {
            panic!("not a stream");
        };
        let text = events[2].data["delta"]["text"].as_str().expect("text");
        assert!(
            text.contains("<summary>") && text.contains("</summary>"),
            "{text}"
        );
    }

    #[test]
    fn count_tokens_and_unknown_paths_are_told_apart() {
        let body = json!({"messages": [user(json!("hi"))]});
        let count = Messages.read(&post("/v1/messages/count_tokens"), Some(&body));
        assert_eq!(count.class, Class::CountTokens);
        assert_eq!(count.prompt, None);
        assert_eq!(
            Messages.read(&post("/v1/other"), Some(&body)).class,
            Class::Unknown
        );
        let reply = Messages.render(
            &post("/v1/messages/count_tokens"),
            Some(&body),
            &Plan::Tokens(7),
            &Ids::new("n"),
        );
        assert_eq!(reply, Reply::Json(json!({"input_tokens": 7})));
    }

    fn stream_of(plan: &Plan, ids: &Ids) -> Vec<Event> {
        let body = json!({"model": "m", "stream": true, "messages": []});
        match Messages.render(&post("/v1/messages"), Some(&body), plan, ids) {
            Reply::Events(events) => events,
            other => panic!("not a stream: {other:?}"),
        }
    }

    #[test]
    fn a_text_reply_streams_the_message_events_in_order() {
        let events = stream_of(&Plan::Text("hello".into()), &Ids::new("n"));
        let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(events[2].data["delta"]["text"], "hello");
        assert_eq!(events[4].data["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn a_command_is_a_bash_tool_use_with_fresh_ids() {
        let ids = Ids::new("n");
        let plan = plan(Class::Prompt, &Directive::Run { seconds: 4 }, 1, None);
        let first = stream_of(&plan, &ids);
        let second = stream_of(&plan, &ids);
        let tool = &first[1].data["content_block"];
        assert_eq!(tool["type"], "tool_use");
        assert_eq!(tool["name"], "Bash");
        let input: Value = serde_json::from_str(
            first[2].data["delta"]["partial_json"]
                .as_str()
                .expect("json"),
        )
        .expect("input");
        assert_eq!(input["command"], run_command(4).line);
        assert_eq!(first[4].data["delta"]["stop_reason"], "tool_use");
        assert_ne!(tool["id"], second[1].data["content_block"]["id"]);
        assert_ne!(
            first[0].data["message"]["id"],
            second[0].data["message"]["id"]
        );
    }

    #[test]
    fn a_slow_reply_spreads_its_pieces_over_the_seconds() {
        let events = stream_of(
            &Plan::Slow {
                text: "one two three".into(),
                seconds: 2,
            },
            &Ids::new("n"),
        );
        let total: Duration = events.iter().map(|e| e.after).sum();
        assert_eq!(total, Duration::from_secs(2));
    }

    #[test]
    fn without_stream_the_reply_is_one_message() {
        let body = json!({"model": "m", "messages": []});
        let reply = Messages.render(
            &post("/v1/messages"),
            Some(&body),
            &Plan::Text("hi".into()),
            &Ids::new("n"),
        );
        let Reply::Json(message) = reply else {
            panic!("not json: {reply:?}");
        };
        assert_eq!(message["content"][0]["text"], "hi");
        assert_eq!(message["stop_reason"], "end_turn");
    }
}
