//! Codex CLI 0.169.0's hooks, table-driven from the payloads the real hooks
//! read (`fixtures/providers/codex/hooks/`, and the launcher's own calls as
//! its log recorded them): for each, what the adapter makes of it
//! (activity, lifecycle facts, receipts, which parked call it ends), what
//! it claims (scope and size), and what the hook prints once the claim is
//! answered with the fixture's `granted` files.

mod support;

use std::path::PathBuf;

use ding::adapter::context::claim_for;
use ding::adapter::native_idle::deliveries::{Deliveries, Handed};
use ding::adapter::{AgentContext, ClaimRequest, HookAction, HookAnswer};
use ding::core::downlink::Claimed;
use ding::core::message::MessageName;
use ding::core::protocol::{ClaimScope, ClaimWants};
use ding::providers::codex::activity::HookActivity;
use ding::providers::codex::hooks::{CONTEXT_CAP, Memory, plan, render};
use serde_json::Value;
use support::provider_fixtures::{
    HookFixture, check_answer, check_plan, claimed_of, hook_fixtures, names, scope_word,
};

fn activity_word(activity: Option<HookActivity>) -> Value {
    let word = match activity {
        None => return Value::Null,
        Some(HookActivity::Unheard) => "unheard",
        Some(HookActivity::Active) => "active",
        Some(HookActivity::Child) => "child",
        Some(HookActivity::AwaitingApproval) => "awaiting-approval",
        Some(HookActivity::Stopping) => "stopping",
        Some(HookActivity::Idle) => "idle",
        Some(HookActivity::Ended) => "ended",
    };
    word.into()
}

fn memory(value: &Value) -> Memory {
    Memory {
        native: Deliveries {
            handed: value["deliveries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|delivery| Handed {
                    id: delivery["id"].as_str().expect("id").into(),
                    text: delivery["text"].as_str().expect("text").into(),
                    names: names(&delivery["names"]),
                })
                .collect(),
            owed: names(&value["owed"]),
        },
        thread: value["thread"].as_str().map(String::from),
        cleared: value["cleared"].as_str().map(String::from),
        prompted: names(&value["prompted"]),
        seen_begin: value["seenBegin"].as_str().map(String::from),
    }
}

/// The claim a fixture expects: sized for Codex's cap, or (with owed files)
/// exactly those.
fn check_claim(
    name: &str,
    request: &ClaimRequest,
    agent: &AgentContext,
    memory: &Memory,
    expect: &Value,
) {
    assert_eq!(
        Some(scope_word(request.scope)),
        expect["scope"].as_str(),
        "{name}: scope"
    );
    let sized = claim_for(agent, CONTEXT_CAP, request.scope);
    if memory.native.owed.is_empty() {
        assert_eq!(request, &sized, "{name}: claim size");
    } else {
        assert_eq!(
            request.wants,
            ClaimWants::Named(memory.native.owed.clone()),
            "{name}"
        );
    }
}

#[test]
fn every_hook_payload_plans_and_prints_as_its_fixture_says() {
    for HookFixture {
        name,
        fixture,
        agent,
        ..
    } in hook_fixtures("fixtures/providers/codex/hooks", 24)
    {
        let memory = memory(&fixture["memory"]);
        let event = fixture["event"].as_str().expect("event");
        let expect = &fixture["expect"];
        let planned = plan(event, &fixture["payload"], &agent, &memory);
        assert_eq!(
            activity_word(planned.activity),
            expect["activity"],
            "{name}: activity"
        );
        check_plan(&name, &planned.plan, expect);
        let claimed = claimed_of(&fixture);
        let answer = match (&planned.plan.action, expect["action"].as_str()) {
            (HookAction::Answer(answer), Some("answer")) => answer.clone(),
            (HookAction::Claim(request), Some("claim")) => {
                check_claim(&name, request, &agent, &memory, expect);
                render(event, &claimed, &agent, "ding-TEST-1")
            }
            (HookAction::Park(park), Some("park")) => {
                check_claim(&name, &park.claim, &agent, &memory, expect);
                assert!(
                    park.holds_terminal,
                    "{name}: a parked delivery holds the terminal"
                );
                render(event, &claimed, &agent, "ding-TEST-1")
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
        if event == "PermissionRequest" {
            assert_eq!(
                answer,
                HookAnswer::default(),
                "{name}: never answers the dialog"
            );
        }
    }
}

/// Every text a hook injects stays within the cap Codex keeps inline,
/// whatever the backlog: what does not fit is counted, not cut.
#[test]
fn an_injected_text_stays_within_the_cap_and_counts_the_rest() {
    let agent = AgentContext {
        agent: "worker".into(),
        inbox: PathBuf::from("/srv/inbox/worker"),
    };
    let request = claim_for(&agent, CONTEXT_CAP, ClaimScope::Pending);
    let ClaimWants::Oldest(limit) = request.wants else {
        panic!("oldest first");
    };
    let budget = request.name_bytes.expect("a budget") as usize;
    // Long names: as many as the budget allows, at least one.
    let long: Vec<MessageName> = (0..limit)
        .map(|n| MessageName::new(&format!("{n:03}-{}.md", "x".repeat(200))).expect("name"))
        .collect();
    let mut used = 0;
    let granted: Vec<MessageName> = long
        .iter()
        .take_while(|name| {
            used += name.as_str().len() + 2;
            used <= budget + 2
        })
        .cloned()
        .collect();
    let claimed = Claimed {
        claim: 1,
        granted: granted.clone(),
        refused: Vec::new(),
        refusal: None,
        not_granted: 100,
    };
    let answer = render("PostToolUse", &claimed, &agent, "ding-TEST-1");
    let printed: Value = serde_json::from_str(&answer.stdout).expect("JSON");
    let text = printed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(
        text.chars().count() <= CONTEXT_CAP,
        "{} chars",
        text.chars().count()
    );
    assert!(text.contains("100 more unread after these"), "{text}");
    for name in &granted {
        assert!(text.contains(&format!("- {name}\n")), "{name}");
    }
}
