//! The typed encoder of adapter protocol v1: an [`Event`] as the one line an
//! adapter writes.
//!
//! Adapters built on the kit never format a line by hand, so a line that
//! leaves an adapter is one that [`parse_line`](super::protocol::parse_line)
//! reads back as the same event (a property test holds the two together).
//! Fields come in a fixed order, envelope first, so logs read the same way
//! every time; absent optional fields are left out rather than written as
//! `null`.

use std::fmt::Write as _;

use super::protocol::{
    Activity, ActivityState, Body, Claim, ClaimScope, ClaimWants, Composer, Event, Lifecycle,
    Undelivered, VERSION,
};

impl Event<'_> {
    /// The event as one protocol line, without the newline.
    pub fn to_line(&self) -> String {
        let mut line = Line::new();
        line.number("v", VERSION);
        line.string("kind", self.body.kind());
        line.string("session", &self.identity.session);
        line.string("incarnation", &self.identity.incarnation);
        line.string("generation", &self.identity.generation);
        line.number("sequence", self.sequence);
        match &self.body {
            Body::Activity(activity) => activity.write(&mut line),
            Body::TurnBoundary { messages } => {
                line.names("messages", messages.iter().map(|name| name.as_str()))
            }
            Body::Lifecycle { event } => line.string("event", event.token()),
            Body::Claim(claim) => claim.write(&mut line),
            Body::Release { messages, reason } => {
                line.names("messages", messages.iter().map(|name| name.as_str()));
                line.string("reason", reason.token());
            }
            Body::Printed { messages } => {
                line.names("messages", messages.iter().map(|name| name.as_str()))
            }
        }
        line.finish()
    }
}

impl Body<'_> {
    /// The `kind` token of this body.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Activity(_) => "activity",
            Body::TurnBoundary { .. } => "turn-boundary",
            Body::Lifecycle { .. } => "lifecycle",
            Body::Claim(_) => "claim",
            Body::Release { .. } => "release",
            Body::Printed { .. } => "printed",
        }
    }
}

impl Activity<'_> {
    fn write(&self, line: &mut Line) {
        line.string("state", self.state.token());
        line.number(
            "validForMs",
            u64::try_from(self.valid_for.as_millis()).unwrap_or(u64::MAX),
        );
        line.string("composer", self.composer.token());
        if let Some(revision) = self.revision {
            line.number("revision", revision);
        }
        if let Some(typed) = self.typed {
            line.number("typed", typed);
        }
        if let Some(withdraw) = &self.withdraw {
            line.string("withdraw", &withdraw.keys);
            if withdraw.after_ms > 0 {
                line.number("withdrawAfterMs", withdraw.after_ms);
            }
        }
        if let Some(reason) = &self.reason {
            line.string("reason", reason);
        }
    }
}

impl Claim {
    fn write(&self, line: &mut Line) {
        line.number("claim", self.claim);
        match &self.wants {
            ClaimWants::Named(names) => {
                line.names("messages", names.iter().map(|name| name.as_str()))
            }
            ClaimWants::Oldest(limit) => line.number("limit", *limit),
        }
        line.string("scope", self.scope.token());
        if let Some(bytes) = self.name_bytes {
            line.number("nameBytes", bytes);
        }
    }
}

impl ActivityState {
    pub const fn token(self) -> &'static str {
        match self {
            ActivityState::Idle => "idle",
            ActivityState::Active => "active",
            ActivityState::Child => "child",
            ActivityState::Unknown => "unknown",
        }
    }
}

impl Composer {
    pub const fn token(self) -> &'static str {
        match self {
            Composer::Empty => "empty",
            Composer::Nonempty => "nonempty",
            Composer::Unknown => "unknown",
        }
    }
}

impl Lifecycle {
    pub const fn token(self) -> &'static str {
        match self {
            Lifecycle::Compaction => "compaction",
            Lifecycle::Clear => "clear",
            Lifecycle::Crash => "crash",
        }
    }
}

impl Undelivered {
    pub const fn token(self) -> &'static str {
        match self {
            Undelivered::HookGone => "hook-gone",
            Undelivered::NoReceipt => "no-receipt",
            Undelivered::Withheld => "withheld",
        }
    }
}

impl ClaimScope {
    pub const fn token(self) -> &'static str {
        match self {
            ClaimScope::Pending => "pending",
            ClaimScope::Unread => "unread",
            ClaimScope::Delivered => "delivered",
        }
    }
}

/// A JSON object written member by member.
struct Line {
    text: String,
}

impl Line {
    fn new() -> Line {
        Line {
            text: String::from("{"),
        }
    }

    fn key(&mut self, key: &str) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        push_json_string(&mut self.text, key);
        self.text.push(':');
    }

    fn number(&mut self, key: &str, value: u64) {
        self.key(key);
        let _ = write!(self.text, "{value}");
    }

    fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        push_json_string(&mut self.text, value);
    }

    fn names<'n>(&mut self, key: &str, names: impl Iterator<Item = &'n str>) {
        self.key(key);
        self.text.push('[');
        for (index, name) in names.enumerate() {
            if index > 0 {
                self.text.push(',');
            }
            push_json_string(&mut self.text, name);
        }
        self.text.push(']');
    }

    fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// `value` as a JSON string literal. Every control character and every
