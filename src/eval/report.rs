//! The A/B report: every trial's facts summed per harness, row and arm,
//! as `report.json` (the summary and every trial's raw facts) and
//! `report.md` (the tables). A careful trial that did not run says why in
//! the table; nothing is filled in for it. "Extra calls" compares the
//! careful arm with the aggressive arm trial by trial, on the same seed;
//! the verdict holds the careful arm to the design's measure, model calls
//! per delivered message, and counts every careful trial that could not be
//! driven to its end as a failure.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::arm::Arm;
pub use super::cell::Cell;
use super::row::Row;
use super::trial::{Outcome, TrialFacts};
use super::verdict::{Collisions, RowVerdict, harness_conclusion, row_verdict};

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
                    super::evidence::DraftOutcome::Altered => "reached the model altered",
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

fn clip(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(chars).collect();
    format!("{cut}…")
}

fn seconds(ms: Option<u64>) -> String {
    ms.map_or("–".into(), |ms| format!("{:.2} s", ms as f64 / 1000.0))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or("–".into(), |v| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    })
}

/// DING's terminal bytes per delivered message; with nothing delivered,
/// what it wrote all the same (never hidden behind a dash).
fn bytes_per_delivered(cell: &Cell) -> String {
    match cell.ding_bytes_per_delivered {
        Some(_) => ratio(cell.ding_bytes_per_delivered),
        None => format!("{} written, 0 delivered", cell.ding_bytes),
    }
}

fn row_name(number: u32) -> String {
    Row::by_number(number).map_or_else(|_| number.to_string(), |row| row.to_string())
}

/// The report as Markdown: per harness the matrix table, the supervisor
/// intervention apart, the notes, then the comparison of the arms.
pub fn markdown(report: &Report) -> String {
    let meta = &report.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# DING A/B evaluation\n");
    let _ = writeln!(
        out,
        "{} · commit {} · {} trial(s) per row and arm · seed {} · {:.0} min",
        meta.date,
        meta.commit,
        meta.trials_per_row,
        meta.seed,
        meta.duration_ms as f64 / 60_000.0
    );
    for harness in &meta.harnesses {
        let _ = writeln!(out, "\n## {} ({})\n", harness.name, harness.version);
        let cells: Vec<&Cell> = report
            .cells
            .iter()
            .filter(|c| c.harness == harness.name)
            .collect();
        matrix_table(
            &mut out,
            cells.iter().filter(|c| c.row != Row::Intervention.number()),
        );
        let interventions: Vec<&&Cell> = cells
            .iter()
            .filter(|c| c.row == Row::Intervention.number())
            .collect();
        if !interventions.is_empty() {
            let _ = writeln!(
                out,
                "\nSupervisor intervention (row 12, outside automatic delivery):\n"
            );
            intervention_table(&mut out, interventions.into_iter().copied());
        }
        notes(&mut out, &cells);
    }
    comparison(&mut out, report);
    out
}

fn matrix_table<'a>(out: &mut String, cells: impl Iterator<Item = &'a &'a Cell>) {
    let _ = writeln!(
        out,
        "| row | arm | trials | delivered | latency p50 / max | drafts corrupted | dialogs answered by DING | model calls (titles) | calls per delivered | extra calls vs aggressive | DING PTY bytes per delivered | duplicates |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    for cell in cells {
        let name = row_name(cell.row);
        if let Some(reason) = &cell.not_run {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {reason} | – | – | – | – | – | – | – | – |",
                cell.arm, cell.trials
            );
            continue;
        }
        let extra = match (cell.arm.as_str(), cell.extra_calls) {
            ("aggressive", _) => "baseline".to_string(),
            (_, Some(extra)) => format!("{extra:+}"),
            (_, None) => "–".to_string(),
        };
        let errors = if cell.errors.is_empty() {
            String::new()
        } else {
            format!(" ({} not driven to the end)", cell.errors.len())
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {}{errors} | {}/{}{} | {} / {} | {}/{} | {}/{} | {} ({}) | {} | {extra} | {} | {} |",
            cell.arm,
            cell.trials,
            cell.delivered,
            cell.sent,
            if cell.lost > 0 {
                format!(" ({} lost)", cell.lost)
            } else {
                String::new()
            },
            seconds(cell.latency_p50_ms),
            seconds(cell.latency_max_ms),
            cell.drafts_corrupted,
            cell.drafts,
            cell.dialogs_answered_by_ding,
            cell.dialogs,
            cell.turn_calls,
            cell.titles,
            ratio(cell.calls_per_delivered),
            bytes_per_delivered(cell),
            cell.duplicates,
        );
    }
}

