//! The native path's rules, one at a time, with time as a plain number:
//! each helper feeds one input and returns what the launcher would do.

use super::*;
use std::time::Duration;

use crate::providers::codex::timing::{
    CALL_RETRY, EXIT_GRACE, LAUNCH_CALL_TIMEOUT, LAUNCH_RETRY, LISTEN_DEADLINE, LISTEN_POLL,
    RESUME_AFTER, SERVER_GONE_WAIT, SERVER_RESTARTS,
};

/// The inputs the rules below speak of, each with the outputs it drained.
impl QueuePath {
    fn drain(&mut self) -> Vec<Output> {
        std::iter::from_fn(|| self.poll_output()).collect()
    }

    fn fed(&mut self, input: Input, now: Time) -> Vec<Output> {
        self.handle_input(input, now);
        self.drain()
    }

    fn message(&mut self, text: &str, now: Time) -> Vec<Output> {
        self.fed(Input::Message(text.to_string()), now)
    }

    fn answered(&mut self, call: u64, answer: Option<&HookAnswer>, now: Time) -> Vec<Output> {
        let answer = answer.cloned();
        self.fed(Input::Answer { call, answer }, now)
    }

    fn time(&mut self, now: Time) -> Vec<Output> {
        self.handle_timeout(now);
        self.drain()
    }

    /// The app-server is killed: its exit, then its connection closing
    /// (`closed`), at once.
    fn lost(&mut self, closed: &str) -> Vec<Output> {
        let now = Time::from_millis(1_000);
        let status = "signal: 9 (SIGKILL)".to_string();
        let mut outputs = self.fed(
            Input::ServerExited {
                status,
                last_error: None,
            },
            now,
        );
        outputs.extend(self.fed(Input::Closed(closed.to_string()), now));
        outputs
    }

    /// The new app-server listens, and the launcher is connected to it.
    fn back(&mut self) -> Vec<Output> {
        let now = Time::from_millis(1_000);
        let mut outputs = self.fed(Input::ServerStarted, now);
        outputs.extend(self.fed(Input::Connected, now));
        outputs
    }

    /// The TUI exits: the deletes of what is left of DING's.
    fn exiting(&mut self) -> Vec<Output> {
        self.fed(Input::TuiExited, Time::from_millis(1_000))
    }
}

/// A path connected to its app-server at `now`: the `initialize` sent.
fn start(now: Time) -> (QueuePath, Vec<Output>) {
    let setup = Setup {
        cwd: "/srv/project".into(),
        socket: "/run/ding/a/codex.sock".into(),
        server_log: "/run/ding/a/codex-app-server.log".into(),
    };
    let mut native = QueuePath::new(setup, now);
    assert_eq!(native.drain(), [Output::Connect]);
    let outputs = native.fed(Input::Connected, now);
    (native, outputs)
}

/// What the launcher told the adapter of its path, in `launch` calls.
fn told(outputs: &[Output]) -> Vec<LaunchReport> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Tell(report) => Some(report.clone()),
            _ => None,
        })
        .collect()
}

const THREAD: &str = "01a2310a-e4c0-7121-8a70-bb02e3ab2163";

fn sent(actions: &[Output]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|action| match action {
            Output::Send(line) => serde_json::from_str(line).ok(),
            _ => None,
        })
        .collect()
}

fn calls(actions: &[Output]) -> Vec<(u64, Value)> {
    actions
        .iter()
        .filter_map(|action| match action {
            Output::Call { call, report } => Some((*call, report.to_payload())),
            _ => None,
        })
        .collect()
}

/// An answer printing `value`, as the adapter renders a delivery.
fn printed(value: &Value) -> HookAnswer {
    HookAnswer {
        stdout: format!("{value}\n"),
        parked: Some(ParkAnswer::Delivered),
        ..HookAnswer::default()
    }
}

/// A parked call's answer with nothing, saying why.
fn ended(why: ParkAnswer) -> HookAnswer {
    HookAnswer {
        parked: Some(why),
        ..HookAnswer::default()
    }
}

fn reply(id: &Value, result: Value) -> String {
    json!({"id": id, "result": result}).to_string()
}

