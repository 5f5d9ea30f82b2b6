//! The demo agent in a real PTY (`ding pty` running `ding demo-agent`):
//! what its screen shows and what its transcript records, driven only
//! through the PTY host's client like the sidecar would.

mod support;

use std::fs;

use ding::pty::transport::WireStep;
use ding::pty::wire::{ChildState, Push, Snapshot};
use serde_json::Value;
use support::{BIN, Host, write};

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";
const TRANSCRIPT: &str = "transcript.jsonl";

/// A host running the demo agent with `flags`, waited until it is ready.
fn demo(flags: &[&str]) -> Host {
    let mut command = vec![BIN, "demo-agent", "--transcript", TRANSCRIPT];
    command.extend_from_slice(flags);
    let host = Host::start(&["--size", "60x16"], &command);
    // The whole first frame: header and footer.
    host.wait_screen(|s| {
        s.rows[0] == "demo-agent  ready"
            && s.bracketed_paste
            && s.rows.last().is_some_and(|row| !row.is_empty())
    });
    host
}

fn composer(screen: &Snapshot) -> &str {
    &screen.rows[usize::from(screen.size.rows) - 2]
}

fn header(screen: &Snapshot) -> &str {
    &screen.rows[0]
}

/// The transcript's events, once it contains `needle`.
fn transcript_when(host: &Host, needle: &str) -> Vec<Value> {
    host.wait_until_contains(TRANSCRIPT, needle);
    transcript(host)
}

fn transcript(host: &Host) -> Vec<Value> {
    fs::read_to_string(host.path(TRANSCRIPT))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("transcript line is JSON"))
        .collect()
}

fn events<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|e| e["event"] == name).collect()
}

fn type_text(host: &Host, bytes: &[u8]) {
    host.client().send(&[write(bytes)]).expect("send");
}

fn paste(text: &[u8]) -> Vec<u8> {
    [PASTE_START, text, PASTE_END].concat()
}

#[test]
fn idle_screen_shows_ready_and_a_dim_placeholder() {
    let host = demo(&[]);
    let screen = host.client().snapshot().expect("snapshot");
    assert_eq!(composer(&screen), "> Type a message");
    let row = screen.size.rows - 2;
    assert!(
        screen
            .runs
            .iter()
            .any(|run| run.row == row && run.col == 2 && run.dim && run.text == "Type a message"),
        "placeholder is not dim: {:?}",
        screen.runs
    );
    assert_eq!(screen.rows[15], "enter to send  ctrl-d to quit");
    // An idle agent draws nothing, so the revision stays put.
    let again = host.client().snapshot().expect("snapshot");
    assert_eq!(again.revision, screen.revision);
}

#[test]
fn typed_text_shows_and_return_runs_one_busy_turn() {
    let host = demo(&["--turn-ms", "300"]);
    type_text(&host, b"hello");
    let screen = host.wait_screen(|s| composer(s) == "> hello");
    assert!(
        !screen.runs.iter().any(|run| run.dim && run.text == "hello"),
        "typed text must not be dim"
    );
    type_text(&host, b"\r");
    let busy = host.wait_screen(|s| header(s).starts_with("demo-agent  working ("));
    assert!(busy.rows.iter().any(|row| row == "you: hello"));
    let lines = transcript_when(&host, "\"turn-end\"");
    let names: Vec<&str> = lines.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(names, ["submitted", "turn-start", "turn-end"]);
    assert_eq!(lines[0]["text"], "hello");
    assert_eq!(lines[0]["pasted"], false);
    let start = lines[1]["t"].as_u64().expect("t");
    let end = lines[2]["t"].as_u64().expect("t");
    assert!(end >= start + 300, "turn lasted {} ms", end - start);
    host.wait_screen(|s| header(s) == "demo-agent  ready" && composer(s) == "> Type a message");
}

#[test]
fn pasted_notice_and_return_submit_one_message() {
    let host = demo(&["--turn-ms", "100"]);
    // The aggressive transport: a paste with newlines, a pause, Return.
    let notice = paste(b"You have mail:\r\nread 0001.md\nthen archive it");
    host.client()
        .send(&[write(&notice), WireStep::WaitMs(30), write(b"\r")])
        .expect("send");
    let lines = transcript_when(&host, "\"turn-end\"");
    let submitted = events(&lines, "submitted");
    assert_eq!(submitted.len(), 1, "{lines:?}");
    assert_eq!(
        submitted[0]["text"],
        "You have mail: read 0001.md then archive it"
    );
    assert_eq!(submitted[0]["pasted"], true);
}

#[test]
fn text_typed_during_a_turn_stays_in_the_composer_and_return_queues_it() {
    let host = demo(&["--turn-ms", "1500"]);
    type_text(&host, b"first\r");
    host.wait_screen(|s| header(s).starts_with("demo-agent  working"));
    type_text(&host, b"second");
    let screen = host.wait_screen(|s| composer(s) == "> second");
    assert!(header(&screen).starts_with("demo-agent  working"));
    assert_eq!(events(&transcript(&host), "submitted").len(), 1);
    type_text(&host, b"\r");
    let queued = host.wait_screen(|s| s.rows.iter().any(|row| row == "queued: second"));
    assert_eq!(composer(&queued), "> Type a message");
    let lines = transcript_when(&host, "\"turn\":2");
    let names: Vec<&str> = lines.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        names[..6],
        [
            "submitted",
            "turn-start",
            "queued",
            "turn-end",
            "submitted",
            "turn-start"
        ]
    );
    assert_eq!(lines[4]["text"], "second");
    assert_eq!(lines[4]["queued"], true);
}

#[test]
fn menu_takes_return_after_a_paste_as_yes() {
    let host = demo(&["--turn-ms", "100", "--menu-every", "1"]);
    type_text(&host, b"change it\r");
    let menu = host.wait_screen(|s| s.rows.iter().any(|row| row == "Apply the change?"));
    assert_eq!(header(&menu), "demo-agent  waiting for confirmation");
    assert!(menu.rows.iter().any(|row| row == "> 1. Yes"));
    // What an aggressive ring does to a dialog: paste, pause, Return.
    host.client()
        .send(&[
            write(&paste(b"You have mail")),
            WireStep::WaitMs(30),
            write(b"\r"),
        ])
        .expect("send");
    let lines = transcript_when(&host, "\"menu-answered\"");
    let answered = events(&lines, "menu-answered");
    assert_eq!(answered.len(), 1);
    assert_eq!(answered[0]["option"], 1);
    assert_eq!(answered[0]["answer"], "yes");
    assert_eq!(answered[0]["key"], "return");
    assert_eq!(answered[0]["afterPaste"], true);
    assert_eq!(
        events(&lines, "submitted").len(),
        1,
        "the paste was no message"
    );
    host.wait_screen(|s| header(s) == "demo-agent  ready");
}

#[test]
fn ctrl_d_on_an_empty_composer_quits_and_leaves_the_screen_modes() {
    let host = demo(&[]);
    let before = host.client().snapshot().expect("snapshot");
    assert!(before.alternate_screen && before.bracketed_paste);
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    type_text(&host, b"\x04");
    let exit = loop {
        match watcher.next_push(support::PATIENCE).expect("push") {
            Some(Push::Exit { child, .. }) => break child,
            Some(_) => {}
            None => panic!("the demo agent did not quit"),
        }
    };
    assert_eq!(exit, ChildState::Exited { code: 0 });
    let after = host.client().snapshot().expect("snapshot");
    assert!(!after.alternate_screen && !after.bracketed_paste);
}
