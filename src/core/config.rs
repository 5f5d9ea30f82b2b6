//! What the engine is told before it starts: the delivery policy and its
//! tunables.
//!
//! Declarations (KDL) are lowered into an [`EngineConfig`] by the `decl` room;
//! the engine itself never reads a file. Every tunable has a documented default
//! and inclusive bounds here, in one table ([`TUNABLES`]), so the declaration
//! validator, the docs and the engine agree on a single source of truth.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backoff::Backoff;
use super::fence::TimeFence;
use super::gather::GatherWindow;

/// How unread work may reach the terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Policy {
    /// The unconfigured default: ring at once with the combined transport,
    /// whatever the screen shows. No adapter, no screen reading.
    #[serde(rename = "aggressive")]
    Aggressive,
    /// Turn-boundary hooks own next-context injection; PTY input only under a
    /// fresh idle lease, an empty composer and an exact compare-and-send.
    /// Never falls back to aggressive.
    #[serde(rename = "turn-boundary+fresh-idle")]
    TurnBoundaryFreshIdle,
}

impl Policy {
    /// Every policy, in documentation order.
    pub const ALL: [Policy; 2] = [Policy::Aggressive, Policy::TurnBoundaryFreshIdle];

    /// The token a declaration spells this policy with.
    pub const fn token(self) -> &'static str {
        match self {
            Policy::Aggressive => "aggressive",
            Policy::TurnBoundaryFreshIdle => "turn-boundary+fresh-idle",
        }
    }

    /// The policy a declaration token names, if any. Tokens are exact:
    /// no case folding, no aliases.
    pub fn from_token(token: &str) -> Option<Policy> {
        Policy::ALL
            .into_iter()
            .find(|policy| policy.token() == token)
    }

    /// Whether this policy runs an adapter process.
    pub const fn uses_adapter(self) -> bool {
        matches!(self, Policy::TurnBoundaryFreshIdle)
    }
}

/// What a lease's compare-and-send is fenced on (spec §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fence {
    /// The PTY revision at which the adapter observed its evidence. Idle
    /// evidence without a `revision` holds as `revision-unknown`.
    #[default]
    Evidence,
    /// **Unsafe**, for adapters that truly cannot see the screen: idle
    /// evidence without a `revision` is fenced at the revision the sidecar
    /// knows when the line arrives. A keystroke typed after the adapter
    /// looked but before its line arrived is then *not* detected, and the
    /// notice can be glued onto that draft. Declared as
    /// `unsafe-receipt-fence #true`; `ding check` and `ding status` say so.
    ReceiptUnsafe,
}

impl Fence {
    pub const fn token(self) -> &'static str {
        match self {
            Fence::Evidence => "evidence",
            Fence::ReceiptUnsafe => "receipt-unsafe",
        }
    }
}

/// The settings a declaration may change. Each field's default and bounds are
/// in [`TUNABLES`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Tunables {
    /// Upper bound on a lease's life, whatever `validForMs` the adapter claims.
    pub lease_cap: Duration,
    /// An adapter that sent nothing for this long has no fresh evidence; its
    /// lease is dead and held work says "adapter silent".
    pub adapter_silence: Duration,
    /// When staged work (rung, not yet archived) becomes eligible to ring
    /// again. `None` never rings it again while the harness incarnation lives.
    pub re_ring_after: Option<Duration>,
    /// The wait between the end of the bracketed paste and Return. It must
    /// exceed the paste-burst Enter suppression of real TUIs (120 ms).
    pub submit_delay: Duration,
    /// At most this many filenames in one notice; the rest ring next.
    pub notice_max_files: usize,
    /// What compare-and-sends are fenced on.
    pub fence: Fence,
    /// A compare-and-send writes only if no person's input reached the
    /// terminal for this long: a key the host counted may not be drawn yet.
    pub quiet_input: Duration,
    /// A compare-and-send writes only if the program drew nothing for this
    /// long: the screen the adapter judged may still be being drawn.
    pub settled_output: Duration,
    /// Files arriving with nothing on its way are gathered into one
    /// delivery until none arrived for this long (spec §4.4).
    pub gather_quiet: Duration,
    /// A gather ends at the latest this long after its first file.
    pub gather_cap: Duration,
}

