//! What the provider fixture tests share: the words fixtures use for a
//! screen reading, a lifecycle fact and a claim scope; the file names a
//! fixture lists; and checking what a hook printed against its fixture.

use ding::adapter::screen::{ComposerContent, Screen, holds_exactly};
use std::fs;
use std::path::PathBuf;

use ding::adapter::{AgentContext, HookAnswer, HookPlan};
use ding::core::downlink::Claimed;
use ding::core::message::MessageName;
use ding::core::protocol::{ClaimScope, Composer, Lifecycle};
use ding::pty::wire::Snapshot;
use serde_json::Value;
use tempfile::TempDir;

pub fn screen_word(screen: Screen) -> &'static str {
    match screen {
        Screen::Ready => "ready",
        Screen::Busy => "busy",
        Screen::Dialog => "dialog",
        Screen::Unrecognized => "unrecognized",
    }
}

pub fn composer_word(composer: Composer) -> &'static str {
    match composer {
        Composer::Empty => "empty",
        Composer::Nonempty => "nonempty",
        Composer::Unknown => "unknown",
    }
}

pub fn fact_word(fact: &Lifecycle) -> &'static str {
    match fact {
        Lifecycle::Compaction => "compaction",
        Lifecycle::Clear => "clear",
        Lifecycle::Crash => "crash",
    }
}

pub fn scope_word(scope: ClaimScope) -> &'static str {
    match scope {
        ClaimScope::Pending => "pending",
        ClaimScope::Unread => "unread",
        ClaimScope::Delivered => "delivered",
    }
}

/// The file names of a fixture's list (none if it has none).
pub fn names(value: &Value) -> Vec<MessageName> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .map(|name| MessageName::new(name.as_str().expect("a name")).expect("valid"))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks what a hook printed against the fixture's expectation: stdout
/// as JSON when the fixture gives an object, else exactly.
pub fn check_answer(name: &str, answer: &HookAnswer, expected: &Value) {
    match &expected["stdout"] {
        Value::String(text) => assert_eq!(&answer.stdout, text, "{name}: stdout"),
        object => {
            let printed: Value = serde_json::from_str(&answer.stdout).unwrap_or_else(|err| {
                panic!("{name}: stdout is not JSON ({err}): {}", answer.stdout)
            });
            assert_eq!(&printed, object, "{name}: stdout");
            assert!(answer.stdout.ends_with('\n'), "{name}: one line");
        }
    }
    assert_eq!(
        Some(answer.stderr.as_str()),
        expected["stderr"].as_str(),
        "{name}: stderr"
    );
    assert_eq!(
        Some(i64::from(answer.exit)),
        expected["exit"].as_i64(),
        "{name}: exit"
    );
}

/// The strings of the fixture's list `key` (none if it has none).
fn words<'a>(expect: &'a Value, key: &str) -> Vec<&'a str> {
    expect[key]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Checks what a plan proves and ends against the fixture's `expect`: its
/// lifecycle `facts`, its `received` files and its `endParked` slots (none
/// when the fixture lists none).
pub fn check_plan(name: &str, plan: &HookPlan, expect: &Value) {
    let facts: Vec<&str> = plan.facts.iter().map(fact_word).collect();
    assert_eq!(facts, words(expect, "facts"), "{name}: facts");
    assert_eq!(
        plan.received,
        names(&expect["received"]),
        "{name}: receipts"
    );
    assert_eq!(
        plan.end_parked,
        words(expect, "endParked"),
        "{name}: parked calls ended"
    );
}

