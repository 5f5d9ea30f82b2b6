use super::*;
use crate::evidence::{Calls, DraftFact, DraftOutcome, MessageFact, Metrics, PtyBytes};
use crate::trial::{Outcome, TrialFacts};

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

/// One message, delivered with `turn_calls` model calls, where the
/// fewest a person would need is one.
fn metrics(turn_calls: usize, corrupted: bool) -> Metrics {
    let mut m = Metrics {
        messages: vec![MessageFact {
            name: "a.md".into(),
            sent_ms: 0,
            delivered: true,
            latency_ms: Some(300),
            first_seq: Some(1),
            garbled: false,
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
    };
    m.fewest_calls.extra = 1;
    m
}

/// The same, where the person's own work needs `own` calls besides.
fn with_own_calls(mut m: Metrics, own: usize) -> Metrics {
    m.fewest_calls.own = own;
    m
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
fn each_careful_trial_is_held_to_the_fewest_calls_or_the_aggressive_arms_whichever_is_more() {
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
        text.contains("| 2 / 1 / 1 | 1/1 (95%: 21–100%) trial(s) over; mean +1.00 over 1 pair | does not meet it: 1 of 1 trial(s) made more model calls per delivered message than the fewest a person would need (or the aggressive arm's, if more): +1.00 over 1 pair |"),
        "{text}"
    );
    // Where the person's own work needed a call besides, two are the bar.
    let own_work = vec![
        facts("aggressive", 7, Outcome::Ran, Some(metrics(1, false))),
        facts(
            "careful",
            7,
            Outcome::Ran,
            Some(with_own_calls(metrics(2, false), 1)),
        ),
    ];
    let text = markdown(&build(meta(), own_work));
    assert!(
        text.contains("| 2 / 2 / 1 | 0/1 (95%: 0–79%) trial(s) over; mean +0.00 over 1 pair |"),
        "{text}"
    );
    assert!(text.contains("**meets the done condition**"), "{text}");
    // The aggressive arm's calls are the bar where they are more: on the
    // other seed it glued its notice onto the draft, and that seed is
    // held to the fewest alone.
    let fair = vec![
        facts("aggressive", 7, Outcome::Ran, Some(metrics(2, false))),
        facts("careful", 7, Outcome::Ran, Some(metrics(2, false))),
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
    assert!(text.contains("| h | 5 draft | 2/2 (95%: 34–100%) / 2/2 (95%: 34–100%) | 0/2 (95%: 0–66%) | 0/0 | 3 / 2 / 3 | 0/2 (95%: 0–66%) trial(s) over; mean +0.00 over 2 pairs (95%: +0.00 to +0.00) (1 seed(s) set aside: the aggressive arm corrupted the person's input) | meets the done condition |"), "{text}");
    // Where the aggressive arm lost the message, the fewest calls decide
    // alone: the row is decided all the same.
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
        text.contains("does not meet it: 1 of 1 trial(s) made more model calls per delivered message than the fewest a person would need (or the aggressive arm's, if more): +2.00 over 1 pair"),
        "{text}"
    );
    assert!(!text.contains("cannot tell"), "{text}");
}

#[test]
fn a_row_fails_when_any_trial_is_over_its_bar() {
    let run = |careful_calls: &[usize]| {
        // A last seed where the aggressive arm corrupted the draft:
        // the collision the harness's verdict asks of the baseline,
        // held to the fewest calls alone.
        let mut trials = vec![
            on_seed(
                facts("aggressive", 0, Outcome::Ran, Some(metrics(1, true))),
                99,
            ),
            on_seed(
                facts("careful", 0, Outcome::Ran, Some(metrics(1, false))),
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
        text.contains("does not meet it: 5 of 6 trial(s) made more model calls per delivered message than the fewest a person would need (or the aggressive arm's, if more): +0.83 over 6 pairs (95%: +0.40 to +1.26)"),
        "{text}"
    );
    assert!(text.contains("**does not meet it: row 5 fail**"), "{text}");
    let text = run(&[1, 2, 1, 1, 1]);
    assert!(text.contains("does not meet it: 1 of 6 trial(s)"), "{text}");
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
/// person's `/compact` on some seeds. The fewest calls a person would
/// need there are two: the intervention's, and one for the message.
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
        with_own_calls(m, 1)
    };
    let glued = vec![
        facts("aggressive", 7, Outcome::Ran, Some(intervention(false, 1))),
        facts("careful", 7, Outcome::Ran, Some(intervention(true, 2))),
    ];
    let text = markdown(&build(meta(), glued));
    assert!(
        text.contains("| 2 / 2 / 1 | 0/1 (95%: 0–79%) trial(s) over; mean +0.00 over 1 pair (1 seed(s) set aside: the aggressive arm corrupted the person's input) | meets the done condition |"),
        "{text}"
    );
    // Three calls where two do: over the bar.
    let wasteful = vec![
        facts("aggressive", 7, Outcome::Ran, Some(intervention(false, 1))),
        facts("careful", 7, Outcome::Ran, Some(intervention(true, 3))),
    ];
    let text = markdown(&build(meta(), wasteful));
    assert!(text.contains("does not meet it: 1 of 1 trial(s)"), "{text}");
    // A `/compact` the aggressive arm's notice broke on one seed: that
    // seed is held to the fewest calls, the other to the aggressive
    // arm's.
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
        text.contains("(1 seed(s) set aside: the aggressive arm corrupted the person's input) | meets the done condition |"),
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

/// The holes of issue 21: an aggressive trial that errored leaves its seed
/// to the fewest calls, and a row it might have decided otherwise cannot
/// tell; a `/clear` or `/compact` without a
/// sure effect fails its trial, a supervisor intervention that did not
/// reach the model exactly and a duplicate fail the row, and what DING
/// wrote is shown even when nothing was delivered.
#[test]
fn an_errored_baseline_an_unsure_command_an_inexact_intervention_and_a_duplicate_fail_visibly() {
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
    assert!(text.contains("meets the done condition"), "{text}");
    // Over the fewest calls on that seed: the aggressive arm's calls,
    // unknown, could have been the bar, and the row says so.
    let errored_and_over = vec![
        facts(
            "aggressive",
            7,
            Outcome::Error("the pane hung".into()),
            Some(metrics(1, true)),
        ),
        facts("careful", 7, Outcome::Ran, Some(metrics(2, false))),
    ];
    let text = markdown(&build(meta(), errored_and_over));
    assert!(
        text.contains(
            "cannot tell: 1 trial(s) made more model calls per delivered message than the fewest a person would need, on seeds whose aggressive trial was not driven to its end"
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
