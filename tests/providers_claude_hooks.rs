//! Claude Code 2.1.328's hooks, table-driven from the payloads the real
//! hooks read (`fixtures/providers/claude/hooks/`): for each, what the
//! adapter makes of it (activity, lifecycle facts, receipts), what it
//! claims (scope and size), and what the hook prints once the claim is
//! answered with the fixture's `granted` files.

mod support;

use std::fs;
use std::path::PathBuf;

use ding::adapter::context::claim_for;
use ding::adapter::{AgentContext, HookAction, HookAnswer};
use ding::core::downlink::Claimed;
use ding::core::message::MessageName;
use ding::core::protocol::{ClaimScope, Lifecycle};
use ding::providers::claude::activity::HookActivity;
use ding::providers::claude::hooks::{CONTEXT_CAP, plan, render};
use serde_json::Value;

fn activity_word(activity: Option<HookActivity>) -> Value {
    match activity {
        None => Value::Null,
        Some(HookActivity::Unheard) => "unheard".into(),
        Some(HookActivity::Idle) => "idle".into(),
        Some(HookActivity::Active) => "active".into(),
        Some(HookActivity::Child) => "child".into(),
        Some(HookActivity::AwaitingHuman) => "awaiting-human".into(),
    }
}

fn fact_word(fact: &Lifecycle) -> &'static str {
    match fact {
        Lifecycle::Compaction => "compaction",
        Lifecycle::Clear => "clear",
        Lifecycle::Crash => "crash",
    }
}

fn scope_word(scope: ClaimScope) -> &'static str {
    match scope {
        ClaimScope::Pending => "pending",
        ClaimScope::Unread => "unread",
    }
}

fn names(value: &Value) -> Vec<MessageName> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .map(|name| MessageName::new(name.as_str().expect("a name")).expect("valid"))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks what a hook printed against the fixture's expectation: stdout
/// as JSON when the fixture gives an object, else exactly.
fn check_answer(name: &str, answer: &HookAnswer, expected: &Value) {
    match &expected["stdout"] {
        Value::String(text) => assert_eq!(&answer.stdout, text, "{name}: stdout"),
        object => {
            let printed: Value = serde_json::from_str(&answer.stdout).unwrap_or_else(|err| {
                panic!("{name}: stdout is not JSON ({err}): {}", answer.stdout)
            });
            assert_eq!(&printed, object, "{name}: stdout");
            assert!(answer.stdout.ends_with('\n'), "{name}: one line");
        }
    }
    assert_eq!(
        Some(answer.stderr.as_str()),
        expected["stderr"].as_str(),
        "{name}: stderr"
    );
    assert_eq!(
        Some(i64::from(answer.exit)),
        expected["exit"].as_i64(),
        "{name}: exit"
    );
}

#[test]
fn every_hook_payload_plans_and_prints_as_its_fixture_says() {
    let all = support::fixture_files::json_files("fixtures/providers/claude/hooks");
    assert!(all.len() >= 15, "the fixtures were found ({})", all.len());
    for (name, text) in all {
        let inbox = tempfile::tempdir().expect("inbox");
        let root = inbox.path().to_string_lossy().into_owned();
        let fixture: Value =
            serde_json::from_str(&text.replace("{INBOX}", &root)).expect("fixture JSON");
        fs::create_dir(inbox.path().join("new")).expect("new/");
        for unread in names(&fixture["unread"]) {
            fs::write(inbox.path().join("new").join(unread.as_str()), "work").expect("unread");
        }
        let agent = AgentContext {
            agent: "worker".into(),
            inbox: PathBuf::from(&root),
        };
        let event = fixture["event"].as_str().expect("event");
        let expect = &fixture["expect"];
        let planned = plan(event, &fixture["payload"], &agent);
        assert_eq!(
            activity_word(planned.activity),
            expect["activity"],
            "{name}: activity"
        );
        let facts: Vec<&str> = planned.plan.facts.iter().map(fact_word).collect();
        let expected_facts: Vec<&str> = expect["facts"]
            .as_array()
            .expect("facts")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(facts, expected_facts, "{name}: facts");
        assert_eq!(
            planned.plan.received,
            names(&expect["received"]),
            "{name}: receipts"
        );
        let sized = |scope| claim_for(&agent, CONTEXT_CAP, scope);
        let claimed = || Claimed {
            claim: 1,
            granted: names(&fixture["granted"]),
            refused: Vec::new(),
            refusal: None,
            not_granted: fixture["notGranted"].as_u64().unwrap_or(0) as usize,
        };
        let answer = match (&planned.plan.action, expect["action"].as_str()) {
            (HookAction::Answer(answer), Some("answer")) => answer.clone(),
            (HookAction::Claim(request), Some("claim")) => {
                assert_eq!(request, &sized(request.scope), "{name}: claim size");
                assert_eq!(
                    Some(scope_word(request.scope)),
                    expect["scope"].as_str(),
                    "{name}: scope"
                );
                render(event, &claimed(), &agent)
            }
            (HookAction::Park(park), Some("park")) => {
                assert_eq!(park.claim, sized(park.claim.scope), "{name}: claim size");
                assert_eq!(
                    Some(scope_word(park.claim.scope)),
                    expect["scope"].as_str(),
                    "{name}: scope"
                );
                assert!(
                    park.holds_terminal,
                    "{name}: a parked wake holds the terminal"
                );
                render(event, &claimed(), &agent)
            }
            (action, expected) => panic!("{name}: planned {action:?}, expected {expected:?}"),
        };
        check_answer(&name, &answer, &expect["answer"]);
        let printed = format!("{}{}", answer.stdout, answer.stderr);
        for granted in names(&fixture["granted"]) {
            assert!(
                printed.contains(granted.as_str()),
                "{name}: names {granted}"
            );
        }
    }
}
