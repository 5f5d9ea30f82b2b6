//! The two arms of the A/B evaluation and how a trial gets its agent
//! declaration for each.
//!
//! * **aggressive**: the launch's declaration with no `ding {}` block, the
//!   unconfigured default.
//! * **careful**: `turn-boundary+fresh-idle` with the provider's adapter,
//!   set up by `ding compile-agent PROVIDER` (declaration plus the
//!   harness's hook configuration). Each provider answers for its own
//!   setup through one entry of the registry, `Provider::careful_arm`; a
//!   provider without an adapter answers [`CarefulArm::Unavailable`], and
//!   the trial is reported as not run with that reason, never faked.

use std::fmt;
use std::path::Path;

use anyhow::{Result, bail};

use super::launch::Launch;

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

/// What a provider needs to set up the careful arm for one trial.
pub struct CarefulRequest<'a> {
    /// The `ding` binary the trial drives (for `ding compile-agent`).
    pub ding: &'a Path,
    /// The agent's name in the declaration.
    pub agent: &'a str,
    /// How the prepared harness runs (argv, environment, project).
    pub launch: &'a Launch,
    /// The trial's own directory: the declaration will be written to
    /// `agent.kdl` in it, and anything else the setup installs (hook
    /// launchers for `$ST_HOOKS`) belongs under it.
    pub dir: &'a Path,
}

/// A provider's answer for the careful arm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CarefulArm {
    /// The declaration to run (with its `ding {}` block and adapter), and
    /// variables `ding up` needs on top of the trial's environment (such
    /// as `ST_HOOKS`).
    Ready {
        declaration: String,
        env: Vec<(String, String)>,
    },
    /// The careful arm cannot run on this provider; why, in a few words.
    Unavailable { reason: String },
}

/// The registry's answer for a provider that has no adapter yet.
pub fn no_adapter_yet(_: &CarefulRequest<'_>) -> Result<CarefulArm> {
    Ok(CarefulArm::Unavailable {
        reason: "no adapter".into(),
    })
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

    #[test]
    fn a_provider_without_an_adapter_says_so_plainly() {
        let launch = Launch {
            argv: vec!["h".into()],
            env: Vec::new(),
            cwd: "/p".into(),
        };
        let request = CarefulRequest {
            ding: Path::new("ding"),
            agent: "eval",
            launch: &launch,
            dir: Path::new("/t"),
        };
        let CarefulArm::Unavailable { reason } = no_adapter_yet(&request).expect("answer") else {
            panic!("an arm without an adapter must not be ready");
        };
        assert_eq!(
            unavailable_text(&reason),
            "careful arm: not available (no adapter)"
        );
    }
}
