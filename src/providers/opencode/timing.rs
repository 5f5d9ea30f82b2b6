//! Every timing of the OpenCode room, in one table, with the orderings
//! between them (and with the adapter room's, `adapter::timing`) tested
//! below. The plugins' own waits are written into them from here when
//! `ding compile-agent opencode` writes them (`plugins.rs`).

use std::time::Duration;

/// How long a new OpenCode screen must read idle before it counts (spec
/// §2.4).
pub const STARTUP_SETTLE: Duration = Duration::from_millis(500);

/// How long a ready screen must have looked ready before it outweighs a
/// hook's "a turn runs": an interrupted turn can end without the event
/// that says so reaching the adapter (each call is a connection of its
/// own), so a turn edge can go unheard.
pub const HOOK_GRACE: Duration = Duration::from_secs(3);

/// How long after DING handed a delivery to the TUI plugin the terminal
/// stays held for it, until its prompt's `chat.message` is the receipt
/// (the plugin reports again on every change).
pub const DELIVERY_GRACE: Duration = Duration::from_secs(15);

/// How long a plugin waits for the answer to a turn-boundary call
/// (`chat.message`, `tool.execute.after`) before it goes on as if the
/// inbox were empty: OpenCode holds the person's prompt (or the tool's
/// result) until the hook returns (findings 1.4: a 3 s hook started the
/// turn 3 s late), so this is what a wedged adapter can cost them. An
/// unreachable adapter costs nothing (the connection is refused at once),
/// and a claim answered after it is never passed on: its files go back to
/// unread work (no receipt), for the next boundary or the idle path.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a plugin waits for a call that only reports (an event, a
/// tool starting) to be taken; nothing waits on it.
pub const NOTE_TIMEOUT: Duration = Duration::from_secs(2);

/// After the adapter could not be reached, the wait before the TUI plugin
/// calls again.
pub const CALL_RETRY: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::timing::RECEIPT_DEADLINE;

    #[test]
    fn the_opencode_timings_keep_their_orderings() {
        // A person's prompt waits on DING at most a second; a claim the
        // sidecar answers later than that loses nothing (no receipt).
        assert!(CALL_TIMEOUT <= Duration::from_secs(1));
        // A delivery's hold of the terminal outlasts its receipt.
        assert!(RECEIPT_DEADLINE < DELIVERY_GRACE);
        // A burst settles well within what a person notices; an
        // unreachable adapter is asked again within a second.
        assert!(CALL_RETRY < Duration::from_secs(1));
        // A call that only reports is given up on well before a person
        // would wonder.
        assert!(NOTE_TIMEOUT <= Duration::from_secs(2));
        assert!(STARTUP_SETTLE < Duration::from_secs(1));
    }
}
