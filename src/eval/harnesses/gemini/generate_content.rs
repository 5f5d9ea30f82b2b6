//! The Gemini API's `generateContent` as Gemini CLI 0.61.0 speaks it, for
//! the loopback model server: `POST /v1beta/models/MODEL:METHOD`, where
//! METHOD is `streamGenerateContent` (`?alt=sse`: the conversation's model
//! calls), `generateContent` (one JSON reply: the CLI's side questions)
//! or `countTokens`.
//!
//! What a request looks like (observed, docs/providers/gemini-findings.md):
//! `systemInstruction.parts` hold the harness's instructions; `contents`
//! alternate `user` and `model` turns of `parts`. The first user content
//! carries the harness's `<session_context>` element and the prompt as
//! separate text parts; hook context comes as `<hook_context>` elements; a
//! tool result is a user content of `functionResponse` parts, a model's
//! tool call a `functionCall` part. Tools are `functionDeclarations` with
//! a `parametersJsonSchema`. In its default `auto` model setting the CLI
//! first asks a routing model which model should answer each prompt, with
//! a non-streamed request whose `generationConfig` asks for JSON
//! (`responseMimeType`, `responseJsonSchema`): a side request, answered
//! with JSON that fits the schema. A compression (`/compress`) asks, also
//! non-streamed, for a `<state_snapshot>`.
//!
//! The stream is what the CLI's client library parses: each event is a
//! single `data: JSON` line and nothing else (an `event:` line before it
//! would stall the parser), so the events here carry no name.
//!
//! Dialog directives are rendered as far as the request offers their
//! tools: `write_file` for an edit, `ask_user` for a choice. A plan to
//! approve needs a plan file written before `exit_plan_mode` names it: not
//! rendered (the reply says there is no such tool here).

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::http::Request;
use crate::model_server::{
    Event, Ids, Reading, Reply, RoleText, WireFormat, prompt_text, slow_pieces,
};
use crate::script::{Class, Command, Plan, ToolCall};

pub struct GenerateContent;

pub fn wire_format() -> Box<dyn WireFormat> {
    Box::new(GenerateContent)
}

/// The CLI's shell tool.
const SHELL_TOOL: &str = "run_shell_command";
/// Its tool that creates (or overwrites) a file.
const WRITE_TOOL: &str = "write_file";
/// Its tool that asks the human questions with options.
const CHOICE_TOOL: &str = "ask_user";

/// What a compression request asks the model to write.
const COMPRESSION_MARK: &str = "state_snapshot";

/// The API method a request calls, from its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Stream,
    Once,
    CountTokens,
}

/// `(model, method)` of `/v1beta/models/MODEL:METHOD`.
fn route(path: &str) -> Option<(&str, Method)> {
    let (model, method) = path.strip_prefix("/v1beta/models/")?.split_once(':')?;
    let method = match method {
        "streamGenerateContent" => Method::Stream,
        "generateContent" => Method::Once,
        "countTokens" => Method::CountTokens,
        _ => return None,
    };
    (!model.is_empty() && !model.contains('/')).then_some((model, method))
}

