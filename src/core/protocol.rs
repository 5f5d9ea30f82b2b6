//! Adapter protocol v1: one JSON object per line, adapter to sidecar.
//!
//! This module turns one raw line into a typed [`Event`] or a typed
//! [`ProtocolError`]. It is stateless: the sequence and identity checks need
//! the engine's memory and live in the engine. Unknown fields are ignored so
//! that v1 can grow optional fields; everything else that is off (version,
//! kind, a missing or mistyped field, bad JSON, bad UTF-8, an over-long line)
//! is an error, and the engine turns every error into a hold.
//!
//! The grammar is in `docs/vrs/01-ding/spec.md` §2 and, for adapter authors,
//! `docs/adapter-protocol.md`.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::identity::{ClaimedIdentity, Identity};
use super::json_reader::{JsonError, Kind, ObjectReader, Value};
use super::message::{InvalidName, MessageName};

/// The longest line the sidecar accepts, newline excluded. Longer lines are
/// held as [`ProtocolError::LineTooLong`] and never buffered whole.
pub const MAX_LINE_BYTES: usize = 65_536;

/// The longest `session`, `incarnation`, `generation` or `reason` value.
pub const MAX_FIELD_BYTES: usize = 1024;

/// The most bytes an activity's `withdraw` keys may take: a few keys (the
/// PTY host takes as many).
pub const MAX_WITHDRAW_BYTES: usize = 64;

/// The longest `withdrawAfterMs`: a person's input waits behind it (the
/// PTY host's bound for the wait of its withdraw steps).
pub const MAX_WITHDRAW_AFTER_MS: u64 = 500;

/// The most filenames one turn-boundary receipt may name.
pub const MAX_RECEIPT_MESSAGES: usize = 1024;

/// The most files one `claim` may ask for by count (`limit`).
pub const MAX_CLAIM_LIMIT: u64 = MAX_RECEIPT_MESSAGES as u64;

/// The largest `nameBytes` budget a claim may give.
pub const MAX_CLAIM_NAME_BYTES: u64 = 1 << 20;

/// The protocol version this module speaks.
pub const VERSION: u64 = 1;

/// One validated adapter event. Its strings borrow from the line where they
/// can, so a valid line is checked without allocating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event<'a> {
    pub identity: ClaimedIdentity<'a>,
    pub sequence: u64,
    pub body: Body<'a>,
}

/// What the event says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Body<'a> {
    Activity(Activity<'a>),
    TurnBoundary {
        messages: Vec<MessageName>,
    },
    Lifecycle {
        event: Lifecycle,
    },
    Claim(Claim),
    /// Files a claim granted whose hook never passed them on: they go back
    /// to unread work (only those that are hook-owned now).
    Release {
        messages: Vec<MessageName>,
        reason: Undelivered,
    },
}

/// Why a hook's answer carrying claimed files did not reach the harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Undelivered {
    /// The hook's connection closed (the harness killed it at its timeout,
    /// Ctrl-C, a crash) before the answer was written to it in full, or
    /// before the claim was even answered.
    HookGone,
    /// The hook read the answer but never confirmed that it passed it on
    /// (it died before printing it, or hung past the receipt deadline).
    NoReceipt,
    /// The answer was never given: a wake waiting for fresh idle was
    /// granted the files, and the screen read after the grant was no
    /// longer fresh idle, or a person's input had reached the terminal
    /// within `quiet-input` (or no reading came).
    Withheld,
}

/// A hook is about to put unread files into the harness's next context and
/// asks which it may take. The sidecar answers on the adapter's stdin
/// (`claimed`, see [`super::downlink`]); the files it grants are hook-owned
/// from that moment, so no file is both injected by a hook and typed into
/// the terminal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// The adapter's own id for this claim, echoed in the answer.
    pub claim: u64,
    pub wants: ClaimWants,
    pub scope: ClaimScope,
    /// The most bytes the granted names may take, escaped by the notice's
    /// rule and joined with `", "`, so that a hook with a bounded context
    /// can name every file it is granted. At least one claimable file is
    /// granted whatever its length.
    pub name_bytes: Option<u64>,
}

/// Which files a claim asks for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimWants {
    /// Exactly these (the hook listed `new/` itself).
    Named(Vec<MessageName>),
    /// The oldest files the scope allows, at most this many.
    Oldest(u64),
}

