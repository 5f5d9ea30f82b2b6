//! How the machine paces its evidence: how long it vouches for it, how
//! often and how soon it reads the screen again, and how long a person
//! must have been quiet for a parked call to be claimed for.

use std::time::Duration;

use crate::adapter::timing::{HEARTBEAT, MIN_SNAPSHOT_GAP, TURN_QUIET, VALID_FOR};
use crate::core::config::QUIET_INPUT;

/// How the machine paces its evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// The `validForMs` of each activity line (the sidecar caps it).
    pub valid_for: Duration,
    /// How often the screen is read again while evidence is wanted, the
    /// last reading allowed delivery, and nothing moved.
    pub heartbeat: Duration,
    /// The least time between two snapshots while the screen keeps moving.
    pub min_snapshot_gap: Duration,
    /// The declaration's `quiet-input`, which fences the terminal path's
    /// compare-and-sends: a turn DING starts waits at least this long
    /// after the person's last input ([`Pacing::turn_quiet`]).
    pub quiet_input: Duration,
}

impl Pacing {
    /// How long no person's input may have reached the terminal before a
    /// turn DING starts without them on a native path: a parked call is
    /// claimed for, and answered, only then ([`TURN_QUIET`], or the
    /// declaration's `quiet-input` where it is longer). The typed notice
    /// is fenced by the PTY host's own time fence instead.
    pub fn turn_quiet(&self) -> Duration {
        self.quiet_input.max(TURN_QUIET)
    }
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            valid_for: VALID_FOR,
            heartbeat: HEARTBEAT,
            min_snapshot_gap: MIN_SNAPSHOT_GAP,
            quiet_input: QUIET_INPUT.default,
        }
    }
}
