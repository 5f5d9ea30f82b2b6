//! The status document: what a sidecar answers `ding status` with, defined
//! once for the sidecar that writes it and the CLI that reads it back.
//!
//! Why typed: with 100,000 unread messages the document is about 19 MB, and
//! building it as a `serde_json::Value` first cost a tree of maps ten times
//! that size, which the allocator then kept. Serializing borrowed parts
//! writes the bytes once and holds nothing afterwards.
//!
//! Why one definition: the sidecar writes a [`StatusDocument`] that borrows
//! from its runtime, and `ding status`, `ding ls` and `ding up` read the
//! same struct back with owned parts ([`LiveStatus`]), so the two sides
//! cannot disagree on a name or a type. A sidecar that does not run has no
//! memory to answer from: `ding status` then lists the inbox from disk as a
//! [`DiskStatus`], whose fields are fields of the live document with the
//! same names and types; it knows less, so it has fewer. [`StatusReport`]
//! is either.
//!
//! A reply that is not a document of this version (from a sidecar of
//! another version, a refusal, another program on the socket) is an
//! [`UnreadableStatus`] saying why, never a document pieced together from
//! what parsed.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, Error as _, Unexpected};
use serde::{Deserialize, Serialize, Serializer};

use super::inbox::Unreadable;
use crate::core::config::Policy;
use crate::core::message::MessageName;
use crate::core::ownership::MessageState;
use crate::core::status::EngineStatus;
use crate::decl::FingerprintInput;
use crate::escape::escape_bytes;
use crate::log_file::LogFailure;

/// The document a running sidecar answers with. The sidecar fills it with
/// borrowed parts; read back it owns them ([`LiveStatus`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDocument<'a> {
    pub agent: Cow<'a, str>,
    pub running: Running<true>,
    pub pid: u32,
    pub uptime_ms: u64,
    pub policy: Policy,
    pub fingerprint: String,
    pub fingerprint_input: FingerprintInput,
    /// The declaration file the sidecar was started from: whose agent it is.
    #[serde(serialize_with = "lossy_path")]
    pub declaration: Cow<'a, Path>,
    #[serde(serialize_with = "lossy_path")]
    pub inbox: Cow<'a, Path>,
    #[serde(serialize_with = "lossy_path")]
    pub pty_socket: PathBuf,
    pub pty_connected: bool,
    pub adapter_command: Option<Cow<'a, [String]>>,
    pub adapter_pid: Option<u32>,
    #[serde(serialize_with = "lossy_path")]
    pub journal: PathBuf,
    /// Why the journal found at start was quarantined.
    pub journal_warning: Option<Cow<'a, str>>,
    /// Why saving the journal fails, while it does.
    pub journal_write_error: Option<Cow<'a, str>>,
    /// Since when the sidecar's log writes fail, while they do.
    pub log_write_failure: Option<Cow<'a, LogFailure>>,
    pub unreadable: Vec<UnreadableView>,
    pub engine: EngineStatus,
    /// One human line per message, in FIFO order (what `ding status` shows).
    pub lines: Vec<String>,
}

/// A running sidecar's document as the CLI reads it back.
pub type LiveStatus = StatusDocument<'static>;

/// The document of an agent whose sidecar does not answer, listed from
/// disk: the inbox is the authority for what is unread, and the journal
/// says which files were rung or hook-owned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiskStatus {
    pub agent: String,
    pub running: Running<false>,
    /// What the sidecar last recorded, and the inbox it names; absent when
    /// no sidecar ever recorded anything (a PTY host ran without one).
    #[serde(flatten)]
    pub recorded: Option<Recorded>,
    pub engine: DiskEngine,
    /// One human line per message, in FIFO order.
    pub lines: Vec<String>,
}

/// The part of a [`DiskStatus`] that the agent record and its inbox give.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    /// `None` for a policy token this ding does not know (a record written
    /// by another version).
    pub policy: Option<Policy>,
    pub fingerprint: String,
    pub fingerprint_input: FingerprintInput,
    #[serde(serialize_with = "lossy_path")]
    pub declaration: PathBuf,
    #[serde(serialize_with = "lossy_path")]
    pub inbox: PathBuf,
    /// Why the journal on disk cannot be read, when it cannot.
    pub journal_warning: Option<String>,
    pub unreadable: Vec<UnreadableView>,
}

