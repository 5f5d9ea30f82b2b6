//! A typed notice's second phase (the careful policy): the paste waits in
//! the composer for fresh evidence that shows it alone, then its Return is
//! a compare-and-send of its own. Without that by its bound the Return is
//! withheld; a withheld notice the screen shows alone is taken back out,
//! and one the host withdrew is pending again.

use crate::core::decision::{Decision, ReleaseCause};
use crate::core::downlink::Downlink;
use crate::core::fence::TimeFence;
use crate::core::hold::HoldReason;
use crate::core::lease::{Lease, LeaseSlot};
use crate::core::message::MessageName;
use crate::core::ownership::{MessageState, RequestId};
use crate::core::protocol::Composer;
use crate::core::time::Time;
use crate::core::transport::Transport;
use crate::core::typed::TypedNotice;

use super::output::{Output, SendIf};
use super::state::{Engine, InFlight, Phase};

/// A transaction on a lease that follows a paste (see
/// [`Engine::send_on_lease`]).
pub(super) struct SecondPhase {
    pub(super) phase: Phase,
    /// The request its files are in flight under (`None`: its own).
    pub(super) owner: Option<RequestId>,
    pub(super) messages: Vec<MessageName>,
    pub(super) incarnation: Option<String>,
    pub(super) fence: TimeFence,
    pub(super) transport: Transport,
}

impl Engine {
    /// The paste is in the composer; its Return waits for the adapter to
    /// see it there, alone. The adapter is told what to look for.
    pub(super) fn on_pasted(
        &mut self,
        request: RequestId,
        asked_at: Time,
        text: String,
        revision: u64,
        messages: Vec<MessageName>,
    ) {
        let tunables = &self.config.tunables;
        self.paste_drawn = false;
        self.pasted_revision = revision;
        self.typed = Some(TypedNotice {
            notice: request,
            messages: messages.clone(),
            incarnation: self
                .pty
                .identity
                .as_ref()
                .map(|identity| identity.incarnation.clone()),
            asked_at,
            pasted_revision: revision,
            return_by: asked_at.saturating_add(tunables.return_within()),
            submit_after: self.now.saturating_add(tunables.submit_delay),
        });
        self.record(Decision::Pasted {
            request,
            revision,
            messages,
        });
        self.pasted_text = Some((request, text.clone()));
        if self.adapter.is_up() {
            self.outputs
                .push_back(Output::ToAdapter(Downlink::Typed { request, text }));
        }
    }

