//! The checks of one field each: present, typed and within its bound, or
//! a [`ProtocolError`] that names the field. Diagnostics quote at most 64
//! characters of what the line said.

use std::borrow::Cow;

use crate::core::identity::Identity;
use crate::core::json_reader::{Kind, Value};
use crate::core::message::{InvalidName, MessageName};

use super::error::ProtocolError;
use super::events::{ActivityState, ClaimScope, Composer, Lifecycle, Undelivered, WithdrawKeys};
use super::limits::{
    MAX_CLAIM_LIMIT, MAX_CLAIM_NAME_BYTES, MAX_FIELD_BYTES, MAX_RECEIPT_MESSAGES,
    MAX_WITHDRAW_AFTER_MS, MAX_WITHDRAW_BYTES,
};

pub(super) fn required<'a>(
    field: &'static str,
    value: Option<Value<'a>>,
) -> Result<Value<'a>, ProtocolError> {
    present(value).ok_or(ProtocolError::MissingField {
        field: field.into(),
    })
}

/// JSON `null` means the same as an absent field, on both parse paths
/// (the typed one cannot tell them apart).
pub(super) fn present(value: Option<Value<'_>>) -> Option<Value<'_>> {
    value.filter(|value| value.kind != Kind::Null)
}

pub(super) fn invalid(field: &'static str, detail: impl Into<String>) -> ProtocolError {
    ProtocolError::InvalidField {
        field: field.into(),
        detail: detail.into(),
    }
}

pub(super) fn string<'a>(
    field: &'static str,
    value: Value<'a>,
) -> Result<Cow<'a, str>, ProtocolError> {
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
pub(super) fn withdraw_keys<'a>(
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

pub(super) fn bounded<'a>(
    field: &'static str,
    text: Cow<'a, str>,
) -> Result<Cow<'a, str>, ProtocolError> {
    if text.len() > MAX_FIELD_BYTES {
        return Err(invalid(
            field,
            format!("longer than {MAX_FIELD_BYTES} bytes"),
        ));
    }
    Ok(text)
}

pub(super) fn bounded_string<'a>(
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
///
/// [`parse_line`]: super::parse_line
pub fn check_identity(identity: &Identity) -> Result<(), ProtocolError> {
    identity_part("session", Cow::Borrowed(&identity.session))?;
    identity_part("incarnation", Cow::Borrowed(&identity.incarnation))?;
    identity_part("generation", Cow::Borrowed(&identity.generation))?;
    Ok(())
}

pub(super) fn uint(field: &'static str, value: Value<'_>) -> Result<u64, ProtocolError> {
    value.as_u64().ok_or_else(|| {
        invalid(
            field,
            format!("expected a non-negative integer, found {}", describe(value)),
        )
    })
}

pub(super) fn activity_state(value: Value<'_>) -> Result<ActivityState, ProtocolError> {
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

pub(super) fn composer(value: Value<'_>) -> Result<Composer, ProtocolError> {
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

pub(super) fn lifecycle(value: Value<'_>) -> Result<Lifecycle, ProtocolError> {
    match string("event", value)?.as_ref() {
        "compaction" => Ok(Lifecycle::Compaction),
        "clear" => Ok(Lifecycle::Clear),
        "crash" => Ok(Lifecycle::Crash),
        other => Err(ProtocolError::UnknownLifecycle {
            found: truncated(other),
        }),
    }
}

pub(super) fn undelivered(value: Value<'_>) -> Result<Undelivered, ProtocolError> {
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

pub(super) fn claim_limit(value: Value<'_>) -> Result<u64, ProtocolError> {
    let limit = uint("limit", value)?;
    if !(1..=MAX_CLAIM_LIMIT).contains(&limit) {
        return Err(invalid(
            "limit",
            format!("must be 1 to {MAX_CLAIM_LIMIT}, found {limit}"),
        ));
    }
    Ok(limit)
}

pub(super) fn claim_name_bytes(value: Value<'_>) -> Result<u64, ProtocolError> {
    let bytes = uint("nameBytes", value)?;
    if !(1..=MAX_CLAIM_NAME_BYTES).contains(&bytes) {
        return Err(invalid(
            "nameBytes",
            format!("must be 1 to {MAX_CLAIM_NAME_BYTES}, found {bytes}"),
        ));
    }
    Ok(bytes)
}

pub(super) fn claim_scope(value: Value<'_>) -> Result<ClaimScope, ProtocolError> {
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

pub(super) fn message_list(value: Value<'_>) -> Result<Vec<MessageName>, ProtocolError> {
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
pub(super) fn truncated(text: &str) -> String {
    text.chars().take(64).collect()
}

/// A value as diagnostics show it: scalars as written, strings decoded
/// and quoted, containers by kind. Always bounded.
pub(super) fn describe(value: Value<'_>) -> String {
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
