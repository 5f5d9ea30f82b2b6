//! Careful against aggressive: the verdict of each row compared and of
//! each harness, as a table.

use std::fmt::Write as _;

use crate::arm::Arm;
use crate::cell::Cell;
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
