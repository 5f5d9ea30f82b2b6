//! Every timing of the Claude Code room, in one table, with the orderings
//! between them (and with the adapter room's, `adapter::timing`) tested
//! below.

use std::time::Duration;

/// How long a new Claude Code screen must read idle before it counts (spec
/// §2.4). On the real 2.1.328 its only startup dialog, the folder trust
/// question, came before any composer in all 12 starts seen, and nothing
/// replaced the first composer in the 10 s after it (findings:
/// `claude-startup-findings.md`): this is a margin for a frame a loaded
/// machine draws late, not a measured dialog.
pub const STARTUP_SETTLE: Duration = Duration::from_millis(500);

/// How long a ready screen must have looked ready before it outweighs a
/// hook's "a turn runs".
pub const HOOK_GRACE: Duration = Duration::from_secs(3);

/// How long after DING woke the harness a ready screen is not yet idle.
pub const WAKE_GRACE: Duration = Duration::from_secs(5);

/// How long arrivals settle before a wake claims them (a burst becomes one
/// model call).
pub const WAKE_SETTLE: Duration = Duration::from_millis(250);

/// How long after DING's paste its withdraw keys are pressed (ms): Claude
/// Code 2.1.328 ignores control keys it reads in the same chunk as a
/// paste; 50 ms after the paste they acted in every probe trial (about 8
/// of a 1,554-character paste), 5 ms failed. Twice that, for a loaded
/// machine; a person's key that ends the hold waits this long behind it.
pub const WITHDRAW_AFTER_MS: u64 = 100;

/// How long Claude Code lets a wake hook run (seconds): a day. Its timeout
/// kills the hook silently, so `ding hook` gives up a minute earlier
/// ([`WAKE_RELAY_TIMEOUT_SECS`]) and the adapter answers 2 s before that.
pub const WAKE_HOOK_TIMEOUT_SECS: u64 = 86_400;

/// `ding hook claude wake --timeout`.
pub const WAKE_RELAY_TIMEOUT_SECS: u64 = WAKE_HOOK_TIMEOUT_SECS - 60;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::timing::{CLAIM_DEADLINE, PARK_TIMEOUT_MARGIN};

    #[test]
    fn the_claude_timings_keep_their_orderings() {
        // The wake hook is answered before `ding hook` gives up on it, and
        // `ding hook` gives up before Claude Code kills it.
        let relay = Duration::from_secs(WAKE_RELAY_TIMEOUT_SECS);
        let hook = Duration::from_secs(WAKE_HOOK_TIMEOUT_SECS);
        assert!(relay < hook);
        assert!(PARK_TIMEOUT_MARGIN < relay);
        // A burst settles well within what a person notices, and a wake's
        // grace outlasts the claim it made.
        assert!(WAKE_SETTLE < Duration::from_secs(1));
        assert!(CLAIM_DEADLINE < WAKE_GRACE);
        // A hook's "a turn runs" is outweighed by the screen within the
        // wake's own grace, not after it.
        assert!(HOOK_GRACE <= WAKE_GRACE);
        // A new screen settles within what a person starting it notices.
        assert!(STARTUP_SETTLE < Duration::from_secs(1));
        // The withdraw keys wait no longer than the PTY host allows, and
        // well within the hold they end.
        let withdraw = Duration::from_millis(WITHDRAW_AFTER_MS);
        const { assert!(WITHDRAW_AFTER_MS <= crate::core::protocol::MAX_WITHDRAW_AFTER_MS) };
        assert!(withdraw < crate::core::config::Tunables::default().input_hold());
    }
}