fn status(kind: &str) -> String {
    json!({"method": "thread/status/changed", "params": {"threadId": THREAD, "status": {"type": kind, "activeFlags": []}}}).to_string()
}

/// Started and initialized: the requests that follow (`initialized`,
/// `hooks/list`, `thread/loaded/list`).
fn initialized(now: Time) -> (QueuePath, Vec<Value>) {
    let (mut native, actions) = start(now);
    let init = &sent(&actions)[0];
    let requests = sent(&native.message(&reply(&init["id"], json!({})), now));
    (native, requests)
}

/// Up to the first call: initialize, hooks, the thread, the probe.
fn ready(now: Time) -> (QueuePath, u64) {
    let (mut native, actions) = start(now);
    let init = &sent(&actions)[0];
    assert_eq!(init["params"]["capabilities"]["experimentalApi"], true);
    let actions = native.message(&reply(&init["id"], json!({})), now);
    let requests = sent(&actions);
    assert_eq!(requests[0]["method"], "initialized");
    assert_eq!(requests[1]["method"], "hooks/list");
    let hooks = json!({"data": [{"hooks": [
        {"eventName": "stop", "command": "ding hook codex Stop", "trustStatus": "trusted"},
        {"eventName": "stop", "command": "notify-send", "trustStatus": "untrusted"}
    ]}]});
    native.message(&reply(&requests[1]["id"], hooks), now);
    // No thread yet: the TUI's comes with thread/started; a title
    // thread (ephemeral) is not it.
    native.message(&reply(&requests[2]["id"], json!({"data": []})), now);
    let title = json!({"method": "thread/started", "params": {"thread": {"id": "title", "ephemeral": true}}});
    assert!(native.message(&title.to_string(), now).is_empty());
    let started = json!({"method": "thread/started", "params": {"thread": {"id": THREAD, "ephemeral": false, "parentThreadId": null}}});
    let probe = sent(&native.message(&started.to_string(), now));
    assert_eq!(probe[0]["method"], "thread/queue/list");
    let actions = native.message(&reply(&probe[0]["id"], json!({"data": []})), now);
    let calls = calls(&actions);
    assert_eq!(calls.len(), 1, "{actions:?}");
    let (call, payload) = &calls[0];
    assert_eq!(payload["conversation"], THREAD);
    assert_eq!(payload["status"], "idle");
    assert_eq!(
        payload["hooks"],
        json!([{"event": "Stop", "trust": "trusted"}])
    );
    (native, *call)
}

fn deliver(native: &mut QueuePath, call: u64, now: Time) -> Value {
    let answer = printed(&json!({"queue": {"id": "ding-7-1", "text": "[ding] 1 unread"}}));
    let actions = native.answered(call, Some(&answer), now);
    let add = sent(&actions).remove(0);
    assert_eq!(add["method"], "thread/queue/add");
    assert_eq!(add["params"]["clientUserMessageId"], "ding-7-1");
    assert_eq!(add["params"]["input"][0]["text"], "[ding] 1 unread");
    let report = calls(&actions);
    assert_eq!(
        report[0].1["queued"],
        json!(["ding-7-1"]),
        "no second delivery now"
    );
    native.message(
        &reply(&add["id"], json!({"queuedSubmission": {"id": "q1"}})),
        now,
    );
    add
}

#[test]
fn a_delivery_is_queued_with_its_exact_text_and_forgotten_once_its_turn_started() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    deliver(&mut native, call, now);
    let list = sent(&native.message(&status("active"), now));
    assert_eq!(list[0]["method"], "thread/queue/list");
    let actions = native.message(&reply(&list[0]["id"], json!({"data": []})), now);
    let (_, payload) = calls(&actions).pop().expect("a new report");
    assert_eq!(
        (payload["status"].as_str(), payload["queued"].clone()),
        (Some("active"), json!([]))
    );
    // A server request (an approval) is never answered.
    let approval =
        json!({"id": "s1", "method": "item/commandExecution/requestApproval", "params": {}});
    assert!(sent(&native.message(&approval.to_string(), now)).is_empty());
    assert_eq!(native.next_deadline(), None, "nothing to wait for");
}

