//! The report's data: what the run was, and every trial's facts summed
//! into one cell per harness, row and arm, with the careful arm's extra
//! model calls over the aggressive arm on the same seeds.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::arm::Arm;
use crate::cell::Cell;
use crate::trial::{Outcome, TrialFacts};

use super::format::clip;

/// One harness as it was evaluated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HarnessInfo {
    pub name: String,
    /// What the binary says with `--version`.
    pub version: String,
}

/// What the run was.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// The day the run ended, `YYYY-MM-DD` (UTC).
    pub date: String,
    pub commit: String,
    pub harnesses: Vec<HarnessInfo>,
    pub seed: u64,
    pub trials_per_row: u32,
    pub duration_ms: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub meta: Meta,
    pub cells: Vec<Cell>,
    pub trials: Vec<TrialFacts>,
}

/// Sums `trials` into cells, in harness, row and arm order.
pub fn build(meta: Meta, trials: Vec<TrialFacts>) -> Report {
    let mut groups: BTreeMap<(String, u32, String), Vec<&TrialFacts>> = BTreeMap::new();
    for trial in &trials {
        groups
            .entry((trial.harness.clone(), trial.row, trial.arm.clone()))
            .or_default()
            .push(trial);
    }
    let mut cells: Vec<Cell> = groups
        .iter()
        .map(|((harness, row, arm), trials)| cell(harness, *row, arm, trials))
        .collect();
    for cell in &mut cells {
        if cell.arm == Arm::Careful.as_str() {
            cell.extra_calls = extra_calls(&trials, &cell.harness, cell.row);
        }
    }
    let harness_order: Vec<String> = meta.harnesses.iter().map(|h| h.name.clone()).collect();
    cells.sort_by_key(|c| {
        (
            harness_order.iter().position(|h| *h == c.harness),
            c.row,
            arm_rank(&c.arm),
        )
    });
    Report {
        meta,
        cells,
        trials,
    }
}

fn arm_rank(arm: &str) -> usize {
    Arm::ALL
        .iter()
        .position(|a| a.as_str() == arm)
        .unwrap_or(usize::MAX)
}

