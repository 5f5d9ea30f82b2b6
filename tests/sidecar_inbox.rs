//! The durable inbox end to end: `ding send` and `ding archive` on the real
//! binary in temporary directories, plus the scan and journal store the
//! sidecar builds on.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::thread;

use ding::core::journal::{Journal, JournalEntry, Owner};
use ding::core::message::MessageName;
use ding::sidecar::inbox::{Inbox, UnreadableReason};
use ding::sidecar::journal_store::{JournalStore, Loaded};

fn ding_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ding"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("DING_INBOX")
        .env_remove("DING_AGENT");
    command
}

/// Runs ding with `stdin` as its standard input.
fn ding(dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = ding_command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ding");
    // A ding that refuses its arguments exits before reading stdin; the
    // broken pipe that this write then meets is not the test's concern.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {err}"),
        _ => {}
    }
    child.wait_with_output().expect("wait for ding")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `ding send ARGS --create` (these inboxes are made by their first
/// message) and the one line it printed.
fn send(dir: &Path, args: &[&str], body: &[u8]) -> String {
    let mut args = args.to_vec();
    args.push("--create");
    let out = ding(dir, &args, body);
    assert!(
        out.status.success(),
        "ding send failed: {}",
        text(&out.stderr)
    );
    let printed = text(&out.stdout);
    let name = printed.strip_suffix('\n').expect("one line");
    assert!(!name.contains('\n'), "{printed:?}");
    name.to_string()
}

#[test]
fn send_prints_a_name_that_is_in_new_with_the_body() {
    let temp = tempfile::tempdir().unwrap();
    let name = send(
        temp.path(),
        &["send", "worker", "--inbox", "inbox/worker"],
        b"hello\n",
    );
    assert!(MessageName::new(&name).is_ok(), "{name}");
    let new = temp.path().join("inbox/worker/new");
    assert_eq!(fs::read(new.join(&name)).unwrap(), b"hello\n");
    assert_eq!(
        fs::read_dir(temp.path().join("inbox/worker/tmp"))
            .unwrap()
            .count(),
        0
    );

    fs::write(temp.path().join("msg.md"), b"from a file").unwrap();
    let second = send(
        temp.path(),
        &[
            "send",
            "worker",
            "msg.md",
            "--from",
            "lead",
            "--inbox",
            "inbox/worker",
        ],
        b"",
    );
    assert!(name < second, "{name} < {second}");
    assert_eq!(
        fs::read(new.join(&second)).unwrap(),
        b"From: lead\n\nfrom a file"
    );
}

#[test]
fn send_refuses_a_forged_sender_and_delivers_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let out = ding(
        temp.path(),
        &["send", "worker", "--from", "a\nFrom: root", "--inbox", "in"],
        b"x",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is not allowed"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert!(!temp.path().join("in/new").exists());
}

#[test]
fn send_finds_the_inbox_in_the_declaration() {
    let temp = tempfile::tempdir().unwrap();
    fs::write(
        temp.path().join("agents.kdl"),
        "agent \"worker\" { command \"harness\"; }\nagent \"reviewer\" { command \"bot\"; }\n",
    )
    .unwrap();
    let name = send(
        temp.path(),
        &["send", "reviewer", "--decl", "agents.kdl"],
        b"review",
    );
    // The default inbox is inbox/NAME beside the declaration.
    let file = temp.path().join("inbox/reviewer/new").join(&name);
    assert_eq!(fs::read(file).unwrap(), b"review");

    let out = ding(
        temp.path(),
        &["send", "nobody", "--decl", "agents.kdl"],
        b"x",
    );
    assert_eq!(out.status.code(), Some(4), "unknown agent");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no agent nobody is declared"), "{stderr}");
    assert!(stderr.contains("worker, reviewer"), "{stderr}");
}

#[test]
fn archive_inside_a_harness_uses_ding_inbox_for_its_own_agent_only() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("inbox/worker");
    let name = send(
        temp.path(),
        &["send", "worker", "--inbox", "inbox/worker"],
        b"x",
    );
    let out = ding_command(temp.path(), &["archive", "reviewer", &name])
        .env("DING_INBOX", &root)
        .env("DING_AGENT", "worker")
        .output()
        .unwrap();
    // Nothing names reviewer's inbox: an unknown agent, not the worker's.
    assert_eq!(out.status.code(), Some(4));
    assert!(text(&out.stderr).contains("inbox of agent worker, not reviewer"));
    let out = ding_command(temp.path(), &["archive", "worker", &name])
        .env("DING_INBOX", &root)
        .env("DING_AGENT", "worker")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(root.join("archive").join(&name).exists());
}

