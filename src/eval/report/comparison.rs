//! Careful against aggressive: the verdict of each row compared and of
//! each harness, as a table.

use std::fmt::Write as _;

use crate::arm::Arm;
use crate::cell::Cell;
use crate::confidence::Rate;
use crate::verdict::{Collisions, RowVerdict, harness_conclusion, row_verdict};

use super::format::row_name;
use super::summary::Report;

/// The design's done condition, row by row and per harness
/// (`verdict`): rates with their 95% intervals, the careful arm's extra
/// model calls per delivered message seed by seed, and what the counts
/// cannot decide said as such. Per harness the careful arm must also
/// collide strictly less than the aggressive arm (drafts corrupted and
/// dialogs answered, over the rows compared).
pub(super) fn comparison(out: &mut String, report: &Report) {
    let _ = writeln!(out, "\n## Careful against aggressive\n");
    let _ = writeln!(
        out,
        "Rates with their 95% Wilson intervals. Model calls: the careful arm's, the fewest a person who knew every arrival would need on the same trials' timelines (their own work's calls, and the fewest beyond that carry every message), and the aggressive arm's on the same seeds. Each careful trial's calls per delivered message are held to the fewest per message, or to the aggressive arm's on the same seed where that trial left the person's input whole (calls it saved by gluing its notice onto a person's line are no price to match; such seeds are counted as set aside), whichever is larger: over the bar, the mean and its 95% t interval. A row meets the done condition only if every trial does.\n"
    );
    let _ = writeln!(
        out,
        "| harness | row | delivered (careful / aggressive) | drafts corrupted (careful) | dialogs answered by DING (careful) | model calls: careful / fewest / aggressive | calls per delivered over the bar | verdict |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
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
                "| {} | {} | {} / {} | {} | {} | {} | {} | {} |",
                harness.name,
                row_name(verdict.row),
                verdict.delivered.0.show(),
                verdict.delivered.1.show(),
                verdict.drafts_corrupted.show(),
                verdict.dialogs_answered.show(),
                calls_against(verdict),
                over_the_bar(verdict),
                verdict.conclusion.show(),
            );
        }
        let collisions = Collisions::of(&compared);
        let overall = harness_conclusion(&verdicts, collisions);
        let pooled = |count: fn(&Cell) -> (usize, usize)| {
            let (hit, of) = compared.iter().fold((0, 0), |(hit, of), (cell, _)| {
                let (h, o) = count(cell);
                (hit + h, of + o)
            });
            Rate::new(hit, of).show()
        };
        let _ = writeln!(
            out,
            "| {} | all {} compared, pooled | {} (aggressive {}) collisions | {} | {} | | | **{}** |",
            harness.name,
            verdicts.len(),
            collisions.careful,
            collisions.aggressive,
            pooled(|cell| (cell.drafts_corrupted, cell.drafts)),
            pooled(|cell| (cell.dialogs_answered_by_ding, cell.dialogs)),
            overall.show(),
        );
    }
}

/// The row's model calls: careful, the fewest, aggressive.
fn calls_against(verdict: &RowVerdict) -> String {
    let calls = verdict.calls;
    let aggressive = calls
        .aggressive
        .map_or_else(|| "–".to_string(), |n| n.to_string());
    format!("{} / {} / {aggressive}", calls.careful, calls.fewest)
}

/// How far over its bar the careful arm was, trial by trial, and the seeds
/// whose bar is the fewest calls alone.
fn over_the_bar(verdict: &RowVerdict) -> String {
    let set_aside = match verdict.set_aside {
        0 => String::new(),
        n => format!(" ({n} seed(s) set aside: the aggressive arm corrupted the person's input)"),
    };
    match &verdict.over_the_bar {
        Some(over) => format!(
            "{} trial(s) over; mean {}{set_aside}",
            verdict.trials_over.show(),
            over.show(),
        ),
        None => format!("– (no trial delivered){set_aside}"),
    }
}