/// Which states of unread work a claim may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimScope {
    /// Only work that no one owns yet (the next prompt's new arrivals).
    Pending,
    /// Everything unread that no transaction is typing right now, including
    /// files already rung or injected: a new or compacted context surfaces
    /// the whole durable backlog again (save a file rung since the context
    /// began again: it was typed into the new one).
    Unread,
    /// Only files already handed to the harness (rung or injected) and
    /// still unread, as `unread` takes them: a context compacted with no
    /// request coming surfaces again what it was given, and leaves work no
    /// one owns yet to the idle path, which starts a turn for it.
    Delivered,
}

/// Activity evidence about the harness and its composer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Activity<'a> {
    pub state: ActivityState,
    /// How long the adapter vouches for this evidence, from receipt.
    #[serde(serialize_with = "serialize_millis")]
    pub valid_for: Duration,
    pub composer: Composer,
    /// The PTY revision at which the evidence was observed, if the adapter
    /// knows it.
    pub revision: Option<u64>,
    /// The request of the notice DING typed that the composer holds,
    /// exactly and alone, on this screen (told to the adapter by the
    /// downlink's `typed`): the evidence a notice's Return waits for.
    pub typed: Option<u64>,
    /// How to empty this composer of a line pasted into it, as the adapter
    /// knows its harness (spec §4.2): with an empty composer, the paste
    /// asks the PTY host to press them should a person's input come before
    /// its Return.
    pub withdraw: Option<WithdrawKeys<'a>>,
    /// Provider-opaque diagnostics; shown, never interpreted.
    pub reason: Option<Cow<'a, str>>,
}

/// An activity's `withdraw` and `withdrawAfterMs`: the keys (at most
/// [`MAX_WITHDRAW_BYTES`], never a line end) and how long after the paste
/// to press them (at most [`MAX_WITHDRAW_AFTER_MS`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WithdrawKeys<'a> {
    pub keys: Cow<'a, str>,
    pub after_ms: u64,
}

impl WithdrawKeys<'_> {
    /// The same keys, owning their text (a lease keeps them).
    pub fn into_owned(self) -> WithdrawKeys<'static> {
        WithdrawKeys {
            keys: Cow::Owned(self.keys.into_owned()),
            after_ms: self.after_ms,
        }
    }

    /// The PTY host's withdraw steps for them.
    pub fn transport(&self) -> super::transport::Transport {
        super::transport::Transport::withdraw(
            &self.keys,
            std::time::Duration::from_millis(self.after_ms),
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActivityState {
    Idle,
    Active,
    /// A child command (a tool run) is executing inside the harness.
    Child,
    Unknown,
}

/// The narrow composer guard: may the terminal's input line be typed into?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Composer {
    Empty,
    Nonempty,
    Unknown,
}

/// Facts about the harness's conversation that end any lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lifecycle {
    /// The context is being or was compacted. Ownership is kept.
    Compaction,
    /// The context was cleared: injected and rung work is no longer in it.
    Clear,
    /// The harness's conversation crashed or restarted and its context is gone.
    Crash,
}

/// Why a line is not a valid v1 event. Each variant is a hold reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "kebab-case")]
pub enum ProtocolError {
    /// The line exceeded [`MAX_LINE_BYTES`]; at least `len` bytes of it
    /// arrived (the runtime reports a line as soon as it passes the bound).
    LineTooLong { len: usize },
    /// The line is not UTF-8; `at` is the offset of the first bad byte.
    InvalidUtf8 { at: usize },
    /// The line is not one JSON object.
    MalformedJson { detail: String },
    /// `v` is present but is not 1.
    UnknownVersion { found: String },
    /// `kind` is not one this version defines.
    UnknownKind { found: String },
    /// `lifecycle.event` is not one this version defines.
    UnknownLifecycle { found: String },
    /// A field the kind requires is absent.
    MissingField { field: Cow<'static, str> },
    /// A field is present with the wrong type or an out-of-range value.
    InvalidField {
        field: Cow<'static, str>,
        detail: String,
    },
    /// The sequence did not increase (checked by the engine).
    StaleSequence { sequence: u64, last: u64 },
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::LineTooLong { len } => {
                write!(f, "line of at least {len} bytes exceeds {MAX_LINE_BYTES}")
            }
            ProtocolError::InvalidUtf8 { at } => write!(f, "invalid UTF-8 at byte {at}"),
            ProtocolError::MalformedJson { detail } => write!(f, "malformed JSON: {detail}"),
            ProtocolError::UnknownVersion { found } => write!(f, "unknown version {found}"),
            ProtocolError::UnknownKind { found } => write!(f, "unknown kind {found:?}"),
            ProtocolError::UnknownLifecycle { found } => {
                write!(f, "unknown lifecycle event {found:?}")
            }
            ProtocolError::MissingField { field } => write!(f, "missing field `{field}`"),
            ProtocolError::InvalidField { field, detail } => write!(f, "field `{field}`: {detail}"),
            ProtocolError::StaleSequence { sequence, last } => {
                write!(f, "sequence {sequence} not after {last}")
            }
        }
    }
}