#[test]
fn a_paused_queue_is_resumed_once_after_the_thread_stayed_idle() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    deliver(&mut native, call, now);
    // Esc: the thread turns idle with DING's item still queued (paused).
    native.message(&status("active"), now);
    let list = sent(&native.message(&status("idle"), now));
    let listed = json!({"data": [{"id": "q1", "clientUserMessageId": "ding-7-1"}]});
    native.message(&reply(&list[0]["id"], listed), now);
    assert_eq!(native.next_deadline(), Some(now + RESUME_AFTER));
    assert!(native.time(now + RESUME_AFTER / 2).is_empty());
    let start = sent(&native.time(now + RESUME_AFTER));
    assert_eq!(start[0]["method"], "thread/queue/start");
    assert_eq!(start[0]["params"]["threadId"], THREAD);
    assert!(
        native.time(now + RESUME_AFTER * 3).is_empty(),
        "once per idle spell"
    );
}

#[test]
fn a_new_thread_deletes_what_waited_in_the_old_one_and_is_reported() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    deliver(&mut native, call, now);
    let cleared = json!({"method": "thread/started", "params": {"thread": {"id": "new", "ephemeral": false, "parentThreadId": null}}});
    let actions = native.message(&cleared.to_string(), now);
    let delete = &sent(&actions)[0];
    assert_eq!(delete["method"], "thread/queue/delete");
    assert_eq!(
        delete["params"],
        json!({"threadId": THREAD, "queuedSubmissionId": "q1"})
    );
    let (_, payload) = calls(&actions).pop().expect("reported");
    assert_eq!(payload["conversation"], "new");
    assert_eq!(payload["queued"], json!([]));
    assert_eq!(native.thread(), Some("new"));
}

#[test]
fn a_failed_add_is_reported_once_and_leftovers_are_deleted_on_exit() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    let answer = printed(&json!({"queue": {"id": "ding-7-1", "text": "t"}}));
    let add = sent(&native.answered(call, Some(&answer), now)).remove(0);
    let refused = json!({"id": add["id"], "error": {"code": -32600, "message": "no"}}).to_string();
    let (_, payload) = calls(&native.message(&refused, now))
        .pop()
        .expect("reported");
    assert_eq!(payload["failed"], json!(["ding-7-1"]));
    assert_eq!(payload["queued"], json!([]));
    let call = native.call;
    deliver(&mut native, call, now);
    let delete = sent(&native.exiting());
    assert_eq!(delete[0]["params"]["queuedSubmissionId"], "q1");
    assert!(native.exiting().is_empty());
}

#[test]
fn a_call_is_offered_again_only_when_its_answer_says_it_expired() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    // Declined (a turn started, the hooks said), replaced, or answered
    // with nothing at all: wait for the report to change, however long
    // the call was open.
    let later = now + Duration::from_secs(3_600);
    for answer in [
        ended(ParkAnswer::Declined),
        ended(ParkAnswer::Replaced),
        HookAnswer::default(),
    ] {
        assert!(calls(&native.answered(call, Some(&answer), later)).is_empty());
    }
    // Declined because a turn runs: the thread's next idle is a
    // change, even when the notifications last said idle (an Esc and a
    // prompt at once).
    let idle_again = calls(&native.message(&status("idle"), later));
    assert_eq!(idle_again.len(), 1, "called again once idle");
    let call = idle_again[0].0;
    // Expired, the offer still good: made again, at once.
    let again = calls(&native.answered(call, Some(&ended(ParkAnswer::Expired)), now));
    assert_eq!(again.len(), 1);
    // The adapter unreachable: retry shortly with the same report.
    let current = again[0].0;
    assert!(native.answered(current, None, now).is_empty());
    assert_eq!(native.next_deadline(), Some(now + CALL_RETRY));
    assert_eq!(calls(&native.time(now + CALL_RETRY)).len(), 1);
    // An answer to an older call changes nothing.
    let expired = ended(ParkAnswer::Expired);
    assert!(native.answered(call, Some(&expired), later).is_empty());
}

