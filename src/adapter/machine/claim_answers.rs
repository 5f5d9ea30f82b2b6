//! The sidecar's answer to a claim, carried out: files delivered to the
//! hook (and its receipt awaited), a wake confirmed by a fresh reading or
//! withheld, a parked call put back in its slot, files given back.

use crate::adapter::hook_wire::{HookAnswer, HookCall};
use crate::adapter::parked::{self, Parked};
use crate::adapter::timing::{CLAIM_DEADLINE, RECEIPT_DEADLINE};
use crate::adapter::{Park, ParkAnswer, ParkEnded, Provider, Reading};
use crate::core::downlink::{ClaimRefusal, Claimed};
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::protocol::Undelivered;
use crate::core::time::Time;

use super::claims::{Confirming, Delivering, Waiting};
use super::contract::Output;
use super::contract::Peer;
use super::state::{AdapterMachine, Link};

impl<P: Provider> AdapterMachine<P> {
    pub(super) fn on_claimed(&mut self, claimed: Claimed) {
        if let Some(identity) = self.claims.answered_abandoned(claimed.claim) {
            // Nobody is left to pass these on.
            return self.give_back(&identity, claimed.granted, Undelivered::HookGone);
        }
        let Some(peer) = self.claims.waiting_for(claimed.claim) else {
            return;
        };
        let identity_refusal = matches!(
            claimed.refusal,
            Some(ClaimRefusal::PtyUnknown | ClaimRefusal::IdentityMismatch)
        );
        if let Some(waiting) = self.claims.waiting.get_mut(&peer)
            && identity_refusal
            && !waiting.retried
        {
            // The hook may know of a restart before the sidecar does: wait
            // for the sidecar's next identity, then ask once more.
            waiting.retried = true;
            waiting.claim = None;
            return;
        }
        let Some(waiting) = self.claims.waiting.remove(&peer) else {
            return;
        };
        if let Some((park, deadline)) = waiting.parked.clone()
            && claimed.granted.is_empty()
        {
            // Nothing to wake the harness with: keep offering.
            return self.repark(peer, waiting.call, park, deadline);
        }
        if waiting
            .parked
            .as_ref()
            .is_some_and(|(park, _)| park.waits_for_fresh_idle)
        {
            // The screen was fresh idle and the person quiet when the claim
            // went out; a key may have reached the terminal since, and no
            // PTY host fences a wake. It goes only on a reading asked for
            // now (see `confirm_wakes`).
            self.claims.confirming.insert(
                peer,
                Confirming {
                    waiting,
                    claimed,
                    after: self.snapshots_asked,
                    deadline: self.now + CLAIM_DEADLINE,
                },
            );
            self.screen_stale = true;
            return;
        }
        self.deliver(peer, waiting, &claimed);
    }

    /// Answers `peer`'s call with the files its claim was granted.
    fn deliver(&mut self, peer: Peer, waiting: Waiting, claimed: &Claimed) {
        let mut answer = self
            .provider
            .on_claimed(&waiting.call, claimed, &self.agent, self.now);
        if waiting.parked.is_some() {
            answer.parked = Some(ParkAnswer::Delivered);
        }
        match waiting.claimed_as {
            Some(identity) if !claimed.granted.is_empty() => self.answer_for_receipt(
                peer,
                &answer,
                Delivering {
                    call: waiting.call,
                    identity,
                    messages: claimed.granted.clone(),
                    deadline: self.now + RECEIPT_DEADLINE,
                },
            ),
            _ => self.answer(peer, &answer),
        }
    }

    /// Wakes whose confirming reading has come (this snapshot's) go if it
    /// is still fresh idle, settled, and the person has still been quiet
    /// for the turn quiet ([`Pacing::turn_quiet`](super::pacing::Pacing::turn_quiet)); else they are withheld.
    pub(super) fn confirm_wakes(&mut self, reading: &Reading) {
        let read: Vec<Peer> = self
            .claims
            .confirming
            .iter()
            .filter(|(_, wake)| wake.after < self.snapshots_asked)
            .map(|(peer, _)| *peer)
            .collect();
        for peer in read {
            let Some(wake) = self.claims.confirming.remove(&peer) else {
                continue;
            };
            let Some(park) = wake.park() else {
                continue;
            };
            let screen_later = (!parked::may_wake(park, self.fresh_idle))
                .then(|| self.now.saturating_add(park.settle));
            let quiet_later = self.person.not_before(self.pacing.turn_quiet(), self.now);
            let why = match (screen_later, quiet_later) {
                (None, None) => {
                    self.deliver(peer, wake.waiting, &wake.claimed);
                    continue;
                }
                (Some(_), _) => format!("the screen read after its grant: {}", reading.reason),
                (None, Some(_)) => format!(
                    "the reading after its grant shows the person's input {} (a turn waits {} ms after it)",
                    self.person.describe(self.now),
                    self.pacing.turn_quiet().as_millis()
                ),
            };
            self.withhold(peer, wake, screen_later.or(quiet_later), &why);
        }
        self.close_unless_wanted();
    }

