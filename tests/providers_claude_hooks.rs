//! Claude Code 2.1.328's hooks, table-driven from the payloads the real
//! hooks read (`fixtures/providers/claude/hooks/`): for each, what the
//! adapter makes of it (activity, lifecycle facts, receipts), what it
//! claims (scope and size), and what the hook prints once the claim is
//! answered with the fixture's `granted` files.

mod support;

use ding::adapter::HookAction;
use ding::adapter::context::claim_for;
use ding::providers::claude::activity::HookActivity;
use ding::providers::claude::hooks::{CONTEXT_CAP, plan, render};
use serde_json::Value;
use support::provider_fixtures::{
    HookFixture, check_answer, check_plan, claimed_of, hook_fixtures, names, scope_word,
};

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

#[test]
fn every_hook_payload_plans_and_prints_as_its_fixture_says() {
    for HookFixture {
        name,
        fixture,
        agent,
        ..
    } in hook_fixtures("fixtures/providers/claude/hooks", 15)
    {
        let event = fixture["event"].as_str().expect("event");
        let expect = &fixture["expect"];
        let planned = plan(event, &fixture["payload"], &agent);
        assert_eq!(
            activity_word(planned.activity),
            expect["activity"],
            "{name}: activity"
        );
        check_plan(&name, &planned.plan, expect);
        let sized = |scope| claim_for(&agent, CONTEXT_CAP, scope);
        let claimed = || claimed_of(&fixture);
        let answer = match (&planned.plan.action, expect["action"].as_str()) {
            (HookAction::Answer(answer), Some("answer")) => answer.clone(),
            (HookAction::Claim(request), Some("claim"))
            | (HookAction::ClaimUnlessDrafting(request), Some("claim-unless-drafting")) => {
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
                    park.holds_terminal && park.waits_for_fresh_idle,
                    "{name}: a parked wake holds the terminal and never fires under a draft"
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
