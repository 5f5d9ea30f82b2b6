//! Bounded transports: the opaque list of steps a send or send-if writes.
//!
//! A step writes bytes, writes a paste, or waits. The host does not know
//! what the bytes mean (Return, a newline, a withdraw key); the caller
//! built them. A paste is the one step the host shapes: it adds the
//! bracketed-paste markers when, and only when, the program asked for them
//! (DECSET 2004), as a terminal does. This module
//! owns the step shape, its byte encoding (standard base64 with padding, so
//! any byte including ESC and NUL can be carried) and the caps. Running the
//! steps against the terminal is the host's job.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::core::transport::{PASTE_END, PASTE_START};

/// Most bytes one transport may write in total.
pub const MAX_TRANSPORT_BYTES: usize = 64 * 1024;
/// Longest total wait of one transport, in milliseconds.
pub const MAX_TRANSPORT_WAIT_MS: u64 = 5_000;
/// Most steps in one transport.
pub const MAX_TRANSPORT_STEPS: usize = 256;

/// One step of a transport.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum WireStep {
    /// Write these bytes to the terminal. On the wire: `{"write":"<base64>"}`.
    Write(#[serde(serialize_with = "to_base64", deserialize_with = "from_base64")] Vec<u8>),
    /// Wait this long, measured from the moment every earlier byte reached
    /// the terminal, before the next step. On the wire: `{"waitMs":N}`.
    WaitMs(u64),
    /// Write these bytes as a terminal writes a paste: inside
    /// bracketed-paste markers (`ESC[200~` .. `ESC[201~`) when the program
    /// has enabled bracketed paste (DECSET 2004) at the moment of writing,
    /// as they are otherwise. On the wire: `{"paste":"<base64>"}`.
    Paste(#[serde(serialize_with = "to_base64", deserialize_with = "from_base64")] Vec<u8>),
}

impl fmt::Debug for WireStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireStep::Write(bytes) => write!(f, "Write({:?})", String::from_utf8_lossy(bytes)),
            WireStep::WaitMs(ms) => write!(f, "WaitMs({ms})"),
            WireStep::Paste(bytes) => write!(f, "Paste({:?})", String::from_utf8_lossy(bytes)),
        }
    }
}

/// Why a transport was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TransportError {
    Empty,
    TooManySteps(usize),
    TooManyBytes(usize),
    TooLongWait(u64),
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::Empty => f.write_str("transport writes no bytes"),
            TransportError::TooManySteps(n) => {
                write!(
                    f,
                    "transport has {n} steps, over the cap of {MAX_TRANSPORT_STEPS}"
                )
            }
            TransportError::TooManyBytes(n) => {
                write!(
                    f,
                    "transport writes {n} bytes, over the cap of {MAX_TRANSPORT_BYTES}"
                )
            }
            TransportError::TooLongWait(ms) => {
                write!(
                    f,
                    "transport waits {ms} ms, over the cap of {MAX_TRANSPORT_WAIT_MS}"
                )
            }
        }
    }
}

/// Checks the caps; returns the total number of bytes the steps write.
/// A transport that writes nothing is refused: it could only move the
/// revision's meaning without doing anything.
pub fn validate(steps: &[WireStep]) -> Result<usize, TransportError> {
    if steps.len() > MAX_TRANSPORT_STEPS {
        return Err(TransportError::TooManySteps(steps.len()));
    }
    let (bytes, wait) = totals(steps);
    if bytes > MAX_TRANSPORT_BYTES {
        return Err(TransportError::TooManyBytes(bytes));
    }
    if wait > MAX_TRANSPORT_WAIT_MS {
        return Err(TransportError::TooLongWait(wait));
    }
    if bytes == 0 {
        return Err(TransportError::Empty);
    }
    Ok(bytes)
}

/// How many bytes the steps write at most (a paste with its markers) and
/// how many milliseconds they wait, in all (saturating).
pub fn totals<'a>(steps: impl IntoIterator<Item = &'a WireStep>) -> (usize, u64) {
    steps
        .into_iter()
        .fold((0, 0), |(bytes, wait), step| match step {
            WireStep::Write(data) => (bytes.saturating_add(data.len()), wait),
            WireStep::Paste(text) => (bytes.saturating_add(text.len() + PASTE_MARKERS), wait),
            WireStep::WaitMs(ms) => (bytes, wait.saturating_add(*ms)),
        })
}

/// The bytes a paste's two markers add.
const PASTE_MARKERS: usize = PASTE_START.len() + PASTE_END.len();

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with padding; `None` on any malformed input.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let quads = text.len() / 4;
    for (index, quad) in text.chunks(4).enumerate() {
        let last = index + 1 == quads;
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - padding] {
            let value = ALPHABET.iter().position(|&a| a == c)? as u32;
            n = (n << 6) | value;
        }
        n <<= 6 * padding as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - padding]);
    }
    Some(out)
}

fn to_base64<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&base64_encode(bytes))
}

fn from_base64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    let text = String::deserialize(deserializer)?;
    base64_decode(&text).ok_or_else(|| D::Error::custom("write is not valid base64"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn steps_use_the_documented_json_shape() {
        let steps = vec![
            WireStep::Write(b"\x1b[200~hi".to_vec()),
            WireStep::WaitMs(150),
        ];
        let json = serde_json::to_string(&steps).expect("serializes");
        assert_eq!(json, r#"[{"write":"G1syMDB+aGk="},{"waitMs":150}]"#);
        let back: Vec<WireStep> = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, steps);
    }

    #[test]
    fn invalid_base64_is_refused() {
        for bad in ["a", "a===", "ab=c", "*AAA", "AA==AAAA"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn caps_refuse_oversized_transports() {
        assert_eq!(validate(&[]), Err(TransportError::Empty));
        assert_eq!(validate(&[WireStep::WaitMs(1)]), Err(TransportError::Empty));
        let big = vec![WireStep::Write(vec![0; MAX_TRANSPORT_BYTES + 1])];
        assert!(matches!(
            validate(&big),
            Err(TransportError::TooManyBytes(_))
        ));
        let slow = vec![
            WireStep::Write(vec![1]),
            WireStep::WaitMs(MAX_TRANSPORT_WAIT_MS + 1),
        ];
        assert!(matches!(
            validate(&slow),
            Err(TransportError::TooLongWait(_))
        ));
        let overflow = vec![
            WireStep::Write(vec![1]),
            WireStep::WaitMs(u64::MAX),
            WireStep::WaitMs(9),
        ];
        assert!(matches!(
            validate(&overflow),
            Err(TransportError::TooLongWait(_))
        ));
        let many = vec![WireStep::Write(vec![1]); MAX_TRANSPORT_STEPS + 1];
        assert!(matches!(
            validate(&many),
            Err(TransportError::TooManySteps(_))
        ));
        assert_eq!(
            validate(&[WireStep::Write(vec![1, 2]), WireStep::WaitMs(5)]),
            Ok(2)
        );
    }

    proptest! {
        #[test]
        fn base64_round_trips_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(base64_decode(&base64_encode(&bytes)), Some(bytes));
        }
    }
}
