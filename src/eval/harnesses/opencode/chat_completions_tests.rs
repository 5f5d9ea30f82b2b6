//! The tests of `chat_completions.rs`.

use super::*;
use crate::script::{self, Directive};

fn post(path: &str) -> Request {
    Request {
        method: "POST".into(),
        target: path.into(),
        ..Request::default()
    }
}

fn message(role: &str, text: &str) -> Value {
    json!({"role": role, "content": text})
}

fn tool(name: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
}

/// A turn's request as OpenCode 1.18.33 sent it (trimmed): the build
/// agent's instructions, the conversation, its tools.
fn turn(messages: Vec<Value>) -> Value {
    let mut all = vec![message(
        "system",
        "You are opencode, an interactive CLI tool that helps users with software engineering tasks.",
    )];
    all.extend(messages);
    json!({
        "model": "mock-model",
        "max_tokens": 32000,
        "tool_choice": "auto",
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": all,
        "tools": [tool("bash"), tool("edit"), tool("question"), tool("read"), tool("write")],
    })
}

/// The title request a new session's first prompt makes, as sent.
fn title_request(prompt: &str) -> Value {
    json!({
        "model": "mock-model",
        "max_tokens": 32000,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [
            message("system", "You are a title generator. You output ONLY a thread title. Nothing else."),
            message("user", "Generate a title for this conversation:\n"),
            message("user", prompt),
        ],
    })
}

fn events(reply: Reply) -> Vec<Event> {
    match reply {
        Reply::Events(events) => events,
        other => panic!("a stream, not {other:?}"),
    }
}

#[test]
fn a_prompt_is_read_from_the_last_user_message() {
    let body = turn(vec![
        message("user", "hello there"),
        message("assistant", "mock reply to turn 1."),
        json!({"role": "user", "content": [{"type": "text", "text": "please mock:slow 2"}]}),
    ]);
    let reading = ChatCompletions.read(&post(PATH), Some(&body));
    assert_eq!(reading.class, Class::Prompt);
    assert_eq!(reading.prompt.as_deref(), Some("please mock:slow 2"));
    assert_eq!(reading.turn_key, None);
    assert_eq!(reading.texts[0].role, "system");
    assert_eq!(
        reading.texts.last(),
        Some(&RoleText::new("user", "please mock:slow 2"))
    );
}

#[test]
fn a_tool_output_continues_the_turn_and_a_prompt_queued_beside_it_rides_it() {
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "bash", "arguments": "{\"command\":\"sleep 1\"}"},
    }]});
    let output = json!({"role": "tool", "tool_call_id": "call_1", "content": "mock-run-done"});
    let body = turn(vec![
        message("user", "mock:run 1"),
        call.clone(),
        output.clone(),
    ]);
    let reading = ChatCompletions.read(&post(PATH), Some(&body));
    assert_eq!(reading.class, Class::ToolResult);
    assert_eq!(reading.prompt, None);
    assert!(
        reading
            .texts
            .contains(&RoleText::new("tool", "mock-run-done"))
    );
    let queued = turn(vec![
        message("user", "mock:run 1"),
        call,
        output,
        message("user", "and the docs"),
    ]);
    let reading = ChatCompletions.read(&post(PATH), Some(&queued));
    assert_eq!(reading.class, Class::ToolResult);
    assert_eq!(reading.prompt.as_deref(), Some("and the docs"));
}

#[test]
fn a_prompt_after_a_tool_the_person_stopped_starts_a_new_turn() {
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "bash", "arguments": "{\"command\":\"touch /tmp/m\"}"},
    }]});
    for said in [
        "The user rejected permission to use this specific tool call.",
        "The user dismissed this question",
        "mock-run-start\n\n\n<shell_metadata>\nUser aborted the command\n</shell_metadata>",
        "Tool execution aborted",
    ] {
        let output = json!({"role": "tool", "tool_call_id": "call_1", "content": said});
        let body = turn(vec![
            message("user", "mock:permission /tmp/m"),
            call.clone(),
            output.clone(),
            message("user", "after the rejection"),
        ]);
        let reading = ChatCompletions.read(&post(PATH), Some(&body));
        assert_eq!(reading.class, Class::Prompt, "{said}");
        assert_eq!(reading.prompt.as_deref(), Some("after the rejection"));
        // No prompt after it: nothing would be asked (OpenCode ends the
        // turn), but such a request would still answer the output.
        let bare = turn(vec![message("user", "x"), call.clone(), output]);
        assert_eq!(
            ChatCompletions.read(&post(PATH), Some(&bare)).class,
            Class::ToolResult
        );
    }
}

#[test]
fn the_title_request_is_told_apart_though_it_ends_with_the_prompt() {
    let body = title_request("mock:run 5");
    let reading = ChatCompletions.read(&post(PATH), Some(&body));
    assert_eq!(reading.class, Class::Title);
    assert_eq!(reading.prompt, None);
    // Not a model call: the turn that follows is the conversation's first.
    let mut turns = crate::model_server::Turns::default();
    let title = turns.place(&reading);
    let first = turns.place(&ChatCompletions.read(
        &post(PATH),
        Some(&turn(vec![message("user", "mock:run 5")])),
    ));
    assert_eq!((title.call_in_turn, first.turn), (None, 1));
    assert_eq!(first.call_in_turn, Some(1));
    let plan = script::plan(Class::Title, &Directive::Text, 0, None);
    let events = events(ChatCompletions.render(&post(PATH), Some(&body), &plan, &Ids::new("t")));
    assert_eq!(
        events[0].data["choices"][0]["delta"]["content"],
        "Mock session"
    );
    assert_eq!(
        events.last().unwrap().data["choices"][0]["finish_reason"],
        "stop"
    );
}

