//! Parked hook calls: calls a provider holds open to answer later.
//!
//! Some harnesses run a hook in the background and act on its answer
//! whenever it comes (a hook that exits with a given code wakes the model
//! with its output). Such a call is a standing offer: "if work arrives, tell
//! me". The kit keeps it open, at most one per provider-named slot, and
//! claims for it once evidence is wanted (unread work waits that terminal
//! input could deliver) and has stayed wanted for the park's `settle` time,
//! so a burst of arrivals is claimed at once. A claim that grants nothing
//! (everything was taken by another hook, or is being typed) puts the call
//! back, to try again after [`PARK_RETRY_AFTER`](super::timing::PARK_RETRY_AFTER) while evidence stays wanted.
//!
//! Every parked call has a deadline: the park's `hold_for`, and at most the
//! hook's own timeout less [`PARK_TIMEOUT_MARGIN`](super::timing::PARK_TIMEOUT_MARGIN), so the kit always answers
//! (with nothing) before the hook is killed, and the harness never sees a
//! hook time out.
//!
//! This module is the bookkeeping only, with time passed in, so every rule
//! is tested without a loop; the adapter machine (`machine/`) uses it.

use std::collections::BTreeMap;
use std::time::Duration;

use super::hook_plan::Park;
use super::reading::Reading;
use super::timing::{PARK_RETRY_AFTER as RETRY_AFTER, PARK_TIMEOUT_MARGIN as TIMEOUT_MARGIN};
use crate::core::protocol::{ActivityState, Composer};
use crate::core::time::Time;

/// One parked call: who to answer (`peer`), what it carries (`call`), and
/// the park it asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parked<P, C> {
    pub peer: P,
    pub call: C,
    pub park: Park,
    /// When it is answered with nothing.
    pub deadline: Time,
    /// When it is due for its claim; `None` while evidence is not wanted.
    pub fire_at: Option<Time>,
}

/// The slots, keyed by the provider's slot names.
#[derive(Debug)]
pub struct ParkedCalls<P, C> {
    slots: BTreeMap<&'static str, Parked<P, C>>,
}

impl<P, C> Default for ParkedCalls<P, C> {
    fn default() -> Self {
        ParkedCalls {
            slots: BTreeMap::new(),
        }
    }
}

/// The deadline of a call parked at `now`: `hold_for`, and at most the
/// hook's own timeout less the margin.
pub fn deadline(park: &Park, hook_timeout: Option<Duration>, now: Time) -> Time {
    let hold = match hook_timeout {
        Some(timeout) => park.hold_for.min(timeout.saturating_sub(TIMEOUT_MARGIN)),
        None => park.hold_for,
    };
    now.saturating_add(hold)
}

/// Whether `park` may be claimed for, given whether the last screen read
/// since the evidence became wanted showed the harness idle with an empty
/// composer (see [`is_fresh_idle`]).
pub fn may_wake(park: &Park, fresh_idle: bool) -> bool {
    !park.waits_for_fresh_idle || fresh_idle
}

/// Whether a reading (the provider's evidence) is fresh idle: idle, with an
/// empty composer.
pub fn is_fresh_idle(screen: &Reading) -> bool {
    screen.state == ActivityState::Idle && screen.composer == Composer::Empty
}

impl<P: Copy + Eq, C> ParkedCalls<P, C> {
    /// Parks `peer`'s call in its slot. Returns the call it replaced, if
    /// any: the caller answers that one with nothing.
    pub fn park(
        &mut self,
        peer: P,
        call: C,
        park: Park,
        deadline: Time,
        wanted: bool,
        now: Time,
    ) -> Option<Parked<P, C>> {
        let fire_at = wanted.then(|| now.saturating_add(park.settle));
        let slot = park.slot;
        self.slots.insert(
            slot,
            Parked {
                peer,
                call,
                park,
                deadline,
                fire_at,
            },
        )
    }

