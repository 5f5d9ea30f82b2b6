//! The sidecar's log: one line per decision or runtime event, on stderr.
//!
//! JSON lines by default, so tools can follow "what happened to my message";
//! `--log-format human` prints the same facts as short sentences. `ding up`
//! points stderr at `sidecar.log` in the agent's runtime directory.
//!
//! Log lines quote filenames and adapter output, so both formats are
//! written by the rule of [`crate::core::escape`]: JSON with every
//! character that is not plain as a `\uXXXX` escape, human lines with it as
//! `\u{hex}`. A person reading the log with `cat` sees no control, line
//! break, format or bidi character from anyone else.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Value, json};

use super::escaped_json::to_json;
use crate::core::decision::Record;
use crate::core::escape::escape;

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
}

impl Log {
    pub fn new(format: LogFormat, agent: &str) -> Log {
        Log {
            format,
            agent: agent.to_string(),
        }
    }

    /// Logs an engine decision record.
    pub fn decision(&self, record: &Record) {
        self.write(&self.decision_line(record));
    }

    /// Logs a runtime event: `event` names it, `fields` says the rest.
    pub fn event(&self, event: &str, fields: impl Serialize) {
        self.write(&self.event_line(event, fields));
    }

    /// The line [`Log::decision`] writes, without its newline.
    pub fn decision_line(&self, record: &Record) -> String {
        self.line(serde_json::to_value(record).unwrap_or(Value::Null))
    }

    /// The line [`Log::event`] writes, without its newline.
    pub fn event_line(&self, event: &str, fields: impl Serialize) -> String {
        let mut value = serde_json::to_value(fields).unwrap_or(Value::Null);
        if !value.is_object() {
            value = json!({ "detail": value });
        }
        if let Some(object) = value.as_object_mut() {
            object.insert("event".into(), json!(event));
        }
        self.line(value)
    }

    fn line(&self, mut value: Value) -> String {
        if let Some(object) = value.as_object_mut() {
            object.insert("agent".into(), json!(self.agent));
        }
        match self.format {
            LogFormat::Json => json_text(&value),
            LogFormat::Human => human(&value),
        }
    }

    fn write(&self, line: &str) {
        let stderr = io::stderr();
        let mut lock = stderr.lock();
        let _ = writeln!(lock, "{line}");
    }
}

/// `value` as escaped JSON; a value serde cannot write (never ours) as null.
fn json_text(value: &Value) -> String {
    to_json(value).unwrap_or_else(|_| "null".into())
}

/// `t+1200ms rang request=1 messages=[a.md]` style rendering.
fn human(value: &Value) -> String {
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
    for (key, field) in object {
        if matches!(key.as_str(), "decision" | "event" | "at" | "agent") {
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

    #[test]
    fn human_lines_lead_with_time_and_decision() {
        let value = json!({"at": 1200, "decision": "rang", "request": 1, "messages": ["a.md"], "agent": "w"});
        assert_eq!(human(&value), "t+1200ms rang messages=[\"a.md\"] request=1");
    }

    #[test]
    fn formats_parse_exactly() {
        assert_eq!(LogFormat::parse("json"), Some(LogFormat::Json));
        assert_eq!(LogFormat::parse("human"), Some(LogFormat::Human));
        assert_eq!(LogFormat::parse("Human"), None);
    }
}
