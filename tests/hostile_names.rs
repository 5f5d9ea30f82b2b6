//! Hostile filenames through every path that prints a name: the notice,
//! the hook context, `ding status` (human and JSON, live and from disk) and
//! the sidecar's log lines. A property test runs arbitrary names (any
//! Unicode, weighted towards every class a terminal or line editor acts
//! on, and bytes that are not UTF-8) through each path in process; the end
//! to end tests run the worst of them through real sidecars, PTY hosts and
//! a line-reading program.
//!
//! What counts as harmful is listed here independently of the escaping
//! code (`src/core/escape.rs`), so the test checks the rule rather than
//! restating it: no C0 or C1 control, no DEL, no line or paragraph break,
//! no space but the ASCII one, no zero-width, bidi, format, tag or
//! variation character, no invisible filler. And each shown name must read
//! back to the exact original.

mod support;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use ding::cli::status::{agent_status, render};
use ding::core::config::Policy;
use ding::core::decision::{Decision, Record};
use ding::core::engine::{Engine, Input};
use ding::core::escape::{escape, escape_bytes};
use ding::core::identity::Identity;
use ding::core::journal::{Journal, JournalEntry, Owner};
use ding::core::message::MessageName;
use ding::core::notice::Notice;
use ding::core::time::Time;
use ding::sidecar::agent_record::AgentRecord;
use ding::sidecar::escaped_json::{to_json, to_json_pretty};
use ding::sidecar::inbox::{Inbox, Unreadable, UnreadableReason};
use ding::sidecar::journal_store::JournalStore;
use ding::sidecar::log::{Log, LogFormat};
use ding::sidecar::paths::{AgentPaths, DirsEnv};
use ding::sidecar::status_document::UnreadableView;
use proptest::prelude::*;
use serde_json::{Value, json};
use support::sidecar_agent::*;

/// Characters a terminal, a line editor or a reader's eye treats as
/// something other than a visible character.
fn is_harmful(c: char) -> bool {
    let code = u32::from(c);
    let ranges: &[(u32, u32)] = &[
        (0x00, 0x1f),       // C0, including LF, CR, VT, FF, ESC, BEL
        (0x7f, 0x9f),       // DEL and C1, including NEL, CSI, OSC, ST
        (0xa0, 0xa0),       // no-break space
        (0xad, 0xad),       // soft hyphen
        (0x34f, 0x34f),     // combining grapheme joiner
        (0x61c, 0x61c),     // Arabic letter mark
        (0x115f, 0x1160),   // Hangul fillers
        (0x1680, 0x1680),   // Ogham space
        (0x17b4, 0x17b5),   // Khmer invisible vowels
        (0x180b, 0x180f),   // Mongolian selectors and vowel separator
        (0x2000, 0x200f),   // spaces, zero-width, LRM, RLM
        (0x2028, 0x202f),   // line and paragraph separators, bidi embeddings
        (0x205f, 0x206f),   // word joiner, invisible operators, isolates
        (0x3000, 0x3000),   // ideographic space
        (0x3164, 0x3164),   // Hangul filler
        (0xfe00, 0xfe0f),   // variation selectors
        (0xfeff, 0xfeff),   // byte-order mark
        (0xffa0, 0xffa0),   // halfwidth Hangul filler
        (0xfff0, 0xfffb),   // interlinear annotations
        (0xe0000, 0xe0fff), // tags, variation selectors supplement
    ];
    ranges
        .iter()
        .any(|&(low, high)| (low..=high).contains(&code))
        || (c.is_whitespace() && c != ' ')
}

