//! The real Codex CLI 0.169.0 under `turn-boundary+fresh-idle`, set up
//! exactly as a user would: `ding hooks install` (the adapter launcher in
//! `$ST_HOOKS`), `ding compile-agent codex` (the declaration; Codex's hooks
//! and their trust are declared per invocation by the launcher), then
//! `ding up` with the model key only in its environment. Model-free against
//! the loopback model server; every wait is on a screen, a request, a hook
//! or a status, never a sleep.
//!
//! Each test counts what matters from the logs: model calls of turns (the
//! model server's request log; Codex's title requests apart), the bytes
//! DING wrote into the terminal (the PTY host logs `delivery` apart from
//! `intervention`), and prints them. Every process is ended by pid: `ding
//! down`, then any `codex` left under the agent's `CODEX_HOME` (the
//! app-server the launcher started dies with it; the test checks).

mod support;

use std::path::PathBuf;
use std::time::Duration;

use ding::core::protocol::Composer;
use ding::providers::codex::screen::{Screen, read};
use ding::pty::wire::Snapshot;
use serde_json::Value;
use support::real_pane::*;
use support::sidecar_agent::{Agent, DEADLINE, adapter_says, message};

/// The key is a secret by its name: it reaches the harness from the
/// environment of `ding up`, never from the declaration.
const API_KEY: (&str, &str) = ("MOCK_MODEL_API_KEY", "mock-model-key");

fn ready_and_empty(snapshot: &Snapshot) -> bool {
    let view = read(snapshot);
    view.screen == Screen::Ready && view.composer == Composer::Empty
}

/// One Codex agent, compiled and started the documented way; its model
/// server; its `CODEX_HOME`.
struct Careful {
    agent: Agent,
    model: ModelServer,
    codex_home: PathBuf,
}

impl Careful {
    fn start(name: &str, idle_path: &str) -> Careful {
        let binary = harness_binary("DING_HARNESS_CODEX");
        let agent = Agent::new(name, "");
        let model = ModelServer::start("openai", &agent.path("model"));
        let launch = prepare_harness(&agent, "codex", &binary, &model);
        let codex_home = PathBuf::from(launch["env"]["CODEX_HOME"].as_str().expect("home"));
        compile_and_up(&agent, "codex", &launch, idle_path, API_KEY);
        wait_screen(&agent, "the idle, empty composer", ready_and_empty);
        agent.wait_status("the adapter up", |status| {
            status["engine"]["adapter"]["state"] == "up"
        });
        if idle_path == "native" {
            // The launcher's call, parked: the native idle path is armed.
            wait_until("the launcher's call parked", PATIENCE, || {
                (agent.parked_calls() >= 1).then_some(())
            });
        }
        Careful {
            agent,
            model,
            codex_home,
        }
    }

    fn send(&self, body: &str) -> String {
        send_message(&self.agent, body)
    }

    /// Waits until the message `name` reaches the model as a prompt of its
    /// own (a queued turn's).
    fn reaches_the_model_as_a_prompt(&self, name: &str) {
        let request = wait_carrying(&self.model, name);
        assert_eq!(
            request["class"],
            "prompt",
            "{}",
            summary(&self.model.requests())
        );
    }

    fn wait_hook_owned(&self, name: &str) -> Value {
        wait_hook_owned(&self.agent, name)
    }

    fn settled(&self, what: &str, calls: usize, typed: u64) {
        settled(what, &self.agent, &self.model, calls, typed);
    }

    /// Opens an approval dialog (`mock:permission MARKER`), sends a message
    /// while it is open and waits until it is held; the marker and the
    /// message's name.
    fn held_by_an_approval(&self) -> (PathBuf, String) {
        let marker = self.agent.path("marker");
        self.agent.ding_ok(&[
            "intervene",
            &self.agent.name,
            &format!("mock:permission {}", marker.display()),
        ]);
        wait_screen(&self.agent, "the approval dialog", |snapshot| {
            read(snapshot).screen == Screen::Dialog
                && shows(snapshot, "Press enter to confirm or esc to cancel")
        });
        let name = self.send("deploy notes\n");
        self.agent.wait_held(&name, "not-idle");
        (marker, name)
    }
}

