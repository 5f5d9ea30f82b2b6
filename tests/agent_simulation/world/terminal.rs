//! The world's side of the terminal: DING's send-if through the PTY
//! host's input order, the bytes reaching the harness after their lag,
//! and what the harness did with them.

use super::*;

impl World {
    pub(super) fn send_if(&mut self, send: SendIf) {
        if self.harness.has_native_idle_path() {
            // Asked at all, whether or not a fence then refuses it: the
            // native path leaves DING nothing to type.
            self.violate(
                Class::TypedOnNativePath,
                format!(
                    "DING asked to type {:?} with a native idle path",
                    send.messages
                ),
            );
        }
        self.ding_asks(&send);
        if self.asked.is_some() {
            panic!("a second transaction while one is unanswered: {send:?}");
        }
        // As the sidecar asks `ding pty` (`PtyLink::send_if`).
        let (quiet_input_ms, settled_output_ms) = send.fence.as_millis();
        let hold = HoldAsk::new(
            send.hold_input
                .map(|hold| u64::try_from(hold.as_millis()).unwrap_or(u64::MAX)),
            send.withdraw.as_ref().map(wire_steps),
        )
        .expect("the engine asks for a hold the host grants");
        let transaction = PtyTransaction {
            client: self.ding.client,
            condition: Some(Condition {
                session: send.identity.session.clone(),
                incarnation: send.identity.incarnation.clone(),
                generation: send.identity.generation.clone(),
                expected_revision: send.expected_revision,
                quiet_input_ms: Some(quiet_input_ms),
                settled_output_ms: Some(settled_output_ms),
            }),
            origin: Origin::Delivery,
            steps: wire_steps(&send.transport),
            hold,
        };
        self.asked = Some(Asked {
            request: send.request,
            expected_revision: send.expected_revision,
            messages: send.messages,
            steps: send.transport.steps,
        });
        self.drive_order(Some(ToOrder::Transaction(transaction)));
    }

    /// Gives the PTY host's input order `input` (if any) now and carries
    /// out what it asks, as `ding pty` does (`Host::drive`): the simulated
    /// terminal takes every byte at once (the harness's lag is in its
    /// reading), and every output chunk was told as it was drawn. Replies
    /// that the engine takes at once are given to it after the drain.
    pub(super) fn drive_order(&mut self, input: Option<ToOrder>) {
        let now = Time::from_millis(self.now);
        if let Some(input) = input {
            self.order.handle_input(input, now);
        }
        let mut to_engine = Vec::new();
        loop {
            while let Some(output) = self.order.poll_output() {
                match output {
                    FromOrder::Write { bytes, by } => {
                        if by == Writer::Ding {
                            self.ding_writes();
                        }
                        self.write(bytes, by)
                    }
                    FromOrder::ReadOutput => self.order.handle_input(ToOrder::OutputRead, now),
                    FromOrder::Reply { client, .. } if self.reply_lost(client) => {}
                    FromOrder::Reply { line, .. } => {
                        to_engine.extend(self.pty_replied(line));
                    }
                    FromOrder::Withdrawn { revision } => {
                        let withdrawn = ToEngine::PtyWithdrawn { actual: revision };
                        self.after(1, Due::Engine(withdrawn));
                    }
                    FromOrder::Log(record) => self.pty_logged(record),
                }
            }
            if self.order.landed() {
                break;
            }
            self.order.handle_input(ToOrder::Landed, now);
        }
        for input in to_engine {
            self.engine.handle_input(input, now);
            self.carry_out_engine();
        }
    }

