//! What `ding status` shows of the engine: every count, a window of the
//! files, and the hold the gate gives, with the time its cause arose.

use crate::core::hold::HoldReason;
use crate::core::lease::LeaseSlot;
use crate::core::status::{
    EngineStatus, EvidenceView, HoldView, MessageStatus, MessageWindow, StateCounts,
};
use crate::core::time::Time;

use super::state::Engine;

impl Engine {
    /// A snapshot of everything `ding status` shows, every file listed.
    pub fn status(&self, now: Time) -> EngineStatus {
        self.status_listing(now, &MessageWindow::All)
    }

    /// A snapshot of everything `ding status` shows, listing the files of
    /// `window` (every file is counted all the same).
    pub fn status_listing(&self, now: Time, window: &MessageWindow) -> EngineStatus {
        let now = now.max(self.now);
        let pending_hold = self
            .gate(now)
            .err()
            .map(|reason| self.hold_view(reason, now));
        let mut by_state = StateCounts::default();
        for (_, state, _) in self.ownership.iter() {
            by_state.count(state);
        }
        let listed = match window {
            MessageWindow::Page {
                after: Some(after), ..
            } => window.pick(self.ownership.iter_after(after)),
            _ => window.pick(self.ownership.iter()),
        };
        let messages = listed
            .into_iter()
            .map(|(name, state, since)| {
                let given_back = self
                    .given_back
                    .get(name)
                    .filter(|(_, at)| *at == since)
                    .map(|(cause, _)| *cause);
                MessageStatus::new(name, state, since, pending_hold.as_ref(), given_back)
            })
            .collect();
        let evidence = EvidenceView {
            wanted: self.demand.is_some_and(|demand| demand.wanted),
            since: self.demand.map(|demand| demand.since),
            fence: self.config.tunables.fence,
            adapter_reason: self.adapter_reason.clone(),
            adapter_reason_at: self.adapter_reason_at,
        };
        let mut status = EngineStatus::new(
            &self.config,
            now,
            &self.adapter,
            &self.lease,
            &self.pty,
            evidence,
            messages,
        )
        .counting(by_state);
        status.in_flight = self.in_flight.as_ref().map(|flight| flight.request);
        status.hold = pending_hold.filter(|_| by_state.pending > 0);
        status.window = (*window != MessageWindow::All).then(|| window.clone());
        status
    }

    /// A hold with the time its cause arose, as far as the engine knows it.
    pub(super) fn hold_view(&self, reason: HoldReason, now: Time) -> HoldView {
        let since = match (&self.hold, &self.lease, &self.pty_block) {
            // The evidence's own verdict is as old as the evidence.
            (_, LeaseSlot::Granted(lease), _)
                if matches!(
                    reason,
                    HoldReason::ComposerNonempty | HoldReason::ComposerUnknown
                ) =>
            {
                lease.granted_at
            }
            (Some((held, since)), _, _) if *held == reason => *since,
            (_, LeaseSlot::Ended { reason: ended, at }, _) if *ended == reason => *at,
            (_, _, Some(block)) if block.reason == reason => block.since,
            (_, LeaseSlot::Granted(lease), _) if reason == HoldReason::LeaseExpired => {
                lease.expires_at
            }
            // Silence began when the adapter last spoke, came up, or was
            // asked for evidence, whichever is latest.
            _ if reason == HoldReason::AdapterSilent => self.silent_since().unwrap_or(now),
            _ => now,
        };
        // The evidence's verdict in the adapter's words, which say why.
        let said = matches!(
            reason,
            HoldReason::NotIdle { .. } | HoldReason::ComposerNonempty | HoldReason::ComposerUnknown
        )
        .then(|| self.adapter_reason.clone())
        .flatten();
        HoldView {
            source: reason.source(),
            reason,
            since,
            said,
        }
    }
}