impl Drop for Careful {
    fn drop(&mut self) {
        let _ = self.agent.ding(&["down", &self.agent.name]);
        // The PTY host hangs up the launcher's process group; the TUI and
        // the app-server take a moment to exit. Whatever is still there
        // after a generous wait is ended by its pid, and fails the test.
        let left = end_leftovers(
            "CODEX_HOME",
            &self.codex_home,
            "codex",
            Duration::from_secs(15),
        );
        if !std::thread::panicking() {
            assert!(
                left.is_empty(),
                "codex processes outlived ding down: {left:?}"
            );
        }
    }
}

/// Issue 20: in Codex's default setup, a message waiting at `ding up` was
/// typed on the first composer frame, and the Return then answered the
/// "Hooks need review" modal that a person's own untrusted hook makes
/// Codex draw over it about 0.2 s later (3 of 3). Here the folder is not
/// trusted either, and a message waits before the agent starts: DING
/// types nothing, no key reaches the modal, and once the person has
/// answered it ("3. Continue without trusting") the backlog goes through
/// Codex's own queue: one model call, 0 bytes typed.
#[test]
fn a_startup_backlog_waits_for_the_hooks_review_modal_and_goes_through_the_queue() {
    let binary = harness_binary("DING_HARNESS_CODEX");
    let agent = Agent::new("cx-startup", "");
    let model = ModelServer::start("openai", &agent.path("model"));
    let launch = prepare_harness(&agent, "codex", &binary, &model);
    let codex_home = PathBuf::from(launch["env"]["CODEX_HOME"].as_str().expect("home"));
    // The person's own state: a hook they never reviewed, and a folder
    // they never trusted.
    let hooks =
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"true","timeout":5}]}]}}"#;
    std::fs::write(codex_home.join("hooks.json"), hooks).expect("the user's hook");
    let config = std::fs::read_to_string(codex_home.join("config.toml")).expect("config");
    let untrusted: Vec<&str> = config
        .lines()
        .filter(|line| !line.starts_with("[projects.") && !line.starts_with("trust_level"))
        .collect();
    std::fs::write(codex_home.join("config.toml"), untrusted.join("\n")).expect("config");
    compile(&agent, "codex", &launch, "native", API_KEY);
    let name = send_before_up(
        &agent,
        "waiting since before the start
",
    );
    up(&agent, API_KEY);
    let codex = Careful {
        agent,
        model,
        codex_home,
    };
    let modal = |snapshot: &Snapshot| {
        shows(snapshot, "Hooks need review") && read(snapshot).screen == Screen::Dialog
    };
    wait_screen(&codex.agent, "the hooks review modal", modal);
    let status = codex.agent.wait_status(&format!("{name} held"), |status| {
        held_for_a_reason(status, &name)
    });
    assert_eq!(pty_writes(&codex.agent).delivery_bytes, 0, "{status}");
    // The person answers it; their hook stays untrusted, DING's run.
    answer_with(&codex.agent, "3", modal);
    codex.reaches_the_model_as_a_prompt(&name);
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    codex.settled("startup backlog behind the hooks review modal", 1, 0);
}

