//! Holding a person's typed text behind a typed notice's paste, and
//! taking the notice back out when the person's input cannot wait.
//!
//! A typed notice is two transactions: its paste, then, once a screen read
//! after it shows the notice alone in the composer, its Return (spec
//! §4.2). A person who starts typing between the two would have their
//! keys join the notice in the composer, and DING's Return then withheld
//! with the notice glued to their draft. A send-if may ask for
//! `holdInputMs`: once it is written in full, a person's input that is
//! typed text alone (no control character, so no Return, Esc, arrow,
//! Backspace or Ctrl key) waits in the input order instead of reaching
//! the terminal, until the same client's next transaction has run (it goes
//! first, and is compared on a revision the held keys have not moved; one
//! refused by its compare or as unsettled, to be asked again on new
//! evidence, keeps the hold). Then the held input goes on in its order.
//! A next transaction that is a paste of its own (it asks for a hold) is
//! not the Return the hold was for: the held input goes on before it, and
//! its compare meets the person's keys.
//!
//! A person's input that is not text alone cannot wait: a key that means
//! something to the harness is never delayed or reordered. It ends the
//! hold, and so do the hold's time and its client's hang-up. When one of
//! those ends it with a person's input to go on (that key, or held text)
//! and the send-if also gave `withdraw` keys (those that empty the
//! program's input line of what the paste wrote), the host writes them
//! first, then what was held, then the key, and pushes `withdrawn` to its
//! watchers: the person's input lands in the composer they saw, and the
//! notice's owner knows its paste is gone. Without `withdraw` that input
//! goes on behind the notice, and DING's Return is refused by its compare.
//!
//! Once the hold is over (its time ran out with nothing held), the paste
//! may still sit alone in the composer, its Return not come (its owner is
//! slow to confirm it, or the adapter that would have is gone): a person's
//! input then would join the notice just the same, so while nothing was
//! written after the paste and its client's next transaction has not
//! begun, that input takes it back out first too
//! (`withdraw_before_a_late_key`).
//!
//! A client that hangs up before its next transaction leaves its paste
//! with nobody to send its Return or take it out (a sidecar started again
//! knows nothing of it): if nothing was written to the terminal after it,
//! the host runs its withdraw keys then, held input or not, during the
//! hold or after it (`withdraw_orphan`).
//!
//! Held input has not reached the terminal: it moves neither the revision
//! nor the time of the last input until it does. The withdraw keys are
//! DING's own bytes: they move the revision, not the time of the last
//! input.

use crate::core::time::Time;
use crate::pty::transport::{self, WireStep};
use crate::pty::wire::is_typed_text;

use super::contract::{Client, HoldAsk, Output, Record, after};
use super::state::{InputHold, InputOrder, Queued, Running, UnderHold, Unreturned};

impl InputOrder {
    /// Starts holding after `client`'s transaction was written in full,
    /// for at most `ms`. Nothing is held when input already waits behind
    /// that transaction: it was not looked at as it came, and goes on as
    /// it is.
    pub(super) fn start_hold(&mut self, client: Client, ask: HoldAsk, now: Time) {
        if !self.queued.is_empty() || ask.ms == 0 {
            return;
        }
        self.hold = Some(InputHold {
            client,
            until: after(now, ask.ms),
            ending: false,
            held: 0,
            withdraw: ask.withdraw,
            incarnation: self.incarnation.clone(),
        });
    }

    /// `client`'s paste asking for `ask` was written in full: it awaits
    /// its Return, held as asked; if its client has hung up meanwhile, it
    /// comes back out at once.
    pub(super) fn pasted(&mut self, client: Client, ask: HoldAsk, now: Time) {
        self.unreturned = ask.withdraw.clone().map(|withdraw| Unreturned {
            client,
            withdraw,
            incarnation: self.incarnation.clone(),
        });
        if self.gone == Some(client) {
            self.withdraw_orphan(client);
            return;
        }
        self.start_hold(client, ask, now);
    }

