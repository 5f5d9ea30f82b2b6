//! Issue 20's seam, on the real harnesses: a person presses a key at an
//! offset from -100 ms to +300 ms around each action of DING's (a typed
//! notice's paste, its Return, Claude Code's wake, Codex's queued turn),
//! and what they typed must survive as they typed it.
//!
//! Each action gets one agent, set up the documented way (`ding
//! compile-agent`, then `ding up`), idle with an empty composer. A first
//! message with nobody typing measures when DING acts after a message
//! arrives (the PTY host's `delivery` records for the paste and the
//! Return; the model server's request for a turn DING starts). Then each
//! trial sends a message and presses `é` at that moment plus the trial's
//! offset, spread evenly over -100..+300 ms: the one timed step is the
//! person's, never a wait for DING. The offset that counts is measured
//! afterwards on the PTY host's own log, the key's `intervention` against
//! DING's record. After each trial the person submits what their composer
//! holds, which carries the message if DING held it.
//!
//! Judged on every trial, from what the terminal and the model server
//! saw:
//!
//! * the key is never swallowed: the composer holds the `é` once the
//!   screen is idle again;
//! * DING never writes its notice after the key reached the terminal, and
//!   never its Return after a key that came after its paste and reached
//!   the terminal (the Return's fence);
//! * a key pressed between DING's paste and its Return is held by the
//!   PTY host (`input-held`) and reaches the terminal only after the
//!   Return (docs/pty-protocol.md §3, item 6), and the offset counted is
//!   when the host had it;
//! * no turn DING starts carries the key (a prompt of DING's never
//!   contains it);
//! * the notice and the key never share the person's composer: the key
//!   is text, which the hold keeps behind the Return; a typo and its
//!   Backspace (not text alone) end the hold, and the host takes the paste
//!   back out before them (docs/pty-protocol.md §3, item 7).
//!
//! `DING_OFFSET_TRIALS` trials per action (default 2: the offsets -100
//! and +300 ms, the fast subset in `make test`); `make offsets` runs 20.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ding::adapter::screen::ComposerContent;
use ding::core::protocol::Composer;
use ding::pty::wire::Snapshot;
use serde_json::Value;
use support::real_pane::*;
use support::sidecar_agent::Agent;

/// The person's key: one a notice never holds (notices are ASCII: paths,
/// names, `ding archive`).
const KEY: &str = "\u{e9}";

fn trials() -> usize {
    std::env::var("DING_OFFSET_TRIALS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(2)
        .max(1)
}

/// The offset, in ms, of trial `n` of `of`: spread evenly over -100..+300.
fn offset_ms(n: usize, of: usize) -> i64 {
    if of == 1 {
        return 0;
    }
    -100 + (400 * n as i64) / (of as i64 - 1)
}

/// What the person types at their moment: the key alone, or the key, a
/// typo and its Backspace in one go (the Backspace is no text, so it ends
/// the host's hold at once: DING's paste, if it came first, is taken back
/// out before the keys go on).
#[derive(Clone, Copy, Debug)]
enum Keys {
    Key,
    KeyTypoBackspace,
}

impl Keys {
    fn bytes(self) -> &'static str {
        match self {
            Keys::Key => KEY,
            Keys::KeyTypoBackspace => "\u{e9}a\u{7f}",
        }
    }

    /// What the composer must not show: the typo the Backspace took back.
    fn undone(self) -> Option<&'static str> {
        match self {
            Keys::Key => None,
            Keys::KeyTypoBackspace => Some("\u{e9}a"),
        }
    }
}

/// The person presses the keys.
fn press(agent: &Agent, keys: Keys) {
    agent.ding_ok(&["intervene", &agent.name, keys.bytes(), "--no-enter"]);
}

/// Looks for what `seen` finds every millisecond or two until the wall
/// clock reaches `until` (Unix ms): a person watching the screen reacts
/// within that.
fn poll_until(until: i64, seen: impl Fn() -> Option<i64>) -> Option<i64> {
    loop {
        if let Some(found) = seen() {
            return Some(found);
        }
        if now_ms() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Waits until the wall clock reaches `at` (Unix ms): the person's timing.
fn sleep_until(at: i64) {
    let wait = at - now_ms();
    if wait > 0 {
        std::thread::sleep(Duration::from_millis(wait as u64));
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64)
}

/// `2026-12-03T08:05:49.022Z` (the PTY host's log) as Unix milliseconds.
fn unix_ms(rfc3339: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| rfc3339.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let millis = number(20..23).unwrap_or(0);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + hour) * 60 + minute) * 60 + second) * 1_000 + millis)
}

