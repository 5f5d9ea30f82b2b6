//! How long the real harnesses take to draw what reaches their terminal,
//! measured on the PTY host's own clock: the evidence for the defaults of
//! the send-if fence, which refuses a send-if unless the person's input has
//! been quiet for `quietInputMs` and the output for `settledOutputMs`.
//!
//! Each harness (Claude Code 2.1.328, Codex CLI 0.169.0, installed by
//! `scripts/install-harnesses.sh`) runs model-free under `ding up` against
//! the loopback model server, in the home `ding-eval harness-env` prepares
//! (the project trusted in advance, so no trust dialog is expected). Every
//! time is a host fact: `inputAtMs` after a `send` (origin intervention,
//! a person's input), `outputAtMs` of the watch pushes and of the snapshot
//! whose screen first shows the effect. The series:
//!
//! * a key (`x`) at the idle empty composer: first output, visible in the
//!   composer, last output before output is quiet for [`QUIET_MS`]; then its
//!   Backspace (erase) the same way;
//! * a bracketed paste of [`PASTE_LEN`] bytes on one line: the same three,
//!   then Backspaces clear it;
//! * both again with two busy loops competing for the two cores;
//! * startup of a fresh agent: first output, the empty composer, the last
//!   output before output is quiet for [`STARTUP_QUIET_MS`], all after the
//!   host's start, and whether a dialog showed after the composer.
//!
//! "Visible" is the `outputAtMs` of the first snapshot taken after a push
//! that shows the effect: an upper bound by at most the chunks the host
//! read between the push and the snapshot. Pushes are coalesced, so a
//! "first output" is the latest output at the first push that carried any.
//!
//! Ignored: it measures and never judges a figure, and takes about ten
//! minutes. `make measure-draw` runs it; `DING_DRAW_SCALE` (percent, default
//! 100) scales the trial counts for a quick look. The figures of a run are
//! in `docs/providers/draw-times.md`.

mod support;

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ding::adapter::screen::Screen;
use ding::core::protocol::Composer;
use ding::providers::{claude, codex};
use ding::pty::client::Client;
use ding::pty::wire::{HostStatus, Push, Snapshot, TerminalTimes};
use support::real_pane::{ModelServer, PATIENCE, harness_binary, prepare_harness};
use support::sidecar_agent::Agent;
use support::write;

/// How long output must be quiet before a draw counts as finished and the
/// next trial may begin.
const QUIET_MS: u64 = 1_000;

/// How long output must be quiet before a fresh incarnation counts as
/// drawn.
const STARTUP_QUIET_MS: u64 = 2_000;

const KEY_TRIALS: usize = 40;
const PASTE_TRIALS: usize = 20;
const STARTS: usize = 5;

/// The pasted text's length in bytes: a long single-line prompt.
const PASTE_LEN: usize = 250;

/// The busy loops of the load phase: one per core of the 2-core machine.
const BUSY_LOOPS: usize = 2;

/// What the measurement needs to know of one harness.
struct Harness {
    name: &'static str,
    binary_variable: &'static str,
    api: &'static str,
    /// What the composer row starts with, before the text.
    prompt: &'static str,
    read: fn(&Snapshot) -> (Screen, Composer),
}

fn read_claude(snapshot: &Snapshot) -> (Screen, Composer) {
    let view = claude::screen::read(snapshot);
    (view.screen, view.composer)
}

fn read_codex(snapshot: &Snapshot) -> (Screen, Composer) {
    let view = codex::screen::read(snapshot);
    (view.screen, view.composer)
}

/// Claude Code 2.1.328: `❯` and U+00A0 open the composer row
/// (`src/providers/claude/screen.rs`).
const CLAUDE: Harness = Harness {
    name: "claude",
    binary_variable: "DING_HARNESS_CLAUDE",
    api: "anthropic",
    prompt: "\u{276f}\u{a0}",
    read: read_claude,
};

