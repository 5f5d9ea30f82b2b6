//! The claims the machine has in flight, the answers awaiting a hook's
//! receipt, and the claims whose hook left before the answer came.
//!
//! Ordered maps, so every scan visits peers in the same order: the
//! whole-agent simulation replays a seed exactly.

use std::collections::BTreeMap;

use super::contract::Peer;
use crate::adapter::{ClaimRequest, HookCall, Park};
use crate::core::downlink::Claimed;
use crate::core::identity::Identity;
use crate::core::message::MessageName;
use crate::core::time::Time;

/// The most claims remembered whose hook left before their answer came:
/// the sidecar answers every claim at once, so a handful is plenty.
const MAX_ABANDONED: usize = 256;

/// A hook call waiting for the sidecar.
#[derive(Clone, Debug)]
pub struct Waiting {
    pub call: HookCall,
    /// The claim asked for (kept to ask again after an identity change).
    pub request: ClaimRequest,
    /// The claim id in flight, or `None` while waiting for the identity.
    pub claim: Option<u64>,
    /// Whether the claim was already asked again once.
    pub retried: bool,
    pub deadline: Time,
    /// For a parked call due for its claim: its park and deadline, to put it
    /// back in its slot if the claim grants nothing.
    pub parked: Option<(Park, Time)>,
    /// The identity the claim in flight was made for.
    pub claimed_as: Option<Identity>,
}

/// An answer carrying claimed files, queued for a hook that has not yet
/// confirmed passing it on. Until then the files are hook-owned but not
/// delivered: a hook that goes away gives them back.
#[derive(Clone, Debug)]
pub struct Delivering {
    /// The call answered: a provider may have concluded something from
    /// the answer it rendered, which does not hold if it was never passed
    /// on ([`crate::adapter::Provider::on_answer_unread`]).
    pub call: HookCall,
    pub identity: Identity,
    pub messages: Vec<MessageName>,
    pub deadline: Time,
}

/// A parked call that waits for fresh idle, whose claim granted files:
/// its wake goes only on a reading of the screen asked for after the
/// grant came (a key may have reached the terminal while the claim was
/// out, and a wake answers no PTY host that could refuse it).
#[derive(Clone, Debug)]
pub struct Confirming {
    /// The call, as it waited for its claim (`parked` is its park).
    pub waiting: Waiting,
    pub claimed: Claimed,
    /// The number of the last snapshot asked for when the grant came: a
    /// later one confirms.
    pub after: u64,
    /// When it is given up without a reading: withheld.
    pub deadline: Time,
}

impl Confirming {
    /// The park of the call (every confirming call has one).
    pub fn park(&self) -> Option<&Park> {
        self.waiting.parked.as_ref().map(|(park, _)| park)
    }
}

#[derive(Debug)]
pub struct Claims {
    pub waiting: BTreeMap<Peer, Waiting>,
    /// Wakes granted files, waiting for their confirming reading.
    pub confirming: BTreeMap<Peer, Confirming>,
    /// Answers with claimed files awaiting the hook's receipt.
    pub delivering: BTreeMap<Peer, Delivering>,
    /// Claims in flight whose hook left (or was answered with nothing at
    /// the claim deadline): what they grant is given back at once.
    abandoned: BTreeMap<u64, Identity>,
    next_claim: u64,
}

impl Default for Claims {
    fn default() -> Self {
        Claims {
            waiting: BTreeMap::new(),
            confirming: BTreeMap::new(),
            delivering: BTreeMap::new(),
            abandoned: BTreeMap::new(),
            next_claim: 1,
        }
    }
}

impl Claims {
    /// A fresh claim id.
    pub fn next_id(&mut self) -> u64 {
        let claim = self.next_claim;
        self.next_claim += 1;
        claim
    }

    /// The claim in flight for `waiting`, if any, is remembered as
    /// abandoned: what it grants is given back when it is answered.
    pub fn abandon(&mut self, waiting: &Waiting) {
        let (Some(claim), Some(identity)) = (waiting.claim, waiting.claimed_as.clone()) else {
            return;
        };
        if self.abandoned.len() >= MAX_ABANDONED
            && let Some(oldest) = self.abandoned.keys().next().copied()
        {
            self.abandoned.remove(&oldest);
        }
        self.abandoned.insert(claim, identity);
    }

    /// The identity of an abandoned claim, now answered (forgotten).
    pub fn answered_abandoned(&mut self, claim: u64) -> Option<Identity> {
        self.abandoned.remove(&claim)
    }

    /// The peer whose call waits for the answer to `claim`.
    pub fn waiting_for(&self, claim: u64) -> Option<Peer> {
        self.waiting
            .iter()
            .find(|(_, waiting)| waiting.claim == Some(claim))
            .map(|(peer, _)| *peer)
    }

    /// The peers whose claim waits for an identity to be sent under.
    pub fn unsent(&self) -> Vec<Peer> {
        self.waiting
            .iter()
            .filter(|(_, waiting)| waiting.claim.is_none())
            .map(|(peer, _)| *peer)
            .collect()
    }

    /// The slot of a parked call being claimed for, or confirmed, that
    /// holds the terminal.
    pub fn terminal_holder(&self) -> Option<&'static str> {
        self.waiting
            .values()
            .chain(
                self.confirming
                    .values()
                    .map(|confirming| &confirming.waiting),
            )
            .filter_map(|waiting| waiting.parked.as_ref())
            .find(|(park, _)| park.holds_terminal)
            .map(|(park, _)| park.slot)
    }

    /// When the earliest claim the sidecar has not answered times out.
    pub fn next_answer_due(&self) -> Option<Time> {
        self.waiting.values().map(|waiting| waiting.deadline).min()
    }

    /// When the earliest wake no reading confirmed times out.
    pub fn next_confirmation_due(&self) -> Option<Time> {
        self.confirming.values().map(|wake| wake.deadline).min()
    }

    /// When the earliest delivery's receipt times out.
    pub fn next_receipt_due(&self) -> Option<Time> {
        self.delivering.values().map(|sent| sent.deadline).min()
    }
}

/// The peers in `waits` whose deadline has come by `now`.
pub fn due<T>(waits: &BTreeMap<Peer, T>, now: Time, deadline: fn(&T) -> Time) -> Vec<Peer> {
    waits
        .iter()
        .filter(|(_, wait)| deadline(wait) <= now)
        .map(|(peer, _)| *peer)
        .collect()
}
