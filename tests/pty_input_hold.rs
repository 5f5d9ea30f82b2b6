//! A person's typed text held behind a typed notice's paste
//! (docs/pty-protocol.md §3, items 6 and 7): a send-if that asks for
//! `holdInputMs` makes the host keep a person's text from the terminal
//! until the same client's next transaction has run, which goes first;
//! anything but text ends the hold at once, and so do its time and its
//! client's hang-up. When one of those ends it with a person's input to go
//! on, the send-if's `withdraw` keys are written first and watchers hear
//! `withdrawn`. Proven by what the child read: it records every byte raw
//! into `out`.

mod support;

use std::time::{Duration, Instant};

use ding::core::identity::Identity;
use ding::pty::client::Client;
use ding::pty::transport::WireStep;
use ding::pty::wire::{Push, Quiet, SendIfReply};
use ding::wait::wait_until;
use support::{Host, PATIENCE, Typist, write};

const PASTE: &[u8] = b"NOTICE";

/// The withdraw keys of the tests (Ctrl-U).
const WITHDRAW: &[u8] = b"\x15";

/// The withdraw steps of the tests: Ctrl-U, after `wait_ms`.
fn withdraw_steps(wait_ms: u64) -> Vec<WireStep> {
    let wait = (wait_ms > 0).then_some(WireStep::WaitMs(wait_ms));
    wait.into_iter().chain([write(WITHDRAW)]).collect()
}

/// DING's paste, holding a person's text for `hold_ms` once written; the
/// revision after it.
fn paste_holding(sender: &mut Client, host: &Host, hold_ms: u64) -> (Identity, u64) {
    paste_withdrawable(sender, host, hold_ms, None)
}

/// [`paste_holding`], taken back out with `withdraw` should a person's
/// input end the hold before the sender's next transaction.
fn paste_withdrawable(
    sender: &mut Client,
    host: &Host,
    hold_ms: u64,
    withdraw: Option<&[WireStep]>,
) -> (Identity, u64) {
    let (identity, revision) = host.identity();
    let reply = sender
        .send_if_holding(
            &identity,
            revision,
            &[write(PASTE)],
            Quiet::default(),
            Some(hold_ms),
            withdraw,
        )
        .expect("paste");
    let SendIfReply::Sent { revision, .. } = reply else {
        panic!("the paste: {reply:?}");
    };
    (identity, revision)
}

/// How many of the host's log records are of `event`.
fn logged(host: &Host, event: &str) -> usize {
    let needle = format!("\"event\":\"{event}\"");
    host.stderr_text().matches(&needle).count()
}

/// Waits until the host has logged `count` records of `event`.
fn wait_logged(host: &Host, event: &str, count: usize) {
    assert!(
        wait_until(PATIENCE, || logged(host, event) >= count),
        "no {count} {event} records: {}",
        host.stderr_text()
    );
}

#[test]
fn text_typed_after_a_holding_paste_goes_after_dings_return() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) = paste_holding(&mut sender, &host, 2_000);
    let mut typist = Typist::new(&host);
    typist.type_bytes("\u{e9}".as_bytes());
    typist.type_bytes(b"ab");
    wait_logged(&host, "input-held", 2);
    // The held keys moved nothing: the Return is compared on the paste's
    // revision and goes first.
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    let out = host.wait_file("out", PASTE.len() + 1 + 2 + 2);
    assert_eq!(out, "NOTICE\r\u{e9}ab".as_bytes());
    wait_logged(&host, "input-released", 1);
    // The hold is over: the next key goes on at once.
    typist.type_bytes(b"z");
    assert_eq!(
        host.wait_file("out", out.len() + 1),
        "NOTICE\r\u{e9}abz".as_bytes()
    );
}

#[test]
fn a_return_with_nothing_held_ends_the_hold_at_once() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) = paste_holding(&mut sender, &host, 3_000);
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    // A key after DING's Return is the person's own, and goes on at once.
    Typist::new(&host).type_bytes(b"z");
    assert_eq!(host.wait_file("out", PASTE.len() + 2), b"NOTICE\rz");
    assert_eq!(logged(&host, "input-held"), 0, "{}", host.stderr_text());
}