/// Codex CLI 0.169.0: `› ` opens the composer row
/// (`src/providers/codex/screen.rs`).
const CODEX: Harness = Harness {
    name: "codex",
    binary_variable: "DING_HARNESS_CODEX",
    api: "openai",
    prompt: "\u{203a} ",
    read: read_codex,
};

impl Harness {
    fn idle_empty(&self, snapshot: &Snapshot) -> bool {
        (self.read)(snapshot) == (Screen::Ready, Composer::Empty)
    }

    fn any_dialog(&self, snapshot: &Snapshot) -> bool {
        (self.read)(snapshot).0 == Screen::Dialog
    }

    /// Whether the composer holds exactly `text` at its start (wrapped
    /// rows joined; whitespace, the cursor cell's among it, ignored).
    fn holds(&self, snapshot: &Snapshot, text: &str) -> bool {
        let (screen, composer) = (self.read)(snapshot);
        if screen != Screen::Ready || composer != Composer::Nonempty {
            return false;
        }
        let Some(first) = snapshot
            .rows
            .iter()
            .rposition(|row| row.starts_with(self.prompt))
        else {
            return false;
        };
        let mut shown = snapshot.rows[first][self.prompt.len()..].to_string();
        for row in &snapshot.rows[first + 1..] {
            shown.push_str(row);
        }
        squeezed(&shown).starts_with(&squeezed(text))
    }
}

/// The rows that differ between two screens.
fn changed_rows(then: &Snapshot, now: &Snapshot) -> Vec<usize> {
    (0..then.rows.len().max(now.rows.len()))
        .filter(|&row| then.rows.get(row) != now.rows.get(row))
        .collect()
}

fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A control connection and a watching one to an agent's PTY host.
struct Pane {
    control: Client,
    watcher: Client,
}

impl Pane {
    fn connect(socket: &Path) -> Pane {
        let mut watcher = Client::connect(socket).expect("connect the watcher");
        watcher.watch().expect("watch");
        Pane {
            control: Client::connect(socket).expect("connect"),
            watcher,
        }
    }

    fn status(&mut self) -> HostStatus {
        self.control.status().expect("status")
    }

    fn snapshot(&mut self) -> Snapshot {
        self.control.snapshot().expect("snapshot")
    }

    /// The next revision push above `after`, before `deadline`.
    fn push_above(&mut self, after: u64, deadline: Instant) -> Option<(u64, TerminalTimes)> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.watcher.next_push(left).expect("watch")? {
                Push::Revision { revision, terminal } if revision > after => {
                    return Some((revision, terminal));
                }
                _ => {}
            }
        }
    }

    /// Waits until `ready` holds on a screen whose output has been quiet
    /// for `quiet_ms` on the host's clock; returns that screen. Waits on
    /// pushes; the only timed waits are the rest of a quiet window.
    fn settle(
        &mut self,
        quiet_ms: u64,
        what: &str,
        mut ready: impl FnMut(&Snapshot) -> bool,
    ) -> Snapshot {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let snapshot = self.snapshot();
            let status = self.status();
            let current = status.revision == snapshot.revision;
            let quiet_for = status
                .clock_ms
                .saturating_sub(snapshot.terminal.output_at_ms.unwrap_or(0));
            let ready = ready(&snapshot);
            if current && ready && quiet_for >= quiet_ms {
                return snapshot;
            }
            assert!(
                Instant::now() < deadline,
                "the screen never settled on {what}:\n{}",
                snapshot.rows.join("\n")
            );
            if !current {
                continue;
            }
            let until = if ready {
                Instant::now() + Duration::from_millis(quiet_ms - quiet_for)
            } else {
                deadline
            };
            let _ = self.push_above(snapshot.revision, until.min(deadline));
        }
    }

    /// Writes `bytes` as a person's input (a `send`, origin intervention)
    /// on a settled screen and times its draw until `shown` holds and
    /// output is quiet again.
    fn draw(&mut self, bytes: &[u8], what: &str, shown: impl Fn(&Snapshot) -> bool) -> Draw {
        let before = self.status();
        let screen_before = self.snapshot();
        self.control.send(&[write(bytes)]).expect("send");
        let input_at = self
            .status()
            .terminal
            .input_at_ms
            .expect("a send of origin intervention is input");
        let deadline = Instant::now() + PATIENCE;
        let (mut first_output, mut visible) = (None, None);
        let mut seen = before.revision;
        while first_output.is_none() || visible.is_none() {
            let Some((revision, terminal)) = self.push_above(seen, deadline) else {
                let screen = self.snapshot().rows.join("\n");
                panic!("{what} was never drawn:\n{screen}");
            };
            seen = revision;
            if first_output.is_none() && terminal.output_at_ms > before.terminal.output_at_ms {
                first_output = terminal.output_at_ms;
                let snapshot = self.snapshot();
                if !shown(&snapshot) {
                    let rows = changed_rows(&screen_before, &snapshot);
                    let cursor = (screen_before.cursor, snapshot.cursor);
                    eprintln!(
                        "  {what}: its first output, not yet showing it, changed rows {rows:?}, cursor {cursor:?}"
                    );
                }
            }
            if visible.is_none() {
                let snapshot = self.snapshot();
                if shown(&snapshot) {
                    visible = Some(snapshot);
                }
            }
        }
        let visible = visible.expect("shown");
        let settled = self.settle(QUIET_MS, what, &shown);
        // What the harness drew after the effect showed, for the record.
        for (row, (then, now)) in visible.rows.iter().zip(&settled.rows).enumerate() {
            if then != now {
                eprintln!("  {what}, drawn after it showed, row {row}: {then:?} -> {now:?}");
            }
        }
        let visible = visible.terminal.output_at_ms;
        let after = |at: Option<u64>| at.expect("an output time").saturating_sub(input_at);
        Draw {
            first_output: after(first_output),
            visible: after(visible),
            last_output: after(settled.terminal.output_at_ms),
        }
    }
}

