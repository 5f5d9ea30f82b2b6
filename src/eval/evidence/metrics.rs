//! The facts of one trial, each from the records and the logs alone, and
//! the metrics that count them.

use serde::Serialize;

use crate::logs::{PtyInput, Request, Text};
use crate::model_server::is_harness_context;
use crate::script::COMPACTION_SUMMARY;

use super::fewest::{FewestCalls, fewest_calls};
use super::records::{Command, CommandKind, DialogAnswer, DialogSeen, Draft, Records, Sent};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageFact {
    pub name: String,
    pub sent_ms: u64,
    pub delivered: bool,
    pub latency_ms: Option<u64>,
    /// The first model call that carried it, if any (even a late one),
    /// not counting a garbled prompt.
    pub first_seq: Option<u64>,
    /// A prompt of notices run together carried it (see `garbled`).
    pub garbled: bool,
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
    /// The fewest calls a person who knew every arrival would need.
    pub fewest_calls: FewestCalls,
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
        fewest_calls: fewest_calls(records, requests),
        pty: pty_bytes(pty),
        messages,
        drafts,
        dialogs,
        commands,
        interventions,
    }
}

/// How every notice DING types begins (`core::notice`).
const NOTICE_MARK: &str = "[ding] ";

/// Whether a text the model saw is a prompt the harness made of notices
/// run together: a typed notice submitted as the person's text that holds
/// another notice (typed before the first was sent, and glued to it).
/// Neither arm has delivered what only such a text carries.
fn garbled(text: &Text) -> bool {
    let text = text.text.trim_start();
    text.starts_with(NOTICE_MARK) && text.matches(NOTICE_MARK).count() > 1
}

/// Whether `request` carries `name` in a text that is not garbled.
fn carries_cleanly(request: &Request, name: &str) -> bool {
    request
        .texts
        .iter()
        .any(|text| text.text.contains(name) && !garbled(text))
}

/// When `sent` could first have been delivered: its arrival, or for a
/// backlog the moment the harness's composer was first ready.
fn could_go_ms(sent: &Sent, records: &Records) -> u64 {
    sent.unix_ms.max(records.ready_ms.unwrap_or(0))
}

fn message_fact(sent: &Sent, records: &Records, turn_calls: &[&Request]) -> MessageFact {
    let first = turn_calls.iter().find(|r| carries_cleanly(r, &sent.name));
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
            .map(|at| at.saturating_sub(could_go_ms(sent, records))),
        first_seq: first.map(|r| r.seq),
        garbled: turn_calls.iter().any(|r| {
            r.texts
                .iter()
                .any(|text| text.text.contains(&sent.name) && garbled(text))
        }),
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
