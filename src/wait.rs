//! Waiting for another process by looking again: the crate's one sleep-poll
//! loop.
//!
//! Some facts come with no event to wait on: a process that is not our
//! child has gone, a socket listens, a file was written, a busy peer is free
//! again. A caller that must block until one holds asks [`wait_for`] (or
//! [`wait_until`], for a yes or no) to look every so often until a deadline.
//! What a look reads, and what it makes of a process that died meanwhile
//! (the last line of its log, say), is the caller's closure; this module
//! only paces the looks and keeps the deadline.
//!
//! N.B. this blocks the calling thread. A loop with other work (the
//! sidecar's, the PTY host's, the adapter kit's) arms a timer instead, and
//! a decision never waits at all. A static test (`tests/one_wait.rs`) keeps
//! every other sleep in the crate to a short list of deliberate pacing.

use std::thread;
use std::time::{Duration, Instant};

/// How often a wait looks again at a fact it can read cheaply and alone: a
/// pid, a socket, a file, a log.
pub const POLL_EVERY: Duration = Duration::from_millis(20);

/// How often a wait asks again a peer that said "not now" (a busy PTY host,
/// a hook channel not there yet) or looks at what only a peer can answer:
/// each look is a request the peer has to serve.
pub const RETRY_EVERY: Duration = Duration::from_millis(50);

/// Calls `look` until it returns a value, every `every`, for at most
/// `timeout`; the value, or `None` if the time ran out first.
///
/// `look` runs at once, and once more when the time is up, so a fact that
/// holds by the deadline is seen even if `every` does not divide `timeout`.
pub fn wait_for<T>(
    timeout: Duration,
    every: Duration,
    mut look: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now().checked_add(timeout);
    loop {
        if let Some(value) = look() {
            return Some(value);
        }
        let left = match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => every,
        };
        if left.is_zero() {
            return None;
        }
        thread::sleep(every.min(left));
    }
}

/// Whether `ready` came to hold within `timeout`, looking every
/// [`POLL_EVERY`].
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    wait_for(timeout, POLL_EVERY, || ready().then_some(())).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_returns_the_first_value_a_look_finds() {
        let mut looks = 0;
        let found = wait_for(Duration::from_secs(5), Duration::from_millis(1), || {
            looks += 1;
            (looks == 3).then_some(looks * 10)
        });
        assert_eq!(found, Some(30));
        assert_eq!(looks, 3, "no look after the value was found");
    }

    #[test]
    fn a_wait_gives_up_at_its_deadline_after_a_last_look() {
        let start = Instant::now();
        let mut looks = 0;
        let found: Option<()> =
            wait_for(Duration::from_millis(50), Duration::from_millis(30), || {
                looks += 1;
                None
            });
        assert_eq!(found, None);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(50), "waited {took:?}");
        assert!(took < Duration::from_secs(2), "waited {took:?}");
        // At once, and again at the deadline (after 30 ms and 20 more, on
        // a machine that keeps time; a loaded one may oversleep the first).
        assert!((2..=3).contains(&looks), "{looks} looks");
    }

    #[test]
    fn a_zero_timeout_looks_once() {
        let mut looks = 0;
        assert!(!wait_until(Duration::ZERO, || {
            looks += 1;
            false
        }));
        assert_eq!(looks, 1);
        assert!(wait_until(Duration::ZERO, || true));
    }

    #[test]
    fn an_endless_timeout_does_not_overflow() {
        let mut looks = 0;
        assert!(wait_until(Duration::MAX, || {
            looks += 1;
            looks == 2
        }));
    }
}
