//! Named scenarios of the hostile screens (`screens.rs`, issue 38 item
//! 3): dialogs no hook announces, a paste that arrives changed, screens
//! drawn late or in pieces, and the grammar branches each screen reaches.

use super::*;

/// A named scenario of the hostile screens: `harness` at `seed`, its
/// screens as the seed draws them (`drawn` says which it must have),
/// keeps every invariant; its trace, for the story's properties.
fn hostile(harness: Harness, seed: u64, drawn: fn(&screens::Plan) -> bool) -> Vec<String> {
    // The world as found: the screens drawn, nothing added since.
    let scenario = Scenario {
        spread_bursts: false,
        hostile_hooks: false,
        ding_crashes: Vec::new(),
        ..Scenario::on(harness, seed)
    };
    assert!(
        drawn(&scenario.screens),
        "seed {seed}: {:?}",
        scenario.screens
    );
    let outcome = run(scenario);
    assert!(
        outcome.violations.is_empty(),
        "seed {seed} on {harness:?}: {:?}\n{}",
        outcome.violations,
        outcome.trace.join("\n")
    );
    outcome.trace
}

/// The lines of `trace` after the first that holds `from`, before the
/// first after it that holds `to` (to the end if none does).
fn between<'t>(trace: &'t [String], from: &str, to: &str) -> &'t [String] {
    let start = trace
        .iter()
        .position(|line| line.contains(from))
        .unwrap_or_else(|| panic!("no {from:?} in\n{}", trace.join("\n")));
    let rest = &trace[start + 1..];
    let end = rest
        .iter()
        .position(|line| line.contains(to))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Claude Code's folder-trust dialog at startup (`trust-folder-dialog`,
/// `No, exit` preselected): no hook announces it, and none runs before
/// the folder is trusted. The person presses Down and Return; only then
/// does the session start (`SessionStart`, the wake armed), and the wake
/// delivers what arrived. Nothing was typed while the dialog was open.
#[test]
fn a_trust_dialog_at_startup_runs_no_hook_until_the_person_trusts_the_folder() {
    let trace = hostile(Harness::Claude, 5, |plan| plan.trust_at_start);
    let trusted = "person types \"\\u{1b}[B\\r\"";
    let before = between(&trace, "adapter spawned", trusted);
    assert!(
        before
            .iter()
            .all(|line| !line.contains("hook ") && !line.contains("send-if")),
        "{before:?}"
    );
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                trusted,
                "hook SessionStart",
                "hook wake answered, naming [\"m0001.md\"",
            ]
        ),
        None
    );
}

/// A picker the person opens by typing `/permissions` at Claude Code's
/// idle composer (`eval-picker-permissions`), which no hook announces:
/// while it is open the wake delivers nothing and nothing is typed; the
/// person closes it with Esc.
#[test]
fn a_picker_the_person_opens_holds_every_delivery_until_they_close_it() {
    let trace = hostile(Harness::Claude, 76, |plan| plan.pickers);
    let open = between(
        &trace,
        "person types \"/permissions\\r\"",
        "person types \"\\u{1b}\"",
    );
    assert!(
        open.iter()
            .all(|line| !line.contains("send-if")
                && !(line.contains("hook wake answered, naming [\"m"))),
        "{open:?}"
    );
}

/// Esc Esc at Gemini CLI's empty composer opens its rewind menu after a
/// pause that draws nothing (`rewind-after-esc-esc`); no hook announces
/// it. Nothing is typed into it, then or while it is open; the person
/// closes it with Esc, and the notice goes after.
#[test]
fn gemini_rewind_opened_by_esc_esc_after_a_pause_takes_no_notice() {
    let trace = hostile(Harness::Gemini, 411, |plan| plan.pickers);
    let open = between(
        &trace,
        "person types \"\\u{1b}\\u{1b}\"",
        "person types \"\\u{1b}\"",
    );
    assert!(
        open.iter().all(|line| !line.contains("send-if")),
        "{open:?}"
    );
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "person types \"\\u{1b}\\u{1b}\"",
                "person types \"\\u{1b}\"",
                "submitted \"[ding] 1 unread inbox message",
            ]
        ),
        None
    );
}