/// Characters drawn from every class above, and the backslash.
const HOSTILE: &[char] = &[
    '\n',
    '\r',
    '\u{b}',
    '\u{c}',
    '\u{1b}',
    '\u{7}',
    '\u{8}',
    '\u{3}',
    '\u{15}',
    '\u{7f}',
    '\u{85}',
    '\u{9b}',
    '\u{9d}',
    '\u{9c}',
    '\u{2028}',
    '\u{2029}',
    '\u{200b}',
    '\u{200c}',
    '\u{200d}',
    '\u{200e}',
    '\u{200f}',
    '\u{61c}',
    '\u{2060}',
    '\u{2061}',
    '\u{2064}',
    '\u{feff}',
    '\u{ad}',
    '\u{202a}',
    '\u{202b}',
    '\u{202c}',
    '\u{202d}',
    '\u{202e}',
    '\u{2066}',
    '\u{2067}',
    '\u{2068}',
    '\u{2069}',
    '\u{e0001}',
    '\u{e0041}',
    '\u{e007f}',
    '\u{fe0f}',
    '\u{3164}',
    '\u{115f}',
    '\u{a0}',
    '\u{3000}',
    '\u{180e}',
    '\\',
    '[',
    ']',
    ';',
];

/// Fails unless `text` is harmless: nothing [`is_harmful`], so no line
/// break either.
fn assert_harmless(path: &str, text: &str) {
    if let Some(bad) = text.chars().find(|&c| is_harmful(c)) {
        panic!("{path}: {bad:?} reached the output: {text:?}");
    }
}

/// [`assert_harmless`] for output of several lines (ours): each line.
fn assert_harmless_lines(path: &str, text: &str) {
    for line in text.split('\n') {
        assert_harmless(path, line);
    }
}

/// Reads a shown name back: `\u{hex}` is a character, `\x{hex}` a byte.
fn unescape(shown: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut rest = shown;
    while let Some(c) = rest.chars().next() {
        if let Some(tail) = rest
            .strip_prefix("\\u{")
            .or_else(|| rest.strip_prefix("\\x{"))
        {
            let end = tail.find('}').expect("closed escape");
            let code = u32::from_str_radix(&tail[..end], 16).expect("hex");
            if rest.starts_with("\\u") {
                let mut utf8 = [0; 4];
                let c = char::from_u32(code).expect("a character");
                bytes.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            } else {
                bytes.push(u8::try_from(code).expect("a byte"));
            }
            rest = &tail[end + 1..];
        } else {
            assert_ne!(c, '\\', "a bare backslash is ambiguous: {shown:?}");
            let mut utf8 = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            rest = &rest[c.len_utf8()..];
        }
    }
    bytes
}

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

/// A sidecar's status document as it answers it (see
/// `src/sidecar/runtime.rs`), from an engine that has seen `names`, a PTY
/// identity of hostile strings and a hostile adapter line.
fn live_document(names: &[MessageName], unreadable: &[Vec<u8>], hostile: &str) -> Value {
    let declaration = "agent \"w\" {\n  command \"sh\"\n  ding {\n    delivery \"turn-boundary+fresh-idle\"\n    adapter { command \"a\" }\n  }\n}\n";
    let checked = ding::decl::check_bytes("agent.kdl", declaration.as_bytes(), Path::new("/"));
    let spec = checked.agents.first().expect("an agent").clone();
    let mut engine = Engine::new(spec.engine_config(), None, Time::ZERO);
    let identity = Identity {
        session: format!("s{hostile}"),
        incarnation: format!("i{hostile}"),
        generation: format!("g{hostile}"),
    };
    let at = Time::from_millis(10);
    engine.handle_input(Input::InboxScan(names.to_vec()), at);
    engine.handle_input(
        Input::PtyStatus {
            identity,
            revision: 1,
        },
        at,
    );
    engine.handle_input(Input::AdapterSpawned { pid: 7 }, at);
    engine.handle_input(Input::AdapterLine(hostile.as_bytes().to_vec()), at);
    while engine.poll_output().is_some() {}
    let now = Time::from_millis(3000);
    let status = engine.status(now);
    let lines: Vec<String> = status.messages.iter().map(|m| m.describe(now)).collect();
    let views: Vec<UnreadableView> = unreadable
        .iter()
        .map(|bytes| {
            UnreadableView::of(&Unreadable {
                name: OsStr::from_bytes(bytes).to_owned(),
                reason: UnreadableReason::NotUtf8,
            })
        })
        .collect();
    let document = ding::sidecar::status_document::StatusDocument {
        agent: "w",
        running: true,
        pid: 1,
        uptime_ms: 5,
        policy: Policy::TurnBoundaryFreshIdle,
        fingerprint: spec.fingerprint(),
        fingerprint_input: spec.fingerprint_input(),
        declaration: Path::new(hostile),
        inbox: Path::new(hostile),
        pty_socket: hostile.into(),
        pty_connected: true,
        adapter_command: spec.adapter_command(),
        adapter_pid: Some(7),
        journal: hostile.into(),
        journal_warning: Some(hostile),
        journal_write_error: Some(hostile),
        unreadable: views,
        engine: status,
        lines,
    };
    serde_json::from_slice(&document.to_json()).expect("the document is JSON")
}

