//! Whole-agent simulation: the real engine, the real adapter machine and a
//! real provider, against a model of the harness and of a person, on one
//! simulated clock. What a real-pane trial finds in minutes, a seed finds
//! in milliseconds.
//!
//! The pieces, each the project's own code where it exists:
//!
//! * `ding::core::engine::Engine` under `turn-boundary+fresh-idle`;
//! * `ding::adapter::machine::AdapterMachine` with the seed's provider;
//! * the harness, by the seed's remainder mod 3: the real demo agent with
//!   the demo provider, drawn by its real renderer into the PTY host's
//!   real screen model (`agent_simulation/demo_harness.rs`), hooks at turn
//!   start and end; on the next a model of Claude Code with the Claude provider,
//!   drawn with the screens captured from the real binary, its hooks in
//!   the order it fires them, tools, permission dialogs, `Stop` blocks and
//!   the wake (`agent_simulation/claude_harness.rs`); on the third a
//!   model of Codex with the Codex provider on its native idle path: the
//!   launcher's own `Native` talking to a model of the app-server and its
//!   queue, hooks awaited one at a time, approvals, a streamed reply that
//!   looks idle, `/clear` and `/compact`
//!   (`agent_simulation/codex_harness.rs`); and, in a sweep of its own
//!   over the same worlds, a model of Gemini CLI with the Gemini
//!   provider, whose only idle path is the typed notice: tools,
//!   confirmations, `AfterAgent` continuations, a queue of prompts typed
//!   during a turn, `/compress` (`agent_simulation/gemini_harness.rs`);
//!   in another, a model of OpenCode 1.18.33 with DING's two plugins (their
//!   Rust model, `agent_simulation/opencode_plugins.rs`) and the OpenCode
//!   provider, into which DING never types: the home screen, `promptAsync`
//!   at idle, prompts queued behind a turn and stranded by an Esc or a
//!   rejected permission, the permission dialog, pickers
//!   (`agent_simulation/opencode_harness.rs`);
//!   all with input lag
//!   (a key reaches the harness, and moves the screen, some milliseconds
//!   after it was written);
//! * the PTY host's own input order (`ding::pty::input_order`, the very
//!   machine `ding pty` runs): compare-and-send against the revision
//!   (which moves when the harness draws), the time fence, one transaction
//!   at a time, a person's input queued behind it, the hold, withdraw and
//!   the pacing of keys; the world is its shell (a terminal that takes
//!   every byte at once, pushes while the adapter watches);
//! * a person: drafts typed at any pace, left and finished, submitted,
//!   cleared; menus answered; turns stopped; slash commands where the
//!   harness has them; quiet at the end;
//! * arrivals at any moment, bursts among them, on half the seeds spread
//!   as a sender's loop sends them (each file less than a second after
//!   the one before);
//! * on one seed in ten, a crash: the harness starts again as a new
//!   incarnation, its hooks dying with it, bytes on their way to it lost,
//!   its context gone;
//! * on a quarter of the seeds (a stream of their own,
//!   `agent_simulation/world/hostile_hooks.rs`), hooks as real ones
//!   misbehave: killed by the harness's own timeout, shorter than DING's
//!   answer (Codex's 3 s clamp, a person's setting), or by a signal while
//!   they wait; the same event run twice by two `ding hook` processes
//!   (settings merged twice); and, once a seed, a harness that crashes
//!   just after it started a hook, whose orphaned `ding hook` connects
//!   after the restart with the old incarnation's identity (a stale call:
//!   the answer is read by nobody, no receipt goes back). A `ding hook`
//!   that finds no adapter (printing nothing, exit 0) is modelled too but
//!   off in the sweeps (`Scenario::refused_hooks`): this world's adapter
//!   never goes down; on the Codex model such a lost `Stop` holds idle
//!   work and a lost `UserPromptSubmit` repeats a delivery
//!   (`print_every_seed_that_breaks_an_invariant_when_hooks_find_no_adapter`).
//! * on 15 % of seeds (a stream of their own), DING's own processes are
//!   killed and started again (`agent_simulation/world/ding_crash.rs`):
//!   the sidecar from the journal the runtime last wrote, with the same
//!   inbox, a new adapter and a new link to the PTY host; the adapter
//!   alone, spawned again after the engine's backoff; the PTY host with
//!   the harness it owns, a new host starting a new incarnation (under a
//!   new generation on half of them). Hook calls a dead adapter held answer
//!   nothing; a send-if in flight still runs and its reply is lost. A
//!   kill may land anywhere: the gaps of DING's the kills found are
//!   closed (`docs/simulation.md`).
//! * on a fraction of seeds, drawn from a stream of their own, the
//!   harness's screens as a hostile world (`agent_simulation/screens.rs`,
//!   issue 38 item 3): dialogs no hook announces, drawn with real
//!   captures (a folder-trust dialog at startup before which no hook runs,
//!   pickers a person opens by typing `/permissions`, `/resume` or `/model`
//!   and closes with Esc, Gemini's rewind menu that Esc Esc opens after a
//!   pause, a tool approval whose `Notification` comes late or never,
//!   Gemini's confirmation drawn above its composer, the demo agent's menu
//!   after its turn-end hook); a paste that arrives a letter short, or
//!   (files named long, as senders name them) a notice over 500
//!   characters that Gemini draws folded, `[Pasted Text: N chars]`; and a
//!   screen drawn 7 to 85 ms after the key that changed it, sometimes in
//!   two chunks (Codex: at once unchanged, then drawn). Named scenarios
//!   keep the worlds they were found in ([`world::Scenario::as_found`]).
//!   Every branch of each provider's screen grammar that no capture
//!   reaches is reached by a model screen
//!   (`agent_simulation/grammar_branches.rs`), each failing closed.
//!
//! After every step it checks:
//!
//! * **drafts**: no prompt the harness received joins a person's text and
//!   DING's notice;
//! * **dialogs**: DING's paste never reaches a dialog, so its Return never
//!   answers one, and no parked wake or queued turn is delivered under a
//!   dialog no hook announced (a picker the person is reading);
//! * **the Return**: DING's Return reaches only a composer that holds its
//!   notice alone (whitespace aside);
//! * **wakes**: a parked wake never delivers onto a person's draft;
//! * **busy**: DING never types into a running turn;
//! * **hooks**: every hook call gets exactly one answer, before its
//!   timeout;
//! * **once**: no file reaches the model twice in one context (hooked and
//!   typed, or typed twice); a crash and a `/clear` begin the context
//!   again, and a compaction keeps its prompts but not what hooks
//!   injected, so a file still unread may be said again there;
//!   the one repeat allowed after a crash of DING's is HARD-22's (a
//!   sidecar killed between the PTY write and the journal write, the
//!   host's reply not yet heard, rings that write's files again, once);
//! * **no stale write**: no byte of DING's reaches a harness incarnation
//!   or generation other than the one its send-if named;
//! * **FIFO**: a transaction names its files in filename order;
//! * **liveness**: once the person is quiet and the harness idle, every
//!   file reaches the model within [`world::LIVENESS_BOUND_MS`] (again, if a
//!   crash or a `/clear` began its context again before it was archived;
//!   a compaction leaves it told);
//! * **cost**: at the end, DING made no more model calls (its own turns,
//!   and turns its hooks continued at their end) than the fewest a person
//!   who knew every arrival would need beside their own requests
//!   (`world/cost.rs`, over the evaluation's own `fewest_calls`; a repeat
//!   a crash of DING's allowed is owed a window from that crash; the
//!   stories the soak found are `agent_simulation/cost_scenarios.rs`);
//! * the same seed gives the same trace.
//!
//! The PTY host is `ding pty`'s input order, not a copy: every input and
//! output moves the revision, the host times a person's input and the
//! harness's output, refuses a compare-and-send by its time fence, and
//! stops one a person's key interrupts. The Return of a typed notice is a
//! fenced phase of its own, asked for only on evidence that the composer
//! holds the notice alone; a person's input between the two takes the paste
//! back out (the provider's withdraw keys) before it goes on. Any violation
//! fails the sweep with its seed. Races were once listed here as known open
//! while an open issue fixed them; the last two (issue 20: a key that is
//! not text alone between the paste and its Return left the notice glued to
//! the person's draft, and such a notice, deleted by the person, was never
//! rung again) closed with the withdraw keys, and the list went with them.
//!
//! Every real-pane failure the simulation can model is a named scenario
//! below (`real_pane_*`), found on a seed of the sweep and kept; they run
//! their seeds' worlds as they were before hooks turned hostile. Each
//! hostile hook behaviour has a named scenario of its own
//! (`agent_simulation/hostile_hook_scenarios.rs`). Seeds the soak found
//! past `make test`'s sweeps are kept there, in `ding_crash_scenarios.rs`,
//! in `agent_simulation/soak_twice_scenarios.rs` (each story of its
//! `Twice` seeds) and in `agent_simulation/soak_scenarios_live.rs` (a
//! `Stop` block whose hook was killed on Codex; a person's keys on both
//! sides of a PTY host's crash).
//!
//! `DING_AGENT_SIM_SEEDS=N` runs N seeds (default 10,000, and a quarter as
//! many on each of the Gemini and OpenCode models; `make test` runs 100,000 optimized, in the
//! `sim` profile; `make soak` a million, with a progress line);
//! `DING_AGENT_SIM_SEED=S` runs one and prints its trace. A sweep runs
//! every seed, prints how many ran and every seed that broke an
//! invariant, then fails if any did.