/// A paste that arrives changed (a letter of `unread` lost): the composer
/// never holds the notice alone, so DING never presses its Return on it.
/// The person's key, once the PTY host's hold is over, finds it still
/// alone there: the host takes it back out first (PTY-22), the engine
/// gives its file back, and DING rings it again with the files that
/// arrived meanwhile, in one notice that arrives whole.
#[test]
fn a_notice_that_arrives_changed_is_never_sent_by_dings_return() {
    let trace = hostile(Harness::Demo, 34, |plan| plan.changed_pastes);
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "DING's paste arrived changed: \"[ding] 1 unead inbox message",
                "person types \"\\r\"",
                "the host takes DING's paste back out: a person's key after the hold",
                "submitted \"[ding] 3 unread inbox messages in inbox/new: m0001.md",
            ]
        ),
        None,
        "{}",
        trace.join("\n")
    );
    let waiting = between(&trace, "arrived changed", "person types \"\\r\"");
    assert!(
        waiting.iter().all(|line| !line.contains("send-if")),
        "{waiting:?}"
    );
}

/// Found by the hostile screens (seed 1947 of the agent sweep, the demo
/// agent), where DING was wrong: a notice pasted just as the harness
/// stopped reading its input for 7.4 s (a stall) had its Return withheld
/// (no screen showed it within its bound). After the stall the harness
/// drew the notice in two chunks, and the adapter read the first, whose
/// composer rows were still the old, empty ones: the engine took the
/// empty composer for the notice deleted unsent and gave its file back
/// to ring again (`InterruptedUnsent`); the notice then showed, the
/// person sent it, and the file reached the model twice. An empty
/// composer now gives a withheld notice's files back only once a screen
/// showed the paste drawn: here the notice is drawn, taken back out, and
/// its file rung once more with the two that arrived meanwhile.
#[test]
fn a_withheld_notice_read_empty_on_a_half_drawn_frame_is_not_rung_again() {
    let trace = hostile(Harness::Demo, 1947, |plan| plan.late_draws);
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "send-if 1 at revision 1 for [MessageName(\"m0001.md\")]",
                "for []",
                "for [MessageName(\"m0001.md\"), MessageName(\"m0002.md\"), MessageName(\"m0003.md\")]",
                "submitted \"[ding] 3 unread inbox messages",
            ]
        ),
        None
    );
}

/// Found by the hostile screens (seed 9361 of the agent sweep, Claude
/// Code; a trust dialog moved its start; now seed 320348 of the Claude
/// model, since a new screen is read until it settles whether or not work
/// waits, issue 39), where DING was wrong: `/compact` ends and 6 ms later
/// the person's prompt goes; its `UserPromptSubmit` is given `m0001.md`,
/// and the compaction's `SessionStart`, asked a moment before and
/// answered a moment after, claimed the `unread` backlog and was given it
/// again: the file reached the model with the prompt and again with the
/// next request. A file handed to a hook since the context last began is
/// no longer granted to a backlog claim.
#[test]
fn a_backlog_hook_answered_after_a_prompts_hook_does_not_say_its_file_again() {
    let trace = hostile(Harness::Claude, 320348, |plan| plan.trust_at_start);
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "hook PreCompact",
                "hook SessionStart Peer(4)",
                "submitted \"p\"",
                "hook UserPromptSubmit answered, naming [\"m0001.md\"]",
                "hook SessionStart answered, naming []",
            ]
        ),
        None
    );
}

