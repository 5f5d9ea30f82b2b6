//! The tests of `messages.rs`.

use super::*;
use crate::script::{Directive, plan, run_command};

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
    let body = json!({"stream": true, "messages": [user(json!("hi")), user(json!(instruction))]});
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

fn tools(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|name| json!({"name": name})).collect())
}

/// The environment message as Claude Code 2.1.328 sends it, cut short.
const ENVIRONMENT: &str = "# Environment\nThe following deferred tools are now available \
    via ToolSearch. Their schemas are NOT loaded:\nCronCreate\nEnterPlanMode\nExitPlanMode\n";

/// Its plan-mode reminder, cut short, naming the plan file.
fn plan_reminder(file: &str) -> String {
    format!(
        "Plan mode is active. The user indicated that they do not want you to execute \
         yet.\n\n## Plan File Info:\nNo plan file exists yet. You should create your plan \
         at {file} using the Write tool.\n"
    )
}

fn conversation(extra: &[Value]) -> Value {
    let mut messages = vec![
        user(json!("hello")),
        json!({"role": "system", "content": [{"type": "text", "text": ENVIRONMENT}]}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "mock reply"}]}),
    ];
    messages.extend(extra.iter().cloned());
    json!({
        "model": "m",
        "stream": true,
        "tools": tools(&["Agent", "AskUserQuestion", "Bash", "Edit", "Write"]),
        "messages": messages,
    })
}

fn system(text: &str) -> Value {
    json!({"role": "system", "content": [{"type": "text", "text": text}]})
}

fn edit() -> ToolCall {
    ToolCall::Edit {
        path: "/tmp/e.txt".into(),
        content: "mock edit\n".into(),
    }
}

fn choice() -> ToolCall {
    ToolCall::Choice {
        question: "Which?".into(),
        options: vec!["One".into(), "Two".into()],
    }
}

fn plan_approval() -> ToolCall {
    ToolCall::PlanApproval {
        plan: "Mock plan.".into(),
    }
}

/// The tool calls of a streamed reply: name and parsed input.
fn tool_uses(events: &[Event]) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let block = &event.data["content_block"];
        if block["type"] == "tool_use" {
            let partial = events[index + 1].data["delta"]["partial_json"]
                .as_str()
                .expect("input");
            let input = serde_json::from_str(partial).expect("json");
            calls.push((block["name"].as_str().expect("name").to_string(), input));
        }
    }
    calls
}

fn render_tool(call: &ToolCall, body: &Value) -> Vec<Event> {
    match Messages.render(
        &post("/v1/messages"),
        Some(body),
        &Plan::Tool(call.clone()),
        &Ids::new("n"),
    ) {
        Reply::Events(events) => events,
        other => panic!("not a stream: {other:?}"),
    }
}

#[test]
fn write_and_ask_user_question_are_offered_when_the_request_lists_them() {
    let body = conversation(&[user(json!("mock:edit /tmp/e.txt"))]);
    assert!(Messages.offers(&body, &edit()));
    assert!(Messages.offers(&body, &choice()));
    let mut bare = body.clone();
    bare["tools"] = tools(&["Bash"]);
    assert!(!Messages.offers(&bare, &edit()));
    assert!(!Messages.offers(&bare, &choice()));
}

#[test]
fn exit_plan_mode_is_offered_only_in_plan_mode() {
    let file = "/h/.claude/plans/fizzy-waddling-treasure.md";
    let outside = conversation(&[user(json!("mock:plan"))]);
    assert!(!Messages.offers(&outside, &plan_approval()));
    let inside = conversation(&[user(json!("mock:plan")), system(&plan_reminder(file))]);
    assert!(Messages.offers(&inside, &plan_approval()));
    // Left by Shift-Tab (or by an approved plan): the reminder stays in
    // the history, the later exit message decides.
    let left = conversation(&[
        user(json!("plan this")),
        system(&plan_reminder(file)),
        json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}]}),
        user(json!("mock:plan")),
        system(&format!(
            "## Exited Plan Mode\n\nYou have exited plan mode. The plan file is located at {file} if you need to reference it."
        )),
    ]);
    assert!(!Messages.offers(&left, &plan_approval()));
}

