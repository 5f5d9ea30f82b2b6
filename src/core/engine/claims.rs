//! The hooks' side of ownership: a receipt after the fact, a claim that is
//! answered before its hook injects anything, and files a claim's hook
//! gave back unused.

use crate::core::decision::{Decision, ReleaseCause};
use crate::core::downlink::{ClaimRefusal, Claimed, Downlink, Refusal, RefusedState};
use crate::core::message::MessageName;
use crate::core::ownership::MessageState;
use crate::core::protocol::{Claim, ClaimScope, ClaimWants, Undelivered};
use crate::core::time::Time;
use crate::escape::escape;

use super::output::Output;
use super::state::Engine;

impl Engine {
    /// A hook put these files into the next context (after the fact). Each
    /// named file is taken on its own: a known one becomes hook-owned
    /// whatever its state; one the inbox watch has not reported yet is
    /// hook-owned the moment it is seen.
    pub(super) fn on_receipt(&mut self, mut messages: Vec<MessageName>, incarnation: String) {
        messages.sort();
        // Put into the context, after the fact: delivered, not in doubt.
        for name in &messages {
            self.journal_dirty |= self.claims_in_doubt.remove(name);
        }
        let owner = MessageState::HookOwned {
            incarnation: Some(incarnation),
        };
        let (known, unseen): (Vec<MessageName>, Vec<MessageName>) = messages
            .into_iter()
            .partition(|name| self.ownership.contains(name));
        self.take_for_hook(known, unseen, &owner, false);
    }

    /// A claim's hook never passed its files on: those of them that are
    /// hook-owned for this incarnation go back to pending, in FIFO order,
    /// and ring or ride the next hook like any unread work. A file in any
    /// other state (archived, staged, owned by an earlier incarnation) is
    /// not this claim's to give back and stays as it is; one claimed before
    /// the inbox watch reported it is forgotten as a claim, so it arrives
    /// as pending.
    pub(super) fn on_undelivered(
        &mut self,
        mut messages: Vec<MessageName>,
        why: Undelivered,
        incarnation: &str,
    ) {
        messages.sort();
        let ours = |state: &MessageState| matches!(state, MessageState::HookOwned { incarnation: Some(owner) } if owner == incarnation);
        let mut owned = Vec::new();
        for name in messages {
            match self.ownership.state(&name) {
                Some(state) if ours(state) => owned.push(name),
                Some(_) => {}
                None => self.ownership.forget_expected(&name, ours),
            }
        }
        let now = self.now;
        let ownership = &self.ownership;
        self.given_back.retain(|name, (_, at)| {
            ownership
                .state_since(name)
                .is_some_and(|(state, since)| *state == MessageState::Pending && since == *at)
        });
        for name in &owned {
            self.given_back.insert(name.clone(), (why.into(), now));
            self.claims_in_doubt.remove(name);
        }
        self.release(owned, why.into());
    }

    /// A hook asks which files it may inject. The granted ones are
    /// hook-owned before the answer leaves, so no file is both injected and
    /// typed (spec §6.1).
    pub(super) fn on_claim(&mut self, claim: Claim, incarnation: String) {
        let owner = MessageState::HookOwned {
            incarnation: Some(incarnation),
        };
        let mut granted = Vec::new();
        let mut unseen = Vec::new();
        let mut refused = Vec::new();
        match claim.wants {
            ClaimWants::Named(mut names) => {
                names.sort();
                for name in names {
                    match self.ownership.state_since(&name) {
                        // Not seen yet, so never handed over either.
                        None if claim.scope == ClaimScope::Delivered => refused.push(Refusal {
                            name,
                            state: RefusedState::Pending,
                        }),
                        None => unseen.push(name),
                        Some((state, since)) => {
                            match claimable(state, since, claim.scope, self.context_since) {
                                Ok(()) => granted.push(name),
                                Err(state) => refused.push(Refusal { name, state }),
                            }
                        }
                    }
                }
            }
            ClaimWants::Oldest(limit) => {
                let limit = usize::try_from(limit).unwrap_or(usize::MAX);
                granted = match claim.scope {
                    ClaimScope::Pending => self.ownership.pending().take(limit).cloned().collect(),
                    ClaimScope::Unread | ClaimScope::Delivered => self
                        .ownership
                        .iter()
                        .filter(|(_, state, since)| {
                            claimable(state, *since, claim.scope, self.context_since).is_ok()
                        })
                        .take(limit)
                        .map(|(name, _, _)| name.clone())
                        .collect(),
                };
            }
        }
        if let Some(budget) = claim.name_bytes {
            let (kept, over) = within_budget(granted, unseen, budget);
            granted = kept.0;
            unseen = kept.1;
            refused.extend(over.into_iter().map(|name| Refusal {
                name,
                state: RefusedState::OverBudget,
            }));
            refused.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let taken = granted.len() + unseen.len();
        let refused_count = refused.len();
        let mut all: Vec<MessageName> = granted.iter().chain(unseen.iter()).cloned().collect();
        all.sort();
        for name in &granted {
            // The journal says what is in doubt.
            self.journal_dirty |= self.claims_in_doubt.insert(name.clone());
        }
        let backlog = claim.scope == ClaimScope::Unread;
        self.take_for_hook(granted, unseen, &owner, backlog);
        self.record(Decision::Claimed {
            claim: claim.claim,
            granted: taken,
            refused: refused_count,
            refusal: None,
        });
        let not_granted = self.ownership.len().saturating_sub(
            all.iter()
                .filter(|name| self.ownership.contains(name))
                .count(),
        );
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Claimed(Claimed {
                claim: claim.claim,
                granted: all,
                refused,
                refusal: None,
                not_granted,
            })));
    }

    /// A claim's hook printed these files for its harness: delivered, and
    /// no longer in doubt.
    pub(super) fn claims_printed(&mut self, messages: &[MessageName]) {
        for name in messages {
            // The journal says what is in doubt.
            self.journal_dirty |= self.claims_in_doubt.remove(name);
        }
    }

    /// The adapter went down: files a claim granted it whose hook neither
    /// confirmed printing them nor gave them back are in doubt. The hook
    /// saw its connection close and most likely printed nothing, so those
    /// still hook-owned go back to unread work, as with a hook that never
    /// sent its receipt (at least once: a hook that printed them just
    /// before its receipt was lost says them again).
    pub(super) fn give_back_claims_in_doubt(&mut self) {
        let in_doubt: Vec<MessageName> = std::mem::take(&mut self.claims_in_doubt)
            .into_iter()
            .filter(|name| {
                matches!(
                    self.ownership.state(name),
                    Some(MessageState::HookOwned { .. })
                )
            })
            .collect();
        self.release(in_doubt, ReleaseCause::NoReceipt);
    }

    pub(super) fn refuse_claim(&mut self, claim: u64, refusal: ClaimRefusal) {
        self.record(Decision::Claimed {
            claim,
            granted: 0,
            refused: 0,
            refusal: Some(refusal),
        });
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Claimed(Claimed {
                claim,
                granted: Vec::new(),
                refused: Vec::new(),
                refusal: Some(refusal),
                not_granted: self.ownership.len(),
            })));
    }

    /// Makes `known` hook-owned now and `unseen` hook-owned when seen. A
    /// `backlog` claim hands its files into the context there is now.
    fn take_for_hook(
        &mut self,
        known: Vec<MessageName>,
        unseen: Vec<MessageName>,
        owner: &MessageState,
        backlog: bool,
    ) {
        // A file already hook-owned by the same incarnation keeps its state:
        // a repeated receipt changes nothing, writes no journal and records
        // nothing. A backlog claim still moves its time to now, even for a
        // file owned before the context began: a second backlog claim in
        // this context (the same event run twice) must find it said
        // (`claimable`).
        let (owned, known): (Vec<MessageName>, Vec<MessageName>) = known
            .into_iter()
            .partition(|name| self.ownership.state(name) == Some(owner));
        if backlog && !owned.is_empty() {
            self.ownership.set(&owned, owner, self.now);
            self.journal_dirty = true;
        }
        if known.is_empty() && unseen.is_empty() {
            return;
        }
        self.ownership.set(&known, owner, self.now);
        for name in &unseen {
            self.ownership.expect(name.clone(), owner.clone(), self.now);
        }
        self.journal_dirty = true;
        self.record(Decision::HookOwned {
            messages: known,
            unseen,
        });
    }
}

