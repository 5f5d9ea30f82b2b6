//! Adapter supervision state: is the adapter up, and when to respawn it.
//!
//! The engine decides *when* to (re)spawn; the runtime does the spawning and
//! reports back. The respawn waits by the configured [`Backoff`]: doubling
//! per failure, reset by a run that lasted its `stable_after`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backoff::Backoff;
use super::hold::AdapterDown;
use super::time::Time;

/// Where the adapter process is in its life.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "state",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum AdapterPhase {
    /// The policy runs no adapter.
    Disabled,
    /// A spawn was requested and not yet confirmed.
    Starting { since: Time },
    /// Running. `last_line` is when it last wrote a line (its liveness).
    Up {
        pid: u32,
        since: Time,
        last_line: Option<Time>,
        last_sequence: Option<u64>,
    },
    /// Not running; a spawn is due at `retry_at`.
    Down {
        since: Time,
        down: AdapterDown,
        retry_at: Time,
    },
}

#[derive(Clone, Debug)]
pub struct Adapter {
    pub phase: AdapterPhase,
    /// The wait before a respawn, and the next failure's.
    backoff: Backoff,
}

impl Adapter {
    pub fn new(enabled: bool, backoff: Backoff, now: Time) -> Adapter {
        let phase = if enabled {
            AdapterPhase::Starting { since: now }
        } else {
            AdapterPhase::Disabled
        };
        Adapter { phase, backoff }
    }

    pub fn is_up(&self) -> bool {
        matches!(self.phase, AdapterPhase::Up { .. })
    }

    /// The respawn delay the next failure would use.
    pub fn next_delay(&self) -> Duration {
        self.backoff.next_delay()
    }

    pub fn spawned(&mut self, pid: u32, now: Time) {
        self.phase = AdapterPhase::Up {
            pid,
            since: now,
            last_line: None,
            last_sequence: None,
        };
    }

    /// Records a failure and schedules the respawn. Returns the delay, or
    /// `None` if the adapter was already down (a second fact about the same
    /// failure, such as the exit status after EOF, only refines the cause).
    pub fn went_down(&mut self, down: AdapterDown, now: Time) -> Option<Duration> {
        match &mut self.phase {
            AdapterPhase::Disabled => None,
            AdapterPhase::Down { down: cause, .. } => {
                if matches!(cause, AdapterDown::Eof) {
                    *cause = down;
                }
                None
            }
            phase => {
                let delay = match phase {
                    AdapterPhase::Up { since, .. } => self.backoff.failed_after(now.since(*since)),
                    _ => self.backoff.failed(),
                };
                *phase = AdapterPhase::Down {
                    since: now,
                    down,
                    retry_at: now.saturating_add(delay),
                };
                Some(delay)
            }
        }
    }

    /// When a respawn is due, if one is scheduled.
    pub fn retry_at(&self) -> Option<Time> {
        match self.phase {
            AdapterPhase::Down { retry_at, .. } => Some(retry_at),
            _ => None,
        }
    }

    pub fn starting(&mut self, now: Time) {
        self.phase = AdapterPhase::Starting { since: now };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::RESPAWN;

    fn t(secs: u64) -> Time {
        Time::from_millis(secs * 1000)
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_resets_after_a_stable_run() {
        let mut adapter = Adapter::new(true, RESPAWN, t(0));
        let mut delays = Vec::new();
        let mut now = 0;
        for _ in 0..8 {
            adapter.spawned(1, t(now));
            now += 1;
            delays.push(
                adapter
                    .went_down(AdapterDown::Eof, t(now))
                    .unwrap()
                    .as_secs(),
            );
        }
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
        adapter.spawned(1, t(now));
        let delay = adapter.went_down(AdapterDown::Eof, t(now + 61)).unwrap();
        assert_eq!(delay.as_secs(), 1, "a stable minute resets the backoff");
    }

    #[test]
    fn a_second_fact_about_one_failure_refines_the_cause_only() {
        let mut adapter = Adapter::new(true, RESPAWN, t(0));
        adapter.spawned(7, t(0));
        assert!(adapter.went_down(AdapterDown::Eof, t(1)).is_some());
        assert!(
            adapter
                .went_down(
                    AdapterDown::Exited {
                        status: "code 3".into()
                    },
                    t(1)
                )
                .is_none()
        );
        assert!(matches!(
            adapter.phase,
            AdapterPhase::Down { down: AdapterDown::Exited { .. }, retry_at, .. } if retry_at == t(2)
        ));
    }
}