/// Parses and validates one line (without its newline).
pub fn parse_line(line: &[u8]) -> Result<Event<'_>, ProtocolError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(ProtocolError::LineTooLong { len: line.len() });
    }
    let text = std::str::from_utf8(line).map_err(|err| ProtocolError::InvalidUtf8 {
        at: err.valid_up_to(),
    })?;
    RawLine::read(text)?.validate()
}

/// The line's fields, each kept loosely typed so that a wrong type becomes an
/// error naming the field rather than an anonymous parse failure.
#[derive(Default)]
struct RawLine<'a> {
    v: Option<Value<'a>>,
    kind: Option<Value<'a>>,
    session: Option<Value<'a>>,
    incarnation: Option<Value<'a>>,
    generation: Option<Value<'a>>,
    sequence: Option<Value<'a>>,
    state: Option<Value<'a>>,
    valid_for_ms: Option<Value<'a>>,
    composer: Option<Value<'a>>,
    revision: Option<Value<'a>>,
    typed: Option<Value<'a>>,
    withdraw: Option<Value<'a>>,
    withdraw_after_ms: Option<Value<'a>>,
    reason: Option<Value<'a>>,
    messages: Option<Value<'a>>,
    event: Option<Value<'a>>,
    claim: Option<Value<'a>>,
    limit: Option<Value<'a>>,
    scope: Option<Value<'a>>,
    name_bytes: Option<Value<'a>>,
}

impl From<JsonError> for ProtocolError {
    fn from(err: JsonError) -> ProtocolError {
        ProtocolError::MalformedJson {
            detail: err.to_string(),
        }
    }
}

impl<'a> RawLine<'a> {
    /// Reads the one object on the line, keeping the fields v1 defines and
    /// checking (then dropping) every other member. A defined field given
    /// twice is ambiguous and refused.
    fn read(text: &'a str) -> Result<RawLine<'a>, ProtocolError> {
        let mut raw = RawLine::default();
        let mut reader = ObjectReader::new(text)?;
        while let Some(key) = reader.next_key()? {
            let slot = match key.as_ref() {
                "v" => &mut raw.v,
                "kind" => &mut raw.kind,
                "session" => &mut raw.session,
                "incarnation" => &mut raw.incarnation,
                "generation" => &mut raw.generation,
                "sequence" => &mut raw.sequence,
                "state" => &mut raw.state,
                "validForMs" => &mut raw.valid_for_ms,
                "composer" => &mut raw.composer,
                "revision" => &mut raw.revision,
                "typed" => &mut raw.typed,
                "withdraw" => &mut raw.withdraw,
                "withdrawAfterMs" => &mut raw.withdraw_after_ms,
                "reason" => &mut raw.reason,
                "messages" => &mut raw.messages,
                "event" => &mut raw.event,
                "claim" => &mut raw.claim,
                "limit" => &mut raw.limit,
                "scope" => &mut raw.scope,
                "nameBytes" => &mut raw.name_bytes,
                _ => {
                    reader.value()?;
                    continue;
                }
            };
            if slot.is_some() {
                return Err(ProtocolError::MalformedJson {
                    detail: format!("duplicate field `{key}`"),
                });
            }
            *slot = Some(reader.value()?);
        }
        Ok(raw)
    }

    fn validate(self) -> Result<Event<'a>, ProtocolError> {
        // The version comes first: a future version may change everything else.
        let version = required("v", self.v)?;
        if version.as_u64() != Some(VERSION) {
            return Err(ProtocolError::UnknownVersion {
                found: describe(version),
            });
        }
        let kind = string("kind", required("kind", self.kind)?)?;
        if !matches!(
            kind.as_ref(),
            "activity" | "turn-boundary" | "lifecycle" | "claim" | "release"
        ) {
            return Err(ProtocolError::UnknownKind {
                found: truncated(&kind),
            });
        }
        let identity = ClaimedIdentity {
            session: bounded_string("session", self.session)?,
            incarnation: bounded_string("incarnation", self.incarnation)?,
            generation: bounded_string("generation", self.generation)?,
        };
        let sequence = uint("sequence", required("sequence", self.sequence)?)?;
        let body = match kind.as_ref() {
            "activity" => Body::Activity(Activity {
                state: activity_state(required("state", self.state)?)?,
                valid_for: Duration::from_millis(uint(
                    "validForMs",
                    required("validForMs", self.valid_for_ms)?,
                )?),
                composer: match present(self.composer) {
                    None => Composer::Unknown,
                    Some(value) => composer(value)?,
                },
                revision: present(self.revision)
                    .map(|value| uint("revision", value))
                    .transpose()?,
                typed: present(self.typed)
                    .map(|value| uint("typed", value))
                    .transpose()?,
                withdraw: withdraw_keys(present(self.withdraw), present(self.withdraw_after_ms))?,
                reason: match present(self.reason) {
                    None => None,
                    Some(value) => Some(bounded("reason", string("reason", value)?)?),
                },
            }),
            "turn-boundary" => Body::TurnBoundary {
                messages: message_list(required("messages", self.messages)?)?,
            },
            "release" => Body::Release {
                messages: message_list(required("messages", self.messages)?)?,
                reason: undelivered(required("reason", self.reason)?)?,
            },
            "claim" => Body::Claim(Claim {
                claim: uint("claim", required("claim", self.claim)?)?,
                wants: match (present(self.messages), present(self.limit)) {
                    (Some(_), Some(_)) => {
                        return Err(invalid("limit", "give `messages` or `limit`, not both"));
                    }
                    (Some(messages), None) => ClaimWants::Named(message_list(messages)?),
                    (None, Some(limit)) => ClaimWants::Oldest(claim_limit(limit)?),
                    (None, None) => {
                        return Err(ProtocolError::MissingField {
                            field: "limit".into(),
                        });
                    }
                },
                scope: match present(self.scope) {
                    None => ClaimScope::Pending,
                    Some(value) => claim_scope(value)?,
                },
                name_bytes: present(self.name_bytes).map(claim_name_bytes).transpose()?,
            }),
            _ => Body::Lifecycle {
                event: lifecycle(required("event", self.event)?)?,
            },
        };
        Ok(Event {
            identity,
            sequence,
            body,
        })
    }
}

