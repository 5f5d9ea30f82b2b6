//! Every timing of the adapter room, in one table, with the orderings
//! between them tested below (and against the core's bounds where they
//! meet: the lease an activity line asks for, the silence after which the
//! sidecar restarts an adapter).
//!
//! A provider's own timings (how long a grace lasts, how long a park
//! settles) live in its room's `timing.rs`; the orderings that tie them to
//! these are tested there.

use std::time::Duration;

/// How long a hook waits for the sidecar's answer to its claim before it is
/// answered with nothing (it then injects nothing; the work stays unread).
pub const CLAIM_DEADLINE: Duration = Duration::from_secs(3);

/// How long a hook call that names another terminal than the one the
/// adapter knows waits for the adapter to learn that terminal (a harness
/// that started again runs its first hooks before the sidecar's news of it
/// arrives, within milliseconds) before it is refused: long enough for a
/// loaded machine, short enough that a stale caller costs nothing.
pub const STRANGER_WAIT: Duration = Duration::from_secs(2);

/// How long a hook has, once an answer carrying claimed files is queued
/// for it, to read it, print it and send its receipt. A hook does that in
/// milliseconds; one that has not done it by then is taken not to have
/// passed the files on, and they go back to unread work (`release`
/// `no-receipt`).
pub const RECEIPT_DEADLINE: Duration = Duration::from_secs(5);

/// After losing the PTY host, the wait before connecting again.
pub const PTY_RETRY: Duration = Duration::from_millis(500);

/// How much earlier than the hook's own timeout a parked call is answered.
pub const PARK_TIMEOUT_MARGIN: Duration = Duration::from_secs(2);

/// After a claim for a parked call granted nothing, how long until it is
/// tried again (while evidence stays wanted).
pub const PARK_RETRY_AFTER: Duration = Duration::from_secs(1);

/// The `validForMs` of each activity line (the sidecar caps it).
pub const VALID_FOR: Duration = Duration::from_secs(5);

/// How often the screen is read again while evidence is wanted and nothing
/// moved: below [`VALID_FOR`], so the evidence never goes stale.
pub const HEARTBEAT: Duration = Duration::from_secs(4);

/// The least time between two snapshots while the screen keeps moving.
pub const MIN_SNAPSHOT_GAP: Duration = Duration::from_millis(25);

/// How long no person's input may have reached the terminal before DING
/// starts a turn on it without them on a native path: a parked call's
/// wake or queued turn (the typed notice is fenced by the PTY host's own
/// `quiet-input`). A person who just pressed a key is at the
/// keyboard: the Esc that closed a dialog is followed by another about
/// 0.6 s later (issue 39: a command's picker closed, 2 of 5 each), which
/// interrupted the turn DING had woken 0.3 s after the first (the
/// declaration's `quiet-input` alone; measured on the real harnesses,
/// docs/evaluation.md, "A second Esc after a dialog closed"). The rule: an Esc within
/// 1 s of the last key interrupts nothing DING started; a quarter of a
/// second more covers the path of that key to the PTY host on a loaded
/// machine. The kit applies the longer of this and `quiet-input`.
pub const TURN_QUIET: Duration = Duration::from_millis(1_250);

/// How long arrivals settle before a native idle path's parked `queue`
/// call claims them (a burst becomes one delivery and one model call).
pub const QUEUE_SETTLE: Duration = Duration::from_millis(250);

/// How long a parked `queue` call is held before it is answered with
/// nothing (its reporter then calls again).
pub const QUEUE_HOLD: Duration = Duration::from_secs(3_600);

/// How long a reporter's parked `queue` call waits (the adapter answers
/// before, at its hold).
pub const QUEUE_CALL_TIMEOUT: Duration = Duration::from_secs(QUEUE_HOLD.as_secs() + 120);

/// How long `ding hook` waits for the hook's payload on its stdin.
pub const PAYLOAD_DEADLINE: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::{ADAPTER_SILENCE, LEASE_CAP};

    #[test]
    fn the_adapter_timings_keep_their_orderings() {
        // Evidence is read again before the lease it asked for lapses, and
        // that lease is one the sidecar grants whole.
        assert!(HEARTBEAT < VALID_FOR);
        assert!(VALID_FOR <= LEASE_CAP.default);
        // An adapter that heartbeats is never taken for a silent one.
        assert!(HEARTBEAT < ADAPTER_SILENCE.default);
        assert!(VALID_FOR < ADAPTER_SILENCE.default);
        // A hook whose claim is answered late still has its receipt's time.
        assert!(CLAIM_DEADLINE < RECEIPT_DEADLINE);
        // A call waiting for its terminal is refused before a claim made
        // for it then could still be answered inside the hook's patience.
        assert!(STRANGER_WAIT < CLAIM_DEADLINE);
        // A parked call that granted nothing is tried again before the
        // margin that answers it ahead of the hook's own timeout passes.
        assert!(PARK_RETRY_AFTER < PARK_TIMEOUT_MARGIN);
        // Snapshot pacing is far below anything a person perceives, and the
        // PTY host is tried again well within one heartbeat.
        assert!(MIN_SNAPSHOT_GAP < PTY_RETRY);
        assert!(PTY_RETRY < HEARTBEAT);
        // A native idle path's parked call is answered (at its hold) before
        // its reporter's own call gives up, by more than the park's margin;
        // a burst settles well within what a person notices.
        assert!(QUEUE_HOLD + PARK_TIMEOUT_MARGIN < QUEUE_CALL_TIMEOUT);
        assert!(QUEUE_SETTLE < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_turn_ding_starts_waits_past_a_persons_next_key() {
        use crate::core::config::QUIET_INPUT;
        // An Esc within a second of the person's last key (a second Esc
        // after the one that closed a dialog) meets no turn of DING's.
        assert!(TURN_QUIET > Duration::from_secs(1));
        // At least the terminal path's own fence, by default.
        assert!(TURN_QUIET >= QUIET_INPUT.default);
        // Within what a person waiting for a delivery notices, and well
        // within the claim's deadline and the heartbeat: a wake held for
        // the quiet is read again before its evidence lapses.
        assert!(TURN_QUIET < Duration::from_secs(2));
        assert!(TURN_QUIET < CLAIM_DEADLINE);
        assert!(TURN_QUIET < HEARTBEAT);
    }
}
