//! The bytes DING asks the PTY owner to write, as an opaque list of steps.
//!
//! The PTY owner does not interpret a transport: it writes the bytes and
//! honours the waits, as one transaction (which only a person's input may
//! stop, and only a compare-and-send's). Submit versus newline is decided
//! here, never by the host: the aggressive policy sends the fixed combined
//! transport; the careful one sends the paste, then Return as a second
//! compare-and-send on evidence read after the paste was drawn.

use std::time::Duration;

use serde::Serialize;

use super::notice::Notice;

/// Opens a bracketed paste (xterm `ESC [ 200 ~`).
pub const PASTE_START: &[u8] = b"\x1b[200~";
/// Closes a bracketed paste (xterm `ESC [ 201 ~`). The notice can never
/// contain it: every ESC in it is escaped (`super::escape`).
pub const PASTE_END: &[u8] = b"\x1b[201~";
/// Return, which TUIs read as submit.
pub const RETURN: &[u8] = b"\r";

/// One step of a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Write these bytes to the terminal.
    Write(#[serde(serialize_with = "lossy_text")] Vec<u8>),
    /// Let this much time pass before the next step.
    Wait(#[serde(serialize_with = "millis")] Duration),
}

/// A bounded transaction: at most a notice's worth of bytes and one wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transport {
    pub steps: Vec<Step>,
}

impl Transport {
    /// The fixed combined transport used by both policies: bracketed paste of
    /// the notice, a wait longer than paste-burst Enter suppression, Return.
    pub fn combined(notice: &Notice, submit_delay: Duration) -> Transport {
        Transport {
            steps: vec![
                Step::Write(bracketed(notice)),
                Step::Wait(submit_delay),
                Step::Write(RETURN.to_vec()),
            ],
        }
    }

    /// The notice's paste alone: the first phase of a fenced typed
    /// delivery, whose Return is a transaction of its own
    /// ([`Transport::submit`]).
    pub fn paste(notice: &Notice) -> Transport {
        Transport {
            steps: vec![Step::Write(bracketed(notice))],
        }
    }

    /// The keys that take a paste back out of the composer, after a wait
    /// that lets the program read the paste first (none if `after` is
    /// zero): what the PTY host runs when a person's input comes before
    /// the paste's Return.
    pub fn withdraw(keys: &str, after: Duration) -> Transport {
        let wait = (!after.is_zero()).then_some(Step::Wait(after));
        Transport {
            steps: wait
                .into_iter()
                .chain([Step::Write(keys.as_bytes().to_vec())])
                .collect(),
        }
    }

    /// Return alone: the second phase of a fenced typed delivery.
    pub fn submit() -> Transport {
        Transport {
            steps: vec![Step::Write(RETURN.to_vec())],
        }
    }

    /// Every byte the transaction writes, in order.
    pub fn bytes(&self) -> Vec<u8> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Write(bytes) => Some(bytes.as_slice()),
                Step::Wait(_) => None,
            })
            .flatten()
            .copied()
            .collect()
    }

    /// The sum of all waits.
    pub fn total_wait(&self) -> Duration {
        self.steps
            .iter()
            .map(|step| match step {
                Step::Wait(span) => *span,
                Step::Write(_) => Duration::ZERO,
            })
            .sum()
    }
}

/// The notice inside bracketed-paste markers.
fn bracketed(notice: &Notice) -> Vec<u8> {
    let mut paste = Vec::with_capacity(PASTE_START.len() + notice.text().len() + PASTE_END.len());
    paste.extend_from_slice(PASTE_START);
    paste.extend_from_slice(notice.text().as_bytes());
    paste.extend_from_slice(PASTE_END);
    paste
}

fn lossy_text<S: serde::Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&String::from_utf8_lossy(bytes))
}

/// A duration as whole milliseconds (saturating), for the JSON of records.
pub(super) fn millis<S: serde::Serializer>(
    span: &Duration,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(span.as_millis()).unwrap_or(u64::MAX))
}
