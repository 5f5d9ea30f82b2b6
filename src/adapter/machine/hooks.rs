//! A hook call's plan carried out: facts and receipts told to the sidecar,
//! an answer, a claim, or a park; and a hook that went away.

use crate::adapter::hook_wire::{HookAnswer, HookCall, HookRefusal};
use crate::adapter::parked;
use crate::adapter::timing::CLAIM_DEADLINE;
use crate::adapter::{ClaimRequest, HookAction, Park, ParkEnded, Provider};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::protocol::Undelivered;
use crate::core::time::Time;

use super::calls::{another_terminal, no_identity, read_call};
use super::claims::Waiting;
use super::contract::Output;
use super::contract::Peer;
use super::state::AdapterMachine;

impl<P: Provider> AdapterMachine<P> {
    pub(super) fn on_hook_gone(&mut self, peer: Peer) {
        // An answer never received is no delivery. A claim still in flight
        // is given back when it is answered; files already granted are
        // given back now.
        if let Some(waiting) = self.claims.waiting.remove(&peer) {
            self.claims.abandon(&waiting);
        }
        if let Some(wake) = self.claims.confirming.remove(&peer)
            && let Some(identity) = &wake.waiting.claimed_as
        {
            self.give_back(identity, wake.claimed.granted, Undelivered::HookGone);
            self.close_unless_wanted();
        }
        if let Some(sent) = self.claims.delivering.remove(&peer) {
            self.answer_unread(sent, Undelivered::HookGone);
        }
        if let Some(parked) = self.parked.withdraw(peer) {
            self.end_park(parked, ParkEnded::Withdrawn);
        }
        self.strangers.forget(peer);
    }

    pub(super) fn on_call(&mut self, peer: Peer, line: &[u8]) {
        let call = match read_call(self.provider.name(), line) {
            Ok(call) => call,
            Err(refusal) => return self.refuse(peer, refusal),
        };
        let Some(identity) = call.identity.clone() else {
            return self.refuse(peer, no_identity());
        };
        if self.identity.as_ref() != Some(&identity) {
            // Nothing of it reaches the sidecar or the provider until the
            // machine knows its terminal (`strangers.rs`).
            if !self.strangers.wait(peer, line.to_vec(), identity, self.now) {
                self.refuse(peer, another_terminal());
            }
            return;
        }
        let plan = self.provider.on_hook(&call, &self.agent, self.now);
        if let Some(identity) = self.identity_for(&call) {
            for fact in plan.facts {
                let line = self.uplink.lifecycle(&identity, fact);
                self.emit(Output::Uplink(line));
            }
            if !plan.received.is_empty() {
                let line = self.uplink.turn_boundary(&identity, plan.received);
                self.emit(Output::Uplink(line));
            }
            self.give_back(&identity, plan.undelivered, Undelivered::NoReceipt);
        }
        for slot in plan.end_parked {
            if let Some(parked) = self.parked.release(slot) {
                self.end_park(parked, ParkEnded::Ended);
            }
        }
        if plan.recheck_settings {
            self.read_settings();
        }
        let drafting = self.drafting;
        // What the hook said may change the evidence: read the screen again,
        // and wake nothing until then.
        self.screen_stale = true;
        self.fresh_idle = false;
        match plan.action {
            HookAction::Answer(answer) => self.answer(peer, &answer),
            HookAction::Claim(request) => self.claim_for(peer, call, request, None),
            HookAction::ClaimUnlessDrafting(_) if drafting => {
                self.emit(Output::Log(format!(
                    "{}: the person's draft is in the composer; their prompt carries the work",
                    call.event
                )));
                let nothing = Claimed {
                    claim: 0,
                    granted: Vec::new(),
                    refused: Vec::new(),
                    refusal: None,
                    not_granted: 0,
                };
                let answer = self
                    .provider
                    .on_claimed(&call, &nothing, &self.agent, self.now);
                self.answer(peer, &answer);
            }
            HookAction::ClaimUnlessDrafting(request) => self.claim_for(peer, call, request, None),
            HookAction::Park(park) => {
                let deadline = parked::deadline(&park, call.timeout(), self.now);
                // Says when a call parks: an operator (and a test) can
                // tell a parked call from one still on its way.
                self.emit(Output::Log(format!(
                    "{}: parked in slot {} for at most {} ms",
                    call.event,
                    park.slot,
                    deadline.since(self.now).as_millis()
                )));
                if let Some(replaced) =
                    self.parked
                        .park(peer, call, park, deadline, self.evidence_wanted, self.now)
                {
                    self.end_park(replaced, ParkEnded::Replaced);
                }
            }
        }
    }

    /// Makes a claim for `peer`'s call and waits for its answer.
    pub(super) fn claim_for(
        &mut self,
        peer: Peer,
        call: HookCall,
        request: ClaimRequest,
        parked: Option<(Park, Time)>,
    ) {
        self.claims.waiting.insert(
            peer,
            Waiting {
                call,
                request,
                claim: None,
                retried: false,
                deadline: self.now + CLAIM_DEADLINE,
                parked,
                claimed_as: None,
            },
        );
        self.send_claim(peer);
    }

    /// The identity a call is about: the hook's own (from its environment,
    /// the truth for the harness that ran it), else the sidecar's.
    fn identity_for(&self, call: &HookCall) -> Option<Identity> {
        call.identity.clone().or_else(|| self.identity.clone())
    }

    pub(super) fn send_claim(&mut self, peer: Peer) {
        let Some(waiting) = self.claims.waiting.get(&peer) else {
            return;
        };
        let Some(identity) = self.identity_for(&waiting.call) else {
            return;
        };
        let request = waiting.request.clone();
        let claim = self.claims.next_id();
        let line = self.uplink.claim(&identity, claim, &request);
        self.emit(Output::Uplink(line));
        if let Some(waiting) = self.claims.waiting.get_mut(&peer) {
            waiting.claim = Some(claim);
            waiting.claimed_as = Some(identity);
        }
    }

    pub(super) fn answer(&mut self, peer: Peer, answer: &HookAnswer) {
        self.emit(Output::HookAnswer {
            peer,
            line: answer.to_line(),
        });
    }

    pub(super) fn refuse(&mut self, peer: Peer, refusal: HookRefusal) {
        self.emit(Output::HookAnswer {
            peer,
            line: refusal.to_line(),
        });
    }
}
