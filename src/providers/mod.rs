//! Provider rooms: the only place in the product where a provider is
//! named (the evaluation's per-harness folders, `src/eval/harnesses/`, are
//! the other, outside the product).
//!
//! Each room holds what is specific to one real harness for DING: its
//! screen grammar, its hook table and payloads, its configuration, and,
//! where it has one, its native path, all on the neutral kit in
//! `adapter`; and its agent compiler. What only the evaluation needs (a
//! model API's wire format, a scratch home, how a typist reads the screen)
//! lives beside the evaluation, which names these rooms; they never name
//! it.
//!
//! * `claude`: Claude Code.
//! * `codex`: Codex CLI.
//! * `gemini`: Gemini CLI.
//! * `opencode`: OpenCode.
//!
//! The command line reaches a room only through [`ROOMS`], by the names
//! below, so it never names a provider itself.

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod opencode;

use std::ffi::OsString;

use anyhow::Result;

use crate::adapter::compile::{CompileRequest, Compiled};

/// One provider room as the command line reaches it: its harness name and
/// its entry points (the room's `adapter::Provider` is what its adapter
/// runs on the kit).
pub struct Room {
    /// The harness, as `ding adapter HARNESS` and `ding compile-agent
    /// HARNESS` name it.
    pub harness: &'static str,
    /// `ding adapter HARNESS ARGS...` (the launcher `ding hooks install`
    /// writes runs this): runs until the sidecar closes stdin.
    pub run: fn(Vec<OsString>) -> Result<()>,
    /// `ding compile-agent HARNESS`: the declaration, and the harness's
    /// hook configuration merged into its settings.
    pub compile: fn(&CompileRequest) -> Result<Compiled>,
}

pub const ROOMS: [Room; 4] = [
    Room {
        harness: "claude",
        run: claude::adapter::run,
        compile: claude::compile::compile,
    },
    Room {
        harness: "codex",
        run: codex::adapter::run,
        compile: codex::compile::compile,
    },
    Room {
        harness: "gemini",
        run: gemini::adapter::run,
        compile: gemini::compile::compile,
    },
    Room {
        harness: "opencode",
        run: opencode::adapter::run,
        compile: opencode::compile::compile,
    },
];

/// The provider whose harness is `name`.
pub fn by_harness(name: &str) -> Option<&'static Room> {
    ROOMS.iter().find(|provider| provider.harness == name)
}

/// Every harness name, `a|b`, for help and errors.
pub fn harness_names() -> String {
    ROOMS.map(|provider| provider.harness).join("|")
}