    /// Puts back a call whose claim granted nothing, to try again after
    /// [`PARK_RETRY_AFTER`](super::timing::PARK_RETRY_AFTER) if evidence is still wanted. If a newer call took
    /// its slot meanwhile, gives it back: the caller answers it with
    /// nothing.
    pub fn restore(
        &mut self,
        parked: Parked<P, C>,
        wanted: bool,
        now: Time,
    ) -> Option<Parked<P, C>> {
        let fire_at = wanted.then(|| now.saturating_add(RETRY_AFTER.max(parked.park.settle)));
        self.put_back(parked, fire_at)
    }

    /// Puts back a due call that may not wake the harness yet (the screen
    /// is not fresh idle, [`may_wake`], or the person was not quiet long
    /// enough): it is due again `again_at`, when that may have changed. If
    /// a newer call took its slot meanwhile, gives it back, as
    /// [`ParkedCalls::restore`] does.
    pub fn defer_until(&mut self, parked: Parked<P, C>, again_at: Time) -> Option<Parked<P, C>> {
        self.put_back(parked, Some(again_at))
    }

    /// Puts `parked` back in its slot, due at `fire_at`, unless a newer call
    /// took the slot: then gives it back.
    fn put_back(&mut self, parked: Parked<P, C>, fire_at: Option<Time>) -> Option<Parked<P, C>> {
        if self.slots.contains_key(parked.park.slot) {
            return Some(parked);
        }
        self.slots
            .insert(parked.park.slot, Parked { fire_at, ..parked });
        None
    }

    /// Evidence became wanted (each parked call is due after its settle
    /// time) or not wanted any more (none is due).
    pub fn on_demand(&mut self, wanted: bool, now: Time) {
        for parked in self.slots.values_mut() {
            parked.fire_at = match (wanted, parked.fire_at) {
                (false, _) => None,
                (true, Some(at)) => Some(at),
                (true, None) => Some(now.saturating_add(parked.park.settle)),
            };
        }
    }

    /// Removes and returns the calls due for their claim.
    pub fn take_due(&mut self, now: Time) -> Vec<Parked<P, C>> {
        self.take(|parked| parked.fire_at.is_some_and(|at| at <= now) && parked.deadline > now)
    }

    /// Removes and returns the calls whose deadline came.
    pub fn take_expired(&mut self, now: Time) -> Vec<Parked<P, C>> {
        self.take(|parked| parked.deadline <= now)
    }

    /// Removes and returns the calls `which` picks.
    pub fn take_calls(&mut self, which: impl Fn(&C) -> bool) -> Vec<Parked<P, C>> {
        self.take(|parked| which(&parked.call))
    }

    /// Removes `peer`'s call (its hook went away); returns it.
    pub fn withdraw(&mut self, peer: P) -> Option<Parked<P, C>> {
        let slot = self
            .slots
            .iter()
            .find(|(_, parked)| parked.peer == peer)
            .map(|(slot, _)| *slot)?;
        self.slots.remove(slot)
    }

    /// Removes the call parked in `slot`, if any; returns it.
    pub fn release(&mut self, slot: &str) -> Option<Parked<P, C>> {
        self.slots.remove(slot)
    }

    /// The earliest time something is due.
    /// The earliest deadline of a parked call (its hook's own timeout
    /// nears: [`ParkedCalls::take_expired`]).
    pub fn next_expiry(&self) -> Option<Time> {
        self.slots.values().map(|parked| parked.deadline).min()
    }

    /// The earliest moment a parked call is due to act
    /// ([`ParkedCalls::take_due`]).
    pub fn next_due(&self) -> Option<Time> {
        self.slots
            .values()
            .filter_map(|parked| parked.fire_at)
            .min()
    }

    /// Whether a call is parked in `slot`.
    #[cfg(test)]
    pub fn holds(&self, slot: &str) -> bool {
        self.slots.contains_key(slot)
    }

