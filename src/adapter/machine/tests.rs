//! The machine's rules, one at a time, with time as a plain number.

use std::path::PathBuf;
use std::time::Duration;

use crate::adapter::hook_wire::{HookAnswer, HookCall, HookRefusal};
use crate::adapter::screen::{self, testing};
use crate::adapter::timing::{
    CLAIM_DEADLINE, HEARTBEAT, MIN_SNAPSHOT_GAP, PTY_RETRY, RECEIPT_DEADLINE,
};
use crate::adapter::{
    AgentContext, ClaimRequest, HookAction, HookPlan, Park, ParkAnswer, Provider, Reading,
    SettingsRead,
};
use crate::core::downlink::{ClaimRefusal, Claimed, Downlink};
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::{
    ActivityState, Body, ClaimScope, ClaimWants, Composer, MAX_FIELD_BYTES, Undelivered, parse_line,
};
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

use super::*;

/// A provider whose screen is idle with an empty composer, that claims on
/// `claim`, parks a wake that holds the terminal on `wake`, and records
/// what it was told.
#[derive(Default)]
struct Probe {
    new_terminals: Vec<Option<String>>,
    screen: Option<Reading>,
    /// Settings files it checks, and what it was given of them.
    settings: Vec<PathBuf>,
    settings_read: Vec<SettingsRead>,
    /// What it reads in the composer (the default reads nothing).
    composer: Option<String>,
    /// Why its native idle path holds an idle terminal, if it does.
    native_holds: Option<&'static str>,
    /// How long a new screen must read idle before it counts.
    startup_settle: Duration,
    /// When its verdict changes with time alone, if it does.
    changes_at: Option<Time>,
}

impl Provider for Probe {
    fn name(&self) -> &'static str {
        "test"
    }

    fn evidence(&mut self, _snapshot: &Snapshot, _now: Time) -> Reading {
        self.screen.clone().unwrap_or(Reading {
            state: ActivityState::Idle,
            composer: Composer::Empty,
            reason: "ready".into(),
        })
    }

    fn verdict_changes_at(&self, now: Time) -> Option<Time> {
        self.changes_at.filter(|at| *at > now)
    }

    fn composer_content(&self, _snapshot: &Snapshot) -> screen::ComposerContent {
        match &self.composer {
            Some(text) => screen::ComposerContent::Text(text.clone()),
            None => screen::ComposerContent::Unreadable,
        }
    }

    fn on_new_terminal(&mut self, identity: Option<&Identity>, _now: Time) {
        self.new_terminals
            .push(identity.map(|identity| identity.incarnation.clone()));
    }

    fn on_hook(&mut self, call: &HookCall, _agent: &AgentContext, _now: Time) -> HookPlan {
        let claim = ClaimRequest {
            wants: ClaimWants::Oldest(1),
            scope: ClaimScope::Pending,
            name_bytes: None,
        };
        match call.event.as_str() {
            "claim" => HookPlan::act(HookAction::Claim(claim)),
            "turn-end" => HookPlan::act(HookAction::ClaimUnlessDrafting(claim)),
            "session" => HookPlan {
                recheck_settings: true,
                ..HookPlan::nothing()
            },
            "wake" => HookPlan::act(HookAction::Park(Park {
                slot: "wake",
                claim,
                settle: Duration::from_millis(100),
                hold_for: Duration::from_secs(60),
                holds_terminal: true,
                waits_for_fresh_idle: true,
            })),
            _ => HookPlan::nothing(),
        }
    }

    fn on_claimed(
        &mut self,
        _call: &HookCall,
        claimed: &Claimed,
        _agent: &AgentContext,
        _now: Time,
    ) -> HookAnswer {
        HookAnswer {
            stdout: format!("{} file(s)", claimed.granted.len()),
            ..HookAnswer::default()
        }
    }

    fn settings_files(&self) -> Vec<PathBuf> {
        self.settings.clone()
    }

    fn native_path_holds(&self) -> Option<String> {
        self.native_holds.map(String::from)
    }

    fn startup_settle(&self) -> Duration {
        self.startup_settle
    }

    fn on_settings_read(&mut self, read: &[SettingsRead]) {
        self.settings_read.extend_from_slice(read);
    }
}

fn agent() -> AgentContext {
    AgentContext {
        agent: "w".into(),
        inbox: PathBuf::from("/inbox"),
    }
}

fn at(millis: u64) -> Time {
    Time::from_millis(millis)
}

fn identity(incarnation: &str) -> Identity {
    Identity {
        session: "s".into(),
        incarnation: incarnation.into(),
        generation: "g".into(),
    }
}

