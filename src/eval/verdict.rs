//! The design's done condition, row by row, decided on the trials' counts
//! and how sure they let us be (`confidence`), and then per harness.
//!
//! A row of the careful arm meets it when, in every trial, no message was
//! lost, no draft corrupted, no dialog answered by DING, no duplicate
//! delivered, every supervisor intervention reached the model exactly,
//! every trial was driven to its end and every `/clear` or `/compact`
//! surely took effect; when it delivered at least what the aggressive arm
//! did; and when on no seed it made more model calls per delivered message
//! than the aggressive arm on the same seed. A row the counts cannot decide
//! says so, with the interval that could not: its delivery fell short of
//! the aggressive arm's within the intervals, or its extra calls per
//! delivered message have an interval that holds 0. A row whose aggressive
//! trials could not all be driven to their end is not compared, and fails
//! visibly: its baseline is unknown.
//!
//! The price to match is what the aggressive default pays for a delivery
//! the done condition accepts. On a seed where its trial corrupted the
//! person's input (a draft altered, a `/clear` or `/compact` that did not
//! surely take effect, a supervisor's intervention that did not reach the
//! model exactly, a dialog it answered), the calls it saved were saved by
//! that corruption: its notice rode the person's line into one request,
//! which no policy that leaves the line whole can do. Such a seed is set
//! aside from the comparison of calls, counted and shown beside it; the
//! aggressive arm's failure stays in its own columns. A row with no seed
//! left says it cannot tell.

use super::arm::Arm;
use super::cell::Cell;
use super::confidence::{PairedDifference, Rate};
use super::evidence::Metrics;
use super::trial::{Outcome, TrialFacts};

/// What the counts of a row (or a harness) allow us to say.
#[derive(Clone, Debug, PartialEq)]
pub enum Conclusion {
    Meets,
    /// Nothing failed for sure, but these could not be decided.
    CannotTell(Vec<String>),
    /// These failed (and any undecided are listed after them).
    Fails(Vec<String>),
}

impl Conclusion {
    pub fn show(&self) -> String {
        match self {
            Conclusion::Meets => "meets the done condition".into(),
            Conclusion::CannotTell(why) => format!("cannot tell: {}", why.join("; ")),
            Conclusion::Fails(why) => format!("does not meet it: {}", why.join("; ")),
        }
    }
}

/// One row of one harness, careful against aggressive.
#[derive(Clone, Debug, PartialEq)]
pub struct RowVerdict {
    pub row: u32,
    /// Messages delivered of those sent, careful and aggressive.
    pub delivered: (Rate, Rate),
    /// The careful arm's drafts corrupted of those typed, and dialogs it
    /// answered of those drawn.
    pub drafts_corrupted: Rate,
    pub dialogs_answered: Rate,
    /// Careful minus aggressive model calls per delivered message, seed by
    /// seed, over the seeds where both delivered and the aggressive arm
    /// left the person's input whole.
    pub calls: Option<PairedDifference>,
    /// Seeds where both delivered but the aggressive arm corrupted the
    /// person's input: set aside from `calls`.
    pub set_aside: usize,
    pub conclusion: Conclusion,
}