/// Issue 20: after a `kill -9` of the launcher's app-server the TUI showed
/// "Reconnecting to server…" forever while status said running, and a
/// message sent 6 s later was claimed by a queue call still parked for the
/// dead path. Now the launcher hears the loss at once, starts the
/// app-server again on the same socket (the thread has a turn, so the TUI
/// reconnects and carries on: findings §12), and the TUI's "Reconnecting"
/// screen is never idle: a message sent meanwhile is held, never claimed
/// into the dead path, and reaches the model once the TUI is back, with
/// one model call and 0 bytes typed.
#[test]
fn a_killed_app_server_is_started_again_and_the_work_waits_for_it() {
    let codex = Careful::start("cx-dead", "native");
    let first = codex.send("a first turn, so the thread has a rollout\n");
    wait_carrying(&codex.model, &first);
    wait_screen(&codex.agent, "the first reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    // A process the app-server forks to run a hook carries its command
    // line until it execs (under load, for a moment longer): wait for the
    // one app-server left once those are gone.
    let servers = wait_until("one app-server", DEADLINE, || {
        let found = processes_with("CODEX_HOME", &codex.codex_home, "app-server");
        (found.len() == 1).then_some(found)
    });
    let killed = nix::unistd::Pid::from_raw(servers[0]);
    nix::sys::signal::kill(killed, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    let kill = std::time::Instant::now();
    wait_screen(&codex.agent, "the TUI reconnecting", |snapshot| {
        shows(snapshot, "Reconnecting to server")
    });
    let name = codex.send("sent while the TUI reconnects\n");
    // What a person reads now, while the screen still says it reconnects:
    // the message held, and status saying why. The adapter says the native
    // path is down as soon as the launcher tells it (its remark, said while
    // the message still gathers and no screen is read), and once it reads
    // the screen, that the TUI lost its app-server (or, for a moment after
    // Codex reconnected, that the native path is down until the launcher
    // reports the new app-server). Codex reconnects 1.03 to 1.07 s after
    // the kill here: waiting for the screen's own words alone raced the
    // end of the message's gather, when the adapter first reads the screen
    // (28 to 63 ms before Codex was back in 6 loaded runs; just after it
    // in 9 of 50, which failed, the message held all along, claimed only
    // by the new app-server's first queue call and delivered 1.4 s after
    // the kill).
    let held = codex
        .agent
        .wait_status(&format!("{name} held, and why"), |status| {
            held_for_a_reason(status, &name) && says_the_app_server_is_gone(&adapter_says(status))
        });
    eprintln!(
        "held {:?} after the kill, while the TUI reconnects: {}; the adapter says: {}",
        kill.elapsed(),
        message(&held, &name).map_or(Value::Null, |m| m["hold"].clone()),
        adapter_says(&held)
    );
    codex.reaches_the_model_as_a_prompt(&name);
    // One app-server again, a new one. A process the app-server forks has
    // its command line until it execs, so for a moment two may show: wait
    // for one (make test once found its child in that window).
    let again = wait_until("one new app-server", Duration::from_secs(10), || {
        let found = processes_with("CODEX_HOME", &codex.codex_home, "app-server");
        (found.len() == 1).then_some(found)
    });
    assert_ne!(again[0], servers[0], "a new app-server: {again:?}");
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 2.") && ready_and_empty(snapshot)
    });
    codex.settled("a message across an app-server restart", 2, 0);
    // Never claimed into the dead path: the launcher's log names it first
    // in the answer to a call it made once the app-server started again
    // had reported (its first report carries Codex's hooks list).
    let log = std::fs::read_to_string(codex.agent.paths().runtime_dir().join("codex-launch.log"))
        .expect("the launcher's log");
    let lines: Vec<&str> = log.lines().collect();
    let reported_again = lines
        .iter()
        .position(|line| line.contains("app-server started again"))
        .and_then(|restarted| {
            let report = |line: &&str| line.contains(" call ") && line.contains("\"hooks\"");
            lines[restarted..]
                .iter()
                .position(report)
                .map(|at| restarted + at)
        })
        .unwrap_or_else(|| panic!("no report of a new app-server in the launcher's log:\n{log}"));
    let named = lines
        .iter()
        .position(|line| line.contains(name.as_str()))
        .unwrap_or_else(|| panic!("{name} never queued:\n{log}"));
    assert!(
        named > reported_again && lines[named].contains(" answer "),
        "{name} was handed to the launcher before its new app-server reported:\n{log}"
    );
}

/// What `ding status` says while Codex's app-server is gone: the screen's
/// reading (the TUI lost it), the native path held for it, or the
/// adapter's remark (said while no screen is read).
fn says_the_app_server_is_gone(says: &str) -> bool {
    says.contains("lost its app-server")
        || says.contains("native idle path is down")
        || says.contains("native idle path down")
}