#[test]
fn a_server_lost_under_a_thread_with_a_turn_is_started_again_a_few_times() {
    let why = "the app-server exited (signal: 9)";
    assert_eq!(after_server_lost(why, true, 0, 3), Recovery::Restart);
    assert_eq!(after_server_lost(why, true, 2, 3), Recovery::Restart);
    let Recovery::EndTheTui(said) = after_server_lost(why, true, 3, 3) else {
        panic!("gives up");
    };
    assert!(said.starts_with(why) && said.contains("3 times"), "{said}");
    let Recovery::EndTheTui(said) = after_server_lost(why, false, 0, 3) else {
        panic!("a fresh thread cannot be resumed");
    };
    assert!(said.contains("no turn yet"), "{said}");
}

/// The native path decides what a lost app-server means: a thread
/// with a turn gets a new one (its conversation starts again from
/// `initialize` once connected), a few times; then, or for a fresh
/// thread, the TUI is ended, and nothing more is asked or said.
#[test]
fn a_lost_server_is_replaced_while_the_thread_can_resume_and_the_tui_ended_after() {
    let now = Time::from_millis(1_000);
    let lost = |native: &mut QueuePath| {
        let outputs = native.lost("exited (signal: 9)");
        match (told(&outputs).as_slice(), outputs.last()) {
            ([report], Some(Output::StartServer | Output::EndTui)) => {
                assert_eq!(report.mode, LaunchMode::NativeDown);
                let why = report.error.clone().expect("why");
                (why, outputs.last() == Some(&Output::StartServer))
            }
            _ => panic!("{outputs:?}"),
        }
    };
    let (mut fresh, _) = ready(now);
    let (why, restart) = lost(&mut fresh);
    assert!(!restart && why.contains("no turn yet"), "{why}");
    assert!(fresh.lost("again").is_empty(), "stopped for good");
    assert!(fresh.time(now + RESUME_AFTER).is_empty());

    let (mut native, _) = ready(now);
    native.message(&status("active"), now);
    native.message(&status("idle"), now);
    for restarts in 1..=SERVER_RESTARTS {
        let (why, restart) = lost(&mut native);
        assert!(restart, "restart {restarts}: {why}");
        assert!(
            why.contains(&format!("({restarts} of {SERVER_RESTARTS})")),
            "{why}"
        );
        // Nothing is reported of the old server's thread meanwhile.
        assert!(calls(&native.message(&status("idle"), now)).is_empty());
        let again = sent(&native.back());
        assert_eq!(again[0]["method"], "initialize");
    }
    let (why, restart) = lost(&mut native);
    assert!(!restart && why.contains("times"), "{why}");
    assert!(native.back().is_empty());
}

#[test]
fn a_thread_has_had_a_turn_once_it_was_active_and_a_new_server_s_queue_is_adopted() {
    let now = Time::from_millis(1_000);
    let (mut native, _) = ready(now);
    assert!(!native.had_turn());
    native.message(&status("active"), now);
    native.message(&status("idle"), now);
    assert!(native.had_turn());
    // A launcher started again finds DING's delivery still queued.
    let (mut native, requests) = initialized(now);
    let loaded = reply(&requests[2]["id"], json!({"data": [THREAD]}));
    let probe = sent(&native.message(&loaded, now)).remove(0);
    let listed = json!({"data": [
        {"id": "q7", "clientUserMessageId": "ding-41-3"},
        {"id": "q8", "clientUserMessageId": "someone-else"}
    ]});
    let (_, report) = calls(&native.message(&reply(&probe["id"], listed), now))
        .pop()
        .expect("the first call");
    assert_eq!(report["queued"], json!(["ding-41-3"]));
}

#[test]
fn a_thread_loaded_only_after_the_start_is_found_when_it_changes() {
    let now = Time::from_millis(1_000);
    let (mut native, requests) = initialized(now);
    // A new app-server: the TUI has not reconnected yet.
    let none = reply(&requests[2]["id"], json!({"data": []}));
    assert!(native.message(&none, now).is_empty());
    // The TUI is back: its thread turns idle, and is asked for again.
    let asked = sent(&native.message(&status("idle"), now));
    assert_eq!(asked[0]["method"], "thread/loaded/list");
    let loaded = reply(&asked[0]["id"], json!({"data": [THREAD]}));
    let probe = sent(&native.message(&loaded, now));
    assert_eq!(probe[0]["method"], "thread/queue/list");
    assert_eq!(native.thread(), Some(THREAD));
    // Found: a change is no longer a question.
    assert!(sent(&native.message(&status("active"), now)).is_empty());
}