fn required<'a>(field: &'static str, value: Option<Value<'a>>) -> Result<Value<'a>, ProtocolError> {
    present(value).ok_or(ProtocolError::MissingField {
        field: field.into(),
    })
}

/// JSON `null` means the same as an absent field, on both parse paths
/// (the typed one cannot tell them apart).
fn present(value: Option<Value<'_>>) -> Option<Value<'_>> {
    value.filter(|value| value.kind != Kind::Null)
}

fn invalid(field: &'static str, detail: impl Into<String>) -> ProtocolError {
    ProtocolError::InvalidField {
        field: field.into(),
        detail: detail.into(),
    }
}

fn string<'a>(field: &'static str, value: Value<'a>) -> Result<Cow<'a, str>, ProtocolError> {
    value.as_str().ok_or_else(|| {
        invalid(
            field,
            format!("expected a string, found {}", describe(value)),
        )
    })
}

/// An activity's `withdraw` keys, one to [`MAX_WITHDRAW_BYTES`] bytes and
/// never a line end (which would send what they are meant to take back),
/// and its `withdrawAfterMs`, which needs them.
fn withdraw_keys<'a>(
    keys: Option<Value<'a>>,
    after: Option<Value<'a>>,
) -> Result<Option<WithdrawKeys<'a>>, ProtocolError> {
    let Some(keys) = keys else {
        return match after {
            Some(_) => Err(invalid("withdrawAfterMs", "needs withdraw")),
            None => Ok(None),
        };
    };
    let keys = string("withdraw", keys)?;
    if keys.is_empty() || keys.len() > MAX_WITHDRAW_BYTES {
        return Err(invalid(
            "withdraw",
            format!("must be 1 to {MAX_WITHDRAW_BYTES} bytes"),
        ));
    }
    if keys.contains(['\r', '\n']) {
        return Err(invalid("withdraw", "must not hold a line end"));
    }
    let after_ms = after
        .map(|value| uint("withdrawAfterMs", value))
        .transpose()?
        .unwrap_or(0);
    if after_ms > MAX_WITHDRAW_AFTER_MS {
        return Err(invalid(
            "withdrawAfterMs",
            format!("over {MAX_WITHDRAW_AFTER_MS}"),
        ));
    }
    Ok(Some(WithdrawKeys { keys, after_ms }))
}

