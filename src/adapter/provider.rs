//! The seam between the kit and a harness: the [`Provider`] trait.

use std::time::Duration;

use super::harness_env::HarnessEnv;
use super::hook_plan::{AgentContext, HookPlan};
use super::hook_wire::{HookAnswer, HookCall};
use super::reading::Reading;
use super::screen;
use super::settings_check::SettingsRead;
use super::settings_hooks;
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::protocol::WithdrawKeys;
use crate::core::time::Time;
use crate::pty::wire::Snapshot;

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

    /// The answer [`Provider::on_claimed`] rendered for `call`, which
    /// carried claimed files, was never passed on to the harness at `now`:
    /// its hook went away, or never sent its receipt. The kit gives the
    /// files back to unread work; the harness went on as if the hook had
    /// answered nothing (a hook killed or timed out is a failed run), so
    /// whatever the provider concluded from that answer (a turn going on,
    /// say) does not hold. The default: nothing concluded.
    fn on_answer_unread(&mut self, _call: &HookCall, _now: Time) {}

    /// The terminal's identity changed at `now` (a new incarnation of the
    /// harness, or none known). Every provider decides here, in one place,
    /// what it remembers across a restart: what the hooks said about the
    /// old incarnation no longer holds for the new one.
    fn on_new_terminal(&mut self, identity: Option<&Identity>, now: Time);

    /// A provider whose hooks live in one settings file hands its
    /// [`settings_hooks::SettingsHooks`] to the kit, which then answers
    /// [`Provider::settings_files`], [`Provider::on_settings_read`],
    /// [`Provider::hook_program`], [`Provider::on_hook_program`],
    /// [`Provider::remark`] and [`Provider::check_setup`] from it. The
    /// default: none.
    fn settings_hooks(&self) -> Option<&settings_hooks::SettingsHooks> {
        None
    }

    /// The same, to change.
    fn settings_hooks_mut(&mut self) -> Option<&mut settings_hooks::SettingsHooks> {
        None
    }

    /// The harness's hook settings files the provider's setup check reads.
    /// A provider reads no file itself: the shell reads these when the
    /// adapter starts (and before a check) and again when a hook plan asks
    /// ([`HookPlan::recheck_settings`]), and hands them to
    /// [`Provider::on_settings_read`].
    fn settings_files(&self) -> Vec<std::path::PathBuf> {
        self.settings_hooks()
            .map(settings_hooks::SettingsHooks::files)
            .unwrap_or_default()
    }

    /// The files [`Provider::settings_files`] named, as read.
    fn on_settings_read(&mut self, read: &[SettingsRead]) {
        if let Some(hooks) = self.settings_hooks_mut() {
            hooks.on_read(read);
        }
    }

    /// The program the provider's hook commands run (`ding`, as the
    /// declaration spells it), if its hooks are shell commands the
    /// harness runs: the shell looks it up once, when the adapter starts
    /// (and before a check), and says what it found with
    /// [`Provider::on_hook_program`].
    fn hook_program(&self) -> Option<String> {
        self.settings_hooks()
            .map(|hooks| hooks.program().to_string())
    }

    /// Whether [`Provider::hook_program`] was found where the harness runs
    /// its hooks: a hook that cannot find it does nothing.
    fn on_hook_program(&mut self, found: bool) {
        if let Some(hooks) = self.settings_hooks_mut() {
            hooks.on_program(found);
        }
    }

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
        self.settings_hooks()
            .map(settings_hooks::SettingsHooks::remark)
    }

    /// Whether the adapter's own setup is complete, said for people: what
    /// `ding check --adapters` prints (see [`kit::main`](super::kit::main)), given the
    /// declared harness argv if there is one. `Err` means something the
    /// adapter relies on is missing.
    fn check_setup(&self, _harness: Option<&[String]>) -> Result<String, String> {
        match self.settings_hooks() {
            Some(hooks) => hooks.check_setup(),
            None => Ok(self.remark().unwrap_or_else(|| "nothing to check".into())),
        }
    }

    /// Whether the harness, run in `env` (what `ding up` will give it: see
    /// [`harness_env`](super::harness_env)), draws a screen this provider reads, or runs its
    /// terminal interface at all: `Err` says, for people, which variable
    /// stops it and what to change. `ding check --adapters` fails on it
    /// (see [`kit::main`](super::kit::main)). A variable that changes how a harness draws is
    /// invisible on the screen until delivery silently never happens, so
    /// it is refused before the start. The default: any environment.
    fn check_harness_env(&self, _env: &HarnessEnv) -> Result<(), String> {
        Ok(())
    }
}