#[test]
fn without_the_experimental_queue_the_native_path_is_unavailable() {
    let now = Time::from_millis(1_000);
    let (mut native, requests) = initialized(now);
    let loaded = reply(&requests[2]["id"], json!({"data": [THREAD]}));
    let probe = sent(&native.message(&loaded, now)).remove(0);
    let refused = json!({"id": probe["id"], "error": {"code": -32600, "message": "thread/queue/list requires experimentalApi capability"}});
    let actions = native.message(&refused.to_string(), now);
    assert!(
        matches!(told(&actions).as_slice(), [LaunchReport { mode: LaunchMode::NativeUnavailable, error: Some(why), .. }] if why.contains("experimentalApi")),
        "{actions:?}"
    );
    let expired = ended(ParkAnswer::Expired);
    assert!(
        native.answered(1, Some(&expired), now).is_empty(),
        "stopped"
    );
}

/// A path with a thread that had a turn (so a lost server is started
/// again), ready at `now`.
fn with_a_turn(now: Time) -> QueuePath {
    let (mut native, _) = ready(now);
    native.message(&status("active"), now);
    native.message(&status("idle"), now);
    native
}

#[test]
fn a_lost_server_s_exit_is_awaited_a_moment_and_only_then_its_closing_is_the_reason() {
    let now = Time::from_millis(1_000);
    let mut native = with_a_turn(now);
    // The connection closes first: how the server ended comes next.
    assert!(
        native
            .fed(Input::Closed("end of stream".into()), now)
            .is_empty()
    );
    assert_eq!(native.next_deadline(), Some(now + SERVER_GONE_WAIT));
    let exited = Input::ServerExited {
        status: "signal: 9 (SIGKILL)".into(),
        last_error: None,
    };
    let outputs = native.fed(exited, now + Duration::from_millis(3));
    let why = told(&outputs)[0].error.clone().expect("why");
    assert!(
        why.starts_with("the app-server exited (signal: 9 (SIGKILL)) (end of stream)"),
        "{why}"
    );
    assert_eq!(outputs.last(), Some(&Output::StartServer));
    // No exit seen within the wait: the closing is all there is to say.
    let mut native = with_a_turn(now);
    native.fed(Input::Closed("a close frame".into()), now);
    assert!(native.time(now + SERVER_GONE_WAIT / 2).is_empty());
    let outputs = native.time(now + SERVER_GONE_WAIT);
    let why = told(&outputs)[0].error.clone().expect("why");
    assert!(
        why.starts_with("the app-server's connection closed (a close frame); starting it again"),
        "{why}"
    );
}

