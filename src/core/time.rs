//! Time as an input.
//!
//! The engine never reads a clock. Every input carries a [`Time`]: milliseconds
//! on a monotonic clock whose origin the caller picks (the sidecar uses
//! `CLOCK_MONOTONIC`, tests start at zero). Only differences matter, so the
//! same inputs at the same times always give the same decisions.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point on the caller's monotonic clock, in whole milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    pub const ZERO: Time = Time(0);

    pub const fn from_millis(millis: u64) -> Time {
        Time(millis)
    }

    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// `self + span`, saturating at the end of time rather than wrapping.
    pub fn saturating_add(self, span: Duration) -> Time {
        let millis = u64::try_from(span.as_millis()).unwrap_or(u64::MAX);
        Time(self.0.saturating_add(millis))
    }

    /// How long ago `earlier` was, or zero if it is not earlier.
    pub fn since(self, earlier: Time) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

/// `time + span` saturates, as [`Time::saturating_add`] does.
impl std::ops::Add<Duration> for Time {
    type Output = Time;

    fn add(self, span: Duration) -> Time {
        self.saturating_add(span)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{}ms", self.0)
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(Time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let t = Time::from_millis(u64::MAX - 1);
        assert_eq!(
            t.saturating_add(Duration::from_secs(5)),
            Time::from_millis(u64::MAX)
        );
        assert_eq!(t + Duration::from_secs(5), Time::from_millis(u64::MAX));
        assert_eq!(Time::ZERO.since(t), Duration::ZERO);
        assert_eq!(
            Time::from_millis(1500).since(Time::from_millis(500)),
            Duration::from_secs(1)
        );
    }
}