#[test]
fn concurrent_sends_from_several_processes_get_distinct_names_in_sender_order() {
    const SENDERS: usize = 4;
    const EACH: usize = 50;
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let dir = dir.clone();
            thread::spawn(move || {
                (0..EACH)
                    .map(|i| {
                        let body = format!("sender {sender} message {i}");
                        let name =
                            send(&dir, &["send", "worker", "--inbox", "in"], body.as_bytes());
                        (name, body)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let per_sender: Vec<Vec<(String, String)>> =
        senders.into_iter().map(|s| s.join().unwrap()).collect();

    let mut all = BTreeSet::new();
    for sent in &per_sender {
        for pair in sent.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} then {}", pair[0].0, pair[1].0);
        }
        for (name, body) in sent {
            assert!(all.insert(name.clone()), "duplicate name {name}");
            assert_eq!(
                fs::read_to_string(dir.join("in/new").join(name)).unwrap(),
                *body
            );
        }
    }
    assert_eq!(all.len(), SENDERS * EACH);
    let scan = Inbox::open(&dir.join("in")).unwrap().scan_unread().unwrap();
    let scanned: Vec<String> = scan.unread.iter().map(|n| n.to_string()).collect();
    assert_eq!(scanned, all.into_iter().collect::<Vec<_>>());
}

#[test]
fn archive_moves_each_file_from_new_to_archive() {
    let temp = tempfile::tempdir().unwrap();
    let first = send(temp.path(), &["send", "w", "--inbox", "in"], b"1");
    let second = send(temp.path(), &["send", "w", "--inbox", "in"], b"2");
    let out = ding(
        temp.path(),
        &["archive", "w", &first, &second, "--inbox", "in"],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for name in [&first, &second] {
        assert!(!temp.path().join("in/new").join(name).exists());
        assert!(temp.path().join("in/archive").join(name).exists());
    }
}

#[test]
fn archive_of_a_missing_file_fails_with_exit_1_naming_it() {
    let temp = tempfile::tempdir().unwrap();
    let kept = send(temp.path(), &["send", "w", "--inbox", "in"], b"1");
    let out = ding(
        temp.path(),
        &["archive", "w", "gone.md", &kept, "--inbox", "in"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no unread message gone.md in"), "{stderr}");
    // The other file was still archived.
    assert!(temp.path().join("in/archive").join(&kept).exists());
}

#[test]
fn archive_of_a_path_fails_and_hints_the_bare_name() {
    let temp = tempfile::tempdir().unwrap();
    let name = send(temp.path(), &["send", "w", "--inbox", "in"], b"1");
    let as_path = format!("new/{name}");
    let out = ding(
        temp.path(),
        &["archive", "w", &as_path, "--inbox", "in"],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(&format!("give the bare filename `{name}`")));
    assert!(temp.path().join("in/new").join(&name).exists());
}

#[test]
fn archive_of_a_missing_inbox_is_a_usage_error() {
    let temp = tempfile::tempdir().unwrap();
    let out = ding(
        temp.path(),
        &["archive", "w", "a.md", "--inbox", "nowhere"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no inbox at nowhere"));
    assert!(!temp.path().join("nowhere").exists());
}

#[test]
fn a_non_utf8_filename_in_new_is_reported_by_scan_not_lost() {
    let temp = tempfile::tempdir().unwrap();
    let name = send(temp.path(), &["send", "w", "--inbox", "in"], b"1");
    let odd = OsStr::from_bytes(b"caf\xe9.md");
    fs::write(temp.path().join("in/new").join(odd), b"latin-1 name").unwrap();
    let scan = Inbox::open(&temp.path().join("in"))
        .unwrap()
        .scan_unread()
        .unwrap();
    assert_eq!(scan.unread, [MessageName::new(&name).unwrap()]);
    assert_eq!(scan.unreadable.len(), 1);
    assert_eq!(scan.unreadable[0].name, odd);
    assert_eq!(scan.unreadable[0].reason, UnreadableReason::NotUtf8);
}

#[test]
fn journal_round_trips_and_a_corrupt_journal_is_quarantined() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state/worker");
    let store = JournalStore::new(&state);
    let journal = Journal::new(vec![JournalEntry {
        name: MessageName::new("001.md").unwrap(),
        owner: Owner::HookOwned,
        at: 42,
        incarnation: Some("pty-1".into()),
    }]);
    store.save(&journal).unwrap();
    assert_eq!(store.load().unwrap(), Loaded::Restored(journal));

    // A torn write of the file itself (which the atomic rename prevents,
    // but a damaged disk does not) must not brick the agent.
    fs::write(store.path(), b"{\"version\":1,\"entries\":[{\"na").unwrap();
    let loaded = store.load().unwrap();
    let warning = loaded.warning().expect("a warning to log");
    assert!(warning.contains("unreadable journal moved to"), "{warning}");
    assert_eq!(loaded.into_journal(), None);
    let quarantined: Vec<String> = fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("journal.json.corrupt-"))
        .collect();
    assert_eq!(quarantined.len(), 1, "{quarantined:?}");
    assert_eq!(store.load().unwrap(), Loaded::Missing);
}

/// The names the ring and `ding status` print can be archived as printed:
/// escaped (a line feed, an ESC) and after `--` when they start with `-`
/// (`--inbox=x.md` was taken as the option). Before, such messages could
/// not be archived as instructed and rang again.
#[test]
fn archive_takes_a_name_as_printed_and_files_after_a_double_dash() {
    let temp = tempfile::tempdir().unwrap();
    send(temp.path(), &["send", "w", "--inbox", "in"], b"first");
    let new = temp.path().join("in/new");
    for name in ["a\nb.md", "esc\u{1b}]0;x.md", "--inbox=x.md", "-x.md"] {
        fs::write(new.join(name), "x").unwrap();
    }
    let out = ding(
        temp.path(),
        &[
            "archive",
            "w",
            "--inbox",
            "in",
            "a\\u{a}b.md",
            "esc\\u{1b}]0;x.md",
            "--",
            "--inbox=x.md",
            "-x.md",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for name in ["a\nb.md", "esc\u{1b}]0;x.md", "--inbox=x.md", "-x.md"] {
        assert!(!new.join(name).exists(), "{name:?} still unread");
        assert!(temp.path().join("in/archive").join(name).exists());
    }
    let out = ding(
        temp.path(),
        &["archive", "w", "--inbox", "in", "-y.md"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("goes after `--`"),
        "{}",
        text(&out.stderr)
    );
}
