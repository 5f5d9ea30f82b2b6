//! The sidecar's log: one line per decision or runtime event, on stderr.
//!
//! JSON lines by default, so tools can follow "what happened to my message";
//! `--log-format human` prints the same facts as short sentences. `ding up`
//! points stderr at `sidecar.log` in the agent's runtime directory.
//!
//! What an adapter (or any other input) can make the log write is bounded
//! three ways, so that it cannot fill the runtime filesystem:
//!
//! * Records of the same kind are counted instead of written past a burst
//!   (`log_limit`): at most [`LOG_BURST`] per kind per [`LOG_WINDOW`], then
//!   one `suppressed` record with the count when the window ends (or the
//!   sidecar stops). A kind is the decision or event name and its fixed
//!   code (`protocol-rejected/malformed-json`, `held/not-idle`,
//!   `adapter-stderr`). Records that say what happened to a message
//!   (`arrived`, `rang`, `sent`, ...) and the sidecar's own start and stop
//!   are always written: inbox files, not an adapter, bound their number.
//! * No string in a record carries more than [`MAX_LOGGED_STRING`] bytes;
//!   longer ones are cut and say how much was cut.
//! * The file is capped and rotated ([`crate::log_file`]).
//!
//! A line that cannot be written (a full filesystem) is lost, counted and
//! reported in status (`logWriteFailure`); it never stops the sidecar.
//!
//! Log lines quote filenames and adapter output, so both formats are
//! written by the rule of [`crate::escape`]: JSON with every
//! character that is not plain as a `\uXXXX` escape, human lines with it as
//! `\u{hex}`. A person reading the log with `cat` sees no control, line
//! break, format or bidi character from anyone else.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::escaped_json::to_json;
pub use super::log_limit::{LOG_BURST, LOG_WINDOW};
use super::log_limit::{RepeatLimiter, Suppressed};
use crate::core::decision::Record;
use crate::core::time::Time;
use crate::escape::escape;
use crate::log_file::{LogFailure, LogSink};
use crate::wall_clock::now_rfc3339;

/// The most bytes of one string a record carries.
pub const MAX_LOGGED_STRING: usize = 512;

/// Decisions always written: the fate of messages.
const ALWAYS_DECISIONS: &[&str] = &[
    "arrived",
    "scanned",
    "archived",
    "rang",
    "sent",
    "conflict",
    "send-failed",
    "outcome-unknown",
    "released",
    "hook-owned",
];

/// Events always written: the sidecar's own life, once each per run (or
/// per adapter stop).
const ALWAYS_EVENTS: &[&str] = &[
    "sidecar-start",
    "sidecar-stopping",
    "sidecar-stopped",
    "adapter-stopped",
    "journal-quarantined",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Human,
}

impl LogFormat {
    pub fn parse(text: &str) -> Option<LogFormat> {
        match text {
            "json" => Some(LogFormat::Json),
            "human" => Some(LogFormat::Human),
            _ => None,
        }
    }
}

pub struct Log {
    format: LogFormat,
    agent: String,
    limiter: RepeatLimiter,
    sink: LogSink,
    clock: fn() -> Time,
}

impl Log {
    /// A log on stderr, capped and rotated if stderr is the file `file`,
    /// timed by `clock` (the sidecar's monotonic clock).
    pub fn new(format: LogFormat, agent: &str, file: Option<&Path>, clock: fn() -> Time) -> Log {
        Log::on(format, agent, LogSink::stderr(file), clock)
    }

    fn on(format: LogFormat, agent: &str, sink: LogSink, clock: fn() -> Time) -> Log {
        Log {
            format,
            agent: agent.to_string(),
            limiter: RepeatLimiter::new(),
            sink,
            clock,
        }
    }

    /// Logs an engine decision record.
    pub fn decision(&mut self, record: &Record) {
        self.write(serde_json::to_value(record).unwrap_or(Value::Null));
    }

    /// Logs a runtime event: `event` names it, `fields` says the rest.
    pub fn event(&mut self, event: &str, fields: impl Serialize) {
        self.write(event_value(event, fields));
    }

    /// The line [`Log::decision`] writes (past the limiter), without its
    /// newline.
    pub fn decision_line(&self, record: &Record) -> String {
        let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
        cap_strings(&mut value);
        self.render(value)
    }

    /// The line [`Log::event`] writes (past the limiter), without its newline.
    pub fn event_line(&self, event: &str, fields: impl Serialize) -> String {
        let mut value = event_value(event, fields);
        cap_strings(&mut value);
        self.render(value)
    }

    /// When the next `suppressed` summary is due, for the sidecar's timer.
    pub fn next_summary_at(&self) -> Option<Time> {
        self.limiter.next_summary_at()
    }

    /// Writes the summaries of the windows that have ended.
    pub fn summarize_ended(&mut self) {
        let now = (self.clock)();
        for summary in self.limiter.close_ended(now) {
            self.write_summary(summary);
        }
    }

