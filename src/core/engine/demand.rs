//! The evidence demand: the adapter is told when evidence becomes wanted or
//! unwanted, and from when an adapter that is up owes a line (its silence).

use crate::core::adapter::AdapterPhase;
use crate::core::decision::Decision;
use crate::core::downlink::Downlink;
use crate::core::lease::LeaseSlot;
use crate::core::ownership::MessageState;
use crate::core::protocol::Composer;
use crate::core::time::Time;

use super::output::Output;
use super::state::{Demand, Engine};

impl Engine {
    /// Since when an adapter that is up has owed a line and said none. It
    /// owes one once evidence is wanted and it has not spoken since; while
    /// its last evidence allows delivery (a lease with an empty composer,
    /// which it keeps fresh), from its last line; and once the terminal
    /// showed a revision its last evidence was not read at (it watches the
    /// terminal and reads every move). Evidence that holds is owed nothing
    /// more while nothing moves, so a held message costs no heartbeat; and
    /// an adapter owes nothing while nothing is wanted, so it may sleep for
    /// hours and still answer the next demand in time.
    pub(super) fn silent_since(&self) -> Option<Time> {
        let AdapterPhase::Up {
            since, last_line, ..
        } = &self.adapter.phase
        else {
            return None;
        };
        let spoke = last_line.unwrap_or(*since);
        let wanted = self.demand.filter(|demand| demand.wanted)?;
        if wanted.since >= spoke {
            return Some(wanted.since);
        }
        let ready =
            matches!(&self.lease, LeaseSlot::Granted(lease) if lease.composer == Composer::Empty);
        [ready.then_some(spoke), self.unread_move_since]
            .into_iter()
            .flatten()
            .min()
    }

    /// Tells the adapter when evidence becomes wanted or unwanted: wanted
    /// while unread work exists that terminal input could deliver (pending,
    /// or in flight, which a conflict returns to pending). A transaction
    /// whose files were all archived or taken by a hook meanwhile holds no
    /// such work.
    pub(super) fn signal_demand(&mut self) {
        if !self.adapter.is_up() {
            return;
        }
        let in_flight = self.in_flight.as_ref().is_some_and(|flight| {
            let state = MessageState::InFlight {
                request: flight.request,
            };
            flight
                .messages
                .iter()
                .any(|name| self.ownership.state(name) == Some(&state))
        });
        let deliverable = self.ownership.pending_len() > 0 && !self.gathering(self.now);
        // A withheld notice may yet be drawn, and a notice a person
        // interrupted is unsent once an empty composer shows: someone must
        // read the screen to see either.
        let unsure = self.withheld_notice.is_some() || !self.interrupted.is_empty();
        let wanted = deliverable || in_flight || self.typed.is_some() || unsure;
        if self.demand.is_some_and(|demand| demand.wanted == wanted) {
            return;
        }
        self.demand = Some(Demand {
            wanted,
            since: self.now,
        });
        self.record(Decision::EvidenceWanted { wanted });
        self.outputs
            .push_back(Output::ToAdapter(Downlink::Evidence { wanted }));
    }
}
