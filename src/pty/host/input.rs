//! The input order: committing bytes, queueing behind an active
//! transaction, the send-if compare, and running transaction steps (writes
//! and timer-driven waits) to completion.

use super::hold::UnderHold;
use super::*;
use crate::core::transport::pasted;

impl Host {
    /// Hands input to the terminal in arrival order, or queues it behind the
    /// active transaction. A person's input ends an active send-if first:
    /// DING's remaining steps were decided on a terminal the person has
    /// since touched. A person's typed text that a hold keeps waits for
    /// DING's next transaction instead (`hold`).
    pub(super) fn submit(&mut self, input: Input) {
        if is_a_persons(&input) {
            if self.holds(&input) {
                self.queued_bytes += input_len(&input);
                self.queued.push_back(input);
                return;
            }
            self.interrupt_send_if();
        } else if let Input::Transaction(tx) = &input {
            self.hold_owner_acts(tx.client);
        }
        // A person's keys go through the queue even when it is empty: it is
        // where they keep their distance from the keys before (`pace.rs`).
        let paced = matches!(input, Input::Keys { .. });
        if self.active.is_some() || !self.queued.is_empty() || paced {
            self.queued_bytes += input_len(&input);
            self.queued.push_back(input);
            self.run_input_order(Instant::now());
            return;
        }
        self.begin(input);
        self.run_input_order(Instant::now());
    }

    /// Drops the rest of the active send-if, if it has a write left, and
    /// answers `interrupted` with what it had written. A transaction with
    /// only its last bytes still landing is done, not interrupted.
    fn interrupt_send_if(&mut self) {
        let Some(tx) = self.active.as_ref() else {
            return;
        };
        let writes_left = tx
            .steps
            .iter()
            .any(|step| matches!(step, WireStep::Write(_) | WireStep::Paste(_)));
        if tx.condition.is_none() || !writes_left {
            return;
        }
        let Some(tx) = self.active.take() else { return };
        self.log(json!({
            "event": "send-if-interrupted",
            "written": tx.written,
            "revision": self.revision,
        }));
        let reply = SendIfReply::Interrupted {
            revision: self.revision,
            written: tx.written,
        };
        self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
    }

    pub(super) fn begin(&mut self, input: Input) {
        match input {
            Input::Keys { bytes, arrived } => {
                if self.child_alive() {
                    self.commit(&bytes);
                    self.heard_input();
                    self.key_spacing.wrote(arrived, Instant::now());
                }
            }
            Input::Transaction(tx) => self.begin_transaction(tx),
        }
    }

    /// The compare: runs when the transaction reaches the head of the input
    /// order, after reading all pending output, immediately before its first
    /// byte would be committed.
    pub(super) fn begin_transaction(&mut self, tx: Transaction) {
        self.read_master();
        if !self.child_alive() {
            if tx.withdrawal {
                return;
            }
            let reply = match tx.condition {
                Some(_) => ServerLine::Reply(Reply::SendIf(SendIfReply::Exited {
                    revision: self.revision,
                })),
                None => ServerLine::Error(ErrorReply {
                    error: ErrorKind::ChildExited,
                    message: "the child has exited; nothing was written".into(),
                }),
            };
            self.reply(tx.client, reply);
            return;
        }
        if let Some(condition) = &tx.condition {
            if let Some(part) = self.mismatch(condition) {
                let reply = SendIfReply::Mismatch {
                    part,
                    revision: self.revision,
                };
                self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
                return;
            }
            if condition.expected_revision != self.revision {
                let reply = SendIfReply::Conflict {
                    revision: self.revision,
                };
                self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
                // Asked again on new evidence: a hold goes on for it.
                self.keep_hold_for(tx.client);
                return;
            }
            if let Some(reply) = self.unsettled(condition) {
                self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
                // Asked again once settled: a hold goes on for it.
                self.keep_hold_for(tx.client);
                return;
            }
        }
        let peer = self.clients.get(&tx.client).map_or(0, |c| c.peer_pid);
        let (bytes, _) = transport::totals(&tx.steps);
        let op = match (&tx.condition, tx.withdrawal) {
            (Some(_), _) => "send-if",
            (None, true) => "withdraw",
            (None, false) => "send",
        };
        self.log(json!({
            "event": match tx.origin {
                Origin::Delivery => "delivery",
                Origin::Intervention => "intervention",
            },
            "op": op,
            "peerPid": peer,
            "bytes": bytes,
            "revision": self.revision,
        }));
        self.active = Some(tx);
    }

    /// The time fence: the `unsettled` refusal if a person's input or the
    /// program's output is more recent than the condition allows, input
    /// first (a key not yet drawn is the worse surprise). Each part is
    /// judged on the host's clock, now.
    fn unsettled(&self, condition: &Condition) -> Option<SendIfReply> {
        let now = self.clock_ms(Instant::now());
        let parts = [
            (
                TerminalPart::Input,
                condition.quiet_input_ms,
                self.terminal.input_at_ms,
            ),
            (
                TerminalPart::Output,
                condition.settled_output_ms,
                self.terminal.output_at_ms,
            ),
        ];
        let short: Vec<(TerminalPart, u64, u64)> = parts
            .into_iter()
            .filter_map(|(part, wanted, at)| {
                let quiet_for = now.saturating_sub(at?);
                let wanted = wanted?;
                (quiet_for < wanted).then(|| (part, quiet_for, wanted - quiet_for))
            })
            .collect();
        let &(part, quiet_for_ms, _) = short.first()?;
        let retry_in_ms = short.iter().map(|&(_, _, left)| left).max().unwrap_or(0);
        Some(SendIfReply::Unsettled {
            part,
            quiet_for_ms,
            retry_in_ms,
            revision: self.revision,
        })
    }

