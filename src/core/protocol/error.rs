//! Why a line is not a valid v1 event: one variant per defect, each a
//! hold reason in the engine.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::core::json_reader::JsonError;

use super::limits::MAX_LINE_BYTES;

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

impl From<JsonError> for ProtocolError {
    fn from(err: JsonError) -> ProtocolError {
        ProtocolError::MalformedJson {
            detail: err.to_string(),
        }
    }
}
