//! The PTY host's facts: its identity and revision, and its reply to the
//! transaction in flight (sent, conflict, unsettled, interrupted, error,
//! mismatch, harness exited, unreachable), with the blocks on the PTY that
//! follow an error.

use std::time::Duration;

use crate::core::decision::{Decision, ReleaseCause};
use crate::core::downlink::Downlink;
use crate::core::fence::QuietPart;
use crate::core::hold::HoldReason;
use crate::core::identity::{Identity, IdentityPart};
use crate::core::lease::LeaseSlot;
use crate::core::message::MessageName;
use crate::core::ownership::{MessageState, RequestId};

use super::output::Output;
use super::state::{Engine, InFlight, Phase, PtyBlock};

impl Engine {
    pub(super) fn on_pty_status(&mut self, identity: Identity, revision: u64) {
        self.pty.reachable = true;
        self.pty.revision = Some(revision);
        if self.read_revision.is_none_or(|read| revision > read) {
            self.unread_move_since.get_or_insert(self.now);
        }
        // The host answering ends "unreachable"; an error waits for its retry
        // timer, and an exited harness for a new one.
        if self
            .pty_block
            .as_ref()
            .is_some_and(|block| block.reason == HoldReason::PtyUnreachable)
        {
            self.pty_block = None;
        }
        if self.pty.identity.as_ref() == Some(&identity) {
            return;
        }
        // A new harness (or launch): nothing that blocked the old one applies,
        // and no reading of the old one's screen.
        self.pty_block = None;
        self.read_revision = None;
        self.withheld_notice = None;
        self.pty_retry.succeeded();
        let previous = self.pty.identity.replace(identity.clone());
        self.record(Decision::PtyIdentity {
            previous,
            current: identity.clone(),
        });
        if self.adapter.is_up() {
            self.outputs.push_back(Output::ToAdapter(Downlink::Pty {
                identity: Some(identity.clone()),
            }));
        }
        if let LeaseSlot::Granted(lease) = &self.lease
            && let Some(part) = lease.identity.mismatch(&identity)
        {
            self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.ownership
            .forget_memories_outside(&identity.incarnation);
        let stale = self.ownership.owned_outside(&identity.incarnation);
        self.release(stale, ReleaseCause::IncarnationChanged);
        if !self.returning() {
            self.typed_in_a_gone_terminal();
        }
    }

    /// `flight` wrote nothing: its `messages` are pending again, unless it
    /// was a Return, whose files stay in flight under their typed notice.
    fn unwritten(&mut self, flight: &InFlight, messages: &[MessageName]) {
        if !matches!(flight.phase, Phase::Return) {
            self.ownership
                .set(messages, &MessageState::Pending, self.now);
        }
    }

    fn take_flight(&mut self, request: RequestId) -> Option<(InFlight, Vec<MessageName>)> {
        if self.in_flight.as_ref().map(|flight| flight.request) != Some(request) {
            self.record(Decision::Ignored {
                what: format!("reply for request {request}, which is not in flight"),
            });
            return None;
        }
        self.end_flight()
    }

    /// Ends the in-flight transaction, returning it with the files it still
    /// owns: files archived or hook-owned meanwhile are no longer its own.
    fn end_flight(&mut self) -> Option<(InFlight, Vec<MessageName>)> {
        let flight = self.in_flight.take()?;
        let request = flight.owner;
        let still: Vec<MessageName> = flight
            .messages
            .iter()
            .filter(|name| self.ownership.state(name) == Some(&MessageState::InFlight { request }))
            .cloned()
            .collect();
        Some((flight, still))
    }

    pub(super) fn on_sent(&mut self, request: RequestId, revision: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.saw_revision(revision);
        self.pty_retry.succeeded();
        match flight.phase {
            Phase::Paste { text } => {
                return self.on_pasted(flight.request, flight.asked_at, text, revision, messages);
            }
            Phase::Return => self.typed = None,
            Phase::TakeOut => {
                // Out of the composer: the next empty one gives its files
                // back to ring again, and so does a turn that begins first.
                self.withheld_notice = None;
                self.taken_out = !self.interrupted.is_empty();
                return self.record(Decision::Sent {
                    request,
                    revision,
                    messages,
                });
            }
            Phase::Whole => {}
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: true,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.record(Decision::Sent {
            request,
            revision,
            messages,
        });
    }

    pub(super) fn on_conflict(&mut self, request: RequestId, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        // A Return's conflict leaves the notice typed: it waits for new
        // evidence of the composer.
        self.unwritten(&flight, &messages);
        let expected = flight.expected_revision.unwrap_or_default();
        self.record(Decision::Conflict {
            request,
            expected,
            actual,
            messages,
        });
        self.end_lease(HoldReason::RevisionConflict { expected, actual });
    }

    /// The terminal matched the evidence but had not been quiet long
    /// enough. Nothing was written and the screen the lease vouched for is
    /// still the screen: the lease comes back, and the PTY waits until the
    /// host said the fence would pass (a new lease meanwhile changes
    /// nothing about how long the person has been quiet).
    pub(super) fn on_unsettled(
        &mut self,
        request: RequestId,
        part: QuietPart,
        quiet_for: Duration,
        retry_in: Duration,
        actual: u64,
    ) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        let quiet_for_ms = u64::try_from(quiet_for.as_millis()).unwrap_or(u64::MAX);
        if let (Phase::Return, Some(typed)) = (&flight.phase, &self.typed)
            && typed.typed_over(part, quiet_for, flight.asked_at)
        {
            let why = format!("a person typed after the paste ({quiet_for_ms} ms ago)");
            return self.withhold_return(why);
        }
        self.unwritten(&flight, &messages);
        self.record(Decision::Unsettled {
            request,
            part,
            quiet_for_ms,
            retry_in_ms: u64::try_from(retry_in.as_millis()).unwrap_or(u64::MAX),
            messages,
        });
        let spent_on_this = matches!(
            &self.lease,
            LeaseSlot::Ended {
                reason: HoldReason::LeaseSpent,
                ..
            }
        );
        if let Some(lease) = flight.lease
            && spent_on_this
            && flight.expected_revision == Some(actual)
        {
            self.lease = LeaseSlot::Granted(lease);
        }
        // At least a millisecond: a host answering 0 must not make a spin.
        let retry_in = retry_in.max(Duration::from_millis(1));
        self.block_pty(PtyBlock {
            reason: HoldReason::TerminalUnsettled { part, quiet_for_ms },
            since: self.now,
            retry_at: Some(self.now.saturating_add(retry_in)),
        });
    }

    /// A person typed while the transaction ran; the host wrote `written`
    /// bytes of it and none after. Whatever reached the composer was not
    /// submitted by DING, and may not be all of the notice: the files count
    /// as staged (unconfirmed), like an outcome DING cannot know, and
    /// nothing more is typed on this lease.
    pub(super) fn on_interrupted(&mut self, request: RequestId, written: usize, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        if matches!(flight.phase, Phase::Return) {
            return self.withhold_return("a person typed during the Return".into());
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.note_interrupted(&messages);
        self.record(Decision::Interrupted {
            request,
            written,
            messages,
        });
        self.end_lease(HoldReason::TypingInterrupted { written });
    }

    /// The host's revision after something of DING's it reports: revisions
    /// never go back.
    pub(super) fn saw_revision(&mut self, revision: u64) {
        self.pty.revision = Some(
            self.pty
                .revision
                .map_or(revision, |known| known.max(revision)),
        );
    }

    pub(super) fn on_pty_error(&mut self, request: RequestId, detail: String) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        // Zero bytes: a Return's notice is still typed, and may be
        // confirmed again before its bound.
        self.unwritten(&flight, &messages);
        self.record(Decision::SendFailed {
            request,
            detail: detail.clone(),
            messages,
        });
        // Retrying at once would spin against a failing (or busy) host.
        self.block_pty_for_retry(detail);
    }

    /// Blocks the PTY for a backoff that doubles with every error and resets
    /// with a successful send or a new harness.
    pub(super) fn block_pty_for_retry(&mut self, detail: String) {
        let delay = self.pty_retry.failed();
        self.block_pty(PtyBlock {
            reason: HoldReason::PtyError { detail },
            since: self.now,
            retry_at: Some(self.now.saturating_add(delay)),
        });
    }

    /// Blocks the PTY, unless its harness has exited: that block lasts until
    /// a new harness reports in (spec §4.3), so a later error, timeout or
    /// outage must not replace it with one that a timer or a status of the
    /// dead harness would lift.
    fn block_pty(&mut self, block: PtyBlock) {
        if self
            .pty_block
            .as_ref()
            .is_some_and(|current| matches!(current.reason, HoldReason::HarnessExited { .. }))
        {
            return;
        }
        self.pty_block = Some(block);
    }

    pub(super) fn on_pty_mismatch(&mut self, request: RequestId, part: IdentityPart, actual: u64) {
        let Some((flight, messages)) = self.take_flight(request) else {
            return;
        };
        self.pty.revision = Some(actual);
        if matches!(flight.phase, Phase::Return) {
            self.typed_in_a_gone_terminal();
            return self.end_lease(HoldReason::IdentityMismatch { part });
        }
        self.ownership
            .set(&messages, &MessageState::Pending, self.now);
        self.record(Decision::SendFailed {
            request,
            detail: format!("{part} mismatch"),
            messages,
        });
        // The lease was about another terminal: end it. The host's next
        // status tells the engine the identity it really has.
        self.end_lease(HoldReason::IdentityMismatch { part });
    }

    pub(super) fn on_harness_exited(&mut self, request: Option<RequestId>, status: String) {
        if let Some(request) = request
            && let Some((flight, messages)) = self.take_flight(request)
        {
            self.unwritten(&flight, &messages);
            self.record(Decision::SendFailed {
                request,
                detail: "the harness has exited".into(),
                messages,
            });
        }
        if self.typed.is_some() && self.in_flight.is_none() {
            self.withhold_return("the harness exited".into());
        }
        let reason = HoldReason::HarnessExited {
            status: status.clone(),
        };
        if self
            .pty_block
            .as_ref()
            .is_some_and(|block| block.reason == reason)
        {
            return;
        }
        self.record(Decision::HarnessExited { status });
        self.pty_block = Some(PtyBlock {
            reason,
            since: self.now,
            retry_at: None,
        });
    }

    pub(super) fn on_pty_unreachable(&mut self) {
        if self.in_flight.is_some() {
            self.outcome_unknown("pty unreachable during the transaction");
        }
        if self.pty.reachable || self.pty_block.is_none() {
            self.pty.reachable = false;
            self.block_pty(PtyBlock {
                reason: HoldReason::PtyUnreachable,
                since: self.now,
                retry_at: None,
            });
            self.record(Decision::PtyUnreachable);
        }
    }

    /// The in-flight transaction may or may not have been written. Its files
    /// count as staged (unconfirmed): typing twice on a guess is worse than
    /// waiting for the re-ring rule, and the files stay unread on disk.
    pub(super) fn outcome_unknown(&mut self, why: &str) {
        let Some((flight, messages)) = self.end_flight() else {
            return;
        };
        let request = flight.request;
        if matches!(flight.phase, Phase::Return) {
            // The Return may or may not be written: no turn after it says
            // it was not.
            self.typed = None;
            self.note_interrupted(&messages);
        }
        let staged = MessageState::Staged {
            incarnation: flight.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        self.record(Decision::OutcomeUnknown {
            request,
            why: why.into(),
            messages,
        });
    }
}
