//! The sidecar's lines: the terminal's identity, whether evidence is
//! wanted, the answer to a claim, and the notice it typed.

use crate::adapter::hook_wire::{HookAnswer, HookCall};
use crate::adapter::{ParkEnded, Provider};
use crate::core::downlink::Downlink;
use crate::core::identity::Identity;
use crate::lines::Line;

use super::contract::Output;
use super::contract::Peer;
use super::quiet::PersonQuiet;
use super::startup::Startup;
use super::state::AdapterMachine;

impl<P: Provider> AdapterMachine<P> {
    pub(super) fn on_downlink(&mut self, bytes: &[u8]) {
        let mut lines = Vec::new();
        self.downlink.push(bytes, &mut lines);
        for line in lines {
            let Line::Complete(bytes) = line else {
                continue;
            };
            match Downlink::parse(&String::from_utf8_lossy(&bytes)) {
                Ok(Downlink::Pty { identity }) => self.on_identity(identity),
                Ok(Downlink::Evidence { wanted }) => self.on_demand(wanted),
                Ok(Downlink::Claimed(claimed)) => self.on_claimed(claimed),
                Ok(Downlink::Typed { request, text }) => {
                    // Read the screen again: the Return waits on it.
                    self.typed = Some((request, text));
                    self.screen_stale = true;
                }
                Err(err) => self.emit(Output::Log(format!(
                    "adapter: ignoring a downlink line: {err}"
                ))),
            }
        }
    }

    fn on_identity(&mut self, identity: Option<Identity>) {
        if identity != self.identity {
            // A remark is about this terminal: say it again for a new one.
            self.remarked = None;
            self.new_terminal(identity.as_ref());
        }
        self.identity = identity;
        if self.settling() {
            self.open_pty();
        }
        self.calls_meet_identity();
        // Claims refused for identity wait for this; ask again now.
        for peer in self.claims.unsent() {
            self.send_claim(peer);
        }
        self.screen_stale = true;
    }

    /// The machine's identity is new or confirmed: calls about another
    /// terminal can no longer claim (a parked one would hold this terminal
    /// for a harness that is gone), and calls that waited for this one go
    /// ahead.
    pub(super) fn calls_meet_identity(&mut self) {
        let Some(known) = self.identity.clone() else {
            return;
        };
        let about_other = |call: &HookCall| call.identity.as_ref() != Some(&known);
        for stale in self.parked.take_calls(about_other) {
            self.end_park(stale, ParkEnded::Ended);
        }
        let stale: Vec<Peer> = self
            .claims
            .confirming
            .iter()
            .filter(|(_, wake)| about_other(&wake.waiting.call))
            .map(|(peer, _)| *peer)
            .collect();
        for peer in stale {
            if let Some(wake) = self.claims.confirming.remove(&peer) {
                self.withhold(peer, wake, None, "its terminal is gone");
            }
        }
        for peer in self.claims.unsent() {
            if self
                .claims
                .waiting
                .get(&peer)
                .is_some_and(|w| about_other(&w.call))
            {
                self.claims.waiting.remove(&peer);
                self.answer(peer, &HookAnswer::default());
            }
        }
        for (peer, line) in self.strangers.take_about(&known) {
            self.on_call(peer, &line);
        }
    }

    /// The terminal's identity changed: nothing read of the old one's
    /// screen, or said by its hooks, holds for the new one.
    pub(super) fn new_terminal(&mut self, identity: Option<&Identity>) {
        self.fresh_idle = false;
        self.person = PersonQuiet::Unknown;
        self.drafting = false;
        self.typed = None;
        self.startup = Startup::New;
        self.settle_check_at = None;
        self.provider.on_new_terminal(identity, self.now);
    }

    pub(super) fn on_demand(&mut self, wanted: bool) {
        self.evidence_wanted = wanted;
        if wanted {
            // No screen was read while evidence was not wanted: the last
            // one is stale.
            self.fresh_idle = false;
            self.drafting = false;
        }
        self.parked.on_demand(wanted, self.now);
        if wanted {
            // The reading this asks for decides when the next one is due.
            self.screen_stale = true;
            self.next_heartbeat = None;
            self.open_pty();
        } else {
            self.next_heartbeat = None;
            self.pty_retry_at = None;
            // A wake waiting for its confirming reading keeps the
            // terminal open until it has it, and a new screen until it
            // has settled.
            if !self.screen_wanted() {
                self.screen_stale = false;
                self.close_pty();
            }
        }
    }
}
