//! `ding compile-agent` for a harness whose hooks live in one settings file
//! (the kit's part, written once): the provider's handlers merged into the
//! file, and the declaration that runs the harness with the adapter
//! `$ST_HOOKS/PROVIDER-ding-adapter --settings FILE`, so the adapter can
//! say in `ding status` whether the hooks are still there. Secrets never go
//! into it: the harness inherits them from the environment of `ding up`.

use anyhow::Result;

use super::compile::{CompileRequest, Compiled, Written, adapter_command};
use super::hook_config::{HookEntry, edit_file, merge};
use crate::decl::Draft;
use serde_json::Value;

/// What a provider says of its harness for the compiler.
pub struct SettingsHarness {
    /// The provider, as `ding compile-agent PROVIDER` names it.
    pub provider: &'static str,
    /// The harness, as people call it.
    pub title: &'static str,
    /// The settings file under the project, when `--settings` names none.
    pub settings_file: &'static str,
    /// The program a declaration runs when no argv is given.
    pub default_program: &'static str,
    /// Where its hooks run, said after the file's name (may be empty).
    pub where_hooks_run: &'static str,
    /// The environment variable that holds its model key.
    pub key_variable: &'static str,
    /// Whether a handler in the file is one of the provider's own.
    pub is_ours: fn(&Value) -> bool,
}

/// Merges `entries` into `harness`'s settings file and drafts the
/// declaration whose adapter takes `extra_args` after `--settings FILE`.
pub fn compile(
    request: &CompileRequest,
    harness: &SettingsHarness,
    entries: &[HookEntry],
    extra_args: &[String],
) -> Result<Compiled> {
    let settings = request.settings_path(harness.settings_file);
    let changed = edit_file(&settings, |document| {
        merge(document, entries, &harness.is_ours)
    })?;
    let mut adapter_args = vec![
        "--settings".to_string(),
        settings.to_string_lossy().into_owned(),
    ];
    adapter_args.extend(request.ding_options());
    adapter_args.extend(extra_args.iter().cloned());
    let command = if request.command.is_empty() {
        vec![harness.default_program.to_string()]
    } else {
        request.command.clone()
    };
    let (provider, title) = (harness.provider, harness.title);
    let declaration = Draft {
        name: request.agent.clone(),
        comments: vec![
            format!("Written by `ding compile-agent {provider}`: {title} under DING's careful policy."),
            format!("Its hooks are in {}{}.", settings.display(), harness.where_hooks_run),
            "$ST_HOOKS is the directory `ding hooks install DIR` wrote the adapter into: set it for `ding up`.".into(),
            format!("No secret is written here: export {} (or log in) where you run `ding up`.", harness.key_variable),
        ],
        command,
        cwd: Some(request.cwd.clone()),
        inbox: request.inbox.clone(),
        env: request.env.clone(),
        adapter: Some(adapter_command(provider, &adapter_args)),
    };
    Ok(Compiled {
        declaration,
        written: vec![Written {
            path: settings,
            what: format!("{title} hooks"),
            changed,
        }],
    })
}
