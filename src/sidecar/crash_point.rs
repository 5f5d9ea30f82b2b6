//! Crash points: named places in a sidecar transaction where a test makes
//! the sidecar kill itself, to check the spec's crash windows (§6, §6.1)
//! at each one rather than wherever a `kill -9` from outside happens to
//! land.
//!
//! `DING_CRASH_AT=POINT` is read once, when `ding sidecar` starts
//! ([`arm_from_env`]); when the running sidecar first reaches that point it
//! sends itself SIGKILL: no unwinding, no flush, no cleanup, exactly as a
//! `kill -9` or a power loss of the process would leave things. The points,
//! in the order a transaction meets them:
//!
//! | point | where |
//! |---|---|
//! | `mid-scan` | a listing of `new/` has read its first entry, not the rest |
//! | `before-pty-write` | a transaction is decided, its request not yet written to the PTY host |
//! | `after-pty-write` | the host's `sent` reply has arrived, not yet handled |
//! | `before-journal-rename` | the new journal is written and fsynced as `journal.json.tmp`, not renamed |
//! | `after-journal-rename` | it was renamed over `journal.json`, its directory not yet fsynced |
//! | `after-claim-journaled` | a claim's grant is in the durable journal, its `claimed` answer not yet queued for the adapter |
//!
//! Only test builds have them: the cargo feature `crash-points`, which the
//! crate's tests turn on (the crate is its own dev-dependency with that
//! feature, so `cargo test` builds the `ding` the tests run with it). A
//! release `ding` neither reads the variable nor holds its name or the
//! points' names: set in a supervisor's environment, it would otherwise
//! make a crash loop of a real agent. The sidecar logs `crash-point-armed`
//! at start so an armed sidecar is never silent. Only the sidecar arms it;
//! every other `ding` command ignores the variable.

use std::sync::OnceLock;

/// Where a transaction may be cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashPoint {
    MidScan,
    BeforePtyWrite,
    AfterPtyWrite,
    BeforeJournalRename,
    AfterJournalRename,
    AfterClaimJournaled,
}

/// The environment variable naming the point.
#[cfg(feature = "crash-points")]
pub const CRASH_AT_VAR: &str = "DING_CRASH_AT";

#[cfg(feature = "crash-points")]
impl CrashPoint {
    pub const ALL: [CrashPoint; 6] = [
        CrashPoint::MidScan,
        CrashPoint::BeforePtyWrite,
        CrashPoint::AfterPtyWrite,
        CrashPoint::BeforeJournalRename,
        CrashPoint::AfterJournalRename,
        CrashPoint::AfterClaimJournaled,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::MidScan => "mid-scan",
            CrashPoint::BeforePtyWrite => "before-pty-write",
            CrashPoint::AfterPtyWrite => "after-pty-write",
            CrashPoint::BeforeJournalRename => "before-journal-rename",
            CrashPoint::AfterJournalRename => "after-journal-rename",
            CrashPoint::AfterClaimJournaled => "after-claim-journaled",
        }
    }

    pub fn from_name(name: &str) -> Option<CrashPoint> {
        CrashPoint::ALL
            .into_iter()
            .find(|point| point.name() == name)
    }
}

static ARMED: OnceLock<Option<CrashPoint>> = OnceLock::new();

/// Reads `DING_CRASH_AT` once. Returns the armed point, or `Err` with the
/// value when it names none (the sidecar refuses to start rather than run
/// a test that checks nothing).
#[cfg(feature = "crash-points")]
pub fn arm_from_env() -> Result<Option<CrashPoint>, String> {
    let wanted = std::env::var_os(CRASH_AT_VAR).filter(|value| !value.is_empty());
    let point = match wanted {
        None => None,
        Some(value) => {
            let text = value.to_string_lossy();
            Some(CrashPoint::from_name(&text).ok_or_else(|| text.into_owned())?)
        }
    };
    Ok(*ARMED.get_or_init(|| point))
}

/// Kills this process with SIGKILL if `point` is the armed one.
pub fn reach(point: CrashPoint) {
    if ARMED.get().copied().flatten() == Some(point) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

#[cfg(all(test, feature = "crash-points"))]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_named_once_and_an_unarmed_point_does_nothing() {
        for point in CrashPoint::ALL {
            assert_eq!(CrashPoint::from_name(point.name()), Some(point));
        }
        assert_eq!(CrashPoint::from_name("mid scan"), None);
        // Nothing armed in the test process: reaching a point returns.
        reach(CrashPoint::MidScan);
    }
}
