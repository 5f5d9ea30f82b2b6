//! The tests of `adapter.rs`.

use super::*;
use crate::adapter::HookAction;
use crate::adapter::native_idle::wire::QueueAnswer;
use crate::adapter::screen::testing::{self, run};
use crate::core::message::MessageName;
use crate::core::protocol::{ActivityState, ClaimScope, ClaimWants};
use crate::pty::wire::Run;
use serde_json::json;

fn agent() -> AgentContext {
    crate::adapter::hook_plan::example_agent()
}

fn call(event: &str, payload: Value, incarnation: &str) -> HookCall {
    crate::adapter::hook_wire::test_call(PROVIDER, event, incarnation, payload)
}

/// A ready screen with an empty composer, with or without a reply above.
fn ready(history: bool) -> Snapshot {
    let prompt = Run {
        bold: true,
        ..run(4, 0, "\u{203a}")
    };
    let reply = Run {
        dim: true,
        ..run(1, 0, "\u{2022} ")
    };
    let (rows, runs) = if history {
        (
            ["", "\u{2022} done.", "", "", "\u{203a}", ""],
            vec![prompt, reply],
        )
    } else {
        (["", "", "", "", "\u{203a}", ""], vec![prompt])
    };
    testing::snapshot(40, &rows, runs, Some((4, 2)))
}

/// The tests' moment: nothing they check depends on time passing.
const T: Time = Time::ZERO;

fn evidence(codex: &mut Codex, snapshot: &Snapshot) -> ActivityState {
    codex.evidence(snapshot, T).state
}

use crate::core::downlink::granting as claimed;

/// What Codex's `hooks/list` says of DING's hooks, all trusted, as the
/// launcher's first call reports it.
fn all_hooks_trusted() -> Vec<Value> {
    HOOKS
        .iter()
        .map(|(event, _)| json!({"event": event, "trust": "trusted"}))
        .collect()
}

/// A launcher's report of an idle thread with nothing of DING's queued.
fn idle_report() -> Value {
    json!({"conversation": "t", "status": "idle", "queued": [], "failed": []})
}

const QUEUE_DELIVERS: &str = "the native idle path delivers idle work";
const STARTING: &str = "the native idle path is starting";

#[test]
fn the_native_path_holds_an_idle_terminal_while_it_is_on_or_starting() {
    let mut codex = Codex::new(true);
    assert!(
        codex
            .native_path_holds()
            .is_some_and(|why| why.contains(STARTING))
    );
    // The launcher reports: its queue serves the idle thread, and
    // between two of its calls (a turn just ended) nothing is typed.
    let busy = json!({"conversation": "t", "status": "active", "queued": [], "failed": []});
    codex.on_hook(&call(QUEUE, busy, "a"), &agent(), T);
    assert!(
        codex
            .native_path_holds()
            .is_some_and(|why| why.contains(QUEUE_DELIVERS))
    );
    // It cannot work here: the terminal path serves idle work.
    let down = json!({"mode": "native-unavailable", "error": "the app-server connection closed"});
    codex.on_hook(&call(LAUNCH, down, "a"), &agent(), T);
    assert_eq!(codex.native_path_holds(), None);
    // A new harness has a launcher of its own, which reports anew.
    codex.on_hook(&call("SessionStart", json!({}), "b"), &agent(), T);
    assert!(
        codex
            .native_path_holds()
            .is_some_and(|why| why.contains(STARTING))
    );
    // The terminal path is the only one when it is asked for.
    assert_eq!(Codex::new(false).native_path_holds(), None);
}

/// A first-run question holds Codex's thread back, and so the
/// launcher's first report: status says to answer it, not that the
/// declaration may be wrong (issue 36, item 15).
#[test]
fn a_dialog_before_the_launchers_first_report_is_named_not_the_setup() {
    let mut codex = Codex::new(true);
    let snapshot = |name: &str| crate::adapter::captures::capture("codex/snapshots", name);
    codex.evidence(&snapshot("hooks-review-modal"), T);
    let remark = codex.remark().unwrap_or_default();
    assert!(
        remark.contains("the dialog on screen holds back: answer it"),
        "{remark}"
    );
    assert!(!remark.contains("compile-agent"), "{remark}");
    codex.evidence(&snapshot("idle-empty-placeholder"), T);
    let remark = codex.remark().unwrap_or_default();
    assert!(remark.contains("is the harness command"), "{remark}");
}

