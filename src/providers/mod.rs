//! Provider rooms: the only place in the crate where a provider is named.
//!
//! Each room holds what is specific to one real harness: the wire format
//! its model API speaks (for the loopback model server of `eval`), how
//! to prepare a scratch home that starts it model-free with no first-run
//! dialog, how the evaluation's typist reads its screen and answers its
//! dialogs (a person's reading, kept apart from the adapter's grammar it
//! judges), and, once it has one, its DING adapter (screen grammar and
//! hook semantics on the neutral kit in `adapter`) and agent compiler,
//! which is also how the evaluation sets up its careful arm.
//! Everything generic (the HTTP server, the directive grammar, turn
//! counting, the request log, printing a launch, the typist, the
//! scenarios, the report, the adapter loop, claims, context text,
//! settings merges) lives in `eval` and `adapter`; a room is grammar and
//! configuration.
//!
//! * `claude`: Claude Code (Anthropic Messages API).
//! * `codex`: Codex CLI (OpenAI Responses API).
//! * `gemini`: Gemini CLI (Gemini API `generateContent`).
//!
//! The command line reaches a room only through [`PROVIDERS`], by the names
//! below, so it never names a provider itself.

pub mod claude;
pub mod codex;
pub mod gemini;

use std::ffi::OsString;

use anyhow::Result;

use crate::adapter::compile::{CompileRequest, Compiled};
use crate::eval::launch::{Launch, Setup};
use crate::eval::model_server::WireFormat;
use crate::eval::pane::Pane;

/// One provider: its harness name, its model API name, and its entry
/// points.
pub struct Provider {
    /// The harness, as `ding-eval harness-env HARNESS`, `ding adapter
    /// HARNESS` and `ding compile-agent HARNESS` name it.
    pub harness: &'static str,
    /// The model API, as `ding-eval model-server --api API` names it.
    pub api: &'static str,
    /// The model API's wire format.
    pub wire_format: fn() -> Box<dyn WireFormat>,
    /// Writes the scratch home and says how to run the harness in it.
    pub prepare: fn(&Setup) -> Result<Launch>,
    /// The harness's screen and keys, for the evaluation's typist.
    pub pane: &'static dyn Pane,
    /// Its DING adapter and agent compiler, once it has them.
    pub adapter: Option<AdapterEntry>,
}

/// A provider's DING adapter and agent compiler.
pub struct AdapterEntry {
    /// `ding adapter HARNESS ARGS...` (the launcher `ding hooks install`
    /// writes runs this): runs until the sidecar closes stdin.
    pub run: fn(Vec<OsString>) -> Result<()>,
    /// `ding compile-agent HARNESS`: the declaration, and the harness's
    /// hook configuration merged into its settings.
    pub compile: fn(&CompileRequest) -> Result<Compiled>,
}

pub const PROVIDERS: [Provider; 3] = [
    Provider {
        harness: "claude",
        api: "anthropic",
        wire_format: claude::messages::wire_format,
        prepare: claude::home::prepare,
        pane: &claude::pane::PANE,
        adapter: Some(AdapterEntry {
            run: claude::adapter::run,
            compile: claude::compile::compile,
        }),
    },
    Provider {
        harness: "codex",
        api: "openai",
        wire_format: codex::responses::wire_format,
        prepare: codex::home::prepare,
        pane: &codex::pane::PANE,
        adapter: Some(AdapterEntry {
            run: codex::adapter::run,
            compile: codex::compile::compile,
        }),
    },
    Provider {
        harness: "gemini",
        api: "gemini",
        wire_format: gemini::generate_content::wire_format,
        prepare: gemini::home::prepare,
        pane: &gemini::pane::PANE,
        adapter: Some(AdapterEntry {
            run: gemini::adapter::run,
            compile: gemini::compile::compile,
        }),
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

/// The provider whose harness is `name`, if it has an adapter.
pub fn with_adapter(name: &str) -> Option<(&'static Provider, &'static AdapterEntry)> {
    let provider = by_harness(name)?;
    Some((provider, provider.adapter.as_ref()?))
}

/// Every provider with an adapter.
pub fn adapters() -> impl Iterator<Item = (&'static Provider, &'static AdapterEntry)> {
    PROVIDERS
        .iter()
        .filter_map(|provider| Some((provider, provider.adapter.as_ref()?)))
}

/// Every harness name with an adapter, `a|b`, for help and errors.
pub fn adapter_names() -> String {
    adapters()
        .map(|(provider, _)| provider.harness)
        .collect::<Vec<_>>()
        .join("|")
}

/// Every harness name, `a|b`, for help and errors.
pub fn harness_names() -> String {
    PROVIDERS.map(|provider| provider.harness).join("|")
}

/// Every model API name, `a|b`, for help and errors.
pub fn api_names() -> String {
    PROVIDERS.map(|provider| provider.api).join("|")
}