/// The verdict of one row: `careful` and `aggressive` are its cells,
/// `trials` every trial of the run.
pub fn row_verdict(careful: &Cell, aggressive: Option<&Cell>, trials: &[TrialFacts]) -> RowVerdict {
    let zero = Rate::new(0, 0);
    let delivered = (
        Rate::new(careful.delivered, careful.sent),
        aggressive.map_or(zero, |a| Rate::new(a.delivered, a.sent)),
    );
    let pairs = paired_calls(trials, careful);
    let calls = PairedDifference::of(&pairs.whole_baseline);
    let mut failed = Vec::new();
    let mut undecided = Vec::new();
    let careful_fails = [
        (careful.lost, "message(s) lost"),
        (careful.drafts_corrupted, "draft(s) corrupted"),
        (
            careful.dialogs_answered_by_ding,
            "dialog(s) answered by DING",
        ),
        (careful.duplicates, "duplicate delivery(ies)"),
        (
            careful.interventions - careful.interventions_exact,
            "intervention(s) not reaching the model exactly",
        ),
        (
            careful.errors.len(),
            "careful trial(s) not driven to the end",
        ),
        (
            careful.commands_without_effect,
            "careful /clear or /compact without a sure effect (a failed trial)",
        ),
    ];
    for (count, what) in careful_fails {
        if count > 0 {
            failed.push(format!("{count} {what}"));
        }
    }
    match aggressive {
        None => failed.push("no aggressive trial to compare with".into()),
        Some(a) if !a.errors.is_empty() => failed.push(format!(
            "not compared: {} aggressive trial(s) not driven to the end",
            a.errors.len(),
        )),
        Some(_) => {
            let (ours, theirs) = delivered;
            if ours.value() < theirs.value() {
                let said = format!(
                    "delivered {} against the aggressive arm's {}",
                    ours.show(),
                    theirs.show()
                );
                if ours.surely_below(theirs) {
                    failed.push(said);
                } else {
                    undecided.push(format!("{said}: the intervals overlap"));
                }
            }
            match &calls {
                None if pairs.set_aside > 0 => undecided.push(format!(
                    "on each of the {} seed(s) delivered on both arms the aggressive arm corrupted the person's input: no price to match, calls per delivered message not compared (more trials decide it only where the aggressive arm leaves the input whole)",
                    pairs.set_aside
                )),
                None if careful.delivered > 0 => undecided.push(
                    "no seed delivered on both arms: calls per delivered message not compared"
                        .into(),
                ),
                None => {}
                Some(calls) if calls.max <= 1e-9 => {}
                Some(calls) if calls.interval.is_some_and(|(low, _)| low > 1e-9) => failed
                    .push(format!(
                        "more model calls per delivered message: {}",
                        calls.show()
                    )),
                Some(calls) => undecided.push(format!(
                    "more model calls per delivered message on some seed: {}",
                    calls.show()
                )),
            }
        }
    }
    let conclusion = match (failed.is_empty(), undecided.is_empty()) {
        (true, true) => Conclusion::Meets,
        (true, false) => Conclusion::CannotTell(undecided),
        (false, _) => Conclusion::Fails(failed.into_iter().chain(undecided).collect()),
    };
    RowVerdict {
        row: careful.row,
        delivered,
        drafts_corrupted: Rate::new(careful.drafts_corrupted, careful.drafts),
        dialogs_answered: Rate::new(careful.dialogs_answered_by_ding, careful.dialogs),
        calls,
        set_aside: pairs.set_aside,
        conclusion,
    }
}

/// The seeds compared for model calls, and those set aside.
struct PairedCalls {
    /// Careful minus aggressive calls per delivered message, one per seed
    /// both arms ran to the end, both delivered on, and the aggressive arm
    /// left the person's input whole on.
    whole_baseline: Vec<f64>,
    /// Seeds both delivered on where the aggressive arm corrupted it.
    set_aside: usize,
}

/// Careful minus aggressive model calls per delivered message, for each
/// seed of `careful`'s harness and row that both arms ran to the end and
/// on which both delivered; set apart where the aggressive arm's trial
/// corrupted the person's input.
fn paired_calls(trials: &[TrialFacts], careful: &Cell) -> PairedCalls {
    let delivered_on = |arm: Arm, seed: u64| {
        trials
            .iter()
            .find(|t| {
                t.harness == careful.harness
                    && t.row == careful.row
                    && t.arm == arm.as_str()
                    && t.seed == seed
                    && t.outcome == Outcome::Ran
            })
            .and_then(|t| t.metrics.as_ref())
            .filter(|m| m.delivered > 0)
    };
    let per_delivered = |m: &Metrics| m.calls.turn_calls as f64 / m.delivered as f64;
    let mut pairs = PairedCalls {
        whole_baseline: Vec::new(),
        set_aside: 0,
    };
    let careful_trials = trials.iter().filter(|t| {
        t.harness == careful.harness && t.row == careful.row && t.arm == Arm::Careful.as_str()
    });
    for trial in careful_trials {
        let (Some(ours), Some(theirs)) = (
            delivered_on(Arm::Careful, trial.seed),
            delivered_on(Arm::Aggressive, trial.seed),
        ) else {
            continue;
        };
        if left_input_whole(theirs) {
            pairs
                .whole_baseline
                .push(per_delivered(ours) - per_delivered(theirs));
        } else {
            pairs.set_aside += 1;
        }
    }
    pairs
}