    /// Writes every summary still open (the sidecar is stopping).
    pub fn summarize_all(&mut self) {
        for summary in self.limiter.close_all() {
            self.write_summary(summary);
        }
    }

    fn write(&mut self, mut value: Value) {
        if let Some(kind) = repeat_kind(&value) {
            let (admitted, closed) = self.limiter.admit(&kind, (self.clock)());
            if let Some(summary) = closed {
                self.write_summary(summary);
            }
            if !admitted {
                return;
            }
        }
        cap_strings(&mut value);
        self.emit(value);
    }

    fn write_summary(&mut self, summary: Suppressed) {
        self.emit(json!({
            "event": "suppressed",
            "like": summary.kind,
            "count": summary.count,
            "since": summary.since,
        }));
    }

    fn emit(&mut self, value: Value) {
        let line = self.render(value);
        if let Some(note) = self.sink.write_line(&line).note() {
            let note = self.render(note);
            self.sink.write_line(&note);
        }
    }

    /// Since when this log's writes fail, if they do.
    pub fn failing(&self) -> Option<&LogFailure> {
        self.sink.failing()
    }

    /// One line in this log's format, with the agent's name, the
    /// monotonic time (`at`, in the engine's milliseconds: how long things
    /// took) and the wall-clock time (`time`, RFC 3339 UTC: when), and
    /// DING's own transactions marked `"origin":"delivery"` (the PTY host
    /// marks a supervisor's input `intervention`).
    fn render(&self, mut value: Value) -> String {
        if let Some(object) = value.as_object_mut() {
            object.insert("agent".into(), json!(self.agent));
            object.entry("at").or_insert_with(|| json!((self.clock)()));
            object.insert("time".into(), json!(now_rfc3339()));
            let transaction = object
                .get("decision")
                .and_then(Value::as_str)
                .is_some_and(|decision| TRANSACTION_DECISIONS.contains(&decision));
            if transaction {
                object.insert("origin".into(), json!("delivery"));
            }
        }
        match self.format {
            LogFormat::Json => json_text(&value),
            LogFormat::Human => human(&value),
        }
    }
}

/// The decisions that are one of DING's own transactions on the terminal.
const TRANSACTION_DECISIONS: &[&str] =
    &["rang", "sent", "conflict", "send-failed", "outcome-unknown"];

/// A runtime event as a record: its fields, named by `event`.
fn event_value(event: &str, fields: impl Serialize) -> Value {
    let mut value = serde_json::to_value(fields).unwrap_or(Value::Null);
    if !value.is_object() {
        value = json!({ "detail": value });
    }
    if let Some(object) = value.as_object_mut() {
        object.insert("event".into(), json!(event));
    }
    value
}

/// `value` as escaped JSON; a value serde cannot write (never ours) as null.
fn json_text(value: &Value) -> String {
    to_json(value).unwrap_or_else(|_| "null".into())
}

/// The kind a record is counted under, or `None` if it is always written.
/// Built from names and codes of our own vocabulary only, never from text
/// an input chose, so there are few kinds.
fn repeat_kind(value: &Value) -> Option<String> {
    if let Some(decision) = value.get("decision").and_then(Value::as_str) {
        if ALWAYS_DECISIONS.contains(&decision) {
            return None;
        }
        let code = ["reason", "error", "down"].iter().find_map(|field| {
            let inner = value.get(field)?;
            ["code", "error", "cause"]
                .iter()
                .find_map(|tag| inner.get(tag)?.as_str())
        });
        let code = code.filter(|code| {
            code.len() <= 40 && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        });
        return Some(match code {
            Some(code) => format!("{decision}/{code}"),
            None => decision.to_string(),
        });
    }
    let event = value.get("event")?.as_str()?;
    (!ALWAYS_EVENTS.contains(&event)).then(|| event.to_string())
}

/// Cuts every string longer than [`MAX_LOGGED_STRING`] bytes (at a
/// character boundary) and says how much was cut.
fn cap_strings(value: &mut Value) {
    match value {
        Value::String(text) if text.len() > MAX_LOGGED_STRING => {
            let mut cut = MAX_LOGGED_STRING;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let dropped = text.len() - cut;
            text.truncate(cut);
            text.push_str(&format!("...({dropped} more bytes)"));
        }
        Value::Array(items) => items.iter_mut().for_each(cap_strings),
        Value::Object(fields) => fields.values_mut().for_each(cap_strings),
        _ => {}
    }
}