/// The times of the PTY host's records of one kind (`delivery`,
/// `intervention`), as Unix milliseconds, oldest first.
fn host_times(agent: &Agent, event: &str) -> Vec<i64> {
    let log = std::fs::read_to_string(agent.paths().pty_log()).unwrap_or_default();
    log.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["event"] == event)
        .filter_map(|record| unix_ms(record["time"].as_str()?))
        .collect()
}

/// One harness as the trials need it: its screen grammar and its agent.
struct Harness {
    agent: Agent,
    model: ModelServer,
    read: fn(&Snapshot) -> (bool, Composer),
    composer: fn(&Snapshot) -> ComposerContent,
}

/// What a harness is run and read with.
struct Grammar {
    variable: &'static str,
    api: &'static str,
    /// The model key, by its name: in the environment of `ding up` only.
    secret: (&'static str, &'static str),
    read: fn(&Snapshot) -> (bool, Composer),
    composer: fn(&Snapshot) -> ComposerContent,
}

fn claude_read(snapshot: &Snapshot) -> (bool, Composer) {
    use ding::providers::claude::screen::{Screen, read};
    let view = read(snapshot);
    (view.screen == Screen::Ready, view.composer)
}

fn codex_read(snapshot: &Snapshot) -> (bool, Composer) {
    use ding::providers::codex::screen::{Screen, read};
    let view = read(snapshot);
    (view.screen == Screen::Ready, view.composer)
}

impl Harness {
    fn start(name: &'static str, idle_path: &str, agent_name: &str) -> Harness {
        let grammar = match name {
            "claude" => Grammar {
                variable: "DING_HARNESS_CLAUDE",
                api: "anthropic",
                secret: ("ANTHROPIC_API_KEY", "mock-model-key"),
                read: claude_read,
                composer: ding::providers::claude::screen::composer_content,
            },
            _ => Grammar {
                variable: "DING_HARNESS_CODEX",
                api: "openai",
                secret: ("MOCK_MODEL_API_KEY", "mock-model-key"),
                read: codex_read,
                composer: ding::providers::codex::screen::composer_content,
            },
        };
        let (variable, api, secret, read, composer) = (
            grammar.variable,
            grammar.api,
            grammar.secret,
            grammar.read,
            grammar.composer,
        );
        let binary = harness_binary(variable);
        let agent = Agent::new(agent_name, "");
        let model = ModelServer::start(api, &agent.path("model"));
        let launch = prepare_harness(&agent, name, &binary, &model);
        compile_and_up(&agent, name, &launch, idle_path, secret);
        let harness = Harness {
            agent,
            model,
            read,
            composer,
        };
        harness.idle_and_empty("the first idle, empty composer");
        harness
    }

    fn idle_and_empty(&self, what: &str) -> Snapshot {
        let read = self.read;
        wait_unchanged(&self.agent, what, Duration::from_millis(800), |snapshot| {
            read(snapshot) == (true, Composer::Empty)
        })
    }

    /// The prompts of the model calls so far.
    fn prompts(&self) -> Vec<String> {
        self.model
            .requests()
            .iter()
            .filter_map(|request| request["prompt"].as_str().map(String::from))
            .collect()
    }

