//! Every timing of the Gemini CLI room, in one table, with the orderings
//! between them (and with the adapter room's, `adapter::timing`) tested
//! below.

use std::time::Duration;

/// How long a new Gemini CLI screen must read idle before it counts (spec
/// §2.4). On 0.61.0 the first composer frame is short-lived: it is redrawn
/// with the banner about 0.2 s later, and `SessionStart` fires about 0.2 s
/// after the first frame (findings, "Time to the first idle composer",
/// measured with both cores busy). Its startup dialogs (folder trust,
/// auth) come before any composer, and keys typed on the first frame are
/// kept, so the settle only outlasts that redraw, twice over; a frame
/// drawn later still meets the fences (the revision a send is compared
/// on, the output quiet, the notice read back before its Return). It was
/// a second until issue 39 measured what that cost a startup backlog
/// (docs/providers/gemini.md, "The idle path").
pub const STARTUP_SETTLE: Duration = Duration::from_millis(400);

/// How long a ready screen must have looked ready before it outweighs a
/// hook's "a turn runs": a tool confirmation cancelled with Esc fires no
/// `AfterAgent` (findings, "Keys"), so a turn edge can go unheard.
pub const HOOK_GRACE: Duration = Duration::from_secs(3);

/// How long after DING's paste its withdraw key (Ctrl-U, which kills the
/// line left of the cursor: the whole one-line notice) is pressed (ms).
/// Measured on Gemini CLI 0.61.0 (docs/providers/gemini.md, "The idle
/// path"): Ctrl-U empties the composer of a 160- or 450-character notice
/// even in the same write as the paste, so this is a margin, not a need;
/// it stays at the value that keeps another harness's paste whole (a
/// control key read in the same chunk as a paste may be taken as part of
/// it there).
pub const WITHDRAW_AFTER_MS: u64 = 100;

/// How long Gemini CLI lets DING's hooks run (ms), as written into its
/// settings: a claim is answered well within it, and a hook that hangs
/// past it is killed with a warning while the turn goes on (findings,
/// 4e).
pub const HOOK_TIMEOUT_MS: u64 = 30_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::timing::CLAIM_DEADLINE;

    #[test]
    fn the_gemini_timings_keep_their_orderings() {
        // A claim is answered before Gemini CLI gives up on the hook.
        assert!(CLAIM_DEADLINE < Duration::from_millis(HOOK_TIMEOUT_MS));
        // A new screen settles within what a person starting it notices,
        // and longer than the redraw of its first frame.
        assert!(STARTUP_SETTLE > Duration::from_millis(200));
        assert!(STARTUP_SETTLE <= Duration::from_secs(1));
        // The withdraw key waits no longer than the PTY host allows, and
        // well within the hold it ends.
        const { assert!(WITHDRAW_AFTER_MS <= crate::core::protocol::MAX_WITHDRAW_AFTER_MS) };
        assert!(
            Duration::from_millis(WITHDRAW_AFTER_MS)
                < crate::core::config::Tunables::default().input_hold()
        );
    }
}
