//! The evaluation's per-harness folders: the only place in the evaluation
//! where a harness is named. Each folder holds what the evaluation needs of
//! one real harness and the product does not: the wire format its model
//! API speaks (for the loopback model server), how to prepare a scratch
//! home that starts it model-free with no first-run dialog, and how the
//! typist reads its screen and answers its dialogs (a person's reading,
//! kept apart from the adapter's grammar it judges). The careful arm's
//! adapter and agent compiler are the product's (`ding::providers`), found
//! by the same harness name.
//!
//! * `claude`: Claude Code (Anthropic Messages API).
//! * `codex`: Codex CLI (OpenAI Responses API).
//! * `gemini`: Gemini CLI (Gemini API `generateContent`).
//! * `opencode`: OpenCode (OpenAI Chat Completions, through its
//!   OpenAI-compatible provider). It has no product provider yet
//!   (`Harness::provider` is `None`): its careful arm says so and runs
//!   nothing; its aggressive arm runs.

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod opencode;

use anyhow::Result;

use crate::launch::{Launch, Setup};
use crate::model_server::WireFormat;
use crate::pane::Pane;

/// One harness as the evaluation drives it.
pub struct Harness {
    /// The harness, as `ding-eval harness-env HARNESS` names it (and the
    /// product's `ding adapter HARNESS`).
    pub name: &'static str,
    /// The model API, as `ding-eval model-server --api API` names it.
    pub api: &'static str,
    /// The model API's wire format.
    pub wire_format: fn() -> Box<dyn WireFormat>,
    /// Writes the scratch home and says how to run the harness in it.
    pub prepare: fn(&Setup) -> Result<Launch>,
    /// The harness's screen and keys, for the evaluation's typist.
    pub pane: &'static dyn Pane,
}

impl Harness {
    /// The product's provider for this harness (its adapter and agent
    /// compiler), which the careful arm sets up; `None` while it has none.
    pub fn provider(&self) -> Option<&'static ding::providers::Room> {
        ding::providers::by_harness(self.name)
    }
}

pub const HARNESSES: [Harness; 4] = [
    Harness {
        name: "claude",
        api: "anthropic",
        wire_format: claude::messages::wire_format,
        prepare: claude::home::prepare,
        pane: &claude::pane::PANE,
    },
    Harness {
        name: "codex",
        api: "openai",
        wire_format: codex::responses::wire_format,
        prepare: codex::home::prepare,
        pane: &codex::pane::PANE,
    },
    Harness {
        name: "gemini",
        api: "gemini",
        wire_format: gemini::generate_content::wire_format,
        prepare: gemini::home::prepare,
        pane: &gemini::pane::PANE,
    },
    Harness {
        name: "opencode",
        api: "openai-chat",
        wire_format: opencode::chat_completions::wire_format,
        prepare: opencode::home::prepare,
        pane: &opencode::pane::PANE,
    },
];

/// The harness named `name`.
pub fn by_name(name: &str) -> Option<&'static Harness> {
    HARNESSES.iter().find(|harness| harness.name == name)
}

/// The harness whose model API is `name`.
pub fn by_api(name: &str) -> Option<&'static Harness> {
    HARNESSES.iter().find(|harness| harness.api == name)
}

/// Every harness name, `a|b`, for help and errors.
pub fn names() -> String {
    HARNESSES.map(|harness| harness.name).join("|")
}

/// Every model API name, `a|b`, for help and errors.
pub fn api_names() -> String {
    HARNESSES.map(|harness| harness.api).join("|")
}