/// `2026-11-30T10:15:00.123Z t+1200ms rang request=1 messages=[a.md]`
/// style rendering (the wall-clock time first when the record has one).
/// Every value is escaped by the one rule.
pub fn human(value: &Value) -> String {
    let Some(object) = value.as_object() else {
        return json_text(value);
    };
    let what = object
        .get("decision")
        .or_else(|| object.get("event"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let mut line = match object.get("at").and_then(Value::as_u64) {
        Some(at) => format!("t+{at}ms {}", escape(what)),
        None => escape(what),
    };
    if let Some(time) = object.get("time").and_then(Value::as_str) {
        line = format!("{} {line}", escape(time));
    }
    for (key, field) in object {
        if matches!(key.as_str(), "decision" | "event" | "at" | "agent" | "time") {
            continue;
        }
        let shown = match field {
            Value::String(text) => escape(text),
            other => json_text(other),
        };
        line.push_str(&format!(" {}={shown}", escape(key)));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::fs::{self, OpenOptions};
    use std::os::fd::IntoRawFd;

    thread_local! {
        static NOW: Cell<u64> = const { Cell::new(0) };
    }

    fn test_clock() -> Time {
        Time::from_millis(NOW.with(Cell::get))
    }

    /// A JSON log into a file of its own; returns it with the file's path.
    fn log_in(dir: &Path) -> (Log, std::path::PathBuf) {
        let path = dir.join("log");
        let fd = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("open")
            .into_raw_fd();
        let sink = LogSink::on_fd(fd, &[], None, u64::MAX);
        (Log::on(LogFormat::Json, "w", sink, test_clock), path)
    }

    fn lines(path: &Path) -> Vec<Value> {
        fs::read_to_string(path)
            .expect("read")
            .lines()
            .map(|line| serde_json::from_str(line).expect("json"))
            .collect()
    }

    #[test]
    fn repeated_records_are_counted_and_message_fates_always_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, path) = log_in(dir.path());
        for i in 0..1000 {
            log.write(json!({"decision": "protocol-rejected", "at": i,
                "error": {"error": "malformed-json", "detail": format!("byte {i}")}}));
            log.write(json!({"decision": "rang", "at": i, "request": i}));
            log.event("adapter-stderr", json!({"line": "noise"}));
        }
        NOW.with(|now| now.set(60_000));
        log.summarize_ended();
        let lines = lines(&path);
        let count = |what: &str| {
            lines
                .iter()
                .filter(|l| l["decision"] == what || l["event"] == what)
                .count()
        };
        assert_eq!(count("protocol-rejected"), LOG_BURST as usize);
        assert_eq!(count("adapter-stderr"), LOG_BURST as usize);
        assert_eq!(
            count("rang"),
            1000,
            "the fate of messages is never counted away"
        );
        let summaries: Vec<(String, u64)> = lines
            .iter()
            .filter(|l| l["event"] == "suppressed")
            .map(|l| {
                (
                    l["like"].as_str().unwrap_or("").into(),
                    l["count"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(
            summaries,
            [
                ("adapter-stderr".into(), 990),
                ("protocol-rejected/malformed-json".into(), 990)
            ]
        );
    }

    #[test]
    fn a_record_carries_a_bounded_string_of_the_input() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, path) = log_in(dir.path());
        let garbage = "é".repeat(100_000);
        log.event("adapter-stderr", json!({ "line": garbage }));
        let line = fs::read_to_string(&path).expect("read");
        assert!(line.len() < MAX_LOGGED_STRING + 200, "{} bytes", line.len());
        let shown = lines(&path)[0]["line"].as_str().expect("line").to_string();
        assert!(
            shown.ends_with(&format!("...({} more bytes)", 200_000 - 512)),
            "{shown}"
        );
    }

    #[test]
    fn human_lines_lead_with_time_and_decision() {
        let value = json!({"at": 1200, "decision": "rang", "request": 1, "messages": ["a.md"], "agent": "w"});
        assert_eq!(human(&value), "t+1200ms rang messages=[\"a.md\"] request=1");
    }

    #[test]
    fn every_record_has_wall_clock_and_monotonic_time_and_transactions_their_origin() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut log, path) = log_in(dir.path());
        NOW.with(|now| now.set(1234));
        log.event("sidecar-start", json!({ "pid": 1 }));
        log.write(json!({"decision": "rang", "at": 1200, "request": 1}));
        log.write(json!({"decision": "held", "at": 1201}));
        let lines = lines(&path);
        for line in &lines {
            let time = line["time"].as_str().expect("time");
            // RFC 3339, UTC, milliseconds: 2026-11-30T10:15:00.123Z
            assert_eq!(time.len(), 24, "{time}");
            assert!(time.ends_with('Z') && &time[10..11] == "T", "{time}");
            assert!(line["at"].is_u64(), "{line}");
        }
        assert_eq!(lines[0]["at"], 1234, "events get the monotonic time too");
        assert_eq!(lines[1]["origin"], "delivery");
        assert!(lines[2].get("origin").is_none());
        let human_line = human(&lines[1]);
        assert!(
            human_line.starts_with(lines[1]["time"].as_str().expect("time")),
            "{human_line}"
        );
        assert!(human_line.contains(" t+1200ms rang "), "{human_line}");
    }

    #[test]
    fn formats_parse_exactly() {
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("human"), Some(LogFormat::Human));
        assert_eq!(LogFormat::parse("Human"), None);
    }
}