/// Reads every capture (`(name, snapshot JSON with `_expect`)`) with `read`
/// (its screen, composer and why) and fails naming each one not read as its
/// `_expect` says (its `why` too, where it gives one: the reason `ding
/// status` shows); `more` may find more wrong with a reading (a message).
pub fn check_every_capture(
    captures: &[(String, Value)],
    at_least: usize,
    read: impl Fn(&Snapshot) -> (Screen, Composer, &'static str),
    more: impl Fn(&Value, &Snapshot) -> Option<String>,
) {
    assert!(
        captures.len() >= at_least,
        "the captures were found ({})",
        captures.len()
    );
    let mut wrong = Vec::new();
    for (name, capture) in captures {
        let expect = &capture["_expect"];
        assert!(expect.is_object(), "{name} says what it must be read as");
        let snapshot: Snapshot = serde_json::from_value(capture.clone()).expect("a snapshot");
        let (screen, composer, why) = read(&snapshot);
        let got = (screen_word(screen), composer_word(composer));
        if (expect["screen"].as_str(), expect["composer"].as_str()) != (Some(got.0), Some(got.1)) {
            wrong.push(format!("{name}: expected {expect}, read {got:?} ({why})"));
        } else if expect["why"].as_str().is_some_and(|wanted| wanted != why) {
            wrong.push(format!("{name}: expected {expect}, read why {why:?}"));
        } else if let Some(more) = more(expect, &snapshot) {
            wrong.push(format!("{name}: expected {expect}: {more}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The guarantee that matters most, for a grammar whose reading of a
/// snapshot is `read`: only a capture of an idle, empty composer (its
/// `_expect` says so) reads as idle with an empty composer.
pub fn check_only_idle_empty_captures_read_idle_and_empty(
    captures: &[(String, Value)],
    read: impl Fn(&Snapshot) -> ding::adapter::Reading,
) {
    for (name, capture) in captures {
        let snapshot: Snapshot = serde_json::from_value(capture.clone()).expect("a snapshot");
        let reading = read(&snapshot);
        let idle_empty = reading.state == ding::core::protocol::ActivityState::Idle
            && reading.composer == Composer::Empty;
        let expected =
            capture["_expect"]["screen"] == "ready" && capture["_expect"]["composer"] == "empty";
        assert_eq!(idle_empty, expected, "{name}: {reading:?}");
    }
}

/// One hook fixture, ready to plan: its JSON with `{INBOX}` replaced by a
/// scratch inbox whose `new/` holds the fixture's `unread` files, and the
/// agent `worker` whose inbox that is.
pub struct HookFixture {
    pub name: String,
    pub fixture: Value,
    pub agent: AgentContext,
    _inbox: TempDir,
}

/// Every hook fixture in `relative` (at least `at_least` of them).
pub fn hook_fixtures(relative: &str, at_least: usize) -> Vec<HookFixture> {
    let all = super::fixture_files::json_files(relative);
    assert!(
        all.len() >= at_least,
        "the fixtures were found ({})",
        all.len()
    );
    all.into_iter()
        .map(|(name, text)| {
            let inbox = tempfile::tempdir().expect("inbox");
            let root = inbox.path().to_string_lossy().into_owned();
            let fixture: Value =
                serde_json::from_str(&text.replace("{INBOX}", &root)).expect("fixture JSON");
            fs::create_dir(inbox.path().join("new")).expect("new/");
            for unread in names(&fixture["unread"]) {
                fs::write(inbox.path().join("new").join(unread.as_str()), "work").expect("unread");
            }
            let agent = AgentContext {
                agent: "worker".into(),
                inbox: PathBuf::from(&root),
            };
            HookFixture {
                name,
                fixture,
                agent,
                _inbox: inbox,
            }
        })
        .collect()
}

/// The claim's answer a fixture assumes: its `granted` files, and
/// `notGranted` more.
pub fn claimed_of(fixture: &Value) -> Claimed {
    Claimed {
        claim: 1,
        granted: names(&fixture["granted"]),
        refused: Vec::new(),
        refusal: None,
        not_granted: fixture["notGranted"].as_u64().unwrap_or(0) as usize,
    }
}

/// The capture `name` (its file name without `.json`) among `captures`, as
/// a snapshot.
pub fn snapshot_named(captures: Vec<(String, Value)>, name: &str) -> Snapshot {
    let (_, capture) = captures
        .into_iter()
        .find(|(file, _)| file.trim_end_matches(".json") == name)
        .unwrap_or_else(|| panic!("no capture {name}"));
    serde_json::from_value(capture).expect("a snapshot")
}

/// The real capture `glued` of DING's notice pasted after the person's
/// draft `draft`, read by a provider's `content`: it holds the draft and
/// the notice together, never the notice alone; the same screen without
/// the draft holds the notice alone.
pub fn check_a_notice_glued_to_a_draft(
    glued: &Snapshot,
    draft: &str,
    notice: &str,
    content: impl Fn(&Snapshot) -> ComposerContent,
) {
    let read = content(glued);
    assert!(!holds_exactly(&read, notice), "{read:?}");
    assert!(
        holds_exactly(&read, &format!("{draft}{notice}")),
        "{read:?}"
    );
    let mut alone = glued.clone();
    let row = alone
        .rows
        .iter()
        .position(|row| row.contains(draft))
        .expect("the draft's row");
    alone.rows[row] = alone.rows[row].replace(draft, "");
    assert!(holds_exactly(&content(&alone), notice));
}