fn intervention_table<'a>(out: &mut String, cells: impl Iterator<Item = &'a Cell>) {
    let _ = writeln!(
        out,
        "| arm | trials | intervention reached the model exactly | supervisor bytes | messages delivered | DING PTY bytes per delivered | model calls (titles) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for cell in cells {
        if let Some(reason) = &cell.not_run {
            let _ = writeln!(
                out,
                "| {} | {} | {reason} | – | – | – | – |",
                cell.arm, cell.trials
            );
            continue;
        }
        let _ = writeln!(
            out,
            "| {} | {} | {}/{} | {} | {}/{} | {} | {} ({}) |",
            cell.arm,
            cell.trials,
            cell.interventions_exact,
            cell.interventions,
            cell.supervisor_bytes,
            cell.delivered,
            cell.sent,
            bytes_per_delivered(cell),
            cell.turn_calls,
            cell.titles,
        );
    }
}

fn notes(out: &mut String, cells: &[&Cell]) {
    let lines: Vec<String> = cells
        .iter()
        .flat_map(|cell| {
            let head = format!("row {} {}", row_name(cell.row), cell.arm);
            cell.errors
                .iter()
                .map(move |e| format!("{head}: not driven to the end: {e}"))
                .chain(
                    cell.notes
                        .iter()
                        .map(move |n| format!("row {} {}: {n}", row_name(cell.row), cell.arm)),
                )
                .collect::<Vec<_>>()
        })
        .collect();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nNotes:\n");
    for line in lines {
        let _ = writeln!(out, "* {line}");
    }
}

/// The design's done condition, row by row and per harness
/// (`verdict`): rates with their 95% intervals, the careful arm's extra
/// model calls per delivered message seed by seed, and what the counts
/// cannot decide said as such. Per harness the careful arm must also
/// collide strictly less than the aggressive arm (drafts corrupted and
/// dialogs answered, over the rows compared).
fn comparison(out: &mut String, report: &Report) {
    let _ = writeln!(out, "\n## Careful against aggressive\n");
    let _ = writeln!(
        out,
        "Rates with their 95% Wilson intervals; model calls per delivered message compared seed by seed (careful minus aggressive: the mean, with its 95% t interval) on the seeds where the aggressive arm left the person's input whole (calls it saved by gluing its notice onto a person's line are no price to match; such seeds are counted as set aside). A row meets the done condition only if every trial does; one the counts cannot decide says so.\n"
    );
    let _ = writeln!(
        out,
        "| harness | row | delivered (careful / aggressive) | drafts corrupted (careful) | dialogs answered by DING (careful) | extra calls per delivered message | verdict |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for harness in &report.meta.harnesses {
        let of = |arm: Arm| -> Vec<&Cell> {
            report
                .cells
                .iter()
                .filter(|c| c.harness == harness.name && c.arm == arm.as_str())
                .collect()
        };
        let (careful, aggressive) = (of(Arm::Careful), of(Arm::Aggressive));
        let compared: Vec<(&Cell, Option<&Cell>)> = careful
            .iter()
            .filter(|c| c.not_run.is_none())
            .map(|c| (*c, aggressive.iter().find(|a| a.row == c.row).copied()))
            .collect();
        if compared.is_empty() {
            let reason = careful
                .iter()
                .find_map(|c| c.not_run.clone())
                .unwrap_or_else(|| "the careful arm did not run".into());
            let _ = writeln!(
                out,
                "| {} | – | – | – | – | – | no comparison: {reason}; no benefit is claimed |",
                harness.name
            );
            continue;
        }
        let verdicts: Vec<RowVerdict> = compared
            .iter()
            .map(|(c, a)| row_verdict(c, *a, &report.trials))
            .collect();
        for verdict in &verdicts {
            let _ = writeln!(
                out,
                "| {} | {} | {} / {} | {} | {} | {} | {} |",
                harness.name,
                row_name(verdict.row),
                verdict.delivered.0.show(),
                verdict.delivered.1.show(),
                verdict.drafts_corrupted.show(),
                verdict.dialogs_answered.show(),
                calls_compared(verdict),
                verdict.conclusion.show(),
            );
        }
        let collisions = Collisions::of(&compared);
        let overall = harness_conclusion(&verdicts, collisions);
        let _ = writeln!(
            out,
            "| {} | all {} compared | | {} (aggressive {}) collisions | | | **{}** |",
            harness.name,
            verdicts.len(),
            collisions.careful,
            collisions.aggressive,
            overall.show(),
        );
    }
}

