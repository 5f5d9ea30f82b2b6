//! The command a trial runs a program with: its own environment only, none
//! of the `DING_*` variables of the process that runs the evaluation.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

/// `program` with the trial's environment: every `DING_*` variable this
/// process inherited removed (a run started inside a DING-managed harness
/// must not hand its own agent to the trial), then `env` on top.
pub fn trial_command(program: &Path, env: &[(String, OsString)]) -> Command {
    command_without_inherited_ding(program, env, std::env::vars_os().map(|(name, _)| name))
}

fn command_without_inherited_ding(
    program: &Path,
    env: &[(String, OsString)],
    inherited: impl Iterator<Item = OsString>,
) -> Command {
    let mut command = Command::new(program);
    for name in inherited {
        if name.to_string_lossy().starts_with("DING_") {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.stdin(Stdio::null());
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inherited_ding_variables_never_reach_a_trials_processes() {
        let env = [("HOME".to_string(), OsString::from("/t/home"))];
        let inherited = ["DING_AGENT", "DING_INBOX", "DING_EVAL_SEED", "PATH"].map(OsString::from);
        let command =
            command_without_inherited_ding(Path::new("ding"), &env, inherited.into_iter());
        let mut set: Vec<(String, Option<String>)> = command
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        set.sort();
        assert_eq!(
            set,
            [
                ("DING_AGENT".to_string(), None),
                ("DING_EVAL_SEED".to_string(), None),
                ("DING_INBOX".to_string(), None),
                ("HOME".to_string(), Some("/t/home".to_string())),
            ]
        );
    }
}
