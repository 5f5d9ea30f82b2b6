//! Reading one line: its bytes to one JSON object whose v1 fields are
//! kept loosely typed, then each field checked into an [`Event`].

use std::time::Duration;

use crate::core::identity::ClaimedIdentity;
use crate::core::json_reader::{ObjectReader, Value};

use super::error::ProtocolError;
use super::events::{Activity, Body, Claim, ClaimScope, ClaimWants, Composer, Event};
use super::fields::{
    activity_state, bounded, bounded_string, claim_limit, claim_name_bytes, claim_scope, composer,
    describe, invalid, lifecycle, message_list, present, required, string, truncated, uint,
    undelivered, withdraw_keys,
};
use super::limits::{MAX_LINE_BYTES, VERSION};

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
            "activity" | "turn-boundary" | "lifecycle" | "claim" | "release" | "printed"
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
            "printed" => Body::Printed {
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
