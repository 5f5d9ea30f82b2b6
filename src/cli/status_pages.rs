//! `ding status NAME --all` and `--json`: every unread file, fetched from
//! the sidecar a page at a time.
//!
//! A status of 100,000 unread files is megabytes of JSON; built at once it
//! cost the sidecar most of a second and, for a few askers at once, tens
//! of megabytes. The sidecar lists at most [`PAGE`] files per answer
//! (`MessageWindow::Page`, a cursor by name that neither repeats nor skips
//! a file as others arrive or are archived), so each answer is small and
//! its memory is given back before the next one.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::core::status::{MessageStatus, MessageWindow};
use crate::sidecar::control::status_listing_within;
use crate::sidecar::escaped_json::to_json;
use crate::sidecar::status_document::LiveStatus;

/// How many files one answer lists.
pub const PAGE: usize = 2000;

/// How long one page may take to come.
const PAGE_TIMEOUT: Duration = Duration::from_secs(5);

/// Calls `each` with every unread file and its human line, in FIFO order,
/// page by page, from the sidecar at `socket`.
pub fn each_file(
    socket: &Path,
    mut each: impl FnMut(&MessageStatus, &str) -> Result<()>,
) -> Result<()> {
    let mut after = None;
    loop {
        let window = MessageWindow::Page { after, limit: PAGE };
        let reply = status_listing_within(socket, PAGE_TIMEOUT, &window)?;
        let page = LiveStatus::from_reply(&reply)?;
        for (message, line) in page.engine.messages.iter().zip(&page.lines) {
            each(message, line)?;
        }
        if page.engine.messages.len() < PAGE {
            return Ok(());
        }
        after = page
            .engine
            .messages
            .last()
            .map(|message| message.name.clone());
    }
}

/// Prints `document` (the status as JSON, its `engine.messages` and
/// `lines` empty) with every unread file in them, the messages written as
/// their pages come. The human lines follow the messages in the document
/// (keys sort), so they are kept until the messages are done.
pub fn print_json(
    socket: &Path,
    mut document: serde_json::Value,
    out: &mut impl Write,
) -> Result<()> {
    const MESSAGES: &str = "\u{0}messages";
    const LINES: &str = "\u{0}lines";
    document["engine"]["messages"] = MESSAGES.into();
    document["lines"] = LINES.into();
    if let Some(engine) = document["engine"].as_object_mut() {
        // Every file is listed: the document as a whole one reads.
        engine.remove("window");
    }
    let text = crate::sidecar::escaped_json::to_json_pretty(&document)?;
    let quoted = |sentinel: &str| to_json(sentinel).unwrap_or_default();
    let (head, rest) = text
        .split_once(&quoted(MESSAGES))
        .ok_or_else(|| anyhow::anyhow!("the status document has no engine.messages"))?;
    let (middle, tail) = rest
        .split_once(&quoted(LINES))
        .ok_or_else(|| anyhow::anyhow!("the status document has no lines"))?;
    write!(out, "{head}[")?;
    let mut lines = Vec::new();
    each_file(socket, |message, line| {
        let separator = if lines.is_empty() { "" } else { "," };
        write!(out, "{separator}\n      {}", to_json(message)?)?;
        lines.push(to_json(line)?);
        Ok(())
    })?;
    write!(
        out,
        "{}]{middle}[",
        if lines.is_empty() { "" } else { "\n    " }
    )?;
    for (at, line) in lines.iter().enumerate() {
        let separator = if at == 0 { "" } else { "," };
        write!(out, "{separator}\n    {line}")?;
    }
    writeln!(out, "{}]{tail}", if lines.is_empty() { "" } else { "\n  " })?;
    Ok(())
}