/// The engine part of a [`DiskStatus`]: only what is unread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskEngine {
    pub unread: usize,
    pub messages: Vec<DiskMessage>,
}

/// An unread file in the state a sidecar started now would restore it to
/// ([`MessageState::restored`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskMessage {
    pub name: MessageName,
    #[serde(flatten)]
    pub state: MessageState,
}

/// A status document, from a live sidecar or from disk; serialized as the
/// one it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum StatusReport {
    Live(Box<LiveStatus>),
    FromDisk(Box<DiskStatus>),
}

/// `running` on the wire: `true` in the document a live sidecar answers
/// with, `false` in one listed from disk. Each document's type fixes the
/// value, so no reader has to trust the flag: a document that says the
/// other is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Running<const RUNNING: bool>;

/// An entry of `new/` that cannot be a message, as status shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadableView {
    /// The name as people see it, escaped by the one rule
    /// ([`crate::escape`]): a byte that is not UTF-8 is `\x{hex}`,
    /// so the entry can be found and renamed.
    pub name: String,
    /// Why it is not delivered, in words.
    pub reason: String,
}

/// Why a sidecar's reply is not a status document this ding can read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnreadableStatus {
    /// The sidecar refused the request (`{"error": CODE, "message": ...}`).
    Refused {
        error: String,
        message: Option<String>,
    },
    /// Not a status document of this version: a sidecar of an older or
    /// newer ding, or not a sidecar at all. `detail` is the parser's.
    Foreign { detail: String },
}

impl UnreadableView {
    pub fn of(entry: &Unreadable) -> UnreadableView {
        UnreadableView {
            name: escape_bytes(entry.name.as_encoded_bytes()),
            reason: entry.reason.to_string(),
        }
    }
}

impl StatusDocument<'_> {
    /// The document as one JSON line (no newline).
    pub fn to_json(&self) -> Vec<u8> {
        match serde_json::to_vec(self) {
            Ok(bytes) => bytes,
            Err(err) => serde_json::json!({
                "error": "status-unserializable",
                "message": err.to_string(),
            })
            .to_string()
            .into_bytes(),
        }
    }
}

impl LiveStatus {
    /// Reads a sidecar's reply line (without its newline).
    pub fn from_reply(line: &[u8]) -> Result<LiveStatus, UnreadableStatus> {
        /// What a sidecar answers instead of a document.
        #[derive(Deserialize)]
        struct Refusal {
            error: String,
            #[serde(default)]
            message: Option<String>,
        }
        let err = match serde_json::from_slice::<LiveStatus>(line) {
            Ok(status) => return Ok(status),
            Err(err) => err,
        };
        Err(match serde_json::from_slice::<Refusal>(line) {
            Ok(Refusal { error, message }) => UnreadableStatus::Refused { error, message },
            Err(_) => UnreadableStatus::Foreign {
                detail: err.to_string(),
            },
        })
    }
}

impl StatusReport {
    /// The running sidecar's document, if this is one.
    pub fn live(&self) -> Option<&LiveStatus> {
        match self {
            StatusReport::Live(status) => Some(status),
            StatusReport::FromDisk(_) => None,
        }
    }

    pub fn agent(&self) -> &str {
        match self {
            StatusReport::Live(status) => &status.agent,
            StatusReport::FromDisk(status) => &status.agent,
        }
    }

    fn recorded(&self) -> Option<&Recorded> {
        match self {
            StatusReport::Live(_) => None,
            StatusReport::FromDisk(status) => status.recorded.as_ref(),
        }
    }

    pub fn policy(&self) -> Option<Policy> {
        match self {
            StatusReport::Live(status) => Some(status.policy),
            StatusReport::FromDisk(_) => self.recorded().and_then(|recorded| recorded.policy),
        }
    }

    pub fn fingerprint(&self) -> Option<&str> {
        match self {
            StatusReport::Live(status) => Some(&status.fingerprint),
            StatusReport::FromDisk(_) => self.recorded().map(|r| r.fingerprint.as_str()),
        }
    }