    /// The host's answer to DING's send-if, as the sidecar hands it to the
    /// engine (`PtyLink::on_reply`): refusals at once, the rest after a
    /// moment.
    pub(super) fn pty_replied(&mut self, line: ServerLine) -> Option<ToEngine> {
        let ServerLine::Reply(Reply::SendIf(reply)) = line else {
            panic!("the PTY host answered DING's send-if with {line:?}");
        };
        let asked = self.asked.take().expect("a send-if awaits its answer");
        let request = asked.request;
        match reply {
            SendIfReply::Sent { revision, .. } => {
                let names = asked.messages.iter().map(|name| name.as_str().to_string());
                self.ding.written = Some((request, names.collect()));
                self.after(1, Due::Engine(ToEngine::PtySent { request, revision }));
                None
            }
            SendIfReply::Interrupted { revision, written } => {
                self.note(format!(
                    "send-if {request} interrupted after {written} bytes"
                ));
                // The notice now sits unsent in the composer, the person's
                // key after it: what becomes of its files follows from this
                // race.
                self.raced.extend(self.typing.iter().cloned());
                let interrupted = ToEngine::PtyInterrupted {
                    request,
                    written,
                    actual: revision,
                };
                self.after(1, Due::Engine(interrupted));
                None
            }
            SendIfReply::Conflict { revision } => {
                self.note(format!(
                    "send-if {request} refused: revision {revision} expected {}",
                    asked.expected_revision
                ));
                Some(ToEngine::PtyConflict {
                    request,
                    actual: revision,
                })
            }
            SendIfReply::Mismatch { part, revision } => {
                self.note(format!("send-if {request} refused: {part} mismatch"));
                // The sidecar asks for the host's status on a mismatch.
                let status = ToEngine::PtyStatus {
                    identity: self.identity.clone(),
                    revision,
                };
                self.after(1, Due::Engine(status));
                Some(ToEngine::PtyMismatch {
                    request,
                    part,
                    actual: revision,
                })
            }
            SendIfReply::Unsettled {
                part,
                quiet_for_ms,
                retry_in_ms,
                revision,
            } => {
                let unsettled = ToEngine::PtyUnsettled {
                    request,
                    part,
                    quiet_for: Duration::from_millis(quiet_for_ms),
                    retry_in: Duration::from_millis(retry_in_ms),
                    actual: revision,
                };
                self.note(format!("send-if {request} refused: {unsettled:?}"));
                Some(unsettled)
            }
            SendIfReply::Exited { .. } => panic!("the simulated harness never stays exited"),
        }
    }

    /// What the host logs, the world notes; and it follows DING's typing
    /// from the moment a send-if passed its compare.
    pub(super) fn pty_logged(&mut self, record: Record) {
        match record {
            Record::Began {
                op: "send-if",
                revision,
                client,
                ..
            } => {
                self.ding_begins(client);
                let Some(asked) = self.asked_by(client) else {
                    return;
                };
                let (request, messages) = (asked.request, asked.messages.clone());
                // The Return of a typed notice acts on the notice the paste
                // typed: a race with it is timed from that paste.
                let steps = asked.steps.as_slice();
                let is_return = matches!(steps, [Step::Write(bytes)] if bytes == RETURN);
                self.awaiting_return = !steps
                    .iter()
                    .any(|step| matches!(step, Step::Write(bytes) if bytes == RETURN));
                self.note(format!(
                    "send-if {request} at revision {revision} for {messages:?}"
                ));
                if !is_return {
                    self.paste_read = false;
                    self.paste_drawn = false;
                    self.typed_at_ms = Some(self.now);
                    self.typing = messages
                        .iter()
                        .map(|name| name.as_str().to_string())
                        .collect();
                }
            }
            Record::Began { client, .. } => self.ding_begins(client),
            Record::Held { .. } => self.note("the host holds the key behind DING's paste".into()),
            Record::Withdrawing { why, .. } => {
                // The notice is out of the composer: a key after it no
                // longer joins it.
                self.note(format!("the host takes DING's paste back out: {why}"));
                self.awaiting_return = false;
            }
            Record::Withdrawn { .. } | Record::Interrupted { .. } => {}
            Record::Released { held, why, .. } => {
                if held > 0 {
                    self.note(format!("the host lets {held} held keys go on: {why}"));
                }
            }
        }
    }

    /// Bytes written to the terminal reach the harness after its lag, in
    /// order.
    pub(super) fn write(&mut self, bytes: Vec<u8>, writer: Writer) {
        if writer == Writer::Person {
            self.persons_key_written(&bytes);
        } else {
            self.cost_ding_acts();
        }
        let lag = self.rng.between(0, self.scenario.lag_max_ms);
        let mut lands = (self.now + lag).max(self.input_lands_at);
        if let Some((from, long)) = self.scenario.stall
            && (from..from + long).contains(&lands)
        {
            lands = from + long;
        }
        self.input_lands_at = lands;
        // The host committed the bytes now: the revision moved, and a
        // person's input was timed (DING's own is not).
        if self.watching {
            self.after(1, Due::AdapterMachine(ToMachine::PtyMoved));
        }
        if writer == Writer::Person {
            self.person_key_lands_ms = Some(lands);
        }
        self.at(lands, Due::HarnessReads(bytes, writer, self.incarnation));
    }

    /// Whether the person's last key reaches the harness at or after DING's
    /// act at `acted`.
    pub(super) fn key_lands_after(&self, acted: Option<u64>) -> bool {
        match (self.person_key_lands_ms, acted) {
            (Some(lands), Some(acted)) => lands >= acted,
            _ => false,
        }
    }