#[test]
fn a_report_of_the_path_going_down_ends_the_parked_queue_call() {
    let mut codex = Codex::new(true);
    let report = idle_report();
    let plan = codex.on_hook(&call(QUEUE, report, "a"), &agent(), T);
    assert!(matches!(plan.action, HookAction::Park(_)), "{plan:?}");
    let down = json!({"mode": "native-unavailable", "error": "the app-server exited"});
    let plan = codex.on_hook(&call(LAUNCH, down, "a"), &agent(), T);
    assert_eq!(plan.end_parked, [QUEUE], "no claim into the dead path");
    let embedded = json!({"mode": "embedded", "declared": []});
    let plan = codex.on_hook(&call(LAUNCH, embedded, "a"), &agent(), T);
    assert!(plan.end_parked.is_empty(), "{plan:?}");
}

#[test]
fn a_dead_app_server_holds_the_terminal_and_what_died_in_its_queue_is_owed() {
    let mut codex = Codex::new(true);
    let mut report = idle_report();
    report["hooks"] = json!(all_hooks_trusted());
    let queue = call(QUEUE, report.clone(), "a");
    codex.on_hook(&queue, &agent(), T);
    let delivery = codex.on_claimed(&queue, &claimed(&["a.md"]), &agent(), T);
    codex.on_hook(&call("PreModelRequest", json!({}), "a"), &agent(), T);
    let down = json!({"mode": "native-down", "error": "the app-server exited (signal: 9); starting it again (1 of 3)"});
    let plan = codex.on_hook(&call(LAUNCH, down, "a"), &agent(), T);
    assert_eq!(plan.end_parked, [QUEUE]);
    let holds = codex.native_path_holds().expect("held");
    assert!(
        holds.contains("is down") && holds.contains("signal: 9"),
        "{holds}"
    );
    let remark = codex.remark().expect("a remark");
    assert!(remark.contains("native idle path down"), "{remark}");
    assert!(
        !remark.contains("unavailable") && !remark.contains("compile-agent"),
        "{remark}"
    );
    // A report the launcher made before the server died, come late,
    // lists the delivery as queued: it says nothing of the new server.
    let id: Value = serde_json::from_str(&delivery.stdout).expect("JSON");
    let late =
        json!({"conversation": "t", "status": "idle", "queued": [id["queue"]["id"]], "failed": []});
    let plan = codex.on_hook(&call(QUEUE, late, "a"), &agent(), T);
    assert_eq!(plan.action, HookAction::Answer(HookAnswer::default()));
    assert!(plan.undelivered.is_empty(), "{plan:?}");
    assert!(
        codex
            .native_path_holds()
            .is_some_and(|why| why.contains("is down"))
    );
    // The new app-server lists nothing of DING's: the delivery died
    // with the old one: its file goes back to unread work, and is
    // claimed by the next park.
    let plan = codex.on_hook(&call(QUEUE, report, "a"), &agent(), T);
    assert_eq!(plan.undelivered, [MessageName::new("a.md").expect("name")]);
    let HookAction::Park(park) = plan.action else {
        panic!("parked: {plan:?}");
    };
    assert_eq!(
        park.claim.wants,
        ClaimWants::Named(vec![MessageName::new("a.md").expect("name")])
    );
    assert!(
        codex
            .native_path_holds()
            .is_some_and(|why| why.contains(QUEUE_DELIVERS))
    );
    assert_eq!(
        evidence(&mut codex, &ready(true)),
        ActivityState::Idle,
        "the lost turn is forgotten"
    );
}

#[test]
fn a_report_of_the_path_going_down_leaves_what_was_said_of_the_hooks() {
    let mut codex = Codex::new(true);
    let mut report = idle_report();
    report["hooks"] = json!(all_hooks_trusted());
    codex.on_hook(&call(QUEUE, report, "a"), &agent(), T);
    let down = json!({"mode": "native-unavailable", "error": "the app-server connection closed"});
    codex.on_hook(&call(LAUNCH, down, "a"), &agent(), T);
    let remark = codex.remark().expect("a remark");
    assert!(remark.contains("codex hooks trusted"), "{remark}");
    assert!(
        !remark.contains("compile-agent"),
        "no advice that does not apply: {remark}"
    );
    assert!(remark.contains("native idle path unavailable"), "{remark}");
}

