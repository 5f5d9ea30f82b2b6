//! The neutral adapter kit: everything a DING provider adapter needs that is
//! not about one provider.
//!
//! A provider is data plus pure functions ([`Provider`]): it reads a screen
//! snapshot, and it answers hook calls, each with the time as an input.
//! Every decision that is not about one provider is the adapter machine's
//! (`machine`): sans-IO like the core engine, driven by the kit's process
//! shell (`kit`) in an adapter and by the whole-agent simulation in tests.
//! What they share:
//!
//! * the **uplink** (`uplink`): protocol v1 lines on stdout, with the
//!   identity the sidecar fences on and a strictly increasing sequence,
//!   written by the typed encoder ([`crate::core::encode`]);
//! * the **downlink** (stdin): the terminal identity, the demand signal and
//!   claim answers ([`crate::core::downlink`]);
//! * the **hook channel** (`hook_wire`, served on `DING_HOOK_SOCKET`): hooks
//!   running inside the harness (`ding hook PROVIDER EVENT`) reach the
//!   adapter, and a hook that is about to inject files claims them first;
//! * the **PTY view** (`pty_watch`): a `watch` stream and snapshots stamped
//!   with their revision, opened only while evidence is wanted;
//! * **parked calls** (`parked`): a hook call the provider holds open, at
//!   most one per provider-named slot, answered when evidence becomes
//!   wanted (claim first), or with nothing at its deadline, below the
//!   hook's own timeout: how a harness that wakes on a background hook's
//!   answer gets idle work with no terminal input;
//! * the **context text** (`context`): the bounded, sanitized words a hook
//!   puts into the model's next context, naming exact files;
//! * the **screen** pieces (`screen`): the kinds of screen a grammar tells
//!   apart and their reading, and which styled run covers a cell;
//! * the **harness environment** (`harness_env`): the variables a harness
//!   will run in, as `ding check --adapters` and `ding compile-agent` can
//!   know them, for a provider to judge whether its harness will draw a
//!   screen it reads;
//! * every timing of the room, with its orderings tested (`timing`);
//! * the process shell (`kit`): one mio loop with no busy polling and no
//!   policy; with nothing wanted and no hook running it sleeps in `poll`
//!   with no timeout at all.
//!
//! Nothing here names a provider; the neutrality test covers this room.

#[cfg(test)]
pub(crate) mod captures;
pub mod clock;
pub mod compile;
pub mod context;
pub mod find_program;
pub mod harness_env;
pub mod hook_activity;
pub mod hook_config;
pub mod hook_wire;
pub mod kit;
pub mod machine;
pub mod parked;
pub mod pty_watch;
pub mod relay;
pub mod screen;
pub mod settings_check;
pub mod timing;
pub mod uplink;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::{
    ActivityState, ClaimScope, ClaimWants, Composer, Lifecycle, WithdrawKeys,
};
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

pub use harness_env::HarnessEnv;
pub use hook_wire::{HookAnswer, HookCall, ParkAnswer};

/// What a provider reads on one screen: its own grammar's verdict, which
/// the kit stamps with the snapshot's revision. `Unknown` is a first-class
/// answer, and unknown holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    pub state: ActivityState,
    pub composer: Composer,
    /// Why, for people (the sidecar shows it, never interprets it).
    pub reason: Cow<'static, str>,
}

impl Reading {
    /// The reading of a screen the grammar does not recognize.
    pub fn unknown(reason: impl Into<Cow<'static, str>>) -> Reading {
        Reading {
            state: ActivityState::Unknown,
            composer: Composer::Unknown,
            reason: reason.into(),
        }
    }
}

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
    /// Claim files first; the kit calls [`Provider::on_claimed`] with the
    /// sidecar's answer and sends what it returns.
    Claim(ClaimRequest),
    /// [`HookAction::Claim`], unless the last screen read shows the
    /// person's own text in the composer: the
    /// prompt they are writing will carry the work at no call of its own,
    /// so nothing is claimed and the kit calls [`Provider::on_claimed`]
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
/// [`Provider::on_claimed`]. A claim that grants nothing puts the call back
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
    /// Slots whose parked call no longer helps (the harness left the state
    /// it was parked for, say a turn started): each is answered with
    /// nothing before this call's action, so it can claim nothing more.
    pub end_parked: Vec<&'static str>,
    /// The call may follow an edit of the harness's settings (a new
    /// session): the shell reads [`Provider::settings_files`] again.
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
            end_parked: Vec::new(),
            recheck_settings: false,
            action,
        }
    }
}

