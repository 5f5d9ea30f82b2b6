//! Named scenarios of hooks as a hostile world (`world/hostile_hooks.rs`):
//! one per hostile behaviour, each on the seed whose story shows it,
//! checked by the steps the story goes through (their moments left out)
//! and by the invariants, which every one keeps.

use super::first_missing_mark;
use crate::world::{Harness, Outcome, Scenario, run};

/// Runs `harness` on `seed` with its hostile hooks (and, with `refused`,
/// hooks that find no adapter), asserts that no invariant breaks and that
/// the trace goes through `marks` in order.
fn story(harness: Harness, seed: u64, refused: bool, marks: &[&str]) -> Outcome {
    // Their worlds as found: bursts came at once then.
    let outcome = run(Scenario {
        refused_hooks: refused,
        spread_bursts: false,
        ding_crashes: Vec::new(),
        screens: crate::screens::Plan::default(),
        ..Scenario::on(harness, seed)
    });
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    if let Some(missing) = first_missing_mark(&outcome.trace, marks) {
        panic!(
            "seed {seed} on {harness:?} no longer goes through {missing:?} (in order):\n{}",
            outcome.trace.join("\n")
        );
    }
    outcome
}

/// A stale hook call (issue 36 item 2, the class issue 38 wants the
/// simulation to make): Codex's `UserPromptSubmit` for the queued turn
/// that carries three files starts, the harness crashes before the hook
/// connects, and the orphaned `ding hook` connects 2 ms after the restart,
/// when the sidecar knows the new incarnation and the adapter does not
/// yet. Its receipt of the three files, stamped with the old incarnation,
/// reaches the sidecar, whose own identity check is the only one left: it
/// refuses it, and the three reach the new harness's model in a queued
/// turn of their own. (With the identity compared by session alone,
/// `Mutation::IdentityBySessionAlone`, the receipt makes them the dead
/// harness's for good: the mutation check's Liveness row.) The stale
/// call's answer is read by nobody, and its process exits.
#[test]
fn a_stale_hooks_receipt_after_a_restart_is_refused_and_its_files_reach_the_new_harness() {
    story(
        Harness::Codex,
        83,
        false,
        &[
            "hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\"]",
            "hook UserPromptSubmit Peer(6): its harness crashes before it connects",
            "the harness crashes and starts again as i2",
            "hook Peer(6) of the harness gone connects in 2 ms",
            "hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\"]",
            "a queued turn starts on \"[ding] 3 unread",
            "hook UserPromptSubmit of a harness gone answered",
            "hook Peer(6) of the harness gone exits unread",
        ],
    );
}

/// Issue 36 item 2's own class, a parked call with a stale identity: the
/// harness crashes as it starts its first wake, and the orphaned wake
/// connects 2 ms after the restart, before the adapter has heard of the
/// new terminal, so it parks. It holds nothing: the adapter ends it as
/// soon as the new identity comes (its answer read by nobody), the new
/// harness's own wake parks, and the first file wakes the new harness
/// with no stall.
#[test]
fn a_stale_wake_parked_across_a_restart_stalls_nothing() {
    story(
        Harness::Claude,
        142,
        false,
        &[
            "hook wake Peer(2): its harness crashes before it connects",
            "the harness crashes and starts again as i2",
            "hook Peer(2) of the harness gone connects in 2 ms",
            "adapter log: wake: parked in slot wake",
            "hook wake of a harness gone answered",
            "hook Peer(2) of the harness gone exits unread",
            "adapter log: wake: parked in slot wake",
            "arrives m0001.md",
            "hook wake answered, naming [\"m0001.md\"]",
        ],
    );
}

/// Found by the hooks that run twice (seed 14450), where DING was wrong:
/// after the person's `/compact`, Codex's `SessionStart` runs two `ding
/// hook` processes (settings merged twice). Each surfaced the backlog
/// again (scope `unread`), and the second was granted the file the first
/// had just taken: the model read it twice in one request. A file a hook
/// took since the context began is now refused to such a claim, as one
/// typed since then was.
#[test]
fn two_hooks_for_one_event_surface_the_backlog_once() {
    story(
        Harness::Codex,
        14450,
        false,
        &[
            "person types \"/compact\"",
            "the context is compacted: its prompts stay",
            "hook SessionStart Peer(10): runs twice, as Peer(11) too",
            "hook SessionStart answered, naming [\"m0001.md\"]",
            "hook SessionStart answered, naming []",
        ],
    );
}

