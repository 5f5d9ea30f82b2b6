//! The harness crashes and the PTY host starts it again.

use super::*;

impl World {
    /// The harness crashes and the PTY host starts it again: a new
    /// incarnation with a new screen; its hooks die with it, bytes on their
    /// way to it are lost, and what its context held is gone (so a file
    /// seen and not yet archived may reach the new one again).
    pub(super) fn harness_restarts(&mut self) {
        if !self.order.is_idle() {
            // The host writes a transaction whole; the crash comes after.
            return self.after(10, Due::HarnessRestarts);
        }
        self.incarnation += 1;
        self.identity.incarnation = format!("i{}", self.incarnation);
        self.note(format!(
            "the harness crashes and starts again as {}",
            self.identity.incarnation
        ));
        self.harness_gone();
        self.harness_started_again();
        if self.watching {
            self.after(1, Due::AdapterMachine(ToMachine::PtyStarted));
        }
        let status = ToEngine::PtyStatus {
            identity: self.identity.clone(),
            revision: self.order.revision(),
        };
        self.after(1, Due::Engine(status));
        let happened = self.harness.started(self.now);
        self.harness_did(happened);
        self.stranded_hook_connects();
    }

    /// The harness is gone: its hooks die with it (but one that outlives
    /// it), the requests they awaited with them, and its context; a notice
    /// typed into it went with it.
    pub(super) fn harness_gone(&mut self) {
        let gone: Vec<Peer> = self
            .hooks
            .iter()
            .filter(|(peer, record)| {
                record.answers == 0 && !self.hostile.outlives_its_harness(**peer)
            })
            .map(|(peer, _)| *peer)
            .collect();
        for peer in gone {
            self.after(0, Due::AdapterMachine(ToMachine::HookGone { peer }));
        }
        self.cost_harness_gone();
        self.forget_context();
        self.awaiting_return = false;
    }

    /// A new harness, as the world's incarnation, in the host's terminal:
    /// running, its first screen drawn.
    pub(super) fn harness_started_again(&mut self) {
        let scenario = Scenario {
            seed: self.scenario.seed.wrapping_add(self.incarnation),
            ..self.scenario.clone()
        };
        self.harness = harness_for(&scenario, false);
        self.drive_order(Some(ToOrder::Terminal {
            incarnation: self.identity.incarnation.clone(),
            running: true,
            open: true,
        }));
        self.drive_order(Some(ToOrder::Redrawn {
            bracketed_paste: true,
        }));
    }
}