/// A hook settings file a provider's setup check reads, as the process
/// shell read it ([`hook_config::read_file`]: a missing file is an empty
/// object; `Err` says why it could not be read).
#[derive(Clone, Debug, PartialEq)]
pub struct SettingsRead {
    pub path: std::path::PathBuf,
    pub settings: Result<serde_json::Value, String>,
}

/// A provider's reading of one hook call: what it says the harness is doing
/// (in the provider's own terms, if it says), and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned<A> {
    pub activity: Option<A>,
    pub plan: HookPlan,
}

impl<A> Planned<A> {
    pub fn new(activity: Option<A>, plan: HookPlan) -> Planned<A> {
        Planned { activity, plan }
    }
}

/// One harness's grammar and hook semantics. Every method reads only its
/// arguments (the time among them) and the provider's own state, which the
/// methods change in plain view (`&mut self`, never a `Cell`), so each is
/// tested table-driven against real captures and driven by the whole-agent
/// simulation on a simulated clock.
pub trait Provider {
    /// The name hooks use (`ding hook NAME EVENT`); calls for another name
    /// are refused.
    fn name(&self) -> &'static str;

    /// The evidence one snapshot gives, read at `now`: the screen's grammar,
    /// combined with what the hooks last said.
    fn evidence(&mut self, snapshot: &Snapshot, now: Time) -> Reading;

    /// What the composer on this screen holds, for confirming a typed
    /// notice before its Return. Asked only of a screen the provider read
    /// as idle with a nonempty composer; the default reads nothing, and a
    /// notice nothing confirms is never submitted.
    fn composer_content(&self, _snapshot: &Snapshot) -> screen::ComposerContent {
        screen::ComposerContent::Unreadable
    }