/// Every capture an unannounced dialog is drawn with reads as what it is
/// to its provider's grammar: never a ready screen (the trust dialogs,
/// the pickers and the rewind menu are dialogs; Claude Code's `/resume`
/// picker is not recognized at all), so the sweeps test the grammar, not
/// the model.
#[test]
fn every_unannounced_dialog_is_drawn_with_a_capture_its_grammar_does_not_read_as_ready() {
    use ding::adapter::screen::Screen;
    let read = |harness, name: &str| {
        let dir = match harness {
            Harness::Claude => "fixtures/providers/claude/screens",
            _ => "fixtures/providers/gemini/snapshots",
        };
        let path = format!("{}/{dir}/{name}.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).expect("a capture");
        let snapshot: ding::pty::wire::Snapshot = serde_json::from_str(&text).expect("a snapshot");
        match harness {
            Harness::Claude => ding::providers::claude::screen::read(&snapshot).screen,
            _ => ding::providers::gemini::screen::read(&snapshot).screen,
        }
    };
    for harness in [Harness::Claude, Harness::Gemini] {
        let names = screens::dialog_captures(harness);
        assert!(names.len() >= 3, "{harness:?}: {names:?}");
        for name in names {
            let screen = read(harness, name);
            let expected = if name == "eval-picker-resume" {
                Screen::Unrecognized
            } else {
                Screen::Dialog
            };
            assert_eq!(screen, expected, "{harness:?} {name}");
        }
    }
}

/// Issue 38, item 3: a branch of a screen grammar that no capture reaches
/// is reached by a model screen, and this test says which. Gemini CLI's
/// `dialog_above` (a selected numbered option in a box above a composer
/// that is still drawn) is read by no capture of
/// `fixtures/providers/gemini/snapshots/` (their dialogs replace the
/// composer); the model screen `screens::gemini_dialog_above_the_composer`
/// reaches it, and the Gemini model draws its tool confirmation with it on
/// half the seeds, so a grammar that ignored such a box fails the sweep
/// (a `Notification` that comes late or never leaves the screen alone to
/// tell).
#[test]
fn gemini_a_dialog_above_the_composer_is_reached_by_a_model_screen_not_a_capture() {
    use ding::adapter::screen::Screen;
    use ding::providers::gemini::screen::read;
    const ABOVE: &str = "a selected option in a box above the composer";
    let model = read(screens::gemini_dialog_above_the_composer());
    assert_eq!((model.screen, model.why), (Screen::Dialog, ABOVE));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/gemini/snapshots");
    for entry in std::fs::read_dir(dir).expect("the captures") {
        let path = entry.expect("a capture").path();
        if path.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a capture");
        let snapshot: ding::pty::wire::Snapshot = serde_json::from_str(&text).expect("a snapshot");
        assert_ne!(
            read(&snapshot).why,
            ABOVE,
            "{} reaches it now: name it",
            path.display()
        );
    }
    let drawn = (0..100)
        .filter(|&seed| Scenario::on(Harness::Gemini, seed).screens.dialog_above)
        .count();
    assert!((30..=70).contains(&drawn), "{drawn} of 100 Gemini seeds");
}

/// Found by the hostile screens once files were named as senders name
/// them (seed 158 of the Gemini sweep; now 23349, since a new screen is
/// read until it settles whether or not work waits, issue 39), where DING
/// was wrong: a notice of
/// six long names is over 500 characters, and Gemini CLI draws it folded,
/// `[Pasted Text: N chars]` (`paste-900chars.json`); its grammar read the
/// placeholder as the composer's text, which never held the notice alone,
/// so DING's Return was withheld and the files never reached the model
/// (12 of 5,000 Gemini seeds). The placeholder of N characters is now the
/// notice of that length: DING presses its Return, and the six files go in
/// one prompt (the seventh with the turn's `AfterAgent`, and all seven
/// again to the harness started after the crash).
#[test]
fn gemini_a_long_notice_drawn_folded_is_still_sent_by_dings_return() {
    let trace = hostile(Harness::Gemini, 23349, |plan| plan.long_names);
    let notice = trace
        .iter()
        .find_map(|line| line.split("submitted ").nth(1))
        .expect("a prompt");
    assert!(notice.starts_with("\"[ding] 6 unread"), "{notice}");
    let before = between(&trace, "arrives m0006", "submitted \"[ding] 6 unread");
    assert!(
        before.iter().all(|line| !line.contains("person types")),
        "{before:?}"
    );
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "submitted \"[ding] 6 unread",
                "the harness crashes and starts again as i2",
                "submitted \"[ding] 7 unread",
            ]
        ),
        None
    );
}

