//! `ding compile-agent claude`: the agent declaration for Claude Code under
//! `turn-boundary+fresh-idle`, and the hooks it relies on merged into the
//! project's `.claude/settings.local.json` (see `settings.rs`).
//!
//! The declaration runs `claude` (or the given argv) in the project, with
//! the adapter `$ST_HOOKS/claude-ding-adapter --settings FILE`, so the
//! adapter can say in `ding status` whether the hooks are still there.
//! Secrets never go into it: the harness inherits `ANTHROPIC_API_KEY` (or
//! a login) from the environment of `ding up`.

use anyhow::Result;

use crate::adapter::compile::{CompileRequest, Compiled, IdlePath};
use crate::adapter::settings_compile::{self, SettingsHarness};

use super::settings::{PROVIDER, SETTINGS_FILE, hook_entries, is_ours};

/// The program a declaration runs when no argv is given: the installed
/// Claude Code on `PATH`.
pub const DEFAULT_PROGRAM: &str = "claude";

/// Claude Code, for the kit's settings-file compiler.
const HARNESS: SettingsHarness = SettingsHarness {
    provider: PROVIDER,
    title: "Claude Code",
    settings_file: SETTINGS_FILE,
    default_program: DEFAULT_PROGRAM,
    where_hooks_run: "",
    key_variable: "ANTHROPIC_API_KEY",
    is_ours,
};

pub fn compile(request: &CompileRequest) -> Result<Compiled> {
    let wake = request.idle == IdlePath::Native;
    let entries = hook_entries(&request.ding, wake);
    let mut extra = Vec::new();
    if !wake {
        extra.extend([
            "--idle-path".to_string(),
            IdlePath::Terminal.as_str().into(),
        ]);
    }
    settings_compile::compile(request, &HARNESS, &entries, &extra)
}