    /// How to empty the harness's composer of a one-line paste, the cursor
    /// at its end: sent with every idle report of an empty composer, so
    /// that the PTY host can take DING's notice back out when a person
    /// types before its Return (spec §4.2). The default: none known, and
    /// such a person's keys land behind the notice, whose Return is then
    /// withheld.
    fn withdraw_keys(&self) -> Option<WithdrawKeys<'static>> {
        None
    }

    /// A hook call arrived at `now`. The default answers nothing.
    fn on_hook(&mut self, _call: &HookCall, _agent: &AgentContext, _now: Time) -> HookPlan {
        HookPlan::nothing()
    }

    /// The claim made for `call` was answered at `now`; render the hook's
    /// answer. For a parked call this is called only when the claim
    /// granted files.
    fn on_claimed(
        &mut self,
        _call: &HookCall,
        _claimed: &Claimed,
        _agent: &AgentContext,
        _now: Time,
    ) -> HookAnswer {
        HookAnswer::default()
    }

    /// The terminal's identity changed at `now` (a new incarnation of the
    /// harness, or none known). Every provider decides here, in one place,
    /// what it remembers across a restart: what the hooks said about the
    /// old incarnation no longer holds for the new one.
    fn on_new_terminal(&mut self, identity: Option<&Identity>, now: Time);

    /// The harness's hook settings files the provider's setup check reads.
    /// A provider reads no file itself: the shell reads these when the
    /// adapter starts (and before a check) and again when a hook plan asks
    /// ([`HookPlan::recheck_settings`]), and hands them to
    /// [`Provider::on_settings_read`].
    fn settings_files(&self) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    /// The files [`Provider::settings_files`] named, as read.
    fn on_settings_read(&mut self, _read: &[SettingsRead]) {}

    /// The program the provider's hook commands run (`ding`, as the
    /// declaration spells it), if its hooks are shell commands the
    /// harness runs: the shell looks it up once, when the adapter starts
    /// (and before a check), and says what it found with
    /// [`Provider::on_hook_program`].
    fn hook_program(&self) -> Option<String> {
        None
    }

    /// Whether [`Provider::hook_program`] was found where the harness runs
    /// its hooks: a hook that cannot find it does nothing.
    fn on_hook_program(&mut self, _found: bool) {}

    /// The first moment after `now` at which the verdict of the last
    /// [`Provider::evidence`] would change with time alone, the screen
    /// unchanged and no hook heard (a grace after a hook or a wake running
    /// out): the machine reads the screen again then. Evidence that holds
    /// is otherwise read again only on an event, so a provider whose
    /// verdict rests on the clock must say when. The default: never.
    fn verdict_changes_at(&self, _now: Time) -> Option<Time> {
        None
    }

    /// How long a new terminal's screen must read idle without a break
    /// before it counts as idle evidence: the dialogs a harness draws in
    /// its first seconds come after its first composer frame (see
    /// `machine/startup.rs`). The default: no wait.
    fn startup_settle(&self) -> Duration {
        Duration::ZERO
    }

    /// Why an idle screen with an empty composer is no lease for the
    /// terminal path now, if it is not: the harness has a native idle path
    /// of its own (a parked call DING answers to start a turn) that serves
    /// idle work, or will once it is up. The machine then reports such a
    /// screen as `unknown` with this reason, while a parked call still
    /// judges the screen itself (it is the path that delivers). The
    /// default: none, the terminal path serves idle work.
    fn native_path_holds(&self) -> Option<String> {
        None
    }

    /// A standing remark for people about the adapter's own setup (for
    /// example, whether the harness's hook configuration is in place),
    /// appended to every activity `reason`. When it changes while no
    /// evidence is wanted, the kit reports it on its own line (`unknown`,
    /// with no revision, so it can never authorize input).
    fn remark(&self) -> Option<String> {
        None
    }

    /// Whether the adapter's own setup is complete, said for people: what
    /// `ding check --adapters` prints (see [`kit::main`]), given the
    /// declared harness argv if there is one. `Err` means something the
    /// adapter relies on is missing.
    fn check_setup(&self, _harness: Option<&[String]>) -> Result<String, String> {
        Ok(self.remark().unwrap_or_else(|| "nothing to check".into()))
    }

    /// Whether the harness, run in `env` (what `ding up` will give it: see
    /// [`harness_env`]), draws a screen this provider reads, or runs its
    /// terminal interface at all: `Err` says, for people, which variable
    /// stops it and what to change. `ding check --adapters` fails on it
    /// (see [`kit::main`]). A variable that changes how a harness draws is
    /// invisible on the screen until delivery silently never happens, so
    /// it is refused before the start. The default: any environment.
    fn check_harness_env(&self, _env: &HarnessEnv) -> Result<(), String> {
        Ok(())
    }
}

/// The incarnation of the harness a provider's memory is about. A hook
/// can know of a restart before the sidecar's downlink says so (its own
/// identity comes from the new harness's environment), so both tell the
/// provider, and only the first of them is news.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incarnation(Option<String>);

impl Incarnation {
    /// Notes `incarnation`; whether it differs from the one noted before
    /// (the provider then forgets what it heard of the old one).
    pub fn changed_to(&mut self, incarnation: Option<&str>) -> bool {
        if self.0.as_deref() == incarnation {
            return false;
        }
        self.0 = incarnation.map(String::from);
        true
    }
}

/// The identity in `DING_SESSION`, `DING_INCARNATION`, `DING_GENERATION`,
/// if all three are set and non-empty (inside the harness, the PTY host sets
/// them; an adapter gets them when the sidecar knew them at spawn).
pub fn identity_from_env() -> Option<Identity> {
    let get = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
    Some(Identity {
        session: get("DING_SESSION")?,
        incarnation: get("DING_INCARNATION")?,
        generation: get("DING_GENERATION")?,
    })
}
