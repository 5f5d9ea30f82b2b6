//! The demo agent's transcript: one JSON line per event, appended to a file,
//! each stamped with the wall-clock time in milliseconds.
//!
//! This is what `make demo` prints to show what reached the agent and when.
//! The events themselves come from the state machine (`agent::Event`); this
//! module only stamps, encodes and appends them.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::demo::agent::Event;

/// One transcript line: `{"t":MS,"event":...,...}`.
#[derive(Serialize)]
struct Line<'a> {
    t: u64,
    #[serde(flatten)]
    event: &'a Event,
}

/// Encodes one event as a JSON line (with its newline).
pub fn encode(event: &Event, unix_ms: u64) -> Result<Vec<u8>> {
    let mut line =
        serde_json::to_vec(&Line { t: unix_ms, event }).context("encode transcript event")?;
    line.push(b'\n');
    Ok(line)
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_ms(now: SystemTime) -> u64 {
    now.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// An append-only transcript file. Each line is written with one `write`
/// call on a file opened with O_APPEND, so a reader never sees half a line
/// from a crash between lines.
pub struct Transcript {
    file: File,
}

impl Transcript {
    pub fn open(path: &Path) -> Result<Transcript> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("open transcript {}", path.display()))?;
        Ok(Transcript { file })
    }

    pub fn record(&mut self, event: &Event) -> Result<()> {
        let line = encode(event, unix_ms(SystemTime::now()))?;
        self.file
            .write_all(&line)
            .context("append to the transcript")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::agent::{AnswerKey, MenuOption};

    #[test]
    fn lines_carry_time_event_name_and_camel_case_fields() {
        let submitted = Event::Submitted {
            turn: 2,
            text: "hi \"you\"".into(),
            pasted: true,
            queued: false,
        };
        assert_eq!(
            String::from_utf8(encode(&submitted, 1234).expect("encodes")).expect("utf-8"),
            "{\"t\":1234,\"event\":\"submitted\",\"turn\":2,\"text\":\"hi \\\"you\\\"\",\"pasted\":true,\"queued\":false}\n"
        );
        let answered = Event::MenuAnswered {
            turn: 3,
            option: 1,
            answer: MenuOption::Yes,
            key: AnswerKey::Return,
            after_paste: true,
        };
        assert_eq!(
            String::from_utf8(encode(&answered, 5).expect("encodes")).expect("utf-8"),
            "{\"t\":5,\"event\":\"menu-answered\",\"turn\":3,\"option\":1,\"answer\":\"yes\",\"key\":\"return\",\"afterPaste\":true}\n"
        );
    }

    #[test]
    fn records_append_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        for _ in 0..2 {
            let mut transcript = Transcript::open(&path).expect("open");
            transcript
                .record(&Event::TurnStart { turn: 1 })
                .expect("record");
        }
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l.contains("\"event\":\"turn-start\"")));
    }
}
