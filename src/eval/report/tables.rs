//! The report as Markdown: per harness the matrix table, the supervisor
//! intervention apart, and the notes; then the comparison of the arms.

use std::fmt::Write as _;

use crate::cell::Cell;
use crate::row::Row;

use super::comparison::comparison;
use super::format::{bytes_per_delivered, ratio, row_name, seconds};
use super::summary::Report;

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
