//! The launcher's own log, `$DING_RUNTIME_DIR/codex-launch.log` (never the
//! terminal: the TUI owns it), bounded, and what of the app-server's talk
//! goes into it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// The most the launcher writes into its log in one launch: a long session
/// must not fill the runtime directory.
pub const LOG_BUDGET: usize = 4 * 1024 * 1024;

/// The launcher's own log (never the terminal), bounded by [`LOG_BUDGET`].
pub struct Log {
    file: Option<File>,
    left: usize,
}

impl Log {
    pub fn open(path: &Path) -> Log {
        Log {
            file: OpenOptions::new().create(true).append(true).open(path).ok(),
            left: LOG_BUDGET,
        }
    }

    pub fn line(&mut self, text: &str) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!("{}.{:03} {text}\n", at.as_secs(), at.subsec_millis());
        if line.len() > self.left {
            let _ = writeln!(
                file,
                "log budget of {LOG_BUDGET} bytes spent: no more lines"
            );
            self.file = None;
            return;
        }
        self.left -= line.len();
        let _ = file.write_all(line.as_bytes());
    }
}

/// Replies and the notifications the native path acts on; not the stream
/// of a turn's items and deltas.
pub fn worth_logging(text: &str) -> bool {
    const ACTED_ON: [&str; 3] = [
        "\"thread/started\"",
        "\"thread/status/changed\"",
        "\"thread/queue/changed\"",
    ];
    !text.starts_with("{\"method\"") || ACTED_ON.iter().any(|method| text.contains(method))
}

pub fn abbreviated(text: &str) -> String {
    const MAX: usize = 600;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_keeps_replies_and_the_notifications_acted_on_and_stays_bounded() {
        assert!(worth_logging(r#"{"id":3,"result":{}}"#));
        assert!(worth_logging(
            r#"{"method":"thread/status/changed","params":{"threadId":"t"}}"#
        ));
        assert!(!worth_logging(
            r#"{"method":"item/agentMessage/delta","params":{"delta":"x"}}"#
        ));
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("log");
        let mut log = Log::open(&path);
        let line = "x".repeat(1024 * 1024);
        for _ in 0..8 {
            log.line(&line);
        }
        let size = std::fs::metadata(&path).expect("log").len() as usize;
        assert!(size <= LOG_BUDGET + 100, "{size}");
    }
}
