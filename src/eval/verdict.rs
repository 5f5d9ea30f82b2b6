//! The design's done condition, row by row, decided on the trials' counts
//! and how sure they let us be (`confidence`), and then per harness.
//!
//! A row of the careful arm meets it when, in every trial, no message was
//! lost, no draft corrupted, no dialog answered by DING, no duplicate
//! delivered, every supervisor intervention reached the model exactly,
//! every trial was driven to its end and every `/clear` or `/compact`
//! surely took effect; and when no trial made more model calls per
//! delivered message than its bar.
//!
//! A trial's bar is the fewest calls per message a person who knew every
//! arrival would need on that trial's own timeline (`evidence::fewest`),
//! or the aggressive arm's calls per delivered message on the same seed,
//! whichever is larger, where that trial ran to its end, delivered, and
//! left the person's input whole. On a seed where the aggressive arm
//! corrupted the person's input (a draft altered, a `/clear` or `/compact`
//! that did not surely take effect, a supervisor's intervention that did
//! not reach the model exactly, a dialog it answered), the calls it saved
//! were saved by that corruption: its notice rode the person's line into
//! one request, which no policy that leaves the line whole can do. Such a
//! seed's bar is the fewest calls alone, and it is counted as set aside.
//! So every row is decided on every trial; the counts say how sure.

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
    /// The model calls of the careful arm's trials, the fewest they would
    /// need, and the aggressive arm's calls on the same seeds.
    pub calls: CallsAgainst,
    /// The careful arm's calls per delivered message minus its bar, trial
    /// by trial.
    pub over_the_bar: Option<PairedDifference>,
    /// Trials whose calls per delivered message were over their bar.
    pub trials_over: Rate,
    /// Seeds whose aggressive trial corrupted the person's input: their
    /// bar is the fewest calls alone.
    pub set_aside: usize,
    pub conclusion: Conclusion,
}

/// Model calls over a row's careful trials that ran to their end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallsAgainst {
    pub careful: usize,
    pub fewest: usize,
    /// Over the same seeds' aggressive trials that ran to their end.
    pub aggressive: Option<usize>,
}

/// The verdict of one row: `careful` and `aggressive` are its cells,
/// `trials` every trial of the run.
pub fn row_verdict(careful: &Cell, aggressive: Option<&Cell>, trials: &[TrialFacts]) -> RowVerdict {
    let bars = against_the_bar(trials, careful);
    let over_the_bar = PairedDifference::of(&bars.over);
    let trials_over = Rate::new(
        bars.over.iter().filter(|over| **over > OVER).count(),
        bars.over.len(),
    );
    let mut failed = Vec::new();
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
    if trials_over.count > 0 {
        let by = over_the_bar
            .as_ref()
            .map_or_else(String::new, |d| format!(": {}", d.show()));
        failed.push(format!(
            "{} of {} trial(s) made more model calls per delivered message than the fewest a person would need (or the aggressive arm's, if more){by}",
            trials_over.count, trials_over.of
        ));
    }
    let mut undecided = Vec::new();
    if bars.over_without_baseline > 0 {
        undecided.push(format!(
            "{} trial(s) made more model calls per delivered message than the fewest a person would need, on seeds whose aggressive trial was not driven to its end (its calls could have been the bar)",
            bars.over_without_baseline
        ));
    }
    let conclusion = match (failed.is_empty(), undecided.is_empty()) {
        (true, true) => Conclusion::Meets,
        (true, false) => Conclusion::CannotTell(undecided),
        (false, _) => Conclusion::Fails(failed.into_iter().chain(undecided).collect()),
    };
    RowVerdict {
        row: careful.row,
        delivered: (
            Rate::new(careful.delivered, careful.sent),
            aggressive.map_or(Rate::new(0, 0), |a| Rate::new(a.delivered, a.sent)),
        ),
        drafts_corrupted: Rate::new(careful.drafts_corrupted, careful.drafts),
        dialogs_answered: Rate::new(careful.dialogs_answered_by_ding, careful.dialogs),
        calls: bars.calls,
        over_the_bar,
        trials_over,
        set_aside: bars.set_aside,
        conclusion,
    }
}

/// A difference of calls per message that is more than rounding.
const OVER: f64 = 1e-9;

/// Each careful trial's calls against its bar.
struct Bars {
    /// Careful calls per delivered message minus the bar, one per careful
    /// trial that ran to its end and had messages (those over the fewest
    /// on a seed whose aggressive trial erred are apart).
    over: Vec<f64>,
    /// Trials over the fewest calls on seeds whose aggressive trial was
    /// not driven to its end: its calls, unknown, could be their bar.
    over_without_baseline: usize,
    calls: CallsAgainst,
    /// Seeds whose aggressive trial corrupted the person's input.
    set_aside: usize,
}

/// The careful trials of `careful`'s harness and row, each against its bar:
/// the fewest calls per message on its own timeline, or the aggressive
/// trial's calls per delivered message on the same seed where that trial
/// ran to its end, delivered, and left the person's input whole, whichever
/// is larger.
fn against_the_bar(trials: &[TrialFacts], careful: &Cell) -> Bars {
    let ran = |arm: Arm, seed: u64| {
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
    };
    let erred = |seed: u64| {
        trials.iter().any(|t| {
            t.harness == careful.harness
                && t.row == careful.row
                && t.arm == Arm::Aggressive.as_str()
                && t.seed == seed
                && t.outcome != Outcome::Ran
        })
    };
    let mut bars = Bars {
        over: Vec::new(),
        over_without_baseline: 0,
        calls: CallsAgainst::default(),
        set_aside: 0,
    };
    let careful_trials = trials.iter().filter(|t| {
        t.harness == careful.harness && t.row == careful.row && t.arm == Arm::Careful.as_str()
    });
    for trial in careful_trials {
        let Some(ours) = ran(Arm::Careful, trial.seed) else {
            continue;
        };
        bars.calls.careful += ours.calls.turn_calls;
        bars.calls.fewest += ours.fewest_calls.total();
        let theirs = ran(Arm::Aggressive, trial.seed);
        if let Some(theirs) = theirs {
            *bars.calls.aggressive.get_or_insert(0) += theirs.calls.turn_calls;
        }
        let sent = ours.messages.len();
        if sent == 0 || ours.delivered == 0 {
            continue;
        }
        let fewest = ours.fewest_calls.total() as f64 / sent as f64;
        let baseline = match theirs.filter(|m| m.delivered > 0) {
            Some(m) if left_input_whole(m) => m.calls.turn_calls as f64 / m.delivered as f64,
            Some(_) => {
                bars.set_aside += 1;
                0.0
            }
            None => 0.0,
        };
        let per_delivered = ours.calls.turn_calls as f64 / ours.delivered as f64;
        let over = per_delivered - fewest.max(baseline);
        if over > OVER && erred(trial.seed) {
            bars.over_without_baseline += 1;
        } else {
            bars.over.push(over);
        }
    }
    bars
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
