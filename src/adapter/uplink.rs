//! The uplink: protocol v1 lines from the adapter to the sidecar, on stdout.
//!
//! It owns the two things every line needs right: the identity (the one the
//! sidecar last told the adapter over the downlink, or the hook's own for a
//! claim) and a sequence that strictly increases for the life of the
//! process. Lines are built by the typed encoder, so they always parse.
//! The encoder ([`Uplink`]) is the machine's; the [`Pipe`] is the shell's:
//! stdout is non-blocking, bytes it does not take yet wait in a queue, and
//! the shell asks for writability while it is not empty.

use std::borrow::Cow;
use std::io::{self, Write};
use std::time::Duration;

use crate::core::identity::{ClaimedIdentity, Identity};
use crate::core::message::MessageName;
use crate::core::protocol::{Activity, Body, Claim, Event, Lifecycle, Undelivered, WithdrawKeys};

use super::hook_plan::ClaimRequest;
use super::reading::Reading;

/// The encoder of the uplink: it stamps each line with the next sequence.
#[derive(Debug, Default)]
pub struct Uplink {
    sequence: u64,
}

impl Uplink {
    pub fn new() -> Uplink {
        Uplink::default()
    }

    /// A screen reading observed at `revision`; `withdraw`, the keys that
    /// empty its composer of a paste, goes with an idle, empty one (for the
    /// paste to come) or one that holds DING's notice alone (`typed`: to
    /// take it out if its Return was withheld) only.
    pub fn activity(
        &mut self,
        identity: &Identity,
        reading: &Reading,
        revision: u64,
        valid_for: Duration,
        typed: Option<u64>,
        withdraw: Option<WithdrawKeys<'static>>,
    ) -> String {
        self.line(
            identity,
            Body::Activity(Activity {
                state: reading.state,
                valid_for,
                composer: reading.composer,
                revision: Some(revision),
                typed,
                withdraw: withdraw
                    .filter(|_| super::parked::is_fresh_idle(reading) || typed.is_some()),
                reason: Some(Cow::Borrowed(bounded(&reading.reason))),
            }),
        )
    }

    /// Nothing can be vouched for (no screen): `unknown`, with no revision,
    /// so it can never authorize terminal input.
    pub fn activity_unknown(&mut self, identity: &Identity, why: &str) -> String {
        self.line(
            identity,
            Body::Activity(Activity {
                state: crate::core::protocol::ActivityState::Unknown,
                valid_for: Duration::ZERO,
                composer: crate::core::protocol::Composer::Unknown,
                revision: None,
                typed: None,
                withdraw: None,
                reason: Some(Cow::Borrowed(bounded(why))),
            }),
        )
    }

    /// Which files a hook may inject; `claim` is echoed in the answer.
    pub fn claim(&mut self, identity: &Identity, claim: u64, request: &ClaimRequest) -> String {
        let ClaimRequest {
            wants,
            scope,
            name_bytes,
        } = request.clone();
        self.line(
            identity,
            Body::Claim(Claim {
                claim,
                wants,
                scope,
                name_bytes,
            }),
        )
    }

    /// A hook proved these files are in the harness's context.
    pub fn turn_boundary(&mut self, identity: &Identity, messages: Vec<MessageName>) -> String {
        self.line(identity, Body::TurnBoundary { messages })
    }

    /// Claimed files that a hook never passed on, given back.
    pub fn release(
        &mut self,
        identity: &Identity,
        messages: Vec<MessageName>,
        reason: Undelivered,
    ) -> String {
        self.line(identity, Body::Release { messages, reason })
    }

    /// A claim's hook printed its files for the harness (its receipt).
    pub fn printed(&mut self, identity: &Identity, messages: Vec<MessageName>) -> String {
        self.line(identity, Body::Printed { messages })
    }

    pub fn lifecycle(&mut self, identity: &Identity, event: Lifecycle) -> String {
        self.line(identity, Body::Lifecycle { event })
    }

    fn line(&mut self, identity: &Identity, body: Body<'_>) -> String {
        self.sequence += 1;
        let event = Event {
            identity: ClaimedIdentity {
                session: Cow::Borrowed(&identity.session),
                incarnation: Cow::Borrowed(&identity.incarnation),
                generation: Cow::Borrowed(&identity.generation),
            },
            sequence: self.sequence,
            body,
        };
        event.to_line()
    }
}

/// Lines on their way to the sidecar: what a non-blocking pipe has not
/// taken yet waits here.
pub struct Pipe<W: Write> {
    out: W,
    queue: Vec<u8>,
    sent: usize,
}

impl<W: Write> Pipe<W> {
    pub fn new(out: W) -> Pipe<W> {
        Pipe {
            out,
            queue: Vec::new(),
            sent: 0,
        }
    }

    /// Queues one line (its newline is added).
    pub fn push(&mut self, line: &str) {
        self.queue.extend_from_slice(line.as_bytes());
        self.queue.push(b'\n');
    }

    /// Writes what the pipe takes. Returns whether bytes still wait; an error
    /// means the sidecar is gone.
    pub fn flush(&mut self) -> io::Result<bool> {
        while self.sent < self.queue.len() {
            match self.out.write(&self.queue[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
        }
        if self.sent == self.queue.len() {
            self.queue.clear();
            self.sent = 0;
        }
        let _ = self.out.flush();
        Ok(!self.queue.is_empty())
    }
}

/// A reason cut to the protocol's 1,024-byte bound, at a character edge.
fn bounded(reason: &str) -> &str {
    let limit = crate::core::protocol::MAX_FIELD_BYTES;
    if reason.len() <= limit {
        return reason;
    }
    let mut end = limit;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    &reason[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::protocol::{ActivityState, ClaimScope, ClaimWants, Composer, parse_line};

    #[test]
    fn lines_parse_and_sequences_increase() {
        let identity = Identity {
            session: "s".into(),
            incarnation: "i".into(),
            generation: "g".into(),
        };
        let mut uplink = Uplink::new();
        let mut pipe = Pipe::new(Vec::new());
        let reading = Reading {
            state: ActivityState::Idle,
            composer: Composer::Empty,
            reason: "é".repeat(600).into(),
        };
        pipe.push(&uplink.activity(
            &identity,
            &reading,
            7,
            Duration::from_millis(900),
            None,
            None,
        ));
        pipe.push(&uplink.lifecycle(&identity, Lifecycle::Clear));
        pipe.push(&uplink.claim(
            &identity,
            3,
            &ClaimRequest {
                wants: ClaimWants::Oldest(4),
                scope: ClaimScope::Pending,
                name_bytes: Some(100),
            },
        ));
        pipe.push(&uplink.turn_boundary(&identity, vec![MessageName::new("a.md").unwrap()]));
        assert!(!pipe.flush().unwrap());
        let text = String::from_utf8(pipe.out.clone()).unwrap();
        let sequences: Vec<u64> = text
            .lines()
            .map(|line| parse_line(line.as_bytes()).expect("parses").sequence)
            .collect();
        assert_eq!(sequences, [1, 2, 3, 4]);
    }
}
