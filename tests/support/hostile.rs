//! What counts as harmful in text DING shows, written independently of
//! the escaping code (`src/escape.rs`), so that tests check the rule
//! rather than restate it, and every in-process path that prints an
//! untrusted name. Shared by `tests/hostile_names.rs` and the `names` fuzz
//! target (`tests/fuzz/targets/names.rs`).

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use ding::cli::agent_state::{Harness, Process, Processes, Terminal};
use ding::cli::agent_status::{AgentStatus, Drift, DriftedField};
use ding::cli::status::render;
use ding::core::config::Policy;
use ding::core::decision::{Decision, Record};
use ding::core::engine::{Engine, Input};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::notice::Notice;
use ding::core::time::Time;
use ding::core::transport::{PASTE_END, PASTE_START, RETURN, Transport};
use ding::escape::{escape, escape_bytes};
use ding::sidecar::escaped_json::{to_json, to_json_pretty};
use ding::sidecar::inbox::{Unreadable, UnreadableReason};
use ding::sidecar::log::{Log, LogFormat};
use ding::sidecar::status_document::{
    LiveStatus, Running, StatusDocument, StatusReport, UnreadableView,
};
use serde_json::{Value, json};

/// Characters a terminal, a line editor or a reader's eye treats as
/// something other than a visible character.
pub fn is_harmful(c: char) -> bool {
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
pub const HOSTILE: &[char] = &[
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
pub fn assert_harmless(path: &str, text: &str) {
    if let Some(bad) = text.chars().find(|&c| is_harmful(c)) {
        panic!("{path}: {bad:?} reached the output: {text:?}");
    }
}

/// [`assert_harmless`] for output of several lines (ours): each line.
pub fn assert_harmless_lines(path: &str, text: &str) {
    for line in text.split('\n') {
        assert_harmless(path, line);
    }
}

/// Reads a shown name back: `\u{hex}` is a character, `\x{hex}` a byte.
pub fn unescape(shown: &str) -> Vec<u8> {
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

/// A live status as `ding status` shows it: the sidecar's document as it
/// answers it (see `src/sidecar/runtime/status.rs`) and reads back, from an
/// engine that has seen `names`, a PTY identity of hostile strings and a
/// hostile adapter line, with hostile drift, terminal and PTY host log
/// failure beside it.
pub fn live_document(names: &[MessageName], unreadable: &[Vec<u8>], hostile: &str) -> AgentStatus {
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
    let log_failure = ding::log_file::LogFailure {
        since: hostile.into(),
        lost_lines: 3,
        error: hostile.into(),
    };
    let document = StatusDocument {
        agent: Cow::Borrowed("w"),
        running: Running,
        pid: 1,
        uptime_ms: 5,
        policy: Policy::TurnBoundaryFreshIdle,
        fingerprint: spec.fingerprint(),
        fingerprint_input: spec.fingerprint_input(),
        declaration: Cow::Borrowed(Path::new(hostile)),
        inbox: Cow::Borrowed(Path::new(hostile)),
        pty_socket: hostile.into(),
        pty_connected: true,
        adapter_command: spec.adapter_command().map(Cow::Borrowed),
        adapter_pid: Some(7),
        journal: hostile.into(),
        journal_warning: Some(Cow::Borrowed(hostile)),
        journal_write_error: Some(Cow::Borrowed(hostile)),
        log_write_failure: Some(Cow::Borrowed(&log_failure)),
        unreadable: views,
        engine: status,
        lines,
    };
    let live = LiveStatus::from_reply(&document.to_json()).expect("the document reads back");
    let drifted = DriftedField {
        field: hostile.into(),
        running: hostile.into(),
        declared: hostile.into(),
    };
    AgentStatus {
        document: StatusReport::Live(Box::new(live)),
        sidecar_status_error: None,
        processes: Processes {
            sidecar: Process::Running { pid: 1 },
            pty_host: Process::Running { pid: 2 },
            harness: Harness::Running {
                pid: 3,
                for_ms: 5000,
            },
        },
        terminal: Some(Terminal {
            size: "80x24".into(),
            attached: 1,
            incarnation: hostile.into(),
        }),
        last_exit: Some(ding::pty::last_exit::LastExit {
            child: ding::pty::wire::ChildState::Exited { code: 3 },
            at: hostile.into(),
            incarnation: hostile.into(),
            screen: vec![hostile.into(), hostile.into()],
        }),
        pty_host_log_write_failure: Some(log_failure.clone()),
        declared_fingerprint: Some(spec.fingerprint()),
        drift: Some(Drift::Judged {
            declaration: hostile.into(),
            sidecar: Some(vec![drifted.clone()]),
            harness: Some(vec![drifted]),
        }),
    }
}

/// Every name appears in `text` exactly as the rule shows it.
pub fn assert_shown(path: &str, text: &str, names: &[MessageName], unreadable: &[Vec<u8>]) {
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

/// Runs `names` (and the non-UTF-8 entries `unreadable`, and `hostile`
/// as every other untrusted string) through every path that prints them
/// in process: the notice and its transport, the hook context, live
/// status (human and JSON), the sidecar's log lines in both formats.
/// Panics at the first hostile character that reaches an output or the
/// first name that does not read back exactly.
pub fn check_in_process_paths(names: &[MessageName], unreadable: &[Vec<u8>], hostile: &str) {
    // The notice and the hook context: one line, exact names.
    let notice = Notice::build(names, names.len(), 16, hostile, hostile).expect("notice");
    assert_harmless("notice", notice.text());
    assert_shown("notice", notice.text(), notice.named(), &[]);
    // What reaches the terminal: the notice inside the transport's own
    // framing (paste brackets, then Return), and nothing else.
    let typed = Transport::combined(&notice, Duration::from_millis(200)).bytes();
    let inner = typed
        .strip_prefix(PASTE_START)
        .and_then(|rest| rest.strip_suffix(RETURN))
        .and_then(|rest| rest.strip_suffix(PASTE_END))
        .expect("the transport frames the notice");
    assert_eq!(inner, notice.text().as_bytes());
    let context = Notice::hook_context(names, names.len(), 16, hostile, hostile, 10_000)
        .expect("hook context");
    assert_harmless("hook context", context.text());
    assert_shown("hook context", context.text(), context.named(), &[]);

    // Status, live: the human rendering and the JSON.
    let live = live_document(names, unreadable, hostile);
    let human = render(&live);
    assert_harmless_lines("live status", &human);
    assert_shown("live status", &human, names, unreadable);
    let json = to_json_pretty(&live).expect("json");
    assert_harmless_lines("live status --json", &json);
    assert_eq!(
        serde_json::from_str::<Value>(&json).expect("parses"),
        serde_json::to_value(&live).expect("a value")
    );

    // The sidecar's log lines, both formats.
    for format in [LogFormat::Json, LogFormat::Human] {
        let log = Log::new(format, "w", None, ding::sidecar::runtime::monotonic_now);
        let lines = [
            log.decision_line(&Record {
                at: Time::from_millis(1),
                decision: Decision::Arrived {
                    message: names[0].clone(),
                },
            }),
            log.event_line(
                "inbox-unreadable",
                json!({
                    "name": unreadable.first().map(|b| escape_bytes(b)),
                    "reason": hostile,
                }),
            ),
            log.event_line("adapter-stderr", json!({ "line": hostile })),
        ];
        for line in &lines {
            assert_harmless("log", line);
        }
        if format == LogFormat::Json {
            let arrived: Value = serde_json::from_str(&lines[0]).expect("a JSON line");
            assert_eq!(arrived["message"].as_str(), Some(names[0].as_str()));
        } else {
            assert_shown("human log", &lines[0], &names[..1], &[]);
        }
    }
    assert_harmless("json", &to_json(&json!({ "s": hostile })).expect("json"));
}