fn machine() -> Machine<Probe> {
    Machine::new(
        Probe::default(),
        agent(),
        Pacing::default(),
        Some(identity("i")),
        true,
        Time::ZERO,
    )
}

fn drain(machine: &mut Machine<Probe>) -> Vec<Output> {
    std::iter::from_fn(|| machine.poll_output()).collect()
}

fn downlink(line: Downlink) -> Input {
    Input::Downlink(format!("{}\n", line.to_line()).into_bytes())
}

fn wanted(wanted: bool) -> Input {
    downlink(Downlink::Evidence { wanted })
}

fn answer(claim: u64, granted: &[&str], refusal: Option<ClaimRefusal>) -> Input {
    downlink(Downlink::Claimed(Claimed {
        claim,
        granted: granted
            .iter()
            .map(|name| MessageName::new(name).expect("name"))
            .collect(),
        refused: Vec::new(),
        refusal,
        not_granted: 0,
    }))
}

fn claimed(claim: u64, granted: &[&str]) -> Input {
    answer(claim, granted, None)
}

fn hook(event: &str) -> Vec<u8> {
    serde_json::json!({
        "v": 1, "provider": "test", "event": event, "payload": null,
        "identity": {"session": "s", "incarnation": "i", "generation": "g"},
    })
    .to_string()
    .into_bytes()
}

/// `peer`'s hook call of `event` arrives at `now`.
fn call(machine: &mut Machine<Probe>, peer: usize, event: &str, now: Time) {
    let line = hook(event);
    machine.handle_input(
        Input::HookCall {
            peer: Peer(peer),
            line,
        },
        now,
    );
}

/// [`call`] for a call the provider parks: the machine logs it, with the
/// probe's 60 s hold, and says nothing else.
fn park(machine: &mut Machine<Probe>, peer: usize, event: &str, now: Time) {
    call(machine, peer, event, now);
    assert_eq!(
        drain(machine),
        [Output::Log(format!(
            "{event}: parked in slot {event} for at most 60000 ms"
        ))]
    );
}

fn snapshot(revision: u64) -> Input {
    let mut snapshot = testing::snapshot(10, &["ready"], Vec::new(), None);
    snapshot.revision = revision;
    Input::PtySnapshot(Box::new(snapshot))
}

/// The uplink lines among `outputs`, parsed.
fn uplinked(outputs: &[Output]) -> Vec<Body<'_>> {
    outputs
        .iter()
        .filter_map(|output| match output {
            Output::Uplink(line) => Some(parse_line(line.as_bytes()).expect("parses").body),
            _ => None,
        })
        .collect()
}

/// Evidence wanted, the PTY open, and the first snapshot asked for.
fn wanted_and_open(machine: &mut Machine<Probe>, now: Time) {
    machine.handle_input(wanted(true), now);
    assert_eq!(drain(machine), [Output::PtyOpen]);
    machine.handle_input(Input::PtyOpened, now);
    assert_eq!(drain(machine), [Output::PtySnapshot]);
}

/// A provider reads no file: the shell reads its settings files at start
/// and whenever a hook's plan asks, and the machine hands them over.
#[test]
fn settings_files_are_read_by_the_shell_at_start_and_when_a_plan_asks() {
    let path = PathBuf::from("/home/settings.json");
    let probe = Probe {
        settings: vec![path.clone()],
        ..Probe::default()
    };
    let mut machine = Machine::new(
        probe,
        agent(),
        Pacing::default(),
        Some(identity("i")),
        true,
        Time::ZERO,
    );
    assert_eq!(
        drain(&mut machine),
        [Output::ReadSettings(vec![path.clone()])]
    );
    let read = SettingsRead {
        path: path.clone(),
        settings: Ok(serde_json::json!({"hooks": {}})),
    };
    machine.handle_input(Input::SettingsRead(vec![read.clone()]), at(1));
    assert_eq!(machine.provider.settings_read, [read]);
    call(&mut machine, 1, "claim", at(2));
    assert!(
        !drain(&mut machine)
            .iter()
            .any(|output| matches!(output, Output::ReadSettings(_))),
        "only a plan that asks reads them again"
    );
    call(&mut machine, 2, "session", at(3));
    assert!(
        drain(&mut machine).contains(&Output::ReadSettings(vec![path])),
        "a new session may follow an edit"
    );
    // A provider with no settings files asks for nothing.
    assert!(
        !drain(&mut self::machine())
            .iter()
            .any(|output| matches!(output, Output::ReadSettings(_)))
    );
}

