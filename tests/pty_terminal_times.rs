//! The terminal's times, as PTY facts: when input other than DING's own
//! deliveries last reached the terminal, and when output last came from
//! it, on the host's own clock, in `status`, `snapshot` and watch pushes
//! (the facts a time-aware fence stands on).

mod support;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::Instant;

use ding::pty::wire::{FrameKind, Push, SendIfReply, push_frame};
use support::{Host, PATIENCE, write};

/// A person at the terminal, through `attach`.
fn type_bytes(attached: &mut UnixStream, bytes: &[u8]) {
    let mut frame = Vec::new();
    push_frame(&mut frame, FrameKind::Data, bytes);
    attached.write_all(&frame).expect("type");
}

#[test]
fn a_persons_keys_and_an_intervention_are_input_and_a_delivery_is_not() {
    // The child records what it reads and, echo off, draws nothing for it.
    let host = Host::recording();
    let status = host.client().status().expect("status");
    assert_eq!(status.terminal.input_at_ms, None, "nobody typed yet");
    let output = status.terminal.output_at_ms.expect("READY came out");
    assert!(output <= status.clock_ms, "{status:?}");

    let (identity, revision) = host.identity();
    let reply = host
        .client()
        .send_if(&identity, revision, &[write(b"d")])
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    host.wait_file("out", 1);
    let status = host.client().status().expect("status");
    assert_eq!(
        status.terminal.input_at_ms, None,
        "a delivery is DING's own input"
    );

    let before = status.clock_ms;
    let (mut attached, _) = host.client().attach().expect("attach");
    type_bytes(&mut attached, b"k");
    host.wait_file("out", 2);
    let status = host.client().status().expect("status");
    let typed = status.terminal.input_at_ms.expect("a key is input");
    assert!(before <= typed && typed <= status.clock_ms, "{status:?}");
    let snapshot = host.client().snapshot().expect("snapshot");
    assert_eq!(snapshot.revision, status.revision);
    assert_eq!(snapshot.terminal, status.terminal, "one revision, one pair");

    host.client().send(&[write(b"i")]).expect("intervene");
    host.wait_file("out", 3);
    let status = host.client().status().expect("status");
    let intervened = status.terminal.input_at_ms.expect("still input");
    assert!(intervened >= typed, "{status:?}");
    assert_eq!(host.wait_file("out", 3), b"dki");
}

#[test]
fn a_watcher_is_pushed_the_times_with_the_revision_that_moved() {
    // Echo on: every key comes back out, after it went in.
    let host = Host::start(&[], &["sh", "-c", "stty raw; printf READY; exec cat"]);
    host.wait_screen(|snapshot| snapshot.rows[0].contains("READY"));
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let (mut attached, _) = host.client().attach().expect("attach");
    type_bytes(&mut attached, b"x");
    let deadline = Instant::now() + PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no push carried the key and its echo");
        let Some(Push::Revision { terminal, .. }) = watcher.next_push(left).expect("push") else {
            continue;
        };
        if let (Some(input), Some(output)) = (terminal.input_at_ms, terminal.output_at_ms)
            && output >= input
        {
            break;
        }
    }
}
