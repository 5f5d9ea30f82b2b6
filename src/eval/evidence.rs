//! The metrics of one trial, computed from evidence only: the model
//! server's request log, the PTY host's input log, the inbox's `archive/`,
//! the marker files, and what the typist itself did and saw. Never from
//! DING's status or its logs of its own decisions.
//!
//! Pure: the trial gathers the records, this turns them into facts.
//!
//! * **delivered**: a model call of a turn carries the exact filename, or
//!   the agent archived the file, no later than the deadline; latency is
//!   from the end of `ding send` to the first such call. Otherwise lost.
//! * **draft corrupted**: no `user` text the model saw is exactly what the
//!   typist typed (trimmed). *Altered* when a `user` text (not harness
//!   context, not another line it typed) begins as it begins, is its end,
//!   or holds it glued to something; *never reached* otherwise. A harness
//!   command the typist typed (compact, clear) is corrupted when the log
//!   shows it did not take effect.
//! * **dialog answered by DING**: the typist found the dialog closed when
//!   it came to answer (no one else writes to the terminal), or found
//!   another option selected than the default it left, or the gated
//!   side effect (the marker file) exists although the typist declined.
//! * **model calls**: every model call of a turn; titles, compactions and
//!   other requests apart. *Delivery calls* are the calls of turns that a
//!   delivery started: the turn's first call is a prompt whose typed words
//!   carry a filename (a notice submitted as the prompt), or a prompt with
//!   no typed words at all that is the first to carry one (a wake-up).
//! * **DING's PTY bytes**: the bytes of the PTY host's `delivery` records.
//! * **duplicates**: a file carried by more than one message or content
//!   block of the same request: injected twice into one conversation (the
//!   same block repeated by every later request of the history counts
//!   once).

use serde::Serialize;

use super::logs::{PtyInput, Request};
use super::model_server::is_harness_context;
use super::script::COMPACTION_SUMMARY;

/// One `ding send` that printed its filename.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sent {
    pub name: String,
    /// When `ding send` returned, unix milliseconds.
    pub unix_ms: u64,
}

/// A line the typist typed and submitted with Return.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Draft {
    pub text: String,
    pub first_key_ms: u64,
    pub entered_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandKind {
    Compact,
    Clear,
}

/// A harness command the typist typed (compact, clear).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Command {
    pub kind: CommandKind,
    pub text: String,
    pub first_key_ms: u64,
    /// When the typist pressed Return on it: the command can only take
    /// effect from then on (a turn that runs while it is being typed still
    /// belongs to the conversation before it).
    pub entered_ms: u64,
    /// For a clear: a prompt of the conversation before it, which no model
    /// call after a clear that took effect may carry.
    pub before: Option<String>,
}

/// What the typist found when it came to answer an open dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "found")]
pub enum DialogAnswer {
    /// The dialog was still open, with this option selected; the typist
    /// answered it.
    Open { selected: Option<u32>, at_ms: u64 },
    /// The dialog was gone before the typist pressed anything.
    Closed { at_ms: u64 },
    /// The dialog never opened.
    NeverOpened,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogSeen {
    /// Which kind of dialog (`pane::DialogKind`, or the harness's
    /// own startup dialog).
    pub kind: String,
    /// Whether the typist meant to answer yes.
    pub consent: bool,
    pub opened_ms: Option<u64>,
    /// The option selected when the typist first saw the dialog open: the
    /// one it means by yes (a picker opens on the current choice, not
    /// always the first).
    pub selected_at_open: Option<u32>,
    pub answer: DialogAnswer,
    /// Whether the gated side effect happened (checked at the end).
    pub marker_exists: bool,
}

/// A `ding intervene` the supervisor ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Intervention {
    pub text: String,
    pub unix_ms: u64,
}