/// Issue 38, item 3: every reason a provider's screen grammar can give
/// (`why`, one per branch of its `read`) is reached by a real capture of
/// `fixtures/providers/<provider>/` or, where none reaches it, by a model
/// screen the simulation draws, named here; the few reached by neither
/// are named too, with why. A new capture that reaches one, or a branch
/// that no list names, fails here.
#[test]
fn every_grammar_branch_is_reached_by_a_capture_or_a_named_model_screen() {
    use ding::pty::wire::Snapshot;
    use std::collections::BTreeSet;
    type Read = fn(&Snapshot) -> &'static str;
    type Model = (&'static str, fn() -> Snapshot);
    struct Grammar {
        provider: &'static str,
        folders: &'static [&'static str],
        read: Read,
        /// Every reason its `read` gives.
        reasons: &'static [&'static str],
        /// Reasons no capture reaches, and the model screen that does.
        models: &'static [Model],
        /// Reasons nothing reaches, and why.
        unreached: &'static [(&'static str, &'static str)],
    }
    let grammars = [
        Grammar {
            provider: "claude",
            folders: &["fixtures/providers/claude/screens"],
            read: |snapshot| ding::providers::claude::screen::read(snapshot).why,
            reasons: &[
                "a permission dialog is open",
                "a dialog or menu is open (Esc to cancel)",
                "a dialog or menu is open (Esc to close)",
                "a selection list is open",
                "no composer between two rules",
                "composer row without the prompt",
                "a turn is running",
                "ready, composer empty",
                "ready, human text in the composer",
                "ready, composer not readable",
            ],
            models: &[
                (
                    "composer row without the prompt",
                    grammar_branches::claude_composer_without_the_prompt,
                ),
                (
                    "ready, composer not readable",
                    grammar_branches::claude_composer_not_readable,
                ),
            ],
            unreached: &[],
        },
        Grammar {
            provider: "codex",
            folders: &[
                "fixtures/providers/codex/snapshots",
                "fixtures/providers/codex/snapshots/shared",
            ],
            read: |snapshot| ding::providers::codex::screen::read(snapshot).why,
            reasons: &[
                "a selection list or dialog is open (a selected `›` row)",
                "a dialog is open (its footer says so)",
                ding::providers::codex::screen::DUMB_TERMINAL,
                "the cursor is hidden: no composer has the keys",
                "the TUI has lost its app-server: nothing it is given is sent",
                "no composer row at or above the cursor",
                "a turn is running",
                "a prompt was just submitted: its turn is starting",
                "ready, composer empty",
                "ready, human text in the composer",
                "ready, composer not readable",
            ],
            models: &[
                (
                    "a dialog is open (its footer says so)",
                    codex_dialog_by_its_footer,
                ),
                (
                    "no composer row at or above the cursor",
                    grammar_branches::codex_cursor_above_the_composer,
                ),
                (
                    "a prompt was just submitted: its turn is starting",
                    grammar_branches::codex_prompt_just_submitted,
                ),
                (
                    "ready, composer not readable",
                    grammar_branches::codex_composer_not_readable,
                ),
            ],
            unreached: &[],
        },
        Grammar {
            provider: "gemini",
            folders: &["fixtures/providers/gemini/snapshots"],
            read: |snapshot| ding::providers::gemini::screen::read(snapshot).why,
            reasons: &[
                "a session browser",
                "a dialog box in place of the composer",
                "a selected option in a box above the composer",
                "no composer below a rule",
                ding::providers::gemini::screen::COLOURLESS,
                "shell mode: typed text would run as a command",
                "a turn is running",
                "ready, composer empty",
                "ready, human text in the composer",
                "ready, composer not readable",
            ],
            models: &[
                ("a selected option in a box above the composer", || {
                    screens::gemini_dialog_above_the_composer().clone()
                }),
                (
                    "ready, composer not readable",
                    grammar_branches::gemini_composer_not_readable,
                ),
            ],
            unreached: &[],
        },
    ];
    for grammar in grammars {
        let provider = grammar.provider;
        let mut reached = BTreeSet::new();
        for folder in grammar.folders {
            for (_, value) in support::fixture_files::json_values(folder) {
                if value.get("rows").is_none() {
                    continue;
                }
                let snapshot: Snapshot = serde_json::from_value(value).expect("a snapshot");
                reached.insert((grammar.read)(&snapshot));
            }
        }
        for why in &reached {
            assert!(
                grammar.reasons.contains(why),
                "{provider}: {why:?} is not listed"
            );
        }
        for (reason, model) in grammar.models {
            assert!(
                !reached.contains(reason),
                "{provider}: a capture reaches {reason:?} now"
            );
            assert_eq!(
                (grammar.read)(&model()),
                *reason,
                "{provider}: its model screen"
            );
        }
        for (reason, _) in grammar.unreached {
            assert!(
                !reached.contains(reason),
                "{provider}: a capture reaches {reason:?} now"
            );
        }
        let unreached: Vec<&&str> = grammar
            .reasons
            .iter()
            .filter(|reason| {
                !reached.contains(**reason)
                    && !grammar.models.iter().any(|(model, _)| model == *reason)
                    && !grammar.unreached.iter().any(|(named, _)| named == *reason)
            })
            .collect();
        assert!(
            unreached.is_empty(),
            "{provider}: no capture or model screen reaches {unreached:?} (captures reach {reached:?})"
        );
    }
}