    /// Input other than DING's own deliveries reached the terminal now.
    fn heard_input(&mut self) {
        self.terminal.input_at_ms = Some(self.clock_ms(Instant::now()));
    }

    pub(super) fn mismatch(&self, condition: &Condition) -> Option<IdentityPart> {
        if condition.session != self.session {
            Some(IdentityPart::Session)
        } else if condition.incarnation != self.child.incarnation {
            Some(IdentityPart::Incarnation)
        } else if condition.generation != self.generation {
            Some(IdentityPart::Generation)
        } else {
            None
        }
    }

    /// Runs the active transaction as far as it can go now, then, once it
    /// is done, the queued input behind it.
    pub(super) fn run_input_order(&mut self, now: Instant) {
        loop {
            let Some(tx) = self.active.as_mut() else {
                match self.under_hold() {
                    UnderHold::Begin(next) => {
                        self.begin(next);
                        continue;
                    }
                    UnderHold::Wait => return,
                    UnderHold::Over => {}
                }
                // A person's keys keep their distance from their previous
                // keys (`pace.rs`): they wait, and so does all behind them.
                self.keys_due = match self.queued.front() {
                    None => None,
                    Some(Input::Keys { arrived, .. }) => {
                        self.key_spacing.due(*arrived).filter(|due| *due > now)
                    }
                    Some(Input::Transaction(_)) => None,
                };
                if self.keys_due.is_some() {
                    return;
                }
                let Some(next) = self.queued.pop_front() else {
                    return;
                };
                self.queued_bytes -= input_len(&next);
                self.begin(next);
                continue;
            };
            if let Some(until) = tx.wait_until {
                if now < until {
                    return;
                }
                tx.wait_until = None;
            }
            if self.child.master.is_none() {
                let Some(tx) = self.active.take() else { return };
                if !tx.withdrawal {
                    let message = format!(
                        "the terminal closed during the transaction after {} bytes",
                        tx.written
                    );
                    self.error(tx.client, ErrorKind::ChildExited, message);
                }
                continue;
            }
            match tx.steps.pop_front() {
                Some(WireStep::Paste(text)) => {
                    // As a terminal pastes: markers only for a program
                    // that asked for them, in the mode it has now (the
                    // compare just before saw every output that set it).
                    let bytes = pasted(&text, self.screen.bracketed_paste());
                    tx.steps.push_front(WireStep::Write(bytes));
                }
                Some(WireStep::Write(bytes)) => {
                    tx.written += bytes.len();
                    let delivery = tx.origin == Origin::Delivery;
                    self.commit(&bytes);
                    if !delivery {
                        self.heard_input();
                    }
                }
                Some(WireStep::WaitMs(ms)) => {
                    if !self.to_master.is_empty() {
                        // The wait starts when the earlier bytes have landed.
                        tx.steps.push_front(WireStep::WaitMs(ms));
                        return;
                    }
                    tx.wait_until = Some(now + Duration::from_millis(ms));
                }
                None => {
                    if !self.to_master.is_empty() {
                        return;
                    }
                    let Some(tx) = self.active.take() else { return };
                    let revision = self.revision;
                    let written = tx.written;
                    if tx.withdrawal {
                        self.withdrawn();
                        continue;
                    }
                    let reply = match tx.condition {
                        Some(_) => Reply::SendIf(SendIfReply::Sent { revision, written }),
                        None => Reply::Send { revision, written },
                    };
                    self.reply(tx.client, ServerLine::Reply(reply));
                    if let Some(ask) = tx.hold {
                        self.start_hold(tx.client, *ask, now);
                    }
                }
            }
        }
    }

    pub(super) fn resize(&mut self, size: Size) -> Result<(), String> {
        if size.cols == 0 || size.rows == 0 || size.cols > MAX_SIDE || size.rows > MAX_SIDE {
            return Err(format!(
                "size {}x{} is outside 1x1..{MAX_SIDE}x{MAX_SIDE}",
                size.cols, size.rows
            ));
        }
        if let Some(master) = self.child.master.as_ref() {
            child::set_size(master, size).map_err(|e| format!("{e:#}"))?;
        }
        self.size = size;
        self.screen.resize(size);
        self.bump();
        Ok(())
    }
}

/// Whether `input` is a person's (an attached client's keys, an
/// intervention), as opposed to DING's own delivery.
fn is_a_persons(input: &Input) -> bool {
    match input {
        Input::Keys { .. } => true,
        Input::Transaction(tx) => tx.origin == Origin::Intervention && tx.condition.is_none(),
    }
}
