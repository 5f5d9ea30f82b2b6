//! Waiting for quiet: counting only once what is counted has stopped
//! changing, so that a late event is counted rather than slipping past.

use std::fmt::Debug;
use std::thread;
use std::time::{Duration, Instant};

/// How often a count is read again while waiting for it to stay put.
const READ_EVERY: Duration = Duration::from_millis(25);

/// Reads `read` until its value has stayed the same for `quiet`, and
/// returns that value. Panics, naming `what`, when it is still changing
/// after `patience`.
pub fn until_quiet<T: PartialEq + Debug>(
    what: &str,
    quiet: Duration,
    patience: Duration,
    mut read: impl FnMut() -> T,
) -> T {
    let deadline = Instant::now() + patience;
    let mut last = read();
    let mut since = Instant::now();
    while since.elapsed() < quiet {
        assert!(
            Instant::now() < deadline,
            "{what} never stayed the same for {quiet:?} within {patience:?}; last {last:?}"
        );
        thread::sleep(READ_EVERY);
        let now = read();
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
    last
}