    /// A wake granted files is withheld (`why`): the files go back to
    /// unread work (`release` `withheld`) and the call to its slot, due
    /// again `again_at`, or (`None`: its terminal is gone) it is answered
    /// with nothing.
    pub(super) fn withhold(
        &mut self,
        peer: Peer,
        wake: Confirming,
        again_at: Option<Time>,
        why: &str,
    ) {
        self.emit(Output::Log(format!(
            "{}: withheld: {why}",
            wake.waiting.call.event
        )));
        if let Some(identity) = &wake.waiting.claimed_as {
            self.give_back(identity, wake.claimed.granted, Undelivered::Withheld);
        }
        let Some((park, deadline)) = wake.waiting.parked else {
            return;
        };
        let back = Parked {
            peer,
            call: wake.waiting.call,
            park,
            deadline,
            fire_at: None,
        };
        let stale = match again_at {
            None => Some(back),
            Some(at) if self.evidence_wanted => self.parked.defer_until(back, at),
            Some(_) => self.parked.restore(back, false, self.now),
        };
        if let Some(stale) = stale {
            let ended = if again_at.is_some() {
                ParkEnded::Replaced
            } else {
                ParkEnded::Ended
            };
            self.end_park(stale, ended);
        }
    }

    /// Closes the terminal once nothing wants it read: no evidence, no wake
    /// waiting for its confirming reading, and a screen that has settled.
    pub(super) fn close_unless_wanted(&mut self) {
        if !self.screen_wanted() && self.link != Link::Closed {
            self.screen_stale = false;
            self.close_pty();
        }
    }

    /// Answers `peer` with claimed files and waits for its receipt.
    fn answer_for_receipt(&mut self, peer: Peer, answer: &HookAnswer, sent: Delivering) {
        self.claims.delivering.insert(peer, sent);
        self.emit(Output::HookAnswerForReceipt {
            peer,
            line: answer.to_line(),
        });
    }

    /// An answer carrying claimed files that its hook never passed on
    /// (it went away, or never sent its receipt): the files go back to
    /// unread work (`why`), and the harness went on as without an answer,
    /// so what the provider concluded from rendering it does not hold.
    /// The screen is read again: the verdict may change.
    pub(super) fn answer_unread(&mut self, sent: Delivering, why: Undelivered) {
        self.give_back(&sent.identity, sent.messages, why);
        self.provider.on_answer_unread(&sent.call, self.now);
        self.screen_stale = true;
    }

    /// The files an answer carried go back to unread work: the hook never
    /// passed them on. (The sidecar logs the release and its cause.)
    pub(super) fn give_back(
        &mut self,
        identity: &Identity,
        messages: Vec<MessageName>,
        why: Undelivered,
    ) {
        if !messages.is_empty() {
            let line = self.uplink.release(identity, messages, why);
            self.emit(Output::Uplink(line));
        }
    }

    /// Puts a parked call whose claim granted nothing back in its slot, or
    /// answers it with nothing if a newer call took the slot.
    pub(super) fn repark(&mut self, peer: Peer, call: HookCall, park: Park, deadline: Time) {
        let back = Parked {
            peer,
            call,
            park,
            deadline,
            fire_at: None,
        };
        if let Some(stale) = self.parked.restore(back, self.evidence_wanted, self.now) {
            self.end_park(stale, ParkEnded::Replaced);
        }
    }

    /// Answers a parked call with nothing, saying why, and tells the
    /// provider.
    pub(super) fn end_park(&mut self, parked: Parked<Peer, HookCall>, ended: ParkEnded) {
        // The terminal may be free again: read it.
        self.screen_stale = true;
        if let Some(why) = ended.answer() {
            let answer = HookAnswer {
                parked: Some(why),
                ..HookAnswer::default()
            };
            self.answer(parked.peer, &answer);
        }
    }
}
