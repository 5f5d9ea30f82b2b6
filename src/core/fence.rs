//! The time fence of a compare-and-send: how long the person must have
//! left the terminal alone, and the program's screen must have been still,
//! before DING writes a byte.
//!
//! The revision fence alone says "nothing happened since the adapter
//! looked". It cannot say "what the adapter looked at was finished": a key
//! the PTY host counted but the harness had not drawn yet, or a dialog the
//! harness draws a moment after its composer, both sit at a revision that
//! matches. The PTY host judges these two durations on its own clock when
//! the compare runs (docs/pty-protocol.md §3); the engine only asks.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::transport::millis;

/// Which of the terminal's times was too recent for the fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuietPart {
    /// A person's input (keys through attach, an intervention).
    Input,
    /// The program's output (it was still drawing).
    Output,
}

impl QuietPart {
    pub const fn token(self) -> &'static str {
        match self {
            QuietPart::Input => "input",
            QuietPart::Output => "output",
        }
    }
}

impl std::fmt::Display for QuietPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.token())
    }
}

/// What one compare-and-send asks of the terminal's quiet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeFence {
    /// No person's input for at least this long.
    #[serde(serialize_with = "millis")]
    pub quiet_input: Duration,
    /// No output from the program for at least this long.
    #[serde(serialize_with = "millis")]
    pub settled_output: Duration,
}

impl TimeFence {
    /// The two durations in whole milliseconds, as the PTY host reads them.
    pub fn as_millis(&self) -> (u64, u64) {
        let ms = |span: Duration| u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
        (ms(self.quiet_input), ms(self.settled_output))
    }
}
