use super::*;
use crate::logs::{PtyInput, Reply, Request, Text};

fn request(seq: u64, class: &str, turn: u64, call: Option<u64>, texts: &[(&str, &str)]) -> Request {
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
        reply: Reply {
            kind: "text".into(),
            seconds: None,
        },
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
fn a_backlogs_latency_counts_from_the_composer_first_being_ready() {
    let records = Records {
        sent: vec![sent("a.md", 100), sent("b.md", 5_000)],
        archived: vec![("a.md".into(), 4_400), ("b.md".into(), 5_300)],
        deadline_ms: Some(9_000),
        ready_ms: Some(4_000),
        ..Records::default()
    };
    let m = metrics(&records, &[], &[]);
    // Sent before the composer was ready: from the ready moment.
    assert_eq!(m.messages[0].latency_ms, Some(400));
    // Sent after it: from its arrival.
    assert_eq!(m.messages[1].latency_ms, Some(300));
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
        let took = |requests: &[Request]| metrics(&records, requests, &[]).commands[0].took_effect;
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

/// Row 7 on one harness, aggressive, 2026-12-05: three notices typed
/// before the first was sent, submitted as one prompt run together
/// (`...FILE[ding] 1 unread...`). Neither arm has delivered what only such
/// a prompt carries.
#[test]
fn notices_run_together_into_one_prompt_deliver_nothing() {
    let glued = "[ding] 1 unread inbox message in /i/new: a.md. Read each file, then archive it: ding archive w FILE[ding] 1 unread inbox message in /i/new: b.md. Read each file";
    let requests = [
        request(1, "prompt", 1, Some(1), &[("user", glued)]),
        request(
            2,
            "prompt",
            2,
            Some(1),
            &[("user", glued), ("user", NOTICE_A)],
        ),
    ];
    let records = Records {
        sent: vec![sent("a.md", 1050), sent("b.md", 1050)],
        deadline_ms: Some(5000),
        ..Records::default()
    };
    let m = metrics(&records, &requests, &[]);
    assert_eq!((m.delivered, m.lost), (1, 1));
    let (a, b) = (&m.messages[0], &m.messages[1]);
    assert!(a.garbled && a.delivered && a.first_seq == Some(2), "{a:?}");
    assert!(b.garbled && !b.delivered && b.first_seq.is_none(), "{b:?}");
    // One notice alone, or a person's line that quotes one, is no garble.
    let clean = [request(1, "prompt", 1, Some(1), &[("user", NOTICE_A)])];
    assert!(!metrics(&records, &clean, &[]).messages[0].garbled);
}
