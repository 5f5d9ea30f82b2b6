//! The workload of each matrix row: what the typist does, when messages
//! arrive, what the supervisor does, as one timeline per trial. Every
//! random moment comes from the trial's seed, always inside the window
//! that defines the row (a message "during the draft" arrives after the
//! draft's first keystroke and before its Return), never tuned to any
//! outcome. Both arms run the same timeline for the same seed.
//!
//! [`run_trial`] is the one entry point: `make eval` and the real-pane
//! smoke tests in `make test` both call it.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::evidence::{Command, CommandKind, DialogAnswer, DialogSeen, Draft};
use super::logs::Request;
use super::pane::{Dialog, DialogKind};
use super::row::Row;
use super::trial::{self, PATIENCE, Trial, TrialFacts, TrialSpec};
use super::typist::{ESC, Pace, sleep_until};
use crate::unix_time::unix_ms;
use ding::pty::wire::Snapshot;

/// Runs one trial of `spec.row`.
pub fn run_trial(spec: &TrialSpec) -> TrialFacts {
    trial::run(spec, drive)
}

fn drive(t: &mut Trial) -> Result<()> {
    match t.spec.row {
        Row::StartupBacklog => startup_backlog(t),
        Row::ResumeBacklog => resume_backlog(t),
        Row::DuringTurn => during_turn(t),
        Row::ExactIdle => exact_idle(t),
        Row::Draft => draft_in_progress(t),
        Row::Dialog => dialog_open(t),
        Row::Burst => burst(t),
        Row::AdapterLoss => adapter_loss(t),
        Row::Compaction => command_around(t, CommandKind::Compact),
        Row::Clear => command_around(t, CommandKind::Clear),
        Row::Crash => crash(t),
        Row::Intervention => intervention(t),
    }
}

/// Words a person might type; never a directive, never DING's words.
const WORDS: [&str; 24] = [
    "please", "refactor", "the", "parser", "module", "and", "check", "tests", "rename", "config",
    "loader", "error", "handling", "cache", "review", "docs", "update", "build", "script", "fix",
    "flaky", "timeout", "logging", "notes",
];

