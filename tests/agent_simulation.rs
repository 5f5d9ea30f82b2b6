//! Whole-agent simulation: the real engine, the real adapter machine and a
//! real provider, against a model of the harness and of a person, on one
//! simulated clock. What a real-pane trial finds in minutes, a seed finds
//! in milliseconds.
//!
//! The pieces, each the project's own code where it exists:
//!
//! * `ding::core::engine::Engine` under `turn-boundary+fresh-idle`;
//! * `ding::adapter::machine::Machine` with the demo provider;
//! * the harness: the real demo agent, drawn by its real renderer into the
//!   PTY host's real screen model (`agent_simulation/demo_harness.rs`),
//!   with input lag (a key reaches the agent, and moves the screen, some
//!   milliseconds after it was written) and hooks at turn start and end;
//! * a PTY host model: compare-and-send against the revision (which moves
//!   when the harness draws), one transaction at a time, a person's input
//!   queued behind it, pushes while the adapter watches;
//! * a person: drafts typed at any pace, left and finished, submitted,
//!   cleared; menus answered; quiet at the end;
//! * arrivals at any moment, bursts among them.
//!
//! After every step it checks:
//!
//! * **drafts**: no prompt the harness received joins a person's text and
//!   DING's notice;
//! * **dialogs**: DING's paste never reaches a menu, so its Return never
//!   answers one;
//! * **busy**: DING never types into a running turn;
//! * **hooks**: every hook call gets exactly one answer, before its
//!   timeout;
//! * **once**: no file reaches the model twice (hooked and typed, or typed
//!   twice);
//! * **liveness**: once the person is quiet and the harness idle, every
//!   file reaches the model within [`LIVENESS_BOUND_MS`];
//! * the same seed gives the same trace.
//!
//! Some races are known and open (issue 20, the input fence: a key the
//! harness has not drawn yet does not move the revision, so a
//! compare-and-send can pass on a screen older than the person's last
//! key). [`KNOWN_OPEN`] names their classes: the sweep counts them and
//! prints the first seed of each, and a test checks the simulation still
//! finds them, so the fence's fix will have a failing test to turn green.
//! Every other violation fails the sweep with its seed.
//!
//! Every real-pane failure the simulation can model is a named scenario
//! below (`real_pane_*`), found on a seed of the sweep and kept.
//!
//! `DING_AGENT_SIM_SEEDS=N` runs N seeds (default 10,000);
//! `DING_AGENT_SIM_SEED=S` runs one and prints its trace.

#[path = "agent_simulation/demo_harness.rs"]
mod demo_harness;
#[path = "agent_simulation/mutant.rs"]
mod mutant;
#[path = "agent_simulation/world.rs"]
mod world;

use mutant::Defect;
use world::{Class, Outcome, Scenario, run};

/// Once the person is quiet and the harness idle, every file reaches the
/// model within this.
pub const LIVENESS_BOUND_MS: u64 = 30_000;

/// The violation classes the simulation finds on today's code and that an
/// open issue fixes; each with that issue.
const KNOWN_OPEN: [(Class, &str); 1] = [(
    Class::Draft,
    "issue 20: a key not yet drawn leaves the revision where the snapshot saw it",
)];

fn seeds() -> u64 {
    std::env::var("DING_AGENT_SIM_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10_000)
}

fn is_known_open(class: Class) -> bool {
    KNOWN_OPEN.iter().any(|(known, _)| *known == class)
}

#[test]
fn random_whole_agent_runs_keep_every_invariant() {
    if let Some(seed) = std::env::var("DING_AGENT_SIM_SEED")
        .ok()
        .and_then(|text| text.parse::<u64>().ok())
    {
        let outcome = run(Scenario::random(seed));
        for line in &outcome.trace {
            eprintln!("{line}");
        }
        for violation in &outcome.violations {
            eprintln!("{violation}");
        }
        return;
    }
    let seeds = seeds();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    // Each thread runs every `threads`th seed; a failure names its seed.
    let sweeps: Vec<Sweep> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|first| scope.spawn(move || sweep((first..seeds).step_by(threads as usize))))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a sweep thread"))
            .collect()
    });
    let mut first_known: Vec<(Class, u64, usize)> = Vec::new();
    let (mut delivered, mut hooked) = (0, 0);
    for sweep in sweeps {
        if let Some((seed, violation)) = sweep.failure {
            panic!(
                "seed {seed}: {violation}\nreplay: DING_AGENT_SIM_SEED={seed} cargo test --test agent_simulation random_whole_agent_runs_keep_every_invariant -- --nocapture"
            );
        }
        delivered += sweep.delivered;
        hooked += sweep.hooked;
        for (class, seed, count) in sweep.known {
            match first_known.iter_mut().find(|(known, _, _)| *known == class) {
                Some(entry) => {
                    entry.1 = entry.1.min(seed);
                    entry.2 += count;
                }
                None => first_known.push((class, seed, count)),
            }
        }
    }
    for (class, seed, count) in &first_known {
        let why = KNOWN_OPEN
            .iter()
            .find(|(known, _)| known == class)
            .map(|(_, why)| *why)
            .unwrap_or_default();
        eprintln!("known open: {class:?} in {count} run(s), first seed {seed} ({why})");
    }
    // The sweep reached both delivery paths, in most seeds.
    assert!(delivered as u64 > seeds / 2, "files typed: {delivered}");
    assert!(
        hooked as u64 > seeds / 10,
        "files a hook injected: {hooked}"
    );
}

