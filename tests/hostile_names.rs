//! Hostile filenames through every path that prints a name: the notice,
//! the hook context, `ding status` (human and JSON, live and from disk) and
//! the sidecar's log lines. A property test runs arbitrary names (any
//! Unicode, weighted towards every class a terminal or line editor acts
//! on, and bytes that are not UTF-8) through each path in process; the end
//! to end tests run the worst of them through real sidecars, PTY hosts and
//! a line-reading program.
//!
//! What counts as harmful is listed independently of the escaping code
//! (`tests/support/hostile.rs`), so the test checks the rule rather than
//! restating it: no C0 or C1 control, no DEL, no line or paragraph break,
//! no space but the ASCII one, no zero-width, bidi, format, tag or
//! variation character, no invisible filler. And each shown name must read
//! back to the exact original. The `names` fuzz target runs the same
//! in-process paths on mutated corpus inputs (`docs/fuzzing.md`).

#[path = "support/hostile.rs"]
mod hostile;
mod support;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

use ding::cli::agent_status::{AgentStatus, agent_status};
use ding::cli::status::render;
use ding::core::journal::{Journal, JournalEntry, Owner};
use ding::core::message::MessageName;
use ding::escape::escape;
use ding::sidecar::agent_record::AgentRecord;
use ding::sidecar::escaped_json::to_json_pretty;
use ding::sidecar::inbox::Inbox;
use ding::sidecar::journal_store::JournalStore;
use ding::sidecar::paths::{AgentPaths, DirsEnv};
use hostile::*;
use proptest::prelude::*;
use serde_json::Value;
use support::sidecar_agent::*;

fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => proptest::sample::select(HOSTILE),
        2 => any::<char>(),
        2 => proptest::char::range(' ', '~'),
    ]
}

/// Any valid message name (a filename that is UTF-8).
fn hostile_name() -> impl Strategy<Value = MessageName> {
    proptest::collection::vec(hostile_char(), 1..24).prop_filter_map("a message name", |chars| {
        let text: String = chars.into_iter().collect();
        // A leading dot makes a hidden file, which no path shows.
        let text = format!("m{text}");
        MessageName::new(&text).ok()
    })
}

/// Any filename that is not UTF-8.
fn non_utf8_name() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop_oneof![0x80u8..=0xff, 0x01u8..=0x7f, Just(0x1b)], 1..24)
        .prop_filter_map("a filename that is not UTF-8", |mut bytes| {
            bytes.insert(0, b'n');
            bytes.push(0xff);
            bytes.retain(|&b| b != b'/');
            (bytes.len() <= 255 && std::str::from_utf8(&bytes).is_err()).then_some(bytes)
        })
}

/// An agent that ran once and stopped, with `names` and `unreadable` in
/// its inbox on disk and the first name staged in its journal.
fn stopped_agent(
    names: &[MessageName],
    unreadable: &[Vec<u8>],
) -> (tempfile::TempDir, AgentStatus) {
    let temp = tempfile::tempdir().expect("tempdir");
    let root = temp.path();
    let env = DirsEnv::from_lookup(
        |key| match key {
            "XDG_RUNTIME_DIR" => Some(root.join("run").into()),
            "XDG_STATE_HOME" => Some(root.join("state").into()),
            _ => None,
        },
        nix::unistd::geteuid().as_raw(),
    );
    let paths = AgentPaths::resolve("w", &env).expect("paths");
    paths.ensure_state_dir().expect("state dir");
    let inbox = Inbox::open_or_create(&root.join("inbox")).expect("inbox");
    for name in names {
        fs::write(inbox.unread_dir().join(name.as_str()), b"x").expect("message");
    }
    for bytes in unreadable {
        fs::write(inbox.unread_dir().join(OsStr::from_bytes(bytes)), b"x").expect("entry");
    }
    let declaration = "agent \"w\" {\n  command \"sh\"\n}\n";
    let checked = ding::decl::check_bytes("agent.kdl", declaration.as_bytes(), root);
    let spec = checked.agents.first().expect("an agent");
    AgentRecord {
        agent: "w".into(),
        declaration: root.join("agent.kdl"),
        inbox: inbox.root().to_path_buf(),
        fingerprint: spec.fingerprint(),
        fingerprint_input: spec.fingerprint_input(),
    }
    .save(paths.state_dir())
    .expect("record");
    let entries = names
        .iter()
        .take(1)
        .map(|name| JournalEntry {
            name: name.clone(),
            owner: Owner::Staged,
            at: 1,
            incarnation: None,
        })
        .collect();
    JournalStore::new(paths.state_dir())
        .save(&Journal::new(entries))
        .expect("journal");
    let status = agent_status("w", &paths).expect("status from disk");
    (temp, status)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn no_path_that_prints_a_name_lets_a_hostile_character_through(
        mut names in proptest::collection::vec(hostile_name(), 1..4),
        unreadable in proptest::collection::vec(non_utf8_name(), 0..3),
        hostile in proptest::collection::vec(hostile_char(), 0..16)
            .prop_map(|chars| chars.into_iter().collect::<String>()),
    ) {
        names.sort();
        names.dedup();
        let mut unreadable = unreadable;
        unreadable.sort();
        unreadable.dedup();

        check_in_process_paths(&names, &unreadable, &hostile);

        // Status, from disk.
        let (_temp, stopped) = stopped_agent(&names, &unreadable);
        let human = render(&stopped);
        assert_harmless_lines("status from disk", &human);
        assert_shown("status from disk", &human, &names, &unreadable);
        assert_harmless_lines("status from disk --json", &to_json_pretty(&stopped).expect("json"));

    }
}

