//! Fixture-driven tests of the core engine: every file in `fixtures/core/`
//! is a generic session script (JSONL) with the decisions it must produce.
//! The format is documented in `fixtures/core/README.md`.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ding::core::config::{EngineConfig, Policy};
use ding::core::engine::{Engine, Input};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::ownership::MessageState;
use ding::core::status::Freshness;
use ding::core::time::Time;
use serde_json::{Map, Value, json};
use support::core_driver::{Driver, decision_tags};

const SESSION: &str = "host.worker";
const INCARNATION: &str = "inc-1";
const GENERATION: &str = "sha256:gen-1";

struct Script {
    driver: Driver,
    identity: Identity,
    sequence: u64,
    zero_sends: bool,
    every_name: Vec<String>,
    ever_sent: usize,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/core")
}

fn name(text: &str) -> MessageName {
    MessageName::new(text).unwrap_or_else(|err| panic!("bad name {text:?}: {err}"))
}

fn config_from(header: &Map<String, Value>) -> EngineConfig {
    let policy = header
        .get("policy")
        .and_then(Value::as_str)
        .unwrap_or("turn-boundary+fresh-idle");
    let policy = Policy::from_token(policy).expect("policy token");
    let mut config = EngineConfig::new(policy, "worker", "inbox/new");
    let tunables = header
        .get("tunables")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (key, value) in tunables {
        let millis = || Duration::from_millis(value.as_u64().expect("milliseconds"));
        match key.as_str() {
            "leaseCapMs" => config.tunables.lease_cap = millis(),
            "adapterSilenceMs" => config.tunables.adapter_silence = millis(),
            "reRingAfterMs" => {
                config.tunables.re_ring_after = value.as_u64().map(Duration::from_millis)
            }
            "noticeMaxFiles" => config.tunables.notice_max_files = value.as_u64().unwrap() as usize,
            "gatherQuietMs" => config.tunables.gather_quiet = millis(),
            "gatherCapMs" => config.tunables.gather_cap = millis(),
            "ptyReplyTimeoutMs" => config.pty_reply_timeout = millis(),
            "unsafeReceiptFence" => {
                if value.as_bool().expect("a boolean") {
                    config.tunables.fence = ding::core::config::Fence::ReceiptUnsafe;
                }
            }
            other => panic!("unknown tunable {other}"),
        }
    }
    config
}

impl Script {
    fn new(header: &Map<String, Value>) -> Script {
        let config = config_from(header);
        let careful = config.policy.uses_adapter();
        let mut script = Script {
            driver: Driver::new(Engine::new(config, None, Time::ZERO)),
            identity: Identity {
                session: SESSION.into(),
                incarnation: INCARNATION.into(),
                generation: GENERATION.into(),
            },
            sequence: 0,
            zero_sends: header
                .get("zeroSends")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            every_name: Vec::new(),
            ever_sent: 0,
        };
        if header.get("setup").and_then(Value::as_bool).unwrap_or(true) {
            if careful {
                script
                    .driver
                    .input(Input::AdapterSpawned { pid: 100 }, Time::ZERO);
            }
            let identity = script.identity.clone();
            script.driver.input(
                Input::PtyStatus {
                    identity,
                    revision: 10,
                },
                Time::ZERO,
            );
        }
        script.driver.take();
        script
    }

    fn event_line(&mut self, step: &Map<String, Value>) -> Vec<u8> {
        let mut line = Map::new();
        line.insert("v".into(), json!(1));
        line.insert("session".into(), json!(self.identity.session));
        line.insert("incarnation".into(), json!(self.identity.incarnation));
        line.insert("generation".into(), json!(self.identity.generation));
        self.sequence += 1;
        line.insert("sequence".into(), json!(self.sequence));
        for (key, value) in step {
            if key != "at" && key != "in" {
                line.insert(key.clone(), value.clone());
            }
        }
        if let Some(sequence) = line.get("sequence").and_then(Value::as_u64) {
            self.sequence = self.sequence.max(sequence);
        }
        serde_json::to_vec(&Value::Object(line)).unwrap()
    }

