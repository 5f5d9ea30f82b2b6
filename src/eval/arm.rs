//! The two arms of the A/B evaluation and how a trial gets its agent
//! declaration for each.
//!
//! * **aggressive**: the launch's declaration with no `ding {}` block, the
//!   unconfigured default.
//! * **careful**: `turn-boundary+fresh-idle` with the harness's adapter,
//!   set up by `ding compile-agent PROVIDER` (declaration plus the
//!   harness's hook configuration), the way the harness's user guide
//!   says. A harness whose registry entry has no adapter answers
//!   [`CarefulArm::Unavailable`], and the trial is reported as not run
//!   with that reason, never faked.

use std::ffi::OsString;
use std::fmt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::launch::Launch;
use super::trial_command::trial_command;
use crate::harnesses::Harness;
use ding::adapter::compile::is_secret_name;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arm {
    Aggressive,
    Careful,
}

impl Arm {
    pub const ALL: [Arm; 2] = [Arm::Aggressive, Arm::Careful];

    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Aggressive => "aggressive",
            Arm::Careful => "careful",
        }
    }

    pub fn parse(text: &str) -> Result<Arm> {
        match text {
            "aggressive" => Ok(Arm::Aggressive),
            "careful" => Ok(Arm::Careful),
            other => bail!("an arm is `aggressive` or `careful`, got `{other}`"),
        }
    }
}

impl fmt::Display for Arm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What setting up the careful arm needs for one trial.
pub struct CarefulRequest<'a> {
    /// The `ding` binary the trial drives (for `ding hooks install` and
    /// `ding compile-agent`, and the hooks' spelling of `ding`).
    pub ding: &'a Path,
    /// The trial's environment, which every `ding` it runs gets.
    pub env: &'a [(String, OsString)],
    /// The agent's name in the declaration.
    pub agent: &'a str,
    /// How the prepared harness runs (argv, environment, project).
    pub launch: &'a Launch,
    /// The trial's own directory: the declaration will be written to
    /// `agent.kdl` in it, and the adapter launchers (`$ST_HOOKS`) go to
    /// `hooks/` under it.
    pub dir: &'a Path,
}

/// How the careful arm runs on a harness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CarefulArm {
    /// The declaration to run (with its `ding {}` block and adapter), and
    /// variables `ding up` needs on top of the trial's environment
    /// (`ST_HOOKS`, and the secrets a declaration never holds).
    Ready {
        declaration: String,
        env: Vec<(String, String)>,
    },
    /// The careful arm cannot run on this harness; why, in a few words.
    Unavailable { reason: String },
}

/// Sets up the careful arm on `harness` exactly as its user guide says a
/// person does: `ding hooks install DIR` for the adapter launchers, then
/// `ding compile-agent HARNESS` with the prepared launch (its argv, cwd
/// and every variable that is not a secret; the secrets go to the
/// environment of `ding up`, as the compiler requires). One mechanism for
/// every harness: a harness with no adapter in the registry has no
/// careful arm, and says so.
pub fn careful(harness: &Harness, request: &CarefulRequest<'_>) -> Result<CarefulArm> {
    if harness.provider().is_none() {
        return Ok(CarefulArm::Unavailable {
            reason: "no adapter".into(),
        });
    }
    let hooks = request.dir.join("hooks");
    let mut install = ding_command(request);
    install.arg("hooks").arg("install").arg(&hooks);
    run_ok(install)?;
    let (args, secrets) = compile_args(harness.name, request);
    let mut compile = ding_command(request);
    compile.args(&args);
    let declaration = run_ok(compile)?;
    let mut env = vec![("ST_HOOKS".to_string(), path_text(&hooks)?)];
    env.extend(secrets);
    Ok(CarefulArm::Ready { declaration, env })
}

/// `compile-agent HARNESS ...` for `request`, and the launch's secrets,
/// which stay out of it.
fn compile_args(
    harness: &str,
    request: &CarefulRequest<'_>,
) -> (Vec<OsString>, Vec<(String, String)>) {
    let mut args: Vec<OsString> = vec![
        "compile-agent".into(),
        harness.into(),
        "--name".into(),
        request.agent.into(),
        "--cwd".into(),
        request.launch.cwd.clone().into(),
        "--ding".into(),
        request.ding.into(),
    ];
    let mut secrets = Vec::new();
    for (name, value) in &request.launch.env {
        if is_secret_name(name) {
            secrets.push((name.clone(), value.clone()));
        } else {
            args.push("--env".into());
            args.push(format!("{name}={value}").into());
        }
    }
    args.push("--".into());
    args.extend(request.launch.argv.iter().map(OsString::from));
    (args, secrets)
}

fn ding_command(request: &CarefulRequest<'_>) -> Command {
    let mut command = trial_command(request.ding, request.env);
    command.current_dir(request.dir);
    command
}

/// Runs `command`; its stdout, or an error with everything it said.
fn run_ok(mut command: Command) -> Result<String> {
    let output = command
        .output()
        .with_context(|| format!("run {command:?}"))?;
    if !output.status.success() {
        bail!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8(output.stdout).context("the declaration is not UTF-8")
}

fn path_text(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_string)
        .with_context(|| format!("{} is not UTF-8", path.display()))
}

/// How the report says that an arm did not run for want of setup.
pub fn unavailable_text(reason: &str) -> String {
    format!("careful arm: not available ({reason})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_read_and_print_their_words() {
        for arm in Arm::ALL {
            assert_eq!(Arm::parse(arm.as_str()).ok(), Some(arm));
        }
        assert!(Arm::parse("rich").is_err());
    }

    fn request<'a>(launch: &'a Launch) -> CarefulRequest<'a> {
        CarefulRequest {
            ding: Path::new("/bin/ding"),
            env: &[],
            agent: "eval",
            launch,
            dir: Path::new("/t"),
        }
    }

    #[test]
    fn a_provider_without_an_adapter_says_so_plainly() {
        let launch = Launch {
            argv: vec!["h".into()],
            env: Vec::new(),
            cwd: "/p".into(),
        };
        // A harness the evaluation drives but the product has no
        // provider for yet.
        let without = Harness {
            name: "a-harness-without-a-provider",
            ..crate::harnesses::HARNESSES[0]
        };
        let CarefulArm::Unavailable { reason } =
            careful(&without, &request(&launch)).expect("answer")
        else {
            panic!("an arm without an adapter must not be ready");
        };
        assert_eq!(
            unavailable_text(&reason),
            "careful arm: not available (no adapter)"
        );
    }

    #[test]
    fn the_compiler_gets_the_launch_and_the_secrets_stay_for_ding_up() {
        let launch = Launch {
            argv: vec!["/opt/h".into(), "--flag".into()],
            env: vec![
                ("HOME".into(), "/s/home".into()),
                ("MODEL_API_KEY".into(), "k".into()),
            ],
            cwd: "/s/project".into(),
        };
        let (args, secrets) = compile_args("h", &request(&launch));
        let args: Vec<&str> = args.iter().map(|arg| arg.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "compile-agent",
                "h",
                "--name",
                "eval",
                "--cwd",
                "/s/project",
                "--ding",
                "/bin/ding",
                "--env",
                "HOME=/s/home",
                "--",
                "/opt/h",
                "--flag",
            ]
        );
        assert_eq!(secrets, [("MODEL_API_KEY".to_string(), "k".to_string())]);
    }
}