    pub fn declaration(&self) -> Option<&Path> {
        match self {
            StatusReport::Live(status) => Some(&status.declaration),
            StatusReport::FromDisk(_) => self.recorded().map(|r| r.declaration.as_path()),
        }
    }

    pub fn inbox(&self) -> Option<&Path> {
        match self {
            StatusReport::Live(status) => Some(&status.inbox),
            StatusReport::FromDisk(_) => self.recorded().map(|r| r.inbox.as_path()),
        }
    }

    pub fn journal_warning(&self) -> Option<&str> {
        match self {
            StatusReport::Live(status) => status.journal_warning.as_deref(),
            StatusReport::FromDisk(_) => self.recorded()?.journal_warning.as_deref(),
        }
    }

    pub fn unreadable(&self) -> &[UnreadableView] {
        match self {
            StatusReport::Live(status) => &status.unreadable,
            StatusReport::FromDisk(_) => self.recorded().map_or(&[], |r| &r.unreadable),
        }
    }

    /// How many messages are unread.
    pub fn unread(&self) -> usize {
        match self {
            StatusReport::Live(status) => status.engine.unread,
            StatusReport::FromDisk(status) => status.engine.unread,
        }
    }

    /// The human lines, one per unread message in FIFO order.
    pub fn lines(&self) -> &[String] {
        match self {
            StatusReport::Live(status) => &status.lines,
            StatusReport::FromDisk(status) => &status.lines,
        }
    }
}

impl fmt::Display for UnreadableStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnreadableStatus::Refused { error, message } => {
                write!(f, "the sidecar refused the status request: {error}")?;
                match message {
                    Some(message) => write!(f, " ({message})"),
                    None => Ok(()),
                }
            }
            UnreadableStatus::Foreign { detail } => write!(
                f,
                "the sidecar's status is not one this ding reads ({detail}): \
                 a sidecar of another version? `ding up --replace` restarts it"
            ),
        }
    }
}

impl std::error::Error for UnreadableStatus {}

impl<const RUNNING: bool> Serialize for Running<RUNNING> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(RUNNING)
    }
}

impl<'de, const RUNNING: bool> Deserialize<'de> for Running<RUNNING> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let running = bool::deserialize(deserializer)?;
        if running != RUNNING {
            let expected = if RUNNING {
                "`true`: a running sidecar's document"
            } else {
                "`false`: a document listed from disk"
            };
            return Err(D::Error::invalid_value(
                Unexpected::Bool(running),
                &expected,
            ));
        }
        Ok(Running)
    }
}