/// Issue 21: a turn's end that would continue the turn for pending work
/// (a model call of its own) leaves it to the prompt the person is
/// writing: with their draft on the last screen read, nothing is claimed
/// and the hook hears an empty grant; with an empty composer, or once a
/// new terminal or new demand made that reading stale, it claims.
#[test]
fn a_claim_unless_drafting_claims_nothing_under_the_persons_draft() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Nonempty,
        reason: "a draft while the turn runs".into(),
    });
    machine.handle_input(snapshot(7), at(5));
    drain(&mut machine);
    // The harness redraws as the turn ends: the draft is still there.
    machine.handle_input(Input::PtyMoved, at(8));
    call(&mut machine, 1, "turn-end", at(10));
    let outputs = drain(&mut machine);
    assert!(
        uplinked(&outputs).is_empty(),
        "nothing claimed: {outputs:?}"
    );
    assert!(
        outputs.iter().any(|output| matches!(output, Output::HookAnswer { peer: Peer(1), line } if line.contains("0 file(s)"))),
        "{outputs:?}"
    );
    // The person sent it: an empty composer, and the next turn's end claims.
    machine.provider.screen = None;
    machine.handle_timeout(at(10) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(snapshot(9), at(10) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    call(&mut machine, 2, "turn-end", at(400));
    let outputs = drain(&mut machine);
    assert!(
        matches!(&uplinked(&outputs)[..], [Body::Claim(_)]),
        "{outputs:?}"
    );
    // A reading from before the demand is stale: it claims.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_timeout(at(400) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(snapshot(11), at(400) + MIN_SNAPSHOT_GAP);
    drain(&mut machine);
    machine.handle_input(wanted(false), at(900));
    machine.handle_input(wanted(true), at(950));
    drain(&mut machine);
    call(&mut machine, 3, "turn-end", at(960));
    let outputs = drain(&mut machine);
    assert!(
        uplinked(&outputs)
            .iter()
            .any(|body| matches!(body, Body::Claim(_))),
        "{outputs:?}"
    );
}

#[test]
fn with_nothing_wanted_nothing_waits_on_time_and_no_terminal_is_opened() {
    let mut machine = machine();
    assert_eq!(machine.next_deadline(), None);
    machine.handle_timeout(at(1_000_000));
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), None);
}

#[test]
fn evidence_is_stamped_with_the_snapshots_revision_and_only_while_wanted() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(snapshot(7), at(5));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(activity)] if activity.revision == Some(7)),
        "{lines:?}"
    );
    // Nothing moved: ready evidence is read again on the heartbeat.
    assert_eq!(machine.next_deadline(), Some(at(5) + HEARTBEAT));
    machine.handle_input(Input::PtyMoved, at(10));
    // At least the gap after the last one.
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), Some(at(0) + MIN_SNAPSHOT_GAP));
    machine.handle_timeout(at(0) + MIN_SNAPSHOT_GAP);
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    // Wanted no more: the terminal is closed and a late snapshot says
    // nothing.
    machine.handle_input(wanted(false), at(30));
    assert_eq!(drain(&mut machine), [Output::PtyClose]);
    machine.handle_input(snapshot(8), at(31));
    assert_eq!(drain(&mut machine), []);
    assert_eq!(machine.next_deadline(), None);
}

/// The Return of a typed notice waits for evidence naming it: the machine
/// names the notice the downlink told it of only on an idle screen whose
/// composer holds that text and nothing else, and forgets it with the
/// terminal.
#[test]
fn evidence_names_a_typed_notice_only_while_the_composer_holds_it_alone() {
    let notice = "[ding] 1 unread inbox message in /in: a.md";
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(
        downlink(Downlink::Typed {
            request: 4,
            text: notice.into(),
        }),
        at(1),
    );
    let typed_of = |machine: &mut Machine<Probe>, revision: u64, now: Time| {
        machine.handle_input(snapshot(revision), now);
        let outputs = drain(machine);
        match &uplinked(&outputs)[..] {
            [Body::Activity(activity)] => activity.typed,
            other => panic!("one activity: {other:?}"),
        }
    };
    let nonempty = Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    };
    machine.provider.screen = Some(nonempty.clone());
    machine.provider.composer = Some(format!("{notice} and more"));
    assert_eq!(typed_of(&mut machine, 5, at(300)), None, "not alone");
    machine.provider.composer = Some(notice.replace(' ', "\n  "));
    assert_eq!(typed_of(&mut machine, 6, at(600)), Some(4), "wrapped");
    machine.provider.screen = Some(Reading {
        state: ActivityState::Unknown,
        ..nonempty.clone()
    });
    assert_eq!(typed_of(&mut machine, 7, at(900)), None, "not idle");
    machine.provider.screen = Some(nonempty);
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(1_000),
    );
    drain(&mut machine);
    assert_eq!(
        typed_of(&mut machine, 8, at(1_300)),
        None,
        "a new terminal holds no notice of the old"
    );
}