fn sentence(t: &mut Trial, words: u64) -> String {
    (0..words)
        .map(|_| *t.rng.pick(&WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The typist types `text` and presses Return; the line is recorded.
fn submit(t: &mut Trial, text: &str) -> Result<Draft> {
    let plan = Pace::new(&mut t.rng).line(text);
    let first_key_ms = unix_ms();
    let entered_ms = t.perform(&plan, Instant::now())?;
    let draft = Draft {
        text: text.to_string(),
        first_key_ms,
        entered_ms,
    };
    t.records.drafts.push(draft.clone());
    Ok(draft)
}

/// The moment of unix time `unix_ms` on the monotonic clock.
fn instant_at(at_ms: u64) -> Instant {
    let ago = Duration::from_millis(unix_ms().saturating_sub(at_ms));
    Instant::now().checked_sub(ago).unwrap_or_else(Instant::now)
}

/// Waits for the model call that answered `draft` with a command: the
/// command runs from about then.
fn command_started(t: &mut Trial, draft: &Draft) -> Result<Request> {
    let since = draft.first_key_ms;
    t.wait_request("the model's command call", PATIENCE, |r| {
        r.is_turn_call() && r.t >= since && r.reply.kind == "command"
    })
}

/// Sends messages at `moments` while the typist types `plan` from `start`.
fn type_while_arriving(
    t: &mut Trial,
    plan: &super::typist::Plan,
    start: Instant,
    moments: Vec<Instant>,
) -> Result<u64> {
    let arrivals = t.sender().arrive_at(moments);
    let typed = t.perform(plan, start);
    let (sent, error) = arrivals.join();
    t.records.sent.extend(sent);
    if let Some(error) = error {
        return Err(error);
    }
    typed
}

/// `ding up`, then the typist waits for an idle, empty composer.
fn start_idle(t: &mut Trial) -> Result<()> {
    t.up()?;
    t.wait_idle()?;
    Ok(())
}

fn finish(t: &mut Trial) -> Result<()> {
    t.await_delivery()?;
    t.settle()
}

/// Row 1: messages wait in the inbox before the harness starts. In half
/// the trials the harness's home is prepared so that it asks the person
/// something at startup, in a dialog of its own (`Setup::ask_at_startup`),
/// which the typist reads for 2 to 4 s and answers: a dialog nobody asked
/// DING about, open while the backlog waits.
fn startup_backlog(t: &mut Trial) -> Result<()> {
    let count = t.rng.between(1, 3);
    // A harness that asks nothing at startup (its pane has no keys that
    // answer a startup dialog) never does; the draw is made all the same,
    // so that a seed gives every harness the same timeline.
    let asks = t.rng.percent(50) && !t.pane.startup_keys().is_empty();
    if asks {
        t.ask_at_startup()?;
        t.notes
            .push("the harness asks the person something at startup".into());
    }
    for _ in 0..count {
        // The agent has never run, so its inbox does not exist yet: whoever
        // leaves it work creates it, as `ding send --create` does.
        t.send_message_with(&["--create"])?;
    }
    t.up()?;
    if asks {
        answer_at_startup(t)?;
    }
    t.note_when_ready()?;
    finish(t)
}

/// The typist waits for the harness's startup dialog, reads it, and
/// answers it as the pane says a person goes on to work.
fn answer_at_startup(t: &mut Trial) -> Result<()> {
    let pane = t.pane;
    let seen = |answer, selected_at_open, opened_ms| DialogSeen {
        kind: "startup question".into(),
        consent: true,
        opened_ms,
        selected_at_open,
        answer,
        marker_exists: false,
    };
    let opened = see_dialog(
        t,
        "the startup dialog",
        |s| pane.startup_dialog(s),
        || seen(DialogAnswer::NeverOpened, None, None),
    )?;
    sleep_until(opened.at + t.rng.millis(2000, 4000));
    let screen = t.screen()?;
    let answer = match pane.startup_dialog(&screen) {
        None => DialogAnswer::Closed { at_ms: unix_ms() },
        Some(dialog) => {
            let mut at_ms = unix_ms();
            for (index, keys) in pane.startup_keys().iter().enumerate() {
                if index > 0 {
                    sleep_until(Instant::now() + t.rng.millis(150, 400));
                }
                at_ms = t.press(keys)?;
            }
            DialogAnswer::Open {
                selected: dialog.selected,
                at_ms,
            }
        }
    };
    t.records
        .dialogs
        .push(seen(answer, opened.selected, Some(opened.ms)));
    Ok(())
}

/// A dialog as the typist saw it open.
struct Opened {
    ms: u64,
    at: Instant,
    /// The option selected when the typist took it in.
    selected: Option<u32>,
}

/// Waits for the dialog `read` finds, then takes in which option is
/// selected a glance later (`SEEING`): a dialog's first frame may not show
/// its selection yet (a harness may draw a picker's highlight a frame late).
/// A dialog that never opens is recorded as `never_opened` says.
fn see_dialog(
    t: &mut Trial,
    what: &str,
    read: impl Fn(&Snapshot) -> Option<Dialog>,
    never_opened: impl FnOnce() -> DialogSeen,
) -> Result<Opened> {
    let first = match t.wait_screen(what, PATIENCE, |s| read(s).is_some()) {
        Ok(first) => first,
        Err(error) => {
            t.records.dialogs.push(never_opened());
            return Err(error);
        }
    };
    let opened = Opened {
        ms: unix_ms(),
        at: Instant::now(),
        selected: None,
    };
    sleep_until(opened.at + SEEING);
    let selected = read(&t.screen()?)
        .or_else(|| read(&first))
        .and_then(|dialog| dialog.selected);
    Ok(Opened { selected, ..opened })
}

/// Row 2: a session with one turn is stopped; messages arrive while it is
/// down; the session is resumed.
fn resume_backlog(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let text = sentence(t, 4);
    let first = submit(t, &text)?;
    t.wait_turn_done(first.entered_ms)?;
    t.down()?;
    let count = t.rng.between(1, 2);
    for _ in 0..count {
        t.send_message()?;
    }
    t.resume()?;
    t.note_when_ready()?;
    finish(t)?;
    // Whether the session really was resumed: the model call that carried
    // the backlog also carries the conversation before it.
    let names: Vec<String> = t.records.sent.iter().map(|s| s.name.clone()).collect();
    let carrying: Vec<bool> = t
        .requests()?
        .iter()
        .filter(|r| r.is_turn_call() && names.iter().any(|n| r.carries(n)))
        .map(|r| r.carries(&first.text))
        .collect();
    t.notes.push(match carrying.first() {
        Some(true) => "resumed: the call that carried the backlog also carried the session's first prompt".into(),
        Some(false) => "not resumed: the call that carried the backlog did not carry the session's first prompt".into(),
        None => "no model call carried the backlog".into(),
    });
    Ok(())
}

/// Row 3: a message arrives while the model's command runs; or (half the
/// trials) 0 to 100 ms after the Return of a line that asks for no command,
/// the moment a turn's only request is being made: a call that cannot be
/// avoided, which the careful arm must pay no more often than the
/// aggressive one.
fn during_turn(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    if t.rng.percent(50) {
        let words = t.rng.between(3, 5);
        let text = sentence(t, words);
        let after_return = t.rng.millis(0, 100);
        t.notes.push(format!(
            "the message {} ms after the Return of a line with no command",
            after_return.as_millis()
        ));
        let plan = Pace::new(&mut t.rng).line(&text);
        let start = Instant::now() + Duration::from_millis(100);
        let first_key_ms = unix_ms() + 100;
        let arrival = start + plan.duration() + after_return;
        let entered_ms = type_while_arriving(t, &plan, start, vec![arrival])?;
        t.records.drafts.push(Draft {
            text,
            first_key_ms,
            entered_ms,
        });
        return finish(t);
    }
    let seconds = 6;
    let text = format!("mock:run {seconds} {}", sentence(t, 3));
    let draft = submit(t, &text)?;
    let command = command_started(t, &draft)?;
    let offset = t.rng.millis(500, seconds * 1000 - 1500);
    sleep_until(instant_at(command.t) + offset);
    t.send_message()?;
    finish(t)
}

/// Row 4: a message arrives at idle, the composer empty. In a third of the
/// trials the person starts typing a line of their own around the moment
/// DING acts on it: the first key falls from 100 ms before the arrival to
/// 1.6 s after it, which spans both arms' moments (the aggressive arm types
/// at once, the careful one after its gather and fences), and the line is
/// submitted as a person would. In another third the person presses Esc
/// around the moment the message's turn starts, then goes on working.
fn exact_idle(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let pause = t.rng.millis(300, 2000);
    match t.rng.between(0, 2) {
        0 => {
            sleep_until(Instant::now() + pause);
            t.send_message()?;
            finish(t)
        }
        1 => typing_around_the_arrival(t, pause),
        _ => esc_around_the_request(t, pause),
    }
}

/// Row 4's typing variant: the person's first key from 100 ms before the
/// arrival to 1.6 s after it.
fn typing_around_the_arrival(t: &mut Trial, pause: Duration) -> Result<()> {
    let key_after_arrival_ms = t.rng.between(0, 1_700) as i64 - 100;
    t.notes.push(format!(
        "the person's first key {key_after_arrival_ms} ms after the arrival"
    ));
    let words = t.rng.between(3, 5);
    let text = sentence(t, words);
    let plan = Pace::new(&mut t.rng).line(&text);
    let arrival = Instant::now() + pause;
    let start = if key_after_arrival_ms < 0 {
        arrival - Duration::from_millis(key_after_arrival_ms.unsigned_abs())
    } else {
        arrival + Duration::from_millis(key_after_arrival_ms as u64)
    };
    let first_key_ms =
        unix_ms() + start.saturating_duration_since(Instant::now()).as_millis() as u64;
    let entered_ms = type_while_arriving(t, &plan, start, vec![arrival])?;
    t.records.drafts.push(Draft {
        text,
        first_key_ms,
        entered_ms,
    });
    finish(t)
}

/// Row 4's Esc variant: the person presses Esc from 200 ms before the
/// arrival to 2.5 s after it, which spans the moment each arm's turn for
/// the message starts (its first request: the aggressive arm's at once,
/// the careful arm's after its gather), so that the Esc falls just before
/// that request in some trials and just after it in others; the note says
/// which. Then, 1 to 2 s later and once the composer is free, the person
/// submits a line of their own: whatever the Esc stopped rides it.
fn esc_around_the_request(t: &mut Trial, pause: Duration) -> Result<()> {
    let esc_after_arrival_ms = t.rng.between(0, 2_700) as i64 - 200;
    let arrival = Instant::now() + pause;
    let esc_at = if esc_after_arrival_ms < 0 {
        arrival - Duration::from_millis(esc_after_arrival_ms.unsigned_abs())
    } else {
        arrival + Duration::from_millis(esc_after_arrival_ms as u64)
    };
    let arrivals = t.sender().arrive_at(vec![arrival]);
    sleep_until(esc_at);
    let esc_ms = t.press(ESC);
    let (sent, error) = arrivals.join();
    t.records.sent.extend(sent);
    let esc_ms = esc_ms?;
    if let Some(error) = error {
        return Err(error);
    }
    sleep_until(Instant::now() + t.rng.millis(1000, 2000));
    t.wait_free_composer()?;
    let words = t.rng.between(3, 5);
    let text = sentence(t, words);
    submit(t, &text)?;
    let result = finish(t);
    let names: Vec<String> = t.records.sent.iter().map(|s| s.name.clone()).collect();
    let first_call = t
        .requests()?
        .iter()
        .find(|r| r.is_turn_call() && names.iter().any(|name| r.carries(name)))
        .map(|r| r.t);
    t.notes.push(match first_call {
        Some(at) => format!(
            "Esc {esc_after_arrival_ms} ms after the arrival, {} ms after the first model call that carried the message",
            esc_ms as i64 - at as i64
        ),
        None => format!(
            "Esc {esc_after_arrival_ms} ms after the arrival; no model call carried the message"
        ),
    });
    result
}

/// Row 5: the typist's draft is in progress (left unfinished for a while)
/// when a message arrives; then the typist finishes and submits it.
fn draft_in_progress(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let words = t.rng.between(4, 6);
    let text = sentence(t, words);
    let length = text.chars().count() as u64;
    let typed_first = t.rng.between(3, length.saturating_sub(3)) as usize;
    let pause = t.rng.millis(2000, 5000);
    let plan = Pace::new(&mut t.rng).draft(&text, typed_first, pause);
    // After the first keystroke, before Return.
    let window_start = plan.key_at(0).as_millis() as u64 + 50;
    let window_end = plan.duration().as_millis() as u64 - 100;
    let arrival = t.rng.millis(window_start, window_end);
    let start = Instant::now() + Duration::from_millis(100);
    let first_key_ms = unix_ms() + 100;
    let entered_ms = type_while_arriving(t, &plan, start, vec![start + arrival])?;
    t.records.drafts.push(Draft {
        text,
        first_key_ms,
        entered_ms,
    });
    finish(t)
}

/// How long after a dialog appears the typist reads which option is
/// selected: a person's glance, and before any message can arrive in row
/// 6 (300 ms at the earliest).
const SEEING: Duration = Duration::from_millis(200);
const _: () = assert!(SEEING.as_millis() < 300, "before the earliest arrival");

/// How long a person looks at the screen after typing one of the
/// harness's commands before deciding that its Return did not take.
const COMMAND_TAKES: Duration = Duration::from_secs(5);

/// How many times a person presses Return again on a command that shows
/// nothing, before they report what the screen shows.
const COMMAND_RETRIES: usize = 3;

/// Types one of the harness's own commands and its Return, as a person
/// types it. A harness may take that Return for one that closes its
/// command list and leave the command in the composer (one of the real
/// harnesses did, under load, with two of its commands): a person who sees
/// nothing happen (`taken` not holding within [`COMMAND_TAKES`]) looks
/// again and presses Return once more, up to [`COMMAND_RETRIES`] times,
/// and then reports the screen. The trial's notes say each time.
fn type_command(t: &mut Trial, command: &str, taken: impl Fn(&Snapshot) -> bool) -> Result<()> {
    let plan = Pace::new(&mut t.rng).line(command);
    t.perform(&plan, Instant::now())?;
    for retry in 1..=COMMAND_RETRIES {
        if t.wait_screen("the command taken", COMMAND_TAKES, &taken)
            .is_ok()
        {
            return Ok(());
        }
        t.notes.push(format!(
            "{command}: its Return did not take; the typist pressed Return again ({retry} of {COMMAND_RETRIES})"
        ));
        t.press(b"\r")?;
    }
    t.wait_screen("the command taken", COMMAND_TAKES, &taken)
        .map(drop)
        .with_context(|| format!("{command}: {COMMAND_RETRIES} more Returns did not take"))
}

/// Row 6: a message arrives while a dialog is open; the typist reads it for
/// a few seconds, then answers it as it decided. Each trial samples the
/// dialog's kind among those the harness can be made to show
/// (`Pane::dialog_kinds`): a command's permission, a file edit's approval,
/// a choice menu, a plan approval (each asked for by the mock model, after
/// the person typed the command that lets the harness show it, such as
/// entering plan mode), or a picker the person opens with one of the
/// harness's commands.
fn dialog_open(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let pane = t.pane;
    let kind = *t.rng.pick(pane.dialog_kinds());
    let consent = t.rng.percent(50);
    t.notes.push(format!(
        "dialog: {}, the typist {}",
        kind.as_str(),
        if consent { "consents" } else { "declines" }
    ));
    let marker = t.marker(1);
    let gated = matches!(kind, DialogKind::Command | DialogKind::FileEdit);
    let asking = match kind {
        DialogKind::Command => Some(format!("mock:permission {}", marker.display())),
        DialogKind::FileEdit => Some(format!("mock:edit {}", marker.display())),
        DialogKind::Choice => Some(format!("mock:choice {}", sentence(t, 2))),
        DialogKind::PlanApproval => Some(format!("mock:plan {}", sentence(t, 2))),
        DialogKind::Picker => None,
    };
    if let Some(command) = pane.setup_command(kind) {
        // The harness's own command, typed as a person types it; it never
        // reaches the model, so it is not recorded as a line.
        type_command(t, command, |s| super::pane::idle(pane, s))?;
        t.wait_idle()?;
    }
    match asking {
        Some(line) => drop(submit(t, &line)?),
        None => {
            let Some(command) = pane.picker_command() else {
                bail!("the pane lists a picker but names no command that opens one");
            };
            // The harness's own command: it never reaches the model, so it
            // is typed, not recorded as a line.
            type_command(t, command, |s| pane.dialog(s).is_some())?;
        }
    }
    let seen = |answer, selected_at_open, opened_ms| DialogSeen {
        kind: kind.as_str().into(),
        consent,
        opened_ms,
        selected_at_open,
        answer,
        marker_exists: gated && marker.exists(),
    };
    let opened = see_dialog(
        t,
        "the dialog",
        |s| pane.dialog(s),
        || seen(DialogAnswer::NeverOpened, None, None),
    )?;
    let (opened_at, selected_at_open) = (opened.at, opened.selected);
    let arrival = t.rng.millis(300, 2000);
    let reading = t.rng.millis(3500, 5500);
    let arrivals = t.sender().arrive_at(vec![opened_at + arrival]);
    sleep_until(opened_at + reading);
    let (sent, error) = arrivals.join();
    t.records.sent.extend(sent);
    let screen = t.screen()?;
    let answer = match pane.dialog(&screen) {
        None => DialogAnswer::Closed { at_ms: unix_ms() },
        Some(dialog) => {
            // A person answers yes only to the question it read, with the
            // option it saw selected still selected.
            let yes = consent && dialog.selected == selected_at_open;
            let at_ms = t.press(pane.answer(yes))?;
            DialogAnswer::Open {
                selected: dialog.selected,
                at_ms,
            }
        }
    };
    let result = match error {
        Some(error) => Err(error),
        None => finish(t),
    };
    t.records
        .dialogs
        .push(seen(answer, selected_at_open, Some(opened.ms)));
    result
}

/// Row 7: several messages within one second, at idle: five anywhere in
/// the second, or (half the trials) two 0.3 to 1 s apart, the spacing at
/// which a wake or queued turn that claims at once pays for each.
fn burst(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let start = Instant::now() + t.rng.millis(300, 1000);
    let mut offsets: Vec<Duration> = if t.rng.percent(50) {
        (0..5).map(|_| t.rng.millis(0, 999)).collect()
    } else {
        vec![Duration::ZERO, t.rng.millis(300, 1000)]
    };
    offsets.sort();
    t.notes.push(format!(
        "{} messages, offsets {:?} ms",
        offsets.len(),
        offsets.iter().map(Duration::as_millis).collect::<Vec<_>>()
    ));
    let arrivals = t
        .sender()
        .arrive_at(offsets.iter().map(|offset| start + *offset).collect());
    let (sent, error) = arrivals.join();
    t.records.sent.extend(sent);
    if let Some(error) = error {
        return Err(error);
    }
    finish(t)
}

/// Row 8: the adapter is killed while the model's command runs; a message
/// arrives while it is down. An arm without an adapter runs the same
/// timeline with nothing to kill, as the baseline.
fn adapter_loss(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let seconds = 5;
    let text = format!("mock:run {seconds} {}", sentence(t, 3));
    let draft = submit(t, &text)?;
    let command = command_started(t, &draft)?;
    let kill_at = instant_at(command.t) + t.rng.millis(300, 1500);
    let arrival = kill_at + t.rng.millis(0, 1500);
    sleep_until(kill_at);
    match (t.spec.arm, t.adapter_pid()) {
        (_, Some(pid)) => {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            )?;
            t.notes
                .push(format!("killed the adapter (pid {pid}) with SIGKILL"));
        }
        (super::arm::Arm::Aggressive, None) => t.notes.push(
            "no adapter runs in the aggressive arm: nothing to kill; the same timeline runs as the baseline"
                .into(),
        ),
        (_, None) => bail!("the careful arm runs no adapter (no adapter pid file)"),
    }
    sleep_until(arrival);
    t.send_message()?;
    finish(t)
}

/// Rows 9 and 10: after one turn, the typist types the harness's compact or
/// clear command; a message arrives while it is typed or runs. After the
/// command the typist goes on working once the composer is free, which
/// shows in the log whether the conversation was cleared or compacted (a
/// command the log cannot confirm fails its trial).
fn command_around(t: &mut Trial, kind: CommandKind) -> Result<()> {
    start_idle(t)?;
    let before = sentence(t, 4);
    let first = submit(t, &before)?;
    t.wait_turn_done(first.entered_ms)?;
    let text = match kind {
        CommandKind::Compact => t.pane.compact_command(),
        CommandKind::Clear => t.pane.clear_command(),
    };
    let plan = Pace::new(&mut t.rng).line(text);
    let window = plan.duration().as_millis() as u64 + 1500;
    let arrival = t.rng.millis(0, window);
    let start = Instant::now() + Duration::from_millis(100);
    let first_key_ms = unix_ms() + 100;
    let entered_ms = type_while_arriving(t, &plan, start, vec![start + arrival])?;
    t.records.commands.push(Command {
        kind,
        text: text.to_string(),
        first_key_ms,
        entered_ms,
        before: (kind == CommandKind::Clear).then(|| before.clone()),
    });
    t.await_delivery()?;
    {
        let pane = t.pane;
        let free = t.wait_screen("an idle, empty composer", Duration::from_secs(10), |s| {
            super::pane::idle(pane, s)
        });
        match free {
            Ok(_) => {
                let probe = sentence(t, 3);
                let draft = submit(t, &probe)?;
                let since = draft.entered_ms;
                let seen = t.wait_request("the typist's next prompt", PATIENCE, |r| {
                    r.is_turn_call() && r.t >= since
                });
                if seen.is_err() {
                    t.notes.push(format!(
                        "the typist's prompt after {text} reached no model call"
                    ));
                }
            }
            Err(_) => t.notes.push(format!(
                "the composer never emptied after {text}: the typist typed nothing more"
            )),
        }
    }
    t.settle()
}

/// Row 11: the harness crashes (SIGKILL) while the model's command runs; a
/// message arrives while it is dead; a supervisor restarts it through the
/// PTY host three seconds after the crash.
fn crash(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let text = format!("mock:run 8 {}", sentence(t, 3));
    let draft = submit(t, &text)?;
    let command = command_started(t, &draft)?;
    let crash_at = instant_at(command.t) + t.rng.millis(500, 2000);
    let arrival = crash_at + t.rng.millis(0, 2000);
    sleep_until(crash_at);
    t.crash_harness()?;
    sleep_until(arrival);
    t.send_message()?;
    sleep_until(crash_at + Duration::from_secs(3));
    t.restart_harness()?;
    t.wait_ready()?;
    finish(t)
}

/// Row 12: a supervisor types into the terminal with `ding intervene` while a
/// message arrives, in an order the seed decides.
fn intervention(t: &mut Trial) -> Result<()> {
    start_idle(t)?;
    let text = format!("supervisor says {}", sentence(t, 4));
    let start = Instant::now() + Duration::from_millis(300);
    let arrival = t.rng.millis(0, 1000);
    let intervene_at = t.rng.millis(0, 1000);
    let arrivals = t.sender().arrive_at(vec![start + arrival]);
    sleep_until(start + intervene_at);
    let intervened = t.intervene(&text);
    let (sent, error) = arrivals.join();
    t.records.sent.extend(sent);
    intervened?;
    if let Some(error) = error {
        return Err(error);
    }
    finish(t)
}
