//! Hook calls that name a terminal other than the one the machine knows.
//!
//! A call names the harness it came from (its identity, read from the
//! hook's environment). One that names another terminal is either early
//! (the harness started again and its first hooks ran before the
//! sidecar's new identity reached the adapter) or stale (from a harness
//! that is gone, or from any process of the user that writes to the hook
//! socket). Acted upon, either stamps claims and facts with an identity the
//! sidecar refuses (each refusal ends the lease), and a parked one holds
//! the terminal for as long as its caller stays connected: every message
//! would be held for that long. So such a call does nothing while it waits
//! here for the machine's identity to become its own, and is refused once
//! [`STRANGER_WAIT`] has passed.

use std::collections::BTreeMap;

use super::contract::Peer;
use crate::adapter::timing::STRANGER_WAIT;
use crate::core::identity::Identity;
use crate::core::time::Time;

/// The most calls that wait at once: a hook runs a handful of calls at a
/// time, so more is a flood, refused at once.
const MAX_WAITING: usize = 16;

/// One call waiting for its terminal.
#[derive(Debug)]
struct Stranger {
    line: Vec<u8>,
    identity: Identity,
    deadline: Time,
}

#[derive(Debug, Default)]
pub struct Strangers {
    waiting: BTreeMap<Peer, Stranger>,
}

impl Strangers {
    /// Keeps `peer`'s call `line` (about `identity`) until the machine
    /// knows that identity or [`STRANGER_WAIT`] has passed. `false`: too
    /// many wait already; refuse it now.
    pub fn wait(&mut self, peer: Peer, line: Vec<u8>, identity: Identity, now: Time) -> bool {
        if self.waiting.len() >= MAX_WAITING {
            return false;
        }
        let deadline = now.saturating_add(STRANGER_WAIT);
        self.waiting.insert(
            peer,
            Stranger {
                line,
                identity,
                deadline,
            },
        );
        true
    }

    /// Removes and returns, in peer order, the calls about `known`.
    pub fn take_about(&mut self, known: &Identity) -> Vec<(Peer, Vec<u8>)> {
        self.take(|stranger| &stranger.identity == known)
    }

    /// Removes and returns the peers whose wait is over.
    pub fn take_expired(&mut self, now: Time) -> Vec<Peer> {
        self.take(|stranger| stranger.deadline <= now)
            .into_iter()
            .map(|(peer, _)| peer)
            .collect()
    }

    /// Forgets `peer`'s call (its hook went away).
    pub fn forget(&mut self, peer: Peer) {
        self.waiting.remove(&peer);
    }

    pub fn next_deadline(&self) -> Option<Time> {
        self.waiting
            .values()
            .map(|stranger| stranger.deadline)
            .min()
    }

    fn take(&mut self, which: impl Fn(&Stranger) -> bool) -> Vec<(Peer, Vec<u8>)> {
        let peers: Vec<Peer> = self
            .waiting
            .iter()
            .filter(|(_, stranger)| which(stranger))
            .map(|(peer, _)| *peer)
            .collect();
        peers
            .into_iter()
            .filter_map(|peer| Some((peer, self.waiting.remove(&peer)?.line)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(incarnation: &str) -> Identity {
        Identity {
            session: "s".into(),
            incarnation: incarnation.into(),
            generation: format!("sha256:{}", "0".repeat(64)),
        }
    }

    #[test]
    fn a_call_waits_for_its_identity_then_is_taken() {
        let mut strangers = Strangers::default();
        assert!(strangers.wait(Peer(1), b"a".to_vec(), identity("new"), Time::ZERO));
        assert!(strangers.take_about(&identity("old")).is_empty());
        assert_eq!(
            strangers.take_about(&identity("new")),
            vec![(Peer(1), b"a".to_vec())]
        );
        assert_eq!(strangers.next_deadline(), None);
    }

    #[test]
    fn a_call_whose_identity_never_comes_expires() {
        let mut strangers = Strangers::default();
        strangers.wait(Peer(1), b"a".to_vec(), identity("x"), Time::ZERO);
        let deadline = Time::ZERO.saturating_add(STRANGER_WAIT);
        assert_eq!(strangers.next_deadline(), Some(deadline));
        assert!(strangers.take_expired(Time::from_millis(1)).is_empty());
        assert_eq!(strangers.take_expired(deadline), vec![Peer(1)]);
    }

    #[test]
    fn a_flood_of_strangers_is_refused_past_the_bound() {
        let mut strangers = Strangers::default();
        for peer in 0..MAX_WAITING {
            assert!(strangers.wait(Peer(peer), Vec::new(), identity("x"), Time::ZERO));
        }
        assert!(!strangers.wait(Peer(99), Vec::new(), identity("x"), Time::ZERO));
        strangers.forget(Peer(0));
        assert!(strangers.wait(Peer(99), Vec::new(), identity("x"), Time::ZERO));
    }
}