    /// `client` hung up with its paste in the composer, its Return never
    /// to come: nobody else knows the notice is there (a sidecar started
    /// again does not), and it would glue itself to the person's next
    /// prompt or keep every later delivery out. If nothing was written
    /// after it, to the same terminal, its withdraw steps take it back
    /// out, and the watchers hear `withdrawn`. Whether they were queued.
    pub(super) fn withdraw_orphan(&mut self, client: Client) -> bool {
        let Some(paste) = self.unreturned.take_if(|paste| paste.client == client) else {
            return false;
        };
        self.withdraw_unreturned(paste, "DING's connection closed before its Return")
    }

    /// A person's key comes once the hold is over (its time was up with
    /// nothing held, or none was started), to a paste whose Return has not
    /// come and after which nothing was written: it would join the notice
    /// in the composer as surely as during the hold (its owner may be slow
    /// to confirm it, or an adapter that would have is gone), so the paste
    /// comes back out first, as a key that is not text alone takes it out
    /// during the hold.
    fn withdraw_before_a_late_key(&mut self) {
        if crate::mutation::planted(crate::mutation::Mutation::HostNeverWithdraws) {
            return;
        }
        if let Some(paste) = self.unreturned.take() {
            self.withdraw_unreturned(paste, "a person's key after the hold, before DING's Return");
        }
    }

    /// Puts `paste`'s withdraw steps ahead of every input waiting, if its
    /// terminal is still the one it went to. Whether they were queued.
    fn withdraw_unreturned(&mut self, paste: Unreturned, why: &'static str) -> bool {
        if paste.incarnation != self.incarnation || !self.child_alive() {
            return false;
        }
        let (bytes, _) = transport::totals(&paste.withdraw);
        let revision = self.revision();
        self.log(Record::Withdrawing {
            bytes,
            why,
            revision,
        });
        let withdrawal =
            Queued::Transaction(Box::new(Running::withdrawal(paste.client, paste.withdraw)));
        self.queued_bytes += withdrawal.len();
        self.queued.push_front(withdrawal);
        true
    }

    /// Whether a person's `input` waits behind the hold in force (it is
    /// typed text alone); else it ends the hold, taking the paste back out
    /// unless the owner's next transaction has begun, and goes on behind
    /// what was held.
    pub(super) fn holds(&mut self, input: &Queued, now: Time) -> bool {
        // A hold whose time is up ends before the input that finds it so.
        self.check_hold(now);
        let Some(hold) = self.hold.as_mut() else {
            self.withdraw_before_a_late_key();
            return false;
        };
        if !is_typed_input(input) {
            if !hold.ending {
                self.withdraw("a person's key that is not text alone");
            }
            self.release_hold("a person's key that is not text alone");
            return false;
        }
        hold.held += 1;
        let bytes = input.len();
        let revision = self.revision();
        self.log(Record::Held { bytes, revision });
        true
    }

    /// What may begin next under the hold in force, if any.
    pub(super) fn under_hold(&mut self) -> UnderHold {
        let Some(hold) = self.hold.as_mut() else {
            return UnderHold::Over;
        };
        let owner = hold.client;
        let owners_first = self
            .queued
            .iter()
            .position(|input| matches!(input, Queued::Transaction(tx) if tx.client == owner));
        if hold.ending && owners_first.is_none() {
            self.release_hold("after DING's next transaction");
            return UnderHold::Over;
        }
        let Some(at) = owners_first else {
            return UnderHold::Wait;
        };
        if matches!(&self.queued[at], Queued::Transaction(tx) if tx.asks_for_a_hold()) {
            // A paste of its own is not the Return the hold waits for: the
            // paste it held behind is gone (its program started again, or
            // it was taken out), and what the person typed goes first, so
            // the new paste's compare meets it.
            self.release_hold("before DING's next paste");
            return UnderHold::Over;
        }
        hold.ending = true;
        let Some(next) = self.queued.remove(at) else {
            return UnderHold::Wait;
        };
        self.queued_bytes -= next.len();
        UnderHold::Begin(next)
    }

    /// `client` asked for a transaction: if it holds, the hold ends once
    /// that one has run, whether it goes first past held input or, with
    /// nothing held, at once.
    pub(super) fn hold_owner_acts(&mut self, client: Client) {
        if let Some(hold) = self.hold.as_mut().filter(|hold| hold.client == client) {
            hold.ending = true;
        }
    }