/// What one thread's seeds found.
#[derive(Default)]
struct Sweep {
    failure: Option<(u64, world::Violation)>,
    /// Known-open classes: the class, its first seed, how many runs.
    known: Vec<(Class, u64, usize)>,
    delivered: usize,
    hooked: usize,
}

fn sweep(seeds: impl Iterator<Item = u64>) -> Sweep {
    let mut found = Sweep::default();
    for seed in seeds {
        let outcome = run(Scenario::random(seed));
        found.delivered += outcome.delivered;
        found.hooked += outcome.hooked;
        for violation in outcome.violations {
            if !is_known_open(violation.class) {
                found.failure = Some((seed, violation));
                return found;
            }
            match found
                .known
                .iter_mut()
                .find(|(class, _, _)| *class == violation.class)
            {
                Some(entry) => entry.2 += 1,
                None => found.known.push((violation.class, seed, 1)),
            }
        }
    }
    found
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [1, 77, 4_242] {
        let first: Outcome = run(Scenario::random(seed));
        let second = run(Scenario::random(seed));
        assert_eq!(first.trace, second.trace, "seed {seed}");
    }
}

/// The simulation finds each known-open race: when the fence fixes it,
/// this test fails, and the class leaves [`KNOWN_OPEN`].
#[test]
fn the_known_open_races_are_still_found() {
    for (class, why) in KNOWN_OPEN {
        let found = (0..seeds().min(10_000)).find(|&seed| {
            run(Scenario::random(seed))
                .violations
                .iter()
                .any(|violation| violation.class == class)
        });
        assert!(
            found.is_some(),
            "{class:?} is no longer found ({why}): take it out of KNOWN_OPEN"
        );
    }
}

/// Real pane, Claude Code and Codex (issue 20's brief): a first key typed
/// 1 to 90 ms before DING typed was glued onto the notice. Here: the person
/// types `o` while a turn ends; the harness has not drawn it when the
/// adapter reads the idle screen, so the revision the compare-and-send
/// checks has not moved, and the notice lands after the `o`. Open until the
/// input fence (issue 20); this test then asserts the opposite.
#[test]
fn real_pane_a_first_key_just_before_ding_types_is_glued_onto_the_notice() {
    const SEED: u64 = 583;
    let outcome = run(Scenario::random(SEED));
    let glued = outcome
        .violations
        .iter()
        .find(|violation| violation.class == Class::Draft)
        .unwrap_or_else(|| {
            panic!(
                "seed {SEED} no longer glues a key: {:?}",
                outcome.violations
            )
        });
    assert!(glued.detail.contains("\"o\""), "{glued}");
    assert!(
        outcome
            .violations
            .iter()
            .all(|violation| is_known_open(violation.class)),
        "{:?}",
        outcome.violations
    );
}

/// Finds, for the mutation check, the first seed below `limit` on which
/// `defect` shows as `class`.
fn first_seed_catching(defect: Defect, class: Class, limit: u64) -> Option<u64> {
    (0..limit).find(|&seed| {
        run(Scenario::mutated(seed, defect))
            .violations
            .iter()
            .any(|violation| violation.class == class)
    })
}

/// The mutation check: each deliberate defect, with no input lag (so no
/// violation is the known-open race), is caught as its class by the seed
/// named here, and DING as it is passes those seeds. A defect the
/// simulation stops catching fails this test.
#[test]
fn every_deliberate_defect_is_caught() {
    const CAUGHT: [(Defect, Class, u64); 10] = [
        (Defect::IgnoresDrafts, Class::Draft, 1),
        (Defect::MenuIsIdle, Class::Dialog, 5),
        (Defect::BusyIsIdle, Class::Busy, 1),
        (Defect::StaleEvidence, Class::Busy, 4),
        (Defect::DropsGrantedFiles, Class::Liveness, 1),
        (Defect::ClaimsUnreadAtTurnStart, Class::Twice, 0),
        (Defect::LosesClaimAnswers, Class::Liveness, 1),
        (Defect::AnswersTwice, Class::HookAnsweredTwice, 0),
        (Defect::StampsAnOlderRevision, Class::Liveness, 0),
        (Defect::StampsTheCurrentRevision, Class::Draft, 2098),
    ];
    let mut report = Vec::new();
    for (defect, class, seed) in CAUGHT {
        let outcome = run(Scenario::mutated(seed, defect));
        let caught = outcome
            .violations
            .iter()
            .any(|violation| violation.class == class);
        if !caught {
            let first = first_seed_catching(defect, class, 5_000);
            report.push(format!(
                "{defect:?} as {class:?}: not by seed {seed}; first seed {first:?}"
            ));
        }
        let faithful = run(Scenario {
            defect: None,
            ..Scenario::mutated(seed, defect)
        });
        assert!(
            faithful.violations.is_empty(),
            "seed {seed} without {defect:?}: {:?}",
            faithful.violations
        );
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}
