//! Whatever is planted where DING keeps its files (a FIFO, a symbolic
//! link, a directory, an oversized file as the journal, the agent record,
//! a pid file or a log) neither hangs nor misleads `ding up`, the sidecar,
//! `ding status` or `ding down`: each answers promptly, starting or
//! failing at once with the reason. Every command runs under a deadline,
//! so a hang fails the test instead of stalling the run.

mod support;

use std::fs;
use std::os::unix::fs::{DirBuilderExt, symlink};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::sidecar_agent::*;

/// Longer than anything here needs, shorter than `ding up`'s own 15 s wait,
/// so a command that waits for that instead of failing fast is caught.
const PROMPT: Duration = Duration::from_secs(10);

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
}

fn mkdir_private(path: &Path) {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .expect("mkdir");
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what} failed: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The output of `ding status` of an agent that is not running: printed
/// all the same, with exit status 3.
fn not_running(out: Output, what: &str) -> String {
    assert_eq!(out.status.code(), Some(3), "{what}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What is planted (as the reason for refusing it says) and how.
type Plant = (&'static str, Box<dyn Fn(&Path)>);

/// The four things planted, each by a function of the path.
fn plants(agent: &Agent) -> Vec<Plant> {
    let elsewhere = agent.path("elsewhere.fifo");
    mkfifo(&elsewhere);
    vec![
        ("a FIFO", Box::new(mkfifo)),
        (
            "a symbolic link",
            Box::new(move |path: &Path| symlink(&elsewhere, path).expect("symlink")),
        ),
        (
            "a directory",
            Box::new(|path: &Path| fs::create_dir(path).expect("mkdir")),
        ),
        (
            "bytes, more than the limit",
            Box::new(|path: &Path| {
                fs::File::create(path)
                    .and_then(|file| file.set_len(65 * 1024 * 1024))
                    .expect("sparse file")
            }),
        ),
    ]
}

#[test]
fn a_planted_journal_of_any_kind_neither_hangs_nor_stops_the_agent() {
    let names = ["fifo", "link", "dir", "big"];
    for (index, name) in names.iter().enumerate() {
        let agent = Agent::new(name, &aggressive_decl(name, RECORDING_HARNESS));
        let (what, plant) = plants(&agent).swap_remove(index);
        let state = agent.paths().state_dir().to_path_buf();
        mkdir_private(&state);
        plant(&agent.paths().journal());

        let started = Instant::now();
        ok(agent.ding_within(PROMPT, &["up", "agent.kdl"]), "ding up");
        assert!(
            started.elapsed() < PROMPT,
            "{what}: ding up took {:?}",
            started.elapsed()
        );
        let human = ok(agent.ding_within(PROMPT, &["status", name]), "ding status");
        assert!(
            human.contains("journal      unreadable journal moved to") && human.contains(what),
            "{what}: status does not say the journal was quarantined:\n{human}"
        );
        // Delivery works: a ring is journaled into a fresh journal.
        agent.wait_screen("READY");
        agent.drop_message("0001.md", "x");
        agent.wait_status("the ring staged", |s| {
            message(s, "0001.md").is_some_and(|m| m["state"] == "staged")
        });
        ok(agent.ding_within(PROMPT, &["down", name]), "ding down");
        let stopped = not_running(agent.ding_within(PROMPT, &["status", name]), "ding status");
        assert!(
            stopped.contains("0001.md  staged (journal)"),
            "{what}:\n{stopped}"
        );
    }
}

#[test]
fn status_from_disk_answers_at_once_whatever_is_planted_as_the_journal() {
    let agent = Agent::new("offline", &aggressive_decl("offline", RECORDING_HARNESS));
    agent.up(&[]);
    agent.drop_message("0001.md", "x");
    ok(agent.ding_within(PROMPT, &["down", "offline"]), "ding down");
    let journal = agent.paths().journal();
    for (what, plant) in plants(&agent) {
        let _ = fs::remove_file(&journal);
        let _ = fs::remove_dir(&journal);
        plant(&journal);
        let human = not_running(
            agent.ding_within(PROMPT, &["status", "offline"]),
            "ding status",
        );
        assert!(
            human.contains("the journal is unreadable") && human.contains(what),
            "{what}:\n{human}"
        );
        assert!(
            human.contains("0001.md  held: sidecar not running"),
            "{what}:\n{human}"
        );
        assert!(
            journal.symlink_metadata().is_ok(),
            "{what}: status moved the journal"
        );
    }
}

#[test]
fn planted_pid_files_and_logs_neither_hang_nor_redirect_status_up_and_down() {
    let agent = Agent::new("pids", &aggressive_decl("pids", RECORDING_HARNESS));
    let paths = agent.paths();
    mkdir_private(paths.runtime_dir());
    mkfifo(&paths.sidecar_pid());
    mkfifo(&paths.pty_pid());
    let status = agent.ding_within(PROMPT, &["status", "pids"]);
    assert!(
        text(&status).contains("no agent `pids` has run here"),
        "{}",
        text(&status)
    );
    assert_eq!(status.status.code(), Some(4), "unknown agent");
    // Pid files that are not regular files name no process: it never ran.
    let down = agent.ding_within(PROMPT, &["down", "pids"]);
    assert_eq!(down.status.code(), Some(4), "{}", text(&down));

    // A log that is a FIFO: `ding up` refuses it at once, naming it.
    mkfifo(&paths.pty_log());
    let up = agent.ding_within(PROMPT, &["up", "agent.kdl"]);
    assert!(!up.status.success());
    assert!(
        text(&up).contains("pty.log") && text(&up).contains("a FIFO"),
        "{}",
        text(&up)
    );
    fs::remove_file(paths.pty_log()).expect("remove the FIFO");

    // Pid files that are FIFOs are replaced, not opened.
    ok(agent.ding_within(PROMPT, &["up", "agent.kdl"]), "ding up");
    agent.wait_screen("READY");
    let pid = agent.sidecar_pid().expect("the sidecar's pid file");
    assert_eq!(agent.status()["pid"], pid);
    ok(agent.ding_within(PROMPT, &["down", "pids"]), "ding down");

    // A pid file that is a link to another process's pid names nothing:
    // `ding down` must not signal whatever the link points at.
    let mut bystander = Command::new("sleep").arg("60").spawn().expect("sleep");
    fs::write(agent.path("bystander.pid"), format!("{}\n", bystander.id())).expect("pid");
    let _ = fs::remove_file(paths.sidecar_pid());
    symlink(agent.path("bystander.pid"), paths.sidecar_pid()).expect("symlink");
    let down = ok(agent.ding_within(PROMPT, &["down", "pids"]), "ding down");
    assert!(down.contains("pids: sidecar not running"), "{down}");
    assert!(
        bystander.try_wait().expect("try_wait").is_none(),
        "ding down signalled the process a planted link named"
    );
    let _ = bystander.kill();
    let _ = bystander.wait();
}

#[test]
fn an_agent_record_that_cannot_be_replaced_makes_up_fail_at_once_with_the_reason() {
    let agent = Agent::new("record", &aggressive_decl("record", RECORDING_HARNESS));
    let state = agent.paths().state_dir().to_path_buf();
    mkdir_private(&state);
    mkfifo(&state.join("agent.json"));
    // Read from disk by `ding status`: refused at once.
    let status = agent.ding_within(PROMPT, &["status", "record"]);
    assert!(!status.status.success());
    assert!(text(&status).contains("a FIFO"), "{}", text(&status));
    fs::remove_file(state.join("agent.json")).expect("remove");

    fs::create_dir(state.join("agent.json")).expect("mkdir");
    let started = Instant::now();
    let up = agent.ding_within(Duration::from_secs(30), &["up", "agent.kdl"]);
    let took = started.elapsed();
    assert!(!up.status.success(), "{}", text(&up));
    let said = text(&up);
    assert!(
        said.contains("the sidecar") && said.contains("exited before it came up"),
        "{said}"
    );
    assert!(said.contains("agent.json"), "the reason is named: {said}");
    assert!(took < PROMPT, "ding up took {took:?} to fail");
}

#[test]
fn a_journal_that_cannot_be_written_is_shown_in_status_until_it_can() {
    let agent = Agent::new("rofs", &aggressive_decl("rofs", RECORDING_HARNESS));
    agent.up_recording();
    // A directory where the journal goes: every save fails, whoever runs
    // the test (root ignores a read-only mode; this it cannot ignore).
    let journal = agent.paths().journal();
    let _ = fs::remove_file(&journal);
    fs::create_dir(&journal).expect("mkdir");
    agent.drop_message("0001.md", "x");
    let status = agent.wait_status("the journal write failure", |s| {
        s["journalWriteError"].is_string()
    });
    assert!(message(&status, "0001.md").is_some_and(|m| m["state"] == "staged"));
    let human = ok(
        agent.ding_within(PROMPT, &["status", "rofs"]),
        "ding status",
    );
    assert!(
        human.contains("journal      NOT SAVED, retrying: "),
        "{human}"
    );
    fs::remove_dir(&journal).expect("rmdir");
    // Any loop turn retries; a status request is one.
    agent.wait_status("the journal saved", |s: &Value| {
        s["journalWriteError"].is_null()
    });
    assert!(journal.is_file());
}

/// A link in `new/` that names itself (any sender can make one) is listed
/// as unreadable with its reason, and the messages beside it are rung at
/// the sidecar's start and counted by `ding status`, live and from disk.
/// Before, the loop's ELOOP failed every full scan: the backlog was never
/// rung and status said `unread 0`.
#[test]
fn a_link_that_names_itself_hides_nothing_of_the_backlog() {
    let agent = Agent::new("loop", &aggressive_decl("loop", RECORDING_HARNESS));
    let inbox = agent.path("inbox/loop");
    for sub in ["tmp", "new", "archive"] {
        mkdir_private(&inbox.join(sub));
    }
    fs::write(agent.new_dir().join("01-waiting.md"), "x").expect("message");
    symlink("00-loop.md", agent.new_dir().join("00-loop.md")).expect("loop");
    agent.up_recording();
    let chunks = agent.wait_out("the waiting message rung", |chunks| {
        notices(chunks)
            .iter()
            .any(|notice| notice.contains("01-waiting.md"))
    });
    assert!(
        !notices(&chunks).iter().any(|n| n.contains("00-loop.md")),
        "{chunks:?}"
    );
    let status = agent.status();
    assert_eq!(message_names(&status), ["01-waiting.md"], "{status:#}");
    let unreadable = status["unreadable"].to_string();
    assert!(
        unreadable.contains("00-loop.md")
            && unreadable.contains("Too many levels of symbolic links"),
        "{status:#}"
    );
    let human = ok(agent.ding_within(PROMPT, &["status", "loop"]), "status");
    assert!(
        human.contains("00-loop.md  cannot inspect it: Too many levels"),
        "{human}"
    );
    ok(agent.ding_within(PROMPT, &["down", "loop"]), "ding down");
    let from_disk = not_running(agent.ding_within(PROMPT, &["status", "loop"]), "status");
    assert!(from_disk.contains("01-waiting.md"), "{from_disk}");
    assert!(
        from_disk.contains("00-loop.md  cannot inspect it"),
        "{from_disk}"
    );
}