impl Tunables {
    /// The time fence every compare-and-send carries.
    pub fn time_fence(&self) -> TimeFence {
        TimeFence {
            quiet_input: if crate::mutation::planted(crate::mutation::Mutation::FenceWantsNoQuiet) {
                Duration::ZERO
            } else {
                self.quiet_input
            },
            settled_output: self.settled_output,
        }
    }

    /// How long arrivals are gathered into one delivery.
    pub fn gather_window(&self) -> GatherWindow {
        GatherWindow {
            quiet: self.gather_quiet,
            cap: self.gather_cap,
        }
    }

    /// How long after its paste was asked for a typed notice may still get
    /// its Return: the screen then has [`RETURN_WITHIN_BASE`] to show the
    /// notice alone in the composer, besides the submit delay and one
    /// settle period, never more than [`RETURN_WITHIN_MAX`].
    pub fn return_within(&self) -> Duration {
        (RETURN_WITHIN_BASE + self.submit_delay + self.settled_output).min(RETURN_WITHIN_MAX)
    }

    /// How long the PTY host may hold a person's typed text behind a typed
    /// notice's paste, so that their Return-less keys go after DING's
    /// Return instead of joining the notice in the composer: the time a
    /// Return usually takes to follow (the submit delay and one settle
    /// period, then a screen read), with [`INPUT_HOLD_SLACK`] for a loaded
    /// machine, never more than [`INPUT_HOLD_MAX`]. A Return slower than
    /// that finds the keys already written, and is withheld.
    pub fn input_hold(&self) -> Duration {
        (self.submit_delay + self.settled_output + INPUT_HOLD_SLACK).min(INPUT_HOLD_MAX)
    }
}

/// What a typed notice's input hold allows beyond the submit delay and the
/// settle period (450 ms by default, which they bound from above: the
/// settle period runs from the paste's draw, during the submit delay). The
/// Return followed its paste by 270-320 ms on both real harnesses
/// (docs/evaluation.md, `make offsets`); the slack is for a loaded machine.
pub const INPUT_HOLD_SLACK: Duration = Duration::from_millis(500);

/// The longest a person's keys are held behind a typed notice: a delay a
/// person typing notices, but not one that loses their train of thought.
/// Below the PTY host's own bound (docs/pty-protocol.md §4).
pub const INPUT_HOLD_MAX: Duration = Duration::from_secs(2);

/// The time a typed notice's screen has to confirm it, beyond the submit
/// delay and the settle period: startups keep drawing for up to 2.5 s
/// after their first composer (docs/providers/draw-times.md), and a
/// harness's once-a-session footer redraw comes 0.7-0.9 s after a key.
pub const RETURN_WITHIN_BASE: Duration = Duration::from_secs(5);

/// The latest a Return may follow its paste's request. The Return asks the
/// PTY host for no person's input since that request, and the host judges
/// quiet windows of at most 10 s (docs/pty-protocol.md §4).
pub const RETURN_WITHIN_MAX: Duration = Duration::from_secs(9);

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            lease_cap: LEASE_CAP.default,
            adapter_silence: ADAPTER_SILENCE.default,
            re_ring_after: Some(RE_RING_AFTER.default),
            submit_delay: SUBMIT_DELAY.default,
            notice_max_files: NOTICE_MAX_FILES_DEFAULT,
            fence: Fence::Evidence,
            quiet_input: QUIET_INPUT.default,
            settled_output: SETTLED_OUTPUT.default,
            gather_quiet: GATHER_QUIET.default,
            gather_cap: GATHER_CAP.default,
        }
    }
}