#[path = "agent_simulation/claude_harness.rs"]
mod claude_harness;
#[path = "agent_simulation/codex_app_server.rs"]
mod codex_app_server;
#[path = "agent_simulation/codex_harness.rs"]
mod codex_harness;
#[path = "agent_simulation/cost_scenarios.rs"]
mod cost_scenarios;
#[path = "agent_simulation/demo_harness.rs"]
mod demo_harness;
#[path = "agent_simulation/ding_crash_scenarios.rs"]
mod ding_crash_scenarios;
#[path = "../src/eval/fewest_calls.rs"]
mod fewest_calls;
#[path = "agent_simulation/gemini_harness.rs"]
mod gemini_harness;
#[path = "agent_simulation/grammar_branches.rs"]
mod grammar_branches;
#[path = "agent_simulation/harness.rs"]
mod harness;
#[path = "agent_simulation/hostile_hook_scenarios.rs"]
mod hostile_hook_scenarios;
#[path = "agent_simulation/mutant.rs"]
mod mutant;
#[path = "agent_simulation/opencode_harness.rs"]
mod opencode_harness;
#[path = "agent_simulation/opencode_plugins.rs"]
mod opencode_plugins;
#[path = "agent_simulation/opencode_scenarios.rs"]
mod opencode_scenarios;
#[path = "agent_simulation/screen_scenarios.rs"]
mod screen_scenarios;
#[path = "agent_simulation/screens.rs"]
mod screens;
#[path = "agent_simulation/soak_scenarios_live.rs"]
mod soak_scenarios_live;
#[path = "agent_simulation/soak_twice_scenarios.rs"]
mod soak_twice_scenarios;
mod support;
#[path = "agent_simulation/world/mod.rs"]
mod world;

use mutant::Defect;
use world::{Class, Harness, Outcome, Scenario, run};