#[test]
fn a_lost_terminal_says_unknown_without_a_revision_and_retries_while_wanted() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(Input::PtyLost("gone".into()), at(100));
    let outputs = drain(&mut machine);
    assert_eq!(outputs[0], Output::PtyClose);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(activity)]
            if activity.revision.is_none() && activity.state == ActivityState::Unknown),
        "{lines:?}"
    );
    assert_eq!(machine.next_deadline(), Some(at(100) + PTY_RETRY));
    machine.handle_timeout(at(100) + PTY_RETRY);
    assert_eq!(drain(&mut machine), [Output::PtyOpen]);
}

#[test]
fn a_claim_unanswered_by_its_deadline_answers_nothing_and_gives_back_a_late_grant() {
    let mut machine = machine();
    call(&mut machine, 1, "claim", at(0));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 1));
    assert_eq!(machine.next_deadline(), Some(at(0) + CLAIM_DEADLINE));
    machine.handle_timeout(at(0) + CLAIM_DEADLINE);
    assert_eq!(
        drain(&mut machine),
        [Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer::default().to_line()
        }]
    );
    // The grant comes after all: nobody passes it on, so it goes back.
    machine.handle_input(claimed(1, &["a.md"]), at(4_000));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(
            &lines[..],
            [Body::Release {
                reason: Undelivered::HookGone,
                ..
            }]
        ),
        "{lines:?}"
    );
}

#[test]
fn granted_files_wait_for_the_receipt_and_go_back_without_it() {
    for (ending, released) in [
        (Some(Input::HookReceipt { peer: Peer(1) }), None),
        (
            Some(Input::HookNoReceipt { peer: Peer(1) }),
            Some(Undelivered::NoReceipt),
        ),
        (
            Some(Input::HookGone { peer: Peer(1) }),
            Some(Undelivered::HookGone),
        ),
        (None, Some(Undelivered::NoReceipt)),
    ] {
        let mut machine = machine();
        call(&mut machine, 1, "claim", at(0));
        drain(&mut machine);
        machine.handle_input(claimed(1, &["a.md"]), at(10));
        let outputs = drain(&mut machine);
        assert!(
            matches!(&outputs[..], [Output::HookAnswerForReceipt { peer: Peer(1), line }] if line.contains("1 file(s)")),
            "{outputs:?}"
        );
        let outputs = match ending {
            Some(input) => {
                machine.handle_input(input, at(20));
                drain(&mut machine)
            }
            None => {
                assert_eq!(machine.next_deadline(), Some(at(10) + RECEIPT_DEADLINE));
                machine.handle_timeout(at(10) + RECEIPT_DEADLINE);
                let outputs = drain(&mut machine);
                assert_eq!(outputs[0], Output::HookClose { peer: Peer(1) });
                outputs
            }
        };
        let lines = uplinked(&outputs);
        match released {
            None => assert!(lines.is_empty(), "{lines:?}"),
            Some(why) => assert!(
                matches!(&lines[..], [Body::Release { reason, .. }] if *reason == why),
                "{lines:?}"
            ),
        }
        assert_eq!(machine.next_deadline(), None, "nothing left waiting");
    }
}

#[test]
fn a_parked_wake_claims_only_after_settling_on_fresh_idle_and_holds_the_terminal() {
    let mut machine = machine();
    // Nothing wanted: it just waits (and the log says it parked).
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // The screen is not idle yet: the wake holds nothing and says so not.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_input(snapshot(3), at(1_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "a draft is the screen's own reason: {lines:?}"
    );
    machine.handle_timeout(at(1_100));
    assert!(
        uplinked(&drain(&mut machine)).is_empty(),
        "no claim on a draft"
    );
    // The draft is gone: fresh idle. The wake now holds the terminal and
    // claims after its settle time.
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(1_150));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_160));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Unknown),
        "held by the wake: {lines:?}"
    );
    machine.handle_timeout(at(1_200));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(_)]), "{lines:?}");
    // Nothing granted: back in its slot, tried again later, never answered.
    machine.handle_input(claimed(1, &[]), at(1_210));
    assert!(drain(&mut machine).is_empty());
    machine.handle_timeout(at(1_210) + crate::adapter::timing::PARK_RETRY_AFTER);
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
    // Granted: the wake goes on a reading asked for after the grant.
    machine.handle_input(claimed(2, &["a.md"]), at(2_300));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(5), at(2_305));
    let outputs = drain(&mut machine);
    assert!(
        matches!(
            &outputs[..],
            [
                Output::HookAnswerForReceipt { peer: Peer(2), .. },
                Output::Uplink(_)
            ]
        ),
        "{outputs:?}"
    );
}

