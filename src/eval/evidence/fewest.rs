//! The fewest model calls a person who knew every arrival in advance would
//! need for one trial's work, from its records and the model server's log
//! alone: the calls of the person's own work, plus the fewest calls that
//! put every message into a request inside its window
//! ([`fewest_extra_calls`], the function the simulation's cost oracle
//! runs). The careful arm's calls are judged against it (`verdict.rs`).
//!
//! * **The person's own work**: every model call of a turn whose prompt
//!   holds a line the typist (or the supervisor) typed. Those requests are
//!   made anyway; one inside a message's window carries it at no call of
//!   its own.
//! * **A message's window** opens when `ding send` returned and closes at
//!   the last moment a request could carry it: the last call of the turn
//!   it arrived in (after which only a call of its own carries it); for a
//!   dialog open at idle, a burst's gap after the person answered it;
//!   otherwise a burst's gap after it arrived ([`A_BURSTS_GAP_MS`]: a
//!   person who knew the arrivals waits that long for the rest of a
//!   burst). A line the person began typing before the window closes
//!   keeps it open until that line's request: they would have put the
//!   message into their prompt.
//! * **A startup or resume backlog** arrives before the harness can take
//!   anything; its windows close together a burst's gap after, so they
//!   cost one call per request's worth of files, whenever that call comes.

use ding::core::config::NOTICE_MAX_FILES_DEFAULT;
use serde::Serialize;

use crate::fewest_calls::{A_BURSTS_GAP_MS, Window, fewest_extra_calls};
use crate::logs::Request;

use super::records::{DialogAnswer, Records};

/// The most files one delivery names (a typed notice's default): a burst
/// larger than this needs another request, whoever makes it.
const FILES_PER_REQUEST: usize = NOTICE_MAX_FILES_DEFAULT;

/// The fewest model calls of a trial, by whose they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FewestCalls {
    /// The calls of the person's own work.
    pub own: usize,
    /// The fewest calls beyond them that carry every message.
    pub extra: usize,
}

impl FewestCalls {
    pub fn total(self) -> usize {
        self.own + self.extra
    }
}

/// One turn of the conversation, as the model server saw it.
#[derive(Debug)]
struct Turn {
    first_ms: u64,
    /// Its last call, and any slow reply streamed after it.
    ends_ms: u64,
    /// The prompt of its first call.
    prompt: String,
    /// Its prompt holds a line the person typed.
    persons: bool,
    calls: Vec<u64>,
}

/// The fewest calls for the trial that recorded `records`, whose model
/// server logged `requests`.
pub fn fewest_calls(records: &Records, requests: &[Request]) -> FewestCalls {
    let turns = turns(records, requests);
    let own: Vec<u64> = turns
        .iter()
        .filter(|turn| turn.persons)
        .flat_map(|turn| turn.calls.iter().copied())
        .collect();
    let windows: Vec<Window> = records
        .sent
        .iter()
        .map(|sent| window(sent.unix_ms, &turns, records))
        .collect();
    FewestCalls {
        own: own.len(),
        extra: fewest_extra_calls(&own, &windows, FILES_PER_REQUEST),
    }
}

/// The turns of `requests`, in order, each with whose it is.
fn turns(records: &Records, requests: &[Request]) -> Vec<Turn> {
    let lines: Vec<&str> = records
        .drafts
        .iter()
        .map(|draft| draft.text.trim())
        .chain(records.interventions.iter().map(|i| i.text.trim()))
        .filter(|line| !line.is_empty())
        .collect();
    let mut turns: Vec<(u64, Turn)> = Vec::new();
    for request in requests.iter().filter(|r| r.is_turn_call()) {
        let ends_ms = request.t + request.reply.seconds.unwrap_or(0) * 1_000;
        match turns.last_mut() {
            Some((number, turn)) if *number == request.turn => {
                turn.ends_ms = turn.ends_ms.max(ends_ms);
                turn.calls.push(request.t);
            }
            _ => {
                let prompt = request.prompt.as_deref().unwrap_or_default();
                turns.push((
                    request.turn,
                    Turn {
                        first_ms: request.t,
                        ends_ms,
                        persons: lines.iter().any(|line| prompt.contains(line)),
                        prompt: prompt.to_string(),
                        calls: vec![request.t],
                    },
                ));
            }
        }
    }
    turns.into_iter().map(|(_, turn)| turn).collect()
}

