//! Wall-clock time as people read it, computed without a date library: the
//! UTC calendar of a microsecond count since the Unix epoch.
//!
//! Logs carry this beside the monotonic time the engine runs on (which
//! says how long things took but not when they happened); arrival names
//! use the compact form. A clock set before 1970 counts as the epoch.

use std::time::{SystemTime, UNIX_EPOCH};

/// Microseconds since the Unix epoch; 0 for a clock set before 1970.
pub fn micros_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|since| u64::try_from(since.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The UTC calendar fields of `micros`: year, month, day, hour, minute,
/// second, microsecond.
pub fn utc_fields(micros: u64) -> [u64; 7] {
    let seconds = micros / 1_000_000;
    let days = seconds / 86_400;
    let in_day = seconds % 86_400;
    let (year, month, day) = civil_from_days(days);
    [
        year,
        month,
        day,
        in_day / 3600,
        in_day / 60 % 60,
        in_day % 60,
        micros % 1_000_000,
    ]
}

/// RFC 3339 in UTC to the millisecond: `2026-11-30T10:15:00.123Z`.
pub fn rfc3339(micros: u64) -> String {
    let [year, month, day, hour, minute, second, micro] = utc_fields(micros);
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
        micro / 1000
    )
}

/// [`rfc3339`] of the current time.
pub fn now_rfc3339() -> String {
    rfc3339(micros_since_epoch(SystemTime::now()))
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
    fn rfc3339_is_utc_calendar_time_to_the_millisecond() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
        assert_eq!(rfc3339(951_827_696_789_999), "2000-02-29T12:34:56.789Z");
        assert_eq!(rfc3339(1_796_033_700_123_456), "2026-11-30T10:15:00.123Z");
        assert_eq!(
            rfc3339(4_102_444_800_000_000 - 1),
            "2099-12-31T23:59:59.999Z"
        );
    }

    #[test]
    fn now_is_after_this_code_was_written() {
        assert!(now_rfc3339().as_str() > "2025-01-01T00:00:00.000Z");
    }
}
