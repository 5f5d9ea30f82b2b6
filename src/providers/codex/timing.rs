//! Every timing of the Codex room, in one table, with the orderings
//! between them (and with the adapter room's, `adapter::timing`) tested
//! below.

use std::time::Duration;

/// How long a new Codex screen must read idle before it counts (spec
/// §2.4): on the real 0.169.0 a dialog replaced the first empty composer
/// 0.19 to 0.56 s after it was drawn (the hooks review modal of a
/// person's own untrusted hook, and the folder trust dialog of an
/// untrusted repository, 25 starts on this 2-core machine; findings §11),
/// so nearly three times the longest.
pub const STARTUP_SETTLE: Duration = Duration::from_millis(1_500);

/// How many times one launcher starts the app-server again after it died
/// under the TUI (findings §12: the TUI reconnects to the new one on the
/// same socket within about 4 s, the conversation intact); past that it
/// ends the TUI, and the harness exits.
pub const SERVER_RESTARTS: u32 = 3;

/// How long `Stop` may take to decide (its claim's deadline is 3 s) before
/// a ready screen outweighs it.
pub const STOP_GRACE: Duration = Duration::from_secs(4);

/// How long after the launcher last said a delivery of DING's waits in
/// Codex's queue the terminal stays held for it (the launcher says so again
/// on every change).
pub const DELIVERY_GRACE: Duration = Duration::from_secs(15);

/// How long the thread stays idle with a delivery of DING's waiting in its
/// queue before the launcher resumes the queue. Codex starts a queued turn
/// within about 50 ms of the thread turning idle when the queue is not
/// paused; a paused one was paused by the person's Esc (or a denied
/// approval), which turned the thread idle: the resume starts a turn no
/// sooner after that key than the adapter kit starts one after any key
/// (`TURN_QUIET`, issue 39).
pub const RESUME_AFTER: Duration = crate::adapter::timing::TURN_QUIET;

/// After the adapter could not be reached, the wait before calling again.
pub const CALL_RETRY: Duration = Duration::from_millis(500);

/// How long the app-server may take to listen.
pub const LISTEN_DEADLINE: Duration = Duration::from_secs(30);

/// How often the launcher tries to connect to an app-server it started
/// again, until it listens (nothing says when it does; each try is one
/// `connect` on a local socket). As `crate::wait::POLL_EVERY`.
pub const LISTEN_POLL: Duration = Duration::from_millis(20);

/// How long after its connection closed the launcher waits to learn how
/// its app-server ended (its exit status, for the adapter and the log)
/// before it calls it a closed connection: a killed server's exit is seen
/// within milliseconds of its socket closing.
pub const SERVER_GONE_WAIT: Duration = Duration::from_secs(1);

/// How long, once the TUI exited, the launcher waits for the app-server to
/// answer the deletes of DING's leftover queue items before it exits.
pub const EXIT_GRACE: Duration = Duration::from_secs(1);

/// How often a `launch` report that found no adapter listening is offered
/// again, within [`LAUNCH_CALL_TIMEOUT`]. As `crate::wait::RETRY_EVERY`.
pub const LAUNCH_RETRY: Duration = Duration::from_millis(50);

/// How long the embedded launcher waits for the adapter to note its hooks.
pub const LAUNCH_CALL_TIMEOUT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::timing::{CLAIM_DEADLINE, RECEIPT_DEADLINE};

    #[test]
    fn the_codex_timings_keep_their_orderings() {
        // `Stop` decides by its claim: the grace outlasts the claim's
        // deadline, so a ready screen never outruns a `Stop` still deciding.
        assert!(CLAIM_DEADLINE < STOP_GRACE);
        // A delivery's hold of the terminal outlasts the hook's receipt
        // and the queue's resume.
        assert!(RECEIPT_DEADLINE < DELIVERY_GRACE);
        assert!(RESUME_AFTER < DELIVERY_GRACE);
        // A paused queue is resumed no sooner after the Esc that paused
        // it than any turn of DING's after a person's key.
        assert!(RESUME_AFTER >= crate::adapter::timing::TURN_QUIET);
        // A burst settles well within what a person notices; an
        // unreachable adapter is asked again within a second.
        assert!(CALL_RETRY < Duration::from_secs(1));
        assert!(LAUNCH_CALL_TIMEOUT < LISTEN_DEADLINE);
        // A new screen settles well past the latest dialog measured after
        // the first composer (0.56 s), and before a person would wonder.
        assert!(STARTUP_SETTLE > Duration::from_millis(2 * 560));
        assert!(STARTUP_SETTLE < Duration::from_secs(3));
    }

    #[test]
    fn the_launchers_own_waits_keep_their_orderings() {
        // Many tries to connect before a restarted app-server is given up.
        assert!(LISTEN_POLL * 100 < LISTEN_DEADLINE);
        // A report is offered again a few times before the launch call's
        // time is up.
        assert!(LAUNCH_RETRY * 4 < LAUNCH_CALL_TIMEOUT);
        // A lost app-server is decided on, and an exit completed, within
        // what a person notices; the restart then waits longer for it.
        assert!(SERVER_GONE_WAIT <= Duration::from_secs(1));
        assert!(EXIT_GRACE <= Duration::from_secs(1));
        assert!(SERVER_GONE_WAIT < LISTEN_DEADLINE);
    }
}