/// The window of a message that arrived at `sent_ms`.
fn window(sent_ms: u64, turns: &[Turn], records: &Records) -> Window {
    let running = turns
        .iter()
        .find(|turn| turn.first_ms < sent_ms && sent_ms <= turn.ends_ms);
    let dialog_answered = records.dialogs.iter().find_map(|dialog| {
        let answered_ms = match dialog.answer {
            DialogAnswer::Open { at_ms, .. } | DialogAnswer::Closed { at_ms } => at_ms,
            DialogAnswer::NeverOpened => return None,
        };
        let opened_ms = dialog.opened_ms?;
        (opened_ms <= sent_ms && sent_ms < answered_ms).then_some(answered_ms)
    });
    let mut closes_ms = match (running, dialog_answered) {
        (Some(turn), _) => turn.ends_ms,
        (None, Some(answered_ms)) => answered_ms + A_BURSTS_GAP_MS,
        (None, None) => sent_ms + A_BURSTS_GAP_MS,
    };
    let closes_unless_typed = closes_ms;
    let typed_before_the_close = records
        .drafts
        .iter()
        .filter(|draft| draft.first_key_ms < closes_unless_typed && draft.entered_ms >= sent_ms);
    for draft in typed_before_the_close {
        let line = draft.text.trim();
        let its_request = turns
            .iter()
            .find(|turn| turn.first_ms >= draft.entered_ms && turn.prompt.contains(line));
        if let Some(at) = its_request.map(|turn| turn.first_ms) {
            closes_ms = closes_ms.max(at);
        }
    }
    Window {
        opens_ms: sent_ms,
        closes_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{DialogSeen, Draft, Sent};
    use crate::logs::Reply;

    /// A model call of `turn` at `t`, its prompt `prompt`, streamed for
    /// `seconds` if slow.
    fn call(t: u64, turn: u64, prompt: &str, seconds: Option<u64>) -> Request {
        Request {
            t,
            seq: t,
            class: "prompt".into(),
            turn,
            call_in_turn: Some(1),
            prompt: Some(prompt.into()),
            texts: Vec::new(),
            reply: Reply {
                kind: if seconds.is_some() { "slow" } else { "text" }.into(),
                seconds,
            },
        }
    }

    /// A tool result's call in `turn` at `t`.
    fn tool_result(t: u64, turn: u64) -> Request {
        Request {
            class: "tool-result".into(),
            prompt: None,
            call_in_turn: Some(2),
            ..call(t, turn, "", None)
        }
    }

    fn sent(at: &[u64]) -> Vec<Sent> {
        at.iter()
            .enumerate()
            .map(|(n, &unix_ms)| Sent {
                name: format!("m{n}.md"),
                unix_ms,
            })
            .collect()
    }

    fn draft(text: &str, first_key_ms: u64, entered_ms: u64) -> Draft {
        Draft {
            text: text.into(),
            first_key_ms,
            entered_ms,
        }
    }

    fn fewest(records: &Records, requests: &[Request]) -> (usize, usize) {
        let calls = fewest_calls(records, requests);
        (calls.own, calls.extra)
    }

    #[test]
    fn a_lone_message_at_idle_needs_one_call() {
        let records = Records {
            sent: sent(&[10_000]),
            ..Records::default()
        };
        assert_eq!(fewest(&records, &[]), (0, 1));
    }

    #[test]
    fn a_burst_within_a_second_needs_one_call_and_messages_apart_one_each() {
        let burst = Records {
            sent: sent(&[10_000, 10_300, 10_650, 10_900, 10_999]),
            ..Records::default()
        };
        assert_eq!(fewest(&burst, &[]), (0, 1));
        let two = Records {
            sent: sent(&[10_000, 10_950]),
            ..Records::default()
        };
        assert_eq!(fewest(&two, &[]), (0, 1));
        let apart = Records {
            sent: sent(&[10_000, 12_000]),
            ..Records::default()
        };
        assert_eq!(fewest(&apart, &[]), (0, 2));
    }

    #[test]
    fn a_startup_backlog_needs_one_call_per_requests_worth_of_files() {
        let backlog = Records {
            sent: sent(&[1_000, 1_010, 1_020]),
            ..Records::default()
        };
        assert_eq!(fewest(&backlog, &[]), (0, 1));
        let many: Vec<u64> = (0..FILES_PER_REQUEST as u64 + 1)
            .map(|n| 1_000 + n)
            .collect();
        let large = Records {
            sent: sent(&many),
            ..Records::default()
        };
        assert_eq!(fewest(&large, &[]), (0, 2));
    }

    #[test]
    fn a_message_during_the_persons_turn_rides_a_later_call_of_it_or_costs_one_at_its_end() {
        let person = "run the tests";
        let records = Records {
            sent: sent(&[6_000]),
            drafts: vec![draft(person, 4_000, 5_000)],
            ..Records::default()
        };
        // A tool result after the arrival carries it.
        let with_a_tool = [call(5_100, 1, person, None), tool_result(8_000, 1)];
        assert_eq!(fewest(&records, &with_a_tool), (2, 0));
        // A slow reply still streaming when it arrives: only a call at the
        // turn's end (or of its own) carries it.
        let slow = [call(5_100, 1, person, Some(3))];
        assert_eq!(fewest(&records, &slow), (1, 1));
    }

    #[test]
    fn a_message_while_the_person_types_rides_their_prompt() {
        let person = "a long question";
        let records = Records {
            sent: sent(&[10_000]),
            drafts: vec![draft(person, 9_000, 14_000)],
            ..Records::default()
        };
        assert_eq!(fewest(&records, &[call(14_050, 1, person, None)]), (1, 0));
        // Typing begun within a burst's gap after the arrival counts too;
        // begun later, the message was due before.
        let later = Records {
            drafts: vec![draft(person, 10_500, 14_000)],
            ..records.clone()
        };
        assert_eq!(fewest(&later, &[call(14_050, 1, person, None)]), (1, 0));
        let much_later = Records {
            drafts: vec![draft(person, 12_000, 14_000)],
            ..records
        };
        assert_eq!(
            fewest(&much_later, &[call(14_050, 1, person, None)]),
            (1, 1)
        );
    }

    #[test]
    fn a_message_while_a_dialog_is_open_at_idle_waits_for_the_answer() {
        let dialog = |opened_ms: u64, at_ms: u64| DialogSeen {
            kind: "picker".into(),
            consent: true,
            opened_ms: Some(opened_ms),
            selected_at_open: Some(1),
            answer: DialogAnswer::Open {
                selected: Some(1),
                at_ms,
            },
            marker_exists: false,
        };
        // Two messages while it is open, the second long after the first:
        // one call after the answer carries both.
        let records = Records {
            sent: sent(&[10_000, 13_000]),
            dialogs: vec![dialog(9_000, 14_000)],
            ..Records::default()
        };
        assert_eq!(fewest(&records, &[]), (0, 1));
        // And the person's prompt soon after the answer carries them.
        let person = "thanks";
        let answered_then_typed = Records {
            drafts: vec![draft(person, 14_200, 15_500)],
            ..records
        };
        assert_eq!(
            fewest(&answered_then_typed, &[call(15_600, 1, person, None)]),
            (1, 0)
        );
    }

    #[test]
    fn a_turn_dings_own_delivery_started_is_not_the_persons() {
        let records = Records {
            sent: sent(&[10_000]),
            drafts: vec![draft("earlier", 1_000, 2_000)],
            ..Records::default()
        };
        let requests = [
            call(2_100, 1, "earlier", None),
            call(10_400, 2, "[ding] 1 unread inbox message: m0.md", None),
        ];
        assert_eq!(fewest(&records, &requests), (1, 1));
    }
}