/// The verdict's measure of calls, and the seeds it set aside.
fn calls_compared(verdict: &RowVerdict) -> String {
    let set_aside = match verdict.set_aside {
        0 => String::new(),
        n => format!(" ({n} seed(s) set aside: the aggressive arm corrupted the person's input)"),
    };
    match &verdict.calls {
        Some(calls) => format!("{}{set_aside}", calls.show()),
        None if verdict.set_aside > 0 => format!("– (no seed with a whole baseline){set_aside}"),
        None => "– (no seed delivered on both)".into(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Calls, DraftFact, DraftOutcome, MessageFact, Metrics, PtyBytes};

    fn facts(arm: &str, seed: u64, outcome: Outcome, metrics: Option<Metrics>) -> TrialFacts {
        TrialFacts {
            harness: "h".into(),
            row: 5,
            row_slug: "draft".into(),
            arm: arm.into(),
            trial: 0,
            seed,
            outcome,
            metrics,
            records: None,
            notes: Vec::new(),
            ended: Vec::new(),
            left_alive: Vec::new(),
            evidence_dir: String::new(),
            scratch_dir: String::new(),
            duration_ms: 1,
        }
    }

    fn metrics(turn_calls: usize, corrupted: bool) -> Metrics {
        Metrics {
            messages: vec![MessageFact {
                name: "a.md".into(),
                sent_ms: 0,
                delivered: true,
                latency_ms: Some(300),
                first_seq: Some(1),
                late: false,
                archived: false,
                injections: 1,
            }],
            drafts: vec![DraftFact {
                text: "fix it".into(),
                outcome: if corrupted {
                    DraftOutcome::Altered
                } else {
                    DraftOutcome::Exact
                },
                corrupted,
                pieces: Vec::new(),
            }],
            calls: Calls {
                turn_calls,
                delivery_calls: 1,
                ..Calls::default()
            },
            pty: PtyBytes {
                delivery_writes: 1,
                delivery_bytes: 200,
                ..PtyBytes::default()
            },
            delivered: 1,
            typed: 1,
            drafts_corrupted: usize::from(corrupted),
            ..Metrics::default()
        }
    }

    fn meta() -> Meta {
        Meta {
            date: "2026-12-01".into(),
            commit: "abc".into(),
            harnesses: vec![HarnessInfo {
                name: "h".into(),
                version: "1.0".into(),
            }],
            seed: 7,
            trials_per_row: 1,
            duration_ms: 60_000,
        }
    }

    #[test]
    fn an_unavailable_careful_arm_is_said_plainly_and_claims_nothing() {
        let trials = vec![
            facts("aggressive", 7, Outcome::Ran, Some(metrics(1, true))),
            facts(
                "careful",
                7,
                Outcome::NotRun("careful arm: not available (no adapter)".into()),
                None,
            ),
        ];
        let report = build(meta(), trials);
        let text = markdown(&report);
        assert!(
            text.contains("| 5 draft | careful | 1 | careful arm: not available (no adapter) |"),
            "{text}"
        );
        assert!(
            text.contains("| 5 draft | aggressive | 1 | 1/1 | 0.30 s / 0.30 s | 1/1 | 0/0 | 1 (0) | 1 | baseline | 200 | 0 |"),
            "{text}"
        );
        assert!(
            text.contains(
                "no comparison: careful arm: not available (no adapter); no benefit is claimed"
            ),
            "{text}"
        );
    }

    fn on_seed(mut trial: TrialFacts, index: u32) -> TrialFacts {
        trial.trial = index;
        trial.seed = 7 + u64::from(index);
        trial
    }

    #[test]
    fn extra_calls_compare_the_same_seed_and_one_pair_decides_nothing() {
        let trials = vec![
            facts("aggressive", 7, Outcome::Ran, Some(metrics(1, false))),
            facts("careful", 7, Outcome::Ran, Some(metrics(2, false))),
        ];
        let report = build(meta(), trials);
        let careful = report
            .cells
            .iter()
            .find(|c| c.arm == "careful")
            .expect("careful cell");
        assert_eq!(careful.extra_calls, Some(1));
        let text = markdown(&report);
        assert!(
            text.contains("cannot tell: more model calls per delivered message on some seed: +1.00 over 1 pair"),
            "{text}"
        );
        // One seed compared; on the other the aggressive arm glued its
        // notice onto the draft, and that seed is set aside.
        let fair = vec![
            facts("aggressive", 7, Outcome::Ran, Some(metrics(1, false))),
            facts("careful", 7, Outcome::Ran, Some(metrics(1, false))),
            on_seed(
                facts("aggressive", 0, Outcome::Ran, Some(metrics(1, true))),
                1,
            ),
            on_seed(
                facts("careful", 0, Outcome::Ran, Some(metrics(1, false))),
                1,
            ),
        ];
        let text = markdown(&build(meta(), fair));
        assert!(text.contains("| h | 5 draft | 2/2 (95%: 34–100%) / 2/2 (95%: 34–100%) | 0/2 (95%: 0–66%) | 0/0 | +0.00 over 1 pair (1 seed(s) set aside: the aggressive arm corrupted the person's input) | meets the done condition |"), "{text}");
        assert!(text.contains("**meets the done condition**"), "{text}");
        // Calls the aggressive arm saved by losing the message are no
        // economy: per delivered message there is nothing to compare.
        let mut lost = metrics(1, true);
        lost.delivered = 0;
        lost.messages[0].delivered = false;
        lost.lost = 1;
        let baseline_lost = vec![
            facts("aggressive", 7, Outcome::Ran, Some(lost)),
            facts("careful", 7, Outcome::Ran, Some(metrics(3, false))),
        ];
        let report = build(meta(), baseline_lost);
        let careful = report.cells.iter().find(|c| c.arm == "careful").unwrap();
        assert_eq!(careful.extra_calls, Some(2));
        let text = markdown(&report);
        assert!(
            text.contains("cannot tell: no seed delivered on both arms"),
            "{text}"
        );
    }

    #[test]
    fn more_calls_on_every_seed_fail_and_mixed_seeds_cannot_tell() {
        let run = |careful_calls: &[usize]| {
            // A last seed where the aggressive arm corrupted the draft:
            // the collision the harness's verdict asks of the baseline,
            // set aside from the calls.
            let mut trials = vec![
                on_seed(
                    facts("aggressive", 0, Outcome::Ran, Some(metrics(1, true))),
                    99,
                ),
                on_seed(
                    facts("careful", 0, Outcome::Ran, Some(metrics(5, false))),
                    99,
                ),
            ];
            for (index, calls) in careful_calls.iter().enumerate() {
                let index = index as u32;
                trials.push(on_seed(
                    facts("aggressive", 0, Outcome::Ran, Some(metrics(1, false))),
                    index,
                ));
                trials.push(on_seed(
                    facts("careful", 0, Outcome::Ran, Some(metrics(*calls, false))),
                    index,
                ));
            }
            markdown(&build(meta(), trials))
        };
        let text = run(&[2, 2, 2, 2, 2]);
        assert!(
            text.contains("does not meet it: more model calls per delivered message: +1.00 over 5 pairs (95%: +1.00 to +1.00)"),
            "{text}"
        );
        assert!(text.contains("**does not meet it: row 5 fail**"), "{text}");
        let text = run(&[1, 2, 1, 1, 1]);
        assert!(
            text.contains("cannot tell: more model calls per delivered message on some seed: +0.20 over 5 pairs (95%: -0.36 to +0.76)"),
            "{text}"
        );
        assert!(
            text.contains(
                "**cannot tell: row 5 undecided (each row says what its counts could not decide)**"
            ),
            "{text}"
        );
        let text = run(&[1, 1, 1, 1, 1]);
        assert!(text.contains("**meets the done condition**"), "{text}");
    }

    /// Row 12 of one harness in the 10-trial run of 2026-12-05: the aggressive
    /// arm's notice landed in the composer with the supervisor's
    /// intervention, one request carried both (1 call), and the
    /// intervention never reached the model as typed; the careful arm left
    /// it whole and paid a turn of its own for the message (2 calls). The
    /// rule then failed the row for "+1.00 more calls"; rows 9 and 10 were
    /// "not compared" because the aggressive arm's notice broke a
    /// person's `/compact` on some seeds.
    #[test]
    fn calls_saved_by_corrupting_the_persons_input_are_no_price_to_match() {
        let intervention = |exact: bool, calls: usize| {
            let mut m = metrics(calls, false);
            m.drafts.clear();
            m.typed = 0;
            m.interventions = vec![crate::evidence::InterventionFact {
                text: "stop and summarise".into(),
                reached_exactly: exact,
            }];
            m
        };
        let glued = vec![
            facts("aggressive", 7, Outcome::Ran, Some(intervention(false, 1))),
            facts("careful", 7, Outcome::Ran, Some(intervention(true, 2))),
        ];
        let text = markdown(&build(meta(), glued));
        assert!(
            text.contains("| – (no seed with a whole baseline) (1 seed(s) set aside: the aggressive arm corrupted the person's input) | cannot tell: on each of the 1 seed(s) delivered on both arms the aggressive arm corrupted the person's input"),
            "{text}"
        );
        assert!(!text.contains("more model calls"), "{text}");
        // The same seeds with the intervention whole on both arms: the
        // careful arm's extra call counts.
        let whole = vec![
            facts("aggressive", 7, Outcome::Ran, Some(intervention(true, 1))),
            facts("careful", 7, Outcome::Ran, Some(intervention(true, 2))),
        ];
        let text = markdown(&build(meta(), whole));
        assert!(
            text.contains("more model calls per delivered message on some seed: +1.00 over 1 pair"),
            "{text}"
        );
        // A `/compact` the aggressive arm's notice broke on one seed: that
        // seed is set aside, the row is compared on the other.
        let compact = |took_effect: Option<bool>| {
            let mut m = metrics(1, false);
            m.commands = vec![crate::evidence::CommandFact {
                text: "/compact".into(),
                took_effect,
            }];
            m.drafts_corrupted = usize::from(took_effect == Some(false));
            m
        };
        let broken = vec![
            facts("aggressive", 7, Outcome::Ran, Some(compact(Some(false)))),
            facts("careful", 7, Outcome::Ran, Some(compact(Some(true)))),
            on_seed(
                facts("aggressive", 0, Outcome::Ran, Some(compact(Some(true)))),
                1,
            ),
            on_seed(
                facts("careful", 0, Outcome::Ran, Some(compact(Some(true)))),
                1,
            ),
        ];
        let text = markdown(&build(meta(), broken));
        assert!(
            text.contains("| +0.00 over 1 pair (1 seed(s) set aside: the aggressive arm corrupted the person's input) | meets the done condition |"),
            "{text}"
        );
    }

    #[test]
    fn a_careful_trial_not_driven_to_its_end_fails_the_verdict() {
        let mut lost = metrics(1, false);
        lost.delivered = 0;
        lost.messages[0].delivered = false;
        lost.lost = 1;
        let trials = vec![
            facts("aggressive", 7, Outcome::Ran, Some(metrics(1, true))),
            facts(
                "careful",
                7,
                Outcome::Error("the harness never came back".into()),
                Some(lost),
            ),
        ];
        let text = markdown(&build(meta(), trials));
        assert!(
            text.contains("| h | 5 draft | 0/1 (95%: 0–79%) / 1/1 (95%: 21–100%) |")
                && text.contains(
                    "does not meet it: 1 message(s) lost; 1 careful trial(s) not driven to the end"
                ),
            "{text}"
        );
    }

    /// The holes of issue 21: an aggressive trial that errored is never
    /// dropped from the comparison, a `/clear` or `/compact` without a
    /// sure effect fails its trial, a supervisor intervention that did not
    /// reach the model exactly and a duplicate fail the row, and what DING
    /// wrote is shown even when nothing was delivered.
    #[test]
    fn an_errored_baseline_an_unsure_command_an_inexact_intervention_and_a_duplicate_fail_visibly()
    {
        let errored = vec![
            facts(
                "aggressive",
                7,
                Outcome::Error("the pane hung".into()),
                Some(metrics(1, true)),
            ),
            facts("careful", 7, Outcome::Ran, Some(metrics(1, false))),
        ];
        let text = markdown(&build(meta(), errored));
        assert!(
            text.contains(
                "does not meet it: not compared: 1 aggressive trial(s) not driven to the end"
            ),
            "{text}"
        );
        let mut unsure = metrics(1, false);
        unsure.commands = vec![crate::evidence::CommandFact {
            text: "/clear".into(),
            took_effect: None,
        }];
        let text = markdown(&build(
            meta(),
            vec![
                facts("aggressive", 7, Outcome::Ran, Some(metrics(1, true))),
                facts("careful", 7, Outcome::Ran, Some(unsure)),
            ],
        ));
        assert!(
            text.contains("1 careful /clear or /compact without a sure effect"),
            "{text}"
        );
        let mut inexact = metrics(1, false);
        inexact.duplicates = 1;
        inexact.interventions = vec![crate::evidence::InterventionFact {
            text: "stop".into(),
            reached_exactly: false,
        }];
        let text = markdown(&build(
            meta(),
            vec![
                facts("aggressive", 7, Outcome::Ran, Some(metrics(1, true))),
                facts("careful", 7, Outcome::Ran, Some(inexact)),
            ],
        ));
        assert!(
            text.contains("1 duplicate delivery(ies)")
                && text.contains("1 intervention(s) not reaching the model exactly"),
            "{text}"
        );
        let mut wrote = metrics(1, false);
        wrote.delivered = 0;
        wrote.messages[0].delivered = false;
        wrote.lost = 1;
        let text = markdown(&build(
            meta(),
            vec![
                facts("aggressive", 7, Outcome::Ran, Some(metrics(1, true))),
                facts("careful", 7, Outcome::Ran, Some(wrote)),
            ],
        ));
        assert!(text.contains("| 200 written, 0 delivered |"), "{text}");
    }

    #[test]
    fn dates_are_civil_utc_days() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(1_796_115_422_269), "2026-12-01");
        assert_eq!(date_of(951_782_400_000), "2000-02-29");
    }
}
