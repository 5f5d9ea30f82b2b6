//! The compare-and-send promise, proven by what the child actually read: the
//! child runs `cat > out` in raw mode with echo off, so `out` holds exactly
//! the bytes that reached the terminal, in order.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use ding::pty::wire::{ChildState, IdentityPart, Origin, Push, Request, SendIfReply, Size};
use support::{Host, PATIENCE, Typist, identity_of, write};

#[test]
fn stale_send_if_writes_zero_bytes() {
    let host = Host::recording();
    let (identity, stale) = host.identity();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"h");
    // The keystroke has been committed once the revision moves past `stale`.
    watcher
        .wait_revision_above(stale, PATIENCE)
        .expect("watch")
        .expect("typing moved the revision");
    let reply = host
        .client()
        .send_if(&identity, stale, &[write(b"NOTICE"), write(b"\r")])
        .expect("send-if");
    let SendIfReply::Conflict { revision } = reply else {
        panic!("expected conflict, got {reply:?}");
    };
    assert!(revision > stale);
    // Mark the end of input, then prove the transaction never arrived.
    typist.type_bytes(b"!");
    let out = host.wait_file("out", 2);
    assert_eq!(out, b"h!");
}

#[test]
fn send_if_under_contention_is_all_or_nothing() {
    let host = Host::recording();
    let typing = Arc::new(AtomicBool::new(true));
    let typist = {
        let mut typist = Typist::new(&host);
        let typing = Arc::clone(&typing);
        thread::spawn(move || {
            while typing.load(Ordering::Relaxed) {
                typist.type_bytes(b"x");
                thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let mut sender = host.client();
    let mut sent = Vec::new();
    let mut conflicts = Vec::new();
    // A key between the two writes stops the transaction (PTY-20).
    let mut stopped = Vec::new();
    for n in 0..60 {
        let status = sender.status().expect("status");
        let steps = [
            write(format!("<T{n}:").as_bytes()),
            ding::pty::transport::WireStep::WaitMs(2),
            write(b"abc>"),
        ];
        match sender
            .send_if(&identity_of(&status), status.revision, &steps)
            .expect("send-if")
        {
            SendIfReply::Sent { written, .. } => {
                assert_eq!(written, format!("<T{n}:abc>").len());
                sent.push(n);
            }
            SendIfReply::Conflict { .. } => conflicts.push(n),
            SendIfReply::Interrupted { written, .. } => {
                assert_eq!(written, format!("<T{n}:").len());
                stopped.push(n);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    typing.store(false, Ordering::Relaxed);
    typist.join().expect("typist");
    let mut marker = host.client();
    marker.send(&[write(b"#END#")]).expect("send");
    let out = String::from_utf8(host.wait_until_contains("out", "#END#")).expect("utf-8");
    for n in &sent {
        let whole = format!("<T{n}:abc>");
        assert_eq!(
            out.matches(&whole).count(),
            1,
            "{whole} must land once, whole: {out}"
        );
    }
    for n in &conflicts {
        assert!(
            !out.contains(&format!("<T{n}:")),
            "conflicted T{n} leaked: {out}"
        );
    }
    for n in &stopped {
        let begun = format!("<T{n}:");
        assert_eq!(out.matches(&begun).count(), 1, "{begun} once: {out}");
        assert!(!out.contains(&format!("<T{n}:abc>")), "T{n} went on: {out}");
    }
    // Nothing but whole transactions, stopped ones, keystrokes and the
    // marker.
    let mut rest = out.clone();
    for n in &sent {
        rest = rest.replace(&format!("<T{n}:abc>"), "");
    }
    for n in &stopped {
        rest = rest.replace(&format!("<T{n}:"), "");
    }
    assert!(
        rest.trim_end_matches("#END#").bytes().all(|b| b == b'x'),
        "interleaved bytes: {rest}"
    );
    // Keys every millisecond stop most transactions in their 2 ms wait;
    // what matters is that compares passed and each outcome was whole.
    assert!(
        !sent.is_empty() || !stopped.is_empty(),
        "no send-if ever passed its compare"
    );
    eprintln!(
        "sent {} conflicts {} stopped {}",
        sent.len(),
        conflicts.len(),
        stopped.len()
    );
}

/// Writes `request` on `sender` without waiting for its reply.
fn start_request(sender: &mut ding::pty::client::Client, request: &Request) {
    let mut line = serde_json::to_vec(request).expect("encode");
    line.push(b'\n');
    sender.write_raw(&line).expect("request");
}

/// A transaction "A", a 2 s wait, "B", fenced at `revision` when `fenced`.
fn a_wait_b(identity: &ding::core::identity::Identity, revision: u64, fenced: bool) -> Request {
    let steps = vec![
        write(b"A"),
        ding::pty::transport::WireStep::WaitMs(2000),
        write(b"B"),
    ];
    if !fenced {
        return Request::Send {
            steps,
            origin: Origin::Delivery,
        };
    }
    Request::SendIf {
        session: identity.session.clone(),
        incarnation: identity.incarnation.clone(),
        generation: identity.generation.clone(),
        expected_revision: revision,
        steps,
        quiet_input_ms: None,
        settled_output_ms: None,
        hold_input_ms: None,
        withdraw: None,
    }
}

#[test]
fn a_persons_input_during_a_send_if_stops_it_and_goes_on_after() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let mut typist = Typist::new(&host);
    let mut sender = host.client();
    start_request(&mut sender, &a_wait_b(&identity, revision, true));
    // "A" committed: the transaction is running its wait step now.
    watcher
        .wait_revision_above(revision, PATIENCE)
        .expect("watch")
        .expect("A moved the revision");
    // A person types during the wait: DING's "B" was decided on a
    // terminal the person has touched since, and must not follow.
    typist.type_bytes(b"1");
    typist.type_bytes(b"2");
    let reply = sender.read_reply().expect("reply");
    let ding::pty::wire::Reply::SendIf(SendIfReply::Interrupted { written, .. }) = reply else {
        panic!("expected interrupted, got {reply:?}");
    };
    assert_eq!(written, 1, "only A was written");
    // A supervisor's intervention is a person's input too, and goes on.
    host.client().send(&[write(b"X")]).expect("intervene");
    assert_eq!(host.wait_file("out", 4), b"A12X");
    // Nothing of the transaction comes later: B's time has passed.
    let (identity, revision) = host.identity();
    let marker = host
        .client()
        .send_if(&identity, revision, &[write(b"!")])
        .expect("send-if");
    assert!(matches!(marker, SendIfReply::Sent { .. }), "{marker:?}");
    assert_eq!(host.wait_file("out", 5), b"A12X!");
}

#[test]
fn input_during_an_unconditional_send_waits_behind_it() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let mut typist = Typist::new(&host);
    let mut sender = host.client();
    let mut supervisor = host.client();
    start_request(&mut sender, &a_wait_b(&identity, revision, false));
    watcher
        .wait_revision_above(revision, PATIENCE)
        .expect("watch")
        .expect("A moved the revision");
    typist.type_bytes(b"1");
    typist.type_bytes(b"2");
    typist.type_bytes(b"3");
    start_request(
        &mut supervisor,
        &Request::Send {
            steps: vec![write(b"X")],
            origin: Origin::Intervention,
        },
    );
    // They raced the transaction: it has not answered yet (its wait is
    // 2 s), so every byte above reached the host while it was running.
    sender.set_timeout(Some(Duration::from_millis(100)));
    let early = sender.read_reply();
    assert!(
        early.is_err(),
        "the transaction was still running when the others arrived: {early:?}"
    );
    sender.set_timeout(Some(PATIENCE));
    let reply = sender.read_reply().expect("reply");
    let ding::pty::wire::Reply::Send {
        written,
        revision: done,
    } = reply
    else {
        panic!("expected sent, got {reply:?}");
    };
    assert_eq!(written, 2);
    assert_eq!(
        done,
        revision + 2,
        "nothing was committed between A and B: the revision moved once for each"
    );
    let after = supervisor.read_reply().expect("send reply");
    let ding::pty::wire::Reply::Send { revision: sent, .. } = after else {
        panic!("expected send reply, got {after:?}");
    };
    assert!(
        sent > done,
        "the supervisor's send was written after the transaction"
    );
    let out = host.wait_file("out", 6);
    assert!(
        out.starts_with(b"AB"),
        "typing during the wait must land after the transaction: {out:?}"
    );
    // Each connection's input in its own order (the two connections may
    // be read in either order).
    let typed: Vec<u8> = out[2..].iter().copied().filter(|b| *b != b'X').collect();
    assert_eq!(typed, b"123", "{out:?}");
    assert_eq!(out.iter().filter(|b| **b == b'X').count(), 1, "{out:?}");
}

#[test]
fn mismatched_identity_writes_zero_bytes() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let mut client = host.client();
    let cases = [
        (IdentityPart::Session, "other.agent", 0),
        (IdentityPart::Incarnation, "0123", 1),
        (IdentityPart::Generation, "sha256:00", 2),
    ];
    for (part, value, field) in cases {
        let mut wrong = identity.clone();
        match field {
            0 => wrong.session = value.into(),
            1 => wrong.incarnation = value.into(),
            _ => wrong.generation = value.into(),
        }
        let reply = client
            .send_if(&wrong, revision, &[write(b"LEAK")])
            .expect("send-if");
        assert_eq!(reply, SendIfReply::Mismatch { part, revision });
    }
    client.send(&[write(b"ok")]).expect("send");
    assert_eq!(host.wait_file("out", 2), b"ok");
    // The unconditional send is recorded as an intervention.
    assert!(
        host.stderr_text()
            .contains(r#""event":"intervention","op":"send""#),
        "{}",
        host.stderr_text()
    );
}

#[test]
fn the_log_tells_ding_delivery_from_a_supervisors_intervention() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let mut client = host.client();
    let reply = client
        .send_if(&identity, revision, &[write(b"a")])
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }));
    let request = Request::Send {
        steps: vec![write(b"b")],
        origin: Origin::Delivery,
    };
    client.request(&request).expect("delivery send");
    client.send(&[write(b"c")]).expect("intervention send");
    assert_eq!(host.wait_file("out", 3), b"abc");
    let log = host.stderr_text();
    let events: Vec<(String, String)> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["bytes"].is_u64())
        .map(|line| {
            (
                line["event"].as_str().unwrap_or("").to_string(),
                line["op"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("delivery", "send-if"),
        ("delivery", "send"),
        ("intervention", "send"),
    ];
    assert_eq!(
        events,
        expected.map(|(event, op)| (event.to_string(), op.to_string())),
        "{log}"
    );
}

#[test]
fn revision_moves_on_output_input_resize_and_restart() {
    // `cat` in cooked mode echoes input, so one input produces output too.
    let host = Host::start(&[], &["sh", "-c", "printf 'ready\\n'; exec cat"]);
    host.wait_screen(|s| s.rows[0] == "ready");
    let mut client = host.client();
    let mut watcher = host.client();
    let mut last = watcher.watch().expect("watch");

    let (after_input, written) = client.send(&[write(b"hi\r")]).expect("send");
    assert_eq!(written, 3);
    assert!(after_input > last, "input moves the revision");
    last = after_input;
    let echoed = watcher
        .wait_revision_above(last, PATIENCE)
        .expect("watch")
        .expect("echo output moves the revision");
    last = echoed;
    host.wait_screen(|s| s.rows[1] == "hi" && s.rows[2] == "hi");
    last = last.max(client.status().expect("status").revision);

    let after_resize = client
        .resize(Size {
            cols: 100,
            rows: 30,
        })
        .expect("resize");
    assert!(after_resize > last, "resize moves the revision");
    assert_eq!(
        client.status().expect("status").size,
        Size {
            cols: 100,
            rows: 30
        }
    );
    last = client.status().expect("status").revision;

    let before = client.status().expect("status").incarnation;
    let (incarnation, after_restart) = client.restart().expect("restart");
    assert_ne!(incarnation, before, "a restart is a new incarnation");
    assert!(after_restart > last, "restart moves the revision");

    // Pushes never go backwards.
    let mut seen = 0;
    while let Some(push) = watcher.next_push(Duration::from_millis(200)).expect("push") {
        let revision = match push {
            Push::Revision { revision, .. }
            | Push::Start { revision, .. }
            | Push::Withdrawn { revision } => revision,
            Push::Exit { revision, child } => {
                assert!(matches!(
                    child,
                    ChildState::Killed { .. } | ChildState::Exited { .. }
                ));
                revision
            }
        };
        assert!(
            revision >= seen,
            "revision went backwards: {revision} after {seen}"
        );
        seen = revision;
    }
    assert!(seen >= after_restart);
}

/// A paste step comes inside bracketed-paste markers only to a program that
/// asked for them (DECSET 2004), as a terminal pastes: a line reader that
/// never asked reads the text alone.
#[test]
fn a_paste_has_markers_only_while_the_program_asked_for_them() {
    let paste = ding::pty::transport::WireStep::Paste(b"[ding] hi".to_vec());
    let plain = Host::recording();
    let (identity, revision) = plain.identity();
    let reply = plain
        .client()
        .send_if(&identity, revision, &[paste.clone(), write(b"\r")])
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    assert_eq!(plain.wait_file("out", 10), b"[ding] hi\r");

    let asked = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "stty raw -echo; printf '\\033[?2004hREADY'; exec cat > out",
        ],
    );
    asked.wait_screen(|s| s.rows[0].contains("READY"));
    let (identity, revision) = asked.identity();
    let reply = asked
        .client()
        .send_if(&identity, revision, std::slice::from_ref(&paste))
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    assert_eq!(asked.wait_file("out", 21), b"\x1b[200~[ding] hi\x1b[201~");
    assert!(asked.client().status().expect("status").bracketed_paste);
}
