//! The adapter's process and its lines: spawned, down, a line that is
//! refused, and each event a good line carries (activity, which grants or
//! ends the lease; a turn boundary; a claim; a release; a lifecycle fact).

use crate::core::adapter::AdapterPhase;
use crate::core::config::Fence;
use crate::core::decision::{Decision, ReleaseCause};
use crate::core::downlink::{ClaimRefusal, Downlink};
use crate::core::hold::{AdapterDown, HoldReason};
use crate::core::lease::{Lease, LeaseSlot, RevisionSource};
use crate::core::protocol::{
    self, ActivityState, Body, Composer, Event, Lifecycle, ProtocolError, WithdrawKeys,
};

use super::output::Output;
use super::state::Engine;

impl Engine {
    pub(super) fn on_adapter_spawned(&mut self, pid: u32) {
        if !matches!(self.adapter.phase, AdapterPhase::Starting { .. }) {
            self.record(Decision::Ignored {
                what: format!("adapter spawn report (pid {pid}) not requested"),
            });
            return;
        }
        self.adapter.spawned(pid, self.now);
        self.lease = LeaseSlot::ended(HoldReason::NoEvidence, self.now);
        self.adapter_reason = None;
        self.adapter_reason_at = None;
        self.record(Decision::AdapterUp { pid });
        // A new process knows nothing: tell it the terminal, then (in
        // `settle`) whether evidence is wanted.
        self.outputs.push_back(Output::ToAdapter(Downlink::Pty {
            identity: self.pty.identity.clone(),
        }));
        self.retell_typed();
        self.demand = None;
    }

    pub(super) fn on_adapter_down(&mut self, down: AdapterDown) {
        self.demand = None;
        if let Some(delay) = self.adapter.went_down(down.clone(), self.now) {
            self.end_lease(HoldReason::AdapterDown { down: down.clone() });
            self.give_back_claims_in_doubt();
            let retry_in_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            self.record(Decision::AdapterDown { down, retry_in_ms });
        }
    }

    /// Notes that the adapter produced output: it is alive, whatever it said.
    pub(super) fn adapter_spoke(&mut self) {
        if let AdapterPhase::Up { last_line, .. } = &mut self.adapter.phase {
            *last_line = Some(self.now);
        }
    }