/// An agent that ran once and stopped, with `names` and `unreadable` in
/// its inbox on disk and the first name staged in its journal.
fn stopped_agent(names: &[MessageName], unreadable: &[Vec<u8>]) -> (tempfile::TempDir, Value) {
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
    let (document, _) = agent_status("w", &paths).expect("status from disk");
    (temp, document)
}

/// Every name appears in `text` exactly as the rule shows it.
fn assert_shown(path: &str, text: &str, names: &[MessageName], unreadable: &[Vec<u8>]) {
    for name in names {
        let shown = escape(name.as_str());
        assert_eq!(unescape(&shown), name.as_str().as_bytes());
        assert!(
            text.contains(&shown),
            "{path}: {shown:?} missing in {text:?}"
        );
    }
    for bytes in unreadable {
        let shown = escape_bytes(bytes);
        assert_eq!(&unescape(&shown), bytes);
        assert!(
            text.contains(&shown),
            "{path}: {shown:?} missing in {text:?}"
        );
    }
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

        // The notice and the hook context: one line, exact names.
        let notice = Notice::build(&names, names.len(), 16, &hostile, &hostile).expect("notice");
        assert_harmless("notice", notice.text());
        assert_shown("notice", notice.text(), notice.named(), &[]);
        let context = Notice::hook_context(&names, names.len(), 16, &hostile, &hostile, 10_000)
            .expect("hook context");
        assert_harmless("hook context", context.text());
        assert_shown("hook context", context.text(), context.named(), &[]);

        // Status, live: the human rendering and the JSON.
        let live = live_document(&names, &unreadable, &hostile);
        let human = render(&live);
        assert_harmless_lines("live status", &human);
        assert_shown("live status", &human, &names, &unreadable);
        let json = to_json_pretty(&live).expect("json");
        assert_harmless_lines("live status --json", &json);
        prop_assert_eq!(&serde_json::from_str::<Value>(&json).expect("parses"), &live);

        // Status, from disk.
        let (_temp, stopped) = stopped_agent(&names, &unreadable);
        let human = render(&stopped);
        assert_harmless_lines("status from disk", &human);
        assert_shown("status from disk", &human, &names, &unreadable);
        assert_harmless_lines("status from disk --json", &to_json_pretty(&stopped).expect("json"));

        // The sidecar's log lines, both formats.
        for format in [LogFormat::Json, LogFormat::Human] {
            let log = Log::new(format, "w", None, ding::sidecar::runtime::monotonic_now);
            let lines = [
                log.decision_line(&Record {
                    at: Time::from_millis(1),
                    decision: Decision::Arrived { message: names[0].clone() },
                }),
                log.event_line("inbox-unreadable", json!({
                    "name": unreadable.first().map(|b| escape_bytes(b)),
                    "reason": hostile,
                })),
                log.event_line("adapter-stderr", json!({ "line": hostile })),
            ];
            for line in &lines {
                assert_harmless("log", line);
            }
            if format == LogFormat::Json {
                let arrived: Value = serde_json::from_str(&lines[0]).expect("a JSON line");
                prop_assert_eq!(arrived["message"].as_str(), Some(names[0].as_str()));
            } else {
                assert_shown("human log", &lines[0], &names[..1], &[]);
            }
        }
        assert_harmless("json", &to_json(&json!({ "s": hostile })).expect("json"));
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