#[test]
fn compaction_and_side_requests_are_not_turn_calls_and_other_paths_are_unknown() {
    let compact = json!({
        "stream": true,
        "messages": [
            message("system", "You are a helpful assistant."),
            message("user", "hello"),
            message("assistant", "mock reply to turn 1."),
            message("user", "Provide a detailed summary of our conversation above."),
        ],
    });
    let reading = ChatCompletions.read(&post(PATH), Some(&compact));
    assert_eq!(reading.class, Class::Compaction);
    assert_eq!(reading.prompt, None);
    // As 1.18.33 sends it: the compaction agent's instruction, and the
    // conversation as one user message.
    let agent = json!({"stream": true, "messages": [
        message("system", "You are a context summarization agent. You are given a conversation between a user and an agent."),
        message("user", "Here is the conversation so far:\n\n<conversation>\n[User]: hi\n</conversation>"),
    ]});
    assert_eq!(
        ChatCompletions.read(&post(PATH), Some(&agent)).class,
        Class::Compaction
    );
    // With tools offered the same words are a person's prompt.
    let asked = turn(vec![message("user", "summarize the parser module")]);
    assert_eq!(
        ChatCompletions.read(&post(PATH), Some(&asked)).class,
        Class::Prompt
    );
    let side = json!({"messages": [message("system", "x"), message("assistant", "y")]});
    assert_eq!(
        ChatCompletions.read(&post(PATH), Some(&side)).class,
        Class::Side
    );
    for (method, path) in [
        ("POST", "/v1/responses"),
        ("GET", PATH),
        ("GET", "/v1/models"),
    ] {
        let request = Request {
            method: method.into(),
            ..post(path)
        };
        assert_eq!(
            ChatCompletions.read(&request, Some(&side)).class,
            Class::Unknown,
            "{method} {path}"
        );
    }
    assert_eq!(
        ChatCompletions.render(&post("/v1/models"), None, &Plan::NotFound, &Ids::new("t")),
        Reply::NotFound
    );
}

#[test]
fn a_slow_text_streams_as_nameless_chunks_the_last_ending_the_reply() {
    let body = turn(vec![message("user", "mock:slow 1")]);
    let plan = Plan::Slow {
        text: "a b c".into(),
        seconds: 1,
    };
    let events = events(ChatCompletions.render(&post(PATH), Some(&body), &plan, &Ids::new("t")));
    assert_eq!(events.len(), 5);
    assert!(events.iter().all(|e| e.name.is_empty()));
    assert_eq!(events[0].after, Duration::ZERO);
    assert_eq!(events[1].after, Duration::from_millis(250));
    assert_eq!(events[0].data["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(events[0].data["object"], "chat.completion.chunk");
    assert_eq!(events[0].data["model"], "mock-model");
    let text: String = events
        .iter()
        .filter_map(|e| e.data["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "a b c.");
    let last = &events.last().unwrap().data;
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["usage"]["prompt_tokens"], 1000);
    assert!(events[0].data["choices"][0]["finish_reason"].is_null());
    assert!(
        events
            .iter()
            .map(|e| &e.data["id"])
            .all(|id| id == &events[0].data["id"])
    );
}

#[test]
fn commands_edits_and_choices_are_calls_of_the_offered_tools() {
    let body = turn(vec![message("user", "mock:permission /tmp/m")]);
    let ids = Ids::new("t");
    let call = |plan: &Plan| {
        let events = events(ChatCompletions.render(&post(PATH), Some(&body), plan, &ids));
        assert_eq!(
            events.last().unwrap().data["choices"][0]["finish_reason"],
            "tool_calls"
        );
        let call = events[0].data["choices"][0]["delta"]["tool_calls"][0].clone();
        assert_eq!(call["type"], "function");
        assert!(call["id"].as_str().unwrap().starts_with("call_t"));
        let arguments: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        (call["function"]["name"].clone(), arguments)
    };
    let command = script::plan(
        Class::Prompt,
        &Directive::Permission {
            marker: "/tmp/m".into(),
        },
        1,
        None,
    );
    assert_eq!(
        call(&command),
        (
            json!("bash"),
            json!({"command": "touch /tmp/m", "timeout": 11000})
        )
    );
    let edit = ToolCall::Edit {
        path: "/tmp/notes.md".into(),
        content: "x\n".into(),
    };
    assert!(ChatCompletions.offers(&body, &edit));
    assert_eq!(
        call(&Plan::Tool(edit)),
        (
            json!("write"),
            json!({"filePath": "/tmp/notes.md", "content": "x\n"})
        )
    );
    let choice = ToolCall::Choice {
        question: "Which?".into(),
        options: vec!["one".into(), "two".into()],
    };
    assert!(ChatCompletions.offers(&body, &choice));
    let (name, asked) = call(&Plan::Tool(choice.clone()));
    assert_eq!(name, "question");
    assert_eq!(asked["questions"][0]["options"][1]["label"], "two");
    assert_eq!(asked["questions"][0]["header"], "Mock");
    let plan = ToolCall::PlanApproval { plan: "p".into() };
    assert!(!ChatCompletions.offers(&body, &plan));
    assert!(!ChatCompletions.offers(&title_request("x"), &choice));
}

#[test]
fn a_request_without_stream_gets_one_completion() {
    let mut body = turn(vec![message("user", "hi")]);
    body["stream"] = json!(false);
    let reply = ChatCompletions.render(
        &post(PATH),
        Some(&body),
        &Plan::Text("mock reply to turn 1.".into()),
        &Ids::new("t"),
    );
    let Reply::Json(reply) = reply else {
        panic!("one JSON reply");
    };
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "mock reply to turn 1."
    );
    assert_eq!(reply["choices"][0]["finish_reason"], "stop");
}
