//! Counting instead of writing: at most [`LOG_BURST`] records of one kind
//! per [`LOG_WINDOW`] reach the log; the rest of that window's records of
//! the kind are counted, and one summary says how many there were.
//!
//! A kind is a fixed name (`protocol-rejected/malformed-json`,
//! `adapter-stderr`), never text from the input, so the number of kinds,
//! and with it this table, is bounded. What deserves a kind, and what is
//! never limited, is the log's decision; this only counts.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::core::time::Time;

/// How many records of one kind a window lets through.
pub const LOG_BURST: u32 = 10;
/// How long a window lasts, from the first record of its kind.
pub const LOG_WINDOW: Duration = Duration::from_secs(60);

/// Records of `kind` that were counted, not written, in a window that
/// began at `since`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppressed {
    pub kind: String,
    pub count: u64,
    pub since: Time,
}

struct Window {
    started: Time,
    written: u32,
    counted: u64,
}

#[derive(Default)]
pub struct RepeatLimiter {
    windows: BTreeMap<String, Window>,
}

impl RepeatLimiter {
    pub fn new() -> RepeatLimiter {
        RepeatLimiter::default()
    }

    /// Whether a record of `kind` at `now` may be written. A window of this
    /// kind that has ended is closed first, and its summary returned.
    pub fn admit(&mut self, kind: &str, now: Time) -> (bool, Option<Suppressed>) {
        let closed = match self.windows.get(kind) {
            Some(window) if now >= window.started.saturating_add(LOG_WINDOW) => {
                self.windows.remove(kind).and_then(|w| summary(kind, w))
            }
            _ => None,
        };
        let window = self.windows.entry(kind.to_string()).or_insert(Window {
            started: now,
            written: 0,
            counted: 0,
        });
        let admitted = window.written < LOG_BURST;
        if admitted {
            window.written += 1;
        } else {
            window.counted += 1;
        }
        (admitted, closed)
    }

    /// Closes every window that has ended by `now`; returns the summaries
    /// of those that counted something.
    pub fn close_ended(&mut self, now: Time) -> Vec<Suppressed> {
        let ended: Vec<String> = self
            .windows
            .iter()
            .filter(|(_, w)| now >= w.started.saturating_add(LOG_WINDOW))
            .map(|(kind, _)| kind.clone())
            .collect();
        ended
            .into_iter()
            .filter_map(|kind| {
                let window = self.windows.remove(&kind)?;
                summary(&kind, window)
            })
            .collect()
    }

    /// Closes every window (the run is ending).
    pub fn close_all(&mut self) -> Vec<Suppressed> {
        std::mem::take(&mut self.windows)
            .into_iter()
            .filter_map(|(kind, window)| summary(&kind, window))
            .collect()
    }

    /// When the earliest window that counted something ends: its summary
    /// is due then.
    pub fn next_summary_at(&self) -> Option<Time> {
        self.windows
            .values()
            .filter(|w| w.counted > 0)
            .map(|w| w.started.saturating_add(LOG_WINDOW))
            .min()
    }
}

fn summary(kind: &str, window: Window) -> Option<Suppressed> {
    (window.counted > 0).then(|| Suppressed {
        kind: kind.to_string(),
        count: window.counted,
        since: window.started,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn a_burst_passes_then_the_rest_of_the_window_is_counted_once() {
        let mut limiter = RepeatLimiter::new();
        let admitted = (0..1000)
            .filter(|&i| limiter.admit("garbage", at(i)).0)
            .count();
        assert_eq!(admitted, LOG_BURST as usize);
        assert!(limiter.admit("other", at(1000)).0, "kinds count apart");
        assert_eq!(limiter.next_summary_at(), Some(at(60_000)));
        assert_eq!(limiter.close_ended(at(59_999)), []);
        assert_eq!(
            limiter.close_ended(at(60_000)),
            [Suppressed {
                kind: "garbage".into(),
                count: 1000 - LOG_BURST as u64,
                since: at(0),
            }]
        );
        assert_eq!(limiter.next_summary_at(), None, "`other` counted nothing");
    }

    #[test]
    fn a_record_after_its_window_starts_a_new_one_and_brings_the_summary() {
        let mut limiter = RepeatLimiter::new();
        for i in 0..=u64::from(LOG_BURST) {
            limiter.admit("garbage", at(i));
        }
        let (admitted, closed) = limiter.admit("garbage", at(70_000));
        assert!(admitted);
        assert_eq!(closed.map(|s| s.count), Some(1));
        assert_eq!(limiter.close_all(), [], "the new window counted nothing");
    }

    #[test]
    fn the_end_of_the_run_closes_every_window() {
        let mut limiter = RepeatLimiter::new();
        for i in 0..20 {
            limiter.admit("a", at(i));
            limiter.admit("b", at(i));
        }
        let counts: Vec<(String, u64)> = limiter
            .close_all()
            .into_iter()
            .map(|s| (s.kind, s.count))
            .collect();
        assert_eq!(counts, [("a".into(), 10), ("b".into(), 10)]);
    }
}
