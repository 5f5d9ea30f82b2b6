//! A snapshot read into evidence: the provider's reading, held back while
//! the screen is new, a parked call holds the terminal or the native path
//! delivers; what it says of the typed notice and the person; and the
//! `activity` line that reports it.

use crate::adapter::parked;
use crate::adapter::screen;
use crate::adapter::{Provider, Reading};
use crate::core::protocol::{ActivityState, Composer};
use crate::pty::wire::Snapshot;

use super::contract::Output;
use super::state::{AdapterMachine, Link};

impl<P: Provider> AdapterMachine<P> {
    pub(super) fn on_snapshot(&mut self, snapshot: &Snapshot) {
        self.link = Link::Open {
            snapshot_pending: false,
        };
        let mut reading = self.provider.evidence(snapshot, self.now);
        let settle = self.provider.startup_settle();
        let settled = self
            .startup
            .observe(reading.state == ActivityState::Idle, settle, self.now);
        self.settle_check_at = self.startup.settles_at(settle);
        if !settled && parked::is_fresh_idle(&reading) {
            // A dialog of the harness's first seconds may still come.
            reading.state = ActivityState::Unknown;
            reading.reason = format!(
                "{}; the harness's screen is new: it counts as idle once it has read idle for {} ms",
                reading.reason,
                settle.as_millis()
            )
            .into();
        }
        // The provider's own evidence, hooks and screen: a screen that
        // flashes idle between two states (a command's Return, then the
        // spinner) is not fresh idle.
        self.fresh_idle = parked::is_fresh_idle(&reading);
        self.person = self.person.read_again(snapshot, self.now);
        let typed = self.typed_on(snapshot, &reading);
        self.drafting = reading.composer == Composer::Nonempty && typed.is_none();
        if let Some(request) = typed {
            reading.reason = format!("{}; it holds DING's notice {request}", reading.reason).into();
        }
        self.confirm_wakes(&reading);
        self.report(reading, snapshot.revision, typed);
        // A screen read only to see it settle is not kept open after.
        self.close_unless_wanted();
    }

    /// The typed notice this screen shows alone in an idle composer, if
    /// any: what its Return waits for.
    fn typed_on(&self, snapshot: &Snapshot, reading: &Reading) -> Option<u64> {
        let (request, text) = self.typed.as_ref()?;
        let idle_with_text =
            reading.state == ActivityState::Idle && reading.composer == Composer::Nonempty;
        (idle_with_text && screen::holds_exactly(&self.provider.composer_content(snapshot), text))
            .then_some(*request)
    }

    fn report(&mut self, mut reading: Reading, revision: u64, mut typed: Option<u64>) {
        if !self.evidence_wanted {
            return;
        }
        let Some(identity) = self.identity.clone() else {
            return;
        };
        if let Some(slot) = self.terminal_held_by() {
            typed = None;
            reading.state = ActivityState::Unknown;
            reading.reason =
                format!("a parked hook call ({slot}) delivers; {}", reading.reason).into();
        } else if let Some(why) = self.provider.native_path_holds()
            && parked::is_fresh_idle(&reading)
        {
            // A draft stays the screen's own reason; an idle screen waits
            // for the native path (the parked call it makes).
            reading.state = ActivityState::Unknown;
            reading.reason = format!("{}; {why}", reading.reason).into();
        }
        if let Some(remark) = self.provider.remark() {
            reading.reason = format!("{}; {remark}", reading.reason).into();
            self.remarked = Some(remark);
        }
        // Evidence that allows delivery is a lease that lapses: it is read
        // again before it does. Evidence that holds stays true until
        // something moves, a hook or the sidecar speaks, or time alone
        // changes the provider's verdict.
        self.next_heartbeat = if parked::is_fresh_idle(&reading) && typed.is_none() {
            Some(self.now + self.pacing.heartbeat)
        } else {
            self.provider.verdict_changes_at(self.now)
        };
        let withdraw = self.provider.withdraw_keys();
        let line = self.uplink.activity(
            &identity,
            &reading,
            revision,
            self.pacing.valid_for,
            typed,
            withdraw,
        );
        self.emit(Output::Uplink(line));
    }

    /// The slot of a parked call (waiting or being claimed for) that holds
    /// the terminal. A parked call that may not wake the harness on this
    /// screen ([`parked::may_wake`]) holds nothing: the screen's own
    /// evidence says why nothing is delivered (a draft, say).
    fn terminal_held_by(&self) -> Option<&'static str> {
        self.parked
            .terminal_park()
            .filter(|park| parked::may_wake(park, self.fresh_idle))
            .map(|park| park.slot)
            .or_else(|| self.claims.terminal_holder())
    }

    /// Reports a changed remark on its own line while no evidence is wanted
    /// (while it is, every activity line carries it).
    pub(super) fn report_remark(&mut self) {
        if self.evidence_wanted {
            return;
        }
        let Some(identity) = self.identity.clone() else {
            return;
        };
        let remark = self.provider.remark();
        if remark.is_some() && remark != self.remarked {
            let text = remark.clone().unwrap_or_default();
            let line = self.uplink.activity_unknown(&identity, &text);
            self.emit(Output::Uplink(line));
            self.remarked = remark;
        }
    }
}
