//! The world's side of a hook call: `ding hook` starts, connects, waits
//! for its answer or its timeout, and the harness acts on what it got.

use super::*;

impl World {
    pub(super) fn call_hook(&mut self, event: &'static str, payload: Value, call: u64) {
        let timeout = self.harness.hook_timeout_ms(event);
        let peer = Peer(self.next_peer);
        self.next_peer += 1;
        let prompt = payload.get("prompt").is_some();
        let line = serde_json::json!({
            "v": 1,
            "provider": self.harness.provider(),
            "event": event,
            "payload": payload,
            "identity": {
                "session": self.identity.session,
                "incarnation": self.identity.incarnation,
                "generation": self.identity.generation,
            },
            "timeoutMs": timeout,
        })
        .to_string()
        .into_bytes();
        self.note(format!("hook {event} {peer:?}"));
        self.cost_hook_asked(event, peer);
        // The hook process starts, reads its payload, connects.
        let delay = self.rng.between(2, 15);
        if self.hostile_call(event, call, peer, (prompt, &line), delay) {
            return;
        }
        self.record_call(peer, event, call);
        self.after(
            delay,
            Due::AdapterMachine(ToMachine::HookCall { peer, line }),
        );
        self.after(timeout, Due::HookTimeout(peer));
    }

    /// The world records every hook call the harness makes, by `peer`.
    pub(super) fn record_call(&mut self, peer: Peer, event: &'static str, call: u64) {
        self.hooks.insert(
            peer,
            HookCallRecord {
                event,
                incarnation: self.incarnation,
                call,
                answers: 0,
            },
        );
    }

    pub(super) fn hook_answered(&mut self, peer: Peer, line: &str, with_receipt: bool) {
        let Some(record) = self.hooks.get_mut(&peer) else {
            return;
        };
        record.answers += 1;
        let (event, call, answers) = (record.event, record.call, record.answers);
        let of_this_harness = record.incarnation == self.incarnation && !self.hostile.gave_up(peer);
        if answers > 1 {
            return self.violate(
                Class::HookAnsweredTwice,
                format!("hook {event} ({peer:?}) answered {answers} times"),
            );
        }
        if !of_this_harness {
            // Its process died with its harness, or its harness gave up on
            // it: nobody reads the answer.
            self.note(format!("hook {event} of a harness gone answered"));
            return self.stale_hook_answered(peer);
        }
        let answer: HookAnswer = serde_json::from_str(line).expect("an answer line");
        let names = self.names_in(&format!("{}{}", answer.stdout, answer.stderr));
        self.note(format!("hook {event} answered, naming {names:?}"));
        if with_receipt {
            self.ding.for_receipt.insert(peer, names.clone());
            self.after(1, Due::AdapterMachine(ToMachine::HookReceipt { peer }));
        }
        if answer.parked == Some(ParkAnswer::Delivered) {
            self.cost_ding_acts();
        }
        let copies = self.harness.copies_reaching_model(event, &answer);
        for name in &names {
            self.hooked += usize::from(copies > 0);
            for _ in 0..copies {
                self.seen(name, Path::Hook);
            }
        }
        if answer.parked == Some(ParkAnswer::Delivered)
            && let View::Idle { composer } = self.harness.view()
            && !composer.is_empty()
        {
            self.violate(
                Class::WakeOnDraft,
                format!("the parked {event} delivered onto the draft {composer:?}"),
            );
        }
        if answer.parked == Some(ParkAnswer::Delivered)
            && let Some(dialog) = self.harness.unannounced_dialog()
        {
            // A turn started under a dialog the person is reading changes
            // what their next key does, as under a draft.
            self.violate(
                Class::Dialog,
                format!("the parked {event} delivered under the dialog {dialog}"),
            );
        }
        // A turn a parked call's delivery starts is DING's.
        self.cost.waking = answer.parked == Some(ParkAnswer::Delivered);
        self.hook_returned(peer, event, call, Some(&answer));
        self.cost.waking = false;
    }
}
