//! The sidecar's log: one line per decision or runtime event, on stderr.
//!
//! JSON lines by default, so tools can follow "what happened to my message";
//! `--log-format human` prints the same facts as short sentences. `ding up`
//! points stderr at `sidecar.log` in the agent's runtime directory.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Value, json};

use crate::core::decision::Record;

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
        let value = serde_json::to_value(record).unwrap_or(Value::Null);
        self.write(value);
    }

    /// Logs a runtime event: `event` names it, `fields` says the rest.
    pub fn event(&self, event: &str, fields: impl Serialize) {
        let mut value = serde_json::to_value(fields).unwrap_or(Value::Null);
        if !value.is_object() {
            value = json!({ "detail": value });
        }
        if let Some(object) = value.as_object_mut() {
            object.insert("event".into(), json!(event));
        }
        self.write(value);
    }

    fn write(&self, mut value: Value) {
        if let Some(object) = value.as_object_mut() {
            object.insert("agent".into(), json!(self.agent));
        }
        let line = match self.format {
            LogFormat::Json => value.to_string(),
            LogFormat::Human => human(&value),
        };
        let stderr = io::stderr();
        let mut lock = stderr.lock();
        let _ = writeln!(lock, "{line}");
    }
}

/// `t+1200ms rang request=1 messages=[a.md]` style rendering.
fn human(value: &Value) -> String {
    let Some(object) = value.as_object() else {
        return value.to_string();
    };
    let what = object
        .get("decision")
        .or_else(|| object.get("event"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    let mut line = match object.get("at").and_then(Value::as_u64) {
        Some(at) => format!("t+{at}ms {what}"),
        None => what.to_string(),
    };
    for (key, field) in object {
        if matches!(key.as_str(), "decision" | "event" | "at" | "agent") {
            continue;
        }
        let shown = match field {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        line.push_str(&format!(" {key}={shown}"));
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
