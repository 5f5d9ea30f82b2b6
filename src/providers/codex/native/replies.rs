//! What the native path reads out of Codex's answers and notifications,
//! typed where it arrives: the machine never looks into JSON for a word.

use serde_json::Value;

use super::super::thread_status::ThreadStatus;
use super::super::trust::is_ours;
use crate::adapter::native_idle::wire::ListedHook;

/// The prefix of DING's `clientUserMessageId`s.
pub const ID_PREFIX: &str = "ding-";

/// A delivery of DING's in Codex's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    pub client_id: String,
    /// Codex's id for it, once `thread/queue/add` answered.
    pub server_id: Option<String>,
}

/// DING's deliveries in a `thread/queue/list` answer.
pub fn ours_queued(result: &Value) -> Vec<Queued> {
    result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let client_id = item["clientUserMessageId"].as_str()?;
            client_id.starts_with(ID_PREFIX).then(|| Queued {
                client_id: client_id.to_string(),
                server_id: item["id"].as_str().map(String::from),
            })
        })
        .collect()
}

/// The `clientUserMessageId`s of every item in a `thread/queue/list`
/// answer.
pub fn listed_ids(result: &Value) -> Vec<&str> {
    result["data"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item["clientUserMessageId"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// DING's hooks in a `hooks/list` answer.
pub fn ours_listed(result: &Value) -> Vec<ListedHook> {
    result["data"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|cwd| cwd["hooks"].as_array().into_iter().flatten())
        .filter(|hook| hook["command"].as_str().is_some_and(is_ours))
        .map(|hook| {
            let event = hook["eventName"].as_str().unwrap_or_default();
            let mut chars = event.chars();
            let event: String = chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default();
            ListedHook {
                event,
                trust: hook["trustStatus"].as_str().map(String::from),
            }
        })
        .collect()
}

/// The thread a `thread/started` announces, if it is one the TUI shows:
/// not an ephemeral one (a title request's) nor a sub-agent's.
pub fn started_thread(params: &Value) -> Option<&str> {
    let thread = &params["thread"];
    let real = thread["ephemeral"] != true && thread["parentThreadId"].is_null();
    thread["id"].as_str().filter(|_| real)
}

/// The status a `thread/status/changed` says.
pub fn changed_status(params: &Value) -> ThreadStatus {
    ThreadStatus::parse(params["status"]["type"].as_str())
}
