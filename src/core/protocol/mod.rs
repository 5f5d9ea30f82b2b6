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
//!
//! The protocol's bounds are in `limits.rs`, what a valid line says in
//! `events.rs`, why a line is refused in `error.rs`; `parse.rs` reads a
//! line and `fields.rs` checks each field of it.

mod error;
mod events;
mod fields;
mod limits;
mod parse;

pub use self::error::ProtocolError;
pub use self::events::{
    Activity, ActivityState, Body, Claim, ClaimScope, ClaimWants, Composer, Event, Lifecycle,
    Undelivered, WithdrawKeys,
};
pub use self::fields::check_identity;
pub use self::limits::{
    MAX_CLAIM_LIMIT, MAX_CLAIM_NAME_BYTES, MAX_FIELD_BYTES, MAX_LINE_BYTES, MAX_RECEIPT_MESSAGES,
    MAX_WITHDRAW_AFTER_MS, MAX_WITHDRAW_BYTES, VERSION,
};
pub use self::parse::parse_line;

#[cfg(test)]
mod tests;
