//! Named scenarios of the OpenCode model (`opencode_harness.rs`, DING's
//! plugins as `opencode_plugins.rs`): one per story of the native idle
//! path, in the worlds as first found (`Scenario::as_found`, without DING's
//! own crashes), and the seeds of the sweep that found DING's bugs, in
//! the sweep's own worlds. In each, DING never types into OpenCode: the
//! world's `TypedOnNativePath` would say so.

use super::{first_seed_catching, holds_in, holds_through, trace_after};
use crate::mutant::Defect;
use crate::world::{Class, Harness, Scenario, run};

/// A burst at an idle session is one delivery: two files arrive in the
/// same millisecond, the TUI plugin's parked `queue` call is answered once
/// with both, and its `promptAsync` starts one turn (OpenCode seed 26).
#[test]
fn a_burst_at_an_idle_opencode_is_one_delivery() {
    let outcome = holds_through(
        Harness::OpenCode,
        26,
        &[
            "4612 arrives m0001.md",
            "4612 arrives m0002.md",
            "hook queue answered, naming [\"m0001.md\", \"m0002.md\"]",
            "a queued turn starts on \"[ding] 2 unread",
        ],
    );
    let deliveries = outcome
        .trace
        .iter()
        .filter(|line| line.contains("hook queue answered, naming [\"m0001.md\""))
        .count();
    assert_eq!(deliveries, 1, "one delivery for the burst");
}

/// A draft holds, and the person's own prompt carries the work: the
/// person typed on the home screen before OpenCode drew it, a file
/// arrives, and while the draft is there nothing is delivered; their
/// Return creates the session, and its `chat.message` adds the file to
/// that very prompt, at no call of DING's (OpenCode seed 406).
#[test]
fn an_opencode_draft_holds_and_the_persons_prompt_carries_the_work() {
    let outcome = holds_through(
        Harness::OpenCode,
        406,
        &[
            "person types \"q\"",
            "arrives m0001.md",
            "hook queue Peer(3)",
            "person types \"\\r\"",
            "hook chat.message answered, naming [\"m0001.md\"]",
            "submitted \"qqw\"",
        ],
    );
    let before: Vec<&String> = outcome
        .trace
        .iter()
        .take_while(|line| !line.contains("submitted \"qqw\""))
        .filter(|line| line.contains("hook queue answered, naming [\""))
        .collect();
    assert!(before.is_empty(), "delivered onto the draft: {before:?}");
}

/// The permission dialog is never answered by DING (its Enter allows): a
/// file arrives while it is open, nothing is delivered until the person
/// allows, and the tool's result carries the file, no extra call
/// (OpenCode seed 658).
#[test]
fn an_opencode_permission_dialog_is_never_answered() {
    let outcome = holds_through(
        Harness::OpenCode,
        658,
        &[
            "hook permission.asked",
            "arrives m0001.md",
            "person types \"\\r\"",
            "hook permission.replied",
            "hook tool.execute.after answered, naming [\"m0001.md\"]",
        ],
    );
    let asked = trace_after(&outcome, "arrives m0001.md");
    let replied = asked
        .iter()
        .position(|line| line.contains("hook permission.replied"))
        .expect("replied");
    assert!(
        asked[..replied]
            .iter()
            .all(|line| !line.contains("hook queue answered, naming [\"")),
        "delivered under the dialog"
    );
}

/// The startup backlog on the home screen: a file arrives before
/// OpenCode drew its first frame; the TUI plugin's first report is the
/// home screen (`new`), and the delivery creates a session, shows it and
/// starts its first turn there (OpenCode seed 2).
#[test]
fn the_opencode_startup_backlog_goes_through_a_new_session() {
    let outcome = holds_through(
        Harness::OpenCode,
        2,
        &[
            "arrives m0001.md",
            "hook plugin.loaded Peer(2)",
            "hook queue Peer(3)",
            "hook queue answered, naming [\"m0001.md\"]",
            "a queued turn starts on \"[ding] 1 unread",
        ],
    );
    let prompts = trace_after(&outcome, "arrives m0001.md");
    let started = prompts
        .iter()
        .position(|line| line.contains("a queued turn starts"))
        .expect("started");
    assert!(
        prompts[..started]
            .iter()
            .all(|line| !line.contains("submitted")),
        "the person prompted first"
    );
}

