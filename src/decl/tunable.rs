//! The `ding` block's tunables: their declaration names, value kinds, which
//! policy they apply to, and the bounds check with its wording.
//!
//! Defaults and bounds are not repeated here: they come from
//! `core::config` (`LEASE_CAP`, ..., `NOTICE_MAX_FILES_*`), the single source
//! of truth the engine also reads.

use std::time::Duration;

use crate::core::config::{
    ADAPTER_SILENCE, DurationBound, GATHER_CAP, GATHER_QUIET, LEASE_CAP, NOTICE_MAX_FILES_DEFAULT,
    NOTICE_MAX_FILES_MAX, NOTICE_MAX_FILES_MIN, Policy, QUIET_INPUT, RE_RING_AFTER, SETTLED_OUTPUT,
    SUBMIT_DELAY,
};

use super::duration::{DurationError, format_duration, parse_duration};

/// The declaration name of the notice file-count tunable (the duration
/// tunables carry theirs in their `DurationBound`).
pub const NOTICE_MAX_FILES_NAME: &str = "notice-max-files";

/// The literal `re-ring-after` accepts for "never ring staged work again".
pub const NEVER: &str = "never";

/// The declaration name of the unsafe fence flag (`core::config::Fence`).
pub const UNSAFE_RECEIPT_FENCE_NAME: &str = "unsafe-receipt-fence";

/// What kind of literal a tunable takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableKind {
    /// A duration string such as `"5s"`.
    Duration,
    /// A KDL integer.
    Count,
    /// `#true` or `#false`.
    Flag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TunableKey {
    LeaseCap,
    AdapterSilence,
    ReRingAfter,
    SubmitDelay,
    QuietInput,
    SettledOutput,
    GatherQuiet,
    GatherCap,
    NoticeMaxFiles,
    UnsafeReceiptFence,
}

/// A checked tunable value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunableValue {
    Duration(Duration),
    Never,
    Count(usize),
    Flag(bool),
}

/// Why a tunable value was refused: the message tail and a hint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunableError {
    pub message: String,
    pub hint: String,
}

impl TunableKey {
    /// Documentation order.
    pub const ALL: [TunableKey; 10] = [
        TunableKey::LeaseCap,
        TunableKey::AdapterSilence,
        TunableKey::ReRingAfter,
        TunableKey::SubmitDelay,
        TunableKey::QuietInput,
        TunableKey::SettledOutput,
        TunableKey::GatherQuiet,
        TunableKey::GatherCap,
        TunableKey::NoticeMaxFiles,
        TunableKey::UnsafeReceiptFence,
    ];