fn bounded<'a>(field: &'static str, text: Cow<'a, str>) -> Result<Cow<'a, str>, ProtocolError> {
    if text.len() > MAX_FIELD_BYTES {
        return Err(invalid(
            field,
            format!("longer than {MAX_FIELD_BYTES} bytes"),
        ));
    }
    Ok(text)
}

fn bounded_string<'a>(
    field: &'static str,
    value: Option<Value<'a>>,
) -> Result<Cow<'a, str>, ProtocolError> {
    identity_part(field, string(field, required(field, value)?)?)
}

/// One part of an envelope's identity: non-empty, at most
/// [`MAX_FIELD_BYTES`].
fn identity_part<'a>(
    field: &'static str,
    text: Cow<'a, str>,
) -> Result<Cow<'a, str>, ProtocolError> {
    let text = bounded(field, text)?;
    if text.is_empty() {
        return Err(invalid(field, "must not be empty"));
    }
    Ok(text)
}

/// Whether `identity` can stamp a v1 line: [`parse_line`] refuses an
/// envelope whose `session`, `incarnation` or `generation` is empty or
/// longer than [`MAX_FIELD_BYTES`].
pub fn check_identity(identity: &Identity) -> Result<(), ProtocolError> {
    identity_part("session", Cow::Borrowed(&identity.session))?;
    identity_part("incarnation", Cow::Borrowed(&identity.incarnation))?;
    identity_part("generation", Cow::Borrowed(&identity.generation))?;
    Ok(())
}

fn uint(field: &'static str, value: Value<'_>) -> Result<u64, ProtocolError> {
    value.as_u64().ok_or_else(|| {
        invalid(
            field,
            format!("expected a non-negative integer, found {}", describe(value)),
        )
    })
}

fn activity_state(value: Value<'_>) -> Result<ActivityState, ProtocolError> {
    match string("state", value)?.as_ref() {
        "idle" => Ok(ActivityState::Idle),
        "active" => Ok(ActivityState::Active),
        "child" => Ok(ActivityState::Child),
        "unknown" => Ok(ActivityState::Unknown),
        other => Err(invalid(
            "state",
            format!(
                "expected idle|active|child|unknown, found {:?}",
                truncated(other)
            ),
        )),
    }
}

fn composer(value: Value<'_>) -> Result<Composer, ProtocolError> {
    match string("composer", value)?.as_ref() {
        "empty" => Ok(Composer::Empty),
        "nonempty" => Ok(Composer::Nonempty),
        "unknown" => Ok(Composer::Unknown),
        other => Err(invalid(
            "composer",
            format!(
                "expected empty|nonempty|unknown, found {:?}",
                truncated(other)
            ),
        )),
    }
}

fn lifecycle(value: Value<'_>) -> Result<Lifecycle, ProtocolError> {
    match string("event", value)?.as_ref() {
        "compaction" => Ok(Lifecycle::Compaction),
        "clear" => Ok(Lifecycle::Clear),
        "crash" => Ok(Lifecycle::Crash),
        other => Err(ProtocolError::UnknownLifecycle {
            found: truncated(other),
        }),
    }
}

fn undelivered(value: Value<'_>) -> Result<Undelivered, ProtocolError> {
    match string("reason", value)?.as_ref() {
        "hook-gone" => Ok(Undelivered::HookGone),
        "no-receipt" => Ok(Undelivered::NoReceipt),
        "withheld" => Ok(Undelivered::Withheld),
        other => Err(invalid(
            "reason",
            format!(
                "`hook-gone`, `no-receipt` or `withheld`, found {:?}",
                truncated(other)
            ),
        )),
    }
}

fn claim_limit(value: Value<'_>) -> Result<u64, ProtocolError> {
    let limit = uint("limit", value)?;
    if !(1..=MAX_CLAIM_LIMIT).contains(&limit) {
        return Err(invalid(
            "limit",
            format!("must be 1 to {MAX_CLAIM_LIMIT}, found {limit}"),
        ));
    }
    Ok(limit)
}

fn claim_name_bytes(value: Value<'_>) -> Result<u64, ProtocolError> {
    let bytes = uint("nameBytes", value)?;
    if !(1..=MAX_CLAIM_NAME_BYTES).contains(&bytes) {
        return Err(invalid(
            "nameBytes",
            format!("must be 1 to {MAX_CLAIM_NAME_BYTES}, found {bytes}"),
        ));
    }
    Ok(bytes)
}

fn claim_scope(value: Value<'_>) -> Result<ClaimScope, ProtocolError> {
    match string("scope", value)?.as_ref() {
        "pending" => Ok(ClaimScope::Pending),
        "unread" => Ok(ClaimScope::Unread),
        "delivered" => Ok(ClaimScope::Delivered),
        other => Err(invalid(
            "scope",
            format!(
                "expected pending|unread|delivered, found {:?}",
                truncated(other)
            ),
        )),
    }
}

