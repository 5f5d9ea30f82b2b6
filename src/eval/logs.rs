//! The two logs the evaluation counts from, read as typed records: the
//! model server's request log (what reached the model) and the PTY host's
//! log (who wrote to the terminal, and how many bytes). Nothing here reads
//! what DING says about itself.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One text the model saw, with its role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Text {
    pub role: String,
    pub text: String,
}

/// The fields of one request-log line the evaluation uses
/// (docs/providers/model-servers.md has them all).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Unix milliseconds when the server read the request.
    pub t: u64,
    pub seq: u64,
    pub class: String,
    pub turn: u64,
    /// `Some` exactly for the model calls of a turn.
    pub call_in_turn: Option<u64>,
    pub prompt: Option<String>,
    #[serde(default)]
    pub texts: Vec<Text>,
    /// What the server answered.
    #[serde(default, deserialize_with = "reply")]
    pub reply: Reply,
}

/// What the model server answered a request, as far as the metrics read it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reply {
    /// `text`, `slow`, `command`, `wait`, ...
    pub kind: String,
    /// How long a `slow` reply streamed.
    pub seconds: Option<u64>,
}

fn reply<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Reply, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(Reply {
        kind: value["kind"].as_str().unwrap_or_default().to_string(),
        seconds: value["seconds"].as_u64(),
    })
}

impl Request {
    /// A model call of a turn (not a title, compaction or token count).
    pub fn is_turn_call(&self) -> bool {
        self.call_in_turn.is_some()
    }

    /// How many of the texts the model saw contain `needle`: each is one
    /// message or content block, so a file injected twice into the same
    /// conversation shows as two.
    pub fn blocks_carrying(&self, needle: &str) -> usize {
        self.texts
            .iter()
            .filter(|text| text.text.contains(needle))
            .count()
    }

    pub fn carries(&self, needle: &str) -> bool {
        self.blocks_carrying(needle) > 0
    }

    /// The `user` texts, trimmed: where what a person typed arrives.
    pub fn user_texts(&self) -> impl Iterator<Item = &str> {
        self.texts
            .iter()
            .filter(|text| text.role == "user")
            .map(|text| text.text.trim())
    }
}

/// The request log, read incrementally: each `refresh` parses only the
/// lines appended since the last one.
pub struct RequestLog {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
    pub requests: Vec<Request>,
    /// Lines that were not request records (never expected; kept visible).
    pub unreadable: usize,
}

impl RequestLog {
    pub fn new(path: &Path) -> RequestLog {
        RequestLog {
            path: path.to_path_buf(),
            offset: 0,
            partial: Vec::new(),
            requests: Vec::new(),
            unreadable: 0,
        }
    }

    /// Reads what was appended; returns how many requests are new.
    pub fn refresh(&mut self) -> Result<usize> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(err) => return Err(err).with_context(|| format!("open {}", self.path.display())),
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .with_context(|| format!("read {}", self.path.display()))?;
        self.offset += bytes.len() as u64;
        self.partial.extend_from_slice(&bytes);
        let before = self.requests.len();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            match serde_json::from_slice::<Request>(&line[..end]) {
                Ok(request) => self.requests.push(request),
                Err(_) => self.unreadable += 1,
            }
        }
        Ok(self.requests.len() - before)
    }
}

/// One line of the PTY host's log that records input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PtyInput {
    /// `delivery` (DING's own) or `intervention` (anyone else).
    pub event: String,
    /// `send`, `send-if` or `restart`.
    pub op: String,
    /// Bytes the transaction writes (0 for a restart).
    pub bytes: u64,
}

/// The input records of a PTY host log (other lines are skipped).
pub fn pty_inputs(log: &str) -> Vec<PtyInput> {
    log.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|value| {
            let event = value["event"].as_str()?;
            if event != "delivery" && event != "intervention" {
                return None;
            }
            Some(PtyInput {
                event: event.to_string(),
                op: value["op"].as_str().unwrap_or_default().to_string(),
                bytes: value["bytes"].as_u64().unwrap_or(0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_log_is_read_line_by_line_as_it_grows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("requests.jsonl");
        let mut log = RequestLog::new(&path);
        assert_eq!(log.refresh().expect("absent is empty"), 0);
        let mut file = File::create(&path).expect("create");
        let line = r#"{"t":5,"seq":1,"class":"prompt","turn":1,"callInTurn":1,"prompt":"hi","reply":{"kind":"text","text":"x"},"texts":[{"role":"user","text":" hi "}],"body":{}}"#;
        write!(file, "{line}\n{}", &line[..20]).expect("write");
        assert_eq!(log.refresh().expect("refresh"), 1);
        writeln!(file, "{}", &line[20..]).expect("write");
        writeln!(file, "not json").expect("write");
        assert_eq!(log.refresh().expect("refresh"), 1);
        assert_eq!(log.requests.len(), 2);
        assert_eq!(log.unreadable, 1);
        let request = &log.requests[0];
        assert!(request.is_turn_call());
        assert_eq!(request.reply.kind, "text");
        assert_eq!(request.user_texts().collect::<Vec<_>>(), ["hi"]);
    }

    #[test]
    fn only_input_records_are_kept_from_the_pty_log() {
        let log = r#"{"event":"child-start","pid":1,"revision":1}
{"bytes":209,"event":"delivery","op":"send","peerPid":3,"revision":1}
{"bytes":1,"event":"intervention","op":"send","peerPid":4,"revision":2}
{"event":"intervention","op":"restart","pid":1}
garbage"#;
        let inputs = pty_inputs(log);
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs[0].event, "delivery");
        assert_eq!(inputs[0].bytes, 209);
        assert_eq!(inputs[2].op, "restart");
        assert_eq!(inputs[2].bytes, 0);
    }
}
