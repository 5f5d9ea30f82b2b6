//! A model of Codex 0.169.0's app-server as the launcher's native idle
//! path sees it (`docs/providers/codex.md`, the design's findings §8): the
//! JSON-RPC methods the launcher calls, the notifications it reads, and
//! the per-thread queue that starts a turn when the thread is idle and
//! not paused.
//!
//! It answers exactly the messages `ding::providers::codex::native::QueuePath`
//! sends; the harness model around it owns the turns (`codex_harness.rs`).

use serde_json::{Value, json};

use ding::providers::codex::trust::HOOKS;

/// One submission in a thread's queue.
#[derive(Clone, Debug)]
pub struct Item {
    pub server_id: String,
    pub client_id: String,
    pub text: String,
    pub thread: String,
}

pub struct AppServer {
    /// The TUI's thread, once it has one.
    pub thread: Option<String>,
    threads: u64,
    pub active: bool,
    /// Esc or a denied approval pauses the queue until `thread/queue/start`.
    pub paused: bool,
    pub queue: Vec<Item>,
    next_item: u64,
    /// The TUI's thread is loaded: an app-server started again after the
    /// last one died loads it only once the TUI has reconnected.
    pub loaded: bool,
}

/// What a message to the app-server did.
#[derive(Default)]
pub struct Handled {
    /// Lines for the launcher (replies and notifications).
    pub to_launcher: Vec<String>,
    /// The queue may start its next item now.
    pub kick: bool,
}

impl AppServer {
    pub fn new() -> AppServer {
        AppServer {
            thread: None,
            threads: 0,
            active: false,
            paused: false,
            queue: Vec::new(),
            next_item: 1,
            loaded: true,
        }
    }

    /// Started again on the same socket after the last one died: the
    /// thread and its queue are on disk (the thread had a turn), nothing
    /// runs, and the thread is loaded once the TUI reconnects.
    pub fn restarted(&mut self) {
        self.active = false;
        self.loaded = false;
    }

    /// The TUI reconnected and resumed its thread: its status, said.
    pub fn reconnected(&mut self) -> Option<String> {
        self.loaded = true;
        let thread = self.thread.clone()?;
        Some(json!({"method": "thread/status/changed", "params": {"threadId": thread, "status": {"type": "idle"}}}).to_string())
    }

    /// A new thread (the TUI's first, or `/clear`): its `thread/started`.
    pub fn new_thread(&mut self) -> String {
        self.threads += 1;
        let id = format!("thread-{}", self.threads);
        self.thread = Some(id.clone());
        self.active = false;
        json!({"method": "thread/started", "params": {"thread": {"id": id, "ephemeral": false, "parentThreadId": null}}}).to_string()
    }

    /// The thread's status changed: its notification.
    pub fn set_active(&mut self, active: bool) -> Option<String> {
        if self.active == active {
            return None;
        }
        self.active = active;
        let thread = self.thread.clone()?;
        let kind = if active { "active" } else { "idle" };
        Some(json!({"method": "thread/status/changed", "params": {"threadId": thread, "status": {"type": kind, "activeFlags": []}}}).to_string())
    }

    /// The next item the queue starts, if the thread is idle and the queue
    /// runs.
    pub fn take_next(&mut self) -> Option<(Item, String)> {
        if self.active || self.paused {
            return None;
        }
        let thread = self.thread.clone()?;
        let at = self.queue.iter().position(|item| item.thread == thread)?;
        let item = self.queue.remove(at);
        Some((item, self.queue_changed(&thread)))
    }

    /// The texts of the items waiting in the current thread.
    pub fn queued_texts(&self) -> Vec<String> {
        self.queue
            .iter()
            .filter(|item| Some(&item.thread) == self.thread.as_ref())
            .map(|item| item.text.clone())
            .collect()
    }

    /// Whether an item waits in the current thread.
    pub fn has_queued(&self) -> bool {
        self.queue
            .iter()
            .any(|item| Some(&item.thread) == self.thread.as_ref())
    }

    fn queue_changed(&self, thread: &str) -> String {
        json!({"method": "thread/queue/changed", "params": {"threadId": thread}}).to_string()
    }

    pub fn handle(&mut self, line: &str) -> Handled {
        let mut handled = Handled::default();
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            return handled;
        };
        let Some(id) = message.get("id").cloned() else {
            // `initialized`: a notification, no answer.
            return handled;
        };
        let params = &message["params"];
        let thread = params["threadId"].as_str().unwrap_or_default().to_string();
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({}),
            "hooks/list" => {
                let hooks: Vec<Value> = HOOKS
                    .iter()
                    .map(|(event, _)| {
                        let mut chars = event.chars();
                        let first = chars.next().map(|c| c.to_ascii_lowercase());
                        let name: String = first.into_iter().chain(chars).collect();
                        json!({"eventName": name, "command": format!("ding hook codex {event}"), "trustStatus": "trusted"})
                    })
                    .collect();
                json!({"data": [{"hooks": hooks}]})
            }
            "thread/loaded/list" => {
                let loaded = self.thread.iter().filter(|_| self.loaded);
                json!({"data": loaded.collect::<Vec<_>>()})
            }
            "thread/queue/list" => {
                let items: Vec<Value> = self
                    .queue
                    .iter()
                    .filter(|item| item.thread == thread)
                    .map(
                        |item| json!({"id": item.server_id, "clientUserMessageId": item.client_id}),
                    )
                    .collect();
                json!({"data": items})
            }
            "thread/queue/add" => {
                let server_id = format!("q{}", self.next_item);
                self.next_item += 1;
                self.queue.push(Item {
                    server_id: server_id.clone(),
                    client_id: params["clientUserMessageId"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    text: params["input"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    thread: thread.clone(),
                });
                handled.to_launcher.push(self.queue_changed(&thread));
                handled.kick = true;
                json!({"queuedSubmission": {"id": server_id}})
            }
            "thread/queue/start" => {
                self.paused = false;
                handled.kick = true;
                json!({})
            }
            "thread/queue/delete" => {
                let server_id = params["queuedSubmissionId"].as_str().unwrap_or_default();
                self.queue.retain(|item| item.server_id != server_id);
                json!({})
            }
            other => {
                let error = json!({"code": -32601, "message": format!("no method {other}")});
                handled
                    .to_launcher
                    .insert(0, json!({"id": id, "error": error}).to_string());
                return handled;
            }
        };
        handled
            .to_launcher
            .insert(0, json!({"id": id, "result": result}).to_string());
        handled
    }
}
