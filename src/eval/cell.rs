//! One cell of the A/B report: one harness, one row, one arm, the sums over
//! its trials. The report fills it (`report/summary.rs`) and the verdict
//! judges it (`verdict.rs`).

use serde::Serialize;

/// One harness, one row, one arm: the sums over its trials.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cell {
    pub harness: String,
    pub row: u32,
    pub row_slug: String,
    pub arm: String,
    pub trials: usize,
    /// Trials whose workload ran to its end.
    pub ran: usize,
    /// Why a trial could not be driven to its end, per trial.
    pub errors: Vec<String>,
    /// Why the arm did not run (every trial said the same).
    pub not_run: Option<String>,
    pub sent: usize,
    pub delivered: usize,
    pub lost: usize,
    /// Lost, but reached the model after the deadline.
    pub late: usize,
    pub latency_p50_ms: Option<u64>,
    pub latency_max_ms: Option<u64>,
    /// Lines and harness commands the typist submitted.
    pub drafts: usize,
    pub drafts_corrupted: usize,
    pub dialogs: usize,
    pub dialogs_answered_by_ding: usize,
    pub commands: usize,
    pub commands_without_effect: usize,
    pub turn_calls: usize,
    pub titles: usize,
    pub delivery_calls: usize,
    pub calls_per_delivered: Option<f64>,
    /// Careful minus aggressive model calls, over the seeds both ran. (Per
    /// delivered message, seed by seed, in the verdict: `verdict.rs`.)
    pub extra_calls: Option<i64>,
    pub ding_bytes: u64,
    pub ding_writes: usize,
    pub ding_bytes_per_delivered: Option<f64>,
    pub duplicates: usize,
    pub interventions: usize,
    pub interventions_exact: usize,
    /// Intervention bytes other than the typist's keystrokes.
    pub supervisor_bytes: u64,
    pub notes: Vec<String>,
}
