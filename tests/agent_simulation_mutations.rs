//! The mutation check, planted where a careless change would really be
//! made: each defect of `ding::mutation::Mutation` is switched on in DING's
//! own code (a grammar, the engine, the adapter machine), one at a time,
//! and the whole-agent sweeps run on the same seeds as `make test`'s; a
//! defect counts as caught when at least one seed breaks an invariant.
//! The table it prints (which sweep caught each defect, as which class, on
//! how many seeds) is the one in `docs/simulation.md`.
//!
//! It runs in `make test` optimized (`scripts/unit-tests.sh`, the `sim`
//! profile), alone in its process: a planted defect is a switch of the
//! whole process. `DING_MUTATION_SEEDS=N` sets the seeds per sweep
//! (default 5,000, and a quarter as many on the Gemini model).

#[path = "agent_simulation/claude_harness.rs"]
mod claude_harness;
#[path = "agent_simulation/codex_app_server.rs"]
mod codex_app_server;
#[path = "agent_simulation/codex_harness.rs"]
mod codex_harness;
#[path = "agent_simulation/demo_harness.rs"]
mod demo_harness;
#[path = "../src/eval/fewest_calls.rs"]
mod fewest_calls;
#[path = "agent_simulation/gemini_harness.rs"]
mod gemini_harness;
#[path = "agent_simulation/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "agent_simulation/mutant.rs"]
mod mutant;
#[path = "agent_simulation/opencode_harness.rs"]
mod opencode_harness;
#[path = "agent_simulation/opencode_plugins.rs"]
mod opencode_plugins;
#[path = "agent_simulation/screens.rs"]
mod screens;
mod support;
#[allow(dead_code)]
#[path = "agent_simulation/world/mod.rs"]
mod world;

use std::collections::BTreeMap;

use ding::mutation::{Mutation, plant};
use world::{Class, Harness, Scenario, run};

