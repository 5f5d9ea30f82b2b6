//! `ding compile-agent codex`: the agent declaration for Codex under
//! `turn-boundary+fresh-idle`.
//!
//! Codex needs no settings file: the harness command is DING's launcher
//! (`$ST_HOOKS/codex-ding-adapter launch -- codex ...`), which declares
//! DING's hooks and their exact trust for that invocation only
//! (`trust.rs`), so no file of the user's is written or merged, and DING's
//! hooks never run in the user's own Codex sessions. Re-running it writes
//! the same declaration. Secrets never go into it: Codex reads its key (or
//! its login) from the environment of `ding up` or its own `CODEX_HOME`.
//! `--env TERM=dumb`, under which Codex asks before it starts
//! (`environment.rs`), is refused.

use anyhow::{Result, bail};

use crate::adapter::compile::{CompileRequest, Compiled, IdlePath, adapter_command};
use crate::decl::Draft;

use super::trust::PROVIDER;

/// The program a declaration runs when no argv is given: the installed
/// Codex CLI on `PATH`.
pub const DEFAULT_PROGRAM: &str = "codex";

pub fn compile(request: &CompileRequest) -> Result<Compiled> {
    super::environment::check_declared(&request.env).map_err(anyhow::Error::msg)?;
    if let Some(settings) = &request.settings {
        bail!(
            "codex takes no --settings ({}): its hooks are declared per invocation by the launcher, and no file is written",
            settings.display()
        );
    }
    let mut options = request.ding_options();
    if request.idle == IdlePath::Terminal {
        options.extend([
            "--idle-path".to_string(),
            IdlePath::Terminal.as_str().into(),
        ]);
    }
    let mut launch = vec!["launch".to_string()];
    launch.extend(options.iter().cloned());
    launch.push("--".into());
    if request.command.is_empty() {
        launch.push(DEFAULT_PROGRAM.into());
    } else {
        launch.extend(request.command.iter().cloned());
    }
    let idle = match request.idle {
        IdlePath::Native => {
            "idle work is queued through Codex's own app-server (no terminal input)"
        }
        IdlePath::Terminal => "idle work is typed under a fresh idle lease",
    };
    let declaration = Draft {
        name: request.agent.clone(),
        comments: vec![
            "Written by `ding compile-agent codex`: Codex under DING's careful policy.".into(),
            format!("The launcher declares DING's hooks and their trust per invocation; {idle}."),
            "$ST_HOOKS is the directory `ding hooks install DIR` wrote the adapter into: set it for `ding up`.".into(),
            "No secret is written here: export the model key (or log in) where you run `ding up`.".into(),
        ],
        command: adapter_command(PROVIDER, &launch),
        cwd: Some(request.cwd.clone()),
        inbox: request.inbox.clone(),
        env: request.env.clone(),
        adapter: Some(adapter_command(PROVIDER, &options)),
    };
    Ok(Compiled {
        declaration,
        written: Vec::new(),
    })
}