/// One draw, in milliseconds after the input reached the terminal.
#[derive(Clone, Copy, Debug)]
struct Draw {
    first_output: u64,
    visible: u64,
    last_output: u64,
}

/// One fresh start, in milliseconds after the host started.
#[derive(Clone, Debug)]
struct Start {
    child_started: u64,
    first_output: u64,
    composer: u64,
    last_output: u64,
    /// The first snapshot after the composer that read as a dialog.
    dialog: Option<String>,
}

/// Busy loops competing for the cores, ended by pid when dropped.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Load {
        Load(
            (0..BUSY_LOOPS)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("spawn a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A named series of samples in milliseconds.
#[derive(Default)]
struct Series {
    rows: Vec<(String, Vec<u64>)>,
}

impl Series {
    fn add(&mut self, name: String, sample: u64) {
        match self.rows.iter_mut().find(|(row, _)| *row == name) {
            Some((_, samples)) => samples.push(sample),
            None => self.rows.push((name, vec![sample])),
        }
    }

    fn add_draw(&mut self, name: &str, draw: Draw) {
        self.add(format!("{name}: first output"), draw.first_output);
        self.add(format!("{name}: visible"), draw.visible);
        self.add(format!("{name}: last output"), draw.last_output);
    }

    fn table(&self) -> String {
        let mut table =
            String::from("| series | n | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|\n");
        for (name, samples) in &self.rows {
            let mut sorted = samples.clone();
            sorted.sort_unstable();
            let _ = writeln!(
                table,
                "| {name} | {} | {} | {} | {} | {} |",
                sorted.len(),
                percentile(&sorted, 50),
                percentile(&sorted, 90),
                percentile(&sorted, 99),
                sorted.last().copied().unwrap_or(0)
            );
        }
        table
    }
}

/// The nearest-rank percentile of sorted samples: the smallest sample
/// with at least `p` percent of them at or below it.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// `count` scaled by `DING_DRAW_SCALE` percent, at least one.
fn scaled(count: usize) -> usize {
    let percent = std::env::var("DING_DRAW_SCALE")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(100);
    (count * percent / 100).max(1)
}

/// A single line of `PASTE_LEN` printable bytes, words and spaces.
fn paste_text() -> String {
    let words = "please review the parser change in the tokenizer and keep the error spans";
    let mut text = String::new();
    while text.len() < PASTE_LEN {
        text.push_str(words);
        text.push(' ');
    }
    text.truncate(PASTE_LEN - 4);
    text.push_str(" end");
    text
}

fn bracketed(text: &str) -> Vec<u8> {
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~");
    bytes
}

/// A fresh agent of `harness` in its own home, with its model server;
/// prepared, not started.
fn prepared(harness: &Harness, name: &str) -> (Agent, ModelServer) {
    let binary = harness_binary(harness.binary_variable);
    let agent = Agent::new(name, "");
    let model = ModelServer::start(harness.api, &agent.path("model"));
    prepare_harness(&agent, harness.name, &binary, &model);
    (agent, model)
}

/// `ding up` of a prepared agent, started, not awaited (its own process,
/// in the agent's directory and environment).
fn spawn_up(agent: &Agent) -> Child {
    agent
        .command(&["up", "agent.kdl"])
        .stdout(fs::File::create(agent.path("up.out")).expect("stdout file"))
        .stderr(fs::File::create(agent.path("up.err")).expect("stderr file"))
        .spawn()
        .expect("spawn ding up")
}

/// One fresh start of `harness`: the watcher connects as soon as the host's
/// socket answers, and follows the screen until output has been quiet for
/// [`STARTUP_QUIET_MS`].
fn start_once(harness: &Harness, index: usize) -> Start {
    let (agent, model) = prepared(harness, &format!("{}-start{index}", harness.name));
    let socket = agent.paths().pty_socket();
    let mut up = spawn_up(&agent);
    let deadline = Instant::now() + PATIENCE;
    let mut pane = loop {
        if let Ok(mut watcher) = Client::connect(&socket)
            && watcher.watch().is_ok()
        {
            let control = Client::connect(&socket).expect("connect");
            break Pane { control, watcher };
        }
        assert!(
            Instant::now() < deadline,
            "the host's socket never answered"
        );
        // Polls the socket's appearance, as tight as a poll can be.
        thread::sleep(Duration::from_millis(1));
    };
    let status = pane.status();
    let child_started = status.clock_ms.saturating_sub(status.child_for_ms);
    let missed = status.terminal.output_at_ms;
    let mut first_output = missed;
    let mut composer = None;
    let mut dialog = None;
    let mut seen = status.revision;
    while composer.is_none() {
        let Some((revision, terminal)) = pane.push_above(seen, deadline) else {
            panic!(
                "{} never drew its empty composer:\n{}",
                harness.name,
                pane.snapshot().rows.join("\n")
            );
        };
        seen = revision;
        if first_output.is_none() {
            first_output = terminal.output_at_ms;
        }
        let snapshot = pane.snapshot();
        if harness.idle_empty(&snapshot) {
            composer = Some(snapshot);
        }
    }
    let composer = composer.expect("composer");
    // Follows every screen until quiet: a dialog drawn after the composer
    // would take the keys a send-if means for the composer.
    let settled = pane.settle(STARTUP_QUIET_MS, "the fresh start", |snapshot| {
        if dialog.is_none() && harness.any_dialog(snapshot) {
            dialog = Some(snapshot.rows.join("\n"));
        }
        true
    });
    // What the harness drew after its composer, for the record.
    for row in changed_rows(&composer, &settled) {
        eprintln!(
            "  {} start {index}, drawn after the composer, row {row}: {:?} -> {:?}",
            harness.name,
            composer.rows.get(row),
            settled.rows.get(row)
        );
    }
    assert!(up.wait().expect("ding up").success(), "ding up failed");
    assert!(
        model.requests().is_empty(),
        "{} asked the model at startup",
        harness.name
    );
    if let Some(at) = missed {
        eprintln!(
            "{} start {index}: output had begun before the watch (last at {at} ms): first output is an upper bound",
            harness.name
        );
    }
    Start {
        child_started,
        first_output: first_output.expect("output"),
        composer: composer.terminal.output_at_ms.expect("output"),
        last_output: settled.terminal.output_at_ms.expect("output"),
        dialog,
    }
}

/// The key trials on a settled empty composer: `x`, then its Backspace.
fn key_trials(harness: &Harness, pane: &mut Pane, series: &mut Series, phase: &str) {
    for trial in 0..scaled(KEY_TRIALS) {
        pane.settle(QUIET_MS, "the empty composer", |s| harness.idle_empty(s));
        let key = pane.draw(b"x", "the key", |s| harness.holds(s, "x"));
        let erase = pane.draw(b"\x7f", "its Backspace", |s| harness.idle_empty(s));
        eprintln!(
            "{} {phase} key {trial}: {key:?}; erase {erase:?}",
            harness.name
        );
        series.add_draw(&format!("{} key, {phase}", harness.name), key);
        series.add_draw(&format!("{} Backspace, {phase}", harness.name), erase);
    }
}

/// The paste trials on a settled empty composer; Backspaces clear each.
fn paste_trials(harness: &Harness, pane: &mut Pane, series: &mut Series, phase: &str) {
    let text = paste_text();
    let bytes = bracketed(&text);
    for trial in 0..scaled(PASTE_TRIALS) {
        pane.settle(QUIET_MS, "the empty composer", |s| harness.idle_empty(s));
        let paste = pane.draw(&bytes, "the paste", |s| harness.holds(s, &text));
        eprintln!("{} {phase} paste {trial}: {paste:?}", harness.name);
        series.add_draw(
            &format!("{} paste {PASTE_LEN} B, {phase}", harness.name),
            paste,
        );
        // Backspaces: Ctrl-U left the whole wrapped paste in both harnesses.
        pane.control
            .send(&[write(&[0x7f; PASTE_LEN + 8])])
            .expect("Backspaces");
    }
}

fn measure(harness: &Harness, series: &mut Series, notes: &mut Vec<String>) {
    let version = Command::new(harness_binary(harness.binary_variable))
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .expect("the harness's version");
    notes.push(format!(
        "{}: {}",
        harness.name,
        String::from_utf8_lossy(&version.stdout).trim()
    ));
    for index in 0..scaled(STARTS) {
        let start = start_once(harness, index);
        eprintln!("{} start {index}: {start:?}", harness.name);
        let name = format!("{} start", harness.name);
        series.add(format!("{name}: child started"), start.child_started);
        series.add(format!("{name}: first output"), start.first_output);
        series.add(format!("{name}: empty composer"), start.composer);
        series.add(format!("{name}: last output"), start.last_output);
        if let Some(screen) = start.dialog {
            notes.push(format!(
                "{} start {index}: a dialog after the composer:\n{screen}",
                harness.name
            ));
        }
    }
    let (agent, _model) = prepared(harness, &format!("{}-draw", harness.name));
    agent.up(&[]);
    let mut pane = Pane::connect(&agent.paths().pty_socket());
    pane.settle(STARTUP_QUIET_MS, "the empty composer", |s| {
        harness.idle_empty(s)
    });
    key_trials(harness, &mut pane, series, "idle");
    paste_trials(harness, &mut pane, series, "idle");
    let load = Load::start();
    key_trials(harness, &mut pane, series, "2 busy loops");
    paste_trials(harness, &mut pane, series, "2 busy loops");
    drop(load);
}

#[test]
#[ignore = "a measurement of the real harnesses, about ten minutes: make measure-draw"]
fn the_real_harnesses_draw_times_are_measured() {
    let mut series = Series::default();
    let mut notes = Vec::new();
    let began = Instant::now();
    for harness in [&CLAUDE, &CODEX] {
        measure(harness, &mut series, &mut notes);
    }
    println!(
        "\ndraw times in ms on the PTY host's clock (key and paste: after the input; start: after the host started), took {:?}\n",
        began.elapsed()
    );
    println!("{}", series.table());
    for note in notes {
        println!("{note}");
    }
}
