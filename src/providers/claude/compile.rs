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

use crate::adapter::compile::{CompileRequest, Compiled, IdlePath, Written, adapter_command};
use crate::adapter::hook_config::{edit_file, merge};
use crate::decl::Draft;

use super::settings::{PROVIDER, SETTINGS_FILE, is_ours, wanted};

/// The program a declaration runs when no argv is given: the installed
/// Claude Code on `PATH`.
pub const DEFAULT_PROGRAM: &str = "claude";

pub fn compile(request: &CompileRequest) -> Result<Compiled> {
    let settings = request.settings_path(SETTINGS_FILE);
    let wake = request.idle == IdlePath::Native;
    let entries = wanted(&request.ding, wake);
    let changed = edit_file(&settings, |document| merge(document, &entries, &is_ours))?;
    let mut adapter_args = vec![
        "--settings".to_string(),
        settings.to_string_lossy().into_owned(),
    ];
    adapter_args.extend(request.ding_options());
    if !wake {
        adapter_args.extend([
            "--idle-path".to_string(),
            IdlePath::Terminal.as_str().into(),
        ]);
    }
    let command = if request.command.is_empty() {
        vec![DEFAULT_PROGRAM.to_string()]
    } else {
        request.command.clone()
    };
    let declaration = Draft {
        name: request.agent.clone(),
        comments: vec![
            "Written by `ding compile-agent claude`: Claude Code under DING's careful policy.".into(),
            format!("Its hooks are in {}.", settings.display()),
            "$ST_HOOKS is the directory `ding hooks install DIR` wrote the adapter into: set it for `ding up`.".into(),
            "No secret is written here: export ANTHROPIC_API_KEY (or log in) where you run `ding up`.".into(),
        ],
        command,
        cwd: Some(request.cwd.clone()),
        inbox: request.inbox.clone(),
        env: request.env.clone(),
        adapter: Some(adapter_command(PROVIDER, &adapter_args)),
    };
    Ok(Compiled {
        declaration,
        written: vec![Written {
            path: settings,
            what: "Claude Code hooks",
            changed,
        }],
    })
}
