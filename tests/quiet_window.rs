//! The real-pane tests count model calls and DING's bytes only after a
//! quiet window (`support::quiet`): a call that comes after the screen
//! looks settled is counted, never missed.

mod support;

use std::time::{Duration, Instant};

use support::quiet::until_quiet;

/// A count that moves at 0, 150 and 300 ms and then stays: read at once it
/// is 1; after a quiet window of 250 ms it is 3, its last value.
#[test]
fn a_late_change_is_counted_before_the_window_closes() {
    let start = Instant::now();
    let count = || match start.elapsed().as_millis() {
        0..150 => 1,
        150..300 => 2,
        _ => 3,
    };
    assert_eq!(count(), 1);
    let quiet = Duration::from_millis(250);
    let counted = until_quiet("the count", quiet, Duration::from_secs(10), count);
    assert_eq!(counted, 3);
    assert!(start.elapsed() >= Duration::from_millis(300) + quiet);
}

/// A count that never stops moving is a failure that says so, not a
/// count taken in passing.
#[test]
#[should_panic(expected = "never stayed the same")]
fn a_count_that_never_settles_fails() {
    let start = Instant::now();
    until_quiet(
        "a count",
        Duration::from_millis(200),
        Duration::from_millis(600),
        || start.elapsed().as_millis() / 50,
    );
}