/// Whether a trial left every line the person (or supervisor) typed as
/// they typed it and answered no dialog: no draft altered, every command
/// surely taking effect, every intervention reaching the model exactly.
fn left_input_whole(m: &Metrics) -> bool {
    m.drafts_corrupted == 0
        && m.dialogs_answered_by_ding == 0
        && m.commands.iter().all(|c| c.took_effect == Some(true))
        && m.interventions.iter().all(|i| i.reached_exactly)
}

/// Drafts corrupted plus dialogs answered by DING over the rows compared,
/// careful and aggressive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collisions {
    pub careful: usize,
    pub aggressive: usize,
}

impl Collisions {
    /// Of the careful cells compared and their aggressive cells.
    pub fn of(compared: &[(&Cell, Option<&Cell>)]) -> Collisions {
        let of = |cell: &Cell| cell.drafts_corrupted + cell.dialogs_answered_by_ding;
        Collisions {
            careful: compared.iter().map(|(c, _)| of(c)).sum(),
            aggressive: compared.iter().filter_map(|(_, a)| a.map(of)).sum(),
        }
    }
}

/// A harness's conclusion from its rows: fails if a row fails, or if the
/// careful arm collided and not strictly less than the aggressive arm
/// (none against none is no failure: the rows compared gave neither arm a
/// chance to collide); cannot tell if a row cannot; meets only if every
/// row meets (and there is one).
pub fn harness_conclusion(rows: &[RowVerdict], collisions: Collisions) -> Conclusion {
    let overall = rows_conclusion(rows);
    if collisions.careful == 0 || collisions.careful < collisions.aggressive {
        return overall;
    }
    let why = format!(
        "not strictly fewer collisions than aggressive ({} against {})",
        collisions.careful, collisions.aggressive
    );
    match overall {
        Conclusion::Fails(mut list) => {
            list.push(why);
            Conclusion::Fails(list)
        }
        Conclusion::CannotTell(list) => {
            Conclusion::Fails(std::iter::once(why).chain(list).collect())
        }
        Conclusion::Meets => Conclusion::Fails(vec![why]),
    }
}

fn rows_conclusion(rows: &[RowVerdict]) -> Conclusion {
    if rows.is_empty() {
        return Conclusion::CannotTell(vec!["no row was compared".into()]);
    }
    let listed = |pick: fn(&Conclusion) -> bool| -> Vec<String> {
        rows.iter()
            .filter(|row| pick(&row.conclusion))
            .map(|row| format!("row {}", row.row))
            .collect()
    };
    let failed = listed(|c| matches!(c, Conclusion::Fails(_)));
    let undecided = listed(|c| matches!(c, Conclusion::CannotTell(_)));
    if !failed.is_empty() {
        let mut why = vec![format!("{} fail", failed.join(", "))];
        if !undecided.is_empty() {
            why.push(format!("{} undecided", undecided.join(", ")));
        }
        Conclusion::Fails(why)
    } else if !undecided.is_empty() {
        Conclusion::CannotTell(vec![format!(
            "{} undecided (each row says what its counts could not decide)",
            undecided.join(", ")
        )])
    } else {
        Conclusion::Meets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collisions(careful: usize, aggressive: usize) -> Collisions {
        Collisions {
            careful,
            aggressive,
        }
    }

    #[test]
    fn no_collision_in_either_arm_is_no_failure_of_the_harness() {
        assert_eq!(
            harness_conclusion(&[], collisions(0, 0)),
            rows_conclusion(&[])
        );
    }

    #[test]
    fn a_careful_collision_fails_unless_strictly_fewer_than_aggressive() {
        let fails = |c: Conclusion| matches!(c, Conclusion::Fails(_));
        assert!(fails(harness_conclusion(&[], collisions(1, 1))));
        assert!(fails(harness_conclusion(&[], collisions(2, 0))));
        assert!(!fails(harness_conclusion(&[], collisions(1, 3))));
    }
}
