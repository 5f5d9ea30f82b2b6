//! The tests of `responses.rs`.

use super::*;
use crate::script::{Directive, plan, run_command};

fn post(metadata: Option<Value>) -> Request {
    let mut request = Request {
        method: "POST".into(),
        target: "/v1/responses".into(),
        ..Request::default()
    };
    if let Some(metadata) = metadata {
        request
            .headers
            .push(("x-codex-turn-metadata".into(), metadata.to_string()));
    }
    request
}

fn message(role: &str, text: &str) -> Value {
    json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})
}

#[test]
fn a_prompt_is_read_after_the_environment_context_and_keeps_its_turn_id() {
    let body = json!({"input": [
        message("developer", "You are a harness."),
        message("user", "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"),
        message("user", "please mock:slow 2"),
        message("developer", "hook context: 0001.md"),
    ]});
    let metadata = json!({"turn_id": "t-1", "thread_source": "user"});
    let reading = Responses.read(&post(Some(metadata)), Some(&body));
    assert_eq!(reading.class, Class::Prompt);
    assert_eq!(reading.prompt.as_deref(), Some("please mock:slow 2"));
    assert_eq!(reading.turn_key.as_deref(), Some("t-1"));
    assert_eq!(
        reading.texts.last(),
        Some(&RoleText::new("developer", "hook context: 0001.md"))
    );
}

#[test]
fn a_tool_output_continues_the_turn_even_with_developer_context_after_it() {
    let body = json!({"input": [
        message("user", "mock:run 1"),
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "mock-run-done"},
        message("developer", "post tool context"),
    ]});
    let reading = Responses.read(&post(None), Some(&body));
    assert_eq!(reading.class, Class::ToolResult);
    assert_eq!(reading.prompt, None);
    assert!(
        reading
            .texts
            .contains(&RoleText::new("tool", "mock-run-done"))
    );
}

#[test]
fn the_title_request_is_told_apart_by_its_metadata_or_its_schema() {
    let body = json!({"input": [message("user", "Generate a concise title")], "tools": []});
    let by_metadata = Responses.read(
        &post(Some(json!({"thread_source": "thread_title"}))),
        Some(&body),
    );
    assert_eq!(by_metadata.class, Class::Title);
    assert_eq!(by_metadata.prompt, None);
    let schema_only = json!({
        "input": [message("user", "Generate a concise title")],
        "tools": [],
        "text": {"format": {"type": "json_schema", "schema": {"required": ["title"]}}},
    });
    assert_eq!(
        Responses.read(&post(None), Some(&schema_only)).class,
        Class::Title
    );
    let reply = Responses.render(
        &post(None),
        Some(&body),
        &Plan::Title("T".into()),
        &Ids::new("n"),
    );
    let Reply::Events(events) = reply else {
        panic!("not a stream");
    };
    let done = events
        .iter()
        .find(|e| e.name == "response.output_text.done")
        .expect("done");
    assert_eq!(done.data["text"], r#"{"title":"T"}"#);
}

#[test]
fn a_compaction_request_is_told_apart_by_its_request_kind() {
    let body = json!({"input": [message("user", "hi"), message("user", "You are performing a CONTEXT CHECKPOINT COMPACTION.")]});
    let metadata = json!({"turn_id": "t-9", "request_kind": "compaction", "thread_source": "user"});
    let reading = Responses.read(&post(Some(metadata)), Some(&body));
    assert_eq!(reading.class, Class::Compaction);
    assert_eq!(reading.prompt, None);
}

fn stream_of(body: &Value, plan: &Plan, ids: &Ids) -> Vec<Event> {
    match Responses.render(&post(None), Some(body), plan, ids) {
        Reply::Events(events) => events,
        other => panic!("not a stream: {other:?}"),
    }
}

#[test]
fn a_text_reply_streams_the_response_events_in_order() {
    let events = stream_of(&json!({}), &Plan::Text("hello".into()), &Ids::new("n"));
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    assert_eq!(events[7].data["response"]["usage"]["total_tokens"], 1010);
}

#[test]
fn a_command_is_an_exec_command_call_that_waits_for_it() {
    let body = json!({"tools": [{"type": "function", "name": "exec_command"}]});
    let ids = Ids::new("n");
    let run = plan(Class::Prompt, &Directive::Run { seconds: 4 }, 1, None);
    let first = stream_of(&body, &run, &ids);
    let second = stream_of(&body, &run, &ids);
    let item = &first[first.len() - 2].data["item"];
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "exec_command");
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(arguments["cmd"], run_command(4).line);
    assert_eq!(arguments["yield_time_ms"], 9_000);
    assert!(arguments.get("sandbox_permissions").is_none());
    let other = &second[second.len() - 2].data["item"];
    assert_ne!(item["call_id"], other["call_id"]);
    assert_ne!(item["id"], other["id"]);
}