/// Every key that is not text alone, typed after a held `p`, behind a
/// paste that gives `withdraw` steps or none: what the terminal read, in
/// order, is the paste, the withdraw keys if any, then `p` and the key, at
/// once; watchers hear `withdrawn` exactly when there were withdraw keys;
/// DING's Return is then refused by its compare.
fn a_key_that_is_not_text_after_held_text(withdraw: Option<&[WireStep]>) {
    for key in [&b"\x1b"[..], b"\r", b"\x7f", b"\x1b[A", b"x\x03"] {
        let host = Host::recording();
        let mut watcher = host.client();
        watcher.watch().expect("watch");
        let mut sender = host.client();
        let (identity, pasted) = paste_withdrawable(&mut sender, &host, 2_000, withdraw);
        let mut typist = Typist::new(&host);
        typist.type_bytes(b"p");
        wait_logged(&host, "input-held", 1);
        typist.type_bytes(key);
        let mut wanted = PASTE.to_vec();
        if withdraw.is_some() {
            wanted.extend_from_slice(WITHDRAW);
        }
        wanted.push(b'p');
        wanted.extend_from_slice(key);
        assert_eq!(host.wait_file("out", wanted.len()), wanted, "{key:?}");
        let withdrawals = usize::from(withdraw.is_some());
        assert_eq!(withdrawn_pushes(&mut watcher).len(), withdrawals, "{key:?}");
        assert_eq!(
            logged(&host, "withdrawn"),
            withdrawals,
            "{}",
            host.stderr_text()
        );
        let reply = sender
            .send_if(&identity, pasted, &[write(b"\r")])
            .expect("return");
        assert!(
            matches!(reply, SendIfReply::Conflict { .. }),
            "{key:?}: {reply:?}"
        );
    }
}

#[test]
fn a_key_that_is_not_text_ends_the_hold_and_dings_return_is_refused() {
    a_key_that_is_not_text_after_held_text(None);
}

#[test]
fn a_hold_ends_when_its_time_is_up_or_its_client_hangs_up() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) = paste_holding(&mut sender, &host, 300);
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"p");
    // Nothing else happens: the key goes on once the hold's time is up.
    assert_eq!(host.wait_file("out", PASTE.len() + 1), b"NOTICEp");
    assert!(host.stderr_text().contains("its time was up"));
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Conflict { .. }), "{reply:?}");

    let mut sender = host.client();
    paste_holding(&mut sender, &host, 3_000);
    typist.type_bytes(b"q");
    wait_logged(&host, "input-held", 2);
    drop(sender);
    assert_eq!(
        host.wait_file("out", 2 * PASTE.len() + 2),
        b"NOTICEpNOTICEq"
    );
    assert!(host.stderr_text().contains("DING's connection closed"));
}

#[test]
fn a_supervisors_typed_text_is_held_too_and_a_hold_past_the_bound_is_refused() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) = paste_holding(&mut sender, &host, 2_000);
    let supervisor = std::thread::spawn({
        let mut client = host.client();
        move || client.send(&[write(b"typed")]).expect("intervene")
    });
    wait_logged(&host, "input-held", 1);
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    supervisor.join().expect("the supervisor's send");
    assert_eq!(host.wait_file("out", PASTE.len() + 6), b"NOTICE\rtyped");

    let (identity, revision) = host.identity();
    let refused = sender.send_if_holding(
        &identity,
        revision,
        &[write(b"x")],
        Quiet::default(),
        Some(ding::pty::wire::MAX_HOLD_INPUT_MS + 1),
        None,
    );
    let err = format!("{:#}", refused.expect_err("refused"));
    assert!(
        err.contains("a hold of") && err.contains("invalid-argument"),
        "{err}"
    );
}

/// The pushes a watcher has had within a short while, as `withdrawn`
/// revisions.
fn withdrawn_pushes(watcher: &mut Client) -> Vec<u64> {
    let mut withdrawn = Vec::new();
    while let Some(push) = watcher
        .next_push(std::time::Duration::from_millis(300))
        .expect("push")
    {
        if let Push::Withdrawn { revision } = push {
            withdrawn.push(revision);
        }
    }
    withdrawn
}

#[test]
fn a_key_that_is_not_text_takes_a_withdrawable_paste_back_out_before_it() {
    a_key_that_is_not_text_after_held_text(Some(&withdraw_steps(0)));
}

#[test]
fn a_key_alone_with_nothing_held_takes_the_paste_back_out_too() {
    let host = Host::recording();
    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 2_000, Some(&withdraw_steps(0)));
    Typist::new(&host).type_bytes(b"\x1b[A");
    assert_eq!(host.wait_file("out", PASTE.len() + 4), b"NOTICE\x15\x1b[A");
}

