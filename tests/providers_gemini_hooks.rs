//! Gemini CLI 0.61.0's hooks against the payloads the real hooks read
//! (`fixtures/providers/gemini/hooks/`): what the adapter makes of each
//! (activity, claim, lifecycle facts), and what the hook prints once its
//! claim is answered. The payloads are as captured; the expectations are
//! here, one row per capture.

use std::path::PathBuf;

use ding::adapter::{AgentContext, HookAction};
use ding::core::downlink::Claimed;
use ding::core::message::MessageName;
use ding::core::protocol::{ClaimScope, Lifecycle};
use ding::providers::gemini::activity::HookActivity;
use ding::providers::gemini::hooks::{plan, render};
use serde_json::Value;

/// What each capture must plan: its activity, whether it claims pending
/// work (and whether only when no draft waits), and its facts.
#[rustfmt::skip]
const EXPECTED: [(&str, Option<HookActivity>, Claim, &[Lifecycle]); 27] = [
    ("AfterAgent", Some(HookActivity::Idle), Claim::UnlessDrafting, &[]),
    ("AfterAgent-stop-hook-active", Some(HookActivity::Idle), Claim::None, &[]),
    ("AfterModel", None, Claim::None, &[]),
    ("AfterTool-ask-user", Some(HookActivity::Active), Claim::Pending, &[]),
    ("AfterTool-exit-plan-mode", Some(HookActivity::Active), Claim::Pending, &[]),
    ("AfterTool-shell", Some(HookActivity::Active), Claim::Pending, &[]),
    ("BeforeAgent", Some(HookActivity::Active), Claim::Pending, &[]),
    ("BeforeAgent-afteragent-retry", Some(HookActivity::Active), Claim::Pending, &[]),
    ("BeforeAgent-background-completion", Some(HookActivity::Active), Claim::Pending, &[]),
    ("BeforeModel", None, Claim::None, &[]),
    ("BeforeTool-ask-user", Some(HookActivity::Child), Claim::None, &[]),
    ("BeforeTool-exit-plan-mode", Some(HookActivity::Child), Claim::None, &[]),
    ("BeforeTool-shell", Some(HookActivity::Child), Claim::None, &[]),
    ("BeforeTool-write-file", Some(HookActivity::Child), Claim::None, &[]),
    ("BeforeTool-write-file-plan", Some(HookActivity::Child), Claim::None, &[]),
    ("BeforeToolSelection", None, Claim::None, &[]),
    ("Notification-ask-user", Some(HookActivity::AwaitingHuman), Claim::None, &[]),
    ("Notification-exit-plan-mode", Some(HookActivity::AwaitingHuman), Claim::None, &[]),
    ("Notification-shell", Some(HookActivity::AwaitingHuman), Claim::None, &[]),
    ("PreCompress-auto", None, Claim::None, &[]),
    ("PreCompress-manual", Some(HookActivity::Active), Claim::None, &[Lifecycle::Compaction]),
    ("SessionEnd-clear", None, Claim::None, &[]),
    ("SessionEnd-exit", None, Claim::None, &[]),
    ("SessionStart-clear", Some(HookActivity::Idle), Claim::None, &[Lifecycle::Clear]),
    ("SessionStart-project-hook", Some(HookActivity::Idle), Claim::None, &[]),
    ("SessionStart-resume", Some(HookActivity::Idle), Claim::None, &[]),
    ("SessionStart-startup", Some(HookActivity::Idle), Claim::None, &[]),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    None,
    Pending,
    UnlessDrafting,
}

fn agent() -> AgentContext {
    AgentContext {
        agent: "worker".into(),
        inbox: PathBuf::from("/srv/inbox/worker"),
    }
}

fn capture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/gemini/hooks")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect("capture")).expect("JSON")
}

#[test]
fn every_captured_payload_plans_as_expected() {
    let on_disk = std::fs::read_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/providers/gemini/hooks"),
    )
    .expect("the captures")
    .filter(|entry| {
        entry
            .as_ref()
            .is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == "json"))
    })
    .count();
    assert_eq!(on_disk, EXPECTED.len(), "every capture has its row");
    for (name, activity, claim, facts) in EXPECTED {
        let fixture = capture(name);
        let event = fixture["event"].as_str().expect("event");
        let planned = plan(event, &fixture["payload"], &agent());
        assert_eq!(planned.activity, activity, "{name}: activity");
        let got = match &planned.plan.action {
            HookAction::Claim(request) => {
                assert_eq!(request.scope, ClaimScope::Pending, "{name}");
                Claim::Pending
            }
            HookAction::ClaimUnlessDrafting(request) => {
                assert_eq!(request.scope, ClaimScope::Pending, "{name}");
                Claim::UnlessDrafting
            }
            _ => Claim::None,
        };
        assert_eq!(got, claim, "{name}: claim");
        assert_eq!(planned.plan.facts, facts, "{name}: facts");
    }
}

fn granted(names: &[&str]) -> Claimed {
    Claimed {
        claim: 1,
        refused: Vec::new(),
        refusal: None,
        granted: names
            .iter()
            .map(|name| MessageName::new(name).expect("a message name"))
            .collect(),
        not_granted: 0,
    }
}

/// The work reaches the model the way each hook can carry it: context
/// beside the prompt or the tool's result, a denied stop's reason; and a
/// claim that granted nothing prints nothing.
#[test]
fn each_hook_prints_the_work_its_own_way() {
    let work = granted(&["20261205T000000000000Z-a.md"]);
    for event in ["BeforeAgent", "AfterTool"] {
        let answer = render(event, &work, &agent());
        let output: Value = serde_json::from_str(&answer.stdout).expect("JSON");
        assert_eq!(output["hookSpecificOutput"]["hookEventName"], event);
        let context = output["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context");
        assert!(context.contains("20261205T000000000000Z-a.md"), "{context}");
        assert_eq!(answer.exit, 0);
    }
    let stop = render("AfterAgent", &work, &agent());
    let output: Value = serde_json::from_str(&stop.stdout).expect("JSON");
    assert_eq!(output["decision"], "deny");
    assert!(
        output["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("ding archive worker")),
        "{output}"
    );
    for event in ["BeforeAgent", "AfterTool", "AfterAgent"] {
        assert_eq!(render(event, &granted(&[]), &agent()).stdout, "", "{event}");
    }
}

/// DING's own typed notice, read back in `BeforeAgent`'s prompt, is the
/// receipt for the files it names.
#[test]
fn the_notice_in_a_prompt_is_its_receipt() {
    let inbox = tempfile::tempdir().expect("inbox");
    let name = "20261205T000000000000Z-a.md";
    std::fs::create_dir(inbox.path().join("new")).expect("new/");
    std::fs::write(inbox.path().join("new").join(name), "work").expect("unread");
    let agent = AgentContext {
        agent: "worker".into(),
        inbox: inbox.path().to_path_buf(),
    };
    let notice = format!(
        "[ding] 1 unread inbox message in {}/new: {name}. Read each file, then archive it: ding archive worker FILE",
        agent.inbox.display()
    );
    let planned = plan(
        "BeforeAgent",
        &serde_json::json!({"prompt": notice}),
        &agent,
    );
    assert_eq!(
        planned.plan.received,
        [MessageName::new(name).expect("name")]
    );
}