/// A wake granted its files with the terminal where its claim left it.
fn wake_granted(machine: &mut Machine<Probe>) {
    park(machine, 2, "wake", at(0));
    wanted_and_open(machine, at(1_000));
    machine.handle_input(snapshot(3), at(1_010));
    drain(machine);
    machine.handle_timeout(at(1_100));
    let lines = uplinked(&drain(machine)).len();
    assert_eq!(lines, 1, "the claim");
}

/// Found by the whole-agent simulation (issue 36, item 6; seeds 1101,
/// 21538, 45325 of one model, 16613, 18857, 48980 of another): the person's key
/// reached the terminal while a wake's claim was out, and the wake,
/// answered on the reading the claim was made on, started a turn under
/// their draft. A wake granted files goes only on a reading asked for
/// after the grant came; one that shows the person's input gives the
/// files back (`release` `withheld`) and puts the call back in its slot.
#[test]
fn a_key_while_a_wakes_claim_is_out_withholds_the_wake_and_gives_the_files_back() {
    let mut machine = machine();
    wake_granted(&mut machine);
    // A key reaches the terminal; the grant comes right after, and with
    // it the sidecar's word that no evidence is wanted any more.
    machine.handle_input(Input::PtyMoved, at(1_101));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(claimed(1, &["a.md"]), at(1_102));
    machine.handle_input(wanted(false), at(1_102));
    assert!(
        drain(&mut machine).is_empty(),
        "no answer, and the terminal stays open for the reading"
    );
    // The snapshot asked before the grant does not count.
    machine.handle_input(snapshot(4), at(1_103));
    assert!(drain(&mut machine).is_empty());
    machine.handle_timeout(at(1_128));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    // The one asked after it shows the key (the host counted it 5 ms
    // before it built the reply).
    let mut typed = testing::snapshot(10, &["ready"], Vec::new(), None);
    typed.revision = 5;
    typed.terminal.input_at_ms = Some(50_095);
    typed.clock_ms = Some(50_100);
    machine.handle_input(Input::PtySnapshot(Box::new(typed)), at(1_130));
    let outputs = drain(&mut machine);
    assert!(
        !outputs.iter().any(|output| matches!(
            output,
            Output::HookAnswerForReceipt { .. } | Output::HookAnswer { .. }
        )),
        "the wake is withheld: {outputs:?}"
    );
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Release { messages, reason: Undelivered::Withheld }] if messages.len() == 1),
        "{lines:?}"
    );
    assert!(outputs.contains(&Output::PtyClose), "{outputs:?}");
    // Back in its slot: evidence wanted again (the files are pending), it
    // claims once the person has been quiet.
    machine.handle_input(wanted(true), at(1_200));
    machine.handle_input(Input::PtyOpened, at(1_200));
    machine.handle_input(snapshot(6), at(1_201));
    drain(&mut machine);
    machine.handle_timeout(at(1_301));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
}

#[test]
fn a_wake_whose_confirming_reading_never_comes_is_withheld() {
    let mut machine = machine();
    wake_granted(&mut machine);
    machine.handle_input(claimed(1, &["a.md"]), at(1_110));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(Input::PtyLost("gone".into()), at(1_120));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        lines.iter().any(|line| matches!(
            line,
            Body::Release {
                reason: Undelivered::Withheld,
                ..
            }
        )),
        "{lines:?}"
    );
}

#[test]
fn a_parked_wake_waits_until_the_person_has_been_quiet_for_the_declared_time() {
    let mut machine = machine();
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // Fresh idle, but a key reached the terminal 20 ms before the host
    // built this reply (a key counted is not yet a key drawn).
    let mut typed_just_now = testing::snapshot(10, &["ready"], Vec::new(), None);
    typed_just_now.revision = 3;
    typed_just_now.terminal.input_at_ms = Some(4_980);
    typed_just_now.clock_ms = Some(5_000);
    machine.handle_input(Input::PtySnapshot(Box::new(typed_just_now)), at(1_010));
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "one activity line, held by the wake");
    // Settled, but the person is not quiet yet: quiet since 990, so due at
    // 990 + 300.
    machine.handle_timeout(at(1_110));
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim yet");
    assert_eq!(machine.next_deadline(), Some(at(1_290)));
    machine.handle_timeout(at(1_289));
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim yet");
    machine.handle_timeout(at(1_290));
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "the claim, once quiet");
}