/// The harness's own timeout, shorter than DING's answer: Claude Code
/// kills its wake hook after a second (a person's own `timeout`), while
/// the call is parked. The wake is gone, so the adapter no longer counts
/// on it: the file that arrives next is typed at the idle screen.
#[test]
fn a_wake_its_harness_timed_out_leaves_idle_work_to_the_typed_notice() {
    story(
        Harness::Claude,
        124,
        false,
        &[
            "hook wake Peer(2): the harness's own timeout in 1000 ms",
            "hook wake Peer(2): given up (the harness's own timeout)",
            "arrives m0001.md",
            "submitted \"[ding] 1 unread inbox message in inbox/new: m0001.md",
        ],
    );
}

/// A hook process killed while its call is parked (Claude Code's wake,
/// killed 186 ms after it started): its connection closes, the harness
/// goes on without it, and the next file is typed.
#[test]
fn a_killed_wake_leaves_idle_work_to_the_typed_notice() {
    story(
        Harness::Claude,
        19,
        false,
        &[
            "hook wake Peer(12): killed in 186 ms",
            "hook wake Peer(12): given up (killed)",
            "arrives m0001.md",
            "submitted \"[ding] 1 unread inbox message in inbox/new: m0001.md",
        ],
    );
}

/// `ding hook` that finds no adapter (`refused_hooks`, off in the
/// sweeps): Claude Code's first wake prints nothing and exits 0, the
/// harness goes on as if the inbox were empty, and the adapter, which
/// never heard of the wake, counts on none: the first file is typed.
#[test]
fn a_wake_that_finds_no_adapter_leaves_idle_work_to_the_typed_notice() {
    story(
        Harness::Claude,
        514,
        true,
        &[
            "hook wake Peer(2): ding hook cannot connect",
            "hook wake: printed nothing (exit 0)",
            "arrives m0001.md",
            "submitted \"[ding] 1 unread inbox message in inbox/new: m0001.md",
        ],
    );
}

/// A search past the sweeps: every seed in `0..DING_AGENT_SIM_SEEDS`
/// (10,000 unless said), on the three harnesses of the agent sweep and on
/// the Gemini model, run with hooks that may also find no adapter
/// (`refused_hooks`), printed with its first violation where it breaks an
/// invariant. Off in the sweeps: this world's adapter never goes down.
#[test]
#[ignore = "a search: hooks that never reach an adapter"]
fn print_every_seed_that_breaks_an_invariant_when_hooks_find_no_adapter() {
    // `DING_AGENT_SIM_REFUSED_SEED=S` (on the agent sweep's harness of the
    // seed; `=gemini:S` on the Gemini model) prints that one world.
    if let Ok(text) = std::env::var("DING_AGENT_SIM_REFUSED_SEED") {
        let (gemini, seed) = match text.strip_prefix("gemini:") {
            Some(seed) => (true, seed),
            None => (false, text.as_str()),
        };
        let seed = seed.parse().expect("a seed");
        let scenario = if gemini {
            Scenario::on(Harness::Gemini, seed)
        } else {
            Scenario::random(seed)
        };
        let outcome = run(Scenario {
            refused_hooks: true,
            ..scenario
        });
        eprintln!("{}", outcome.trace.join("\n"));
        for violation in &outcome.violations {
            eprintln!("{violation}");
        }
        return;
    }
    let seeds = std::env::var("DING_AGENT_SIM_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10_000);
    let mut broke = 0;
    for seed in 0..seeds {
        for scenario in [Scenario::random(seed), Scenario::on(Harness::Gemini, seed)] {
            let harness = scenario.harness;
            let outcome = run(Scenario {
                refused_hooks: true,
                ..scenario
            });
            if let Some(violation) = outcome.violations.first() {
                broke += 1;
                eprintln!("seed {seed} on {harness:?}: {violation}");
            }
        }
    }
    eprintln!("{broke} runs of {} broke an invariant", 2 * seeds);
}
