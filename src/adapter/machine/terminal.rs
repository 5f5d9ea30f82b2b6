//! The link to the PTY host, as the machine asks for it: open, close,
//! moved, status, and lost.

use crate::adapter::Provider;
use crate::adapter::timing::PTY_RETRY;
use crate::core::identity::Identity;
use crate::pty::wire::HostStatus;

use super::contract::Output;
use super::state::{AdapterMachine, Link};

impl<P: Provider> AdapterMachine<P> {
    pub(super) fn open_pty(&mut self) {
        if self.link == Link::Closed {
            self.link = Link::Connecting;
            self.emit(Output::PtyOpen);
        }
    }

    pub(super) fn close_pty(&mut self) {
        if self.link != Link::Closed {
            self.link = Link::Closed;
            self.emit(Output::PtyClose);
        }
    }

    /// The terminal moved: the last screen read no longer says what is
    /// on it. Nothing is woken until it is read again (a key drawn after
    /// that reading is a draft a wake must not start a turn under).
    pub(super) fn on_moved(&mut self) {
        self.screen_stale = true;
        self.fresh_idle = false;
    }

    pub(super) fn on_pty_opened(&mut self) {
        if self.link != Link::Connecting {
            // Asked for, then given up before it came: the close follows.
            return;
        }
        self.link = Link::Open {
            snapshot_pending: false,
        };
        self.pty_retry_at = None;
        self.learn_identity_from_pty();
    }

    /// Without a downlink, the PTY host's own status names the identity.
    pub(super) fn learn_identity_from_pty(&mut self) {
        if !self.has_downlink {
            self.emit(Output::PtyStatus);
        }
    }

    pub(super) fn on_pty_status(&mut self, status: HostStatus) {
        if self.has_downlink {
            return;
        }
        let identity = Some(Identity {
            session: status.session,
            incarnation: status.incarnation,
            generation: status.generation,
        });
        if identity != self.identity {
            self.new_terminal(identity.as_ref());
        }
        self.identity = identity;
        self.calls_meet_identity();
        self.screen_stale = true;
    }

    pub(super) fn pty_lost(&mut self, why: &str) {
        self.close_pty();
        // No reading can confirm a wake now.
        for (peer, wake) in std::mem::take(&mut self.claims.confirming) {
            let again_at = wake.park().map(|park| self.now.saturating_add(park.settle));
            self.withhold(peer, wake, again_at, "the terminal could not be read");
        }
        if let Some(identity) = self.identity.clone() {
            // Without a screen nothing can be vouched for: say so (no
            // revision, so it can never authorize input).
            let line = self.uplink.activity_unknown(&identity, why);
            self.emit(Output::Uplink(line));
        }
        if self.screen_wanted() {
            self.pty_retry_at = Some(self.now + PTY_RETRY);
        }
    }
}
