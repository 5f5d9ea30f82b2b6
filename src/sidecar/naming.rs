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
use std::time::{SystemTime, UNIX_EPOCH};

use crate::core::message::MessageName;

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

/// Microseconds since the Unix epoch; 0 for a clock set before 1970.
pub fn micros_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|since| u64::try_from(since.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
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
    let seconds = micros / 1_000_000;
    let fraction = micros % 1_000_000;
    let days = seconds / 86_400;
    let in_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}{fraction:06}Z",
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for non-negative days only).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let shifted = days + 719_468;
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
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
