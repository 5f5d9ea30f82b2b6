//! Holding a person's typed text behind a typed notice's paste.
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
//! refused as unsettled, to be asked again shortly, keeps the hold), or
//! the hold's time is up, or that client hangs up. Then the held input
//! goes on in its order. A person's input that is not text alone ends the
//! hold at once and goes on behind what was held: a key that means
//! something to the harness is never delayed or reordered, and DING's
//! Return is then refused by its compare.
//!
//! Held input has not reached the terminal: it moves neither the revision
//! nor the time of the last input until it does.

use super::*;
use crate::pty::wire::is_typed_text;

/// A hold in force (see the module).
pub(super) struct InputHold {
    /// The client whose next transaction goes first and ends the hold.
    client: Token,
    /// The hold ends here at the latest.
    until: Instant,
    /// That transaction has begun: the hold ends once it is done.
    ending: bool,
    /// Inputs held so far, for the log.
    held: usize,
}

/// What the input order does next while a hold is in force.
pub(super) enum UnderHold {
    /// Begin this input (the owner's transaction): it goes first.
    Begin(Input),
    /// Nothing may reach the terminal yet.
    Wait,
    /// The hold is over: the input order runs as usual.
    Over,
}

impl Host {
    /// Starts holding after `client`'s transaction was written in full,
    /// for at most `ms`. Nothing is held when input already waits behind
    /// that transaction: it was not looked at as it came, and goes on as
    /// it is.
    pub(super) fn start_hold(&mut self, client: Token, ms: u64, now: Instant) {
        if !self.queued.is_empty() || ms == 0 {
            return;
        }
        self.hold = Some(InputHold {
            client,
            until: now + Duration::from_millis(ms),
            ending: false,
            held: 0,
        });
    }

    /// Whether a person's `input` waits behind the hold in force (it is
    /// typed text alone); else it ends the hold, and goes on behind what
    /// was held.
    pub(super) fn holds(&mut self, input: &Input) -> bool {
        let Some(hold) = self.hold.as_mut() else {
            return false;
        };
        if !is_typed_input(input) {
            self.release_hold("a person's key that is not text alone");
            return false;
        }
        hold.held += 1;
        let bytes = super::input_len(input);
        self.log(json!({"event": "input-held", "bytes": bytes, "revision": self.revision}));
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
            .position(|input| matches!(input, Input::Transaction(tx) if tx.client == owner));
        if hold.ending && owners_first.is_none() {
            self.release_hold("after DING's next transaction");
            return UnderHold::Over;
        }
        let Some(at) = owners_first else {
            return UnderHold::Wait;
        };
        hold.ending = true;
        let Some(next) = self.queued.remove(at) else {
            return UnderHold::Wait;
        };
        self.queued_bytes -= super::input_len(&next);
        UnderHold::Begin(next)
    }

    /// `client` asked for a transaction: if it holds, the hold ends once
    /// that one has run, whether it goes first past held input or, with
    /// nothing held, at once.
    pub(super) fn hold_owner_acts(&mut self, client: Token) {
        if let Some(hold) = self.hold.as_mut().filter(|hold| hold.client == client) {
            hold.ending = true;
        }
    }

    /// `client`'s transaction was refused as unsettled, to be asked again
    /// shortly: the hold it began to end goes on, until that one runs or
    /// the hold's time is up.
    pub(super) fn keep_hold_for(&mut self, client: Token) {
        if let Some(hold) = self.hold.as_mut().filter(|hold| hold.client == client) {
            hold.ending = false;
        }
    }

    /// When the hold in force ends if nothing else ends it.
    pub(super) fn hold_deadline(&self) -> Option<Instant> {
        self.hold
            .as_ref()
            .filter(|hold| !hold.ending)
            .map(|hold| hold.until)
    }

    /// Ends the hold if its time is up.
    pub(super) fn check_hold(&mut self, now: Instant) {
        if self.hold_deadline().is_some_and(|until| until <= now) {
            self.release_hold("its time was up");
        }
    }

    /// `client` is gone: a hold it owned ends. Whether one did.
    pub(super) fn hold_owner_gone(&mut self, client: Token) -> bool {
        let owned = self.hold.as_ref().is_some_and(|hold| hold.client == client);
        if owned {
            self.release_hold("DING's connection closed");
        }
        owned
    }

    /// Ends the hold in force: what it held goes on in its order.
    pub(super) fn release_hold(&mut self, why: &str) {
        let Some(hold) = self.hold.take() else {
            return;
        };
        if hold.held > 0 {
            self.log(json!({
                "event": "input-released",
                "held": hold.held,
                "why": why,
                "revision": self.revision,
            }));
        }
    }
}

/// Whether a person's input is typed text alone: every byte it writes is
/// UTF-8 text without a control character.
fn is_typed_input(input: &Input) -> bool {
    match input {
        Input::Keys(bytes) => is_typed_text(bytes),
        Input::Transaction(tx) => tx.steps.iter().all(|step| match step {
            WireStep::Write(bytes) => is_typed_text(bytes),
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