    /// The terminal the notice was pasted into is gone (a new identity):
    /// no screen can confirm it now, and it was never sent, so its files
    /// are pending again.
    pub(super) fn typed_in_a_gone_terminal(&mut self) {
        let files = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return;
        };
        self.record(Decision::ReturnWithheld {
            notice: typed.notice,
            why: "the terminal it was typed into is gone".into(),
            messages: files.clone(),
        });
        self.release(files, ReleaseCause::IncarnationChanged);
    }

    /// A new adapter knows nothing of the notice in the composer: it is
    /// told again the text of one that awaits its Return or was withheld.
    pub(super) fn retell_typed(&mut self) {
        let Some((request, text)) = &self.pasted_text else {
            return;
        };
        let awaited = self.typed.as_ref().map(|typed| typed.notice) == Some(*request)
            || self.withheld_notice == Some(*request);
        if awaited {
            self.outputs.push_back(Output::ToAdapter(Downlink::Typed {
                request: *request,
                text: text.clone(),
            }));
        }
    }

    /// Whether the transaction in flight is a typed notice's Return.
    pub(super) fn returning(&self) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|flight| matches!(flight.phase, Phase::Return))
    }

    /// No Return for the typed notice: `why`. It waits in the composer,
    /// unsent, for the person; its files are staged (unconfirmed) until an
    /// empty idle composer before any turn says the notice is gone.
    pub(super) fn withhold_return(&mut self, why: String) {
        // Evidence that shows the notice alone stays, to take it out (at
        // once, or when the terminal may be written to again).
        if self.end_typed(why.clone(), true)
            && !self.take_out_withheld()
            && !self.lease_shows_withheld()
        {
            self.end_lease(HoldReason::ReturnWithheld { why });
        }
    }

    /// A turn began while the notice waited for its Return: the person
    /// sent it (an Enter of theirs), so it went with that turn. Its files
    /// are staged, unconfirmed, and nothing gives them back on an empty
    /// composer. A Return in flight is settled by its reply instead.
    pub(super) fn typed_sent_by_a_turn(&mut self) {
        if !self.returning() {
            self.end_typed(
                "a turn began before the Return: the notice went with it".into(),
                false,
            );
        }
    }

    /// Ends the typed notice without a Return of DING's: its files still
    /// in flight under it are staged, unconfirmed, and when `unsent` they
    /// wait for an empty composer to ring again. Whether there was one.
    fn end_typed(&mut self, why: String, unsent: bool) -> bool {
        let messages = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return false;
        };
        let staged = MessageState::Staged {
            incarnation: typed.incarnation,
            confirmed: false,
        };
        self.ownership.set(&messages, &staged, self.now);
        self.journal_dirty = true;
        if unsent {
            self.note_interrupted(&messages);
            self.withheld_notice = Some(typed.notice);
        }
        self.record(Decision::ReturnWithheld {
            notice: typed.notice,
            why,
            messages,
        });
        true
    }

    /// The PTY host took the typed notice back out of the composer before
    /// its Return, because a person's input came first (their keys landed
    /// in the composer they saw): the notice was never sent, so its files
    /// are pending again, and the lease it was typed under is over. A
    /// Return in flight meanwhile is refused by its compare; its reply
    /// finds nothing of its own left.
    pub(super) fn on_withdrawn(&mut self, actual: u64) {
        self.saw_revision(actual);
        let files = self.typed_files();
        let Some(typed) = self.typed.take() else {
            return self.on_withheld_withdrawn(actual);
        };
        self.record(Decision::Withdrawn {
            notice: typed.notice,
            revision: actual,
            messages: files.clone(),
        });
        self.give_back(files, ReleaseCause::Withdrawn);
        self.end_lease(HoldReason::NoticeWithdrawn);
    }

    /// The PTY host took a notice whose Return was withheld back out (a
    /// person's key came, after the host's hold, to the paste still alone
    /// in the composer): out unsent, so its files still staged are pending
    /// again, as on an empty composer.
    fn on_withheld_withdrawn(&mut self, actual: u64) {
        let Some(notice) = self.withheld_notice else {
            return self.record(Decision::Ignored {
                what: "a withdrawn paste, with no typed notice awaiting its Return".into(),
            });
        };
        self.withheld_notice = None;
        let unsent = self.take_interrupted_staged();
        self.record(Decision::Withdrawn {
            notice,
            revision: actual,
            messages: unsent.clone(),
        });
        self.give_back(unsent, ReleaseCause::Withdrawn);
        self.end_lease(HoldReason::NoticeWithdrawn);
    }

    /// The composer is empty and idle, and no turn began since a person
    /// interrupted a notice: it was deleted unsent, so its files, if
    /// still staged, are pending again.
    pub(super) fn release_interrupted_unsent(&mut self) {
        // An empty composer holds no withheld notice either.
        self.withheld_notice = None;
        let unsent = self.take_interrupted_staged();
        self.give_back(unsent, ReleaseCause::InterruptedUnsent);
    }

    /// Forgets the interrupted notice's files, and returns those still
    /// staged: the journal holds them as staged again (it leaves out a
    /// notice that may sit unsent in the composer).
    pub(super) fn take_interrupted_staged(&mut self) -> Vec<MessageName> {
        self.journal_dirty |= !self.interrupted.is_empty();
        self.taken_out = false;
        std::mem::take(&mut self.interrupted)
            .into_iter()
            .filter(|name| {
                matches!(
                    self.ownership.state(name),
                    Some(MessageState::Staged { .. })
                )
            })
            .collect()
    }

    /// A turn began, or a hook took over: the interrupted notice is no
    /// longer owed to the next empty composer. It went with the turn if it
    /// was still in the composer; one DING took back out did not, and its
    /// files are pending again (a harness that ignored the keys and sent
    /// it with the turn gets them said twice, never lost).
    pub(super) fn forget_interrupted(&mut self) {
        let taken_out = self.taken_out;
        let staged = self.take_interrupted_staged();
        if taken_out {
            self.give_back(staged, ReleaseCause::Withdrawn);
        }
    }

    /// A notice was interrupted or its Return withheld: its files may sit
    /// unsent in the composer, which the journal says by leaving them out.
    pub(super) fn note_interrupted(&mut self, names: &[MessageName]) {
        self.interrupted.extend(names.iter().cloned());
        self.journal_dirty = true;
    }

    /// Whether a withheld notice was pasted and no screen since showed it:
    /// an empty composer then says nothing of it (the harness may not have
    /// read or drawn the paste yet).
    pub(super) fn withheld_undrawn(&self) -> bool {
        self.withheld_notice.is_some() && !self.paste_drawn
    }

    /// Makes `names` pending again and shows them as given back, for
    /// `cause`, in status.
    fn give_back(&mut self, names: Vec<MessageName>, cause: ReleaseCause) {
        for name in &names {
            self.given_back.insert(name.clone(), (cause, self.now));
        }
        self.release(names, cause);
    }

    /// Ends a typed notice that needs no Return any more: its files all
    /// left (archived, or a hook received them: the person sent it), or
    /// its bound passed (spec §4.2). A Return in flight is settled by its
    /// reply instead.
    pub(super) fn settle_typed(&mut self) {
        if self.in_flight.is_some() {
            return;
        }
        let Some(typed) = &self.typed else {
            return;
        };
        if !self.typed_has_files() {
            self.typed = None;
        } else if self.now >= typed.return_by {
            let within = self.config.tunables.return_within().as_millis();
            let why =
                format!("no screen showed the notice alone in the composer within {within} ms");
            self.withhold_return(why);
        }
    }

    /// Takes a withheld notice back out of the composer once fresh
    /// evidence shows it there alone (the provider's keys, on that
    /// evidence's revision and the usual time fence). Whether it asked.
    pub(super) fn take_out_withheld(&mut self) -> bool {
        let Some(notice) = self.withheld_notice else {
            return false;
        };
        if self.in_flight.is_some() || self.pty_block.is_some() || self.stopping {
            return false;
        }
        let (LeaseSlot::Granted(lease), Some(current)) = (&self.lease, self.pty.identity.as_ref())
        else {
            return false;
        };
        let shown_alone = self.lease_shows_withheld()
            && lease.composer == Composer::Nonempty
            && self.now < lease.expires_at
            && lease.identity.mismatch(current).is_none();
        let (true, Some(revision), Some(keys)) = (shown_alone, lease.revision, &lease.withdraw)
        else {
            return false;
        };
        let second = SecondPhase {
            phase: Phase::TakeOut,
            owner: None,
            messages: Vec::new(),
            incarnation: Some(current.incarnation.clone()),
            fence: self.config.tunables.time_fence(),
            transport: keys.transport(),
        };
        let lease = lease.clone();
        self.send_on_lease(lease, revision, second, |request| Decision::TakingOut {
            request,
            notice,
            expected_revision: revision,
        });
        true
    }

    /// Whether the lease names the withheld notice as what the composer
    /// holds, alone.
    fn lease_shows_withheld(&self) -> bool {
        matches!(
            &self.lease,
            LeaseSlot::Granted(lease) if lease.typed.is_some() && lease.typed == self.withheld_notice
        )
    }

    /// The typed notice's files still in flight under it.
    /// The typed notice's files still in flight under it.
    fn typed_in_flight(&self) -> impl Iterator<Item = &MessageName> {
        let typed = self.typed.as_ref();
        let owner = typed.map(|typed| MessageState::InFlight {
            request: typed.notice,
        });
        typed
            .into_iter()
            .flat_map(|typed| typed.messages.iter())
            .filter(move |name| self.ownership.state(name) == owner.as_ref())
    }

    /// Whether any file of the typed notice is still in flight under it
    /// (without listing them: the timer table asks at every deadline).
    pub(super) fn typed_has_files(&self) -> bool {
        self.typed_in_flight().next().is_some()
    }

    fn typed_files(&self) -> Vec<MessageName> {
        self.typed_in_flight().cloned().collect()
    }

    /// The typed notice's Return, once fresh evidence confirms the notice
    /// (spec §4.2): on the confirming lease's revision, with no person's
    /// input since the paste was asked for. Without that by its bound, no
    /// Return.
    pub(super) fn submit_typed(&mut self) {
        if self.in_flight.is_some() {
            return;
        }
        self.settle_typed();
        let Some(typed) = &self.typed else {
            return self.deliver();
        };
        let messages = self.typed_files();
        if let Some(block) = &self.pty_block {
            let reason = block.reason.clone();
            return self.announce_hold(reason);
        }
        let confirmed = match (&self.lease, self.pty.identity.as_ref()) {
            (LeaseSlot::Granted(lease), Some(current))
                if self.now < lease.expires_at && lease.identity.mismatch(current).is_none() =>
            {
                typed
                    .confirmed_by(lease)
                    .map(|revision| (lease.clone(), revision))
            }
            _ => None,
        };
        let Some((lease, expected_revision)) = confirmed.filter(|_| self.now >= typed.submit_after)
        else {
            return self.announce_hold(HoldReason::AwaitingReturn);
        };
        let fence = typed.return_fence(self.config.tunables.time_fence(), self.now);
        let notice = typed.notice;
        let second = SecondPhase {
            phase: Phase::Return,
            owner: Some(notice),
            messages,
            incarnation: typed.incarnation.clone(),
            fence,
            transport: Transport::submit(),
        };
        self.send_on_lease(lease, expected_revision, second, |request| {
            Decision::Submitting {
                request,
                notice,
                expected_revision,
            }
        });
    }

    /// Spends `lease` on a compare-and-send on its `revision` of what
    /// `second` writes (the Return of a typed notice, or the keys that take
    /// a withheld one back out), recording `decision` for its request.
    fn send_on_lease(
        &mut self,
        lease: Lease,
        revision: u64,
        second: SecondPhase,
        decision: impl FnOnce(RequestId) -> Decision,
    ) {
        let request = self.next_request;
        self.next_request += 1;
        self.in_flight = Some(InFlight {
            request,
            owner: second.owner.unwrap_or(request),
            phase: second.phase,
            asked_at: self.now,
            messages: second.messages.clone(),
            expected_revision: Some(revision),
            incarnation: second.incarnation,
            deadline: self.now.saturating_add(self.config.pty_reply_timeout),
            lease: Some(lease.clone()),
        });
        self.lease = LeaseSlot::ended(HoldReason::LeaseSpent, self.now);
        self.hold = None;
        self.record(decision(request));
        self.outputs.push_back(Output::SendIf(SendIf {
            request,
            identity: lease.identity,
            expected_revision: revision,
            fence: second.fence,
            transport: second.transport,
            messages: second.messages,
            hold_input: None,
            withdraw: None,
        }));
    }
}