impl WireFormat for GenerateContent {
    fn read(&self, request: &Request, body: Option<&Value>) -> Reading {
        let class = match (request.method.as_str(), route(request.path()), body) {
            ("POST", Some((_, Method::CountTokens)), _) => Class::CountTokens,
            ("POST", Some((_, Method::Once)), Some(body)) if asks_for_compression(body) => {
                Class::Compaction
            }
            ("POST", Some((_, Method::Once)), Some(_)) => Class::Side,
            ("POST", Some((_, Method::Stream)), Some(body)) => classify(body),
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
        let empty = Value::Null;
        let body = body.unwrap_or(&empty);
        let Some((model, method)) = route(request.path()) else {
            return Reply::NotFound;
        };
        let response_id = ids.fresh("resp");
        let (parts, pace) = match plan {
            Plan::NotFound => return Reply::NotFound,
            Plan::Tokens(tokens) => return Reply::Json(json!({"totalTokens": tokens})),
            Plan::Text(text) | Plan::Summary(text) | Plan::Title(text) => (
                vec![json!({"text": answer_text(body, text)})],
                Duration::ZERO,
            ),
            Plan::Slow { text, seconds } => {
                let (pieces, pace) = slow_pieces(text, *seconds);
                (
                    pieces.into_iter().map(|p| json!({"text": p})).collect(),
                    pace,
                )
            }
            // The shell tool waits for its command: nothing is left
            // running to wait for (`still_running` is never read here).
            Plan::Wait(_) => (
                vec![json!({"text": "mock: nothing is still running."})],
                Duration::ZERO,
            ),
            Plan::Command(command) => (vec![shell_call(command)], Duration::ZERO),
            Plan::Tool(ToolCall::Edit { path, content }) => (
                vec![json!({"functionCall": {
                    "name": WRITE_TOOL,
                    "args": {"file_path": path, "content": content},
                }})],
                Duration::ZERO,
            ),
            Plan::Tool(ToolCall::Choice { question, options }) => {
                (vec![choice_call(question, options)], Duration::ZERO)
            }
            Plan::Tool(call @ ToolCall::PlanApproval { .. }) => (
                vec![json!({"text": format!("mock: no {} tool here.", call.what())})],
                Duration::ZERO,
            ),
        };
        match method {
            Method::Stream => Reply::Events(events(
                &response_id,
                model,
                parts,
                pace,
                prompt_tokens(body),
            )),
            Method::Once | Method::CountTokens => Reply::Json(response(
                &response_id,
                model,
                parts,
                Some(prompt_tokens(body)),
            )),
        }
    }
}

/// A request's size in tokens as a model would count it: its JSON (the
/// instructions, tools and conversation) at four characters a token, the
/// estimate Gemini CLI itself makes. The CLI compares it with its own
/// estimate of a compressed conversation: a fixed count would make every
/// `/compress` look "not beneficial" and change nothing.
fn prompt_tokens(body: &Value) -> usize {
    body.to_string().len() / 4
}

/// One `GenerateContentResponse`; `last` ends the candidate and counts
/// tokens (`prompt` of them in the request).
fn response(response_id: &str, model: &str, parts: Vec<Value>, prompt: Option<usize>) -> Value {
    let mut candidate = json!({
        "content": {"role": "model", "parts": parts},
        "index": 0,
    });
    let mut reply = json!({"modelVersion": model, "responseId": response_id});
    if let Some(prompt) = prompt {
        candidate["finishReason"] = json!("STOP");
        reply["usageMetadata"] = json!({
            "promptTokenCount": prompt,
            "candidatesTokenCount": 10,
            "totalTokenCount": prompt + 10,
        });
    }
    reply["candidates"] = json!([candidate]);
    reply
}

/// The stream: one event per part, `pace` apart, the last ending the turn
/// (and counting `prompt` tokens).
fn events(
    response_id: &str,
    model: &str,
    parts: Vec<Value>,
    pace: Duration,
    prompt: usize,
) -> Vec<Event> {
    let count = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(index, part)| {
            let last = (index + 1 == count).then_some(prompt);
            let data = response(response_id, model, vec![part], last);
            let after = if index == 0 { Duration::ZERO } else { pace };
            Event::unnamed(after, data)
        })
        .collect()
}

/// `text`, or, where the request asks for JSON (`responseMimeType`), the
/// smallest JSON its schema accepts: the routing question and the
/// CLI's other structured side questions get an answer they can read.
fn answer_text(body: &Value, text: &str) -> String {
    let config = &body["generationConfig"];
    if config["responseMimeType"] != "application/json" {
        return text.to_string();
    }
    let schema = config
        .get("responseJsonSchema")
        .or_else(|| config.get("responseSchema"));
    schema.map_or_else(|| json!({}), fitting).to_string()
}

/// A value `schema` accepts: every required property, each enum's first
/// value, a short text for strings.
fn fitting(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    let kind = schema["type"].as_str().unwrap_or("object").to_lowercase();
    match kind.as_str() {
        "string" => json!("mock"),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => {
            let mut object = Map::new();
            let properties = &schema["properties"];
            for name in schema["required"].as_array().into_iter().flatten() {
                if let Some(name) = name.as_str() {
                    object.insert(name.to_string(), fitting(&properties[name]));
                }
            }
            Value::Object(object)
        }
    }
}

fn shell_call(command: &Command) -> Value {
    json!({"functionCall": {
        "name": SHELL_TOOL,
        "args": {"command": command.line, "description": command.description},
    }})
}

fn choice_call(question: &str, options: &[String]) -> Value {
    let options: Vec<Value> = options
        .iter()
        .map(|label| json!({"label": label, "description": label}))
        .collect();
    json!({"functionCall": {
        "name": CHOICE_TOOL,
        "args": {"questions": [{
            "question": question,
            "header": "Mock",
            "type": "choice",
            "options": options,
        }]},
    }})
}

/// Whether the request offers the tool `name`.
fn offered(body: &Value, name: &str) -> bool {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["functionDeclarations"].as_array())
        .flatten()
        .any(|declaration| declaration["name"] == name)
}

fn contents(body: &Value) -> &[Value] {
    body["contents"].as_array().map_or(&[], Vec::as_slice)
}

fn parts(content: &Value) -> &[Value] {
    content["parts"].as_array().map_or(&[], Vec::as_slice)
}

