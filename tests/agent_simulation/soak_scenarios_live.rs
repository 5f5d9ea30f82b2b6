//! Named scenarios of seeds the soak (`make soak`) found past the sweeps
//! of `make test`: a `Stop` hook killed on Codex after DING answered it
//! (Liveness), and a person's keys on both sides of a PTY host's crash
//! (KeysBunched, the world's own mistake). Each is checked by the steps
//! its story goes through (their moments left out) and by the
//! invariants, which every one keeps.

use super::holds_in;
use crate::world::{Harness, Scenario};

/// Found by the soak (agent seeds 720437 and 863417, Codex): the person's
/// turn ends and its `Stop` hook claims the five files that arrived
/// during it; DING answers with a block, but the hook process is killed
/// before it passes the answer on. Codex reads no output of a run killed
/// or timed out (a failed run blocks nothing), so the turn ends there;
/// the adapter gave the files back (no receipt) but still believed the
/// block kept the turn going, so its parked `queue` call never claimed
/// them, and they waited for the person's next prompt. A block never
/// passed on now ends the turn in the provider's memory too
/// (`Provider::on_answer_unread`): the launcher's parked call queues the
/// five files as one turn, and nothing is typed.
#[test]
fn a_stop_block_whose_hook_was_killed_leaves_the_work_to_the_queue() {
    holds_in(
        Scenario::random(720437),
        &[
            "hook Stop Peer(25): killed",
            "hook Stop Peer(25): given up (killed)",
            "a turn ends",
            "hook Stop of a harness gone answered",
            "hook queue answered, naming [\"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\", \"m0008.md\"]",
            "a queued turn starts on \"[ding] 5 unread inbox messages",
        ],
    );
}

/// Found by the soak (Gemini seeds 95137 and 246496; then 31322, since a
/// new screen is read until it settles, and now 37338, since a turn of
/// DING's waits the turn quiet after a person's key: issue 39): the person's keys
/// went to the old PTY host's terminal until DING's PTY host was killed
/// with its harness; their next key went, at once, to the new host's new
/// terminal. The two are no bunch any program reads (the new harness never
/// saw the first), but the world measured their distance across the two
/// terminals. It now forgets the old terminal's keys with it.
#[test]
fn a_persons_keys_on_both_sides_of_a_pty_host_crash_are_no_bunch() {
    holds_in(
        Scenario::on(Harness::Gemini, 37338),
        &[
            "13722 person types \"e\"",
            "13832 DING's PTY host is killed with its harness; a new host starts i4",
            "13832 person types \"v\"",
        ],
    );
}