#[test]
fn a_parked_wake_never_claims_on_input_whose_quiet_cannot_be_judged() {
    let mut machine = machine();
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    let mut no_clock = testing::snapshot(10, &["ready"], Vec::new(), None);
    no_clock.revision = 3;
    no_clock.terminal.input_at_ms = Some(1);
    machine.handle_input(Input::PtySnapshot(Box::new(no_clock)), at(1_010));
    drain(&mut machine);
    for later in [1_200, 5_000, 30_000] {
        machine.handle_timeout(at(later));
        let claims = uplinked(&drain(&mut machine))
            .into_iter()
            .filter(|line| matches!(line, Body::Claim(_)))
            .count();
        assert_eq!(claims, 0, "at {later}");
    }
}

#[test]
fn a_native_path_holds_an_idle_terminal_but_not_its_own_parked_call() {
    let mut machine = machine();
    machine.provider.native_holds = Some("the native path delivers");
    wanted_and_open(&mut machine, at(1_000));
    machine.handle_input(snapshot(3), at(1_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Unknown && a.reason.as_deref().is_some_and(|why| why.contains("the native path delivers"))),
        "{lines:?}"
    );
    // A draft stays the screen's own reason.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    machine.handle_input(Input::PtyMoved, at(1_020));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_050));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "{lines:?}"
    );
    // The path's own parked call judges the screen itself: fresh idle, so
    // it claims.
    machine.provider.screen = None;
    park(&mut machine, 2, "wake", at(1_100));
    machine.handle_input(snapshot(5), at(1_110));
    drain(&mut machine);
    machine.handle_timeout(at(1_210));
    let lines = uplinked(&drain(&mut machine)).len();
    assert_eq!(lines, 1, "the parked call's claim");
}

/// The activity states among `outputs`.
fn states(outputs: &[Output]) -> Vec<ActivityState> {
    uplinked(outputs)
        .into_iter()
        .filter_map(|line| match line {
            Body::Activity(activity) => Some(activity.state),
            _ => None,
        })
        .collect()
}

#[test]
fn a_new_screen_counts_as_idle_only_once_it_has_read_idle_for_the_settle_time() {
    let mut machine = machine();
    machine.provider.startup_settle = Duration::from_millis(1_500);
    park(&mut machine, 2, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    // The first composer frame: not idle yet, and no wake claims on it.
    machine.handle_input(snapshot(3), at(1_010));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    machine.handle_timeout(at(1_200));
    assert!(uplinked(&drain(&mut machine)).is_empty(), "no claim");
    // A dialog replaces it: the wait starts again at the next idle screen.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Unknown,
        composer: Composer::Unknown,
        reason: "a selection list".into(),
    });
    machine.handle_input(Input::PtyMoved, at(1_300));
    drain(&mut machine);
    machine.handle_input(snapshot(4), at(1_310));
    drain(&mut machine);
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(3_000));
    drain(&mut machine);
    machine.handle_input(snapshot(5), at(3_010));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    // Read again once it would have settled, unasked: now idle (held by
    // the wake, which claims).
    machine.handle_timeout(at(4_509));
    let early = drain(&mut machine);
    assert!(!early.contains(&Output::PtySnapshot), "{early:?}");
    assert!(uplinked(&early).is_empty(), "no claim yet: {early:?}");
    assert_eq!(machine.next_deadline(), Some(at(4_510)));
    machine.handle_timeout(at(4_510));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(5), at(4_520));
    assert_eq!(states(&drain(&mut machine)), [ActivityState::Unknown]);
    machine.handle_timeout(at(4_620));
    let claims = uplinked(&drain(&mut machine))
        .into_iter()
        .filter(|line| matches!(line, Body::Claim(_)))
        .count();
    assert_eq!(claims, 1, "the wake claims on the settled screen");
    // A new terminal is new again.
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(5_000),
    );
    drain(&mut machine);
    machine.handle_input(snapshot(6), at(5_010));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        lines.iter().any(|line| matches!(line, Body::Activity(a) if a.reason.as_deref().is_some_and(|why| why.contains("screen is new")))),
        "{lines:?}"
    );
}

#[test]
fn a_newer_wake_replaces_the_parked_one_and_each_answer_says_what_became_of_it() {
    let mut machine = machine();
    park(&mut machine, 1, "wake", at(1));
    call(&mut machine, 2, "wake", at(2));
    let ended = |why| HookAnswer {
        parked: Some(why),
        ..HookAnswer::default()
    };
    assert_eq!(
        drain(&mut machine),
        [
            Output::Log("wake: parked in slot wake for at most 60000 ms".into()),
            Output::HookAnswer {
                peer: Peer(1),
                line: ended(ParkAnswer::Replaced).to_line()
            }
        ]
    );
    // Its deadline is the park's: answered with nothing then, saying so.
    assert_eq!(
        machine.next_deadline(),
        Some(at(2) + Duration::from_secs(60))
    );
    machine.handle_timeout(at(2) + Duration::from_secs(60));
    assert_eq!(
        drain(&mut machine),
        [Output::HookAnswer {
            peer: Peer(2),
            line: ended(ParkAnswer::Expired).to_line()
        }]
    );
}