fn cell(harness: &str, row: u32, arm: &str, trials: &[&TrialFacts]) -> Cell {
    let mut cell = Cell {
        harness: harness.to_string(),
        row,
        row_slug: trials
            .first()
            .map(|t| t.row_slug.clone())
            .unwrap_or_default(),
        arm: arm.to_string(),
        trials: trials.len(),
        ..Cell::default()
    };
    let mut latencies = Vec::new();
    for trial in trials {
        match &trial.outcome {
            Outcome::Ran => cell.ran += 1,
            Outcome::NotRun(reason) => cell.not_run = Some(reason.clone()),
            Outcome::Error(reason) => cell.errors.push(format!(
                "trial {} (seed {}): {reason}",
                trial.trial, trial.seed
            )),
        }
        for note in &trial.notes {
            cell.notes.push(format!("trial {}: {note}", trial.trial));
        }
        if !trial.left_alive.is_empty() {
            cell.notes.push(format!(
                "trial {}: processes alive after SIGKILL: {:?}",
                trial.trial, trial.left_alive
            ));
        }
        let Some(m) = &trial.metrics else { continue };
        cell.sent += m.messages.len();
        cell.delivered += m.delivered;
        cell.lost += m.lost;
        cell.late += m.messages.iter().filter(|x| x.late).count();
        latencies.extend(m.messages.iter().filter_map(|x| x.latency_ms));
        cell.drafts += m.typed;
        cell.drafts_corrupted += m.drafts_corrupted;
        cell.dialogs += m.dialogs.len();
        cell.dialogs_answered_by_ding += m.dialogs_answered_by_ding;
        cell.commands += m.commands.len();
        cell.commands_without_effect += m
            .commands
            .iter()
            .filter(|c| c.took_effect != Some(true))
            .count();
        cell.turn_calls += m.calls.turn_calls;
        cell.titles += m.calls.titles;
        cell.delivery_calls += m.calls.delivery_calls;
        cell.ding_bytes += m.pty.delivery_bytes;
        cell.ding_writes += m.pty.delivery_writes;
        cell.duplicates += m.duplicates;
        cell.interventions += m.interventions.len();
        cell.interventions_exact += m.interventions.iter().filter(|i| i.reached_exactly).count();
        let typist_keys = trial.records.as_ref().map_or(0, |r| r.typist_keys as u64);
        cell.supervisor_bytes += m.pty.intervention_bytes.saturating_sub(typist_keys);
        for draft in m.drafts.iter().filter(|d| d.corrupted) {
            cell.notes.push(format!(
                "trial {}: draft {:?} {}{}",
                trial.trial,
                draft.text,
                match draft.outcome {
                    crate::evidence::DraftOutcome::Altered => "reached the model altered",
                    _ => "never reached the model",
                },
                if draft.pieces.is_empty() {
                    String::new()
                } else {
                    let pieces: Vec<String> = draft
                        .pieces
                        .iter()
                        .map(|p| format!("{:?}", clip(p, 100)))
                        .collect();
                    format!(", as {}", pieces.join(" and "))
                }
            ));
        }
        for message in m.messages.iter().filter(|x| x.garbled) {
            cell.notes.push(format!(
                "trial {}: {} was carried by a prompt of notices run together{}",
                trial.trial,
                message.name,
                if message.delivered {
                    ", and delivered cleanly after"
                } else {
                    ", and never cleanly"
                }
            ));
        }
        for dialog in m.dialogs.iter().filter(|d| d.answered_by_ding) {
            cell.notes.push(format!(
                "trial {}: dialog answered by DING: {}",
                trial.trial,
                dialog.why.clone().unwrap_or_default()
            ));
        }
        for command in m.commands.iter().filter(|c| c.took_effect != Some(true)) {
            cell.notes.push(format!(
                "trial {}: {} {}",
                trial.trial,
                command.text,
                match command.took_effect {
                    Some(_) => "did not take effect",
                    None => "left no trace in the log",
                }
            ));
        }
    }
    latencies.sort_unstable();
    cell.latency_p50_ms = latencies
        .get(latencies.len().saturating_sub(1) / 2)
        .copied();
    cell.latency_max_ms = latencies.last().copied();
    if cell.delivered > 0 {
        // The verdict's measure: every turn's model calls, titles apart.
        cell.calls_per_delivered = Some(cell.turn_calls as f64 / cell.delivered as f64);
        cell.ding_bytes_per_delivered = Some(cell.ding_bytes as f64 / cell.delivered as f64);
    }
    cell
}

/// Careful minus aggressive model calls over the trials of one harness
/// and row that both arms ran on the same seed; `None` if there are none.
fn extra_calls(trials: &[TrialFacts], harness: &str, row: u32) -> Option<i64> {
    let calls = |arm: Arm, seed: u64| {
        trials
            .iter()
            .find(|t| {
                t.harness == harness && t.row == row && t.arm == arm.as_str() && t.seed == seed
            })
            .filter(|t| t.outcome == Outcome::Ran)
            .and_then(|t| t.metrics.as_ref())
            .map(|m| m.calls.turn_calls as i64)
    };
    let mut total = None;
    for careful in trials
        .iter()
        .filter(|t| t.harness == harness && t.row == row && t.arm == Arm::Careful.as_str())
    {
        if let (Some(c), Some(a)) = (
            calls(Arm::Careful, careful.seed),
            calls(Arm::Aggressive, careful.seed),
        ) {
            *total.get_or_insert(0) += c - a;
        }
    }
    total
}

/// The day of a Unix time, `YYYY-MM-DD` (UTC), from the civil calendar.
pub fn date_of(unix_ms: u64) -> String {
    let days = (unix_ms / 86_400_000) as i64;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
