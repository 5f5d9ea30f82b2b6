//! The A/B report: every trial's facts summed per harness, row and arm,
//! as `report.json` (the summary and every trial's raw facts) and
//! `report.md` (the tables). A careful trial that did not run says why in
//! the table; nothing is filled in for it. "Extra calls" compares the
//! careful arm with the aggressive arm trial by trial, on the same seed;
//! the verdict holds the careful arm to the design's measure, model calls
//! per delivered message, and counts every careful trial that could not be
//! driven to its end as a failure.
//!
//! The report's data, summed from the trials, is in `summary.rs`; the
//! Markdown tables in `tables.rs`, the comparison of the arms with its
//! verdicts in `comparison.rs`, and how a cell's numbers are written in
//! `format.rs`.

mod comparison;
mod format;
mod summary;
mod tables;

pub use self::summary::{HarnessInfo, Meta, Report, build, date_of};
pub use self::tables::markdown;

#[cfg(test)]
mod tests;