/// The granted (known) and unseen names that fit `budget` bytes of escaped
/// names joined with `", "`, in name order, always at least the first; and
/// the names that did not fit.
#[allow(clippy::type_complexity)]
fn within_budget(
    known: Vec<MessageName>,
    unseen: Vec<MessageName>,
    budget: u64,
) -> ((Vec<MessageName>, Vec<MessageName>), Vec<MessageName>) {
    let mut all: Vec<(MessageName, bool)> = known
        .into_iter()
        .map(|name| (name, true))
        .chain(unseen.into_iter().map(|name| (name, false)))
        .collect();
    all.sort();
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let (mut kept_known, mut kept_unseen, mut over) = (Vec::new(), Vec::new(), Vec::new());
    let mut used = 0usize;
    for (index, (name, is_known)) in all.into_iter().enumerate() {
        let cost = escape(name.as_str()).len() + if index == 0 { 0 } else { 2 };
        if index > 0 && (used + cost > budget || !over.is_empty()) {
            over.push(name);
            continue;
        }
        used += cost;
        if is_known {
            kept_known.push(name);
        } else {
            kept_unseen.push(name);
        }
    }
    ((kept_known, kept_unseen), over)
}

/// Whether a claim of `scope` may take a file in `state` since `since`,
/// the harness's context having last begun again at `context_since`. A
/// file rung or handed to a hook since then went into the new context:
/// surfacing the backlog again (scope `unread`) must not say it twice in
/// one context (seen after a compaction: the notice typed at the idle
/// screen and the next prompt's `unread` backlog, one turn; the person's
/// prompt's hook given a file just before the compaction's own backlog
/// hook, answered after it, asked for it again; and the same backlog
/// event run twice, from settings merged twice).
fn claimable(
    state: &MessageState,
    since: Time,
    scope: ClaimScope,
    context_since: Option<Time>,
) -> Result<(), RefusedState> {
    let into_this_context = context_since.is_some_and(|began| since >= began);
    match (state, scope) {
        (MessageState::Staged { .. }, ClaimScope::Unread | ClaimScope::Delivered)
            if into_this_context =>
        {
            Err(RefusedState::Staged)
        }
        (MessageState::HookOwned { .. }, ClaimScope::Unread | ClaimScope::Delivered)
            if into_this_context =>
        {
            Err(RefusedState::HookOwned)
        }
        (MessageState::Pending, ClaimScope::Delivered) => Err(RefusedState::Pending),
        (MessageState::Pending, _) => Ok(()),
        (MessageState::InFlight { .. }, _) => Err(RefusedState::InFlight),
        (
            MessageState::Staged { .. } | MessageState::HookOwned { .. },
            ClaimScope::Unread | ClaimScope::Delivered,
        ) => Ok(()),
        (MessageState::Staged { .. }, ClaimScope::Pending) => Err(RefusedState::Staged),
        (MessageState::HookOwned { .. }, ClaimScope::Pending) => Err(RefusedState::HookOwned),
    }
}