#[test]
fn held_text_whose_hold_runs_out_or_loses_its_client_goes_on_after_the_withdraw() {
    let host = Host::recording();
    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 300, Some(&withdraw_steps(0)));
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"p");
    assert_eq!(host.wait_file("out", PASTE.len() + 2), b"NOTICE\x15p");
    assert!(host.stderr_text().contains("its time was up"));

    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 3_000, Some(&withdraw_steps(0)));
    typist.type_bytes(b"q");
    wait_logged(&host, "input-held", 2);
    drop(sender);
    assert_eq!(
        host.wait_file("out", 2 * PASTE.len() + 4),
        b"NOTICE\x15pNOTICE\x15q"
    );
    assert_eq!(logged(&host, "withdrawn"), 2, "{}", host.stderr_text());
}

#[test]
fn a_hold_that_ends_with_nothing_held_or_after_dings_return_withdraws_nothing() {
    // Its time is up with nothing held: the notice stays, and DING's
    // Return can still come.
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) = paste_withdrawable(&mut sender, &host, 200, Some(&withdraw_steps(0)));
    wait_logged(&host, "input-released", 1);
    assert!(host.stderr_text().contains("its time was up"));
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    // DING's Return went first: what the person typed goes after it.
    let (identity, pasted) =
        paste_withdrawable(&mut sender, &host, 2_000, Some(&withdraw_steps(0)));
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"ab");
    wait_logged(&host, "input-held", 1);
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    typist.type_bytes(b"\x7f");
    assert_eq!(
        host.wait_file("out", 2 * PASTE.len() + 5),
        b"NOTICE\rNOTICE\rab\x7f"
    );
    assert_eq!(logged(&host, "withdrawn"), 0, "{}", host.stderr_text());
}

#[test]
fn a_return_refused_by_its_compare_keeps_the_hold_for_the_next_one() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, pasted) =
        paste_withdrawable(&mut sender, &host, 2_000, Some(&withdraw_steps(0)));
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"p");
    wait_logged(&host, "input-held", 1);
    let stale = sender
        .send_if(&identity, pasted - 1, &[write(b"\r")])
        .expect("return");
    assert!(matches!(stale, SendIfReply::Conflict { .. }), "{stale:?}");
    let reply = sender
        .send_if(&identity, pasted, &[write(b"\r")])
        .expect("return");
    assert!(matches!(reply, SendIfReply::Sent { .. }), "{reply:?}");
    assert_eq!(host.wait_file("out", PASTE.len() + 2), b"NOTICE\rp");
}

#[test]
fn a_person_waits_behind_the_withdraw_steps_wait() {
    let host = Host::recording();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 2_000, Some(&withdraw_steps(300)));
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"p\r");
    assert_eq!(host.wait_file("out", PASTE.len() + 3), b"NOTICE\x15p\r");
    assert_eq!(withdrawn_pushes(&mut watcher).len(), 1);
    // Logged as DING's: `withdrawing` when the key came, the delivery of
    // the keys after the wait, then `withdrawn`.
    let log = host.stderr_text();
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("{needle}: {log}"))
    };
    assert!(at("\"event\":\"withdrawing\"") < at("\"op\":\"withdraw\""));
    assert!(at("\"op\":\"withdraw\"") < at("\"event\":\"withdrawn\""));
}

#[test]
fn withdraw_steps_need_a_hold_and_are_a_few_keys_after_a_short_wait() {
    let host = Host::recording();
    let mut sender = host.client();
    let (identity, revision) = host.identity();
    let many = vec![write(&[0x15; ding::pty::wire::MAX_WITHDRAW_BYTES + 1])];
    let late = withdraw_steps(ding::pty::wire::MAX_WITHDRAW_WAIT_MS + 1);
    for (hold, withdraw) in [
        (None, withdraw_steps(0)),
        (Some(1_000), vec![WireStep::WaitMs(5)]),
        (Some(1_000), many),
        (Some(1_000), late),
    ] {
        let refused = sender.send_if_holding(
            &identity,
            revision,
            &[write(b"x")],
            Quiet::default(),
            hold,
            Some(&withdraw),
        );
        let err = format!("{:#}", refused.expect_err("refused"));
        assert!(
            err.contains("withdraw") && err.contains("invalid-argument"),
            "{err}"
        );
    }
    assert_eq!(
        host.stderr_text().matches("\"event\":\"delivery\"").count(),
        0
    );
}