/// Found by the sweep at OpenCode seed 1 (Twice): the person's first
/// prompt on the home screen carried four files; the TUI plugin's next
/// report named the session that prompt created, which the adapter took
/// for another session (a `clear`), and the files were given back and
/// said again in that same context. From the home screen to the session
/// its prompt created is no clear (`providers::opencode::plugins::NEW_SESSION`).
#[test]
fn the_session_a_home_screen_prompt_created_keeps_its_context() {
    holds_in(
        Scenario::on(Harness::OpenCode, 1),
        &[
            "hook chat.message answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\"]",
            "submitted \"fmjyrb\"",
            "hook chat.message answered, naming [\"m0005.md\"]",
        ],
    );
}

/// Found by the sweep at OpenCode seed 7 (Liveness): a rejected
/// permission ends the turn; the TUI plugin's `permission.replied` (a
/// turn runs) reached the adapter after its `session.status` idle, ended
/// its parked `queue` call, and the plugin, answered `declined`, offered
/// nothing again: no later event came, and two files waited for good.
/// The plugin now offers again after a declined park; the adapter parks it
/// while the session is idle.
#[test]
fn a_park_a_late_permission_reply_declined_is_offered_again() {
    holds_in(
        Scenario::on(Harness::OpenCode, 7),
        &[
            "hook permission.asked",
            "hook permission.replied Peer(12)",
            "hook permission.replied answered",
            "hook queue answered, naming [\"m0004.md\", \"m0005.md\"]",
            "a queued turn starts on \"[ding] 2 unread",
        ],
    );
}

/// Found by the sweep at OpenCode seed 7686 (Liveness): the person's
/// prompt, typed during a turn, waited behind it with a file its
/// `chat.message` added; the person then rejected the turn's permission,
/// which strands what waits (opencode-findings.md 4.3), and the file
/// never reached the model. The server plugin now says a prompt is
/// `queued` when its session runs a turn, and nothing rides it: the file
/// goes by the idle path, whose request also carries the stranded prompt.
#[test]
fn nothing_rides_a_prompt_queued_behind_an_opencode_turn() {
    holds_in(
        Scenario::on(Harness::OpenCode, 7686),
        &[
            "person types \"\\r\"",
            "hook permission.asked",
            "hook queue answered, naming [\"m0002.md\"]",
            "submitted \"pgruw\"",
            "a queued turn starts on \"[ding] 1 unread",
        ],
    );
}

/// Prints, for each deliberate defect of `mutant.rs`, the first seed of
/// the OpenCode model on which each class of violation shows (`cargo test
/// --profile sim --test agent_simulation -- --ignored --nocapture
/// print_the_first_opencode_seeds_catching_each_defect`).
#[test]
#[ignore]
fn print_the_first_opencode_seeds_catching_each_defect() {
    for defect in Defect::ALL {
        let mut first: Vec<(Class, u64)> = Vec::new();
        for seed in 0..1_500 {
            let scenario = Scenario::mutated(Harness::OpenCode, seed, defect);
            for violation in run(scenario).violations {
                if !first.iter().any(|(class, _)| *class == violation.class) {
                    first.push((violation.class, seed));
                }
            }
        }
        eprintln!("{defect:?} on OpenCode: {first:?}");
    }
}

/// The deliberate defects of `mutant.rs` the OpenCode sweep catches, each
/// on the first seed it shows as its class (and DING as it is passes that
/// seed). Not caught here, and why: `ClaimsUnreadAtTurnStart` and
/// `InjectsQueuedWorkAgain` are planted on other providers' hooks only;
/// the two revision stamps and `BunchesWaitingKeys` act on typed notices
/// and the keys held behind them, and DING types nothing into OpenCode.
#[test]
fn the_opencode_sweep_catches_the_deliberate_defects() {
    const CAUGHT: [(Defect, Class, u64); 9] = [
        (Defect::IgnoresDrafts, Class::WakeOnDraft, 1),
        (Defect::MenuIsIdle, Class::Dialog, 10),
        (Defect::BusyIsIdle, Class::Cost, 45),
        (Defect::StaleEvidence, Class::Liveness, 0),
        (Defect::DropsGrantedFiles, Class::Liveness, 0),
        (Defect::WakesWithoutFreshIdle, Class::WakeOnDraft, 1),
        (Defect::LosesClaimAnswers, Class::HookUnanswered, 0),
        (Defect::AnswersTwice, Class::HookAnsweredTwice, 0),
        (Defect::ForgetsItsNativePath, Class::TypedOnNativePath, 107),
    ];
    for (defect, class, seed) in CAUGHT {
        assert_eq!(
            first_seed_catching(Harness::OpenCode, defect, class, seed + 1),
            Some(seed),
            "{defect:?} as {class:?}"
        );
        let faithful = Scenario {
            defect: None,
            ..Scenario::mutated(Harness::OpenCode, seed, defect)
        };
        assert!(run(faithful).violations.is_empty(), "seed {seed}");
    }
}