/// Paths that are not UTF-8 are shown lossily rather than failing the whole
/// answer (serde refuses them).
fn lossy_path<S: serde::Serializer>(path: &impl AsRef<Path>, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(&path.as_ref().to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::adapter::AdapterPhase;
    use crate::core::config::Fence;
    use crate::core::decision::ReleaseCause;
    use crate::core::hold::{AdapterDown, HoldReason, HoldSource};
    use crate::core::identity::Identity;
    use crate::core::lease::{Lease, LeaseSlot, RevisionSource};
    use crate::core::protocol::Composer;
    use crate::core::status::{
        AdapterStatus, EvidenceView, Freshness, HoldView, LeaseStatus, MessageStatus,
        MessageWindow, PtyView, StateCounts,
    };
    use crate::core::time::Time;
    use serde_json::Value;

    fn name(text: &str) -> MessageName {
        MessageName::new(text).expect("a message name")
    }

    fn fingerprint_input() -> FingerprintInput {
        FingerprintInput {
            version: 2,
            agent: "w".into(),
            inbox: "/inbox/w".into(),
            delivery: "turn-boundary+fresh-idle".into(),
            adapter_command: Some(vec!["adapter".into(), "--x".into()]),
            lease_cap_ms: 2000,
            adapter_silence_ms: 30_000,
            re_ring_after_ms: Some(600_000),
            submit_delay_ms: 200,
            notice_max_files: 16,
            unsafe_receipt_fence: true,
            quiet_input_ms: Some(300),
            settled_output_ms: Some(250),
            gather_quiet_ms: Some(1_000),
            gather_cap_ms: Some(3_000),
        }
    }

    fn identity() -> Identity {
        Identity {
            session: "h.w".into(),
            incarnation: "i1".into(),
            generation: "g1".into(),
        }
    }

    /// An engine status with every optional part present: a message in
    /// each state, each held and given back.
    fn engine(phase: AdapterPhase) -> EngineStatus {
        let held = HoldView {
            reason: HoldReason::ComposerNonempty,
            source: HoldSource::Adapter,
            since: Time::from_millis(900),
            said: Some("a draft in the composer".into()),
        };
        let states = [
            MessageState::Pending,
            MessageState::InFlight { request: 4 },
            MessageState::Staged {
                incarnation: Some("i1".into()),
                confirmed: false,
            },
            MessageState::HookOwned {
                incarnation: Some("i1".into()),
            },
        ];
        let messages: Vec<MessageStatus> = states
            .into_iter()
            .enumerate()
            .map(|(at, state)| MessageStatus {
                name: name(&format!("{at}.md")),
                state,
                since: Time::from_millis(100),
                hold: Some(held.clone()),
                given_back: Some(ReleaseCause::NoReceipt),
            })
            .collect();
        EngineStatus {
            policy: Policy::TurnBoundaryFreshIdle,
            now: Time::from_millis(1000),
            adapter: AdapterStatus {
                phase,
                next_backoff_ms: 250,
            },
            lease: LeaseStatus {
                slot: LeaseSlot::Granted(Lease {
                    identity: identity(),
                    sequence: 7,
                    granted_at: Time::from_millis(950),
                    expires_at: Time::from_millis(1950),
                    composer: Composer::Empty,
                    revision: Some(12),
                    revision_source: Some(RevisionSource::Evidence),
                    typed: None,
                    withdraw: None,
                }),
                freshness: Freshness::Fresh,
                age_ms: Some(50),
                remaining_ms: Some(950),
            },
            pty: PtyView {
                reachable: true,
                identity: Some(identity()),
                revision: Some(12),
            },
            evidence: EvidenceView {
                wanted: true,
                since: Some(Time::from_millis(10)),
                fence: Fence::ReceiptUnsafe,
                adapter_reason: Some("hooks configured".into()),
                adapter_reason_at: Some(Time::from_millis(10)),
            },
            in_flight: Some(4),
            unread: messages.len(),
            pending: 1,
            by_state: StateCounts {
                pending: 1,
                in_flight: 1,
                staged: 1,
                hook_owned: 1,
            },
            hold: Some(held.clone()),
            window: Some(MessageWindow::Ends(5)),
            messages,
        }
    }

    fn up() -> AdapterPhase {
        AdapterPhase::Up {
            pid: 7,
            since: Time::from_millis(5),
            last_line: Some(Time::from_millis(990)),
            last_sequence: Some(7),
        }
    }

    /// A document with every field present, borrowing what the sidecar
    /// borrows.
    fn document<'a>(
        command: &'a [String],
        failure: &'a LogFailure,
        engine: EngineStatus,
    ) -> StatusDocument<'a> {
        StatusDocument {
            agent: Cow::Borrowed("w"),
            running: Running,
            pid: 42,
            uptime_ms: 1000,
            policy: Policy::TurnBoundaryFreshIdle,
            fingerprint: "sha256:00".into(),
            fingerprint_input: fingerprint_input(),
            declaration: Cow::Borrowed(Path::new("/decl/w.kdl")),
            inbox: Cow::Borrowed(Path::new("/inbox/w")),
            pty_socket: "/run/w/pty.sock".into(),
            pty_connected: true,
            adapter_command: Some(Cow::Borrowed(command)),
            adapter_pid: Some(7),
            journal: "/state/w/journal.json".into(),
            journal_warning: Some(Cow::Borrowed("quarantined")),
            journal_write_error: Some(Cow::Borrowed("disk full")),
            log_write_failure: Some(Cow::Borrowed(failure)),
            unreadable: vec![UnreadableView {
                name: "bad\\x{ff}.md".into(),
                reason: "not UTF-8".into(),
            }],
            lines: engine
                .messages
                .iter()
                .map(|m| m.describe(engine.now))
                .collect(),
            engine,
        }
    }

    fn failure() -> LogFailure {
        LogFailure {
            since: "2026-01-01T00:00:00.000Z".into(),
            lost_lines: 3,
            error: "No space left on device".into(),
        }
    }

    /// The JSON paths that hold `null`.
    fn nulls(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Null => found.push(at.to_string()),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    nulls(item, &format!("{at}[{index}]"), found);
                }
            }
            Value::Object(fields) => {
                for (key, item) in fields {
                    nulls(item, &format!("{at}.{key}"), found);
                }
            }
            _ => {}
        }
    }

    /// What the sidecar writes, `ding status` reads back field for field:
    /// read back and written again, the document is the same bytes. The
    /// document has every optional part present, so no field can be lost
    /// unseen as a `null`.
    #[test]
    fn a_live_document_reads_back_field_for_field() {
        let command = vec!["adapter".to_string(), "--x".to_string()];
        let failure = failure();
        let phases = [
            up(),
            AdapterPhase::Disabled,
            AdapterPhase::Starting {
                since: Time::from_millis(3),
            },
            AdapterPhase::Down {
                since: Time::from_millis(3),
                down: AdapterDown::SpawnFailed {
                    error: "no such file".into(),
                },
                retry_at: Time::from_millis(1250),
            },
        ];
        for (at, phase) in phases.into_iter().enumerate() {
            let mut engine = engine(phase);
            if at > 0 {
                engine.lease.slot = LeaseSlot::Ended {
                    reason: HoldReason::AdapterDown {
                        down: AdapterDown::Exited {
                            status: "exit code 3".into(),
                        },
                    },
                    at: Time::from_millis(800),
                };
                engine.lease.freshness = Freshness::NoLease;
            }
            let written = document(&command, &failure, engine).to_json();
            if at == 0 {
                let value: Value = serde_json::from_slice(&written).expect("JSON");
                let mut found = Vec::new();
                nulls(&value, "", &mut found);
                assert!(found.is_empty(), "not every part is present: {found:?}");
            }
            let read = LiveStatus::from_reply(&written).expect("reads back");
            assert_eq!(
                String::from_utf8_lossy(&read.to_json()),
                String::from_utf8_lossy(&written)
            );
            assert_eq!(read, document(&command, &failure, read.engine.clone()));
        }
    }

    fn disk_status() -> DiskStatus {
        let messages = vec![
            DiskMessage {
                name: name("a.md"),
                state: MessageState::Pending,
            },
            DiskMessage {
                name: name("b.md"),
                state: MessageState::Staged {
                    incarnation: Some("i1".into()),
                    confirmed: true,
                },
            },
            DiskMessage {
                name: name("c.md"),
                state: MessageState::HookOwned {
                    incarnation: Some("i1".into()),
                },
            },
        ];
        DiskStatus {
            agent: "w".into(),
            running: Running,
            recorded: Some(Recorded {
                policy: Some(Policy::TurnBoundaryFreshIdle),
                fingerprint: "sha256:00".into(),
                fingerprint_input: fingerprint_input(),
                declaration: "/decl/w.kdl".into(),
                inbox: "/inbox/w".into(),
                journal_warning: Some("unreadable".into()),
                unreadable: vec![UnreadableView {
                    name: "bad.md".into(),
                    reason: "a directory".into(),
                }],
            }),
            engine: DiskEngine {
                unread: messages.len(),
                messages,
            },
            lines: vec!["a.md  held: sidecar not running".into()],
        }
    }

    /// Where `disk` has something `live` does not have in the same place
    /// with the same JSON type; an element of an array fits any element
    /// of the other's.
    fn misfit(disk: &Value, live: &Value, at: &str) -> Option<String> {
        match (disk, live) {
            (Value::Object(disk), Value::Object(live)) => disk.iter().find_map(|(key, value)| {
                let at = format!("{at}.{key}");
                match live.get(key) {
                    Some(other) => misfit(value, other, &at),
                    None => Some(at),
                }
            }),
            (Value::Array(disk), Value::Array(live)) => disk.iter().find_map(|value| {
                live.iter()
                    .all(|other| misfit(value, other, at).is_some())
                    .then(|| format!("{at}[{value}]"))
            }),
            (Value::String(_), Value::String(_))
            | (Value::Number(_), Value::Number(_))
            | (Value::Bool(_), Value::Bool(_)) => None,
            _ => Some(at.to_string()),
        }
    }

    /// A document listed from disk is the live one with less in it: each
    /// of its fields is where the live document has it, with its type, and
    /// it reads back as written.
    #[test]
    fn a_document_from_disk_has_the_shape_of_a_live_one() {
        let command = vec!["adapter".to_string()];
        let failure = failure();
        let live = serde_json::to_value(document(&command, &failure, engine(up()))).expect("live");
        let disk = disk_status();
        let json = serde_json::to_value(&disk).expect("disk");
        assert_eq!(
            misfit(&json, &live, ""),
            None,
            "{json:#}\n\ndoes not fit\n\n{live:#}"
        );
        let mut stray = json.clone();
        stray["engine"]["messages"][1]["sinse"] = 5.into();
        assert!(
            misfit(&stray, &live, "").is_some(),
            "the check sees a stray"
        );
        let read: DiskStatus = serde_json::from_value(json).expect("reads back");
        assert_eq!(read, disk);

        // With no record, what every document has, as before.
        let bare = DiskStatus {
            recorded: None,
            engine: DiskEngine::default(),
            lines: Vec::new(),
            ..disk
        };
        let json = serde_json::to_value(&bare).expect("bare");
        assert_eq!(
            json,
            serde_json::json!({
                "agent": "w",
                "running": false,
                "engine": {"unread": 0, "messages": []},
                "lines": [],
            })
        );
        let read: DiskStatus = serde_json::from_value(json).expect("reads back");
        assert_eq!(read, bare);
    }

    /// A reply that is not a document of this version is a typed error
    /// saying why; a field that is optional may be absent, as from an
    /// older sidecar that did not write it yet.
    #[test]
    fn a_reply_of_another_version_is_a_typed_error_never_a_guess() {
        let command = vec!["adapter".to_string()];
        let failure = failure();
        let written = document(&command, &failure, engine(up())).to_json();
        let live: Value = serde_json::from_slice(&written).expect("JSON");
        let reply = |edit: &dyn Fn(&mut Value)| {
            let mut value = live.clone();
            edit(&mut value);
            LiveStatus::from_reply(value.to_string().as_bytes())
        };
        let foreign = |result: Result<LiveStatus, UnreadableStatus>, says: &str| match result {
            Err(UnreadableStatus::Foreign { detail }) => {
                assert!(detail.contains(says), "{detail:?} does not say {says:?}")
            }
            other => panic!("expected a foreign document ({says}), got {other:?}"),
        };
        foreign(
            reply(&|v| {
                v.as_object_mut().expect("object").remove("engine");
            }),
            "missing field `engine`",
        );
        foreign(
            reply(&|v| v["engine"]["messages"][0]["hold"]["code"] = "gremlins".into()),
            "gremlins",
        );
        foreign(
            reply(&|v| v["engine"]["adapter"]["state"] = "asleep".into()),
            "asleep",
        );
        foreign(reply(&|v| v["running"] = false.into()), "running sidecar");
        foreign(reply(&|v| v["pid"] = "seven".into()), "seven");
        foreign(
            LiveStatus::from_reply(b"SSH-2.0-OpenSSH_9.6"),
            "expected value",
        );
        foreign(LiveStatus::from_reply(b""), "EOF");
        let disk = serde_json::to_vec(&disk_status()).expect("disk");
        foreign(LiveStatus::from_reply(&disk), "running sidecar");

        assert_eq!(
            LiveStatus::from_reply(br#"{"error":"oversized-request"}"#),
            Err(UnreadableStatus::Refused {
                error: "oversized-request".into(),
                message: None,
            })
        );
        let refused = LiveStatus::from_reply(br#"{"error":"malformed-request","message":"m"}"#)
            .expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "the sidecar refused the status request: malformed-request (m)"
        );

        let older = reply(&|v| {
            let fields = v.as_object_mut().expect("object");
            fields.remove("journalWriteError");
            fields.remove("logWriteFailure");
        })
        .expect("optional fields may be absent");
        assert_eq!(older.journal_write_error, None);
        assert_eq!(older.log_write_failure, None);
    }
}
