//! The deliveries an adapter handed to its native path's reporter whose
//! turn has not started, and the files it owes when one could not be
//! handed on.

use crate::adapter::context::claim_for;
use crate::adapter::{AgentContext, ClaimRequest};
use crate::core::message::MessageName;
use crate::core::protocol::{ClaimScope, ClaimWants};

/// One delivery handed to the reporter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handed {
    /// Its id on the wire (`ding-PID-N`).
    pub id: String,
    /// Exactly the text handed on: the turn's prompt hook carries it when
    /// the turn starts.
    pub text: String,
    pub names: Vec<MessageName>,
}

/// What the adapter remembers of its deliveries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deliveries {
    /// Deliveries handed on whose turn has not started.
    pub handed: Vec<Handed>,
    /// Files claimed for a delivery that never reached the harness: hook-
    /// owned but in no context, so the next hook that injects claims
    /// exactly them again.
    pub owed: Vec<MessageName>,
}

impl Deliveries {
    /// The claim a hook that injects makes: the owed files if any, else the
    /// oldest `scope` files that fit in `cap` characters.
    pub fn claim(&self, agent: &AgentContext, cap: usize, scope: ClaimScope) -> ClaimRequest {
        let request = claim_for(agent, cap, scope);
        if self.owed.is_empty() {
            return request;
        }
        ClaimRequest {
            wants: ClaimWants::Named(self.owed.clone()),
            scope: ClaimScope::Unread,
            ..request
        }
    }

    /// The files of the deliveries whose text is exactly `prompt`: the
    /// prompt hook of their turn is their receipt.
    pub fn received(&self, prompt: &str) -> Vec<MessageName> {
        self.handed
            .iter()
            .filter(|handed| handed.text == prompt)
            .flat_map(|handed| handed.names.clone())
            .collect()
    }

    /// The turn of the deliveries whose text is `prompt` started: they
    /// wait no more.
    pub fn started(&mut self, prompt: &str) {
        self.handed.retain(|handed| handed.text != prompt);
    }

    /// Whether `name` is in a delivery still waiting for its turn: it
    /// arrives as that turn's prompt, and said by another hook as well it
    /// would be in one request twice.
    pub fn waits(&self, name: &MessageName) -> bool {
        self.handed.iter().any(|handed| handed.names.contains(name))
    }

    /// The deliveries the reporter said it could not hand on (`failed`):
    /// their files are owed, and returned so that they go back to unread
    /// work.
    pub fn failed(&mut self, failed: &[String]) -> Vec<MessageName> {
        self.owe_where(|handed| failed.contains(&handed.id))
    }

    /// The deliveries a server started again does not hold (`queued` is
    /// what it lists): they died with the old one, and their files are owed
    /// and returned.
    pub fn not_listed(&mut self, queued: &[String]) -> Vec<MessageName> {
        self.owe_where(|handed| !queued.contains(&handed.id))
    }

    /// Owed alone, lost files would wait for a claim that nothing asks
    /// for: a parked call claims only once evidence is wanted, and the
    /// sidecar wants none for files a hook owns. So they are also given
    /// back to unread work, which is what the caller does with the names
    /// returned (found by the whole-agent simulation, seed 526970: a
    /// server died between the answer and the hand-over, the new server's
    /// first report said the delivery was gone, and the park waited with
    /// the three files owed until the run ended).
    fn owe_where(&mut self, lost: impl Fn(&Handed) -> bool) -> Vec<MessageName> {
        let (lost, kept): (Vec<Handed>, Vec<Handed>) =
            std::mem::take(&mut self.handed).into_iter().partition(lost);
        self.handed = kept;
        let names: Vec<MessageName> = lost.into_iter().flat_map(|handed| handed.names).collect();
        self.owed.extend(names.iter().cloned());
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::hook_plan::example_agent;

    fn name(text: &str) -> MessageName {
        MessageName::new(text).expect("a message name")
    }

    #[test]
    fn a_prompt_receipts_its_delivery_and_a_lost_one_is_owed_and_claimed_by_name() {
        let agent = example_agent();
        let (a, b) = (name("a.md"), name("b.md"));
        let mut deliveries = Deliveries::default();
        deliveries.handed.push(Handed {
            id: "ding-1-1".into(),
            text: "[ding] a".into(),
            names: vec![a.clone()],
        });
        deliveries.handed.push(Handed {
            id: "ding-1-2".into(),
            text: "[ding] b".into(),
            names: vec![b.clone()],
        });
        assert_eq!(deliveries.received("[ding] a"), vec![a.clone()]);
        assert!(deliveries.received("[ding] a and more").is_empty());
        assert!(deliveries.waits(&b));
        assert_eq!(deliveries.failed(&["ding-1-2".into()]), vec![b.clone()]);
        assert!(!deliveries.waits(&b));
        let claim = deliveries.claim(&agent, 4_000, ClaimScope::Pending);
        assert_eq!(claim.wants, ClaimWants::Named(vec![b.clone()]));
        assert_eq!(claim.scope, ClaimScope::Unread);
        assert_eq!(deliveries.not_listed(&["ding-1-1".into()]), Vec::new());
        deliveries.started("[ding] a");
        assert!(deliveries.handed.is_empty());
        deliveries.owed.clear();
        assert_eq!(
            deliveries.claim(&agent, 4_000, ClaimScope::Pending),
            claim_for(&agent, 4_000, ClaimScope::Pending)
        );
    }
}
