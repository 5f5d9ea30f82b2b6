//! Arrival names: the filenames `ding send` gives delivered messages.
//!
//! A name is `YYYYMMDDTHHMMSSuuuuuuZ-PID-NONCE.md`: the UTC arrival time to
//! the microsecond, fixed width so that bytewise filename order (the
//! engine's FIFO, see [`crate::core::message`]) is time order; then the
//! sender's pid and 32 random bits, in lowercase hex, so that two senders
//! in the same microsecond (even in different pid namespaces) never pick
//! the same name. Within one process a [`NameClock`] makes names strictly
//! increasing even if the wall clock steps back. Across processes, order is
//! the wall clock's: a clock stepped back by S can order a later send up to
//! S before an earlier one. Writing the file is `inbox`'s job.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::SystemTime;

use crate::core::message::MessageName;
pub use crate::wall_clock::micros_since_epoch;
use crate::wall_clock::utc_fields;

/// The extension of every arrival name.
pub const EXTENSION: &str = ".md";

/// Hands out strictly increasing microsecond stamps: the wall clock when it
/// moves forward, the last stamp plus one microsecond when it does not.
#[derive(Debug, Default)]
pub struct NameClock {
    last_micros: Option<u64>,
}

impl NameClock {
    pub fn new() -> NameClock {
        NameClock::default()
    }

    /// The stamp for a message arriving at `now_micros` (microseconds since
    /// the Unix epoch).
    pub fn next_micros(&mut self, now_micros: u64) -> u64 {
        let stamp = match self.last_micros {
            Some(last) if now_micros <= last => last.saturating_add(1),
            _ => now_micros,
        };
        self.last_micros = Some(stamp);
        stamp
    }

    /// A fresh arrival name for the wall clock's now.
    pub fn next_name(&mut self) -> MessageName {
        let micros = self.next_micros(micros_since_epoch(SystemTime::now()));
        arrival_name(micros, std::process::id(), random_nonce(micros))
    }
}

/// `YYYYMMDDTHHMMSSuuuuuuZ-PID-NONCE.md`.
pub fn arrival_name(micros: u64, pid: u32, nonce: u32) -> MessageName {
    let name = format!("{}-{pid:x}-{nonce:08x}{EXTENSION}", utc_stamp(micros));
    // Digits, `T`, `Z`, `-`, hex and `.md`: at most 52 bytes, no slash, no
    // NUL, so this is always a valid message name.
    MessageName::new(&name).expect("arrival names are valid message names")
}

/// 32 bits from std's per-process random hasher keys (seeded from the OS),
/// mixed with the stamp. Not cryptographic; it only breaks ties.
fn random_nonce(micros: u64) -> u32 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(micros);
    hasher.finish() as u32
}

/// `YYYYMMDDTHHMMSSuuuuuuZ`, UTC, for microseconds since the epoch.
pub fn utc_stamp(micros: u64) -> String {
    let [year, month, day, hour, minute, second, micro] = utc_fields(micros);
    format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}{micro:06}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_time_to_the_microsecond() {
        assert_eq!(utc_stamp(0), "19700101T000000000000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.000789.
        assert_eq!(utc_stamp(951_827_696_000_789), "20000229T123456000789Z");
        // 2026-11-30 10:15:00.123456
        assert_eq!(utc_stamp(1_796_033_700_123_456), "20261130T101500123456Z");
        // The last microsecond of 2099-12-31.
        assert_eq!(
            utc_stamp(4_102_444_800_000_000 - 1),
            "20991231T235959999999Z"
        );
    }

    #[test]
    fn name_clock_is_strictly_increasing_when_the_clock_steps_back() {
        let mut clock = NameClock::new();
        assert_eq!(clock.next_micros(1_000), 1_000);
        assert_eq!(clock.next_micros(1_000), 1_001);
        assert_eq!(clock.next_micros(500), 1_002);
        assert_eq!(clock.next_micros(5_000), 5_000);
    }

    #[test]
    fn names_sort_by_arrival_time_whatever_the_pid_and_nonce() {
        let early = arrival_name(1_000_000, 0xffff_ffff, 0xffff_ffff);
        let late = arrival_name(1_000_001, 1, 0);
        assert!(early < late, "{early} < {late}");
        assert_eq!(
            early.as_str(),
            "19700101T000001000000Z-ffffffff-ffffffff.md"
        );
    }

    #[test]
    fn successive_names_in_one_process_increase_and_differ() {
        let mut clock = NameClock::new();
        let names: Vec<MessageName> = (0..1000).map(|_| clock.next_name()).collect();
        assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