/// A duration tunable's documented range, inclusive at both ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationBound {
    /// The declaration property name.
    pub name: &'static str,
    pub min: Duration,
    pub default: Duration,
    pub max: Duration,
}

impl DurationBound {
    pub fn contains(&self, value: Duration) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

pub const LEASE_CAP: DurationBound = DurationBound {
    name: "lease-cap",
    min: Duration::from_millis(50),
    default: Duration::from_secs(5),
    max: Duration::from_secs(60),
};

pub const ADAPTER_SILENCE: DurationBound = DurationBound {
    name: "adapter-silence",
    min: Duration::from_secs(1),
    default: Duration::from_secs(30),
    max: Duration::from_secs(3600),
};

/// `re-ring-after` also accepts `"never"`.
pub const RE_RING_AFTER: DurationBound = DurationBound {
    name: "re-ring-after",
    min: Duration::from_secs(10),
    default: Duration::from_secs(600),
    max: Duration::from_secs(86_400),
};

pub const SUBMIT_DELAY: DurationBound = DurationBound {
    name: "submit-delay",
    min: Duration::from_millis(121),
    default: Duration::from_millis(200),
    max: Duration::from_secs(2),
};

/// How long a person must have left the terminal alone before DING types
/// (the time fence, docs/pty-protocol.md §3). The default is set from the
/// real harnesses' measured key-to-draw times (docs/providers/draw-times.md).
pub const QUIET_INPUT: DurationBound = DurationBound {
    name: "quiet-input",
    min: Duration::from_millis(50),
    default: Duration::from_millis(300),
    max: Duration::from_secs(10),
};

/// How long the harness's screen must have been still before DING types.
pub const SETTLED_OUTPUT: DurationBound = DurationBound {
    name: "settled-output",
    min: Duration::from_millis(20),
    default: Duration::from_millis(250),
    max: Duration::from_secs(10),
};

/// How long after the latest of a burst of arrivals the careful policy
/// waits for another before delivering them together (spec §4.4). Senders
/// that fan work out (a script's loop of `ding send`, several agents
/// finishing at once, a supervisor model's consecutive tool calls) spread
/// a burst over up to about a second; one second more per delivery is
/// small beside the model call it saves (docs/evaluation.md, "Batching").
/// Zero turns gathering off.
pub const GATHER_QUIET: DurationBound = DurationBound {
    name: "gather-quiet",
    min: Duration::ZERO,
    default: Duration::from_secs(1),
    max: Duration::from_secs(10),
};

/// The longest a gather holds its first file, however arrivals keep
/// coming: a steady trickle is still delivered every few seconds.
pub const GATHER_CAP: DurationBound = DurationBound {
    name: "gather-cap",
    min: Duration::ZERO,
    default: Duration::from_secs(3),
    max: Duration::from_secs(60),
};

/// Every duration tunable, in documentation order.
pub const TUNABLES: [DurationBound; 8] = [
    LEASE_CAP,
    ADAPTER_SILENCE,
    RE_RING_AFTER,
    SUBMIT_DELAY,
    QUIET_INPUT,
    SETTLED_OUTPUT,
    GATHER_QUIET,
    GATHER_CAP,
];

pub const NOTICE_MAX_FILES_MIN: usize = 1;
pub const NOTICE_MAX_FILES_DEFAULT: usize = 16;
pub const NOTICE_MAX_FILES_MAX: usize = 256;

/// How a failed adapter is respawned: after 1 s, doubling up to 60 s, back
/// to 1 s once an adapter stayed up for a minute.
pub const RESPAWN: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(60))
    .stable_after(Duration::from_secs(60));