#[test]
fn a_server_started_again_is_tried_until_it_listens_and_else_the_tui_is_ended() {
    let now = Time::from_millis(1_000);
    let mut native = with_a_turn(now);
    native.lost("end of stream");
    assert_eq!(native.fed(Input::ServerStarted, now), [Output::Connect]);
    let refused = Input::ConnectFailed("connection refused".into());
    assert!(native.fed(refused.clone(), now).is_empty());
    assert_eq!(native.next_deadline(), Some(now + LISTEN_POLL));
    assert_eq!(native.time(now + LISTEN_POLL), [Output::Connect]);
    let outputs = native.fed(Input::Connected, now + LISTEN_POLL);
    assert_eq!(sent(&outputs)[0]["method"], "initialize", "{outputs:?}");
    assert_eq!(native.next_deadline(), None, "nothing awaited once back");

    // One that never listens: tried until the deadline, then the TUI ends.
    let mut native = with_a_turn(now);
    native.lost("end of stream");
    native.fed(Input::ServerStarted, now);
    let late = now + LISTEN_DEADLINE;
    let outputs = native.fed(refused.clone(), late);
    assert_eq!(outputs.last(), Some(&Output::EndTui), "{outputs:?}");
    let why = native.ended_tui().expect("ended").to_string();
    assert!(
        why.contains(
            "but it could not be: the app-server did not listen on /run/ding/a/codex.sock"
        ),
        "{why}"
    );
    assert_eq!(told(&outputs)[0].mode, LaunchMode::NativeDown);

    // One that exits before it listens is quoted in its own words.
    let mut native = with_a_turn(now);
    native.lost("end of stream");
    native.fed(Input::ServerStarted, now);
    let exited = Input::ServerExited {
        status: "exit status: 1".into(),
        last_error: Some("address in use".into()),
    };
    let outputs = native.fed(exited, now);
    assert_eq!(outputs.last(), Some(&Output::EndTui));
    let why = native.ended_tui().expect("ended");
    assert!(
        why.contains("exited before it listened (exit status: 1): address in use (log: /run/ding/a/codex-app-server.log)"),
        "{why}"
    );

    // One that takes the connection and never answers the upgrade.
    let mut native = with_a_turn(now);
    native.lost("end of stream");
    assert_eq!(native.fed(Input::ServerStarted, now), [Output::Connect]);
    assert_eq!(native.next_deadline(), Some(now + LISTEN_DEADLINE));
    let outputs = native.time(now + LISTEN_DEADLINE);
    assert_eq!(outputs.last(), Some(&Output::EndTui), "{outputs:?}");

    // One that cannot even be started.
    let mut native = with_a_turn(now);
    native.lost("end of stream");
    let outputs = native.fed(Input::ServerNotStarted("no such file".into()), now);
    assert_eq!(outputs.last(), Some(&Output::EndTui));
    assert!(
        native
            .ended_tui()
            .is_some_and(|why| why.contains("no such file"))
    );
}

#[test]
fn an_app_server_unreachable_at_start_turns_the_path_off_and_a_report_nobody_took_is_offered_again()
{
    let now = Time::from_millis(1_000);
    let mut native = QueuePath::new(Setup::default(), now);
    assert_eq!(native.drain(), [Output::Connect]);
    let outputs = native.fed(Input::ConnectFailed("connection refused".into()), now);
    let report = told(&outputs).pop().expect("told");
    assert_eq!(report.mode, LaunchMode::NativeUnavailable);
    assert_eq!(
        report.error.as_deref(),
        Some("connect to the app-server: connection refused")
    );
    // No adapter listening yet: offered again, briefly.
    let unreached = Input::TellUnreached(report.clone());
    assert!(native.fed(unreached.clone(), now).is_empty());
    assert_eq!(native.next_deadline(), Some(now + LAUNCH_RETRY));
    assert_eq!(
        native.time(now + LAUNCH_RETRY),
        [Output::Tell(report.clone())]
    );
    native.fed(unreached, now + LAUNCH_CALL_TIMEOUT);
    assert_eq!(native.next_deadline(), None, "given up");
    // Off: nothing more, and the TUI's exit ends the launcher at once.
    assert!(native.message(&status("idle"), now).is_empty());
    assert!(native.exiting().is_empty());
    assert!(native.is_done());
}

#[test]
fn the_exit_waits_a_moment_for_the_deletes_of_what_is_left() {
    let now = Time::from_millis(1_000);
    let (mut native, call) = ready(now);
    deliver(&mut native, call, now);
    let outputs = native.exiting();
    let delete = sent(&outputs).remove(0);
    assert_eq!(delete["method"], "thread/queue/delete");
    assert!(!native.is_done(), "the answer is awaited");
    // Anything but the answer does nothing now.
    assert!(native.message(&status("active"), now).is_empty());
    assert!(!native.is_done());
    native.message(&reply(&delete["id"], json!({"deleted": true})), now);
    assert!(native.is_done());
    // Unanswered, it is given up after a moment.
    let (mut native, call) = ready(now);
    deliver(&mut native, call, now);
    native.fed(Input::TuiExited, now);
    assert_eq!(native.next_deadline(), Some(now + EXIT_GRACE));
    native.time(now + EXIT_GRACE);
    assert!(native.is_done());
    // Nothing of DING's queued: done at once.
    let (mut native, _) = ready(now);
    native.exiting();
    assert!(native.is_done());
}
