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
/// contain it: every ESC in it is escaped (`crate::escape`).
pub const PASTE_END: &[u8] = b"\x1b[201~";
/// Return, which TUIs read as submit.
pub const RETURN: &[u8] = b"\r";

/// One step of a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// Write these bytes to the terminal.
    Write(#[serde(serialize_with = "lossy_text")] Vec<u8>),
    /// Write this text as a terminal writes a paste: inside bracketed-paste
    /// markers ([`PASTE_START`] .. [`PASTE_END`]) when the program has
    /// asked for them (DECSET 2004), as it is otherwise. Only the PTY host
    /// knows the mode at the moment of writing, so it adds the markers; a
    /// mode change is output, which moves the revision a compare-and-send
    /// checks. The text must be safe without markers too: a notice is one
    /// line of visible characters, so a line reader acts on nothing in it
    /// but the Return that follows.
    Paste(#[serde(serialize_with = "lossy_text")] Vec<u8>),
    /// Let this much time pass before the next step.
    Wait(#[serde(serialize_with = "millis")] Duration),
}

/// A bounded transaction: at most a notice's worth of bytes and one wait.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transport {
    pub steps: Vec<Step>,
}

impl Transport {
    /// The fixed combined transport used by both policies: a paste of the
    /// notice, a wait longer than paste-burst Enter suppression, Return.
    pub fn combined(notice: &Notice, submit_delay: Duration) -> Transport {
        Transport {
            steps: vec![
                Step::Paste(notice.text().as_bytes().to_vec()),
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
            steps: vec![Step::Paste(notice.text().as_bytes().to_vec())],
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

    /// Every byte the transaction writes, in order, to a program that has
    /// asked for bracketed paste (`bracketed`) or not.
    pub fn bytes_for(&self, bracketed: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for step in &self.steps {
            match step {
                Step::Write(bytes) => out.extend_from_slice(bytes),
                Step::Paste(text) => out.extend_from_slice(&pasted(text, bracketed)),
                Step::Wait(_) => {}
            }
        }
        out
    }

    /// Every byte the transaction writes to a program that has asked for
    /// bracketed paste, as the real harnesses all do.
    pub fn bytes(&self) -> Vec<u8> {
        self.bytes_for(true)
    }

    /// The sum of all waits.
    pub fn total_wait(&self) -> Duration {
        self.steps
            .iter()
            .map(|step| match step {
                Step::Wait(span) => *span,
                Step::Write(_) | Step::Paste(_) => Duration::ZERO,
            })
            .sum()
    }
}

/// `text` as a terminal pastes it: inside bracketed-paste markers when the
/// program asked for them (`bracketed`), as it is otherwise.
pub fn pasted(text: &[u8], bracketed: bool) -> Vec<u8> {
    if !bracketed {
        return text.to_vec();
    }
    let mut paste = Vec::with_capacity(PASTE_START.len() + text.len() + PASTE_END.len());
    paste.extend_from_slice(PASTE_START);
    paste.extend_from_slice(text);
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