/// Issue 20: a `kill -9` of the launcher itself. The PTY host sees its
/// harness exit and hangs up what the launcher started (the TUI and the
/// app-server end with it); status says the harness exited, with the
/// signal; a message sent meanwhile is held, never claimed into the dead
/// path; `ding restart` starts a new incarnation, whose launcher delivers
/// it through the queue: 0 bytes typed.
#[test]
fn a_killed_launcher_leaves_the_work_held_until_the_restart_delivers_it() {
    let codex = Careful::start("cx-launcher", "native");
    let status = codex.agent.pty().status().expect("pty status");
    let ding::pty::wire::ChildState::Running { pid } = status.child else {
        panic!("the launcher runs: {status:?}");
    };
    let launcher = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(launcher, nix::sys::signal::Signal::SIGKILL).expect("kill -9");
    codex.agent.wait_status("the harness exited", |status| {
        status["engine"]["pty"]["reachable"] == true
            && codex
                .agent
                .pty()
                .status()
                .is_ok_and(|host| matches!(host.child, ding::pty::wire::ChildState::Killed { .. }))
    });
    let name = codex.send("sent while the harness is down\n");
    codex.agent.wait_status(&format!("{name} held"), |status| {
        held_for_a_reason(status, &name)
    });
    codex.agent.ding_ok(&["restart", &codex.agent.name]);
    codex.reaches_the_model_as_a_prompt(&name);
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    codex.settled("a message across a killed launcher and a restart", 1, 0);
}

#[test]
fn an_idle_session_gets_the_message_with_one_model_call_and_no_terminal_input() {
    let codex = Careful::start("cx-idle", "native");
    // The adapter says what Codex's own hooks/list said, once the
    // launcher's first call has reached it.
    codex
        .agent
        .wait_status("the adapter says Codex trusts its hooks", |status| {
            adapter_says(status).starts_with("codex hooks trusted (Codex's hooks/list)")
        });
    let name = codex.send("please look at the parser\n");
    let request = wait_carrying(&codex.model, &name);
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    let log = summary(&codex.model.requests());
    assert_eq!(request["class"], "prompt", "{log}");
    assert_eq!(
        (request["turn"].as_u64(), request["callInTurn"].as_u64()),
        (Some(1), Some(1)),
        "{log}"
    );
    assert!(
        request["prompt"]
            .as_str()
            .is_some_and(|prompt| prompt.starts_with("[ding] 1 unread inbox message")),
        "the queued delivery is the prompt: {log}"
    );
    codex.settled("idle delivery", 1, 0);
}

/// Every DING process is one thread around one poll loop, the launcher
/// too: no thread waits for the TUI, reads the app-server or holds a
/// parked call. Its threads (`/proc/PID/task`) are counted with its call
/// parked, and again once a delivery went through the queue.
#[test]
fn the_launcher_is_one_thread_around_one_poll_loop() {
    let codex = Careful::start("cx-thread", "native");
    let status = codex.agent.pty().status().expect("pty status");
    let ding::pty::wire::ChildState::Running { pid } = status.child else {
        panic!("the launcher runs: {status:?}");
    };
    let threads = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .expect("the launcher's tasks")
            .count()
    };
    assert_eq!(threads(), 1, "with its call parked");
    let name = codex.send("one thread\n");
    codex.reaches_the_model_as_a_prompt(&name);
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    wait_until("the launcher's next call parked", PATIENCE, || {
        (codex.agent.parked_calls() >= 2).then_some(())
    });
    assert_eq!(threads(), 1, "after a delivery");
    codex.settled("a delivery through the one-thread launcher", 1, 0);
}

/// A person is typing when the message arrives. The queued turn is not
/// started under their half-typed line (a turn running when they press
/// Return changes what it does: a `/clear` typed then did not take effect),
/// so the message is held with the draft as the reason, DING types nothing,
/// and the work rides the person's own prompt: no model call of its own.
#[test]
fn a_human_draft_typed_key_by_key_survives_untouched_and_reaches_the_model_exactly_as_typed() {
    let codex = Careful::start("cx-draft", "native");
    a_draft_holds_the_delivery_and_the_work_rides_its_prompt(
        &codex.agent,
        &codex.model,
        "please refactor the parser",
        "\u{203a} ",
        |snapshot| read(snapshot).composer == Composer::Nonempty,
    );
    // The human's own prompt, and nothing for the message.
    codex.settled("draft", 1, 0);
}

