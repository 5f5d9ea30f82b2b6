//! What a trial recorded, the raw material of its metrics: the sends, the
//! typist's lines, commands and dialogs, the interventions, the archive.

use serde::{Deserialize, Serialize};

/// One `ding send` that printed its filename.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    pub name: String,
    /// When `ding send` returned, unix milliseconds.
    pub unix_ms: u64,
}

/// A line the typist typed and submitted with Return.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    pub text: String,
    pub first_key_ms: u64,
    pub entered_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandKind {
    Compact,
    Clear,
}

/// A harness command the typist typed (compact, clear).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    pub kind: CommandKind,
    pub text: String,
    pub first_key_ms: u64,
    /// When the typist pressed Return on it: the command can only take
    /// effect from then on (a turn that runs while it is being typed still
    /// belongs to the conversation before it).
    pub entered_ms: u64,
    /// For a clear: a prompt of the conversation before it, which no model
    /// call after a clear that took effect may carry.
    pub before: Option<String>,
}

/// What the typist found when it came to answer an open dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "found")]
pub enum DialogAnswer {
    /// The dialog was still open, with this option selected; the typist
    /// answered it.
    Open { selected: Option<u32>, at_ms: u64 },
    /// The dialog was gone before the typist pressed anything.
    Closed { at_ms: u64 },
    /// The dialog never opened.
    NeverOpened,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogSeen {
    /// Which kind of dialog (`pane::DialogKind`, or the harness's
    /// own startup dialog).
    pub kind: String,
    /// Whether the typist meant to answer yes.
    pub consent: bool,
    pub opened_ms: Option<u64>,
    /// The option selected when the typist first saw the dialog open: the
    /// one it means by yes (a picker opens on the current choice, not
    /// always the first).
    pub selected_at_open: Option<u32>,
    pub answer: DialogAnswer,
    /// Whether the gated side effect happened (checked at the end).
    pub marker_exists: bool,
}

/// A `ding intervene` the supervisor ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intervention {
    pub text: String,
    pub unix_ms: u64,
}

/// Everything a trial recorded, the raw material of its metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Records {
    pub sent: Vec<Sent>,
    pub drafts: Vec<Draft>,
    pub commands: Vec<Command>,
    pub dialogs: Vec<DialogSeen>,
    pub interventions: Vec<Intervention>,
    /// Keystrokes the typist typed.
    pub typist_keys: usize,
    /// Files in the inbox's `archive/` at the end, with when they got there.
    pub archived: Vec<(String, u64)>,
    /// A message reaching the model later than this (unix ms) is lost;
    /// `None` when the workload stopped before it set one (then whatever
    /// reached the model counts).
    pub deadline_ms: Option<u64>,
    /// When the harness's composer was first seen ready after the start
    /// or resume a backlog waited for (unix ms): a message sent before it
    /// could not go sooner, and its latency counts from here. `None` when
    /// no backlog waited, or the composer was already ready at the first
    /// look (then the latency counts from the arrival, startup and all).
    #[serde(default)]
    pub ready_ms: Option<u64>,
}
