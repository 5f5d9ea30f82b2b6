//! What a provider plans for one hook call: the agent it serves, the
//! claim it asks for, a parked call, and the plan the kit carries out.

use std::path::PathBuf;
use std::time::Duration;

use super::hook_wire::{HookAnswer, ParkAnswer};
use crate::core::message::MessageName;
use crate::core::protocol::{ClaimScope, ClaimWants, Lifecycle};

/// What the kit knows of the agent, for providers that render text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentContext {
    /// The agent's name (`ding archive NAME FILE`).
    pub agent: String,
    /// The inbox root; unread files are in its `new/`.
    pub inbox: PathBuf,
}

/// The agent the kit's and the providers' unit tests render text for.
#[cfg(test)]
pub(crate) fn example_agent() -> AgentContext {
    AgentContext {
        agent: "worker".into(),
        inbox: PathBuf::from("/srv/inbox/worker"),
    }
}

/// Which files a hook asks to inject (protocol v1 `claim`, spec §2.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRequest {
    pub wants: ClaimWants,
    pub scope: ClaimScope,
    /// The most bytes the granted names may take, escaped and joined with
    /// `", "`: a hook with a bounded context asks for no more than it can
    /// name (at least one file is granted whatever its length).
    pub name_bytes: Option<u64>,
}

/// What a provider wants done with a hook call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookAction {
    /// Answer the hook now.
    Answer(HookAnswer),
    /// Claim files first; the kit calls [`Provider::on_claimed`](super::Provider::on_claimed) with the
    /// sidecar's answer and sends what it returns.
    Claim(ClaimRequest),
    /// [`HookAction::Claim`], unless the last screen read shows the
    /// person's own text in the composer: the
    /// prompt they are writing will carry the work at no call of its own,
    /// so nothing is claimed and the kit calls [`Provider::on_claimed`](super::Provider::on_claimed)
    /// with an empty grant (a turn's end that would continue the turn for
    /// the work leaves it to that prompt).
    ClaimUnlessDrafting(ClaimRequest),
    /// Hold the call open and claim later, when evidence is wanted (see
    /// [`Park`]).
    Park(Park),
}

/// How to hold a hook call open: the kit keeps at most one call per `slot`
/// (a newer call replaces an older one, which is answered with nothing),
/// and once evidence is wanted and has stayed wanted for `settle` (so a
/// burst of arrivals becomes one answer) it makes the claim and calls
/// [`Provider::on_claimed`](super::Provider::on_claimed). A claim that grants nothing puts the call back
/// in its slot. At `hold_for`, or a little before the hook's own timeout
/// if that is sooner, the call is answered with nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Park {
    pub slot: &'static str,
    pub claim: ClaimRequest,
    pub settle: Duration,
    pub hold_for: Duration,
    /// While it is parked (or its claim is being answered), activity
    /// evidence is reported as `unknown`: the parked call delivers the
    /// work, and the terminal path must not race it.
    pub holds_terminal: bool,
    /// Claim only while the last screen read since the evidence became
    /// wanted shows the harness idle with an empty composer (fresh idle,
    /// as the terminal path needs): a turn woken while a person is typing
    /// changes what their Return does (a `/clear` typed then ran after the
    /// woken turn, or not at all), and a turn already running carries the
    /// work at its own boundaries for less. Meanwhile the call holds
    /// nothing, the screen's own evidence says why (a draft, a dialog, a
    /// turn), and the work rides the next boundary.
    pub waits_for_fresh_idle: bool,
}

/// Why a parked call left its slot without being claimed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParkEnded {
    /// A newer call took the slot; this one was answered with nothing.
    Replaced,
    /// Its deadline came; it was answered with nothing.
    Expired,
    /// The hook process went away (the harness's own timeout, or its exit).
    Withdrawn,
    /// A later call said the offer no longer holds ([`HookPlan::end_parked`]);
    /// it was answered with nothing.
    Ended,
}

impl ParkEnded {
    /// What the call's answer says of it; `None` for a call whose hook went
    /// away, which gets no answer.
    pub fn answer(self) -> Option<ParkAnswer> {
        match self {
            ParkEnded::Replaced => Some(ParkAnswer::Replaced),
            ParkEnded::Expired => Some(ParkAnswer::Expired),
            ParkEnded::Ended => Some(ParkAnswer::Declined),
            ParkEnded::Withdrawn => None,
        }
    }
}

/// A provider's reaction to one hook call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookPlan {
    /// Lifecycle facts the call proves (a compaction, a clear), reported at
    /// once.
    pub facts: Vec<Lifecycle>,
    /// Files the call proves are in the harness's context already (for
    /// example DING's own notice, submitted as a prompt), reported at once
    /// as a `turn-boundary` receipt.
    pub received: Vec<MessageName>,
    /// Files the call proves never reached the harness (a delivery the
    /// harness lost before it could carry it): given back to unread work
    /// at once (`release`, `no-receipt`), so that they are pending again
    /// and evidence is wanted for them (a parked call claims them).
    pub undelivered: Vec<MessageName>,
    /// ParkedCalls whose parked call no longer helps (the harness left the state
    /// it was parked for, say a turn started): each is answered with
    /// nothing before this call's action, so it can claim nothing more.
    pub end_parked: Vec<&'static str>,
    /// The call may follow an edit of the harness's settings (a new
    /// session): the shell reads [`Provider::settings_files`](super::Provider::settings_files) again.
    pub recheck_settings: bool,
    pub action: HookAction,
}

impl HookPlan {
    /// Answer with nothing (exit 0): the hook changes nothing in the harness.
    pub fn nothing() -> HookPlan {
        HookPlan::answer(HookAnswer::default())
    }

    /// Answer now with `answer`, proving nothing.
    pub fn answer(answer: HookAnswer) -> HookPlan {
        HookPlan::act(HookAction::Answer(answer))
    }

    /// Do `action`, proving nothing.
    pub fn act(action: HookAction) -> HookPlan {
        HookPlan {
            facts: Vec::new(),
            received: Vec::new(),
            undelivered: Vec::new(),
            end_parked: Vec::new(),
            recheck_settings: false,
            action,
        }
    }
}

/// A provider's reading of one hook call: what it says the harness is doing
/// (in the provider's own terms, if it says), and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookReading<A> {
    pub activity: Option<A>,
    pub plan: HookPlan,
}

impl<A> HookReading<A> {
    pub fn new(activity: Option<A>, plan: HookPlan) -> HookReading<A> {
        HookReading { activity, plan }
    }
}
