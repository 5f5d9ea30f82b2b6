//! The send-if time fence (docs/pty-protocol.md §3): a compare-and-send
//! whose revision matches still writes zero bytes unless a person's input
//! and the program's output have been quiet for as long as it asks, judged
//! on the host's clock; the refusal says which part moved and when the
//! same request would pass.

mod support;

use std::io::Write;

use ding::pty::wire::{ErrorKind, FrameKind, Quiet, SendIfReply, TerminalPart, push_frame};
use ding::wait::wait_until;
use support::{Host, PATIENCE, write};

const LONG: u64 = 9_000;
const SHORT: u64 = 50;

fn quiet(input_ms: Option<u64>, output_ms: Option<u64>) -> Quiet {
    Quiet {
        input_ms,
        output_ms,
    }
}

/// Waits until the host's clock is `ms` past `at` (polls `status`, which
/// answers with the host's own time).
fn host_clock_passes(host: &Host, at: u64, ms: u64) {
    let mut client = host.client();
    let passed = wait_until(PATIENCE, || {
        client
            .status()
            .is_ok_and(|status| status.clock_ms >= at + ms)
    });
    assert!(passed, "the host's clock did not pass {at} + {ms} ms");
}

/// A person's key through `attach`, once the child has read it.
fn a_person_types_a_key(host: &Host) {
    let (mut attached, _) = host.client().attach().expect("attach");
    let mut frame = Vec::new();
    push_frame(&mut frame, FrameKind::Data, b"k");
    attached.write_all(&frame).expect("type");
    host.wait_file("out", 1);
}

#[test]
fn a_send_if_soon_after_a_persons_key_writes_nothing_and_says_when_it_would_pass() {
    let host = Host::recording();
    a_person_types_a_key(&host);
    // The revision matches: only the time fence can refuse.
    let (identity, revision) = host.identity();
    let reply = host
        .client()
        .send_if_quiet(&identity, revision, &[write(b"N")], quiet(Some(LONG), None))
        .expect("send-if");
    let SendIfReply::Unsettled {
        part,
        quiet_for_ms,
        retry_in_ms,
        revision: at,
    } = reply
    else {
        panic!("expected unsettled, got {reply:?}");
    };
    assert_eq!(part, TerminalPart::Input);
    assert_eq!(at, revision, "nothing was written");
    assert!(quiet_for_ms < LONG, "{quiet_for_ms}");
    assert_eq!(retry_in_ms, LONG - quiet_for_ms);

    let typed = host
        .client()
        .status()
        .expect("status")
        .terminal
        .input_at_ms
        .expect("the key is input");
    // Well past the quiet asked for: a quiet longer than asked passes.
    host_clock_passes(&host, typed, 3 * SHORT);
    let reply = host
        .client()
        .send_if_quiet(
            &identity,
            revision,
            &[write(b"N")],
            quiet(Some(SHORT), None),
        )
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    assert_eq!(host.wait_file("out", 2), b"kN");
}

#[test]
fn a_send_if_while_the_program_draws_writes_nothing() {
    // The child draws READY and then records, echo off.
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let status = host.client().status().expect("status");
    let drawn = status.terminal.output_at_ms.expect("READY came out");
    let reply = host
        .client()
        .send_if_quiet(&identity, revision, &[write(b"N")], quiet(None, Some(LONG)))
        .expect("send-if");
    let SendIfReply::Unsettled { part, .. } = reply else {
        panic!("expected unsettled, got {reply:?}");
    };
    assert_eq!(part, TerminalPart::Output);

    host_clock_passes(&host, drawn, 3 * SHORT);
    let reply = host
        .client()
        .send_if_quiet(
            &identity,
            revision,
            &[write(b"N")],
            quiet(Some(LONG), Some(SHORT)),
        )
        .expect("send-if");
    assert!(
        matches!(reply, SendIfReply::Sent { .. }),
        "nobody ever typed, so any quiet of input holds: {reply:?}"
    );
    assert_eq!(host.wait_file("out", 1), b"N");
}

#[test]
fn ding_s_own_delivery_is_not_a_persons_input_for_the_fence() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let first = host
        .client()
        .send_if(&identity, revision, &[write(b"1")])
        .expect("send-if");
    let SendIfReply::Sent { revision, .. } = first else {
        panic!("expected sent, got {first:?}");
    };
    let second = host
        .client()
        .send_if_quiet(&identity, revision, &[write(b"2")], quiet(Some(LONG), None))
        .expect("send-if");
    assert!(matches!(second, SendIfReply::Sent { .. }), "{second:?}");
    assert_eq!(host.wait_file("out", 2), b"12");
}

#[test]
fn a_quiet_past_the_bound_is_an_invalid_argument() {
    let host = Host::recording();
    let (identity, revision) = host.identity();
    let refused = host
        .client()
        .send_if_quiet(
            &identity,
            revision,
            &[write(b"N")],
            quiet(Some(ding::pty::wire::MAX_QUIET_MS + 1), None),
        )
        .expect_err("refused");
    let kind = refused
        .downcast_ref::<ding::pty::client::HostError>()
        .map(|error| error.kind);
    assert_eq!(kind, Some(ErrorKind::InvalidArgument), "{refused:#}");
}

/// A snapshot says how long the person had been quiet at least: its
/// `clockMs` is the host's clock when the reply was built, never before
/// the input it reports, and never after the host's clock at a later
/// `status` (an adapter fences a turn it starts without bytes on it).
#[test]
fn a_snapshot_carries_the_hosts_clock_at_or_after_its_last_input() {
    let host = Host::recording();
    a_person_types_a_key(&host);
    let snapshot = host.client().snapshot().expect("snapshot");
    let input = snapshot.terminal.input_at_ms.expect("the key is input");
    let built = snapshot.clock_ms.expect("the host's clock");
    assert!(built >= input, "built at {built}, input at {input}");
    let later = host.client().status().expect("status").clock_ms;
    assert!(
        later >= built,
        "status at {later}, snapshot built at {built}"
    );
}