#[test]
fn an_approval_dialog_is_never_answered_and_the_message_follows_the_humans_answer() {
    let codex = Careful::start("cx-dialog", "native");
    // Nothing takes it while the dialog is open: no answer, no marker.
    let (marker, name) = codex.held_by_an_approval();
    let snapshot = wait_screen(&codex.agent, "the dialog, still open", |snapshot| {
        read(snapshot).screen == Screen::Dialog
    });
    assert!(shows(&snapshot, "Yes, proceed"));
    assert!(!marker.exists(), "DING answered the dialog");
    assert!(
        !codex
            .model
            .requests()
            .iter()
            .any(|request| carries(request, &name)),
        "nothing reached the model while the dialog was open"
    );
    assert_eq!(pty_writes(&codex.agent).delivery_bytes, 0);
    // The human answers Yes (Return on `1. Yes, proceed`).
    press_enter(&codex.agent);
    let request = wait_carrying(&codex.model, &name);
    let log = summary(&codex.model.requests());
    assert!(marker.exists(), "the human's Yes ran the command\n{log}");
    assert_eq!(
        request["class"], "tool-result",
        "it rode the turn's next request\n{log}"
    );
    assert_eq!(request["turn"], 1, "{log}");
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "the turn over", ready_and_empty);
    // The human's prompt and its tool result: nothing extra for the message.
    codex.settled("approval dialog", 2, 0);
}

#[test]
fn work_arriving_during_a_command_rides_the_tool_result_at_no_extra_call() {
    let codex = Careful::start("cx-busy", "native");
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "mock:run 4"]);
    wait_screen(&codex.agent, "the command running", |snapshot| {
        read(snapshot).screen == Screen::Busy && shows(snapshot, "background terminal running")
    });
    let name = codex.send("while you work\n");
    codex.agent.wait_held(&name, "not-idle");
    let request = wait_carrying(&codex.model, &name);
    let log = summary(&codex.model.requests());
    assert_eq!(request["class"], "tool-result", "{log}");
    assert_eq!(
        (request["turn"].as_u64(), request["callInTurn"].as_u64()),
        (Some(1), Some(2)),
        "{log}"
    );
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "the turn over", ready_and_empty);
    codex.settled("arrival during a command", 2, 0);
}

/// A burst of five at idle becomes one delivery: what the first claim did
/// not take rides that delivery's own prompt (`UserPromptSubmit`), so one
/// model call carries all five. (The aggressive default on the same binary
/// made two notices of a burst of five; see docs/providers/codex.md.)
#[test]
fn a_burst_of_five_at_idle_is_one_model_call() {
    let codex = Careful::start("cx-burst", "native");
    let names = send_burst(&codex.agent, 5);
    let request = codex
        .model
        .wait_request("a call carrying the last of the five", |request| {
            carries(request, &names[4])
        });
    for name in &names {
        assert!(carries(&request, name), "{name} rides the same call");
        codex.wait_hook_owned(name);
    }
    wait_screen(&codex.agent, "idle again", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    codex.settled("burst of five", 1, 0);
}

/// Two messages 0.8 s apart at a settled idle are gathered into one queued
/// turn, one model call (issue 21's batching rule; with gathering off the
/// queue's claim took the first alone, as on Claude Code). A first message
/// and its reply come before, so the pair finds the session long settled.
#[test]
fn two_messages_apart_at_a_settled_idle_are_one_queued_turn() {
    let codex = Careful::start("cx-pair", "native");
    let opener = codex.send("a first message\n");
    wait_carrying(&codex.model, &opener);
    wait_screen(&codex.agent, "the first reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    // The timing is the stimulus, not a wait for a result.
    std::thread::sleep(std::time::Duration::from_secs(5));
    let first = codex.send("the first of two\n");
    std::thread::sleep(std::time::Duration::from_millis(800));
    let second = codex.send("the second of two\n");
    let request = codex
        .model
        .wait_request("a call carrying the second", |request| {
            carries(request, &second)
        });
    assert!(
        carries(&request, &first),
        "{}",
        summary(&codex.model.requests())
    );
    for name in [&first, &second] {
        codex.wait_hook_owned(name);
    }
    wait_screen(&codex.agent, "idle again", |snapshot| {
        shows(snapshot, "mock reply to turn 2.") && ready_and_empty(snapshot)
    });
    codex.settled("two messages 0.8 s apart", 2, 0);
}

/// `/clear` starts a new thread: the file DING had delivered goes back to
/// pending and is queued into the new thread (one model call). `/compact`
/// keeps ownership; the next prompt's `SessionStart` (`compact`) puts the
/// whole unread backlog into the compacted context at no extra call.
#[test]
fn clear_and_compact_bring_the_unread_backlog_into_the_new_context() {
    let codex = Careful::start("cx-life", "native");
    let name = codex.send("please look at the parser\n");
    wait_carrying(&codex.model, &name);
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "the reply, then idle", |snapshot| {
        shows(snapshot, "mock reply to turn 1.") && ready_and_empty(snapshot)
    });
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "/clear"]);
    let again = codex
        .model
        .wait_request("the delivery into the cleared thread", |request| {
            request["turn"] == 2 && carries(request, &name)
        });
    assert_eq!(
        again["callInTurn"],
        1,
        "{}",
        summary(&codex.model.requests())
    );
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "idle after the clear", |snapshot| {
        shows(snapshot, "mock reply to turn 2.") && ready_and_empty(snapshot)
    });
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "/compact"]);
    codex
        .model
        .wait_request("the compaction", |request| request["class"] == "compaction");
    wait_screen(&codex.agent, "idle after the compaction", |snapshot| {
        shows(snapshot, "Context compacted") && ready_and_empty(snapshot)
    });
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "hello again"]);
    let next = codex.model.wait_request("the next prompt", |request| {
        request["prompt"].as_str() == Some("hello again")
    });
    assert!(
        carries(&next, &name),
        "the backlog rides it: {}",
        next["texts"]
    );
    codex.settled("clear and compact", 3, 0);
}