/// Found on the real Gemini CLI (a person typed `hi` and Return 70 ms
/// apart just after DING's paste): the Return ended the hold, the paste
/// was taken back out, and the held text and the Return were written back
/// to back; the program took a Return that close to a key for a newline in
/// a paste, and the person's line was never sent. A person's keys reach
/// the terminal no closer to their previous keys than they came (up to a
/// cap): the child reads the Return about as long after the text as the
/// person pressed it.
#[test]
fn a_persons_keys_that_waited_keep_the_spacing_they_were_typed_with() {
    let host = Host::start(
        &[],
        &[
            "bash",
            "-c",
            "stty raw -echo; printf READY; \
             while IFS= read -r -s -n1 -d '' key; do \
             printf '%s %d\\n' \"$EPOCHREALTIME\" \"'$key\" >> stamps; done",
        ],
    );
    host.wait_screen(|s| s.rows[0].contains("READY"));
    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 2_000, Some(&withdraw_steps(0)));
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"hi");
    let typed = Instant::now();
    wait_logged(&host, "input-held", 1);
    // The person's pace: their Return 100 ms after their text (a pace,
    // never a wait for something to happen).
    let pace = (typed + Duration::from_millis(100)).saturating_duration_since(Instant::now());
    std::thread::sleep(pace);
    typist.type_bytes(b"\r");
    let wanted_keys = PASTE.len() + 4;
    let stamped = || std::fs::read_to_string(host.path("stamps")).unwrap_or_default();
    assert!(
        wait_until(PATIENCE, || stamped().lines().count() >= wanted_keys),
        "{}",
        stamped()
    );
    let stamps = stamped();
    // The shell's `read` may turn the Return into a newline.
    let read: Vec<(f64, u32)> = stamps
        .lines()
        .map(|line| {
            let (at, key) = line.split_once(' ').expect("a stamp");
            let key: u32 = key.parse().expect("a key");
            (
                at.parse().expect("a time"),
                if key == 10 { 13 } else { key },
            )
        })
        .collect();
    let keys: Vec<u32> = read.iter().map(|&(_, key)| key).collect();
    let mut wanted: Vec<u32> = PASTE.iter().map(|&b| u32::from(b)).collect();
    wanted.extend([0x15, u32::from(b'h'), u32::from(b'i'), 13]);
    assert_eq!(keys, wanted, "{stamps}");
    let at = |key: u8| {
        read.iter()
            .find(|&&(_, k)| k == u32::from(key))
            .map(|&(at, _)| at)
            .expect("read")
    };
    // Written back to back they are read within a few ms; a gap this
    // large is the person's (less the loop's own latency).
    let gap_ms = (at(b'\r') - at(b'i')) * 1000.0;
    assert!(
        gap_ms >= 40.0,
        "the Return {gap_ms:.1} ms after the text: {stamps}"
    );
}

/// A paste whose hold ran out with nothing held still sits alone in the
/// composer, its Return not come (its owner slow to confirm it, or an
/// adapter that would have gone): a person's key then, text or not, would
/// join the notice, so the host takes the paste back out first, pushes
/// `withdrawn`, and the key lands in the composer the person saw. Once
/// anything was written after the paste, nothing is taken out.
#[test]
fn a_key_after_the_hold_ran_out_takes_the_unreturned_paste_back_out_first() {
    let host = Host::recording();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let mut sender = host.client();
    paste_withdrawable(&mut sender, &host, 200, Some(&withdraw_steps(0)));
    wait_logged(&host, "input-released", 1);
    let mut typist = Typist::new(&host);
    typist.type_bytes(b"p");
    assert_eq!(host.wait_file("out", PASTE.len() + 2), b"NOTICE\x15p");
    assert_eq!(withdrawn_pushes(&mut watcher).len(), 1);
    assert!(
        host.stderr_text()
            .contains("a person's key after the hold, before DING's Return"),
        "{}",
        host.stderr_text()
    );
    // The next key finds nothing of DING's alone in the composer.
    typist.type_bytes(b"q");
    assert_eq!(host.wait_file("out", PASTE.len() + 3), b"NOTICE\x15pq");
    assert_eq!(logged(&host, "withdrawn"), 1, "{}", host.stderr_text());
}