    /// The park of a call that holds the terminal, if one is parked.
    pub fn terminal_park(&self) -> Option<&Park> {
        self.slots
            .values()
            .map(|parked| &parked.park)
            .find(|park| park.holds_terminal)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    fn take(&mut self, due: impl Fn(&Parked<P, C>) -> bool) -> Vec<Parked<P, C>> {
        let slots: Vec<&'static str> = self
            .slots
            .iter()
            .filter(|(_, parked)| due(parked))
            .map(|(slot, _)| *slot)
            .collect();
        slots
            .into_iter()
            .filter_map(|slot| self.slots.remove(slot))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::{ClaimScope, ClaimWants};

    fn park(slot: &'static str) -> Park {
        Park {
            slot,
            claim: crate::adapter::ClaimRequest {
                wants: ClaimWants::Oldest(4),
                scope: ClaimScope::Pending,
                name_bytes: None,
            },
            settle: Duration::from_millis(200),
            hold_for: Duration::from_secs(60),
            holds_terminal: slot == "wake",
            waits_for_fresh_idle: slot == "wake",
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_newer_call_replaces_the_older_one_in_its_slot_only() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, &str> = ParkedCalls::default();
        let at = deadline(&park("wake"), None, now);
        assert!(slots.park(1, "a", park("wake"), at, false, now).is_none());
        assert!(slots.park(2, "b", park("other"), at, false, now).is_none());
        let replaced = slots
            .park(3, "c", park("wake"), at, false, now)
            .expect("replaced");
        assert_eq!((replaced.peer, replaced.call), (1, "a"));
        assert_eq!(slots.len(), 2);
        assert!(slots.holds("wake") && slots.holds("other"));
        assert_eq!(slots.terminal_park().map(|park| park.slot), Some("wake"));
        slots.withdraw(3);
        assert_eq!(slots.terminal_park(), None);
    }

    #[test]
    fn a_wake_that_waits_for_fresh_idle_fires_only_on_an_idle_empty_screen() {
        let screen = |state, composer| Reading {
            state,
            composer,
            reason: "test".into(),
        };
        assert!(is_fresh_idle(&screen(ActivityState::Idle, Composer::Empty)));
        for (state, composer) in [
            (ActivityState::Idle, Composer::Nonempty),
            (ActivityState::Idle, Composer::Unknown),
            (ActivityState::Active, Composer::Empty),
            (ActivityState::Unknown, Composer::Unknown),
        ] {
            let fresh = is_fresh_idle(&screen(state, composer));
            assert!(!fresh, "{state:?} {composer:?}");
            assert!(!may_wake(&park("wake"), fresh));
            assert!(may_wake(&park("other"), fresh));
        }
        assert!(may_wake(&park("wake"), true));
    }

    #[test]
    fn a_held_call_is_due_again_when_asked_unless_replaced() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, &str> = ParkedCalls::default();
        let at = deadline(&park("queue"), None, now);
        assert!(
            slots
                .park(1, "older", park("queue"), at, true, now)
                .is_none()
        );
        let settle = park("queue").settle;
        let due = slots.take_due(now + settle);
        assert_eq!(due.len(), 1);
        let held = due.into_iter().next().unwrap();
        assert!(slots.defer_until(held, now + settle * 2).is_none());
        assert!(slots.take_due(now + settle).is_empty(), "not at once");
        let again = slots.take_due(now + settle * 2);
        assert_eq!(again.len(), 1, "due again when asked");
        let newer_took_the_slot = again.into_iter().next().unwrap();
        assert!(
            slots
                .park(2, "newer", park("queue"), at, true, now)
                .is_none()
        );
        assert_eq!(
            slots.defer_until(newer_took_the_slot, now).map(|p| p.peer),
            Some(1),
            "given back to be answered with nothing"
        );
    }

    #[test]
    fn a_released_slot_gives_back_its_call_and_is_empty() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, &str> = ParkedCalls::default();
        let at = deadline(&park("queue"), None, now);
        slots.park(1, "a", park("queue"), at, true, now);
        slots.park(2, "b", park("other"), at, true, now);
        let released = slots.release("queue").expect("released");
        assert_eq!((released.peer, released.call), (1, "a"));
        assert!(slots.release("queue").is_none());
        assert!(slots.holds("other") && !slots.holds("queue"));
        assert_eq!(
            slots.take_due(now + ms(1_000)).len(),
            1,
            "only the other one"
        );
    }

    #[test]
    fn a_parked_call_is_due_only_after_evidence_stayed_wanted_for_its_settle_time() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, ()> = ParkedCalls::default();
        let at = deadline(&park("wake"), None, now);
        slots.park(1, (), park("wake"), at, false, now);
        assert!(
            slots.take_due(now + ms(10_000)).is_empty(),
            "nothing wanted"
        );
        slots.on_demand(true, now + ms(1_000));
        assert!(slots.take_due(now + ms(1_199)).is_empty(), "still settling");
        // Not wanted again before it settled: not due.
        slots.on_demand(false, now + ms(1_100));
        assert!(slots.take_due(now + ms(1_300)).is_empty());
        slots.on_demand(true, now + ms(2_000));
        // A second "wanted" does not postpone it.
        slots.on_demand(true, now + ms(2_100));
        let due = slots.take_due(now + ms(2_200));
        assert_eq!(due.len(), 1);
        assert!(slots.is_empty(), "a due call leaves its slot for the claim");
    }

