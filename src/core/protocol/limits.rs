//! The protocol's bounds: how long a line, a field, a list or a claim may
//! be, and the version this module speaks.

/// The longest line the sidecar accepts, newline excluded. Longer lines are
/// held as [`ProtocolError::LineTooLong`] and never buffered whole.
///
/// [`ProtocolError::LineTooLong`]: super::ProtocolError::LineTooLong
pub const MAX_LINE_BYTES: usize = 65_536;

/// The longest `session`, `incarnation`, `generation` or `reason` value.
pub const MAX_FIELD_BYTES: usize = 1024;

/// The most bytes an activity's `withdraw` keys may take: a few keys (the
/// PTY host takes as many).
pub const MAX_WITHDRAW_BYTES: usize = 64;

/// The longest `withdrawAfterMs`: a person's input waits behind it (the
/// PTY host's bound for the wait of its withdraw steps).
pub const MAX_WITHDRAW_AFTER_MS: u64 = 500;

/// The most filenames one turn-boundary receipt may name.
pub const MAX_RECEIPT_MESSAGES: usize = 1024;

/// The most files one `claim` may ask for by count (`limit`).
pub const MAX_CLAIM_LIMIT: u64 = MAX_RECEIPT_MESSAGES as u64;

/// The largest `nameBytes` budget a claim may give.
pub const MAX_CLAIM_NAME_BYTES: u64 = 1 << 20;

/// The protocol version this module speaks.
pub const VERSION: u64 = 1;