/// Evidence that holds is read again only on an event: a move, or the
/// moment the provider says time alone changes its verdict. A held
/// message costs no wake-up while nothing happens (issue 36, item 13).
#[test]
fn evidence_that_holds_is_read_again_only_when_something_moves() {
    let mut machine = machine();
    machine.provider.screen = Some(Reading {
        state: ActivityState::Idle,
        composer: Composer::Nonempty,
        reason: "a draft".into(),
    });
    wanted_and_open(&mut machine, at(0));
    machine.handle_input(snapshot(7), at(5));
    assert_eq!(uplinked(&drain(&mut machine)).len(), 1);
    assert_eq!(machine.next_deadline(), None, "no heartbeat for a hold");
    // The person clears the draft: the move is read.
    machine.provider.screen = None;
    machine.handle_input(Input::PtyMoved, at(60_000));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_input(snapshot(8), at(60_001));
    drain(&mut machine);
    assert_eq!(machine.next_deadline(), Some(at(60_001) + HEARTBEAT));
    // A hook's grace that runs out changes the verdict with no move.
    machine.provider.screen = Some(Reading {
        state: ActivityState::Active,
        composer: Composer::Empty,
        reason: "a hook said a turn runs".into(),
    });
    machine.provider.changes_at = Some(at(63_000));
    machine.handle_input(Input::PtyMoved, at(62_000));
    machine.handle_input(snapshot(9), at(62_001));
    drain(&mut machine);
    assert_eq!(machine.next_deadline(), Some(at(63_000)));
    machine.provider.changes_at = None;
    machine.handle_timeout(at(63_000));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
}

/// A claim refused for identity, then the sidecar's next identity
/// (`incarnation`); what the machine does then.
fn refused_for_identity_then_told(incarnation: &str) -> (Machine<Probe>, Vec<Output>) {
    let mut machine = machine();
    call(&mut machine, 1, "claim", at(0));
    drain(&mut machine);
    machine.handle_input(answer(1, &[], Some(ClaimRefusal::IdentityMismatch)), at(5));
    assert_eq!(drain(&mut machine), [], "waits for the next identity");
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity(incarnation)),
        }),
        at(10),
    );
    let outputs = drain(&mut machine);
    (machine, outputs)
}

#[test]
fn a_claim_refused_for_identity_is_answered_with_nothing_once_the_terminal_is_another() {
    let (machine, outputs) = refused_for_identity_then_told("j");
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    assert!(
        outputs.contains(&Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer::default().to_line()
        }),
        "the old terminal's call gets nothing: {outputs:?}"
    );
    assert_eq!(machine.provider.new_terminals, [Some("j".to_string())]);
}

#[test]
fn a_claim_refused_for_identity_is_asked_again_once_when_the_identity_is_confirmed() {
    let (_, outputs) = refused_for_identity_then_told("i");
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Claim(claim)] if claim.claim == 2),
        "{lines:?}"
    );
}

/// A hook call line about the terminal `incarnation` (or none).
fn hook_about(event: &str, incarnation: Option<&str>) -> Vec<u8> {
    let identity = incarnation.map(identity);
    serde_json::json!({
        "v": 1, "provider": "test", "event": event, "payload": null,
        "identity": identity,
    })
    .to_string()
    .into_bytes()
}

fn refusal_of(outputs: &[Output], peer: usize) -> Option<HookRefusal> {
    outputs.iter().find_map(|output| match output {
        Output::HookAnswer { peer: p, line } if *p == Peer(peer) => serde_json::from_str(line).ok(),
        _ => None,
    })
}

#[test]
fn a_call_without_identity_is_refused_and_claims_nothing() {
    let mut machine = machine();
    let line = hook_about("claim", None);
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    let refusal = refusal_of(&outputs, 1).expect("refused");
    assert_eq!(refusal.error, "no-identity");
}

#[test]
fn a_stale_parked_call_holds_nothing_and_is_refused_after_its_wait() {
    let mut machine = machine();
    wanted_and_open(&mut machine, at(0));
    let line = hook_about("wake", Some("gone"));
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    assert_eq!(drain(&mut machine), [], "nothing of it reaches anyone yet");
    machine.handle_input(snapshot(3), at(10));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(
        matches!(&lines[..], [Body::Activity(a)] if a.state == ActivityState::Idle),
        "a stale call holds no terminal: {lines:?}"
    );
    let deadline = at(0) + crate::adapter::timing::STRANGER_WAIT;
    assert_eq!(
        machine.next_deadline(),
        Some(deadline.min(at(10) + HEARTBEAT))
    );
    machine.handle_timeout(deadline);
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
    let refusal = refusal_of(&outputs, 1).expect("refused");
    assert_eq!(refusal.error, "identity-mismatch");
}