#[test]
fn mock_edit_is_a_write_call_creating_the_file() {
    let body = conversation(&[user(json!("mock:edit /tmp/e.txt"))]);
    let events = render_tool(&edit(), &body);
    assert_eq!(
        tool_uses(&events),
        [(
            "Write".to_string(),
            json!({"file_path": "/tmp/e.txt", "content": "mock edit\n"})
        )]
    );
    assert_eq!(
        events[events.len() - 2].data["delta"]["stop_reason"],
        "tool_use"
    );
}

#[test]
fn mock_choice_is_one_question_with_the_options_in_order() {
    let body = conversation(&[user(json!("mock:choice"))]);
    let calls = tool_uses(&render_tool(&choice(), &body));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "AskUserQuestion");
    let question = &calls[0].1["questions"][0];
    assert_eq!(question["question"], "Which?");
    assert_eq!(question["multiSelect"], false);
    assert!(question["header"].as_str().is_some_and(|h| h.len() <= 12));
    let labels: Vec<&str> = question["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|option| option["label"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, ["One", "Two"]);
}

#[test]
fn mock_plan_writes_the_plan_file_then_asks_for_approval() {
    let file = "/h/.claude/plans/fizzy-waddling-treasure.md";
    let body = conversation(&[user(json!("mock:plan")), system(&plan_reminder(file))]);
    let calls = tool_uses(&render_tool(&plan_approval(), &body));
    assert_eq!(
        calls,
        [
            (
                "Write".to_string(),
                json!({"file_path": file, "content": "Mock plan."})
            ),
            ("ExitPlanMode".to_string(), json!({"plan": "Mock plan."})),
        ]
    );
    // No file named: the approval alone (Claude Code's short dialog).
    let unnamed = conversation(&[
        user(json!("mock:plan")),
        system("Plan mode is active. Read-only."),
    ]);
    let calls = tool_uses(&render_tool(&plan_approval(), &unnamed));
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "ExitPlanMode");
}

#[test]
fn every_plan_reminder_names_its_plan_file() {
    let file = "/h/.claude/plans/a-b-c.md";
    for text in [
        plan_reminder(file),
        format!("Plan mode is active.\nA plan file already exists at {file}. You can read it."),
        format!(
            "## Re-entering Plan Mode\n\nA plan file exists at {file} from your previous planning session."
        ),
        format!(
            "Plan mode still active (see full instructions earlier in conversation). Read-only except plan file ({file}). Follow 5-phase workflow."
        ),
    ] {
        let body = conversation(&[user(json!("mock:plan")), system(&text)]);
        assert_eq!(plan_mode(&body), Some(Some(file.to_string())), "{text}");
    }
}

#[test]
fn the_answered_tools_come_back_as_one_tool_result() {
    let body = conversation(&[
        user(json!("mock:plan")),
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "ExitPlanMode", "input": {}},
        ]}),
        user(json!([
            {"type": "tool_result", "tool_use_id": "t1", "content": "File created successfully"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "User has approved your plan."},
        ])),
    ]);
    let reading = Messages.read(&post("/v1/messages?beta=true"), Some(&body));
    assert_eq!(reading.class, Class::ToolResult);
    assert_eq!(reading.prompt, None);
}

#[test]
fn the_session_naming_request_is_a_title_answered_with_a_name() {
    // As Claude Code 2.1.328 sends it right after a plan is approved.
    let body = json!({
        "model": "m",
        "stream": true,
        "tools": [],
        "output_config": {"effort": "medium", "format": {"type": "json_schema", "schema": {
            "type": "object", "properties": {"name": {"type": "string"}},
            "required": ["name"], "additionalProperties": false,
        }}},
        "system": [{"type": "text", "text": "Generate a short kebab-case name (2-4 words)."}],
        "messages": [user(json!([{"type": "text", "text": "<conversation>\nMock plan.\n</conversation>"}]))],
    });
    let reading = Messages.read(&post("/v1/messages?beta=true"), Some(&body));
    assert_eq!(reading.class, Class::Title);
    assert!(!reading.class.is_turn_call());
    let events = stream_of(
        &plan(Class::Title, &Directive::Text, 1, None),
        &Ids::new("n"),
    );
    let text = events[2].data["delta"]["text"].as_str().expect("text");
    assert_eq!(
        serde_json::from_str::<Value>(text).expect("json"),
        json!({"name": "mock-session"})
    );
}