/// The terminal idle path (no app-server of DING's): an idle session gets
/// DING's notice through the compare-and-send, and the notice, submitted
/// as the prompt, is the positive receipt (`UserPromptSubmit` names its
/// files, so they are hook-owned, not merely rung).
#[test]
fn on_the_terminal_path_the_submitted_notice_is_its_own_receipt() {
    let codex = Careful::start("cx-term", "terminal");
    let name = codex.send("please look at the parser\n");
    let request = wait_carrying(&codex.model, &name);
    assert!(
        prompt_is_one_notice(&request),
        "the notice is the prompt: {}",
        request["prompt"]
    );
    codex.wait_hook_owned(&name);
    let writes = pty_writes(&codex.agent);
    assert_eq!(
        writes.deliveries, 2,
        "two compare-and-sends: the paste, then its Return on fresh evidence"
    );
    codex.settled("terminal path, idle", 1, writes.delivery_bytes);
}

/// The streaming hole, on the terminal path: while the model streams its
/// reply the screen looks idle, but the hooks say the turn runs, so
/// nothing is typed; `Stop` continues the turn once with the work (one
/// extra call, no terminal input), and the continuation's own `Stop` does
/// not block again.
#[test]
fn on_the_terminal_path_a_streaming_reply_is_never_typed_into_and_stop_continues_it_once() {
    let codex = Careful::start("cx-stream", "terminal");
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "mock:slow 4"]);
    wait_screen(
        &codex.agent,
        "the reply streaming with the Working line gone",
        |snapshot| shows(snapshot, "mock slow reply") && read(snapshot).screen == Screen::Ready,
    );
    let name = codex.send("late work\n");
    codex.agent.wait_held(&name, "not-idle");
    let request = wait_carrying(&codex.model, &name);
    let log = summary(&codex.model.requests());
    assert_eq!(
        (request["turn"].as_u64(), request["callInTurn"].as_u64()),
        (Some(1), Some(2)),
        "the Stop continuation\n{log}"
    );
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "the turn over", |snapshot| {
        shows(snapshot, "mock reply to turn 1") && ready_and_empty(snapshot)
    });
    codex.settled("terminal path, streaming reply", 2, 0);
}