#[test]
fn a_permission_command_asks_for_escalation() {
    let body = json!({"tools": [{"type": "function", "name": "exec_command"}]});
    let marker = plan(
        Class::Prompt,
        &Directive::Permission {
            marker: "/tmp/m".into(),
        },
        1,
        None,
    );
    let events = stream_of(&body, &marker, &Ids::new("n"));
    let item = &events[events.len() - 2].data["item"];
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(arguments["cmd"], "touch /tmp/m");
    assert_eq!(arguments["sandbox_permissions"], "require_escalated");
    let full_access = Request {
        headers: vec![(
            "x-codex-turn-metadata".into(),
            json!({"sandbox_mode": "danger-full-access"}).to_string(),
        )],
        ..post(None)
    };
    let Reply::Events(events) =
        Responses.render(&full_access, Some(&body), &marker, &Ids::new("n"))
    else {
        panic!("not a stream");
    };
    let item = &events[events.len() - 2].data["item"];
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(arguments["cmd"], "touch /tmp/m");
    assert!(
        arguments.get("sandbox_permissions").is_none(),
        "{arguments}"
    );
}

#[test]
fn a_command_still_running_after_the_wait_is_polled_until_it_ends() {
    let body = json!({"input": [
        message("user", "mock:run 40"),
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1",
         "output": "Chunk ID: 2e\nWall time: 30.0 seconds\nProcess running with session ID 97317\nOutput:\n"},
    ]});
    let reading = Responses.read(&post(None), Some(&body));
    assert_eq!(reading.class, Class::ToolResult);
    assert_eq!(reading.still_running.as_deref(), Some("97317"));
    let wait = plan(
        reading.class,
        &Directive::Text,
        1,
        reading.still_running.as_deref(),
    );
    let events = stream_of(&body, &wait, &Ids::new("n"));
    let item = &events[events.len() - 2].data["item"];
    assert_eq!(item["name"], "write_stdin");
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(arguments["session_id"], 97317);
    assert_eq!(arguments["chars"], "");
    let finished = json!({"input": [
        {"type": "function_call_output", "call_id": "c2", "output": "Process exited with code 0\nOutput:\nmock-run-done\n"},
    ]});
    assert_eq!(
        Responses.read(&post(None), Some(&finished)).still_running,
        None
    );
}

/// Codex 0.169's tools for the mock model (no metadata: no
/// `apply_patch`), in the collaboration mode `mode`.
fn tools_in_mode(mode: &str, choice_modes: &str) -> Value {
    let instructions = match mode {
        "Plan" => "<collaboration_mode># Plan Mode (Conversational)\n\nYou work in 3 phases",
        _ => "<collaboration_mode># Collaboration Mode: Default\n\nYou are now in Default mode.",
    };
    json!({
        "tools": [
            {"type": "function", "name": "exec_command"},
            {"type": "function", "name": "request_user_input",
             "description": format!("Request user input for one to three short questions and wait for the response. This tool is only available in {choice_modes}.")},
        ],
        "input": [message("developer", instructions), message("user", "mock:choice")],
    })
}

fn edit() -> ToolCall {
    ToolCall::Edit {
        path: "/tmp/e.txt".into(),
        content: "mock edit\n".into(),
    }
}

fn last_item(events: &[Event]) -> &Value {
    &events[events.len() - 2].data["item"]
}

#[test]
fn without_apply_patch_an_edit_is_an_apply_patch_heredoc_codex_intercepts() {
    let body = tools_in_mode("Default", "Plan mode");
    assert!(Responses.offers(&body, &edit()));
    let events = stream_of(&body, &Plan::Tool(edit()), &Ids::new("n"));
    let item = last_item(&events);
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "exec_command");
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(
        arguments["cmd"],
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: /tmp/e.txt\n+mock edit\n*** End Patch\nEOF\n"
    );
    // The file change asks for approval by itself: no escalation.
    assert!(arguments.get("sandbox_permissions").is_none());
    assert!(!Responses.offers(&json!({"tools": []}), &edit()));
}

