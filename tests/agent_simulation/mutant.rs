//! Deliberate defects, for the mutation check: the demo provider as the
//! simulation runs it, faithful or with one defect a provider or the
//! adapter's side of the seam could have.

use ding::adapter::screen::ComposerContent;
use ding::adapter::{
    AgentContext, ClaimRequest, HookAction, HookAnswer, HookCall, HookPlan, Provider, Reading,
};
use ding::core::downlink::Claimed;
use ding::core::identity::Identity;
use ding::core::protocol::{ActivityState, ClaimScope, Composer};
use ding::core::time::Time;
use ding::demo::adapter::DemoProvider;
use ding::providers::claude::adapter::Claude;
use ding::providers::codex::adapter::Codex;
use ding::providers::codex::hooks as codex_hooks;
use ding::providers::gemini::adapter::Gemini;
use ding::providers::opencode::adapter::OpenCode;
use ding::pty::wire::Snapshot;

use crate::world::Harness;

/// One defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    /// A ready screen reads as an empty composer, whatever is typed.
    IgnoresDrafts,
    /// A menu reads as a ready, empty screen.
    MenuIsIdle,
    /// A running turn reads as a ready, empty screen.
    BusyIsIdle,
    /// The first reading is reported for every later screen.
    StaleEvidence,
    /// A hook's answer leaves out the files its claim granted.
    DropsGrantedFiles,
    /// A turn-start hook claims every unread file, rung or not.
    ClaimsUnreadAtTurnStart,
    /// A parked wake claims without waiting for fresh idle.
    WakesWithoutFreshIdle,
    /// Claims answered by the sidecar never reach the machine (the world
    /// drops them on the downlink).
    LosesClaimAnswers,
    /// Every hook answer is sent twice (the world repeats the machine's
    /// output).
    AnswersTwice,
    /// An activity line is stamped with the revision before the snapshot's
    /// (the world rewrites it): every compare-and-send conflicts.
    StampsAnOlderRevision,
    /// An activity line is stamped with the terminal's revision when the
    /// line is written, not the snapshot's: evidence older than the last
    /// change passes the fence.
    StampsTheCurrentRevision,
    /// A hook injects a file whose delivery still waits in the harness's
    /// own queue (Codex: the filter of `on_claimed` left out), so the
    /// queued prompt and a backlog say it in one request.
    InjectsQueuedWorkAgain,
    /// The provider's native idle path is forgotten (`native_path_holds`
    /// not asked): an idle screen is a lease for the terminal path while
    /// the queue would deliver (Codex between two launcher calls, or
    /// before its first).
    ForgetsItsNativePath,
    /// The PTY host writes a person's keys that waited back to back (the
    /// world does, as `ding pty` did before it paced them): a held text and
    /// the Return typed after it reach the harness as one burst.
    BunchesWaitingKeys,
}

impl Defect {
    pub const ALL: [Defect; 14] = [
        Defect::IgnoresDrafts,
        Defect::MenuIsIdle,
        Defect::BusyIsIdle,
        Defect::StaleEvidence,
        Defect::DropsGrantedFiles,
        Defect::ClaimsUnreadAtTurnStart,
        Defect::WakesWithoutFreshIdle,
        Defect::LosesClaimAnswers,
        Defect::AnswersTwice,
        Defect::StampsAnOlderRevision,
        Defect::StampsTheCurrentRevision,
        Defect::InjectsQueuedWorkAgain,
        Defect::ForgetsItsNativePath,
        Defect::BunchesWaitingKeys,
    ];
}

pub struct Mutant {
    inner: Box<dyn Provider>,
    defect: Option<Defect>,
    first: Option<Reading>,
}

impl Mutant {
    pub fn new(harness: Harness, defect: Option<Defect>) -> Mutant {
        let inner: Box<dyn Provider> = match harness {
            Harness::Demo => Box::new(DemoProvider),
            // As `ding compile-agent claude` sets it up: the wake on.
            Harness::Claude => Box::new(Claude::new(None, "ding".into(), true)),
            // As `ding compile-agent codex` sets it up: the native idle path.
            Harness::Codex => Box::new(Codex::new(true)),
            // As `ding compile-agent gemini` sets it up (its settings file
            // is the shell's to read; none here).
            Harness::Gemini => Box::new(Gemini::new(None, "ding".into())),
            // As `ding compile-agent opencode` sets it up (its plugins'
            // configuration is the shell's to read; none here).
            Harness::OpenCode => Box::new(OpenCode::new(None)),
        };
        Mutant {
            inner,
            defect,
            first: None,
        }
    }

    fn idle() -> Reading {
        Reading {
            state: ActivityState::Idle,
            composer: Composer::Empty,
            reason: "prompt ready, composer empty".into(),
        }
    }
}

impl Provider for Mutant {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading {
        let reading = self.inner.evidence(snapshot, now);
        let first = self.first.get_or_insert_with(|| reading.clone()).clone();
        match (self.defect, reading.state) {
            (Some(Defect::IgnoresDrafts), ActivityState::Idle) => Mutant::idle(),
            (Some(Defect::MenuIsIdle), ActivityState::Unknown) => Mutant::idle(),
            (Some(Defect::BusyIsIdle), ActivityState::Active) => Mutant::idle(),
            (Some(Defect::StaleEvidence), _) => first,
            _ => reading,
        }
    }

    fn composer_content(&self, snapshot: &Snapshot) -> ComposerContent {
        self.inner.composer_content(snapshot)
    }

    fn withdraw_keys(&self) -> Option<ding::core::protocol::WithdrawKeys<'static>> {
        self.inner.withdraw_keys()
    }

    fn startup_settle(&self) -> std::time::Duration {
        self.inner.startup_settle()
    }

    fn verdict_changes_at(&self, now: ding::core::time::Time) -> Option<ding::core::time::Time> {
        self.inner.verdict_changes_at(now)
    }

    fn native_path_holds(&self) -> Option<String> {
        if self.defect == Some(Defect::ForgetsItsNativePath) {
            return None;
        }
        self.inner.native_path_holds()
    }

    fn on_new_terminal(&mut self, identity: Option<&Identity>, now: Time) {
        self.inner.on_new_terminal(identity, now);
    }

    fn on_hook(&mut self, call: &HookCall, agent: &AgentContext, now: Time) -> HookPlan {
        let mut plan = self.inner.on_hook(call, agent, now);
        match self.defect {
            Some(Defect::ClaimsUnreadAtTurnStart)
                if call.event == "turn-start" || call.event == "UserPromptSubmit" =>
            {
                if let HookAction::Claim(ClaimRequest { scope, .. }) = &mut plan.action {
                    *scope = ClaimScope::Unread;
                }
            }
            Some(Defect::WakesWithoutFreshIdle) => {
                if let HookAction::Park(park) = &mut plan.action {
                    park.waits_for_fresh_idle = false;
                }
            }
            _ => {}
        }
        plan
    }

    fn on_answer_unread(&mut self, call: &HookCall, now: Time) {
        self.inner.on_answer_unread(call, now);
    }

    fn on_claimed(
        &mut self,
        call: &HookCall,
        claimed: &Claimed,
        agent: &AgentContext,
        now: Time,
    ) -> HookAnswer {
        let answer = self.inner.on_claimed(call, claimed, agent, now);
        match self.defect {
            Some(Defect::DropsGrantedFiles) => HookAnswer::default(),
            Some(Defect::InjectsQueuedWorkAgain)
                if self.inner.name() == "codex" && call.event != "queue" =>
            {
                codex_hooks::render(&call.event, claimed, agent, "ding-0-0")
            }
            _ => answer,
        }
    }
}