    #[test]
    fn parked_while_wanted_it_is_due_after_settling() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, ()> = ParkedCalls::default();
        let at = deadline(&park("wake"), None, now);
        slots.park(1, (), park("wake"), at, true, now);
        let next = slots
            .next_expiry()
            .into_iter()
            .chain(slots.next_due())
            .min();
        assert_eq!(next, Some(now + ms(200)));
        assert_eq!(slots.take_due(now + ms(200)).len(), 1);
    }

    #[test]
    fn the_deadline_stays_below_the_hooks_own_timeout() {
        let now = Time::from_millis(1_000_000);
        let long = park("wake");
        assert_eq!(deadline(&long, None, now), now + Duration::from_secs(60));
        assert_eq!(
            deadline(&long, Some(Duration::from_secs(30)), now),
            now + Duration::from_secs(28)
        );
        assert_eq!(
            deadline(&long, Some(Duration::from_secs(1)), now),
            now,
            "a hook timeout shorter than the margin is answered at once"
        );
        let mut slots: ParkedCalls<u32, ()> = ParkedCalls::default();
        slots.park(1, (), long.clone(), now + ms(500), true, now);
        assert!(slots.take_expired(now + ms(499)).is_empty());
        assert!(
            slots.take_due(now + ms(600)).is_empty(),
            "an expired call is never claimed for"
        );
        assert_eq!(slots.take_expired(now + ms(500)).len(), 1);
        assert!(slots.is_empty());
    }

    #[test]
    fn a_call_whose_claim_granted_nothing_goes_back_and_retries_later() {
        let now = Time::from_millis(1_000_000);
        let mut slots: ParkedCalls<u32, ()> = ParkedCalls::default();
        let at = deadline(&park("wake"), None, now);
        slots.park(1, (), park("wake"), at, true, now);
        let due = slots.take_due(now + ms(200)).pop().expect("due");
        assert!(slots.restore(due, true, now + ms(210)).is_none());
        assert!(slots.take_due(now + ms(1_209)).is_empty());
        let again = slots.take_due(now + ms(1_210)).pop().expect("retried");
        // A newer call took the slot meanwhile: the old one is given back.
        slots.park(2, (), park("wake"), at, false, now + ms(1_300));
        let back = slots
            .restore(again, true, now + ms(1_310))
            .expect("slot taken");
        assert_eq!(back.peer, 1);
        assert_eq!(slots.withdraw(2).map(|parked| parked.peer), Some(2));
        assert!(slots.withdraw(2).is_none());
    }
}
