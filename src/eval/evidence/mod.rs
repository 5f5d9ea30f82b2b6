//! The metrics of one trial, computed from evidence only: the model
//! server's request log, the PTY host's input log, the inbox's `archive/`,
//! the marker files, and what the typist itself did and saw. Never from
//! DING's status or its logs of its own decisions.
//!
//! Pure: the trial gathers the records, this turns them into facts.
//!
//! * **delivered**: a model call of a turn carries the exact filename, or
//!   the agent archived the file, no later than the deadline; latency is
//!   from the end of `ding send` to the first such call. Otherwise lost.
//!   A prompt the harness made of notices run together (a typed notice
//!   holding another, glued to it) delivers nothing, for either arm.
//! * **draft corrupted**: no `user` text the model saw is exactly what the
//!   typist typed (trimmed). *Altered* when a `user` text (not harness
//!   context, not another line it typed) begins as it begins, is its end,
//!   or holds it glued to something; *never reached* otherwise. A harness
//!   command the typist typed (compact, clear) is corrupted when the log
//!   shows it did not take effect.
//! * **dialog answered by DING**: the typist found the dialog closed when
//!   it came to answer (no one else writes to the terminal), or found
//!   another option selected than the default it left, or the gated
//!   side effect (the marker file) exists although the typist declined.
//! * **model calls**: every model call of a turn; titles, compactions and
//!   other requests apart. *Delivery calls* are the calls of turns that a
//!   delivery started: the turn's first call is a prompt whose typed words
//!   carry a filename (a notice submitted as the prompt), or a prompt with
//!   no typed words at all that is the first to carry one (a wake-up).
//! * **DING's PTY bytes**: the bytes of the PTY host's `delivery` records.
//! * **duplicates**: a file carried by more than one message or content
//!   block of the same request: injected twice into one conversation (the
//!   same block repeated by every later request of the history counts
//!   once).
//!
//! * **fewest calls**: the calls a person who knew every arrival would
//!   need, their own work's and the fewest beyond that carry every message
//!   (`fewest.rs`).
//!
//! What a trial recorded is in `records.rs`; the facts and metrics made of
//! it, and how, in `metrics.rs`.

mod fewest;
mod metrics;
mod records;

// The two halves are one module to their users: every public name of each
// is the evidence's own.
#[cfg(test)]
pub use self::fewest::fewest_calls;
pub use self::metrics::*;
pub use self::records::*;

#[cfg(test)]
mod tests;