fn seeds() -> u64 {
    std::env::var("DING_MUTATION_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(5_000)
}

/// What one sweep found with a defect planted: the failing seeds, by the
/// harness and the class of their first violation.
#[derive(Default)]
struct Caught {
    seeds: usize,
    by: BTreeMap<(String, String), usize>,
}

impl Caught {
    fn row(&self) -> String {
        let by: Vec<String> = self
            .by
            .iter()
            .map(|((harness, class), n)| format!("{harness} {class} {n}"))
            .collect();
        if by.is_empty() {
            "not caught".to_string()
        } else {
            format!("{} seeds ({})", self.seeds, by.join(", "))
        }
    }
}

/// Runs `0..seeds`, each made by `make`, on every core.
fn sweep(seeds: u64, make: fn(u64) -> Scenario) -> Caught {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let found: Vec<Vec<(String, String)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|first| {
                scope.spawn(move || {
                    let mut found = Vec::new();
                    for seed in (first..seeds).step_by(threads as usize) {
                        let scenario = make(seed);
                        let harness = format!("{:?}", scenario.harness);
                        if let Some(violation) = run(scenario).violations.first() {
                            found.push((harness, format!("{:?}", violation.class)));
                        }
                    }
                    found
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a sweep thread"))
            .collect()
    });
    let mut caught = Caught::default();
    for (harness, class) in found.into_iter().flatten() {
        caught.seeds += 1;
        *caught.by.entry((harness, class)).or_default() += 1;
    }
    caught
}

/// The defects the sweeps must catch, and as what class on which sweep's
/// seeds of which harness (`None`: any); the rest are the simulation's
/// known blind spots, printed as not caught. A grammar's defect is caught
/// on each provider's model apart: each reads its own screens. The
/// journal's restore is caught since DING's own processes crash in the
/// simulation (`world/ding_crash.rs`): a staged file restored as pending
/// is rung again after the sidecar's restart, and reaches the model twice.
const MUST_CATCH: &[(Mutation, &str, Option<Harness>, Class)] = &[
    (Mutation::FenceWantsNoQuiet, "agent", None, Class::Draft),
    (Mutation::FenceWantsNoQuiet, "gemini", None, Class::Draft),
    (
        Mutation::DialogReadsIdle,
        "agent",
        Some(Harness::Demo),
        Class::Dialog,
    ),
    (
        Mutation::DialogReadsIdle,
        "agent",
        Some(Harness::Claude),
        Class::Dialog,
    ),
    (
        Mutation::DialogReadsIdle,
        "agent",
        Some(Harness::Codex),
        Class::WakeOnDraft,
    ),
    (
        Mutation::DialogReadsIdle,
        "gemini",
        Some(Harness::Gemini),
        Class::Dialog,
    ),
    (Mutation::HostFenceIgnoresInput, "agent", None, Class::Draft),
    (Mutation::HostNeverWithdraws, "agent", None, Class::Draft),
    (Mutation::HostNeverWithdraws, "gemini", None, Class::Draft),
    // A paste that arrives changed (`agent_simulation/screens.rs`).
    (
        Mutation::ReturnIgnoresTheComposer,
        "agent",
        None,
        Class::Draft,
    ),
    (
        Mutation::ReturnIgnoresTheComposer,
        "gemini",
        None,
        Class::Draft,
    ),
    // A key read but not yet drawn when the wake's confirming snapshot
    // is taken (a screen drawn late).
    (Mutation::WakeSkipsQuiet, "agent", None, Class::WakeOnDraft),
    // The cost oracle (`world/cost.rs`): batching off spends calls.
    (Mutation::NoGather, "agent", None, Class::Cost),
    (Mutation::NoGather, "gemini", None, Class::Cost),
    // A stale hook's receipt after its harness restarted
    // (`world/hostile_hooks.rs`): the engine's own check is the only one.
    (
        Mutation::IdentityBySessionAlone,
        "agent",
        None,
        Class::Liveness,
    ),
    (
        Mutation::JournalRestoresStagedAsPending,
        "agent",
        None,
        Class::Twice,
    ),
    (
        Mutation::JournalRestoresStagedAsPending,
        "gemini",
        None,
        Class::Twice,
    ),
];

#[test]
#[ignore = "run by make test in the sim profile, alone in its process (scripts/unit-tests.sh)"]
fn planted_defects_and_the_sweeps_that_catch_them() {
    let seeds = seeds();
    let gemini_seeds = (seeds / 4).max(1);
    let on_gemini = |seed| Scenario::on(Harness::Gemini, seed);
    plant(None);
    let mut rows = Vec::new();
    // `DING_MUTATION_ONLY=Name,Name` runs those defects alone.
    let only = std::env::var("DING_MUTATION_ONLY").unwrap_or_default();
    let chosen = |mutation: &Mutation| {
        only.is_empty() || only.split(',').any(|name| name == format!("{mutation:?}"))
    };
    for mutation in Mutation::ALL.into_iter().filter(chosen) {
        plant(Some(mutation));
        let agent = sweep(seeds, Scenario::random);
        let gemini = sweep(gemini_seeds, on_gemini);
        plant(None);
        eprintln!(
            "{mutation:?}: agent sweep ({seeds} seeds): {}; gemini sweep ({gemini_seeds} seeds): {}",
            agent.row(),
            gemini.row()
        );
        rows.push((mutation, agent, gemini));
    }
    for &(mutation, sweep_name, harness, class) in MUST_CATCH.iter().filter(|(m, ..)| chosen(m)) {
        let (_, agent, gemini) = rows
            .iter()
            .find(|(planted, _, _)| *planted == mutation)
            .expect("a row per defect");
        let caught = if sweep_name == "gemini" {
            gemini
        } else {
            agent
        };
        let class = format!("{class:?}");
        let on = harness.map(|harness| format!("{harness:?}"));
        assert!(
            caught
                .by
                .keys()
                .any(|(found_on, found)| *found == class
                    && on.as_ref().is_none_or(|on| on == found_on)),
            "{mutation:?} is no longer caught as {class} on {} by the {sweep_name} sweep: {}",
            on.as_deref().unwrap_or("any harness"),
            caught.row()
        );
    }
}
