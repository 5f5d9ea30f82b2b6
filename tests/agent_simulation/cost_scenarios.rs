//! Named scenarios of the cost oracle (`world/cost.rs`): one per story the
//! first soak of this round found in its `Cost` seeds (docs/simulation.md,
//! "Soak"), each on the seed that shows it, checked by the steps it goes
//! through, by the invariants (the cost oracle among them), and by the
//! calls DING made against the fewest.

use super::holds_in;
use crate::world::{Harness, Outcome, Scenario};

/// The leading moment of the first line of `outcome`'s trace that holds
/// `mark`.
fn moment_of(outcome: &Outcome, mark: &str) -> u64 {
    let line = outcome
        .trace
        .iter()
        .find(|line| line.contains(mark))
        .unwrap_or_else(|| panic!("no {mark:?} in the trace"));
    line.split_whitespace()
        .next()
        .and_then(|moment| moment.parse().ok())
        .unwrap_or_else(|| panic!("no moment in {line:?}"))
}

/// Agent seed 888873 (the demo agent; and 121069, 203458, 380945,
/// 863592, 888724, Gemini 97396): DING's sidecar is killed after a file
/// arrived, and the person's prompt goes just after it starts again. The
/// simulation's sidecar started again answered that prompt's hook before
/// it listed the inbox, with nothing, and the turn's end then paid a call
/// for the file. The real sidecar lists `new/` before its loop reads a
/// line of its adapter's (`sidecar::runtime::start`), so a claim always
/// finds the inbox read: the world now scans at the start, and the
/// prompt's hook carries the file, at no call of DING's.
#[test]
fn a_sidecar_started_again_has_read_the_inbox_before_it_answers_a_hook() {
    let outcome = holds_in(
        Scenario::random(888873),
        &[
            "arrives m0001.md",
            "DING's sidecar is killed and starts again from its journal",
            "submitted \"c\"",
            "hook turn-start answered, naming [\"m0001.md\"]",
        ],
    );
    assert_eq!(outcome.calls, 0, "{:#?}", outcome.trace);
}

/// Agent seed 667746 (the demo agent; and 253239, 676011, 791373): a file
/// arrives during a turn; the turn's end is answered with it (a call of
/// DING's) in the very millisecond the person's prompt goes. The oracle
/// took that prompt, asked after the turn's end, for a request the file's
/// window (closed by that end) could ride. A turn's end now closes a
/// window before the next turn's requests of the same millisecond, so the
/// continuation is the fewest, as it is when the prompt comes a
/// millisecond later.
#[test]
fn a_prompt_in_the_millisecond_of_a_turns_end_is_the_next_turns() {
    let outcome = holds_in(
        Scenario::random(667746),
        &[
            "arrives m0002.md",
            "a turn ends",
            "hook turn-end answered, naming [\"m0002.md\"]",
            "submitted \"hzb\"",
        ],
    );
    assert_eq!(
        moment_of(&outcome, "hook turn-end answered, naming [\"m0002.md\"]"),
        moment_of(&outcome, "submitted \"hzb\""),
        "the story is a prompt in the millisecond of the turn's end"
    );
    assert_eq!(outcome.calls, outcome.fewest_calls, "{:#?}", outcome.trace);
}

/// Gemini seed 102234 (now 536374, since a new screen is read until it
/// settles whether or not work waits, issue 39): the turn's `AfterAgent`
/// runs twice; one answer carries a file that arrived between the two,
/// and the turn goes on (a call of DING's) and runs a tool. The oracle
/// took the tool's result, a request of the turn DING continued, for a
/// free request of the person's, which would not have been made without
/// DING's call. The
/// requests that follow a continuation are DING's now, as those of a
/// turn of its own are.
#[test]
fn the_requests_of_a_turn_ding_continued_are_not_the_persons() {
    let outcome = holds_in(
        Scenario::on(Harness::Gemini, 536374),
        &[
            "hook AfterAgent",
            "runs twice, as",
            "arrives m0003.md",
            "hook AfterAgent answered, naming [\"m0003.md\"]",
            "hook BeforeAgent",
            "hook BeforeTool",
            "hook AfterTool",
        ],
    );
    assert_eq!(outcome.calls, outcome.fewest_calls, "{:#?}", outcome.trace);
}

/// Agent seed 570147 (the demo agent; and Gemini 156122): a turn's end
/// is answered with four files, and DING's sidecar is killed before the
/// hook's receipt reached it: the journal holds them in doubt, and the
/// sidecar started again rings them again (at least once, HARD-22), a
/// call no request of the person's could spare. A repeat a crash of
/// DING's allowed now has a window of its own, from that crash, and only
/// when it happened.
#[test]
fn a_file_a_crash_left_in_doubt_is_owed_a_call_again() {
    let outcome = holds_in(
        Scenario::random(570147),
        &[
            "hook turn-end answered, naming [\"m0004.md\", \"m0005.md\", \"m0006.md\", \"m0007.md\"]",
            "DING's sidecar is killed and starts again from its journal",
            "submitted \"[ding] 4 unread inbox messages in inbox/new: m0004.md",
        ],
    );
    assert_eq!(outcome.calls, 3, "{:#?}", outcome.trace);
    assert_eq!(outcome.fewest_calls, 3, "{:#?}", outcome.trace);
}

/// Agent seed 606152 (Codex): DING's adapter is killed; the person's
/// prompt goes before its successor is spawned, and its
/// `UserPromptSubmit` finds no adapter. The launcher called DING between
/// that hook and the request it held back, and the oracle took the
/// launcher's call for the hook the request waited for: a free request.
/// A request now waits for the harness's own hook only.
#[test]
fn a_launchers_call_is_not_the_hook_a_request_waits_for() {
    let outcome = holds_in(
        Scenario::random(606152),
        &[
            "DING's adapter is killed",
            "arrives m0001.md",
            "hook UserPromptSubmit",
            "hook queue",
            "answers nothing: no adapter listens",
            "hook Stop answered, naming [\"m0001.md\", \"m0002.md\"]",
        ],
    );
    assert_eq!(outcome.calls, outcome.fewest_calls, "{:#?}", outcome.trace);
}