    fn step(&mut self, step: &Map<String, Value>) {
        let at = Time::from_millis(
            step.get("at")
                .and_then(Value::as_u64)
                .unwrap_or(self.driver.now.as_millis()),
        );
        let text = |key: &str| {
            step.get(key)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{key}"))
                .to_string()
        };
        let number = |key: &str| {
            step.get(key)
                .and_then(Value::as_u64)
                .unwrap_or_else(|| panic!("{key}"))
        };
        let kind = text("in");
        let input = match kind.as_str() {
            "timeout" => return self.driver.run_until(at),
            "scan" => {
                let listed: Vec<String> = step["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect();
                self.every_name.extend(listed.iter().cloned());
                Input::InboxScan(listed.iter().map(|n| name(n)).collect())
            }
            "added" => {
                self.every_name.push(text("name"));
                Input::InboxAdded(name(&text("name")))
            }
            "removed" => {
                let gone = text("name");
                self.every_name.retain(|n| *n != gone);
                Input::InboxRemoved(name(&gone))
            }
            "adapter-spawned" => {
                self.sequence = 0;
                Input::AdapterSpawned {
                    pid: number("pid") as u32,
                }
            }
            "event" => Input::AdapterLine(self.event_line(step)),
            "adapter-raw" => Input::AdapterLine(text("text").into_bytes()),
            "adapter-hex" => Input::AdapterLine(hex(&text("hex"))),
            "line-too-long" => Input::AdapterLineTooLong {
                len: number("len") as usize,
            },
            "eof" => Input::AdapterEof,
            "exited" => Input::AdapterExited {
                status: text("status"),
            },
            "spawn-failed" => Input::AdapterSpawnFailed {
                error: text("error"),
            },
            "pty-status" => {
                let field = |key: &str, default: &str| {
                    step.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or(default)
                        .to_string()
                };
                self.identity = Identity {
                    session: field("session", &self.identity.session),
                    incarnation: field("incarnation", &self.identity.incarnation),
                    generation: field("generation", &self.identity.generation),
                };
                Input::PtyStatus {
                    identity: self.identity.clone(),
                    revision: number("revision"),
                }
            }
            "sent" => Input::PtySent {
                request: number("request"),
                revision: number("revision"),
            },
            "conflict" => Input::PtyConflict {
                request: number("request"),
                actual: number("actual"),
            },
            "pty-error" => Input::PtyError {
                request: number("request"),
                detail: text("detail"),
            },
            "pty-unreachable" => Input::PtyUnreachable,
            other => panic!("unknown step {other}"),
        };
        self.driver.run_until(at);
        self.driver.input(input, at);
    }

    fn expect(&mut self, expect: &Map<String, Value>, line: usize) {
        let (emitted, order) = self.driver.take();
        self.ever_sent += emitted.sends.len() + emitted.send_ifs.len();
        let now = self.driver.now;
        let status = self.driver.engine.status(now);
        let here = format!("expectation on line {line}");
        for (key, want) in expect {
            match key.as_str() {
                "sends" => assert_eq!(
                    emitted.sends.len() as u64,
                    want.as_u64().unwrap(),
                    "{here}: plain sends"
                ),
                "sendIfs" => {
                    assert_eq!(
                        emitted.send_ifs.len() as u64,
                        want.as_u64().unwrap(),
                        "{here}: conditional sends"
                    )
                }
                "rang" => {
                    let want: Vec<Vec<String>> = serde_json::from_value(want.clone()).unwrap();
                    assert_eq!(emitted.rang(&order), want, "{here}: transactions");
                }
                "expectedRevision" => {
                    let last = emitted
                        .send_ifs
                        .last()
                        .unwrap_or_else(|| panic!("{here}: no send-if"));
                    assert_eq!(
                        last.expected_revision,
                        want.as_u64().unwrap(),
                        "{here}: fence revision"
                    );
                    assert_eq!(last.identity, self.identity, "{here}: fence identity");
                }
                "spawns" => assert_eq!(
                    emitted.spawns as u64,
                    want.as_u64().unwrap(),
                    "{here}: adapter spawns"
                ),
                "unread" => {
                    let want: Vec<String> = serde_json::from_value(want.clone()).unwrap();
                    let got: Vec<String> =
                        status.messages.iter().map(|m| m.name.to_string()).collect();
                    assert_eq!(got, want, "{here}: unread in FIFO order");
                }
                "states" => {
                    let want: BTreeMap<String, String> =
                        serde_json::from_value(want.clone()).unwrap();
                    for (file, state) in want {
                        let got = status
                            .messages
                            .iter()
                            .find(|m| m.name.as_str() == file)
                            .map(|m| state_code(&m.state))
                            .unwrap_or("absent");
                        assert_eq!(got, state, "{here}: state of {file}");
                    }
                }
                "hold" => {
                    let got = status
                        .messages
                        .iter()
                        .find_map(|m| m.hold.as_ref())
                        .map(|h| h.reason.code());
                    assert_eq!(got, want.as_str(), "{here}: hold reason");
                }
                "lease" => assert_eq!(
                    serde_json::from_value::<Freshness>(want.clone()).unwrap(),
                    status.lease.freshness,
                    "{here}: lease"
                ),
                "deadline" => assert_eq!(
                    self.driver.engine.next_deadline().map(Time::as_millis),
                    want.as_u64(),
                    "{here}: next deadline"
                ),
                "journal" => {
                    let want: Vec<String> = serde_json::from_value(want.clone()).unwrap();
                    let got: Vec<String> = self
                        .driver
                        .engine
                        .journal()
                        .entries
                        .iter()
                        .map(|e| e.name.to_string())
                        .collect();
                    assert_eq!(got, want, "{here}: journaled ownership");
                }
                "decisions" => {
                    let want: Vec<String> = serde_json::from_value(want.clone()).unwrap();
                    let got = decision_tags(&emitted.records);
                    let mut rest = got.iter();
                    for wanted in &want {
                        assert!(
                            rest.any(|g| g == wanted),
                            "{here}: decision {wanted} not found in order within {got:?}"
                        );
                    }
                }
                "pendingIsHeldWith" => {
                    for message in status
                        .messages
                        .iter()
                        .filter(|m| m.state == MessageState::Pending)
                    {
                        let code = message.hold.as_ref().map(|h| h.reason.code());
                        assert_eq!(code, want.as_str(), "{here}: hold of {}", message.name);
                    }
                }
                other => panic!("{here}: unknown expectation {other}"),
            }
        }
    }

    /// The promise every configured hold case makes: zero PTY input and every
    /// file still unread, in FIFO order.
    fn finish(&mut self, path: &Path) {
        let (emitted, _) = self.driver.take();
        self.ever_sent += emitted.sends.len() + emitted.send_ifs.len();
        if self.zero_sends {
            assert_eq!(
                self.ever_sent,
                0,
                "{}: a zeroSends fixture sent PTY input",
                path.display()
            );
        }
        let status = self.driver.engine.status(self.driver.now);
        let mut want = self.every_name.clone();
        want.sort();
        want.dedup();
        let got: Vec<String> = status.messages.iter().map(|m| m.name.to_string()).collect();
        assert_eq!(
            got,
            want,
            "{}: every unread file is retained in FIFO order",
            path.display()
        );
    }
}

fn state_code(state: &MessageState) -> &'static str {
    match state {
        MessageState::Pending => "pending",
        MessageState::InFlight { .. } => "in-flight",
        MessageState::Staged {
            confirmed: true, ..
        } => "staged",
        MessageState::Staged {
            confirmed: false, ..
        } => "staged-unconfirmed",
        MessageState::HookOwned { .. } => "hook-owned",
    }
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn run_fixture(path: &Path) {
    let text = fs::read_to_string(path).unwrap();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with("//"));
    let (_, header) = lines.next().expect("header line");
    let header: Map<String, Value> = serde_json::from_str(header).expect("header is a JSON object");
    let mut script = Script::new(&header);
    for (index, line) in lines {
        let step: Map<String, Value> = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("{}:{}: {err}", path.display(), index + 1));
        match step.get("expect") {
            Some(Value::Object(expect)) => script.expect(expect, index + 1),
            _ => script.step(&step),
        }
    }
    script.finish(path);
}

fn fixtures() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(fixture_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_core_fixture_produces_its_expected_decisions() {
    let paths = fixtures();
    assert!(
        paths.len() >= 20,
        "expected the full seed list of fixtures, found {}",
        paths.len()
    );
    let mut failures = Vec::new();
    for path in &paths {
        let result = std::panic::catch_unwind(|| run_fixture(path));
        if let Err(panic) = result {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!(
                "{}: {message}",
                path.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The seed's list of cases, each of which must have its own fixture.
#[test]
fn the_seed_case_list_is_covered_by_fixtures() {
    let present: Vec<String> = fixtures()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let required = [
        "fresh-idle",
        "active",
        "child",
        "unknown",
        "stale",
        "unreachable",
        "malformed",
        "timeout",
        "adapter-error",
        "incarnation-mismatch",
        "generation-change",
        "compaction",
        "clear",
        "crash",
        "composer-empty",
        "composer-nonempty",
        "composer-unknown",
        "revision-exact",
        "revision-conflict",
        "turn-boundary-ownership",
        "archive-clears-ownership",
    ];
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|case| !present.iter().any(|p| p == case))
        .collect();
    assert!(
        missing.is_empty(),
        "seed cases without a fixture: {missing:?}"
    );
}