/// A model call answers a tool result when the latest user content holds
/// one; otherwise it answers a prompt.
fn classify(body: &Value) -> Class {
    let Some(last) = contents(body).last() else {
        return Class::Unknown;
    };
    if last["role"] != "user" {
        return Class::Unknown;
    }
    if parts(last)
        .iter()
        .any(|part| part.get("functionResponse").is_some())
    {
        Class::ToolResult
    } else {
        Class::Prompt
    }
}

fn asks_for_compression(body: &Value) -> bool {
    let mut texts = texts(body).into_iter();
    texts.any(|text| text.role != "assistant" && text.text.contains(COMPRESSION_MARK))
}

/// The words of the latest user content, harness context left out.
fn latest_prompt(body: &Value) -> Option<String> {
    let last = contents(body).last()?;
    prompt_text(parts(last).iter().filter_map(|part| part["text"].as_str()))
}

/// Every text the model would see: the system instruction, then each
/// content's text parts (`user`, `assistant` for the model's) and tool
/// results (`tool`, as JSON).
fn texts(body: &Value) -> Vec<RoleText> {
    let mut texts: Vec<RoleText> = parts(&body["systemInstruction"])
        .iter()
        .filter_map(|part| part["text"].as_str())
        .map(|text| RoleText::new("system", text))
        .collect();
    for content in contents(body) {
        let role = if content["role"] == "model" {
            "assistant"
        } else {
            "user"
        };
        for part in parts(content) {
            if let Some(text) = part["text"].as_str() {
                texts.push(RoleText::new(role, text));
            } else if let Some(result) = part.get("functionResponse") {
                texts.push(RoleText::new("tool", &result["response"].to_string()));
            }
        }
    }
    texts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{self, Directive};

    fn post(path: &str) -> Request {
        Request {
            method: "POST".into(),
            target: format!("{path}?alt=sse"),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    const STREAM: &str = "/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent";
    const ONCE: &str = "/v1beta/models/gemini-3.5-flash-lite:generateContent";

    /// The first request of a session, as Gemini CLI 0.61.0 sent it
    /// (trimmed): the session context and the prompt, separate parts of
    /// one user content.
    fn first_prompt(prompt: &str) -> Value {
        json!({
            "systemInstruction": {"parts": [{"text": "You are Gemini CLI, an interactive CLI agent."}]},
            "contents": [{"role": "user", "parts": [
                {"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
                {"text": prompt},
            ]}],
            "tools": [{"functionDeclarations": [
                {"name": "write_file", "parametersJsonSchema": {}},
                {"name": "run_shell_command", "parametersJsonSchema": {}},
                {"name": "ask_user", "parametersJsonSchema": {}},
            ]}],
            "generationConfig": {"temperature": 1},
        })
    }

    #[test]
    fn a_prompt_is_read_after_the_session_context() {
        let body = first_prompt("mock:slow 6");
        let reading = GenerateContent.read(&post(STREAM), Some(&body));
        assert_eq!(reading.class, Class::Prompt);
        assert_eq!(reading.prompt.as_deref(), Some("mock:slow 6"));
        assert_eq!(reading.texts[0].role, "system");
        assert_eq!(reading.texts.len(), 3);
        assert_eq!(reading.turn_key, None);
    }

    #[test]
    fn hook_context_beside_the_prompt_is_not_the_prompt() {
        let mut body = first_prompt("fix it");
        body["contents"][0]["parts"]
            .as_array_mut()
            .unwrap()
            .push(json!({"text": "<hook_context>ding: 1 message</hook_context>"}));
        let reading = GenerateContent.read(&post(STREAM), Some(&body));
        assert_eq!(reading.prompt.as_deref(), Some("fix it"));
        assert!(
            reading
                .texts
                .iter()
                .any(|t| t.text.contains("ding: 1 message"))
        );
    }

    #[test]
    fn a_function_response_continues_the_turn() {
        let mut body = first_prompt("mock:run 1");
        let contents = body["contents"].as_array_mut().unwrap();
        contents.push(json!({"role": "model", "parts": [
            {"functionCall": {"name": "run_shell_command", "args": {"command": "sleep 1"}}}
        ]}));
        contents.push(json!({"role": "user", "parts": [
            {"functionResponse": {"name": "run_shell_command", "response": {"output": "done"}}}
        ]}));
        let reading = GenerateContent.read(&post(STREAM), Some(&body));
        assert_eq!(reading.class, Class::ToolResult);
        assert_eq!(reading.prompt, None);
        assert_eq!(reading.texts.last().unwrap().role, "tool");
    }

    #[test]
    fn side_questions_compression_and_token_counts_are_not_turn_calls() {
        let routing = json!({
            "systemInstruction": {"parts": [{"text": "You are a specialized Task Routing AI."}]},
            "contents": [{"role": "user", "parts": [{"text": "fix it"}]}],
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": {
                    "type": "object",
                    "properties": {
                        "reasoning": {"type": "string"},
                        "model_choice": {"type": "string", "enum": ["flash", "pro"]},
                    },
                    "required": ["reasoning", "model_choice"],
                },
            },
        });
        let reading = GenerateContent.read(&post(ONCE), Some(&routing));
        assert_eq!(reading.class, Class::Side);
        assert_eq!(reading.prompt, None);
        let plan = script::plan(Class::Side, &Directive::Text, 1, None);
        let Reply::Json(reply) =
            GenerateContent.render(&post(ONCE), Some(&routing), &plan, &Ids::new("t"))
        else {
            panic!("a side question gets one JSON reply");
        };
        let text = reply["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        let answer: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            answer,
            json!({"reasoning": "mock", "model_choice": "flash"})
        );

        let compress = json!({
            "systemInstruction": {"parts": [{"text": "Write the <state_snapshot> of the conversation."}]},
            "contents": [{"role": "user", "parts": [{"text": "First, reason in your scratchpad."}]}],
        });
        let reading = GenerateContent.read(&post(ONCE), Some(&compress));
        assert_eq!(reading.class, Class::Compaction);

        let count = post("/v1beta/models/gemini-3.1-pro-preview:countTokens");
        let reading = GenerateContent.read(&count, Some(&json!({"contents": []})));
        assert_eq!(reading.class, Class::CountTokens);
        assert_eq!(
            GenerateContent.render(&count, None, &Plan::Tokens(7), &Ids::new("t")),
            Reply::Json(json!({"totalTokens": 7}))
        );
        let unknown = post("/v1beta/models/x:embedContent");
        assert_eq!(GenerateContent.read(&unknown, None).class, Class::Unknown);
        assert_eq!(
            GenerateContent
                .read(&post("/v1/models/x:generateContent"), None)
                .class,
            Class::Unknown
        );
    }

    #[test]
    fn a_text_streams_as_nameless_data_events_the_last_ending_the_turn() {
        let body = first_prompt("mock:slow 1");
        let plan = Plan::Slow {
            text: "a b c".into(),
            seconds: 1,
        };
        let Reply::Events(events) =
            GenerateContent.render(&post(STREAM), Some(&body), &plan, &Ids::new("t"))
        else {
            panic!("a stream");
        };
        assert!(events.len() > 1);
        assert!(events.iter().all(|e| e.name.is_empty()));
        let last = &events.last().unwrap().data;
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            last["usageMetadata"]["promptTokenCount"],
            body.to_string().len() / 4
        );
        assert!(
            events[0].data["candidates"][0]
                .get("finishReason")
                .is_none()
        );
        assert_eq!(events[0].data["modelVersion"], "gemini-3.1-pro-preview");
    }

    #[test]
    fn commands_edits_and_choices_are_function_calls_of_the_offered_tools() {
        let body = first_prompt("mock:edit notes.md");
        let ids = Ids::new("t");
        let call = |plan: &Plan| {
            let Reply::Events(events) =
                GenerateContent.render(&post(STREAM), Some(&body), plan, &ids)
            else {
                panic!("a stream");
            };
            events[0].data["candidates"][0]["content"]["parts"][0]["functionCall"].clone()
        };
        let edit = ToolCall::Edit {
            path: "notes.md".into(),
            content: "x\n".into(),
        };
        assert!(GenerateContent.offers(&body, &edit));
        assert_eq!(
            call(&Plan::Tool(edit)),
            json!({"name": "write_file", "args": {"file_path": "notes.md", "content": "x\n"}})
        );
        let command = script::plan(Class::Prompt, &Directive::Run { seconds: 1 }, 1, None);
        assert_eq!(call(&command)["name"], "run_shell_command");
        let choice = ToolCall::Choice {
            question: "Which?".into(),
            options: vec!["one".into(), "two".into()],
        };
        assert!(GenerateContent.offers(&body, &choice));
        let asked = call(&Plan::Tool(choice));
        assert_eq!(asked["name"], "ask_user");
        assert_eq!(asked["args"]["questions"][0]["options"][1]["label"], "two");
        let plan = ToolCall::PlanApproval { plan: "p".into() };
        assert!(!GenerateContent.offers(&body, &plan));
        let bare = json!({"contents": []});
        assert!(!GenerateContent.offers(
            &bare,
            &ToolCall::Choice {
                question: "q".into(),
                options: Vec::new(),
            }
        ));
    }
}