    /// `client`'s transaction was refused by its compare or as unsettled,
    /// to be asked again on new evidence: the hold it began to end goes
    /// on, until that one runs or the hold's time is up.
    pub(super) fn keep_hold_for(&mut self, client: Client) {
        if let Some(hold) = self.hold.as_mut().filter(|hold| hold.client == client) {
            hold.ending = false;
        }
    }

    /// When the hold in force ends if nothing else ends it.
    pub(super) fn hold_deadline(&self) -> Option<Time> {
        self.hold
            .as_ref()
            .filter(|hold| !hold.ending)
            .map(|hold| hold.until)
    }

    /// Ends the hold if its time is up, taking the paste back out first
    /// if a person's text waits behind it.
    pub(super) fn check_hold(&mut self, now: Time) {
        if self.hold_deadline().is_some_and(|until| until <= now) {
            self.end_hold_with_input("its time was up");
        }
    }

    /// `client` is gone: a hold it owned ends, taking the paste back out
    /// first if a person's text waits behind it. Whether one did.
    pub(super) fn hold_owner_gone(&mut self, client: Client) -> bool {
        let owned = self.hold.as_ref().is_some_and(|hold| hold.client == client);
        if owned {
            self.end_hold_with_input("DING's connection closed");
        }
        owned
    }

    /// Ends the hold before its owner's next transaction ran: what it held
    /// must not land behind the paste.
    pub(super) fn end_hold_with_input(&mut self, why: &'static str) {
        if self.hold.as_ref().is_some_and(|hold| hold.held > 0) {
            self.withdraw(why);
        }
        self.release_hold(why);
    }

    /// Puts the hold's withdraw steps, if it has them and its terminal is
    /// still the one the paste went to, ahead of every person's input
    /// waiting (what it held, then the input that ended it). At most once
    /// a hold; watchers hear `withdrawn` once they have run.
    fn withdraw(&mut self, why: &'static str) {
        let alive = self.child_alive();
        let revision = self.revision();
        let Some(hold) = self.hold.as_mut() else {
            return;
        };
        let Some(steps) = hold.withdraw.take() else {
            return;
        };
        if crate::mutation::planted(crate::mutation::Mutation::HostNeverWithdraws) {
            return;
        }
        if hold.incarnation != self.incarnation || !alive {
            return;
        }
        let client = hold.client;
        // The paste comes out: nothing is left to take out on a hang-up.
        self.unreturned = None;
        let (bytes, _) = transport::totals(&steps);
        self.log(Record::Withdrawing {
            bytes,
            why,
            revision,
        });
        let withdrawal = Queued::Transaction(Box::new(Running::withdrawal(client, steps)));
        self.queued_bytes += withdrawal.len();
        self.queued.push_front(withdrawal);
    }

    /// A hold's withdraw steps have run: the paste is out of the input
    /// line, and the watchers are told.
    pub(super) fn withdrawn(&mut self) {
        let revision = self.revision();
        self.log(Record::Withdrawn { revision });
        self.out(Output::Withdrawn { revision });
    }

    /// Ends the hold in force: what it held goes on in its order.
    pub(super) fn release_hold(&mut self, why: &'static str) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        let revision = self.revision();
        self.log(Record::Released {
            held: hold.held,
            why,
            revision,
        });
    }
}

/// Whether a person's input is typed text alone: every byte it writes is
/// UTF-8 text without a control character.
fn is_typed_input(input: &Queued) -> bool {
    match input {
        Queued::Keys { bytes, .. } => is_typed_text(bytes),
        Queued::Transaction(tx) => tx.steps.iter().all(|step| match step {
            WireStep::Write(bytes) | WireStep::Paste(bytes) => is_typed_text(bytes),
            WireStep::WaitMs(_) => true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::pty::wire::is_typed_text as is_text;

    #[test]
    fn only_text_without_controls_is_typed_text() {
        for text in ["p", "\u{e9}", "hello world", "日本", "a;b"] {
            assert!(is_text(text.as_bytes()), "{text:?}");
        }
        for bytes in [
            &b"\r"[..],
            b"\x1b",
            b"\x1b[A",
            b"\x7f",
            b"\x03",
            b"a\tb",
            b"p\r",
            b"\xc2\x9b",
            b"\xff",
            b"",
        ] {
            assert!(!is_text(bytes), "{bytes:?}");
        }
    }
}