#[test]
fn a_new_incarnation_forgets_the_turn_the_old_one_was_in() {
    let mut codex = Codex::new(true);
    codex.on_hook(&call("PreModelRequest", json!({}), "a"), &agent(), T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
    // The harness restarted mid-turn: its fresh screen is idle at once.
    codex.on_new_terminal(
        Some(&Identity {
            session: "s".into(),
            incarnation: "b".into(),
            generation: "g".into(),
        }),
        T,
    );
    assert_eq!(evidence(&mut codex, &ready(false)), ActivityState::Idle);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Unknown);
}

#[test]
fn stop_is_settled_by_its_claim_blocked_or_not() {
    let mut codex = Codex::new(true);
    let stop = call("Stop", json!({"stop_hook_active": false}), "a");
    codex.on_hook(&stop, &agent(), T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
    codex.on_claimed(&stop, &claimed(&[]), &agent(), T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Idle);
    codex.on_hook(&stop, &agent(), T);
    let answer = codex.on_claimed(&stop, &claimed(&["a.md"]), &agent(), T);
    assert!(
        answer.stdout.contains("\"decision\":\"block\""),
        "{answer:?}"
    );
    assert_eq!(
        evidence(&mut codex, &ready(true)),
        ActivityState::Active,
        "the turn goes on"
    );
}

/// The whole-agent simulation's seeds 720437 and 863417: a `Stop` hook
/// killed after DING answered it with a block. Codex ignores the output
/// of a run that did not exit 0, so the turn ended; the hook never passed
/// the block on (no receipt), and believing the turn went on held the
/// files, given back, until the person's next prompt.
#[test]
fn a_stop_block_never_passed_on_ended_the_turn() {
    let mut codex = Codex::new(true);
    let stop = call("Stop", json!({"stop_hook_active": false}), "a");
    codex.on_hook(&stop, &agent(), T);
    codex.on_claimed(&stop, &claimed(&["a.md"]), &agent(), T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
    codex.on_answer_unread(&stop, T);
    assert_eq!(
        evidence(&mut codex, &ready(true)),
        ActivityState::Idle,
        "the block was never read: the turn is over"
    );
    // A continuation's hook heard first: the block reached Codex after
    // all, and what that hook said stands.
    codex.on_hook(&stop, &agent(), T);
    codex.on_claimed(&stop, &claimed(&["b.md"]), &agent(), T);
    codex.on_hook(&call("PreModelRequest", json!({}), "a"), &agent(), T);
    codex.on_answer_unread(&stop, T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
    // Another hook's lost answer says nothing of the turn.
    let tool = call("PostToolUse", json!({}), "a");
    codex.on_claimed(&tool, &claimed(&["c.md"]), &agent(), T);
    codex.on_answer_unread(&tool, T);
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
}

#[test]
fn a_delivery_holds_the_terminal_until_its_prompt_is_the_receipt() {
    let mut codex = Codex::new(true);
    let report = idle_report();
    let queue = call(QUEUE, report, "a");
    let plan = codex.on_hook(&queue, &agent(), T);
    assert!(
        matches!(&plan.action, HookAction::Park(park) if park.holds_terminal && park.waits_for_fresh_idle),
        "{plan:?}"
    );
    let answer = codex.on_claimed(&queue, &claimed(&["a.md"]), &agent(), T);
    let text = QueueAnswer::read(&answer).expect("a delivery").text;
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Active);
    let prompt = call("UserPromptSubmit", json!({"prompt": text}), "a");
    let plan = codex.on_hook(&prompt, &agent(), T);
    assert_eq!(plan.received, [MessageName::new("a.md").expect("name")]);
    codex.on_hook(
        &call("Stop", json!({"stop_hook_active": true}), "a"),
        &agent(),
        T,
    );
    assert_eq!(evidence(&mut codex, &ready(true)), ActivityState::Idle);
}

#[test]
fn a_file_waiting_in_the_queue_is_not_injected_into_the_same_request_again() {
    let mut codex = Codex::new(true);
    let report = idle_report();
    let queue = call(QUEUE, report, "a");
    codex.on_hook(&queue, &agent(), T);
    codex.on_claimed(&queue, &claimed(&["a.md"]), &agent(), T);
    // A compaction: the next SessionStart asks for every unread file,
    // the one its turn's queued prompt carries among them.
    let start = call("SessionStart", json!({"source": "compact"}), "a");
    codex.on_hook(&start, &agent(), T);
    let answer = codex.on_claimed(&start, &claimed(&["a.md", "b.md"]), &agent(), T);
    assert!(
        answer.stdout.contains("b.md") && !answer.stdout.contains("a.md"),
        "{answer:?}"
    );
    let only_queued = codex.on_claimed(&start, &claimed(&["a.md"]), &agent(), T);
    assert!(!only_queued.stdout.contains("a.md"), "{only_queued:?}");
}

/// Issue 36, item 6: a queued delivery's turn ran (its prompt carried
/// the file, unread still: that turn was lost with its app-server),
/// then the person compacted. Codex 0.169.0 keeps the thread's user
/// messages through a compaction (the request after a `/compact`
/// carried the notice of the turn before it:
/// `fixtures/providers/codex/eval/compaction-0.169.0.jsonl`), so
/// SessionStart's backlog leaves that file out; a file only a hook
/// injected (a `developer` message, which the compaction drops) is
/// said again. After a `/clear` nothing of the old thread is there,
/// and the file is said again.
#[test]
fn a_file_a_prompt_of_the_thread_carried_is_not_said_again_by_the_compacted_backlog() {
    let mut codex = Codex::new(true);
    let queue = call(QUEUE, idle_report(), "a");
    codex.on_hook(&queue, &agent(), T);
    let delivery = codex.on_claimed(&queue, &claimed(&["a.md"]), &agent(), T);
    let text = QueueAnswer::read(&delivery).expect("a delivery").text;
    let prompt = call("UserPromptSubmit", json!({"prompt": text}), "a");
    let plan = codex.on_hook(&prompt, &agent(), T);
    assert_eq!(plan.received, vec![MessageName::new("a.md").expect("name")]);
    let start = call("SessionStart", json!({"source": "compact"}), "a");
    codex.on_hook(&start, &agent(), T);
    let answer = codex.on_claimed(&start, &claimed(&["a.md", "b.md"]), &agent(), T);
    assert!(
        answer.stdout.contains("b.md") && !answer.stdout.contains("a.md"),
        "{answer:?}"
    );
    // A new thread: its first prompt's SessionStart reports `clear`,
    // and the backlog it brings names the file again.
    let clear = call("SessionStart", json!({"source": "clear"}), "a");
    let plan = codex.on_hook(&clear, &agent(), T);
    assert!(plan.facts.contains(&Lifecycle::Clear), "{plan:?}");
    let again = codex.on_claimed(&clear, &claimed(&["a.md"]), &agent(), T);
    assert!(again.stdout.contains("a.md"), "{again:?}");
}

/// The scope of the claim a hook's plan makes.
fn claim_scope(plan: &HookPlan) -> Option<ClaimScope> {
    match &plan.action {
        HookAction::Claim(request) => Some(request.scope),
        _ => None,
    }
}

/// Soak seed 245813: `SessionStart` (`clear`) run twice by two `ding
/// hook` processes (settings merged twice). Each run reported `clear`, so
/// the second gave back to pending what the first run's claim had just
/// taken, and its own claim took it again: one request said it twice. The
/// thread's `clear` is reported once; the twin only claims, and finds the
/// work taken.
#[test]
fn the_same_clear_session_start_run_twice_reports_clear_once() {
    let mut codex = Codex::new(true);
    let start = json!({"source": "clear", "session_id": "t2"});
    let first = codex.on_hook(&call("SessionStart", start.clone(), "a"), &agent(), T);
    assert!(first.facts.contains(&Lifecycle::Clear), "{first:?}");
    let twin = codex.on_hook(&call("SessionStart", start, "a"), &agent(), T);
    assert!(twin.facts.is_empty(), "{twin:?}");
    assert_eq!(claim_scope(&twin), Some(ClaimScope::Pending));
    // The next thread's clear is its own.
    let next = json!({"source": "clear", "session_id": "t3"});
    let next = codex.on_hook(&call("SessionStart", next, "a"), &agent(), T);
    assert!(next.facts.contains(&Lifecycle::Clear), "{next:?}");
}

/// Soak seeds 231314, 302633, 912215 and 930638: the sidecar was killed
/// within a thread, and its new adapter never saw the prompts before (a
/// queued delivery's turn, one still waiting in the queue). After a
/// `/compact` the compacted backlog (scope `unread`) said those files
/// again beside the prompts Codex keeps. An adapter that did not see the
/// thread begin cannot tell what its prompts carried: its compacted
/// backlog is pending work only (fail closed); one that saw the
/// thread's first prompt asks for the whole unread backlog.
#[test]
fn a_compaction_in_a_thread_the_adapter_never_saw_begin_says_only_pending_work() {
    let mut codex = Codex::new(true);
    let compact = json!({"source": "compact", "session_id": "t1"});
    let plan = codex.on_hook(&call("SessionStart", compact.clone(), "a"), &agent(), T);
    assert_eq!(claim_scope(&plan), Some(ClaimScope::Pending));
    let unnamed = json!({"source": "compact"});
    let plan = codex.on_hook(&call("SessionStart", unnamed, "a"), &agent(), T);
    assert_eq!(claim_scope(&plan), Some(ClaimScope::Pending));
    let startup = json!({"source": "startup", "session_id": "t1"});
    codex.on_hook(&call("SessionStart", startup, "a"), &agent(), T);
    let plan = codex.on_hook(&call("SessionStart", compact, "a"), &agent(), T);
    assert_eq!(claim_scope(&plan), Some(ClaimScope::Unread));
    // Another thread (a `/clear` the adapter missed): not seen begin.
    let other = json!({"source": "compact", "session_id": "t9"});
    let plan = codex.on_hook(&call("SessionStart", other, "a"), &agent(), T);
    assert_eq!(claim_scope(&plan), Some(ClaimScope::Pending));
}

#[test]
fn a_delivery_that_could_not_be_queued_is_claimed_again_by_the_next_hook() {
    let mut codex = Codex::new(true);
    let report = idle_report();
    let queue = call(QUEUE, report, "a");
    codex.on_hook(&queue, &agent(), T);
    let answer = codex.on_claimed(&queue, &claimed(&["a.md"]), &agent(), T);
    let id: Value = serde_json::from_str(&answer.stdout).expect("JSON");
    let failed =
        json!({"conversation": "t", "status": "idle", "queued": [], "failed": [id["queue"]["id"]]});
    let plan = codex.on_hook(&call(QUEUE, failed, "a"), &agent(), T);
    assert_eq!(plan.undelivered, [MessageName::new("a.md").expect("name")]);
    assert_eq!(
        evidence(&mut codex, &ready(true)),
        ActivityState::Idle,
        "no longer held"
    );
    let post = call("PostToolUse", json!({}), "a");
    let plan = codex.on_hook(&post, &agent(), T);
    let HookAction::Claim(request) = plan.action else {
        panic!("a claim: {plan:?}");
    };
    assert_eq!(
        request.wants,
        ClaimWants::Named(vec![MessageName::new("a.md").expect("name")])
    );
    codex.on_claimed(&post, &claimed(&["a.md"]), &agent(), T);
    let HookAction::Claim(request) = codex.on_hook(&post, &agent(), T).action else {
        panic!("a claim");
    };
    assert!(
        matches!(request.wants, ClaimWants::Oldest(_)),
        "owed once only"
    );
}

/// Found by the whole-agent simulation (seed 526970): the app-server died
/// between the adapter's answer and the launcher's `thread/queue/add`, and
/// no report listed the delivery late. The new server's first report does
/// not list it: its files go back to unread work (so that evidence is
/// wanted and the launcher's parked call claims them), once, and only to
/// that report.
#[test]
fn a_delivery_that_never_reached_a_server_goes_back_when_the_new_one_reports() {
    let mut codex = Codex::new(true);
    let mut report = idle_report();
    report["hooks"] = json!(all_hooks_trusted());
    let queue = call(QUEUE, report.clone(), "a");
    codex.on_hook(&queue, &agent(), T);
    codex.on_claimed(&queue, &claimed(&["a.md", "b.md"]), &agent(), T);
    let down = json!({"mode": "native-down", "error": "the app-server exited (signal: 9); starting it again (1 of 3)"});
    let plan = codex.on_hook(&call(LAUNCH, down, "a"), &agent(), T);
    assert!(plan.undelivered.is_empty(), "{plan:?}");
    let plan = codex.on_hook(&call(QUEUE, report.clone(), "a"), &agent(), T);
    let names: Vec<MessageName> = ["a.md", "b.md"]
        .iter()
        .map(|name| MessageName::new(name).expect("name"))
        .collect();
    assert_eq!(plan.undelivered, names);
    assert!(matches!(plan.action, HookAction::Park(_)), "{plan:?}");
    let plan = codex.on_hook(&call(QUEUE, report, "a"), &agent(), T);
    assert!(plan.undelivered.is_empty(), "given back once: {plan:?}");
}