/// Everything a trial recorded, the raw material of its metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Records {
    pub sent: Vec<Sent>,
    pub drafts: Vec<Draft>,
    pub commands: Vec<Command>,
    pub dialogs: Vec<DialogSeen>,
    pub interventions: Vec<Intervention>,
    /// Keystrokes the typist typed.
    pub typist_keys: usize,
    /// Files in the inbox's `archive/` at the end, with when they got there.
    pub archived: Vec<(String, u64)>,
    /// A message reaching the model later than this (unix ms) is lost;
    /// `None` when the workload stopped before it set one (then whatever
    /// reached the model counts).
    pub deadline_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageFact {
    pub name: String,
    pub sent_ms: u64,
    pub delivered: bool,
    pub latency_ms: Option<u64>,
    /// The first model call that carried it, if any (even a late one).
    pub first_seq: Option<u64>,
    /// It reached the model, but only after the deadline.
    pub late: bool,
    pub archived: bool,
    /// The most message or content blocks carrying it in one request.
    pub injections: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DraftOutcome {
    Exact,
    Altered,
    NeverReached,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftFact {
    pub text: String,
    pub outcome: DraftOutcome,
    pub corrupted: bool,
    /// The `user` texts that held a piece of it (its start, its end, or
    /// all of it glued to something), when altered.
    pub pieces: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogFact {
    pub kind: String,
    pub consent: bool,
    pub answered_by_ding: bool,
    pub why: Option<String>,
    pub marker_exists: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandFact {
    pub text: String,
    /// `None` when the log cannot tell (no request after it).
    pub took_effect: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InterventionFact {
    pub text: String,
    pub reached_exactly: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Calls {
    pub turn_calls: usize,
    pub titles: usize,
    pub compactions: usize,
    /// Token counts, side requests, unknown paths.
    pub other: usize,
    pub delivery_calls: usize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PtyBytes {
    pub delivery_writes: usize,
    pub delivery_bytes: u64,
    pub intervention_writes: usize,
    pub intervention_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub messages: Vec<MessageFact>,
    pub drafts: Vec<DraftFact>,
    pub dialogs: Vec<DialogFact>,
    pub commands: Vec<CommandFact>,
    pub interventions: Vec<InterventionFact>,
    pub calls: Calls,
    pub pty: PtyBytes,
    pub delivered: usize,
    pub lost: usize,
    pub duplicates: usize,
    /// Lines and harness commands the typist typed and submitted.
    pub typed: usize,
    /// Those that reached the model otherwise than typed, or never; and
    /// commands that did not take effect.
    pub drafts_corrupted: usize,
    pub dialogs_answered_by_ding: usize,
}

/// The metrics of one trial.
pub fn metrics(records: &Records, requests: &[Request], pty: &[PtyInput]) -> Metrics {
    let turn_calls: Vec<&Request> = requests.iter().filter(|r| r.is_turn_call()).collect();
    let messages: Vec<MessageFact> = records
        .sent
        .iter()
        .map(|sent| message_fact(sent, records, &turn_calls))
        .collect();
    let typed_lines: Vec<&str> = records.drafts.iter().map(|d| d.text.as_str()).collect();
    let drafts: Vec<DraftFact> = records
        .drafts
        .iter()
        .map(|draft| draft_fact(&draft.text, &typed_lines, &turn_calls))
        .collect();
    let dialogs: Vec<DialogFact> = records.dialogs.iter().map(dialog_fact).collect();
    let commands: Vec<CommandFact> = records
        .commands
        .iter()
        .map(|command| command_fact(command, &records.drafts, requests))
        .collect();
    let interventions = records
        .interventions
        .iter()
        .map(|intervention| InterventionFact {
            text: intervention.text.clone(),
            reached_exactly: reached_exactly(&intervention.text, &turn_calls),
        })
        .collect();
    Metrics {
        delivered: messages.iter().filter(|m| m.delivered).count(),
        lost: messages.iter().filter(|m| !m.delivered).count(),
        duplicates: messages.iter().filter(|m| m.injections > 1).count(),
        typed: drafts.len() + commands.len(),
        drafts_corrupted: drafts.iter().filter(|d| d.corrupted).count()
            + commands
                .iter()
                .filter(|c| c.took_effect == Some(false))
                .count(),
        dialogs_answered_by_ding: dialogs.iter().filter(|d| d.answered_by_ding).count(),
        calls: calls(requests, &records.sent),
        pty: pty_bytes(pty),
        messages,
        drafts,
        dialogs,
        commands,
        interventions,
    }
}

fn message_fact(sent: &Sent, records: &Records, turn_calls: &[&Request]) -> MessageFact {
    let first = turn_calls.iter().find(|r| r.carries(&sent.name));
    let archived_ms = records
        .archived
        .iter()
        .find(|(name, _)| *name == sent.name)
        .map(|(_, at)| *at);
    let reached_ms = match (first.map(|r| r.t), archived_ms) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let delivered =
        reached_ms.is_some_and(|at| records.deadline_ms.is_none_or(|deadline| at <= deadline));
    MessageFact {
        name: sent.name.clone(),
        sent_ms: sent.unix_ms,
        delivered,
        latency_ms: reached_ms
            .filter(|_| delivered)
            .map(|at| at.saturating_sub(sent.unix_ms)),
        first_seq: first.map(|r| r.seq),
        late: reached_ms.is_some() && !delivered,
        archived: archived_ms.is_some(),
        injections: turn_calls
            .iter()
            .map(|r| r.blocks_carrying(&sent.name))
            .max()
            .unwrap_or(0),
    }
}

/// Where a line the typist submitted went when it did not reach the model
/// as typed: the `user` texts (not harness context, not another line the
/// typist typed) that begin as it begins (its first characters glued to
/// something), are its end (the rest, submitted on its own), or hold all
/// of it glued to something.
fn draft_fact(text: &str, typed_lines: &[&str], turn_calls: &[&Request]) -> DraftFact {
    let typed = text.trim();
    if reached_exactly(typed, turn_calls) {
        return DraftFact {
            text: text.to_string(),
            outcome: DraftOutcome::Exact,
            corrupted: false,
            pieces: Vec::new(),
        };
    }
    let first = typed.chars().next();
    let mut pieces: Vec<String> = Vec::new();
    for user in turn_calls.iter().flat_map(|r| r.user_texts()) {
        if user.is_empty()
            || is_harness_context(user)
            || typed_lines.iter().any(|line| line.trim() == user)
        {
            continue;
        }
        let piece = user.chars().next() == first || typed.ends_with(user) || user.contains(typed);
        if piece && !pieces.iter().any(|p| p == user) {
            pieces.push(user.to_string());
        }
    }
    DraftFact {
        text: text.to_string(),
        outcome: if pieces.is_empty() {
            DraftOutcome::NeverReached
        } else {
            DraftOutcome::Altered
        },
        corrupted: true,
        pieces,
    }
}

fn reached_exactly(text: &str, turn_calls: &[&Request]) -> bool {
    let text = text.trim();
    turn_calls
        .iter()
        .any(|r| r.user_texts().any(|user| user == text))
}

fn option(selected: Option<u32>) -> String {
    selected.map_or_else(|| "no option".into(), |n| format!("option {n}"))
}

fn dialog_fact(seen: &DialogSeen) -> DialogFact {
    let why = match seen.answer {
        DialogAnswer::Closed { .. } => {
            Some("the dialog was gone before the typist answered".to_string())
        }
        DialogAnswer::Open { selected, .. } if selected != seen.selected_at_open => Some(format!(
            "{} was selected when the typist came to answer, {} when it opened",
            option(selected),
            option(seen.selected_at_open)
        )),
        _ if seen.marker_exists && !seen.consent => {
            Some("the gated action ran although the typist declined".to_string())
        }
        _ => None,
    };
    DialogFact {
        kind: seen.kind.clone(),
        consent: seen.consent,
        answered_by_ding: why.is_some(),
        why,
        marker_exists: seen.marker_exists,
    }
}

fn command_fact(command: &Command, drafts: &[Draft], requests: &[Request]) -> CommandFact {
    let after: Vec<&Request> = requests
        .iter()
        .filter(|r| r.t >= command.entered_ms)
        .collect();
    let took_effect = match (command.kind, &command.before) {
        (CommandKind::Compact, _) => compacted(&after),
        (CommandKind::Clear, None) => None,
        (CommandKind::Clear, Some(before)) => {
            // The typist's next prompt shows it best: the model call it
            // starts holds the conversation the harness went on with. (A
            // turn someone else started around the Return may still be the
            // old conversation, run before the clear was applied.)
            let next_prompt = drafts
                .iter()
                .filter(|draft| draft.first_key_ms >= command.entered_ms)
                .min_by_key(|draft| draft.first_key_ms)
                .and_then(|draft| {
                    after.iter().find(|r| {
                        r.is_turn_call()
                            && r.prompt.as_deref().map(str::trim) == Some(draft.text.trim())
                    })
                });
            match next_prompt {
                Some(call) => Some(!call.carries(before.trim())),
                None => {
                    let calls: Vec<&&Request> = after.iter().filter(|r| r.is_turn_call()).collect();
                    (!calls.is_empty()).then(|| calls.iter().all(|r| !r.carries(before.trim())))
                }
            }
        }
    };
    CommandFact {
        text: command.text.clone(),
        took_effect,
    }
}

/// Whether a `/compact` took effect, from the requests after its Return:
/// a compaction request alone says it was asked for, not that the harness
/// went on with the compacted conversation; the next model call of a turn
/// after it carries the summary the model server gave when it did. No
/// compaction request: it did not; no turn call after one: the log cannot
/// tell.
fn compacted(after: &[&Request]) -> Option<bool> {
    let Some(at) = after.iter().position(|r| r.class == "compaction") else {
        return Some(false);
    };
    after[at + 1..]
        .iter()
        .find(|r| r.is_turn_call())
        .map(|next| next.carries(COMPACTION_SUMMARY))
}

fn calls(requests: &[Request], sent: &[Sent]) -> Calls {
    let mut calls = Calls::default();
    let mut carried: Vec<&str> = Vec::new();
    let mut delivery_turns: Vec<u64> = Vec::new();
    for request in requests {
        match request.class.as_str() {
            _ if request.is_turn_call() => calls.turn_calls += 1,
            "title" => calls.titles += 1,
            "compaction" => calls.compactions += 1,
            _ => calls.other += 1,
        }
        if !request.is_turn_call() {
            continue;
        }
        let names: Vec<&str> = sent
            .iter()
            .map(|s| s.name.as_str())
            .filter(|name| request.carries(name))
            .collect();
        let starts_turn = request.call_in_turn == Some(1) && request.class == "prompt";
        let rang = match &request.prompt {
            Some(prompt) => names.iter().any(|name| prompt.contains(name)),
            None => names.iter().any(|name| !carried.contains(name)),
        };
        if starts_turn && rang {
            delivery_turns.push(request.turn);
        }
        for name in names {
            if !carried.contains(&name) {
                carried.push(name);
            }
        }
    }
    calls.delivery_calls = requests
        .iter()
        .filter(|r| r.is_turn_call() && delivery_turns.contains(&r.turn))
        .count();
    calls
}

fn pty_bytes(inputs: &[PtyInput]) -> PtyBytes {
    let mut bytes = PtyBytes::default();
    for input in inputs {
        if input.event == "delivery" {
            bytes.delivery_writes += 1;
            bytes.delivery_bytes += input.bytes;
        } else {
            bytes.intervention_writes += 1;
            bytes.intervention_bytes += input.bytes;
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::Text;

    fn request(
        seq: u64,
        class: &str,
        turn: u64,
        call: Option<u64>,
        texts: &[(&str, &str)],
    ) -> Request {
        let prompt = texts
            .iter()
            .rev()
            .find(|(role, _)| *role == "user")
            .map(|(_, text)| text.to_string())
            .filter(|_| call.is_some() && class == "prompt");
        Request {
            t: 1000 + seq * 100,
            seq,
            class: class.into(),
            turn,
            call_in_turn: call,
            prompt,
            texts: texts
                .iter()
                .map(|(role, text)| Text {
                    role: role.to_string(),
                    text: text.to_string(),
                })
                .collect(),
            reply: "text".into(),
        }
    }

    fn sent(name: &str, at: u64) -> Sent {
        Sent {
            name: name.into(),
            unix_ms: at,
        }
    }

    const NOTICE_A: &str = "[ding] 1 unread inbox message in /i/new: a.md. Read each file";

    #[test]
    fn a_file_is_delivered_by_the_first_model_call_that_carries_it_within_the_deadline() {
        let requests = [
            request(1, "prompt", 1, Some(1), &[("user", "hello")]),
            request(2, "title", 1, None, &[("user", NOTICE_A)]),
            request(
                3,
                "prompt",
                2,
                Some(1),
                &[("user", "hello"), ("user", NOTICE_A)],
            ),
        ];
        let records = Records {
            sent: vec![sent("a.md", 1150), sent("b.md", 1150)],
            deadline_ms: Some(2000),
            ..Records::default()
        };
        let m = metrics(&records, &requests, &[]);
        assert_eq!((m.delivered, m.lost), (1, 1));
        let a = &m.messages[0];
        assert_eq!(a.first_seq, Some(3), "a title request is not a model call");
        assert_eq!(a.latency_ms, Some(150));
        assert_eq!(a.injections, 1);
        let late = Records {
            deadline_ms: Some(1250),
            ..records.clone()
        };
        let m = metrics(&late, &requests, &[]);
        assert!(!m.messages[0].delivered && m.messages[0].late);
        let stopped_early = Records {
            deadline_ms: None,
            ..records.clone()
        };
        let m = metrics(&stopped_early, &requests, &[]);
        assert!(
            m.messages[0].delivered,
            "a workload that stopped before its deadline counts what reached the model"
        );
    }

    #[test]
    fn an_archived_file_is_delivered_even_if_no_request_names_it() {
        let records = Records {
            sent: vec![sent("a.md", 100)],
            archived: vec![("a.md".into(), 400)],
            deadline_ms: Some(500),
            ..Records::default()
        };
        let m = metrics(&records, &[], &[]);
        assert!(m.messages[0].delivered && m.messages[0].archived);
        assert_eq!(m.messages[0].latency_ms, Some(300));
    }

    #[test]
    fn history_repeats_are_one_injection_two_blocks_in_one_request_a_duplicate() {
        let requests = [
            request(1, "prompt", 1, Some(1), &[("user", NOTICE_A)]),
            request(
                2,
                "prompt",
                2,
                Some(1),
                &[("user", NOTICE_A), ("user", "next")],
            ),
            request(
                3,
                "prompt",
                3,
                Some(1),
                &[
                    ("user", NOTICE_A),
                    ("user", "next"),
                    ("system", "a.md again"),
                ],
            ),
        ];
        let records = Records {
            sent: vec![sent("a.md", 0)],
            deadline_ms: None,
            ..Records::default()
        };
        let once = metrics(&records, &requests[..2], &[]);
        assert_eq!((once.messages[0].injections, once.duplicates), (1, 0));
        let twice = metrics(&records, &requests, &[]);
        assert_eq!((twice.messages[0].injections, twice.duplicates), (2, 1));
    }

    #[test]
    fn a_draft_is_intact_only_if_exactly_what_was_typed_reached_the_model() {
        let glued = "please refactor[ding] 1 unread inbox message in /i/new: a.md.";
        // (what the model saw, the outcome, the pieces named)
        let cases = [
            (
                vec![("user", " please refactor the parser ")],
                DraftOutcome::Exact,
                vec![],
            ),
            (
                vec![("user", glued), ("user", "the parser")],
                DraftOutcome::Altered,
                vec![glued, "the parser"],
            ),
            (
                vec![
                    ("user", "p[ding] 1 unread"),
                    ("user", "lease refactor the parser"),
                ],
                DraftOutcome::Altered,
                vec!["p[ding] 1 unread", "lease refactor the parser"],
            ),
            (
                vec![
                    ("user", "<system-reminder>p</system-reminder>"),
                    ("user", "another"),
                ],
                DraftOutcome::NeverReached,
                vec![],
            ),
            (
                vec![("user", "[ding] a.md please refactor the parser")],
                DraftOutcome::Altered,
                vec!["[ding] a.md please refactor the parser"],
            ),
            (
                vec![("user", "something else")],
                DraftOutcome::NeverReached,
                vec![],
            ),
        ];
        for (texts, outcome, pieces) in cases {
            let requests = [request(1, "prompt", 1, Some(1), &texts)];
            let records = Records {
                drafts: vec![Draft {
                    text: "please refactor the parser".into(),
                    first_key_ms: 0,
                    entered_ms: 0,
                }],
                ..Records::default()
            };
            let m = metrics(&records, &requests, &[]);
            assert_eq!(m.drafts[0].outcome, outcome, "{texts:?}");
            assert_eq!(m.drafts[0].pieces, pieces, "{texts:?}");
            assert_eq!(
                m.drafts_corrupted,
                usize::from(outcome != DraftOutcome::Exact)
            );
        }
        let typed_only_in_context = [request(
            1,
            "prompt",
            1,
            Some(1),
            &[("system", "please refactor the parser")],
        )];
        let records = Records {
            drafts: vec![Draft {
                text: "please refactor the parser".into(),
                first_key_ms: 0,
                entered_ms: 0,
            }],
            ..Records::default()
        };
        assert!(metrics(&records, &typed_only_in_context, &[]).drafts[0].corrupted);
    }

    #[test]
    fn a_dialog_is_answered_by_ding_when_it_closed_first_its_choice_moved_or_a_refusal_ran() {
        let seen = |consent, answer, marker_exists| DialogSeen {
            kind: "command permission".into(),
            consent,
            opened_ms: Some(1),
            selected_at_open: Some(1),
            answer,
            marker_exists,
        };
        let open = |selected| DialogAnswer::Open { selected, at_ms: 5 };
        let cases = [
            (seen(true, open(Some(1)), true), false),
            (seen(false, open(Some(1)), false), false),
            (seen(true, DialogAnswer::Closed { at_ms: 5 }, true), true),
            (seen(false, open(Some(2)), false), true),
            (seen(false, open(Some(1)), true), true),
            (seen(true, open(None), true), true),
            // A picker that opened on its third option and still shows it.
            (
                DialogSeen {
                    selected_at_open: Some(3),
                    ..seen(false, open(Some(3)), false)
                },
                false,
            ),
        ];
        for (seen, by_ding) in cases {
            let records = Records {
                dialogs: vec![seen.clone()],
                ..Records::default()
            };
            let m = metrics(&records, &[], &[]);
            assert_eq!(m.dialogs_answered_by_ding, usize::from(by_ding), "{seen:?}");
        }
    }

    #[test]
    fn delivery_calls_count_turns_a_ring_started_titles_apart() {
        let requests = [
            // The typist's own turn, a notice riding its tool result.
            request(1, "prompt", 1, Some(1), &[("user", "mock:run 5")]),
            request(
                2,
                "tool-result",
                1,
                Some(2),
                &[("user", "mock:run 5"), ("user", NOTICE_A)],
            ),
            request(3, "title", 1, None, &[]),
            // A ring submitted as the prompt of a new turn, two calls.
            request(
                4,
                "prompt",
                2,
                Some(1),
                &[("user", "[ding] 1 unread: b.md")],
            ),
            request(
                5,
                "tool-result",
                2,
                Some(2),
                &[("user", "[ding] 1 unread: b.md")],
            ),
            // A wake-up with no typed words, first to carry c.md.
            request(6, "prompt", 3, Some(1), &[("system", "c.md waits")]),
            request(7, "compaction", 3, None, &[]),
        ];
        let mut requests = requests.to_vec();
        requests[5].prompt = None;
        let records = Records {
            sent: vec![sent("a.md", 0), sent("b.md", 0), sent("c.md", 0)],
            deadline_ms: None,
            ..Records::default()
        };
        let m = metrics(&records, &requests, &[]);
        assert_eq!(m.calls.turn_calls, 5);
        assert_eq!(m.calls.titles, 1);
        assert_eq!(m.calls.compactions, 1);
        assert_eq!(m.calls.delivery_calls, 3);
    }

    #[test]
    fn only_the_pty_hosts_delivery_records_are_dings_bytes() {
        let input = |event: &str, bytes| PtyInput {
            event: event.into(),
            op: "send".into(),
            bytes,
        };
        let m = metrics(
            &Records::default(),
            &[],
            &[
                input("delivery", 200),
                input("intervention", 1),
                input("intervention", 1),
            ],
        );
        assert_eq!(
            m.pty,
            PtyBytes {
                delivery_writes: 1,
                delivery_bytes: 200,
                intervention_writes: 2,
                intervention_bytes: 2
            }
        );
    }

    /// The model server's logs of a real `/compact` on each bundled
    /// harness (`fixtures/providers/*/eval/compaction-VERSION.jsonl`, from
    /// the real-pane tests `clear_and_compact_bring_the_unread_backlog_into_the_new_context`;
    /// bodies and headers left out): it took effect when the turn call
    /// after the compaction request carries the summary. The same log cut
    /// right after the compaction request cannot tell, and a log without
    /// one says it did not. (Before, the compaction request alone counted
    /// as applied.)
    #[test]
    fn a_compact_took_effect_when_the_next_turn_call_carries_the_summary() {
        let rooms = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/providers");
        let mut fixtures: Vec<std::path::PathBuf> = std::fs::read_dir(&rooms)
            .expect("fixtures")
            .flatten()
            .flat_map(|room| {
                std::fs::read_dir(room.path().join("eval"))
                    .into_iter()
                    .flatten()
            })
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with("compaction-"))
            })
            .collect();
        fixtures.sort();
        assert!(fixtures.len() >= 2, "{fixtures:?}");
        for fixture in &fixtures {
            let fixture = fixture.display();
            let text = std::fs::read_to_string(fixture.to_string()).expect("fixture");
            let logged: Vec<Request> = text
                .lines()
                .map(|line| serde_json::from_str(line).expect("a request"))
                .collect();
            let compaction = logged
                .iter()
                .position(|r| r.class == "compaction")
                .expect("a compaction request");
            let entered_ms = logged[compaction - 1].t + 1;
            let records = Records {
                commands: vec![Command {
                    kind: CommandKind::Compact,
                    text: "/compact".into(),
                    first_key_ms: entered_ms - 1,
                    entered_ms,
                    before: None,
                }],
                ..Records::default()
            };
            let took =
                |requests: &[Request]| metrics(&records, requests, &[]).commands[0].took_effect;
            assert_eq!(took(&logged), Some(true), "{fixture}");
            assert_eq!(took(&logged[..=compaction]), None, "{fixture}");
            assert_eq!(took(&logged[..compaction]), Some(false), "{fixture}");
        }
    }

    #[test]
    fn a_clear_took_effect_when_no_later_call_carries_the_earlier_prompt() {
        let command = Command {
            kind: CommandKind::Clear,
            text: "/clear".into(),
            first_key_ms: 1150,
            entered_ms: 1160,
            before: Some("remember the apple".into()),
        };
        let records = Records {
            commands: vec![command],
            ..Records::default()
        };
        let cleared = [
            request(1, "prompt", 1, Some(1), &[("user", "remember the apple")]),
            request(2, "prompt", 2, Some(1), &[("user", "after")]),
        ];
        let m = metrics(&records, &cleared, &[]);
        assert_eq!(m.commands[0].took_effect, Some(true));
        assert_eq!((m.typed, m.drafts_corrupted), (1, 0));
        let kept = [
            request(1, "prompt", 1, Some(1), &[("user", "remember the apple")]),
            request(
                2,
                "prompt",
                2,
                Some(1),
                &[("user", "remember the apple"), ("user", "/cl[ding]")],
            ),
        ];
        let m = metrics(&records, &kept, &[]);
        assert_eq!(m.commands[0].took_effect, Some(false));
        assert_eq!(
            m.drafts_corrupted, 1,
            "a command that did not take effect is a corrupted draft"
        );
        assert_eq!(
            metrics(&records, &kept[..1], &[]).commands[0].took_effect,
            None
        );
        // A turn that ran while the command was still being typed (a
        // delivery, say) is the conversation before it, not a sign that it
        // failed.
        let typing = [
            request(1, "prompt", 1, Some(1), &[("user", "remember the apple")]),
            request(
                2,
                "prompt",
                1,
                Some(1),
                &[("user", "remember the apple"), ("user", "a notice")],
            ),
            request(3, "prompt", 2, Some(1), &[("user", "after")]),
        ];
        let mut typed_during = records.clone();
        typed_during.commands[0].first_key_ms = 1100;
        typed_during.commands[0].entered_ms = typing[1].t + 1;
        let m = metrics(&typed_during, &typing, &[]);
        assert_eq!(m.commands[0].took_effect, Some(true));
        // A turn started just after the Return, but run on the old
        // conversation before the clear was applied; the typist's next
        // prompt shows the conversation cleared.
        let mut probed = records.clone();
        probed.commands[0].entered_ms = typing[1].t - 1;
        probed.drafts.push(Draft {
            text: "after".into(),
            first_key_ms: typing[1].t + 5,
            entered_ms: typing[2].t - 1,
        });
        let m = metrics(&probed, &typing, &[]);
        assert_eq!(m.commands[0].took_effect, Some(true));
        let still_there = [
            typing[0].clone(),
            typing[1].clone(),
            request(
                3,
                "prompt",
                2,
                Some(1),
                &[("user", "remember the apple"), ("user", "after")],
            ),
        ];
        let m = metrics(&probed, &still_there, &[]);
        assert_eq!(m.commands[0].took_effect, Some(false));
    }
}