    pub fn name(self) -> &'static str {
        match (self.duration_bound(), self) {
            (Some(bound), _) => bound.name,
            (None, TunableKey::UnsafeReceiptFence) => UNSAFE_RECEIPT_FENCE_NAME,
            (None, _) => NOTICE_MAX_FILES_NAME,
        }
    }

    pub fn from_name(name: &str) -> Option<TunableKey> {
        TunableKey::ALL.into_iter().find(|key| key.name() == name)
    }

    pub fn duration_bound(self) -> Option<DurationBound> {
        match self {
            TunableKey::LeaseCap => Some(LEASE_CAP),
            TunableKey::AdapterSilence => Some(ADAPTER_SILENCE),
            TunableKey::ReRingAfter => Some(RE_RING_AFTER),
            TunableKey::SubmitDelay => Some(SUBMIT_DELAY),
            TunableKey::QuietInput => Some(QUIET_INPUT),
            TunableKey::SettledOutput => Some(SETTLED_OUTPUT),
            TunableKey::GatherQuiet => Some(GATHER_QUIET),
            TunableKey::GatherCap => Some(GATHER_CAP),
            TunableKey::NoticeMaxFiles | TunableKey::UnsafeReceiptFence => None,
        }
    }

    /// The literal this tunable takes.
    pub fn kind(self) -> TunableKind {
        match self {
            TunableKey::NoticeMaxFiles => TunableKind::Count,
            TunableKey::UnsafeReceiptFence => TunableKind::Flag,
            _ => TunableKind::Duration,
        }
    }

    /// Whether setting this tunable can change anything under `policy`.
    /// Lease and adapter settings mean nothing without an adapter.
    pub fn applies_to(self, policy: Policy) -> bool {
        match self {
            // The time fence guards compare-and-sends, which only the
            // careful policy makes; the aggressive baseline gathers
            // nothing.
            TunableKey::LeaseCap
            | TunableKey::AdapterSilence
            | TunableKey::UnsafeReceiptFence
            | TunableKey::QuietInput
            | TunableKey::SettledOutput
            | TunableKey::GatherQuiet
            | TunableKey::GatherCap => policy.uses_adapter(),
            TunableKey::ReRingAfter | TunableKey::SubmitDelay | TunableKey::NoticeMaxFiles => true,
        }
    }

    /// The default as it would be written in a declaration.
    pub fn default_literal(self) -> String {
        match (self.duration_bound(), self.kind()) {
            (Some(bound), _) => format!("\"{}\"", format_duration(bound.default)),
            (None, TunableKind::Flag) => "#false".to_string(),
            (None, _) => NOTICE_MAX_FILES_DEFAULT.to_string(),
        }
    }

    /// "allowed: 50ms to 60s (default 5s)".
    pub fn range_text(self) -> String {
        match self.duration_bound() {
            Some(bound) => {
                let never = if self == TunableKey::ReRingAfter {
                    format!(", or \"{NEVER}\"")
                } else {
                    String::new()
                };
                format!(
                    "allowed: \"{}\" to \"{}\"{never} (default \"{}\")",
                    format_duration(bound.min),
                    format_duration(bound.max),
                    format_duration(bound.default)
                )
            }
            None if self.kind() == TunableKind::Flag => {
                "allowed: #true or #false (default #false)".to_string()
            }
            None => format!(
                "allowed: {NOTICE_MAX_FILES_MIN} to {NOTICE_MAX_FILES_MAX} (default {NOTICE_MAX_FILES_DEFAULT})"
            ),
        }
    }

    /// Checks a flag tunable (any boolean is in range).
    pub fn check_flag(self, flag: bool) -> Result<TunableValue, TunableError> {
        if self.kind() == TunableKind::Flag {
            Ok(TunableValue::Flag(flag))
        } else {
            Err(self.out_of_range(format!("#{flag}")))
        }
    }

    /// Checks a duration tunable's literal against its syntax and bounds.
    pub fn check_text(self, text: &str) -> Result<TunableValue, TunableError> {
        let Some(bound) = self.duration_bound() else {
            return Err(self.out_of_range(format!("\"{text}\"")));
        };
        if self == TunableKey::ReRingAfter && text == NEVER {
            return Ok(TunableValue::Never);
        }
        match parse_duration(text) {
            Ok(duration) if bound.contains(duration) => Ok(TunableValue::Duration(duration)),
            Ok(_) | Err(DurationError::TooLarge) => Err(self.out_of_range(format!("\"{text}\""))),
            Err(err) => Err(TunableError {
                message: format!("`{}` \"{text}\" {err}", self.name()),
                hint: err.hint(),
            }),
        }
    }

    /// Checks a count tunable against its bounds.
    pub fn check_count(self, count: i128) -> Result<TunableValue, TunableError> {
        let range = NOTICE_MAX_FILES_MIN as i128..=NOTICE_MAX_FILES_MAX as i128;
        match usize::try_from(count) {
            Ok(count) if self.kind() == TunableKind::Count && range.contains(&(count as i128)) => {
                Ok(TunableValue::Count(count))
            }
            _ => Err(self.out_of_range(count.to_string())),
        }
    }

    fn out_of_range(self, literal: String) -> TunableError {
        TunableError {
            message: format!("`{}` {literal} is out of bounds", self.name()),
            hint: self.range_text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::TUNABLES;

    #[test]
    fn names_come_from_the_core_bounds_table() {
        for bound in TUNABLES {
            let key = TunableKey::from_name(bound.name).expect("every core tunable is declarable");
            assert_eq!(key.duration_bound(), Some(bound));
        }
        assert_eq!(
            TunableKey::from_name("notice-max-files"),
            Some(TunableKey::NoticeMaxFiles)
        );
    }

    #[test]
    fn bounds_are_inclusive_and_errors_show_them() {
        let key = TunableKey::LeaseCap;
        assert_eq!(
            key.check_text("50ms"),
            Ok(TunableValue::Duration(Duration::from_millis(50)))
        );
        assert_eq!(
            key.check_text("60s"),
            Ok(TunableValue::Duration(Duration::from_secs(60)))
        );
        let err = key.check_text("61s").unwrap_err();
        assert_eq!(err.message, "`lease-cap` \"61s\" is out of bounds");
        assert_eq!(err.hint, "allowed: \"50ms\" to \"1m\" (default \"5s\")");
    }

    #[test]
    fn never_is_only_for_re_ring_after() {
        assert_eq!(
            TunableKey::ReRingAfter.check_text("never"),
            Ok(TunableValue::Never)
        );
        assert!(TunableKey::SubmitDelay.check_text("never").is_err());
    }

    #[test]
    fn counts_are_bounded() {
        let key = TunableKey::NoticeMaxFiles;
        assert_eq!(key.check_count(1), Ok(TunableValue::Count(1)));
        assert_eq!(key.check_count(256), Ok(TunableValue::Count(256)));
        assert!(key.check_count(0).is_err());
        assert!(key.check_count(-3).is_err());
        assert!(key.check_count(i128::MAX).is_err());
    }
}
