//! The wall clock of the evaluation's logs.

/// The wall clock in Unix milliseconds: the model server stamps its log
/// with it, and the evaluation compares against it.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
