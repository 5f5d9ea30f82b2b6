//! Provider rooms: the only place in the crate where a provider is named.
//!
//! Each room holds what is specific to one real harness: the wire format
//! its model API speaks (for the loopback model server of `eval`), how to
//! prepare a scratch home that starts it model-free with no first-run
//! dialog, how the evaluation's typist reads its screen and answers its
//! dialogs, and how the evaluation's careful arm is set up for it.
//! Everything generic (the HTTP server, the directive grammar, turn
//! counting, the request log, printing a launch, the typist, the scenarios,
//! the report) lives in `eval`; a room is grammar and configuration.
//!
//! * `claude`: Claude Code (Anthropic Messages API).
//! * `codex`: Codex CLI (OpenAI Responses API).
//!
//! The command line reaches a room only through [`PROVIDERS`], by the names
//! below, so it never names a provider itself.

pub mod claude;
pub mod codex;

use anyhow::Result;

use crate::eval::arm::{self, CarefulArm, CarefulRequest};
use crate::eval::launch::{Launch, Setup};
use crate::eval::model_server::WireFormat;
use crate::eval::pane::Pane;

/// One provider: its harness name, its model API name, and its entry
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
    /// The harness's screen and keys, for the evaluation's typist.
    pub pane: &'static dyn Pane,
    /// The evaluation's careful arm for this harness: the declaration
    /// (with `ding {}` and the provider's adapter, from `ding compile-agent
    /// HARNESS`) and its hook configuration, for one trial's prepared
    /// launch. Until the provider has an adapter this is
    /// `arm::no_adapter_yet`, and the report says "careful arm: not
    /// available (no adapter)" for every careful trial.
    pub careful_arm: fn(&CarefulRequest<'_>) -> Result<CarefulArm>,
}

pub const PROVIDERS: [Provider; 2] = [
    Provider {
        harness: "claude",
        api: "anthropic",
        wire_format: claude::messages::wire_format,
        prepare: claude::home::prepare,
        pane: &claude::pane::PANE,
        careful_arm: arm::no_adapter_yet,
    },
    Provider {
        harness: "codex",
        api: "openai",
        wire_format: codex::responses::wire_format,
        prepare: codex::home::prepare,
        pane: &codex::pane::PANE,
        careful_arm: arm::no_adapter_yet,
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
