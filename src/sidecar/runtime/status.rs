//! The status socket: each request answered with the status document,
//! built once per window for all the askers of one turn.

use std::borrow::Cow;

use mio::Token;

use crate::core::status::MessageWindow;
use crate::core::time::Time;
use crate::sidecar::status_document::{Running, StatusDocument, UnreadableView};
use crate::sidecar::status_server::StatusRequest;

use super::state::Runtime;

impl Runtime {
    /// Answers the requests that arrived. Every request of one call is
    /// answered at the same `now`, so the document is built once for all
    /// of them: a flood of askers (up to the accept budget a call) costs one
    /// rendering of a many-thousand-message status, not one each, and the
    /// asker behind them waits for a few renderings, not for dozens.
    pub(super) fn on_status_peer(&mut self, token: Token, now: Time) {
        let registry = self.poll.registry();
        let mut documents: Vec<(MessageWindow, Vec<u8>)> = Vec::new();
        for (peer, request) in self.status.on_ready(registry, token) {
            let StatusRequest::Status { messages } = request;
            let window = messages.unwrap_or(MessageWindow::All);
            let at = match documents.iter().position(|(built, _)| *built == window) {
                Some(at) => at,
                None => {
                    let document = status_document(self, now, &window);
                    documents.push((window, document));
                    documents.len() - 1
                }
            };
            self.status
                .reply(self.poll.registry(), peer, &documents[at].1);
        }
    }
}

/// The status document `ding status --json` prints, listing the unread
/// files of `window`.
fn status_document(runtime: &Runtime, now: Time, window: &MessageWindow) -> Vec<u8> {
    let engine = runtime.engine.status_listing(now, window);
    let lines = engine
        .messages
        .iter()
        .map(|message| message.describe(now))
        .collect();
    StatusDocument {
        agent: Cow::Borrowed(&runtime.spec.name),
        running: Running,
        pid: std::process::id(),
        uptime_ms: now.since(runtime.started).as_millis() as u64,
        policy: runtime.spec.ding.policy,
        fingerprint: runtime.spec.fingerprint(),
        fingerprint_input: runtime.spec.fingerprint_input(),
        declaration: Cow::Borrowed(&runtime.declaration),
        inbox: Cow::Borrowed(runtime.inbox.root()),
        pty_socket: runtime.paths.pty_socket(),
        pty_connected: runtime.link.is_connected(),
        adapter_command: runtime.spec.adapter_command().map(Cow::Borrowed),
        adapter_pid: runtime
            .adapter
            .as_ref()
            .map(|running| running.process.pid()),
        journal: runtime.store.path(),
        journal_warning: runtime.journal_warning.as_deref().map(Cow::Borrowed),
        journal_write_error: runtime.journal_write_error.as_deref().map(Cow::Borrowed),
        log_write_failure: runtime.log.failing().map(Cow::Borrowed),
        unreadable: runtime
            .unreadable
            .values()
            .map(UnreadableView::of)
            .collect(),
        engine,
        lines,
    }
    .to_json()
}