    pub(super) fn harness_reads(&mut self, bytes: &[u8], writer: Writer) {
        if writer == Writer::Ding && bytes == RETURN && self.harness.view() == View::Dialog {
            // A dialog opened between DING's paste and its Return.
            self.violate(Class::Dialog, "DING's Return reached an open dialog".into());
        }
        if writer == Writer::Ding
            && bytes == RETURN
            && let View::Idle { composer } = self.harness.view()
            && let Some(notice) = self.pasted.last()
        {
            // The Return submits what the composer holds: DING's notice,
            // exactly, or it is not DING's to send.
            let visible = |text: &str| -> String { text.split_whitespace().collect() };
            if visible(&composer) != visible(notice) {
                self.violate(
                    Class::Draft,
                    format!("DING's Return reached a composer that does not hold its notice alone: {composer:?}"),
                );
            }
        }
        let pasted = (writer == Writer::Ding)
            .then(|| bytes.strip_prefix(PASTE_START)?.strip_suffix(PASTE_END))
            .flatten();
        if let Some(text) = pasted {
            let text = String::from_utf8_lossy(text).into_owned();
            match self.harness.view() {
                View::Busy { .. } => {
                    self.violate(Class::Busy, "DING's notice reached a running turn".into())
                }
                View::Dialog => {
                    self.violate(Class::Dialog, "DING's notice reached an open dialog".into())
                }
                View::Idle { composer } if !composer.is_empty() => {
                    self.glued.push(text.clone());
                    self.violate(
                        Class::Draft,
                        format!("DING's notice joined the draft {composer:?}"),
                    )
                }
                View::Idle { .. } => {}
            }
            self.pasted.push(text);
            self.paste_read = true;
        }
        let happened = self.harness.read_input(bytes, self.now);
        self.harness_did(happened);
    }

    pub(super) fn harness_did(&mut self, happened: Vec<Happened>) {
        for happening in happened {
            match happening {
                Happened::Drew => {
                    self.paste_drawn |= self.paste_read;
                    self.drive_order(Some(ToOrder::Output {
                        bracketed_paste: true,
                    }));
                    let dialog = self.harness.view() == View::Dialog;
                    self.dialog_since_ms = match self.dialog_since_ms {
                        Some(since) if dialog => Some(since),
                        _ if dialog => Some(self.now),
                        _ => None,
                    };
                    if self.watching {
                        self.after(1, Due::AdapterMachine(ToMachine::PtyMoved));
                    }
                    let status = ToEngine::PtyStatus {
                        identity: self.identity.clone(),
                        revision: self.order.revision(),
                    };
                    self.after(1, Due::Engine(status));
                }
                Happened::Submitted(text) => self.submitted(&text),
                Happened::Hook {
                    event,
                    payload,
                    call,
                } => self.call_hook(event, payload, call),
                Happened::Request(call) => self.cost_request(call),
                Happened::QueuedTurn(text) => {
                    self.cost_queued();
                    self.note(format!("a queued turn starts on {:?}", clip(&text)));
                    for name in self.names_in(&text) {
                        self.hooked += 1;
                        self.seen(&name, Path::Queued);
                    }
                }
                Happened::ContextReaches(text) => {
                    self.note(format!("the context reaches the model: {:?}", clip(&text)));
                    for name in self.names_in(&text) {
                        self.hooked += 1;
                        self.seen(&name, Path::HooksContext);
                    }
                }
                Happened::TurnEnded => {
                    self.note("a turn ends".into());
                    self.archive_seen();
                }
                Happened::ContextCleared => {
                    self.note("the context begins again empty".into());
                    self.forget_context();
                }
                Happened::PasteChanged(text) => {
                    self.note(format!("DING's paste arrived changed: {:?}", clip(&text)));
                    self.changed_pastes.push(text);
                }
                Happened::ContextCompacted => {
                    self.note("the context is compacted: its prompts stay".into());
                    self.compact_context();
                }
            }
        }
    }

    pub(super) fn submitted(&mut self, text: &str) {
        // The composer is empty again: a key from now on joins no notice.
        self.awaiting_return = false;
        self.cost_prompt(text);
        let names = self.names_in(text);
        let dings = text.contains("[ding]");
        self.note(format!("submitted {:?}", clip(text)));
        let reported = self.glued.iter().any(|glued| text.contains(glued.as_str()));
        let mut as_pasted = self.pasted.iter().chain(&self.changed_pastes);
        if dings && !reported && !as_pasted.any(|pasted| pasted == text) {
            self.violate(
                Class::Draft,
                format!("a prompt joined a person's text and DING's notice: {text:?}"),
            );
        }
        if dings {
            for name in names {
                self.typed += 1;
                self.seen(&name, Path::Typed);
            }
        }
    }
}
