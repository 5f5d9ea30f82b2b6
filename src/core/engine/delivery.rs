//! Delivery: the gate, one verdict that both decides whether pending work
//! may be sent and explains why not (status reports the same value), and
//! the first transaction of a delivery, its hold announced once per change.

use crate::core::adapter::AdapterPhase;
use crate::core::config::Policy;
use crate::core::decision::Decision;
use crate::core::hold::HoldReason;
use crate::core::identity::Identity;
use crate::core::lease::LeaseSlot;
use crate::core::notice::Notice;
use crate::core::ownership::MessageState;
use crate::core::protocol::{Composer, WithdrawKeys};
use crate::core::time::Time;
use crate::core::transport::Transport;

use super::output::{Output, Send, SendIf};
use super::state::{Engine, InFlight, Phase};

impl Engine {
    /// Whether pending work may be sent now, and under which fence. `Ok(None)`
    /// is an unconditional send (aggressive); `Ok(Some(..))` a compare-and-send.
    pub(super) fn gate(&self, now: Time) -> Result<Option<(Identity, u64)>, HoldReason> {
        if self.in_flight.is_some() {
            return Err(HoldReason::AwaitingReply);
        }
        if self.stopping {
            return Err(HoldReason::Stopping);
        }
        if self.typed.is_some() {
            return Err(HoldReason::AwaitingReturn);
        }
        if self.gathering(now) {
            return Err(HoldReason::Gathering);
        }
        if let Some(block) = &self.pty_block {
            return Err(block.reason.clone());
        }
        let Some(pty_identity) = self.pty.identity.as_ref() else {
            return Err(HoldReason::PtyUnknown);
        };
        if self.config.policy == Policy::Aggressive {
            return Ok(None);
        }
        match &self.adapter.phase {
            AdapterPhase::Disabled | AdapterPhase::Starting { .. } => {
                return Err(HoldReason::AdapterStarting);
            }
            AdapterPhase::Down { down, .. } => {
                return Err(HoldReason::AdapterDown { down: down.clone() });
            }
            AdapterPhase::Up { .. } => {
                if self
                    .silent_since()
                    .is_some_and(|since| now.since(since) >= self.config.tunables.adapter_silence)
                {
                    return Err(HoldReason::AdapterSilent);
                }
            }
        }
        let lease = match &self.lease {
            LeaseSlot::Ended { reason, .. } => return Err(reason.clone()),
            LeaseSlot::Granted(lease) => lease,
        };
        // The evidence's own verdict comes before its age: "composer
        // nonempty" explains more than "expired" when both are true.
        match lease.composer {
            Composer::Empty => {}
            Composer::Nonempty => return Err(HoldReason::ComposerNonempty),
            Composer::Unknown => return Err(HoldReason::ComposerUnknown),
        }
        if now >= lease.expires_at {
            return Err(HoldReason::LeaseExpired);
        }
        if let Some(part) = lease.identity.mismatch(pty_identity) {
            return Err(HoldReason::IdentityMismatch { part });
        }
        let revision = lease.revision.ok_or(HoldReason::RevisionUnknown)?;
        if self.withheld_undrawn() && revision <= self.pasted_revision {
            // Nothing was drawn since the withheld notice's paste (a
            // harness that stopped reading its input): its empty composer
            // says nothing, and a new paste would join the old one when it
            // is drawn.
            return Err(HoldReason::ReturnWithheld {
                why: "nothing was drawn since the withheld notice was pasted".into(),
            });
        }
        Ok(Some((lease.identity.clone(), revision)))
    }

    pub(super) fn deliver(&mut self) {
        if self.take_out_withheld() {
            return;
        }
        if self.typed.is_some() {
            return self.submit_typed();
        }
        if self.ownership.pending_len() == 0 {
            self.hold = None;
            return;
        }
        let fence = match self.gate(self.now) {
            Ok(fence) => fence,
            Err(reason) => return self.announce_hold(reason),
        };
        let tunables = &self.config.tunables;
        let Some(notice) = Notice::build(
            self.ownership.pending(),
            self.ownership.pending_len(),
            tunables.notice_max_files,
            &self.config.agent,
            &self.config.unread_dir,
        ) else {
            return;
        };
        // The careful policy writes the paste alone; its Return is a
        // compare-and-send of its own (`submit_typed`).
        let (transport, phase) = match fence {
            Some(_) => (
                Transport::paste(&notice),
                Phase::Paste {
                    text: notice.text().to_owned(),
                },
            ),
            None => (
                Transport::combined(&notice, tunables.submit_delay),
                Phase::Whole,
            ),
        };
        let time_fence = tunables.time_fence();
        let input_hold = tunables.input_hold();
        let messages = notice.named().to_vec();
        let request = self.next_request;
        self.next_request += 1;
        self.ownership
            .set(&messages, &MessageState::InFlight { request }, self.now);
        let expected_revision = fence.as_ref().map(|(_, revision)| *revision);
        self.in_flight = Some(InFlight {
            request,
            owner: request,
            phase,
            asked_at: self.now,
            messages: messages.clone(),
            expected_revision,
            incarnation: self
                .pty
                .identity
                .as_ref()
                .map(|identity| identity.incarnation.clone()),
            deadline: self.now.saturating_add(self.config.pty_reply_timeout),
            lease: match &self.lease {
                LeaseSlot::Granted(lease) if fence.is_some() => Some(lease.clone()),
                _ => None,
            },
        });
        self.hold = None;
        self.record(Decision::Rang {
            request,
            messages: messages.clone(),
            conditional: fence.is_some(),
            expected_revision,
        });
        match fence {
            Some((identity, expected_revision)) => {
                let withdraw = match &self.lease {
                    LeaseSlot::Granted(lease) => {
                        lease.withdraw.as_ref().map(WithdrawKeys::transport)
                    }
                    LeaseSlot::Ended { .. } => None,
                };
                // A lease authorizes one attempt; the next needs fresh evidence.
                self.lease = LeaseSlot::ended(HoldReason::LeaseSpent, self.now);
                self.outputs.push_back(Output::SendIf(SendIf {
                    request,
                    identity,
                    expected_revision,
                    fence: time_fence,
                    transport,
                    messages,
                    // The paste's Return comes next: a person's typed text
                    // waits for it instead of joining the notice.
                    hold_input: Some(input_hold),
                    withdraw,
                }));
            }
            None => self.outputs.push_back(Output::Send(Send {
                request,
                transport,
                messages,
            })),
        }
    }

    pub(super) fn announce_hold(&mut self, reason: HoldReason) {
        if self.hold.as_ref().is_some_and(|(held, _)| *held == reason) {
            return;
        }
        let since = self.hold_view(reason.clone(), self.now).since;
        self.hold = Some((reason.clone(), since));
        let oldest = self.ownership.pending().next().cloned();
        self.record(Decision::Held {
            reason,
            pending: self.ownership.pending_len(),
            oldest,
        });
    }
}