fn seeds() -> u64 {
    std::env::var("DING_AGENT_SIM_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10_000)
}

#[test]
fn random_whole_agent_runs_keep_every_invariant() {
    if replayed("DING_AGENT_SIM_SEED", Scenario::random) {
        return;
    }
    let seeds = seeds();
    let (typed, hooked) = sweep_in_threads(
        seeds,
        Scenario::random,
        "DING_AGENT_SIM_SEED",
        "random_whole_agent_runs_keep_every_invariant",
    );
    // The sweep reached both delivery paths, in most seeds.
    assert!(typed as u64 > seeds / 2, "files typed: {typed}");
    assert!(
        hooked as u64 > seeds / 10,
        "files a hook injected: {hooked}"
    );
}

/// The same worlds with a model of Gemini CLI as the harness: a quarter
/// as many seeds (`DING_AGENT_SIM_SEEDS` / 4). Its only idle path is the
/// typed notice, so most files are typed; hooks carry what arrives during
/// turns and drafts. `DING_AGENT_SIM_GEMINI_SEED=S` runs one and prints its
/// trace.
#[test]
fn gemini_whole_agent_runs_keep_every_invariant() {
    let on_gemini = |seed| Scenario::on(Harness::Gemini, seed);
    if replayed("DING_AGENT_SIM_GEMINI_SEED", on_gemini) {
        return;
    }
    let seeds = (seeds() / 4).max(1);
    let (typed, hooked) = sweep_in_threads(
        seeds,
        on_gemini,
        "DING_AGENT_SIM_GEMINI_SEED",
        "gemini_whole_agent_runs_keep_every_invariant",
    );
    assert!(typed as u64 > seeds / 2, "files typed: {typed}");
    assert!(
        hooked as u64 > seeds / 10,
        "files a hook injected: {hooked}"
    );
}

/// The same worlds with a model of OpenCode 1.18.33 and DING's two plugins
/// as the harness (`agent_simulation/opencode_harness.rs`): a quarter as
/// many seeds (`DING_AGENT_SIM_SEEDS` / 4). DING never types into it
/// (`TypedOnNativePath` holds it to 0 bytes): idle work goes through the
/// TUI plugin's `promptAsync`, the rest rides the server plugin's
/// `chat.message` and `tool.execute.after`.
/// `DING_AGENT_SIM_OPENCODE_SEED=S` runs one and prints its trace.
#[test]
fn opencode_whole_agent_runs_keep_every_invariant() {
    let on_opencode = |seed| Scenario::on(Harness::OpenCode, seed);
    if replayed("DING_AGENT_SIM_OPENCODE_SEED", on_opencode) {
        return;
    }
    let seeds = (seeds() / 4).max(1);
    let (typed, hooked) = sweep_in_threads(
        seeds,
        on_opencode,
        "DING_AGENT_SIM_OPENCODE_SEED",
        "opencode_whole_agent_runs_keep_every_invariant",
    );
    assert_eq!(typed, 0, "files typed into OpenCode");
    assert!(hooked as u64 > seeds / 2, "files delivered: {hooked}");
}

/// Whether `variable` names a seed: then runs that one world (made by
/// `make`) and prints its trace and violations, for a sweep to replay.
fn replayed(variable: &str, make: fn(u64) -> Scenario) -> bool {
    let Some(seed) = std::env::var(variable)
        .ok()
        .and_then(|text| text.parse::<u64>().ok())
    else {
        return false;
    };
    print_run(make(seed));
    true
}

/// Runs one world and prints its trace, then its violations.
fn print_run(scenario: Scenario) {
    let outcome = run(scenario);
    for line in &outcome.trace {
        eprintln!("{line}");
    }
    for violation in &outcome.violations {
        eprintln!("{violation}");
    }
}

/// Runs the worlds of seeds `0..seeds`, each made by `make`, on every core,
/// all of them; prints how many ran and every seed that broke an invariant
/// (its first violation, and how to replay it: `variable` set to the seed,
/// with `test`), then panics if any did; else the files typed and hooked.
/// With `DING_AGENT_SIM_PROGRESS` set (`make soak`) it says how far it got
/// at every hundredth of the seeds.
fn sweep_in_threads(
    seeds: u64,
    make: fn(u64) -> Scenario,
    variable: &str,
    test: &str,
) -> (usize, usize) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let progress = std::env::var_os("DING_AGENT_SIM_PROGRESS").is_some();
    let done = std::sync::atomic::AtomicU64::new(0);
    let step = (seeds / 100).max(1);
    // Each thread runs every `threads`th seed.
    let sweeps: Vec<Sweep> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|first| {
                let done = &done;
                scope.spawn(move || {
                    sweep((first..seeds).step_by(threads as usize), make, |_| {
                        let ran = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if progress && ran.is_multiple_of(step) {
                            eprintln!("{test}: {ran} of {seeds} seeds");
                        }
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a sweep thread"))
            .collect()
    });
    let (mut typed, mut hooked) = (0, 0);
    let mut failures: Vec<(u64, world::Violation)> = Vec::new();
    for sweep in sweeps {
        failures.extend(sweep.failures);
        typed += sweep.typed;
        hooked += sweep.hooked;
    }
    failures.sort_by_key(|(seed, _)| *seed);
    eprintln!(
        "{test}: {seeds} seeds run, {} broke an invariant",
        failures.len()
    );
    for (seed, violation) in &failures {
        eprintln!("  seed {seed}: {violation}");
    }
    if let Some((seed, violation)) = failures.first() {
        panic!(
            "{} of {seeds} seeds broke an invariant; the first, seed {seed}: {violation}\nreplay: {variable}={seed} cargo test --test agent_simulation {test} -- --nocapture",
            failures.len()
        );
    }
    (typed, hooked)
}

/// Found 2026-12-05 at seed 1101 (Claude Code) and kept open, then by
/// the sweep past `make test`'s seeds (issue 36, item 6: 21538 and 45325
/// on Claude Code; now 1462 and 6698, since a new screen is read until it
/// settles whether or not work waits, issue 39): the wake's claim went
/// out on a reading of an empty composer after the person had been quiet
/// long enough, the person's key reached the terminal a millisecond or
/// two later, and the grant came back after that: the wake, answered on
/// the reading the claim was made on, started a turn under the draft.
/// The typed path is fenced against exactly this by the PTY host's input
/// time; the wake answers no PTY host. A wake granted files now goes only
/// on a reading asked for after the grant; at seed 1462 it showed the
/// key (`x` at 10954 ms, withheld at 10956), so the wake was withheld,
/// its files given back (`release` `withheld`), and the call put back: it
/// went once the person had deleted their keys and been quiet (11638).
/// (Seed 1101 no longer meets the race since held evidence is read on
/// events only.)
#[test]
fn a_key_while_a_wakes_claim_is_out_withholds_the_wake() {
    holds_without(
        Harness::Claude,
        1462,
        Class::WakeOnDraft,
        &[
            "10954 person types \"x\"",
            "10956 adapter log: wake: withheld: the screen read after its grant: ready, human text in the composer",
            "11333 person types \"\\u{7f}\\u{7f}\"",
            "11638 hook wake answered, naming [\"m0002.md\", \"m0003.md\"]",
        ],
    );
    holds_without(
        Harness::Claude,
        6698,
        Class::WakeOnDraft,
        &["wake: withheld: the screen read after its grant: ready, human text in the composer"],
    );
}

/// The same race on Codex's native path (issue 36, item 6: seeds 16613,
/// 18857 and 48980; now 8907 and 305, since a new screen is read until
/// it settles, issue 39): the parked `queue` call's claim went out in the
/// milliseconds the person typed their first key, and the queued turn
/// the launcher then started ran under their draft. Withheld on the
/// reading taken after the grant (`f` at 2705 ms, withheld at 2735), the
/// six files went back to pending, and the person's own prompt (`fs`)
/// carried them, at no model call of their own. (Seed 48980 no longer
/// meets the race since held evidence is read on events only.)
#[test]
fn a_key_while_a_queued_turns_claim_is_out_withholds_the_delivery() {
    holds_without(
        Harness::Codex,
        8907,
        Class::WakeOnDraft,
        &[
            "1453 arrives m0006.md",
            "2705 person types \"f\"",
            "2735 adapter log: queue: withheld: the screen read after its grant: ready, human text in the composer",
            "3082 submitted \"fs\"",
            "3086 hook SessionStart answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\"]",
        ],
    );
    holds_without(
        Harness::Codex,
        305,
        Class::WakeOnDraft,
        &["queue: withheld: the screen read after its grant: ready, human text in the composer"],
    );
}

/// Found by the sweep past `make test`'s seeds (issue 36, item 6: files
/// never delivered on Claude Code, seed 37870), where DING was wrong, and
/// fixed since by the hook channel's rule for calls about another harness
/// (955afec, KIT-2): the person's prompt fires `UserPromptSubmit` and a
/// new wake, and the harness crashes a few milliseconds later. The new
/// harness parked its own wake first; the dead one's wake, come late,
/// replaced it (at abb3109: "hook wake answered, naming []" for the new
/// one), and every claim made for it was stamped with the dead
/// incarnation and refused (`identity-mismatch`): the files never reached
/// the model. A call about a harness the adapter no longer serves now
/// claims nothing, holds no terminal, and is answered with nothing; the
/// new harness's wake delivers the files. (Now seed 13820, since a new
/// screen is read until it settles, issue 39: the prompt at 734 ms, the
/// crash at 740, the new wake parked at 746 delivers the seven files that
/// arrive after, at 2319.)
#[test]
fn a_wake_of_a_harness_that_crashed_just_after_a_prompt_replaces_no_wake_of_the_new_one() {
    holds_without(
        Harness::Claude,
        13820,
        Class::Liveness,
        &[
            "734 submitted \"izn\"",
            "734 hook wake Peer(4)",
            "740 the harness crashes and starts again as i2",
            "746 adapter log: wake: parked in slot wake",
            "2319 hook wake answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "hook wake of a harness gone answered",
        ],
    );
}

/// Found by the sweep once the wake above waited for its reading (its
/// timing moved by a millisecond), where DING was wrong: the launcher
/// answered a delivery of seven files at 6065 ms and called the adapter
/// again with a report listing it as queued; the app-server died 2 ms
/// later, before the delivery was added, and that report reached the
/// adapter after `native-down`, which took it for the new server's first:
/// the files stayed hook-owned for a turn that never came. A late report
/// of a dead server now counts for nothing; the new server's first says
/// the delivery is gone, and the next park claims its files again.
#[test]
fn a_late_queue_report_of_a_dead_app_server_counts_for_nothing() {
    holds_without(
        Harness::Codex,
        33401,
        Class::Liveness,
        &[
            "6065 hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "6067 hook launch",
            "6078 hook queue answered, naming []",
            "9580 hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "a queued turn starts on \"[ding] 7 unread",
        ],
    );
}

/// Found by `make soak` (seed 526970; then 39851, since a new screen is
/// read until it settles whether or not work waits; now 20404, since a
/// turn of DING's waits the turn quiet after a person's key: issue 39),
/// where DING was wrong: the adapter answered the launcher's parked call
/// (with `m0002.md` at 14938 ms) and the app-server died right then,
/// before the launcher's `thread/queue/add` reached it. The new server's
/// first report (18520) listed nothing of DING's, so the adapter knew the
/// delivery was gone and owed its files to the next claim; but the files
/// were still hook-owned, the sidecar wanted no evidence for them, and
/// the parked call, which claims only once evidence is wanted, waited
/// until the run ended (nothing else arrived). A delivery that never
/// reached a server now gives its files back to unread work (`release`,
/// `no-receipt`) as the report that proves it is read: evidence is
/// wanted, and the launcher's park claims them again.
#[test]
fn a_delivery_that_never_reached_an_app_server_goes_back_to_unread_work() {
    holds_without(
        Harness::Codex,
        20404,
        Class::Liveness,
        &[
            "14938 hook queue answered, naming [\"m0002.md\"]",
            "14938 hook launch",
            "18520 hook queue",
            "18780 hook queue answered, naming [\"m0002.md\"]",
            "a queued turn starts on \"[ding] 1 unread",
        ],
    );
}

/// Found by the same sweep (seed 43979; now 177011, since a new screen
/// is read until it settles whether or not work waits, issue 39), where
/// the world model was wrong: a `Stop` continuation carries files (two
/// here) into a turn that is lost with its app-server, and the person
/// compacts. The world had begun to take a compaction for the end of
/// everything hooks had said, so they never reached the model; but the
/// compaction's summary is
/// written from that text, and a lost turn's files are as told to the
/// model as they were before it (nothing prompts it either way until the
/// next prompt). A compaction now only lets them be said again (here the
/// compacted context's `SessionStart` says them again).
#[test]
fn files_of_a_lost_continuation_stay_told_through_a_compaction() {
    holds_without(
        Harness::Codex,
        177011,
        Class::Liveness,
        &[
            "3857 hook Stop answered, naming [\"m0001.md\", \"m0002.md\"]",
            "3930 hook launch",
            "6314 person types \"/compact\"",
            "8546 the context is compacted: its prompts stay",
            "8846 hook SessionStart answered, naming [\"m0001.md\", \"m0002.md\"]",
        ],
    );
}

/// Prints every seed in `DING_AGENT_SIM_FROM..DING_AGENT_SIM_SEEDS` (from
/// 0, to 10,000 unless said) that breaks an invariant, with its first
/// violation, where the sweeps stop at the first: what a sweep past the
/// seeds `make test` runs is judged with (`cargo test --release --test
/// agent_simulation print_every_seed_that_breaks_an_invariant --
/// --ignored --nocapture`). `DING_AGENT_SIM_GEMINI=1` runs the Gemini
/// worlds instead.
#[test]
#[ignore]
fn print_every_seed_that_breaks_an_invariant() {
    let from: u64 = std::env::var("DING_AGENT_SIM_FROM")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0);
    let make: fn(u64) -> Scenario = if std::env::var("DING_AGENT_SIM_GEMINI").is_ok() {
        |seed| Scenario::on(Harness::Gemini, seed)
    } else {
        Scenario::random
    };
    let (to, threads) = (
        seeds(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let found = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for first in 0..threads as u64 {
            let found = &found;
            scope.spawn(move || {
                for seed in (from + first..to).step_by(threads) {
                    let scenario = make(seed);
                    let harness = scenario.harness;
                    if let Some(violation) = run(scenario).violations.first() {
                        eprintln!("seed {seed} ({harness:?}): {violation}");
                        found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    eprintln!(
        "{} of the seeds {from}..{to} break an invariant",
        found.into_inner()
    );
}

/// What one thread's seeds found.
#[derive(Default)]
struct Sweep {
    /// Every seed that broke an invariant, with its first violation.
    failures: Vec<(u64, world::Violation)>,
    typed: usize,
    hooked: usize,
}

/// Runs each of `seeds`; `ran` is told of each one done.
fn sweep(seeds: impl Iterator<Item = u64>, make: fn(u64) -> Scenario, ran: impl Fn(u64)) -> Sweep {
    let mut found = Sweep::default();
    for seed in seeds {
        let outcome = run(make(seed));
        found.typed += outcome.typed;
        found.hooked += outcome.hooked;
        if let Some(violation) = outcome.violations.into_iter().next() {
            found.failures.push((seed, violation));
        }
        ran(seed);
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

/// Real pane, Claude Code and Codex (issue 20's brief): a first key typed
/// 1 to 90 ms before DING typed was glued onto the notice. Found at seed
/// 1824 (a file and the person's `s` in the same millisecond), now 1875
/// since arrivals are gathered: two files arrive 0.3 s apart, and 38 ms
/// before their gather closes the person types `c`; the harness has not
/// drawn it when the adapter reads the idle screen, so the revision the
/// compare-and-send checks is the one the screen was read at. The host
/// refuses the notice (the person typed 44 ms before), and both files
/// reach the model by the turn-start hook of the person's own prompt,
/// with nothing glued.
#[test]
fn real_pane_a_first_key_just_before_ding_types_is_not_glued_onto_the_notice() {
    holds_without(
        Harness::Demo,
        1875,
        Class::Draft,
        &[
            "3597 person types \"c\"",
            "3641 send-if 1 refused: PtyUnsettled { request: 1, part: Input",
            "3812 submitted \"c\"",
            "3825 hook turn-start answered, naming [\"m0001.md\", \"m0002.md\"]",
        ],
    );
}

/// [`holds_through`], naming the class of violation the scenario once
/// showed.
fn holds_without(harness: Harness, seed: u64, class: Class, marks: &[&str]) {
    let outcome = holds_through(harness, seed, marks);
    assert!(
        outcome
            .violations
            .iter()
            .all(|violation| violation.class != class),
        "{:?}",
        outcome.violations
    );
}

/// Finds, for the mutation check, the first seed below `limit` on which
/// `defect` shows as `class`.
fn first_seed_catching(harness: Harness, defect: Defect, class: Class, limit: u64) -> Option<u64> {
    (0..limit).find(|&seed| {
        run(Scenario::mutated(harness, seed, defect))
            .violations
            .iter()
            .any(|violation| violation.class == class)
    })
}

/// The mutation check: each of twelve deliberate defects, with no input lag
/// (so no race of timing is counted), is caught as its class on
/// each harness where it can matter by the seed named here, and DING as it
/// is passes those seeds. A defect the simulation stops catching fails
/// this test (which then prints the first seed that still catches it).
///
/// The fourteenth, [`Defect::StampsTheCurrentRevision`] (evidence stamped
/// with the revision at the moment of sending, not the one of the screen
/// judged), is no longer caught on any seed below 5,000 on any harness:
/// the time fence refuses every send-if until the person and the screen
/// have been quiet, and the machine reads a screen at each revision, so a
/// key between the reading and the stamp can only be drawn before the
/// fence passes. It stays a defect (the stamp is the adapter kit's
/// promise, proven by its own tests); the simulation cannot see it
/// through the second layer.
///
/// The fifteenth, [`Defect::InjectsQueuedWorkAgain`] (Codex's hooks
/// injecting a file whose delivery still waits in its queue), was caught
/// on seeds 211 and 190 until the engine refused an `unread` backlog
/// claim a file handed to a hook since the context last began (seed 9361
/// of the agent sweep: `a_backlog_hook_answered_after_a_prompts_hook_does_not_say_its_file_again`):
/// the engine no longer grants such a file, so the provider's own filter
/// is a second layer the simulation cannot see through.
#[test]
fn every_deliberate_defect_is_caught() {
    const CAUGHT: [(Defect, Harness, Class, u64); 27] = [
        (Defect::IgnoresDrafts, Harness::Demo, Class::Draft, 3),
        // Seed 1 showed it first, then 4 once a wake waits for the
        // person's quiet (issue 20), and 1 again since the Claude model
        // runs `/compact` (its draws moved).
        (
            Defect::IgnoresDrafts,
            Harness::Claude,
            Class::WakeOnDraft,
            1,
        ),
        (
            Defect::WakesWithoutFreshIdle,
            Harness::Claude,
            Class::WakeOnDraft,
            1,
        ),
        (Defect::MenuIsIdle, Harness::Demo, Class::Dialog, 48),
        (Defect::MenuIsIdle, Harness::Claude, Class::Dialog, 179),
        (Defect::BusyIsIdle, Harness::Demo, Class::Busy, 14),
        (Defect::BusyIsIdle, Harness::Claude, Class::Busy, 34),
        (Defect::StaleEvidence, Harness::Demo, Class::Busy, 27),
        (Defect::StaleEvidence, Harness::Claude, Class::Busy, 34),
        (Defect::DropsGrantedFiles, Harness::Demo, Class::Liveness, 1),
        (
            Defect::DropsGrantedFiles,
            Harness::Claude,
            Class::Liveness,
            0,
        ),
        (
            Defect::ClaimsUnreadAtTurnStart,
            Harness::Demo,
            Class::Twice,
            0,
        ),
        // Seed 0 until the engine refused a backlog claim a file handed
        // to a hook since the context began (seed 9361, below).
        (
            Defect::ClaimsUnreadAtTurnStart,
            Harness::Claude,
            Class::Twice,
            2,
        ),
        (Defect::LosesClaimAnswers, Harness::Demo, Class::Liveness, 1),
        (
            Defect::LosesClaimAnswers,
            Harness::Claude,
            Class::Liveness,
            0,
        ),
        (
            Defect::AnswersTwice,
            Harness::Demo,
            Class::HookAnsweredTwice,
            0,
        ),
        (
            Defect::AnswersTwice,
            Harness::Claude,
            Class::HookAnsweredTwice,
            0,
        ),
        // With the wake delivering, the terminal path is idle on Claude:
        // these two are caught where it is used.
        (
            Defect::StampsAnOlderRevision,
            Harness::Demo,
            Class::Liveness,
            0,
        ),
        // Codex on its native idle path: the queue's delivery is the
        // parked call, and nothing is typed while the path is up, so the
        // terminal's readings (a menu, a busy screen, a stale one read as
        // idle) are caught on the other two harnesses; forgetting the
        // native path is caught as the typing it lets through.
        (
            Defect::IgnoresDrafts,
            Harness::Codex,
            Class::WakeOnDraft,
            12,
        ),
        (
            Defect::ForgetsItsNativePath,
            Harness::Codex,
            Class::TypedOnNativePath,
            119,
        ),
        (
            Defect::DropsGrantedFiles,
            Harness::Codex,
            Class::Liveness,
            0,
        ),
        // Seed 0 showed it until a file a prompt of the thread carried
        // was left out of every later hook's injection (issue 36, item
        // 6): there the prompt's own file was said again.
        (
            Defect::ClaimsUnreadAtTurnStart,
            Harness::Codex,
            Class::Twice,
            1,
        ),
        (
            Defect::WakesWithoutFreshIdle,
            Harness::Codex,
            Class::WakeOnDraft,
            10,
        ),
        (
            Defect::LosesClaimAnswers,
            Harness::Codex,
            Class::Liveness,
            0,
        ),
        (
            Defect::AnswersTwice,
            Harness::Codex,
            Class::HookAnsweredTwice,
            0,
        ),
        // A person's keys that waited in the PTY host, written back to
        // back (the real Gemini CLI took such a Return for a newline): on
        // the harnesses whose idle path is the typed notice.
        (
            Defect::BunchesWaitingKeys,
            Harness::Demo,
            Class::KeysBunched,
            17,
        ),
        // Seed 53 showed it first until a new screen was read until it
        // settled whether or not work waits (issue 39): DING's notices
        // then went earlier.
        (
            Defect::BunchesWaitingKeys,
            Harness::Gemini,
            Class::KeysBunched,
            20,
        ),
    ];
    let mut report = Vec::new();
    for (defect, harness, class, seed) in CAUGHT {
        let outcome = run(Scenario::mutated(harness, seed, defect));
        let caught = outcome
            .violations
            .iter()
            .any(|violation| violation.class == class);
        if !caught {
            let first = first_seed_catching(harness, defect, class, 5_000);
            report.push(format!(
                "{defect:?} on {harness:?} as {class:?}: not by seed {seed}; first seed {first:?}"
            ));
        }
        let faithful = run(Scenario {
            defect: None,
            ..Scenario::mutated(harness, seed, defect)
        });
        assert!(
            faithful.violations.is_empty(),
            "seed {seed} on {harness:?} without {defect:?}: {:?}",
            faithful.violations
        );
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// Prints, for each defect, the first seed below 1,500 on which each
/// class shows on each harness: what the table above is kept with
/// (`cargo test --test agent_simulation -- --ignored --nocapture`).
#[test]
#[ignore]
fn print_the_first_seeds_catching_each_defect() {
    for defect in Defect::ALL {
        for harness in Harness::ALL {
            let mut first: Vec<(Class, u64)> = Vec::new();
            for seed in 0..1_500 {
                for violation in run(Scenario::mutated(harness, seed, defect)).violations {
                    if !first.iter().any(|(class, _)| *class == violation.class) {
                        first.push((violation.class, seed));
                    }
                }
            }
            eprintln!("{defect:?} on {harness:?}: {first:?}");
        }
    }
}

/// Real pane, Claude Code (the brief: the wake swallowed a person's keys
/// pressed 20 to 90 ms before its claim), found by the sweep at seed 1073:
/// a file arrives on an idle screen, the person types `c` 240 ms later,
/// and 12 ms after that the wake, due after its settle time, claimed on
/// the reading taken before the key was drawn, and woke a turn under the
/// person's draft. A terminal that moved since the last reading now holds
/// every wake until the screen is read again.
#[test]
fn real_pane_a_key_drawn_after_the_last_reading_holds_the_wake() {
    const SEED: u64 = 1073;
    let outcome = run(Scenario::as_found(Harness::Claude, SEED));
    // Nothing at all: no wake under the draft, and the file still reaches
    // the model (a Liveness violation otherwise), by the wake or a hook.
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
}

/// Real pane, Codex 0.169.0 (issue 20: a queued turn started 6 to 23 ms
/// after the person's first key, which then steered into DING's turn and
/// cost the work a call of its own). Found by the sweep without the quiet
/// rule at seed 548, then 1447, then 61 since arrivals are gathered, now
/// 221 since a new screen is read until it settles whether or not work
/// waits (issue 39): two files wait at an idle Codex, the person presses
/// Backspace on the empty composer just before the parked queue call's
/// claim is due. A parked call waits until the person has been quiet for
/// `quiet-input`: its delivery goes 305 ms after their key, with both.
#[test]
fn real_pane_a_first_key_just_before_a_queued_turn_waits_for_the_persons_quiet() {
    holds_through(
        Harness::Codex,
        221,
        &[
            "2215 arrives m0002.md",
            "2489 person types \"\\u{7f}\"",
            "2794 hook queue answered, naming [\"m0001.md\", \"m0002.md\"]",
            "a queued turn starts on \"[ding] 2 unread",
        ],
    );
}

/// Real pane, Claude Code 2.1.328 (eval row 6, careful arm, 2026-12-06):
/// after the person's last key the screen stopped moving, and the PTY host
/// answered every later read of that revision with the snapshot line it
/// had built once, its clock of then. The machine took each read for new
/// and saw the person as recent as at the first: the wake's claim went
/// out, the reading after its grant said "the person's input came 122 ms
/// ago", and it was withheld every 250 ms for seconds (20 times in a
/// trial). The simulated host now answers as the real one does, and the
/// same last input read again keeps the moment first worked out
/// (`quiet.rs`). At seed 265 (10, then 73, before issue 39's settle
/// and turn quiet moved their moments) three files wait behind the
/// person's draft, which they delete at 4.97 s; the wake goes once they
/// have been quiet for the turn quiet, 1,254 ms later, with all three.
/// Without the rule the files never reach the model (1,140 of the first
/// 20,000 seeds then break an invariant).
#[test]
fn real_pane_a_screen_read_again_shows_the_person_ever_quieter() {
    holds_through(
        Harness::Claude,
        265,
        &[
            "3223 arrives m0003.md",
            "4817 person types \"a\"",
            "4973 person types \"\\u{7f}",
            "6227 hook wake answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\"]",
        ],
    );
}

/// Real pane, Codex 0.169.0 on its terminal path (issue 36, item 7): a
/// resize that nobody answered left Codex waiting for its cursor query and
/// drawing nothing; DING's paste showed up 5-8 s later, after its Return
/// had been withheld, and the person's next prompt went out glued behind
/// it (5 of 5 where the person typed). The PTY host now answers such
/// queries itself, and a notice that shows up alone after its Return was
/// withheld is taken back out with the provider's keys. The world's
/// harness stalls (reads no input) as Codex did, and the person, who
/// resized, waits for the redraw. At Gemini CLI seed 304 (3323 until a
/// new screen was read until it settled whether or not work waits, issue
/// 39) the paste goes at 3.03 s into a stall, its Return is withheld, the
/// notice shows up at 8.59 s and is taken out at 8.83 s; the four files
/// then go in one notice, submitted alone. Without the rule the person's
/// prompt joined the notice at seed 3323 (and at 13 of the first 25,000
/// Gemini seeds and 20 of the first 100,000 others, then).
#[test]
fn real_pane_a_notice_shown_after_its_return_was_withheld_is_taken_back_out() {
    holds_without(
        Harness::Gemini,
        304,
        Class::Draft,
        &[
            "3029 send-if 1 at revision 1 for [MessageName(\"m0001.md\"), MessageName(\"m0002.md\")]",
            "8829 send-if 3 at revision 3 for []",
            "9429 submitted \"[ding] 4 unread",
        ],
    );
}

/// Real pane, Codex 0.169.0 (the queued duplicate after a compaction): a
/// delivery queued through the app-server starts its turn after a
/// `/compact`, and that turn's `SessionStart` (`compact`) asks for the
/// whole unread backlog, the queued files among them; said there too they
/// were in one request twice. At seed 392 (53 from when arrivals were
/// gathered until a new screen was read until it settled whether or not
/// work waits, issue 39; 392 again since) the person compacts, six files
/// go as one queued delivery, and `SessionStart` names none of them.
#[test]
fn real_pane_a_queued_delivery_is_not_said_again_by_the_compacted_backlog() {
    holds_through(
        Harness::Codex,
        392,
        &[
            "person types \"/compact\"",
            "the context is compacted: its prompts stay",
            "a queued turn starts on \"[ding] 6 unread",
            "hook SessionStart answered, naming []",
        ],
    );
}

/// The Return of a typed notice is a phase of its own (issue 20, item 3;
/// on the real panes a key pressed between the paste and the Return was
/// sent with the notice by DING's Return, and since the Return's fence the
/// key joined the notice in the composer, the Return withheld: 14 of 20
/// paste trials on Claude Code, 13 of 20 on Codex). At seed 107 on the
/// demo agent (6 before arrivals were gathered) DING pastes a notice at
/// 3252 ms; its Return is refused at 3453 ms (the paste's draw had not
/// settled), and the person types `x` at 3469 ms. The paste asked the host
/// to hold a person's typed text: the `x` waits, the Return asked again at
/// 3512 ms is compared on the paste's revision and written, the notice
/// goes alone, and the `x` lands after it in the person's own composer.
#[test]
fn a_key_between_the_paste_and_its_return_waits_for_dings_return() {
    holds_without(
        Harness::Demo,
        107,
        Class::Draft,
        &[
            "3252 send-if 1 at revision 1",
            "3453 send-if 2 refused: PtyUnsettled",
            "3469 person types \"x\"",
            "3469 the host holds the key behind DING's paste",
            "3512 send-if 3 at revision 3",
            "3512 the host lets 1 held keys go on: after DING's next transaction",
            "3546 submitted \"[ding] 1 unread inbox message in inbox/new: m0001.md",
        ],
    );
}

/// A key that is not text alone between a paste and its Return (issue 20:
/// on the real panes a person's Backspace or Return in that window left
/// what they had typed glued behind the notice; the simulation's Draft
/// class, known open until the withdraw keys). At seed 244 on the demo
/// agent DING pastes at 8332 ms, the person types `q` at 8448 ms (held
/// behind the paste) and Backspaces at 8537 ms: the host takes the paste
/// back out (Ctrl-U) before the `q` and the Backspaces go on (as far
/// apart as the person typed them), so the person's composer is theirs
/// alone; the notice is pasted again on the next empty idle, at 8924 ms,
/// and at 9176 ms goes alone, naming both files.
#[test]
fn real_pane_a_key_that_is_not_text_between_the_paste_and_its_return_takes_the_paste_back_out() {
    holds_without(
        Harness::Demo,
        244,
        Class::Draft,
        &[
            "8332 send-if 1 at revision 22",
            "8448 the host holds the key behind DING's paste",
            "8537 the host takes DING's paste back out: a person's key that is not text alone",
            "8924 send-if 4 at revision 30",
            "9176 submitted \"[ding] 2 unread inbox messages in inbox/new: m0001.md, m0002",
        ],
    );
}

/// Real pane, Gemini CLI 0.61.0 (found by following the provider page: a
/// person typed `hi` and Return 70 ms apart just after DING's paste; the
/// Return ended the hold, the paste was taken back out, and the held text
/// and the Return were written back to back, which Gemini CLI took for a
/// newline in a paste: the person's line was never sent, 3 of 3). At seed
/// 570 on the Gemini model (326 until a new screen was read until it
/// settled whether or not work waits, issue 39) the person types `q` just
/// after DING's paste (held) and Return 34 ms later: the host takes the
/// paste back out, lets the `q` go on, and the Return as far after it as
/// it was typed; the person's prompt is submitted and the four files ride
/// it. (Since the simulation drives the host's own input order, the key
/// waits behind the withdraw's 100 ms wait before its Ctrl-U, as `ding
/// pty` does it: the simulation's copy wrote the withdraw keys at once.)
#[test]
fn real_pane_held_text_and_the_return_after_it_keep_the_persons_spacing() {
    holds_without(
        Harness::Gemini,
        570,
        Class::KeysBunched,
        &[
            "1546 the host holds the key behind DING's paste",
            "1580 person types \"\\r\"",
            "1580 the host takes DING's paste back out: a person's key that is not text alone",
            "1713 submitted \"q\"",
            "1721 hook BeforeAgent answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\"]",
        ],
    );
}

/// Finds seeds for a named scenario whose seed stopped going through its
/// moments (any change of timing moves them): the first seeds below
/// `DING_AGENT_SIM_FIND_LIMIT` (default 5,000) on `DING_AGENT_SIM_FIND_HARNESS`
/// whose trace holds every `;;`-separated piece of `DING_AGENT_SIM_FIND`,
/// in order and without violations (a piece `+N text` within N ms of the
/// line of the piece before; a piece `!text` on no line before the next
/// piece's), printed with the lines
/// that hold them (`cargo test --test agent_simulation find_seeds --
/// --ignored --nocapture`); `DING_AGENT_SIM_FIND_SEED=S` prints the whole
/// trace of seed S on that harness instead. `DING_AGENT_SIM_FIND_WORLD`
/// picks the world the scenario runs: `on` (the default,
/// [`Scenario::on`]), `random` (the sweep's, its harness the seed's),
/// `as_found` (what [`holds_through`] runs), `as_found_crashes`
/// ([`holds_through_ding_crashes`]), `screens` (the hostile screens'
/// scenarios) or `hooks` (the hostile hooks' scenarios;
/// `DING_AGENT_SIM_FIND_REFUSED=1` lets hooks find no adapter);
/// `DING_AGENT_SIM_FIND_FROM` is the first seed tried, and
/// `DING_AGENT_SIM_FIND_EXACT_COST=1` keeps only seeds whose calls are the
/// fewest (the cost scenarios' check).
#[test]
#[ignore]
fn find_seeds_going_through() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let harness = match var("DING_AGENT_SIM_FIND_HARNESS").as_str() {
        "claude" => Harness::Claude,
        "codex" => Harness::Codex,
        "gemini" => Harness::Gemini,
        "opencode" => Harness::OpenCode,
        _ => Harness::Demo,
    };
    let wanted = var("DING_AGENT_SIM_FIND");
    let pieces: Vec<&str> = wanted
        .split(";;")
        .filter(|piece| !piece.is_empty())
        .collect();
    let world = var("DING_AGENT_SIM_FIND_WORLD");
    let refused = !var("DING_AGENT_SIM_FIND_REFUSED").is_empty();
    let scenario = |seed: u64| match world.as_str() {
        "random" => Scenario::random(seed),
        "as_found" => Scenario {
            ding_crashes: Vec::new(),
            ..Scenario::as_found(harness, seed)
        },
        "as_found_crashes" => Scenario::as_found(harness, seed),
        "screens" => Scenario {
            spread_bursts: false,
            hostile_hooks: false,
            ding_crashes: Vec::new(),
            ..Scenario::on(harness, seed)
        },
        "hooks" => Scenario {
            refused_hooks: refused,
            spread_bursts: false,
            ding_crashes: Vec::new(),
            screens: screens::Plan::default(),
            ..Scenario::on(harness, seed)
        },
        _ => Scenario::on(harness, seed),
    };
    if let Ok(seed) = var("DING_AGENT_SIM_FIND_SEED").parse::<u64>() {
        // One seed in that world, its whole trace.
        print_run(scenario(seed));
        return;
    }
    let from = var("DING_AGENT_SIM_FIND_FROM").parse().unwrap_or(0);
    let exact_cost = !var("DING_AGENT_SIM_FIND_EXACT_COST").is_empty();
    let limit = var("DING_AGENT_SIM_FIND_LIMIT").parse().unwrap_or(5_000);
    let mut found = 0;
    for seed in from..limit {
        let outcome = run(scenario(seed));
        if !outcome.violations.is_empty() || (exact_cost && outcome.calls != outcome.fewest_calls) {
            continue;
        }
        if let Some(matched) = going_through(&outcome.trace, 0, None, &pieces) {
            eprintln!("seed {seed}:");
            for at in matched {
                eprintln!("    {}", outcome.trace[at]);
            }
            found += 1;
            if found == var("DING_AGENT_SIM_FIND_COUNT").parse().unwrap_or(5) {
                break;
            }
        }
    }
}

/// Where `trace`, from line `from`, goes through `pieces` in order (the
/// lines that hold them), `before` the line the piece before held. A
/// piece written `+N text` must hold on a line at most N ms after that
/// one: a race of milliseconds. A piece written `!text` holds on no line
/// between the pieces on either side of it.
fn going_through(
    trace: &[String],
    from: usize,
    before: Option<usize>,
    pieces: &[&str],
) -> Option<Vec<usize>> {
    // Pieces written `!text` forbid that text until the next piece holds.
    let forbidden: Vec<&str> = pieces
        .iter()
        .map_while(|piece| piece.strip_prefix('!'))
        .collect();
    let Some((piece, rest)) = pieces[forbidden.len()..].split_first() else {
        return Some(Vec::new());
    };
    let moment = |at: usize| -> u64 {
        trace[at]
            .split_whitespace()
            .next()
            .and_then(|time| time.parse().ok())
            .unwrap_or(0)
    };
    let bound = |piece: &str| {
        piece
            .strip_prefix('+')
            .and_then(|tail| tail.split_once(' '))
            .and_then(|(ms, text)| Some((ms.parse::<u64>().ok()?, text.to_string())))
    };
    let (within, text) = match bound(piece) {
        Some((ms, text)) => (Some(ms), text),
        None => (None, piece.to_string()),
    };
    // The first line that fits will do unless the next piece is bound to
    // this one's line (a moment, or text forbidden after it): then every
    // line that fits is tried.
    let every = rest
        .first()
        .is_some_and(|next| next.starts_with('!') || bound(next).is_some());
    for at in from..trace.len() {
        if let (Some(ms), Some(before)) = (within, before)
            && moment(at) > moment(before) + ms
        {
            break;
        }
        if forbidden.iter().any(|text| trace[at].contains(text)) {
            break;
        }
        if !trace[at].contains(&text) {
            continue;
        }
        if let Some(tail) = going_through(trace, at + 1, Some(at), rest) {
            return Some([vec![at], tail].concat());
        }
        if !every {
            return None;
        }
    }
    None
}

/// A named scenario of a fixed failure: `harness` at `seed` still goes
/// through the moments `marks` name (each a piece of a trace line), and
/// no violation shows.
/// The worlds pinned before DING's own processes crashed in the
/// simulation keep their stories: their seeds run without those crashes.
fn holds_through(harness: Harness, seed: u64, marks: &[&str]) -> Outcome {
    let scenario = Scenario {
        ding_crashes: Vec::new(),
        ..Scenario::as_found(harness, seed)
    };
    holds_in(scenario, marks)
}

/// [`holds_through`] with the seed's crashes of DING's own processes.
fn holds_through_ding_crashes(harness: Harness, seed: u64, marks: &[&str]) -> Outcome {
    holds_in(Scenario::as_found(harness, seed), marks)
}

fn holds_in(scenario: Scenario, marks: &[&str]) -> Outcome {
    let (harness, seed) = (scenario.harness, scenario.seed);
    let outcome = run(scenario);
    assert!(outcome.violations.is_empty(), "{:?}", outcome.violations);
    let trace = outcome.trace.join("\n");
    if let Some(missing) = first_missing_mark(&outcome.trace, marks) {
        panic!(
            "seed {seed} on {harness:?} no longer goes through {missing:?} (in order):\n{trace}"
        );
    }
    outcome
}

/// The lines of `outcome`'s trace after the first that holds `mark`: what
/// a scenario checks did not happen after a step of its story.
fn trace_after<'t>(outcome: &'t Outcome, mark: &str) -> &'t [String] {
    let at = outcome
        .trace
        .iter()
        .position(|line| line.contains(mark))
        .unwrap_or_else(|| panic!("no {mark:?} in the trace"));
    &outcome.trace[at + 1..]
}

/// The first of `marks` that the trace does not go through, in order.
/// A mark is a step of the story, not a moment: its leading time (`12420
/// person types "p"`) is left out of the match, so that a harmless change
/// of timing keeps the scenario; the order of the steps is kept.
fn first_missing_mark<'m>(trace: &[String], marks: &[&'m str]) -> Option<&'m str> {
    let untimed = |text: &str| -> String {
        let rest = text
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit());
        if rest.len() < text.trim_start().len() && rest.starts_with(' ') {
            rest.trim_start().to_string()
        } else {
            text.trim_start().to_string()
        }
    };
    let lines: Vec<String> = trace.iter().map(|line| untimed(line)).collect();
    let mut from = 0;
    for mark in marks {
        let wanted = untimed(mark);
        match lines[from..].iter().position(|line| line.contains(&wanted)) {
            Some(at) => from += at,
            None => return Some(mark),
        }
    }
    None
}

/// A pinned scenario's marks are steps in order, whatever their moments.
#[test]
fn a_scenario_mark_matches_its_step_at_any_moment_and_in_order() {
    let trace: Vec<String> = [
        "  8871 arrives m0003.md",
        "  9667 person types \"m\"",
        " 10178 submitted \"mvur\"",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        first_missing_mark(&trace, &["8000 arrives m0003.md", "submitted"]),
        None
    );
    assert_eq!(
        first_missing_mark(&trace, &["submitted", "arrives m0003.md"]),
        Some("arrives m0003.md")
    );
    assert_eq!(
        first_missing_mark(&trace, &["person types \"x\""]),
        Some("person types \"x\"")
    );
}

/// Found by the sweep on Codex (seed 3926, then 4502, then 1777 since new
/// screens settle before they count, then 177 since arrivals are
/// gathered, now 1669 since evidence that holds is read again only on an
/// event), the same class on
/// the terminal path: after a `/compact` the notice was typed at the idle
/// screen (no queue call parked yet), and the `SessionStart` (`compact`)
/// of the turn it started asked for the unread backlog, the files just
/// typed among them (three files twice at this seed without the fix). A
/// file rung since the last lifecycle fact is no longer surfaced again
/// (`tests/core_seam.rs::scope_unread_leaves_out_a_file_rung_since_the_context_began_again`).
/// Since the time fence the notice was no longer typed onto the screen
/// the compaction was still drawing, and since the native path holds an
/// idle terminal it is not even asked for: the queue call parked after
/// the compaction carries the three files, and the backlog still names
/// none of them.
#[test]
fn a_notice_after_a_compaction_is_not_said_again_by_its_backlog() {
    holds_without(
        Harness::Codex,
        1669,
        Class::TypedOnNativePath,
        &[
            "hook PostCompact answered",
            "a queued turn starts on \"[ding] 4 unread",
            "hook SessionStart answered, naming []",
        ],
    );
}

/// Real pane, Codex 0.169.0 (issue 20's brief: after a `kill -9` of the
/// launcher's app-server the TUI showed "Reconnecting to server…" forever
/// while status said running, and a message sent 6 s later was claimed by
/// a queue call still parked for the dead path). At seed 197 (99 before
/// arrivals were gathered) the app-server dies at 6.6 s with the thread
/// idle after a turn: the launcher says so (`launch` `native-down`), which
/// ends its parked call; two files arriving 2 s later are held while the
/// TUI reconnects (nothing typed, nothing claimed), and once it is back on
/// the app-server the launcher started again, the new queue call carries
/// them as one queued turn (with a third too, until a new screen was read
/// until it settled whether or not work waits, issue 39: the call then
/// claimed 1.5 s later).
#[test]
fn real_pane_a_dead_app_server_claims_nothing_and_its_successor_delivers() {
    holds_without(
        Harness::Codex,
        197,
        Class::TypedOnNativePath,
        &[
            "6646 hook launch",
            "6654 hook queue answered, naming []",
            "8791 arrives m0001.md",
            "10024 hook queue Peer(11)",
            "10284 hook queue answered, naming [\"m0001.md\", \"m0002.md\"]",
            "a queued turn starts on \"[ding] 2 unread",
        ],
    );
}

/// Found by the sweep (issue 36, item 6: a file reached the model twice,
/// at 11 Codex seeds below 40,000 from 10220; now seed 10517, since a
/// wake waits for a reading after its grant), where the world model was
/// wrong: the person's prompt at 8.1 s gets three files from
/// `SessionStart`, and the turn is lost with its app-server at 8.5 s (no
/// `Stop`: the model archives none of them). The person then runs
/// `/clear`: Codex starts a new thread that holds nothing of the old one
/// (captured on 0.169.0, `fixtures/providers/codex/eval/compaction-0.169.0.jsonl`:
/// the first request after the clear carries only its own prompt), DING
/// reports `clear` and queues the three unread files into it, with four
/// that arrived meanwhile, as CODEX-6 asks. The model was told of them
/// once in each context; the world counted both as one context until a
/// `/clear` began it again, as a crash does.
#[test]
fn files_of_a_turn_lost_with_its_app_server_reach_the_thread_a_clear_begins_once() {
    holds_without(
        Harness::Codex,
        10517,
        Class::Twice,
        &[
            "8113 hook SessionStart answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\"]",
            "8513 hook launch",
            "10705 person types \"/clear\"",
            "the context begins again empty",
            "13516 hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "a queued turn starts on \"[ding] 7 unread",
        ],
    );
}

/// Found by the sweep with the one before (seed 33077; now 22584, since
/// a new screen is read until it settles, issue 39), where the world
/// model was wrong too: the person's prompt at 8.5 s gets four files from
/// `SessionStart`, and that turn is lost with its app-server. After a
/// `/compact`, the next turn's `SessionStart` (`compact`) names them
/// again, as CODEX-6 asks: what a hook injected is a `developer` message,
/// which rides every request only until a compaction or a clear (findings
/// §3), so the compacted context no longer has them. The world kept
/// everything through a compaction; it now keeps the prompts only.
#[test]
fn files_a_hook_injected_into_a_lost_turn_are_said_again_after_a_compaction() {
    holds_without(
        Harness::Codex,
        22584,
        Class::Twice,
        &[
            "8495 submitted \"batvvmd\"",
            "8501 hook SessionStart answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\"]",
            "8959 hook launch",
            "11322 person types \"/compact\"",
            "the context is compacted: its prompts stay",
            "14388 hook SessionStart answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\"]",
        ],
    );
}

/// Found by the sweep with the two before (seed 22760; then 51608, since
/// a wake waits for a reading after its grant; now 31551, since a new
/// screen is read until it settles, issue 39), where DING was wrong: a
/// queued delivery carries files (three here) into a turn that is lost
/// with its app-server, so they stay unread; after the person's `/compact` the
/// next turn's `SessionStart` (`compact`) put the whole unread backlog
/// into the request, those five among them, beside the queued notice
/// itself, which Codex keeps through a compaction (a user message; on
/// 0.169.0 the request after a `/compact` carried the notice of the turn
/// before it, `compaction-0.169.0.jsonl`): those files twice in one
/// request. A file a prompt of the thread carried is now left out of
/// every later hook's injection until the context begins again
/// (`src/providers/codex/adapter.rs::a_file_a_prompt_of_the_thread_carried_is_not_said_again_by_the_compacted_backlog`).
#[test]
fn a_queued_notice_kept_through_a_compaction_is_not_said_again_by_its_backlog() {
    holds_without(
        Harness::Codex,
        31551,
        Class::Twice,
        &[
            "2400 hook queue answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\"]",
            "2431 a queued turn starts on \"[ding] 3 unread",
            "4625 hook launch",
            "7296 person types \"/compact\"",
            "the context is compacted: its prompts stay",
            "10042 hook queue answered, naming [\"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "10072 a queued turn starts on \"[ding] 4 unread",
            "10086 hook SessionStart answered, naming []",
        ],
    );
}

/// Real pane, Codex 0.169.0 in its default setup (issue 20's brief: any
/// message waiting at startup, resume or crash restart was typed, 190 to
/// 274 bytes, 20 of 20, although the queue serves every later message
/// with none). The sweep found it at seed 32: the restarted TUI drew its
/// composer before the new launcher's first `queue` call, and DING asked
/// to type onto it (and between two launcher calls after a turn, at seed
/// 74). The native path now holds an idle terminal until its launcher
/// reports and whenever it is between calls, and a new screen counts as
/// idle only once it settled. At seed 3 a file waits when Codex crashes;
/// the restarted one gets it, and one that arrives meanwhile, as one
/// queued turn, 0 bytes typed.
#[test]
fn real_pane_a_backlog_after_a_restart_goes_through_the_queue() {
    holds_without(
        Harness::Codex,
        3,
        Class::TypedOnNativePath,
        &[
            "arrives m0001.md",
            "the harness crashes and starts again as i2",
            "hook queue answered, naming [\"m0001.md\", \"m0002.md\"]",
            "a queued turn starts on \"[ding] 2 unread",
        ],
    );
    for seed in [32, 74] {
        holds_without(Harness::Codex, seed, Class::TypedOnNativePath, &[]);
    }
}

/// Real pane, Codex 0.169.0 in its default setup (issue 20's brief: DING's
/// Return opened the hook-review dialog, 3 of 3): a file waits at start,
/// no queue call is parked yet, and the notice was typed on the first
/// composer frame; the person's own untrusted hook makes Codex draw its
/// "Hooks need review" modal between the paste and the Return, which then
/// answered it, and the notice sat behind the dialog. The time fence then
/// refused that first composer frame (drawn 6 ms before); since the
/// native path holds an idle terminal until the launcher reports (issue
/// 20, item 6) nothing is even asked to be typed: the modal comes, and the
/// file goes through Codex's own queue once the person answered it, 0
/// bytes typed, no key into the dialog. (Found at seed 8465, where the
/// modal no longer opens before the backlog's turn since the app-server
/// can die in the simulation; at seed 81 files arrive with the modal
/// open, and the person closes it.)
#[test]
fn real_pane_the_startup_backlog_waits_for_the_hooks_review_modal() {
    holds_without(
        Harness::Codex,
        81,
        Class::TypedOnNativePath,
        &[
            "1033 arrives m0001.md",
            "2727 person types \"2\"",
            "a queued turn starts on \"[ding] 3 unread",
        ],
    );
    holds_without(Harness::Codex, 8465, Class::Dialog, &[]);
}

/// Real pane, Claude Code 2.1.328 (issue 21: two messages 0.3 to 0.7 s
/// apart at an idle session cost two wakes, 4 of 4; with gathering off,
/// two 0.8 s apart still do, in
/// `tests/providers_claude_careful_real_pane.rs::two_messages_apart_at_a_settled_idle_are_one_wake_and_one_model_call`).
/// At seed 301 two files arrive 510 ms apart at an idle Claude:
/// the gather waits until none came for a second, and one wake names
/// both, for one model call.
#[test]
fn real_pane_two_messages_half_a_second_apart_are_one_wake() {
    let outcome = holds_through(
        Harness::Claude,
        301,
        &[
            "1523 arrives m0001.md",
            "2033 arrives m0002.md",
            "3788 hook wake answered, naming [\"m0001.md\", \"m0002.md\"]",
        ],
    );
    let wakes = outcome
        .trace
        .iter()
        .filter(|line| {
            line.contains("hook wake answered, naming [")
                && (line.contains("m0001.md") || line.contains("m0002.md"))
        })
        .count();
    assert_eq!(wakes, 1, "one wake for both");
}

/// Real pane, Claude Code 2.1.328 (found while capturing the evaluation's
/// dialogs): once a session has a name (`/rename NAME`, or the one Claude
/// Code asks the model for after a plan is approved), its composer's top
/// rule ends with the name, and the screen grammar found no composer: an
/// idle session never read as idle, so no wake and no typed notice ever
/// went. Odd seeds draw a named session; at seed 11 a file arrives at idle
/// and the wake delivers it.
#[test]
fn real_pane_a_named_session_still_reads_as_idle() {
    holds_through(
        Harness::Claude,
        11,
        &[
            "arrives m0001.md",
            "hook wake answered, naming [\"m0001.md\"",
        ],
    );
}

/// Real pane, Claude Code 2.1.328 (issue 21, row 3 of the evaluation,
/// seeds 4244 and 4246): a message just after the person's Return missed
/// the turn's `UserPromptSubmit`, and `Stop` continued the turn with it,
/// at the aggressive arm's price, but as a `{"decision":"block"}` whose
/// reason Claude Code puts into the continuation twice ("Stop hook
/// feedback" and "Stop hook blocking error"): every filename read twice.
/// `additionalContext` continues it with one copy. At seed 1 the turn's
/// `Stop` carries a file; as a block it reaches the model twice.
#[test]
fn real_pane_a_stop_continuation_reads_the_notice_once() {
    holds_without(
        Harness::Claude,
        1,
        Class::Twice,
        &["hook Stop answered, naming [\"m0001.md\"]"],
    );
}

/// Real pane, Claude Code 2.1.328 (issue 21, row 9 of the evaluation):
/// after a `/compact`, `SessionStart` (`compact`) claimed the whole unread
/// backlog, new files included, into a compacted context that no request
/// carried until the person's next prompt. At seed 244 (0 since arrivals
/// are gathered) a file arrives as the person starts typing `/compact`;
/// with scope `unread` the hook took it and, the person quiet after, it
/// never reached the model. Scope `delivered` leaves it to the wake,
/// which starts the turn at once.
#[test]
fn real_pane_files_arriving_around_a_compaction_are_left_to_the_wake() {
    holds_without(
        Harness::Claude,
        0,
        Class::Liveness,
        &[
            "17001 arrives m0001.md",
            "17981 person types \"/compact\"",
            "19768 hook SessionStart answered, naming []",
            "20029 hook wake answered, naming [\"m0001.md\"]",
        ],
    );
}

/// The cost oracle's own story, as a property of every seed rather than
/// one: five files a sender's loop spreads over up to four seconds (each
/// less than a second after the one before) reach an idle harness whose
/// person is quiet. On every harness, in each of 200 worlds, DING
/// delivers the whole burst in one model call, which is never more than
/// the fewest a person who knew the arrivals would make: the gather
/// waits while they keep coming. (`Mutation::NoGather` spends a call per
/// file here.)
#[test]
fn a_burst_spread_over_seconds_at_an_idle_harness_costs_one_call() {
    for harness in [
        Harness::Demo,
        Harness::Claude,
        Harness::Codex,
        Harness::Gemini,
    ] {
        for seed in 0..200 {
            let scenario = Scenario {
                arrivals: vec![(4_000, 5)],
                quiet_at_ms: 100,
                eagerness: 0,
                restart_at_ms: None,
                stall: None,
                spread_bursts: true,
                // Hooks that fail cost calls of their own: the gather's
                // property is of a faithful harness.
                hostile_hooks: false,
                ding_crashes: Vec::new(),
                screens: screens::Plan::default(),
                ..Scenario::on(harness, seed)
            };
            let outcome = run(scenario);
            assert!(
                outcome.violations.is_empty(),
                "seed {seed} on {harness:?}: {:?}",
                outcome.violations
            );
            assert!(
                outcome.calls == 1 && outcome.fewest_calls >= 1,
                "seed {seed} on {harness:?}: {} calls, the fewest {}",
                outcome.calls,
                outcome.fewest_calls
            );
        }
    }
}

/// Found by the merged hostile worlds (issue 38, Gemini seed 22920): a
/// notice of six long-named files, pasted as the harness stalled, drew
/// only after its Return was withheld; DING took it back out, and the
/// first reading after the withdraw keys was a screen its grammar could
/// not read (`unknown`). The engine took that for a turn that might carry
/// the notice and forgot the files it owed to the next empty composer:
/// they stayed staged, never rung again. A screen read as `unknown` is no
/// turn: the next empty composer gives them back, and one notice carries
/// all seven files. (Since a new screen is read until it settles whether
/// or not work waits, issue 39, four of the files first go to the
/// harness that crashes at 9.16 s; the story is the notice after it, its
/// fourth send-if.)
#[test]
fn a_notice_taken_back_out_is_owed_again_through_a_screen_read_as_unknown() {
    holds_in(
        Scenario::on(Harness::Gemini, 22920),
        &[
            "the harness crashes and starts again as i3",
            "send-if 4 at revision 13 for [MessageName(\"m0001-from",
            "send-if 6 at revision 15 for []",
            "submitted \"[ding] 7 unread inbox messages in inbox/new: m0001-from",
        ],
    );
}

/// Found by the Gemini sweep of a clean CI run once Gemini CLI's startup
/// settle was 400 ms (issue 39; seed 14440): the harness crashed and
/// started again while DING's notice waited for its Return, the person
/// typed `h` into the new program, and the PTY host held it behind the
/// dead paste until DING's next transaction, which was the new program's
/// notice: `h` joined it, and the person's Return sent both. A paste of
/// DING's own is not the Return a hold waits for: the held key goes
/// first, the new paste's compare refuses it, and the person's `h` goes
/// alone with the files riding its hook.
#[test]
fn a_key_held_behind_a_paste_the_harness_lost_goes_before_dings_next_one() {
    let outcome = holds_in(
        Scenario::on(Harness::Gemini, 14440),
        &[
            "send-if 1 at revision 16 for [MessageName(\"m0001.md\")",
            "the harness crashes and starts again as i2",
            "person types \"h\"",
            "the host holds the key behind DING's paste",
            "the host lets 1 held keys go on: before DING's next paste",
            "send-if 2 refused: revision",
            "submitted \"h\"",
            "hook BeforeAgent answered, naming [\"m0001.md\"",
        ],
    );
    assert!(
        !trace_after(&outcome, "the harness crashes and starts again as i2")
            .iter()
            .any(|line| line.contains("submitted \"[ding]")),
        "no notice submitted after the restart"
    );
}

/// Found by DING's own crashes once no kill was spared (seed 56049 of the
/// agent sweep): a notice was pasted as the harness stopped reading its
/// input, and DING's adapter died while it awaited its Return. The
/// successor read the paste's own revision with an empty composer (the
/// harness had drawn nothing since), and once the Return was withheld a
/// new notice rang onto the one not drawn yet. Nothing is rung now on a
/// reading no later than a withheld paste until a screen showed it.
#[test]
fn a_new_notice_waits_while_a_withheld_one_is_not_drawn_yet() {
    holds_in(
        Scenario::random(56049),
        &[
            "send-if 1 at revision 1 for [MessageName(\"m0001.md\"), MessageName(\"m0002.md\")]",
            "DING's adapter is killed",
            "adapter spawned",
        ],
    );
}