    pub(super) fn on_adapter_line(&mut self, line: &[u8]) {
        if !self.adapter.is_up() {
            self.record(Decision::Ignored {
                what: "adapter line while no adapter is up".into(),
            });
            return;
        }
        self.adapter_spoke();
        let event = match protocol::parse_line(line) {
            Ok(event) => event,
            Err(error) => return self.reject_line(error),
        };
        // A claim always gets an answer, even a refusal: a hook waits on it.
        let claim = match &event.body {
            Body::Claim(claim) => Some(claim.claim),
            _ => None,
        };
        if let AdapterPhase::Up { last_sequence, .. } = &mut self.adapter.phase {
            if let Some(last) = *last_sequence
                && event.sequence <= last
            {
                if let Some(claim) = claim {
                    self.refuse_claim(claim, ClaimRefusal::StaleSequence);
                }
                return self.reject_line(ProtocolError::StaleSequence {
                    sequence: event.sequence,
                    last,
                });
            }
            *last_sequence = Some(event.sequence);
        }
        let Some(current) = self.pty.identity.as_ref() else {
            if let Some(claim) = claim {
                self.refuse_claim(claim, ClaimRefusal::PtyUnknown);
            }
            return self.end_lease(HoldReason::PtyUnknown);
        };
        if let Some(part) = event.identity.mismatch(current) {
            if let Some(claim) = claim {
                self.refuse_claim(claim, ClaimRefusal::IdentityMismatch);
            }
            return self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.on_event(event);
    }

    pub(super) fn reject_line(&mut self, error: ProtocolError) {
        self.record(Decision::ProtocolRejected {
            error: error.clone(),
        });
        self.end_lease(HoldReason::Protocol { error });
    }

    fn on_event(&mut self, event: Event<'_>) {
        if let Body::Activity(activity) = &event.body {
            self.adapter_reason = activity.reason.as_deref().map(str::to_owned);
            self.adapter_reason_at = Some(self.now);
            self.read_revision = activity.revision;
            let unread = match (self.pty.revision, activity.revision) {
                (Some(known), Some(read)) => known > read,
                _ => false,
            };
            self.unread_move_since = unread.then_some(self.now);
        }
        match event.body {
            Body::Activity(activity) if activity.state == ActivityState::Idle => {
                let valid_for = activity.valid_for.min(self.config.tunables.lease_cap);
                let (revision, revision_source) = match (
                    activity.revision,
                    self.pty.revision,
                    self.config.tunables.fence,
                ) {
                    (Some(evidence), _, _) => (Some(evidence), Some(RevisionSource::Evidence)),
                    // Only the loudly named unsafe fence guesses: the
                    // revision known at receipt cannot see a keystroke typed
                    // after the adapter looked.
                    (None, Some(known), Fence::ReceiptUnsafe) => {
                        (Some(known), Some(RevisionSource::PtyAtReceipt))
                    }
                    (None, _, _) => (None, None),
                };
                let lease = Lease {
                    identity: event.identity.into_owned(),
                    sequence: event.sequence,
                    granted_at: self.now,
                    expires_at: self.now.saturating_add(valid_for),
                    composer: activity.composer,
                    revision,
                    revision_source,
                    typed: activity.typed,
                    withdraw: activity.withdraw.map(WithdrawKeys::into_owned),
                };
                self.record(Decision::LeaseGranted {
                    sequence: lease.sequence,
                    expires_at: lease.expires_at,
                    composer: lease.composer,
                    revision: lease.revision,
                });
                if activity.composer == Composer::Nonempty {
                    self.paste_drawn = true;
                }
                // A withheld notice never yet drawn may still be: an empty
                // composer does not show it deleted.
                if activity.composer == Composer::Empty && !self.withheld_undrawn() {
                    self.release_interrupted_unsent();
                }
                self.lease = LeaseSlot::Granted(lease);
            }
            Body::Activity(activity) => {
                if matches!(activity.state, ActivityState::Active | ActivityState::Child) {
                    // A turn runs, on the interrupted notice perhaps: whatever
                    // the composer held went with it. A screen the grammar
                    // cannot read (`unknown`) says no such thing: the notice
                    // taken back out is still owed to the next empty
                    // composer, or it would stay staged for ever.
                    self.forget_interrupted();
                    self.withheld_notice = None;
                    self.typed_sent_by_a_turn();
                }
                self.end_lease(HoldReason::NotIdle {
                    state: activity.state,
                })
            }
            Body::TurnBoundary { messages } => {
                self.forget_interrupted();
                self.end_lease(HoldReason::TurnBoundary);
                self.on_receipt(messages, event.identity.incarnation.into_owned());
            }
            Body::Claim(claim) => {
                self.forget_interrupted();
                self.end_lease(HoldReason::TurnBoundary);
                self.on_claim(claim, event.identity.incarnation.into_owned());
            }
            Body::Printed { messages } => self.claims_printed(&messages),
            Body::Release { messages, reason } => {
                // A newer event ends the lease, like every other (spec §6).
                self.end_lease(HoldReason::TurnBoundary);
                self.on_undelivered(messages, reason, &event.identity.incarnation)
            }
            Body::Lifecycle { event: fact } => {
                self.record(Decision::LifecycleFact { event: fact });
                self.end_lease(HoldReason::Lifecycle { event: fact });
                self.context_since = Some(self.now);
                if matches!(fact, Lifecycle::Clear | Lifecycle::Crash) {
                    let owned = self.ownership.owned();
                    self.release(owned, ReleaseCause::Lifecycle);
                    // A file a hook took before the watch reported it went
                    // into the context that is gone, too (spec §7 rule 3).
                    self.ownership.forget_unseen();
                }
            }
        }
    }
}
