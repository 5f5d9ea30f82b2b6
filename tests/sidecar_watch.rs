//! The running sidecar's view of the inbox stays the directory's: entries
//! that are not regular files are listed, never rung, whether they arrive
//! while it runs or are found by a scan; and an inbox root replaced under
//! it is followed to the new directory.

mod support;

use std::fs;
use std::os::unix::net::UnixListener;

use serde_json::Value;
use support::sidecar_agent::*;

fn unreadable(status: &Value) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = status["unreadable"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        e["name"].as_str().unwrap_or("?").to_string(),
                        e["reason"].as_str().unwrap_or("?").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    entries
}

#[test]
fn a_fifo_socket_or_directory_arriving_in_new_is_listed_and_never_rung() {
    let agent = Agent::new("kinds", &aggressive_decl("kinds", RECORDING_HARNESS));
    agent.up_recording();
    let new = agent.new_dir();
    nix::unistd::mkfifo(
        &new.join("1-fifo.md"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .expect("mkfifo");
    let _socket = UnixListener::bind(new.join("2-socket.md")).expect("bind");
    fs::create_dir(new.join("3-dir.md")).expect("mkdir");
    // A real message after them: once it has rung, the sidecar has seen
    // every event before it.
    agent.drop_message("4-real.md", "x");
    let chunks = agent.wait_out("the real message rung", |chunks| {
        notices(chunks).iter().any(|n| n.contains("4-real.md"))
    });
    for notice in notices(&chunks) {
        assert!(
            !notice.contains("fifo") && !notice.contains("socket") && !notice.contains("dir.md"),
            "rang an entry that is not a file: {notice}"
        );
    }
    let expected: Vec<(String, String)> = ["1-fifo.md", "2-socket.md", "3-dir.md"]
        .iter()
        .map(|name| (name.to_string(), "not a regular file".to_string()))
        .collect();
    let status = agent.status();
    assert_eq!(unreadable(&status), expected, "live, from events");
    assert_eq!(message_names(&status), ["4-real.md"]);
    let human = agent.ding_ok(&["status", "kinds"]);
    assert!(
        human.contains("    3-dir.md  not a regular file"),
        "{human}"
    );

    // Leaving is seen too.
    fs::remove_dir(new.join("3-dir.md")).expect("rmdir");
    agent.wait_status("the directory gone from status", |s| {
        unreadable(s).len() == 2
    });
}

#[test]
fn a_replaced_inbox_root_is_followed_and_rescanned() {
    let agent = Agent::new("moved", &aggressive_decl("moved", RECORDING_HARNESS));
    agent.up_recording();
    agent.drop_message("0001-before.md", "x");
    agent.wait_out("the first ring", |chunks| notices(chunks).len() == 1);

    let root = agent.path("inbox/moved");
    fs::rename(&root, agent.path("inbox/moved.old")).expect("move the inbox away");
    fs::create_dir(&root).expect("a fresh inbox root");
    fs::write(agent.path("body.txt"), "after the move").expect("body");
    let sent = agent.ding_ok(&["send", "moved", "body.txt"]);
    let name = sent.trim().to_string();
    assert!(
        root.join("new").join(&name).is_file(),
        "ding send used the new root"
    );

    let chunks = agent.wait_out("the message in the new root rung", |chunks| {
        notices(chunks).iter().any(|n| n.contains(&name))
    });
    assert_eq!(notices(&chunks).len(), 2, "{chunks:?}");
    let status = agent.wait_status("status from the new root", |s| {
        message_names(s) == [name.clone()]
    });
    assert_eq!(status["engine"]["unread"], 1);

    // And the new root's `new/` replaced in turn.
    fs::rename(root.join("new"), agent.path("new.old")).expect("move new/ away");
    // The sidecar recreates a missing `new/` itself, and may be first.
    match fs::create_dir(root.join("new")) {
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        other => other.expect("a fresh new/"),
    }
    agent.drop_message("0003-later.md", "x");
    agent.wait_out("the message in the fresh new/ rung", |chunks| {
        notices(chunks).iter().any(|n| n.contains("0003-later.md"))
    });
}