/// A model screen for the branch of Codex's grammar no capture reaches: a
/// dialog told by its footer alone (`approval-dialog.json` with its
/// selected row drawn without its bold inverse, as a terminal that drops
/// those attributes would show it): every captured dialog is told first
/// by its selected row.
fn codex_dialog_by_its_footer() -> ding::pty::wire::Snapshot {
    let path = format!(
        "{}/fixtures/providers/codex/snapshots/approval-dialog.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("the capture");
    let mut snapshot: ding::pty::wire::Snapshot = serde_json::from_str(&text).expect("a snapshot");
    for run in &mut snapshot.runs {
        if run.col == 0 && run.bold && run.inverse {
            run.inverse = false;
        }
    }
    snapshot
}

/// A tool confirmation whose `Notification` never comes (Gemini CLI, seed
/// 150; 28 until a new screen was read until it settled whether or not
/// work waits, issue 39): from the tool's `BeforeTool` to the person's
/// `1`, nearly three seconds in which a file arrives, no hook says a
/// dialog is open; the screen alone holds delivery, and nothing is typed
/// into it.
#[test]
fn gemini_a_confirmation_no_notification_announces_takes_no_notice() {
    let trace = hostile(Harness::Gemini, 150, |plan| plan.late_notifications);
    let open = between(&trace, "hook BeforeTool Peer(3)", "person types \"1\"");
    assert!(
        open.iter()
            .all(|line| !line.contains("hook Notification") && !line.contains("send-if")),
        "{open:?}"
    );
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "hook BeforeTool Peer(3)",
                "arrives m0002.md",
                "person types \"1\"",
                "hook AfterTool"
            ]
        ),
        None
    );
}

/// Real pane, Claude Code 2.1.328 and Codex 0.169.0 (issue 39, item 3):
/// with a message waiting for a dialog, the person closed it with Esc and
/// pressed Esc again about 0.6 s later; DING's turn had begun 0.36 to
/// 0.45 s after the first Esc (its quiet after a key was `quiet-input`,
/// 300 ms), and the second Esc interrupted it (1 of 10 on each, every one
/// of the 20 within 1 s of a key: `docs/evaluation.md`, "A second Esc
/// after a dialog closed"). At seed 561 six files wait while the person
/// opens `/resume`, closes it with Esc, opens `/permissions` 393 ms later
/// and closes it; the wake goes once they have left the terminal alone
/// for the turn quiet, with all six files, and no turn of DING's begins
/// within 1 s of a key of the person's anywhere in the run. (With the
/// quiet at 300 ms the wake went 938 ms after the last Esc.)
#[test]
fn a_turn_of_dings_waits_past_a_persons_keys_closing_dialogs() {
    let trace = hostile(Harness::Claude, 561, |plan| plan.pickers);
    assert_eq!(
        first_missing_mark(
            &trace,
            &[
                "person types \"/resume\\r\"",
                "person types \"\\u{1b}\"",
                "person types \"/permissions\\r\"",
                "person types \"\\u{1b}\"",
                "hook wake answered, naming [\"m0001.md\", \"m0002.md\", \"m0003.md\", \"m0004.md\", \"m0005.md\", \"m0006.md\"]",
            ]
        ),
        None,
        "{}",
        trace.join("\n")
    );
    let at = |line: &str| -> u64 {
        line.split_whitespace()
            .next()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(0)
    };
    let mut last_key = None;
    for line in &trace {
        if line.contains("person types") {
            last_key = Some(at(line));
        }
        if line.contains("hook wake answered, naming [\"")
            && let Some(key) = last_key
        {
            assert!(
                at(line) >= key + 1_000,
                "a turn of DING's {} ms after a key: {line}\n{}",
                at(line) - key,
                trace.join("\n")
            );
        }
    }
}