/// character that some reader treats as a line break is escaped, so the line
/// stays one line for any reader (JSON itself only requires C0 escapes).
pub fn push_json_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::time::Duration;

    use proptest::prelude::*;

    use super::*;
    use crate::core::identity::ClaimedIdentity;
    use crate::core::message::MessageName;
    use crate::core::protocol::{MAX_FIELD_BYTES, WithdrawKeys, parse_line};

    fn identity_part() -> impl Strategy<Value = String> {
        "\\PC{1,40}".prop_filter("bounded", |s| !s.is_empty() && s.len() <= MAX_FIELD_BYTES)
    }

    fn name() -> impl Strategy<Value = MessageName> {
        "[^/\u{0}]{1,60}".prop_filter_map("a valid name", |s| MessageName::new(&s).ok())
    }

    fn names() -> impl Strategy<Value = Vec<MessageName>> {
        proptest::collection::btree_set(name(), 1..8).prop_map(|set| set.into_iter().collect())
    }

    fn body() -> impl Strategy<Value = Body<'static>> {
        let state = prop_oneof![
            Just(ActivityState::Idle),
            Just(ActivityState::Active),
            Just(ActivityState::Child),
            Just(ActivityState::Unknown)
        ];
        let composer = prop_oneof![
            Just(Composer::Empty),
            Just(Composer::Nonempty),
            Just(Composer::Unknown)
        ];
        let activity = (
            state,
            any::<u32>(),
            composer,
            proptest::option::of(any::<u64>()),
            proptest::option::of(any::<u64>()),
            proptest::option::of(("[\\x01-\\x09\\x0b\\x0c\\x0e-\\x7f]{1,16}", 0..=500u64)),
            proptest::option::of("\\PC{0,80}"),
        )
            .prop_map(
                |(state, valid, composer, revision, typed, withdraw, reason)| {
                    Body::Activity(Activity {
                        state,
                        valid_for: Duration::from_millis(u64::from(valid)),
                        composer,
                        revision,
                        typed,
                        withdraw: withdraw.map(|(keys, after_ms)| WithdrawKeys {
                            keys: Cow::Owned(keys),
                            after_ms,
                        }),
                        reason: reason.map(Cow::Owned),
                    })
                },
            );
        let lifecycle = prop_oneof![
            Just(Lifecycle::Compaction),
            Just(Lifecycle::Clear),
            Just(Lifecycle::Crash)
        ]
        .prop_map(|event| Body::Lifecycle { event });
        let scope = prop_oneof![
            Just(ClaimScope::Pending),
            Just(ClaimScope::Unread),
            Just(ClaimScope::Delivered)
        ];
        let wants = prop_oneof![
            names().prop_map(ClaimWants::Named),
            (1..=crate::core::protocol::MAX_CLAIM_LIMIT).prop_map(ClaimWants::Oldest)
        ];
        let budget = proptest::option::of(1..=crate::core::protocol::MAX_CLAIM_NAME_BYTES);
        let claim =
            (any::<u64>(), wants, scope, budget).prop_map(|(claim, wants, scope, name_bytes)| {
                Body::Claim(Claim {
                    claim,
                    wants,
                    scope,
                    name_bytes,
                })
            });
        let release = (
            names(),
            prop_oneof![
                Just(Undelivered::HookGone),
                Just(Undelivered::NoReceipt),
                Just(Undelivered::Withheld)
            ],
        )
            .prop_map(|(messages, reason)| Body::Release { messages, reason });
        prop_oneof![
            activity,
            names().prop_map(|messages| Body::TurnBoundary { messages }),
            lifecycle,
            claim,
            release,
            names().prop_map(|messages| Body::Printed { messages })
        ]
    }

    proptest! {
        /// Every line the encoder writes parses back to the same event.
        #[test]
        fn every_encoded_event_parses_back_to_itself(
            session in identity_part(),
            incarnation in identity_part(),
            generation in identity_part(),
            sequence in any::<u64>(),
            body in body(),
        ) {
            let event = Event {
                identity: ClaimedIdentity {
                    session: session.into(),
                    incarnation: incarnation.into(),
                    generation: generation.into(),
                },
                sequence,
                body,
            };
            let line = event.to_line();
            prop_assert!(!line.contains('\n'), "one line: {line:?}");
            prop_assert_eq!(parse_line(line.as_bytes()), Ok(event));
        }
    }

    #[test]
    fn line_breaks_of_every_kind_are_escaped() {
        let mut out = String::new();
        push_json_string(&mut out, "a\nb\u{2028}c\u{85}d\u{7f}");
        assert_eq!(out, "\"a\\nb\\u2028c\\u0085d\\u007f\"");
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, "a\nb\u{2028}c\u{85}d\u{7f}");
    }
}
