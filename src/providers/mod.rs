//! Provider rooms: the only place in the crate where a provider is named.
//!
//! Each room holds what is specific to one real harness: the wire format
//! its model API speaks (for the loopback model server of `eval`) and how
//! to prepare a scratch home that starts it model-free with no first-run
//! dialog. Everything generic (the HTTP server, the directive grammar, turn
//! counting, the request log, printing a launch) lives in `eval`; a room
//! is grammar and configuration.
//!
//! * `claude`: Claude Code (Anthropic Messages API).
//! * `codex`: Codex CLI (OpenAI Responses API).
//!
//! The command line reaches a room only through [`PROVIDERS`], by the names
//! below, so it never names a provider itself.

pub mod claude;
pub mod codex;

use anyhow::Result;

use crate::eval::launch::{Launch, Setup};
use crate::eval::model_server::WireFormat;

/// One provider: its harness name, its model API name, and its two entry
/// points.
pub struct Provider {
    /// The harness, as `ding eval-harness-env HARNESS` names it.
    pub harness: &'static str,
    /// The model API, as `ding eval-model-server --api API` names it.
    pub api: &'static str,
    /// The model API's wire format.
    pub wire_format: fn() -> Box<dyn WireFormat>,
    /// Writes the scratch home and says how to run the harness in it.
    pub prepare: fn(&Setup) -> Result<Launch>,
}

pub const PROVIDERS: [Provider; 2] = [
    Provider {
        harness: "claude",
        api: "anthropic",
        wire_format: claude::messages::wire_format,
        prepare: claude::home::prepare,
    },
    Provider {
        harness: "codex",
        api: "openai",
        wire_format: codex::responses::wire_format,
        prepare: codex::home::prepare,
    },
];

/// The provider whose harness is `name`.
pub fn by_harness(name: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|provider| provider.harness == name)
}

/// The provider whose model API is `name`.
pub fn by_api(name: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|provider| provider.api == name)
}

/// Every harness name, `a|b`, for help and errors.
pub fn harness_names() -> String {
    PROVIDERS.map(|provider| provider.harness).join("|")
}

/// Every model API name, `a|b`, for help and errors.
pub fn api_names() -> String {
    PROVIDERS.map(|provider| provider.api).join("|")
}
