//! Duration literals in declarations: a whole number and one unit, written
//! as a string: `"250ms"`, `"5s"`, `"10m"`, `"1h"`.
//!
//! One spelling per meaning keeps declarations diffable and the fingerprint
//! canonical: a duration is normalised to whole milliseconds, so `"5s"` and
//! `"5000ms"` are the same setting. Bounds are `tunable`'s concern.

use std::fmt;
use std::time::Duration;

/// The accepted units, smallest first, with their length in milliseconds.
pub const UNITS: [(&str, u64); 4] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)];

/// Why a string is not a duration literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// Digits only, as in `"5"`.
    MissingUnit { number: String },
    /// As in `"5sec"`.
    UnknownUnit { unit: String },
    /// Anything else: signs, fractions, spaces, several units.
    Malformed,
    /// More milliseconds than fit in 64 bits.
    TooLarge,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::MissingUnit { .. } => write!(f, "has no unit"),
            DurationError::UnknownUnit { unit } => write!(f, "has an unknown unit `{unit}`"),
            DurationError::Malformed => write!(f, "is not a duration"),
            DurationError::TooLarge => write!(f, "is too large"),
        }
    }
}

impl DurationError {
    /// What to write instead.
    pub fn hint(&self) -> String {
        match self {
            DurationError::MissingUnit { number } => {
                format!("add a unit: \"{number}ms\", \"{number}s\", \"{number}m\" or \"{number}h\"")
            }
            DurationError::UnknownUnit { .. } => {
                "units are ms, s, m and h, as in \"250ms\" or \"5s\"".into()
            }
            DurationError::Malformed | DurationError::TooLarge => {
                "write a whole number and one unit (ms, s, m, h), as in \"1500ms\"".into()
            }
        }
    }
}

/// Parses `"<digits><unit>"`.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits_end);
    if number.is_empty() {
        return Err(DurationError::Malformed);
    }
    if unit.is_empty() {
        return Err(DurationError::MissingUnit {
            number: number.to_string(),
        });
    }
    let Some(&(_, unit_ms)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(if unit.chars().all(|c| c.is_ascii_alphabetic()) {
            DurationError::UnknownUnit {
                unit: unit.to_string(),
            }
        } else {
            DurationError::Malformed
        });
    };
    let count: u64 = number.parse().map_err(|_| DurationError::TooLarge)?;
    let millis = count.checked_mul(unit_ms).ok_or(DurationError::TooLarge)?;
    Ok(Duration::from_millis(millis))
}

/// The canonical literal: the largest unit that divides the value exactly.
pub fn format_duration(duration: Duration) -> String {
    let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    let (unit, size) = UNITS
        .iter()
        .rev()
        .find(|(_, size)| millis != 0 && millis % size == 0)
        .copied()
        .unwrap_or(UNITS[0]);
    format!("{}{unit}", millis / size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_unit() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_everything_else_with_a_reason() {
        assert_eq!(
            parse_duration("5"),
            Err(DurationError::MissingUnit { number: "5".into() })
        );
        assert_eq!(
            parse_duration("5sec"),
            Err(DurationError::UnknownUnit { unit: "sec".into() })
        );
        for malformed in ["", "s", "1.5s", "-5s", " 5s", "5s ", "1m30s", "5 s", "٣s"] {
            assert_eq!(
                parse_duration(malformed),
                Err(DurationError::Malformed),
                "{malformed:?}"
            );
        }
        assert_eq!(
            parse_duration("99999999999999999999h"),
            Err(DurationError::TooLarge)
        );
        assert_eq!(
            parse_duration("9999999999999999h"),
            Err(DurationError::TooLarge)
        );
    }

    #[test]
    fn formats_in_the_largest_exact_unit() {
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_secs(600)), "10m");
        assert_eq!(format_duration(Duration::from_secs(86_400)), "24h");
        assert_eq!(format_duration(Duration::ZERO), "0ms");
    }
}