    /// When DING acted on the message `name` (Unix ms): its paste, its
    /// Return, or the first model call carrying it in a turn the person
    /// did not start (their prompt holds their key), counted from the
    /// records there were before it.
    fn acted_at(
        &self,
        action: Action,
        name: &str,
        deliveries_before: usize,
        calls_before: usize,
    ) -> Option<i64> {
        let delivery = |n: usize| {
            host_times(&self.agent, "delivery")
                .get(deliveries_before + n)
                .copied()
        };
        match action {
            Action::Paste => delivery(0),
            Action::Return => delivery(1),
            Action::Turn => self
                .model
                .requests()
                .iter()
                .skip(calls_before)
                .find(|request| {
                    carries(request, name)
                        && !request["prompt"]
                            .as_str()
                            .is_some_and(|prompt| prompt.contains(KEY))
                })
                .and_then(|request| request["t"].as_i64()),
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.agent.ding(&["down", &self.agent.name]);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Paste,
    Return,
    /// A turn DING starts without terminal input: Claude Code's wake,
    /// Codex's queued turn.
    Turn,
}

/// What one trial saw.
#[derive(Debug)]
struct Trial {
    /// The key's offset from DING's act on the host's clock (ms), if DING
    /// acted.
    offset: Option<i64>,
    /// The host held the key behind DING's paste until its Return.
    held: bool,
    /// The host took DING's paste back out before the keys went on.
    withdrawn: bool,
}

/// One act's trials at a time, whatever the test threads: the offsets are
/// a person's timing, and six real harnesses at once on two cores would
/// measure the machine instead.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(harness_name: &'static str, idle_path: &str, action: Action) {
    run_typing(harness_name, idle_path, action, Keys::Key);
}

fn run_typing(harness_name: &'static str, idle_path: &str, action: Action, typing: Keys) {
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let agent_name = format!("off-{harness_name}-{action:?}-{typing:?}").to_lowercase();
    let harness = Harness::start(harness_name, idle_path, &agent_name);
    // With nobody typing: when DING acts after a message arrives. Twice:
    // the first comes while the new screen settles (spec §2.2), later at
    // DING's usual pace.
    let mut lead = 0;
    for round in 0..2 {
        let deliveries = host_times(&harness.agent, "delivery").len();
        let calls = harness.model.requests().len();
        let sent = now_ms();
        let first = send_message(&harness.agent, &format!("calibration {round}\n"));
        wait_carrying(&harness.model, &first);
        let acted = wait_until("DING's act, calibrating", PATIENCE, || {
            harness.acted_at(action, &first, deliveries, calls)
        });
        lead = acted - sent;
        harness.idle_and_empty("idle after the calibration");
    }
    let of = trials();
    let mut seen = Vec::new();
    for n in 0..of {
        let wanted = offset_ms(n, of);
        let deliveries = host_times(&harness.agent, "delivery").len();
        let keys = host_times(&harness.agent, "intervention").len();
        let held = host_times(&harness.agent, "input-held").len();
        let withdrawals = host_times(&harness.agent, "withdrawn").len();
        let calls = harness.model.requests().len();
        // The person's moment, `wanted` from DING's act: the one timed
        // step of the scenario. After the act, it is timed from the act
        // itself, seen on the host's log or the model server's; before
        // it, from when the calibration says it comes (a key due before
        // the message could arrive is pressed first, and the message sent
        // after it).
        let now = now_ms();
        let name = if wanted >= 0 {
            let name = send_message(&harness.agent, &format!("trial {n}\n"));
            let acted = poll_until(now + 3 * lead + 2_000, || {
                harness.acted_at(action, &name, deliveries, calls)
            });
            sleep_until(acted.unwrap_or_else(now_ms) + wanted);
            press(&harness.agent, typing);
            name
        } else {
            let key_due = now + lead + wanted;
            if key_due < now {
                press(&harness.agent, typing);
                sleep_until(now + (now - key_due));
                send_message(&harness.agent, &format!("trial {n}\n"))
            } else {
                let name = send_message(&harness.agent, &format!("trial {n}\n"));
                sleep_until(key_due);
                press(&harness.agent, typing);
                name
            }
        };
        let read = harness.read;
        let idle = wait_unchanged(
            &harness.agent,
            "idle with the person's key in the composer",
            Duration::from_millis(1_500),
            |snapshot| read(snapshot) == (true, Composer::Nonempty),
        );
        // When the key reached the terminal, and when the host had it: the
        // same moment, unless the host held it behind DING's paste.
        let key_at = host_times(&harness.agent, "intervention")
            .get(keys)
            .copied()
            .expect("the key, in the host's log");
        let key_held = host_times(&harness.agent, "input-held").get(held).copied();
        let pressed_at = key_held.unwrap_or(key_at);
        let dings = host_times(&harness.agent, "delivery");
        let ours: Vec<i64> = dings[deliveries..].to_vec();
        let offset = harness
            .acted_at(action, &name, deliveries, calls)
            .map(|acted| pressed_at - acted);
        let composer = (harness.composer)(&idle);
        let text = match &composer {
            ComposerContent::Text(text) | ComposerContent::Tail { tail: text, .. } => text.clone(),
            _ => String::new(),
        };
        let glued = text.contains("[ding]");
        if key_held.is_some() {
            // Held behind the paste: it went on only after DING's Return.
            assert!(
                ours.len() >= 2 && ours[1] <= key_at,
                "{harness_name} {action:?} trial {n}: a held key went on before DING's Return: {ours:?}, key at {key_at}"
            );
        }
        // DING wrote nothing after the key but a Return under its fence:
        // never its paste, never a Return after a key that followed it.
        let after_key: Vec<&i64> = ours.iter().filter(|at| **at > key_at).collect();
        assert!(
            after_key.is_empty(),
            "{harness_name} {action:?} trial {n}: DING wrote after the person's key at {key_at}: {ours:?}"
        );
        assert!(
            text.contains(KEY) && !typing.undone().is_some_and(|typo| text.contains(typo)),
            "{harness_name} {action:?} trial {n}: the keys were not as typed: {composer:?}"
        );
        assert!(
            !glued,
            "{harness_name} {action:?} trial {n}: the notice and the key share the composer (key {}held, reached the terminal at {key_at}, DING wrote at {ours:?}): {composer:?}",
            if key_held.is_some() { "" } else { "not " }
        );
        for prompt in harness.prompts().iter().skip(calls) {
            assert!(
                !(prompt.starts_with("[ding]") && prompt.contains(KEY)),
                "{harness_name} {action:?} trial {n}: a turn of DING's carried the key: {prompt:?}"
            );
        }
        seen.push(Trial {
            offset,
            held: key_held.is_some(),
            withdrawn: host_times(&harness.agent, "withdrawn").len() > withdrawals,
        });
        // The person sends what they have: it carries the message if DING
        // held it.
        press_enter(&harness.agent);
        wait_carrying(&harness.model, &name);
        harness.idle_and_empty("idle after the trial");
    }
    let held = seen.iter().filter(|trial| trial.held).count();
    let withdrawn = seen.iter().filter(|trial| trial.withdrawn).count();
    let offsets: Vec<String> = seen
        .iter()
        .map(|trial| trial.offset.map_or("-".into(), |ms| format!("{ms:+}")))
        .collect();
    eprintln!(
        "{harness_name} {action:?} ({idle_path}, {typing:?}): {} trials, DING acted {lead} ms after arrival; key offsets (ms) {}; key swallowed 0, DING wrote after the key 0, notice and key in one composer 0, key held behind DING's paste until its Return {held}, paste taken back out before the keys {withdrawn}",
        seen.len(),
        offsets.join(" ")
    );
}

#[test]
fn claude_typed_notice_paste() {
    run("claude", "terminal", Action::Paste);
}

#[test]
fn claude_typed_notice_return() {
    run("claude", "terminal", Action::Return);
}

/// A typo and its Backspace right after DING's paste: the paste is taken
/// back out (40 Ctrl-U, 100 ms after it) before the keys go on.
#[test]
fn claude_typed_notice_paste_then_an_edit() {
    run_typing("claude", "terminal", Action::Paste, Keys::KeyTypoBackspace);
}

#[test]
fn claude_wake() {
    run("claude", "native", Action::Turn);
}

#[test]
fn codex_typed_notice_paste() {
    run("codex", "terminal", Action::Paste);
}

#[test]
fn codex_typed_notice_return() {
    run("codex", "terminal", Action::Return);
}

/// A typo and its Backspace right after DING's paste: the paste is taken
/// back out (Ctrl-U) before the keys go on.
#[test]
fn codex_typed_notice_paste_then_an_edit() {
    run_typing("codex", "terminal", Action::Paste, Keys::KeyTypoBackspace);
}

#[test]
fn codex_queued_turn() {
    run("codex", "native", Action::Turn);
}