fn message_list(value: Value<'_>) -> Result<Vec<MessageName>, ProtocolError> {
    let Some(items) = value.items() else {
        return Err(invalid(
            "messages",
            format!("expected an array, found {}", describe(value)),
        ));
    };
    if items.is_empty() {
        return Err(invalid("messages", "must name at least one file"));
    }
    if items.len() > MAX_RECEIPT_MESSAGES {
        return Err(invalid(
            "messages",
            format!("more than {MAX_RECEIPT_MESSAGES} names"),
        ));
    }
    let mut names = Vec::with_capacity(items.len());
    for item in items {
        let text = string("messages", item)?;
        let name = MessageName::new(&text).map_err(|err: InvalidName| {
            invalid("messages", format!("{:?}: {err}", truncated(&text)))
        })?;
        names.push(name);
    }
    let mut sorted = names.clone();
    sorted.sort();
    if sorted.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(invalid("messages", "names a file twice"));
    }
    Ok(names)
}

/// At most 64 characters of untrusted text, for diagnostics.
fn truncated(text: &str) -> String {
    text.chars().take(64).collect()
}

/// A value as diagnostics show it: scalars as written, strings decoded
/// and quoted, containers by kind. Always bounded.
fn describe(value: Value<'_>) -> String {
    match value.kind {
        Kind::String | Kind::EscapedString => {
            format!(
                "string {:?}",
                truncated(&value.as_str().unwrap_or_default())
            )
        }
        Kind::Array => "an array".into(),
        Kind::Object => "an object".into(),
        Kind::Null | Kind::Bool | Kind::Number => truncated(value.text),
    }
}