#[test]
fn an_early_call_waits_for_its_terminal_then_claims_under_it() {
    let mut machine = machine();
    let line = hook_about("claim", Some("j"));
    machine.handle_input(
        Input::HookCall {
            peer: Peer(1),
            line,
        },
        at(0),
    );
    assert_eq!(drain(&mut machine), []);
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(40),
    );
    let outputs = drain(&mut machine);
    let events: Vec<_> = outputs
        .iter()
        .filter_map(|output| match output {
            Output::Uplink(line) => Some(parse_line(line.as_bytes()).expect("parses")),
            _ => None,
        })
        .collect();
    assert!(
        matches!(&events[..], [event] if matches!(event.body, Body::Claim(_)) && event.identity.incarnation == "j"),
        "{events:?}"
    );
}

#[test]
fn a_parked_call_of_a_terminal_that_is_gone_is_ended_when_the_new_one_comes() {
    let mut machine = machine();
    park(&mut machine, 1, "wake", at(0));
    machine.handle_input(
        downlink(Downlink::Pty {
            identity: Some(identity("j")),
        }),
        at(10),
    );
    let outputs = drain(&mut machine);
    assert!(
        outputs.contains(&Output::HookAnswer {
            peer: Peer(1),
            line: HookAnswer {
                parked: Some(ParkAnswer::Declined),
                ..HookAnswer::default()
            }
            .to_line()
        }),
        "{outputs:?}"
    );
    assert!(uplinked(&outputs).is_empty(), "{outputs:?}");
}

#[test]
fn an_unreadable_downlink_line_is_logged_and_changes_nothing() {
    let mut machine = machine();
    machine.handle_input(Input::Downlink(b"{not json\n".to_vec()), at(0));
    let outputs = drain(&mut machine);
    assert!(matches!(&outputs[..], [Output::Log(_)]), "{outputs:?}");
    machine.handle_input(Input::DownlinkClosed, at(1));
    assert!(machine.is_done());
}

/// The machine stamps a claim with the hook's own identity; one the
/// protocol refuses (an empty or over-long part) would make the sidecar
/// reject the claim unanswered, so the call is refused at once (found by
/// the `hook-calls` fuzz target).
#[test]
fn a_call_whose_identity_cannot_stamp_a_line_is_refused() {
    let call = |session: &str, incarnation: &str| {
        serde_json::json!({
            "v": 1, "provider": "test", "event": "claim", "payload": null,
            "identity": {"session": session, "incarnation": incarnation, "generation": "g"},
        })
        .to_string()
        .into_bytes()
    };
    let long = "s".repeat(MAX_FIELD_BYTES + 1);
    let mut probe = Probe::default();
    for line in [call("s", ""), call("", "i"), call(&long, "i")] {
        let refusal = judge_call(&mut probe, &line, &agent(), at(0)).expect_err("refused");
        assert_eq!(refusal.error, "malformed-call", "{refusal:?}");
        assert!(refusal.message.contains("identity"), "{refusal:?}");
    }
    assert!(judge_call(&mut probe, &call("s", "i"), &agent(), at(0)).is_ok());
}

/// Found by the whole-agent simulation (seed 1073): a key drawn after the
/// last reading must hold a wake that waits for fresh idle, until the
/// screen is read again.
#[test]
fn a_terminal_that_moved_since_the_last_reading_wakes_nothing_until_it_is_read_again() {
    let mut machine = machine();
    park(&mut machine, 3, "wake", at(0));
    wanted_and_open(&mut machine, at(1_000));
    machine.handle_input(snapshot(5), at(1_005));
    drain(&mut machine);
    // The person's key is drawn; the snapshot it asks for has not come
    // back when the wake is due.
    machine.handle_input(Input::PtyMoved, at(1_090));
    assert_eq!(drain(&mut machine), [Output::PtySnapshot]);
    machine.handle_timeout(at(1_100));
    let outputs = drain(&mut machine);
    assert!(uplinked(&outputs).is_empty(), "no claim: {outputs:?}");
    // Read again, still idle and empty: the wake is due a settle later.
    machine.handle_input(snapshot(6), at(1_110));
    drain(&mut machine);
    machine.handle_timeout(at(1_200));
    let outputs = drain(&mut machine);
    let lines = uplinked(&outputs);
    assert!(matches!(&lines[..], [Body::Claim(_)]), "{lines:?}");
}