#[test]
fn a_freeform_apply_patch_tool_gets_the_patch_as_its_input() {
    let body = json!({"tools": [
        {"type": "function", "name": "exec_command"},
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
    ]});
    assert!(Responses.offers(&body, &edit()));
    let events = stream_of(&body, &Plan::Tool(edit()), &Ids::new("n"));
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.output_item.added",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = last_item(&events);
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["name"], "apply_patch");
    assert_eq!(
        item["input"],
        "*** Begin Patch\n*** Add File: /tmp/e.txt\n+mock edit\n*** End Patch\n"
    );
    assert_eq!(
        events[5].data["response"]["output"][0]["call_id"],
        item["call_id"]
    );
}

#[test]
fn the_file_change_result_continues_the_turn_and_the_reply_ends_it() {
    // As Codex 0.169 sent them: the intercepted heredoc's output, and the
    // freeform tool's with hook context before it.
    for output in [
        json!({"type": "function_call_output", "call_id": "c1",
               "output": "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA /tmp/e.txt\n"}),
        json!({"type": "custom_tool_call_output", "call_id": "c1",
               "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nA /tmp/e.txt\n"}),
    ] {
        let body = json!({"input": [
            message("user", "mock:edit /tmp/e.txt"),
            {"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch"},
            message("developer", "hook context: 0001.md"),
            output,
        ]});
        let reading = Responses.read(&post(None), Some(&body));
        assert_eq!(reading.class, Class::ToolResult);
        assert_eq!(reading.still_running, None);
        assert!(matches!(
            plan(reading.class, &Directive::Text, 1, None),
            Plan::Text(_)
        ));
    }
}

#[test]
fn a_question_is_offered_only_in_a_mode_its_tool_works_in() {
    let choice = plan(Class::Prompt, &Directive::Choice, 1, None);
    let Plan::Tool(call) = &choice else {
        panic!("not a tool call: {choice:?}");
    };
    // Codex 0.169 offers it in Default mode too, where it only answers
    // "request_user_input is unavailable in Default mode".
    let default = tools_in_mode("Default", "Plan mode");
    assert!(!Responses.offers(&default, call));
    let plan_mode = tools_in_mode("Plan", "Plan mode");
    assert!(Responses.offers(&plan_mode, call));
    // The feature `default_mode_request_user_input` widens it.
    let widened = tools_in_mode("Default", "Default or Plan mode");
    assert!(Responses.offers(&widened, call));
    let events = stream_of(&plan_mode, &choice, &Ids::new("n"));
    let item = last_item(&events);
    assert_eq!(item["name"], "request_user_input");
    let arguments: Value =
        serde_json::from_str(item["arguments"].as_str().expect("args")).expect("json");
    let question = &arguments["questions"][0];
    assert_eq!(
        question["question"],
        "Which mock option should the turn take?"
    );
    assert_eq!(question["options"][0]["label"], "Mock option one");
    assert_eq!(question["options"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_plan_approval_is_a_proposed_plan_reply_in_plan_mode_only() {
    let approval = plan(Class::Prompt, &Directive::PlanApproval, 1, None);
    let Plan::Tool(call) = &approval else {
        panic!("not a tool call: {approval:?}");
    };
    assert!(!Responses.offers(&tools_in_mode("Default", "Plan mode"), call));
    let plan_mode = tools_in_mode("Plan", "Plan mode");
    assert!(Responses.offers(&plan_mode, call));
    let events = stream_of(&plan_mode, &approval, &Ids::new("n"));
    let done = events
        .iter()
        .find(|e| e.name == "response.output_text.done")
        .expect("a text reply");
    assert_eq!(
        done.data["text"],
        "<proposed_plan>\nMock plan: write nothing, then reply.\n</proposed_plan>"
    );
    // Back in Default mode (the plan was taken), the latest mode counts.
    let mut back = plan_mode.clone();
    back["input"].as_array_mut().expect("input").push(message(
        "developer",
        "<collaboration_mode># Collaboration Mode: Default\n\nYou are now in Default mode.",
    ));
    assert!(!Responses.offers(&back, call));
}

#[test]
fn older_shell_tools_get_their_own_arguments() {
    let body = json!({"tools": [{"type": "function", "name": "shell"}]});
    let (name, arguments) = tool_call(&body, &run_command(1), true);
    assert_eq!(name, "shell");
    assert_eq!(arguments["command"][2], run_command(1).line);
}