/// Everything the engine needs to know at construction.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct EngineConfig {
    pub policy: Policy,
    pub tunables: Tunables,
    /// The agent's name, as `ding archive NAME FILE` needs it in the notice.
    pub agent: String,
    /// The unread directory as the agent should read it (the inbox's `new/`),
    /// shown in the notice by the escape rule (`crate::escape`).
    pub unread_dir: String,
    /// How long a PTY request may go unanswered before its outcome is
    /// treated as unknown.
    pub pty_reply_timeout: Duration,
    /// How a failed adapter is respawned ([`RESPAWN`]).
    pub respawn: Backoff,
}

impl EngineConfig {
    /// A configuration with every tunable at its default.
    pub fn new(policy: Policy, agent: impl Into<String>, unread_dir: impl Into<String>) -> Self {
        EngineConfig {
            policy,
            tunables: Tunables::default(),
            agent: agent.into(),
            unread_dir: unread_dir.into(),
            pty_reply_timeout: Duration::from_secs(5),
            respawn: RESPAWN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_tokens_round_trip_and_are_exact() {
        for policy in Policy::ALL {
            assert_eq!(Policy::from_token(policy.token()), Some(policy));
        }
        assert_eq!(Policy::from_token("Aggressive"), None);
        assert_eq!(Policy::from_token("turn-boundary"), None);
        assert_eq!(Policy::from_token(""), None);
    }

    #[test]
    fn defaults_lie_within_their_bounds() {
        for bound in TUNABLES {
            assert!(
                bound.contains(bound.default),
                "{} default out of bounds",
                bound.name
            );
            assert!(bound.min <= bound.max, "{} bounds inverted", bound.name);
        }
        assert!((NOTICE_MAX_FILES_MIN..=NOTICE_MAX_FILES_MAX).contains(&NOTICE_MAX_FILES_DEFAULT));
    }

    #[test]
    fn a_return_may_wait_longer_than_any_settle_and_less_than_the_hosts_longest_quiet() {
        let defaults = Tunables::default();
        assert!(defaults.return_within() > SUBMIT_DELAY.max + SETTLED_OUTPUT.default * 4);
        let slowest = Tunables {
            submit_delay: SUBMIT_DELAY.max,
            settled_output: SETTLED_OUTPUT.max,
            ..Tunables::default()
        };
        assert!(slowest.return_within() <= RETURN_WITHIN_MAX);
        assert!(RETURN_WITHIN_MAX < Duration::from_secs(10));
    }

    /// The hold outlasts the Return it waits for (the submit delay and a
    /// settle period), and stays within the host's bound however the two
    /// are tuned.
    #[test]
    fn the_input_hold_outlasts_a_usual_return_and_stays_short() {
        let defaults = Tunables::default();
        assert!(defaults.input_hold() > defaults.submit_delay + defaults.settled_output);
        let slowest = Tunables {
            submit_delay: SUBMIT_DELAY.max,
            settled_output: SETTLED_OUTPUT.max,
            ..Tunables::default()
        };
        assert_eq!(slowest.input_hold(), INPUT_HOLD_MAX);
        assert!(INPUT_HOLD_MAX < defaults.return_within());
        assert!(INPUT_HOLD_MAX.as_millis() as u64 <= crate::pty::wire::MAX_HOLD_INPUT_MS);
    }

    /// A burst gathers for a quiet time and the cap bounds a steady
    /// trickle above it, within a few seconds by default; even the longest
    /// cap delivers well before the previous delivery's files may ring
    /// again.
    #[test]
    fn a_gather_is_capped_above_its_quiet_time_and_far_below_a_re_ring() {
        let defaults = Tunables::default();
        assert!(defaults.gather_quiet < defaults.gather_cap);
        assert!(defaults.gather_cap <= Duration::from_secs(5));
        assert!(GATHER_QUIET.max <= GATHER_CAP.max);
        assert!(GATHER_CAP.max < RE_RING_AFTER.default);
    }

    #[test]
    fn submit_delay_always_exceeds_paste_burst_suppression() {
        // Real TUIs take an Enter within 120 ms of a paste burst as a newline.
        assert!(SUBMIT_DELAY.min > Duration::from_millis(120));
    }
}