fn serialize_millis<S: serde::Serializer>(
    value: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENVELOPE: &str =
        r#""v":1,"session":"host.worker","incarnation":"i-1","generation":"sha256:ab""#;

    fn line(rest: &str) -> Vec<u8> {
        format!("{{{ENVELOPE},{rest}}}").into_bytes()
    }

    #[test]
    fn parses_a_fresh_idle_activity() {
        let text = line(
            r#""kind":"activity","sequence":7,"state":"idle","validForMs":250,"composer":"empty","revision":42,"reason":"opaque""#,
        );
        let event = parse_line(&text).unwrap();
        assert_eq!(event.sequence, 7);
        assert_eq!(event.identity.incarnation, "i-1");
        assert_eq!(
            event.body,
            Body::Activity(Activity {
                state: ActivityState::Idle,
                valid_for: Duration::from_millis(250),
                composer: Composer::Empty,
                revision: Some(42),
                typed: None,
                withdraw: None,
                reason: Some("opaque".into()),
            })
        );
    }

    #[test]
    fn an_activity_may_say_which_typed_notice_the_composer_holds() {
        let text = line(
            r#""kind":"activity","sequence":8,"state":"idle","validForMs":250,"composer":"nonempty","revision":43,"typed":5"#,
        );
        let Body::Activity(activity) = parse_line(&text).unwrap().body else {
            panic!("not an activity");
        };
        assert_eq!(activity.typed, Some(5));
        let bad =
            line(r#""kind":"activity","sequence":8,"state":"idle","validForMs":250,"typed":"5""#);
        assert!(matches!(
            parse_line(&bad),
            Err(ProtocolError::InvalidField { field, .. }) if field == "typed"
        ));
    }

    #[test]
    fn composer_defaults_to_unknown_and_unknown_fields_are_ignored() {
        let text = line(
            r#""kind":"activity","sequence":1,"state":"idle","validForMs":9,"future":{"x":[1]}"#,
        );
        let event = parse_line(&text).unwrap();
        let Body::Activity(activity) = event.body else {
            panic!("not activity")
        };
        assert_eq!(activity.composer, Composer::Unknown);
    }

    #[test]
    fn parses_turn_boundary_and_lifecycle() {
        let text = line(r#""kind":"turn-boundary","sequence":2,"messages":["a.md","b.md"]"#);
        let event = parse_line(&text).unwrap();
        assert_eq!(
            event.body,
            Body::TurnBoundary {
                messages: vec![
                    MessageName::new("a.md").unwrap(),
                    MessageName::new("b.md").unwrap()
                ]
            }
        );
        let text = line(r#""kind":"lifecycle","sequence":3,"event":"clear""#);
        let event = parse_line(&text).unwrap();
        assert_eq!(
            event.body,
            Body::Lifecycle {
                event: Lifecycle::Clear
            }
        );
    }

    #[test]
    fn parses_a_release_with_its_reason_and_refuses_an_unknown_one() {
        let text =
            line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"no-receipt""#);
        assert_eq!(
            parse_line(&text).unwrap().body,
            Body::Release {
                messages: vec![MessageName::new("a.md").unwrap()],
                reason: Undelivered::NoReceipt,
            }
        );
        let text = line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"withheld""#);
        assert!(matches!(
            parse_line(&text).unwrap().body,
            Body::Release {
                reason: Undelivered::Withheld,
                ..
            }
        ));
        let text = line(r#""kind":"release","sequence":4,"messages":["a.md"],"reason":"later""#);
        assert!(matches!(
            parse_line(&text),
            Err(ProtocolError::InvalidField { field, .. }) if field == "reason"
        ));
        let text = line(r#""kind":"release","sequence":4,"messages":["a.md"]"#);
        assert_eq!(
            parse_line(&text),
            Err(ProtocolError::MissingField {
                field: "reason".into()
            })
        );
    }

    #[test]
    fn every_defect_is_a_typed_error() {
        let cases: Vec<(Vec<u8>, ProtocolError)> = vec![
            (
                vec![b'{'; MAX_LINE_BYTES + 1],
                ProtocolError::LineTooLong {
                    len: MAX_LINE_BYTES + 1,
                },
            ),
            (
                b"{\"v\":1,\xff}".to_vec(),
                ProtocolError::InvalidUtf8 { at: 7 },
            ),
            (
                br#"{"v":2,"kind":"activity"}"#.to_vec(),
                ProtocolError::UnknownVersion { found: "2".into() },
            ),
            (
                br#"{"v":"1"}"#.to_vec(),
                ProtocolError::UnknownVersion {
                    found: "string \"1\"".into(),
                },
            ),
            (
                br#"{"kind":"activity"}"#.to_vec(),
                ProtocolError::MissingField { field: "v".into() },
            ),
            (
                line(r#""kind":"bogus","sequence":1"#),
                ProtocolError::UnknownKind {
                    found: "bogus".into(),
                },
            ),
            (
                line(r#""kind":"activity","sequence":1,"validForMs":5"#),
                ProtocolError::MissingField {
                    field: "state".into(),
                },
            ),
            (
                line(r#""kind":"activity","sequence":1,"state":"idle""#),
                ProtocolError::MissingField {
                    field: "validForMs".into(),
                },
            ),
            (
                line(r#""kind":"turn-boundary","sequence":1"#),
                ProtocolError::MissingField {
                    field: "messages".into(),
                },
            ),
            (
                line(r#""kind":"lifecycle","sequence":1"#),
                ProtocolError::MissingField {
                    field: "event".into(),
                },
            ),
            (
                line(r#""kind":"lifecycle","sequence":1,"event":"nap""#),
                ProtocolError::UnknownLifecycle {
                    found: "nap".into(),
                },
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(
                parse_line(&input),
                Err(expected),
                "input {:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }

    #[test]
    fn mistyped_fields_are_named() {
        let cases = [
            (
                r#""kind":"activity","sequence":-1,"state":"idle","validForMs":5"#,
                "sequence",
            ),
            (
                r#""kind":"activity","sequence":1.5,"state":"idle","validForMs":5"#,
                "sequence",
            ),
            (
                r#""kind":"activity","sequence":1,"state":"sleepy","validForMs":5"#,
                "state",
            ),
            (
                r#""kind":"activity","sequence":1,"state":"idle","validForMs":"5""#,
                "validForMs",
            ),
            (
                r#""kind":"activity","sequence":1,"state":"idle","validForMs":5,"composer":"full""#,
                "composer",
            ),
            (
                r#""kind":"activity","sequence":1,"state":"idle","validForMs":5,"revision":-3"#,
                "revision",
            ),
            (
                r#""kind":"turn-boundary","sequence":1,"messages":"a.md""#,
                "messages",
            ),
            (
                r#""kind":"turn-boundary","sequence":1,"messages":[]"#,
                "messages",
            ),
            (
                r#""kind":"turn-boundary","sequence":1,"messages":["../x"]"#,
                "messages",
            ),
            (
                r#""kind":"turn-boundary","sequence":1,"messages":["a","a"]"#,
                "messages",
            ),
        ];
        for (rest, field) in cases {
            match parse_line(&line(rest)) {
                Err(ProtocolError::InvalidField { field: named, .. }) => {
                    assert_eq!(named, field, "{rest}")
                }
                other => panic!("{rest}: expected invalid {field}, got {other:?}"),
            }
        }
    }

    #[test]
    fn identity_fields_must_be_non_empty_bounded_strings() {
        let too_long = "x".repeat(MAX_FIELD_BYTES + 1);
        for (session, field) in [
            ("\"\"", "session"),
            ("5", "session"),
            (&format!("\"{too_long}\"")[..], "session"),
        ] {
            let text = format!(
                r#"{{"v":1,"kind":"activity","session":{session},"incarnation":"i","generation":"g","sequence":1,"state":"idle","validForMs":1}}"#
            );
            assert!(
                matches!(parse_line(text.as_bytes()), Err(ProtocolError::InvalidField { field: f, .. }) if f == field),
                "{session}"
            );
        }
    }

    proptest::proptest! {
        /// Arbitrary bytes never panic the parser: they parse or they are a typed error.
        #[test]
        fn parse_line_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse_line(&bytes);
        }
    }

    /// A valid line with one field replaced by another JSON value never
    /// panics: it is a typed error naming that field, or, when the
    /// replacement is valid there, a line that parses with it. Every field
    /// with every replacement: the space is small enough to walk whole.
    #[test]
    fn mistyped_valid_lines_never_panic() {
        let fields = [
            "v",
            "kind",
            "session",
            "incarnation",
            "generation",
            "sequence",
            "state",
            "validForMs",
            "composer",
            "revision",
            "reason",
        ];
        let replacements = [
            "null",
            "true",
            "-1",
            "1.5",
            "\"x\"",
            "[]",
            "{}",
            "18446744073709551616",
        ];
        let valid = line(
            r#""kind":"activity","sequence":7,"state":"idle","validForMs":250,"composer":"empty","revision":3,"reason":"r""#,
        );
        for field in fields {
            for replacement in replacements {
                let mut value: serde_json::Value = serde_json::from_slice(&valid).unwrap();
                value[field] = serde_json::from_str(replacement).unwrap();
                let text = value.to_string();
                let result = parse_line(text.as_bytes());
                assert!(
                    mistyped_outcome_is_right(field, replacement, &result),
                    "{field} = {replacement}: {result:?}"
                );
            }
        }
    }

    /// What replacing `field` of a valid activity line with `replacement`
    /// must give (spec §2): `null` is absent, so a missing required field or
    /// an optional one at its default; a string where a string is wanted
    /// parses (or, for `kind`, is an unknown kind); anything else is
    /// refused naming the field (`v` as an unknown version, checked first).
    fn mistyped_outcome_is_right(
        field: &str,
        replacement: &str,
        result: &Result<Event<'_>, ProtocolError>,
    ) -> bool {
        let activity = match result {
            Ok(Event {
                body: Body::Activity(activity),
                ..
            }) => Some(activity),
            _ => None,
        };
        let invalid = matches!(result, Err(ProtocolError::InvalidField { field: named, .. }) if *named == field);
        match (field, replacement) {
            ("composer", "null") => activity.is_some_and(|a| a.composer == Composer::Unknown),
            ("revision", "null") => activity.is_some_and(|a| a.revision.is_none()),
            ("reason", "null") => activity.is_some_and(|a| a.reason.is_none()),
            (_, "null") => {
                matches!(result, Err(ProtocolError::MissingField { field: named }) if *named == field)
            }
            ("v", _) => matches!(result, Err(ProtocolError::UnknownVersion { .. })),
            ("kind", "\"x\"") => {
                matches!(result, Err(ProtocolError::UnknownKind { found }) if found == "x")
            }
            ("session", "\"x\"") => result.as_ref().is_ok_and(|e| e.identity.session == "x"),
            ("incarnation", "\"x\"") => {
                result.as_ref().is_ok_and(|e| e.identity.incarnation == "x")
            }
            ("generation", "\"x\"") => result.as_ref().is_ok_and(|e| e.identity.generation == "x"),
            ("reason", "\"x\"") => activity.is_some_and(|a| a.reason.as_deref() == Some("x")),
            _ => invalid,
        }
    }

    #[test]
    fn malformed_json_and_non_objects_are_errors() {
        for input in [
            &b""[..],
            b"{",
            b"[1,2]",
            b"\"idle\"",
            b"{\"v\":1} trailing",
            b"{\"v\":1,\"v\":1}",
        ] {
            assert!(
                matches!(parse_line(input), Err(ProtocolError::MalformedJson { .. })),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
}