/// The terminal idle path with a draft: the message is held (the composer
/// is not empty) and rides the human's own next prompt as
/// `additionalContext`, in the very request that carries the draft, at no
/// extra model call and with no terminal input from DING.
#[test]
fn on_the_terminal_path_held_work_rides_the_next_prompt_with_no_terminal_input() {
    let codex = Careful::start("cx-held", "terminal");
    let draft = "please refactor the parser";
    type_keystrokes(&codex.agent, draft);
    let name = codex.send("a review request\n");
    codex.agent.wait_held(&name, "composer-nonempty");
    press_enter(&codex.agent);
    let request = codex.model.wait_request("the draft submitted", |request| {
        request["prompt"].as_str() == Some(draft)
    });
    assert!(
        carries(&request, &name),
        "the held file rides the same request: {}",
        request["texts"]
    );
    codex.wait_hook_owned(&name);
    codex.settled("terminal path, held by a draft", 1, 0);
}

/// The human denies the approval (Esc): Codex fires `Interrupt` and no
/// `Stop`, the thread turns idle, and the message held while the dialog was
/// open is queued then, with its own model call and no terminal input; the
/// command never ran.
#[test]
fn after_a_denied_approval_the_held_message_is_delivered_with_no_terminal_input() {
    let codex = Careful::start("cx-deny", "native");
    let (marker, name) = codex.held_by_an_approval();
    codex
        .agent
        .ding_ok(&["intervene", &codex.agent.name, "\u{1b}", "--no-enter"]);
    let request = wait_carrying(&codex.model, &name);
    let log = summary(&codex.model.requests());
    assert_eq!(
        (request["class"].as_str(), request["turn"].as_u64()),
        (Some("prompt"), Some(2)),
        "its own turn after the denial\n{log}"
    );
    codex.wait_hook_owned(&name);
    wait_screen(&codex.agent, "idle again", |snapshot| {
        shows(snapshot, "mock reply to turn 2.") && ready_and_empty(snapshot)
    });
    assert!(!marker.exists(), "the denied command never ran");
    // The human's prompt (denied) and the delivery.
    codex.settled("denied approval", 2, 0);
}

/// Issue 39, item 3, measured: a person closes `/permissions` with Esc, a
/// message waits for it, and the person presses Esc again 0.3 to 1.0 s
/// after the closing. Counts the queued turns of DING's that Esc
/// interrupted, and those that began within 1 s of a key of the person's
/// (`DING_SECOND_ESC_TRIALS` trials, 10 unless said; each printed), each
/// trial in a Codex of its own (Esc Esc edits the last prompt, so a trial
/// can leave the next one a composer that is not the person's):
/// `cargo test --test providers_codex_careful_real_pane
/// a_second_esc_after_a_dialog_closed -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement for the record (docs/evaluation.md)"]
fn a_second_esc_after_a_dialog_closed_interrupts_nothing_ding_started() {
    let trials: u64 = std::env::var("DING_SECOND_ESC_TRIALS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10);
    let (mut interrupted, mut at_risk) = (0, 0);
    for trial in 0..trials {
        let careful = Careful::start(&format!("cx-second-esc-{trial}"), "native");
        // A first message at idle: the new screen has settled (a new
        // terminal's settle is not what is measured).
        deliver_one_message(&careful.agent, &careful.model);
        let offset = Duration::from_millis(300 + 100 * (trial % 8));
        let result = second_esc_after_a_dialog(
            &careful.agent,
            &careful.model,
            "/permissions",
            offset,
            false,
            &EscScreens {
                dialog: &|snapshot| read(snapshot).screen == Screen::Dialog,
                idle_and_empty: &ready_and_empty,
                filled: Some((
                    &|snapshot: &Snapshot| {
                        let view = read(snapshot);
                        view.screen == Screen::Ready && view.composer == Composer::Nonempty
                    },
                    "\u{3}",
                )),
            },
        );
        eprintln!("second Esc, trial {trial}: {result:?}");
        interrupted += u64::from(result.interrupted);
        at_risk += u64::from(result.within_a_second_of_a_key);
        keep_for_the_record(&careful.agent);
    }
    eprintln!(
        "second Esc: {interrupted} of {trials} queued turns of DING's interrupted; {at_risk} of {trials} began within 1 s of a key of the person's"
    );
    assert_eq!(
        interrupted + at_risk,
        0,
        "turns of DING's interrupted or begun within 1 s of a key"
    );
}