/// A program that reads lines from its terminal and records each one: the
/// notice for a name holding line feeds must arrive as exactly one
/// submitted line.
const LINE_READER: &str = r#"printf 'READY\n'
while IFS= read -r line; do
  printf '%s\n' "$line" >> lines.txt
done
"#;

#[test]
fn a_line_feed_in_a_filename_never_submits_a_line_of_its_own() {
    let agent = Agent::new(
        "reader",
        &aggressive_decl("reader", r#"command "sh" "$ST_HOOKS/reader.sh""#),
    );
    fs::write(agent.path("hooks/reader.sh"), LINE_READER).expect("reader script");
    agent.up(&[]);
    agent.wait_screen("READY");
    let name = "a-nl\nrm -rf --no-preserve-root ~\n.md";
    agent.drop_message(name, "hostile");
    wait_for("the notice to be read as a line", || {
        fs::read_to_string(agent.path("lines.txt"))
            .is_ok_and(|lines| lines.contains("ding archive"))
    });
    let lines = fs::read_to_string(agent.path("lines.txt")).expect("lines");
    let read: Vec<&str> = lines.lines().collect();
    assert_eq!(
        read.len(),
        1,
        "the harness read more than one line: {read:#?}"
    );
    assert!(
        read[0].contains("a-nl\\u{a}rm -rf --no-preserve-root ~\\u{a}.md"),
        "{:?}",
        read[0]
    );
    assert!(!read.iter().any(|line| line.starts_with("rm ")));
}

/// Names that write the clipboard (OSC 52), set the window title (OSC 0)
/// or carry C1 controls, and one that is not UTF-8: `ding status` shows
/// each escaped, live and from disk, and the log holds none of it raw.
#[test]
fn status_and_the_log_show_hostile_names_escaped_live_and_from_disk() {
    let agent = Agent::new("osc", &careful_decl("osc", RECORDING_HARNESS, ""));
    agent.up_recording();
    agent.wait_adapter_up();
    let hostile = [
        "osc52-\u{1b}]52;c;SGVsbG8=\u{7}.md",
        "title-\u{1b}]0;pwned\u{1b}\\.md",
        "c1-\u{9b}31m\u{9d}0;x\u{9c}.md",
        "bidi-\u{202e}dm.exe",
    ];
    for name in hostile {
        agent.drop_message(name, "x");
    }
    fs::write(
        agent.new_dir().join(OsStr::from_bytes(b"bad-\xff.md")),
        b"x",
    )
    .expect("non-UTF-8");
    agent.wait_held(hostile[3], "no-evidence");
    agent.wait_status("the non-UTF-8 entry listed", |status| {
        status["unreadable"]
            .as_array()
            .is_some_and(|u| !u.is_empty())
    });

    let check = |when: &str| {
        let human = agent.ding_within(DEADLINE, &["status", "osc"]);
        // 0 while it runs, 3 when stopped: printed either way.
        assert!(
            matches!(human.status.code(), Some(0 | 3)),
            "{when}: {human:?}"
        );
        let human = String::from_utf8(human.stdout).expect("status output is UTF-8");
        assert_harmless_lines(when, &human);
        for name in hostile {
            assert!(
                human.contains(&escape(name)),
                "{when}: {name:?} not shown in\n{human}"
            );
        }
        assert!(
            human.contains("bad-\\x{ff}.md  name is not UTF-8"),
            "{when}: non-UTF-8 name not shown in\n{human}"
        );
        let json = agent.ding_within(DEADLINE, &["status", "osc", "--json"]);
        let json = String::from_utf8(json.stdout).expect("JSON is UTF-8");
        assert_harmless_lines(when, &json);
        let document: Value = serde_json::from_str(&json).expect("status JSON");
        assert_eq!(message_names(&document).len(), hostile.len(), "{when}");
    };
    check("live status");
    let log = fs::read(agent.paths().sidecar_log()).expect("sidecar log");
    let log = String::from_utf8(log).expect("the log is UTF-8");
    assert!(log.contains("osc52-"), "the log names the files: {log}");
    assert_harmless_lines("sidecar log", &log);

    let down = agent.ding_within(DEADLINE, &["down", "osc"]);
    assert!(down.status.success(), "{down:?}");
    check("status from disk");
}
