//! Shared harness for the real-pane tests: a real harness binary installed
//! by `scripts/install-harnesses.sh`, the loopback model server run as the
//! real `ding-eval model-server` process, and the real-pane smoke subset of
//! the A/B evaluation, which runs the very trial runner `make eval` runs
//! (`ding-eval trial`, from outside, as a user runs the evaluation) and
//! asserts on the facts it prints.
//!
//! Provider names stay in the provider tests: this file takes them as
//! arguments.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use ding::pty::wire::Snapshot;
use serde_json::Value;

use super::processes;
use super::quiet::until_quiet;
use super::sidecar_agent::{Agent, DING, DING_EVAL, message};

/// How long a real harness may take for any awaited step. Generous: the
/// machine is shared, and waiting polls, so a passing test never waits
/// this long.
pub const PATIENCE: Duration = Duration::from_secs(45);

const INSTALL_SCRIPT: &str = "scripts/install-harnesses.sh";

/// The installed binary that the install script names `variable` (e.g.
/// `DING_HARNESS_...`). Fails, never skips, when the harnesses are not
/// installed.
pub fn harness_binary(variable: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(INSTALL_SCRIPT);
    let output = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .stdin(Stdio::null())
        .output()
        .expect("run the install script");
    assert!(
        output.status.success(),
        "the pinned real harnesses are not installed: run {INSTALL_SCRIPT} (make harnesses; make test does it)\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let path = stdout
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{variable}=")))
        .unwrap_or_else(|| panic!("{INSTALL_SCRIPT} --check names no {variable}: {stdout}"));
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "{} is missing: run {INSTALL_SCRIPT}",
        path.display()
    );
    path
}

/// A running `ding-eval model-server`, killed by pid when dropped.
pub struct ModelServer {
    process: Child,
    pub log: PathBuf,
    pub port: u16,
}

impl ModelServer {
    /// Starts a server speaking `api`, logging into `dir`, and waits for
    /// its port file.
    pub fn start(api: &str, dir: &Path) -> ModelServer {
        fs::create_dir_all(dir).expect("model server dir");
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        let process = Command::new(DING_EVAL)
            .args(["model-server", "--api", api, "--log"])
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.join("stderr")).expect("stderr file"))
            .spawn()
            .expect("spawn ding-eval model-server");
        let mut server = ModelServer {
            process,
            log,
            port: 0,
        };
        server.port = wait_until(
            "the model server's port file",
            Duration::from_secs(10),
            || fs::read_to_string(&port_file).ok()?.trim().parse().ok(),
        );
        server
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.process.id()).expect("pid")
    }

    /// Every request logged so far, one JSON object per line (a last line
    /// still being written is not one yet).
    pub fn requests(&self) -> Vec<Value> {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete
            .lines()
            .map(|line| serde_json::from_str(line).expect("each log line is JSON"))
            .collect()
    }

    /// Waits until a logged request satisfies `wanted`; returns it.
    pub fn wait_request(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let requests = self.requests();
            if let Some(found) = requests.iter().find(|request| wanted(request)) {
                return found.clone();
            }
            assert!(
                Instant::now() < deadline,
                "the model server never saw {what}; it logged:\n{}",
                summary(&requests)
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// One line per logged request: seq, class, turn, call, prompt.
pub fn summary(requests: &[Value]) -> String {
    requests
        .iter()
        .map(|r| {
            format!(
                "{} {} {} turn={} call={} prompt={}",
                r["seq"], r["path"], r["class"], r["turn"], r["callInTurn"], r["prompt"]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether any text the model saw in `request` contains `needle`.
pub fn carries(request: &Value, needle: &str) -> bool {
    request["texts"].as_array().is_some_and(|texts| {
        texts
            .iter()
            .any(|text| text["text"].as_str().is_some_and(|t| t.contains(needle)))
    })
}

/// Prepares `harness`'s scratch home under the agent's directory with the
/// real `ding-eval harness-env`, writing the agent's declaration, and
/// returns the printed launch.
pub fn prepare_harness(agent: &Agent, harness: &str, binary: &Path, model: &ModelServer) -> Value {
    let declaration = agent.declaration();
    let home = agent.path("home");
    let project = agent.path("project");
    let args = [
        "harness-env",
        harness,
        "--binary",
        binary.to_str().expect("utf-8 binary path"),
        "--home",
        home.to_str().expect("utf-8 home"),
        "--cwd",
        project.to_str().expect("utf-8 project"),
        "--model-url",
        &model.url(),
        "--permission",
        "manual",
        "--decl",
        declaration.to_str().expect("utf-8 declaration"),
        "--agent",
        &agent.name,
    ];
    serde_json::from_str(&agent.ding_eval_ok(&args)).expect("the launch is JSON")
}

/// Waits until the agent's PTY snapshot satisfies `ready`, re-checking on
/// every revision push; returns it. Fails with the last screen.
pub fn wait_screen(agent: &Agent, what: &str, ready: impl Fn(&Snapshot) -> bool) -> Snapshot {
    super::wait_snapshot(&agent.paths().pty_socket(), PATIENCE, what, ready)
}

/// Starts the declared agent with `ding up` and waits until `empty_composer`
/// holds on its screen; checks that the harness asked the model nothing on
/// the way. Returns how long it took.
pub fn up_until_empty_composer(
    agent: &Agent,
    model: &ModelServer,
    empty_composer: impl Fn(&Snapshot) -> bool,
) -> Duration {
    let started = Instant::now();
    agent.up(&[]);
    wait_screen(agent, "the empty composer", empty_composer);
    let took = started.elapsed();
    eprintln!("the empty composer showed {took:?} after ding up began");
    let requests = model.requests();
    assert!(
        requests.is_empty(),
        "the harness made requests at startup:\n{}",
        summary(&requests)
    );
    took
}

/// Sends one inbox message with `ding send` and waits until a model call
/// carries its exact filename: under the default policy, DING's notice is
/// the prompt of the conversation's first turn. Then waits for the mock
/// model's reply on the screen. Returns that request's log line.
pub fn deliver_one_message(agent: &Agent, model: &ModelServer) -> Value {
    fs::write(agent.path("task.md"), "please look at the parser\n").expect("message");
    let sent = agent.ding_ok(&["send", &agent.name, "task.md", "--decl", "agent.kdl"]);
    let filename = sent.trim().to_string();
    let request = model.wait_request(&format!("a model call carrying {filename}"), |request| {
        carries(request, &filename) && request["callInTurn"].is_u64()
    });
    let log = summary(&model.requests());
    assert_eq!(request["class"], "prompt", "{log}");
    assert_eq!(request["turn"], 1, "{log}");
    assert_eq!(request["callInTurn"], 1, "{log}");
    assert!(
        prompt_is_one_notice(&request),
        "the notice is the prompt: {}",
        request["prompt"]
    );
    wait_screen(agent, "the mock model's reply", |snapshot| {
        shows(snapshot, "mock reply to turn 1.")
    });
    request
}

/// Whether the request's prompt is DING's notice for one message.
pub fn prompt_is_one_notice(request: &Value) -> bool {
    request["prompt"]
        .as_str()
        .is_some_and(|prompt| prompt.starts_with("[ding] 1 unread inbox message"))
}

/// Waits for a model call carrying the exact filename `name`.
pub fn wait_carrying(model: &ModelServer, name: &str) -> Value {
    // A title request (Codex asks for the thread's title from its first
    // prompt, sometimes before the prompt's own call) carries the text too,
    // but it is no call of a turn: titles are apart, as in `report`.
    model.wait_request(&format!("a model call carrying {name}"), |request| {
        request["class"] != "title" && carries(request, name)
    })
}

/// Whether any row of `snapshot` contains `text`.
pub fn shows(snapshot: &Snapshot, text: &str) -> bool {
    snapshot.rows.iter().any(|row| row.contains(text))
}

/// Polls `probe` until it answers, failing after `patience`.
pub fn wait_until<T>(what: &str, patience: Duration, probe: impl Fn() -> Option<T>) -> T {
    let deadline = Instant::now() + patience;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// What the PTY host's log says was written into the terminal, in bytes:
/// DING's deliveries apart from a person's (or a test's) interventions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PtyWrites {
    pub delivery_bytes: u64,
    pub deliveries: u64,
    pub intervention_bytes: u64,
}

pub fn pty_writes(agent: &Agent) -> PtyWrites {
    let log = fs::read_to_string(agent.paths().pty_log()).unwrap_or_default();
    let mut writes = PtyWrites::default();
    for line in log.lines() {
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let bytes = record["bytes"].as_u64().unwrap_or(0);
        match record["event"].as_str() {
            Some("delivery") => {
                writes.deliveries += 1;
                writes.delivery_bytes += bytes;
            }
            Some("intervention") => writes.intervention_bytes += bytes,
            _ => {}
        }
    }
    writes
}

/// The model calls of turns in `requests` (prompts and tool results, not
/// titles, compactions or token counts).
pub fn model_calls(requests: &[Value]) -> usize {
    requests
        .iter()
        .filter(|request| request["callInTurn"].is_u64())
        .count()
}

/// Types `text` into the agent's terminal one keystroke at a time, as a
/// person would (each one an intervention, never DING delivery), and
/// waits until the screen shows it.
pub fn type_keystrokes(agent: &Agent, text: &str) {
    for key in text.chars() {
        agent.ding_ok(&["intervene", &agent.name, &key.to_string(), "--no-enter"]);
    }
    wait_screen(agent, &format!("the typed {text:?}"), |snapshot| {
        shows(snapshot, text)
    });
}

/// Presses Return in the agent's terminal, as a person would.
pub fn press_enter(agent: &Agent) {
    agent.ding_ok(&["intervene", &agent.name, "\r", "--no-enter"]);
}

/// A person answers the open dialog (`open` reads it on the screen) with
/// Return, and presses again if it is still there after a moment: Claude
/// Code 2.1.328 ignores keys for a moment after a permission dialog opens
/// (a Return 0.3 s after it showed was dropped; one after 1.5 s was taken),
/// so a person pressing at once presses twice. At most three times.
pub fn answer_with_enter(agent: &Agent, open: impl Fn(&Snapshot) -> bool) {
    answer_with(agent, "\r", open);
}

/// A person answers the open dialog with `key`, pressing again (at most
/// three times) while it is still there a moment later, as
/// [`answer_with_enter`] does.
pub fn answer_with(agent: &Agent, key: &str, open: impl Fn(&Snapshot) -> bool) {
    for _ in 0..3 {
        agent.ding_ok(&["intervene", &agent.name, key, "--no-enter"]);
        if closes_within(agent, Duration::from_secs(2), &open) {
            return;
        }
    }
    let screen = ding::pty::client::Client::connect(&agent.paths().pty_socket())
        .and_then(|mut reader| reader.snapshot())
        .map(|snapshot| snapshot.rows.join("\n"))
        .unwrap_or_else(|err| format!("(unreadable: {err})"));
    panic!("the dialog never took {key:?}; the screen shows:\n{screen}");
}

/// Whether the screen stops satisfying `open` within `patience`, checked
/// on every revision push.
fn closes_within(agent: &Agent, patience: Duration, open: &impl Fn(&Snapshot) -> bool) -> bool {
    let socket = agent.paths().pty_socket();
    let mut watcher = ding::pty::client::Client::connect(&socket).expect("connect");
    let mut revision = watcher.watch().expect("watch");
    let mut reader = ding::pty::client::Client::connect(&socket).expect("connect");
    let deadline = Instant::now() + patience;
    loop {
        let snapshot = reader.snapshot().expect("snapshot");
        if !open(&snapshot) {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        if let Some(seen) = watcher
            .wait_revision_above(revision.max(snapshot.revision), left)
            .expect("watch")
        {
            revision = seen;
        }
    }
}

/// The evaluation's matrix rows the smoke tests run, by number
/// (docs/evaluation.md).
pub mod row {
    pub const DURING_TURN: u32 = 3;
    pub const EXACT_IDLE: u32 = 4;
    pub const DRAFT: u32 = 5;
    pub const DIALOG: u32 = 6;
    pub const BURST: u32 = 7;
}

/// The evaluation's two arms.
pub const AGGRESSIVE: &str = "aggressive";
pub const CAREFUL: &str = "careful";

/// The evaluation's quiet window: nothing new for this long and a
/// scenario has settled (`ding-eval`'s `trial::QUIET`).
pub const QUIET: Duration = Duration::from_millis(1500);

/// The longest a counted scenario waits to settle (`ding-eval`'s
/// `trial::SETTLE_PATIENCE`).
pub const SETTLE_PATIENCE: Duration = Duration::from_secs(30);

/// The real harnesses are heavy and the machine small: one trial at a
/// time in each test binary.
static ONE_TRIAL_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The seed of a smoke trial: `DING_EVAL_SEED` when set (to replay a
/// printed one), else fresh. Never chosen to make a row pass.
pub fn smoke_seed() -> u64 {
    std::env::var("DING_EVAL_SEED")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or_else(fresh_seed)
}

/// A seed from the clock and the process.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    (nanos as u64) ^ (u64::from(std::process::id()) << 32)
}

/// What one trial found, as `ding-eval trial` prints it (the evaluation's
/// `TrialFacts`, in JSON).
pub struct Facts {
    pub json: Value,
    evidence_dir: PathBuf,
}

/// Runs one trial of `row` in `arm` on the real `harness` with
/// `ding-eval trial`, the runner `make eval` uses; prints its summary and
/// seed, keeps its logs under the test target's tmp directory (until
/// [`passed`]), and checks that no process of the trial is left.
pub fn smoke_trial(harness: &str, row: u32, arm: &str, seed: u64) -> Facts {
    let _one = ONE_TRIAL_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let binary = harness_binary(&format!("DING_HARNESS_{}", harness.to_ascii_uppercase()));
    let evidence_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("eval-smoke")
        .join(format!("{harness}-row{row}-{arm}-seed{seed}"));
    let output = Command::new(DING_EVAL)
        .args(["trial", "--harness", harness, "--binary"])
        .arg(&binary)
        .args(["--row", &row.to_string(), "--arm", arm])
        .args(["--seed", &seed.to_string(), "--evidence"])
        .arg(&evidence_dir)
        .args(["--ding", DING])
        .stdin(Stdio::null())
        .output()
        .expect("run ding-eval trial");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "ding-eval trial: {said}");
    let json: Value = serde_json::from_slice(&output.stdout).expect("the trial's facts");
    eprintln!("{} (evidence: {})", said.trim_end(), evidence_dir.display());
    assert_eq!(
        json["leftAlive"],
        serde_json::json!([]),
        "alive after SIGKILL"
    );
    if let Some(scratch) = json["scratchDir"].as_str().filter(|dir| !dir.is_empty()) {
        let runtime = Path::new(scratch).join("run");
        let left = processes::with_variable("XDG_RUNTIME_DIR", &runtime);
        assert!(left.is_empty(), "processes of the trial left: {left:?}");
    }
    Facts { json, evidence_dir }
}

/// The trial's assertions held: its logs are not kept.
pub fn passed(facts: &Facts) {
    let _ = fs::remove_dir_all(&facts.evidence_dir);
}

/// The metrics of a trial that ran to its end (the evaluation's
/// `Metrics`, in JSON).
pub fn ran(facts: &Facts) -> &Value {
    assert_eq!(
        facts.json["outcome"]["status"],
        "ran",
        "the workload was not driven to its end (evidence: {}): {}",
        facts.evidence_dir.display(),
        facts.json["outcome"]
    );
    &facts.json["metrics"]
}

/// A whole-number metric.
pub fn count(metrics: &Value, name: &str) -> u64 {
    metrics[name]
        .as_u64()
        .unwrap_or_else(|| panic!("no count {name} in {metrics}"))
}

/// Whether the trial's person typed no line (the metrics' drafts).
fn typed_nothing(metrics: &Value) -> bool {
    metrics["drafts"].as_array().is_none_or(Vec::is_empty)
}

/// Whether this run also checks the harm the aggressive arm does where the
/// careful one must not (rows 5 and 6: a draft glued, a dialog answered):
/// the baseline the evaluation measures, not the product's bar. `make
/// test-real` sets `DING_REAL_PANE_BASELINE=1`; `make test` runs the
/// careful arm of those rows alone.
pub fn baseline_wanted() -> bool {
    std::env::var_os("DING_REAL_PANE_BASELINE").is_some_and(|value| value == "1")
}

/// The careful arm's acceptance on one row: every message delivered, no
/// draft corrupted, no dialog answered by DING, and, given the aggressive
/// arm's metrics on the same seed, no more model calls per delivered
/// message than it. Only a provider with no adapter in the registry may
/// skip it, and its trial must say exactly that. Returns the careful
/// trial's metrics, for what a row asks of one provider beyond the bar.
pub fn careful_meets_the_bar(
    harness: &str,
    row: u32,
    seed: u64,
    aggressive: Option<&Value>,
) -> Option<Value> {
    let facts = smoke_trial(harness, row, CAREFUL, seed);
    let has_adapter = ding::providers::by_harness(harness).is_some();
    if !has_adapter && facts.json["outcome"]["status"] == "not-run" {
        let reason = &facts.json["outcome"]["reason"];
        assert_eq!(reason, "careful arm: not available (no adapter)");
        eprintln!("{harness} row {row}: {reason}: only the aggressive baseline was checked");
        passed(&facts);
        return None;
    }
    let m = ran(&facts);
    let messages = &m["messages"];
    assert_eq!(
        count(m, "lost"),
        0,
        "careful arm lost a message: {messages}"
    );
    let drafts = &m["drafts"];
    assert_eq!(
        count(m, "draftsCorrupted"),
        0,
        "careful arm corrupted: {drafts}"
    );
    let dialogs = &m["dialogs"];
    assert_eq!(
        count(m, "dialogsAnsweredByDing"),
        0,
        "careful arm answered: {dialogs}"
    );
    // Calls per delivered message, the verdict's measure (EVAL-14): where
    // the aggressive arm delivered nothing (it lost the notice in a
    // dialog) it skipped the calls of that work, and there is nothing to
    // compare. One trial compares them only where the person did nothing
    // in row 4: when they type or press Esc around DING's act, either
    // arm's count follows the harness's timing on that one seed, which the
    // evaluation's intervals over many seeds decide (EVAL-18).
    let (delivered, calls) = (count(m, "delivered"), count(&m["calls"], "turnCalls"));
    let Some(aggressive) = aggressive else {
        eprintln!("{harness} row {row}: no aggressive baseline run (make test-real runs it)");
        passed(&facts);
        return Some(m.clone());
    };
    let aggressive_delivered = count(aggressive, "delivered");
    let aggressive_calls = count(&aggressive["calls"], "turnCalls");
    if aggressive_delivered > 0 && (row != row::EXACT_IDLE || typed_nothing(m)) {
        assert!(
            calls * aggressive_delivered <= aggressive_calls * delivered,
            "careful arm: {calls} model calls for {delivered} delivered, against \
             {aggressive_calls} for {aggressive_delivered} aggressive"
        );
    }
    passed(&facts);
    Some(m.clone())
}

/// Row 4 on `harness`: at exact idle, when the person does nothing
/// meanwhile (no line of theirs: neither the typing nor the Esc variant),
/// the aggressive arm delivers the message with one model call of a turn
/// it started and one ring. With the person's Esc around its act, the
/// harness may keep its notice unsent in the composer, which the person
/// then clears (lost, as the evaluation counts it). Then the careful arm.
pub fn exact_idle_row(harness: &str) -> Option<Value> {
    let seed = smoke_seed();
    let facts = smoke_trial(harness, row::EXACT_IDLE, AGGRESSIVE, seed);
    let m = ran(&facts);
    if typed_nothing(m) {
        let messages = &m["messages"];
        assert_eq!(
            (count(m, "delivered"), count(m, "lost")),
            (1, 0),
            "{messages}"
        );
        assert_eq!(count(&m["calls"], "deliveryCalls"), 1, "{}", m["calls"]);
        assert_eq!(
            count(&m["pty"], "deliveryWrites"),
            1,
            "one ring: {}",
            m["pty"]
        );
    }
    assert_eq!(count(m, "duplicates"), 0);
    let careful = careful_meets_the_bar(harness, row::EXACT_IDLE, seed, Some(m));
    passed(&facts);
    careful
}

/// Row 5 on `harness`: a message arriving while the typist's draft is in
/// progress is glued to the draft by the aggressive arm and submitted with
/// it (measured by hand in the evaluation issue); then the careful arm.
/// Without the baseline (`baseline_wanted`), the careful arm alone.
pub fn draft_row(harness: &str) -> Option<Value> {
    let seed = smoke_seed();
    if !baseline_wanted() {
        return careful_meets_the_bar(harness, row::DRAFT, seed, None);
    }
    let facts = smoke_trial(harness, row::DRAFT, AGGRESSIVE, seed);
    let m = ran(&facts);
    assert_eq!(count(m, "draftsCorrupted"), 1, "the draft: {}", m["drafts"]);
    let draft = &m["drafts"][0];
    assert_eq!(draft["outcome"], "altered", "{draft}");
    let pieces = draft["pieces"].as_array().expect("pieces");
    assert!(
        pieces
            .iter()
            .any(|piece| piece.as_str().is_some_and(|piece| piece.contains("[ding]"))),
        "glued to the notice: {draft}"
    );
    assert_eq!(count(m, "delivered"), 1, "{}", m["messages"]);
    let careful = careful_meets_the_bar(harness, row::DRAFT, seed, Some(m));
    passed(&facts);
    careful
}

/// How the evaluation names a command's permission dialog.
const COMMAND_PERMISSION: &str = "command permission";

/// Row 6 on `harness`: a message arriving while a dialog is open makes the
/// aggressive arm answer the dialog (its Return), whatever its kind, and
/// when it is a command's permission the notice is lost too (measured by
/// hand in the evaluation issue); then the careful arm. Without the
/// baseline (`baseline_wanted`), the careful arm alone.
pub fn dialog_row(harness: &str) -> Option<Value> {
    let seed = smoke_seed();
    if !baseline_wanted() {
        return careful_meets_the_bar(harness, row::DIALOG, seed, None);
    }
    let facts = smoke_trial(harness, row::DIALOG, AGGRESSIVE, seed);
    let m = ran(&facts);
    let dialogs = &m["dialogs"];
    assert_eq!(
        count(m, "dialogsAnsweredByDing"),
        1,
        "the dialog: {dialogs}"
    );
    if dialogs[0]["kind"] == COMMAND_PERMISSION {
        let messages = &m["messages"];
        assert_eq!(
            (count(m, "delivered"), count(m, "lost")),
            (0, 1),
            "{messages}"
        );
    }
    let careful = careful_meets_the_bar(harness, row::DIALOG, seed, Some(m));
    passed(&facts);
    careful
}

/// Sets `agent` up the way a user would, for the real `harness` prepared in
/// `launch` (what `prepare_harness` printed): `ding hooks install` into
/// `$ST_HOOKS`, `ding compile-agent HARNESS` with the launch's argv and
/// every variable but `secret` (idle path `idle_path`), then `ding up` with
/// the secret in its environment only. Checks that the declaration holds
/// no secret and names the literal `$ST_HOOKS/HARNESS-ding-adapter`.
pub fn compile_and_up(
    agent: &Agent,
    harness: &str,
    launch: &Value,
    idle_path: &str,
    secret: (&str, &str),
) {
    compile(agent, harness, launch, idle_path, secret);
    up(agent, secret);
}

/// The documented setup before `ding up`: `ding hooks install`, then
/// `ding compile-agent HARNESS` with the launch's environment as `--env`
/// (the secret left out) and its argv after `--`.
pub fn compile(
    agent: &Agent,
    harness: &str,
    launch: &Value,
    idle_path: &str,
    secret: (&str, &str),
) {
    let hooks = agent.path("hooks");
    agent.ding_ok(&["hooks", "install", hooks.to_str().expect("utf-8")]);
    let mut args = vec![
        "compile-agent".to_string(),
        harness.into(),
        "--name".into(),
        agent.name.clone(),
        "--cwd".into(),
        launch["cwd"].as_str().expect("cwd").into(),
        "--out".into(),
        "agent.kdl".into(),
        "--idle-path".into(),
        idle_path.into(),
    ];
    for (key, value) in launch["env"].as_object().expect("env") {
        if key != secret.0 {
            args.extend([
                "--env".into(),
                format!("{key}={}", value.as_str().expect("value")),
            ]);
        }
    }
    args.push("--".into());
    args.extend(
        launch["argv"]
            .as_array()
            .expect("argv")
            .iter()
            .map(|arg| arg.as_str().expect("arg").to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    agent.ding_ok(&args);
    let declaration = fs::read_to_string(agent.declaration()).expect("declaration");
    assert!(
        !declaration.contains(secret.1),
        "no secret in the declaration"
    );
    assert!(
        declaration.contains(&format!("\"$ST_HOOKS/{harness}-ding-adapter\"")),
        "{declaration}"
    );
}

/// `ding up` of the compiled declaration, the secret only in its
/// environment.
pub fn up(agent: &Agent, secret: (&str, &str)) {
    let env = format!("{}={}", secret.0, secret.1);
    let up = agent.ding_under(&["env", &env], &["up", "agent.kdl"]);
    assert!(up.status.success(), "ding up: {up:?}");
}

/// Sends one message with `ding send`; returns its filename.
pub fn send_message(agent: &Agent, body: &str) -> String {
    fs::write(agent.path("task.md"), body).expect("message");
    agent
        .ding_ok(&["send", &agent.name, "task.md", "--decl", "agent.kdl"])
        .trim()
        .to_string()
}

/// Sends one message before the agent ever ran (`ding send --create`
/// makes its inbox); returns its filename.
pub fn send_before_up(agent: &Agent, body: &str) -> String {
    fs::write(agent.path("task.md"), body).expect("message");
    agent
        .ding_ok(&[
            "send",
            &agent.name,
            "task.md",
            "--decl",
            "agent.kdl",
            "--create",
        ])
        .trim()
        .to_string()
}

/// Sends `count` messages as fast as `ding send` goes; their filenames.
pub fn send_burst(agent: &Agent, count: usize) -> Vec<String> {
    (0..count)
        .map(|n| send_message(agent, &format!("part {n}\n")))
        .collect()
}

/// Whether status shows the message `name` pending and held, whatever the
/// hold's reason.
pub fn held_for_a_reason(status: &Value, name: &str) -> bool {
    message(status, name).is_some_and(|m| m["state"] == "pending" && m["hold"]["code"].is_string())
}

/// Waits until the message `name` is hook-owned (in a context).
pub fn wait_hook_owned(agent: &Agent, name: &str) -> Value {
    agent.wait_status_every(
        Duration::from_millis(50),
        PATIENCE,
        &format!("{name} hook-owned"),
        |status| message(status, name).is_some_and(|m| m["state"] == "hook-owned"),
    )
}

/// The end of a counted scenario: once no request and no delivery has come
/// for the evaluation's quiet window, exactly `calls` model calls of turns
/// and `typed` bytes typed by DING, then the counts printed for the record
/// (title requests apart).
pub fn settled(what: &str, agent: &Agent, model: &ModelServer, calls: usize, typed: u64) {
    // Counted once nothing new has come for the evaluation's quiet window:
    // a call or a delivery that comes after the screen looked settled
    // is counted, not missed.
    until_quiet(what, QUIET, SETTLE_PATIENCE, || {
        (model.requests().len(), pty_writes(agent).deliveries)
    });
    let requests = model.requests();
    assert_eq!(
        model_calls(&requests),
        calls,
        "{what}\n{}",
        summary(&requests)
    );
    let writes = pty_writes(agent);
    assert_eq!(writes.delivery_bytes, typed, "{what}: bytes DING typed");
    report(what, agent, model);
}

/// Prints a scenario's counts: model calls of turns (titles apart), DING's
/// deliveries and their bytes, a person's interventions.
pub fn report(what: &str, agent: &Agent, model: &ModelServer) {
    let requests = model.requests();
    let titles = requests
        .iter()
        .filter(|request| request["class"] == "title")
        .count();
    let writes = pty_writes(agent);
    eprintln!(
        "{what}: model calls {} (+{titles} title), DING deliveries {} ({} bytes), interventions {} bytes",
        model_calls(&requests),
        writes.deliveries,
        writes.delivery_bytes,
        writes.intervention_bytes
    );
}

/// Live processes whose environment has `NAME=VALUE` and whose command line
/// contains `needle`.
pub fn processes_with(name: &str, value: &Path, needle: &str) -> Vec<i32> {
    processes::with_variable(name, value)
        .into_iter()
        .filter(|found| found.command.contains(needle))
        .map(|found| found.pid)
        .collect()
}

/// The live processes whose environment has `NAME=VALUE` and whose command
/// line contains `needle`, once they had up to `patience` to exit on their
/// own; each still there is ended by its pid (SIGTERM, then SIGKILL after
/// five seconds). Returns those it ended.
pub fn end_leftovers(name: &str, value: &Path, needle: &str, patience: Duration) -> Vec<i32> {
    let deadline = Instant::now() + patience;
    let mut left = processes_with(name, value, needle);
    while !left.is_empty() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
        left = processes_with(name, value, needle);
    }
    let survivors = processes::end(&left, Duration::from_secs(5));
    assert!(survivors.is_empty(), "alive after SIGKILL: {survivors:?}");
    left
}

/// The human-draft scenario shared by the careful providers: the human
/// types `draft` key by key and a message arrives. No turn is woken under
/// the half-typed line: the message is held with the draft as the reason,
/// nothing reaches the model and DING types nothing; one row stays exactly
/// `prompt` followed by the draft (the composer reads as not empty,
/// `nonempty`). Return then submits exactly the draft, and the held file
/// rides that very request.
pub fn a_draft_holds_the_delivery_and_the_work_rides_its_prompt(
    agent: &Agent,
    model: &ModelServer,
    draft: &str,
    prompt: &str,
    nonempty: impl Fn(&Snapshot) -> bool,
) {
    type_keystrokes(agent, draft);
    let name = send_message(agent, "a review request\n");
    agent.wait_held(&name, "composer-nonempty");
    let shown = wait_screen(agent, "the draft, whole", |snapshot| {
        nonempty(snapshot)
            && snapshot
                .rows
                .iter()
                .any(|row| row.trim_end() == format!("{prompt}{draft}"))
    });
    assert!(nonempty(&shown));
    assert!(
        !model
            .requests()
            .iter()
            .any(|request| carries(request, &name)),
        "a turn was woken under the draft: {}",
        summary(&model.requests())
    );
    assert_eq!(pty_writes(agent).delivery_bytes, 0);
    press_enter(agent);
    let submitted = model.wait_request("the draft submitted", |request| {
        request["prompt"].as_str() == Some(draft)
    });
    assert!(
        carries(&submitted, &name),
        "the held file rides the same request: {}",
        submitted["texts"]
    );
    wait_hook_owned(agent, &name);
}

/// Waits until `ready` holds on a screen that then stays unchanged (no
/// new revision) for `quiet`, as a person reads a screen before acting on
/// it; returns that screen. Waits on revision pushes; the only timed wait
/// is the rest of the quiet window.
pub fn wait_unchanged(
    agent: &Agent,
    what: &str,
    quiet: std::time::Duration,
    ready: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    let socket = agent.paths().pty_socket();
    let mut watcher = ding::pty::client::Client::connect(&socket).expect("connect");
    let mut revision = watcher.watch().expect("watch");
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let snapshot = wait_screen(agent, what, &ready);
        // The watch began before the snapshot: a change after it is a
        // revision above the snapshot's.
        let window = quiet.min(deadline.saturating_duration_since(std::time::Instant::now()));
        match watcher
            .wait_revision_above(revision.max(snapshot.revision), window)
            .expect("watch")
        {
            None => return snapshot,
            Some(seen) => revision = seen,
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the screen never stayed on {what}"
        );
    }
}

/// One trial of a person closing a dialog with Esc and pressing Esc again
/// a moment later (issue 39, item 3), with a message sent just after the
/// closing: when DING's turn for it began after the closing Esc, and
/// whether the second Esc interrupted it.
#[derive(Debug)]
pub struct SecondEsc {
    /// When the second Esc was pressed, after the Esc that closed the
    /// dialog.
    pub offset: Duration,
    /// When the first model request carrying the message came, after the
    /// closing Esc (ms, on the model server's clock).
    pub turn_after_close_ms: i64,
    /// When it came after the second Esc (ms; negative: before it).
    pub turn_after_second_esc_ms: i64,
    /// It began within 1 s after one of the person's keys (the closing
    /// Esc or the second): a key pressed then would have met it.
    pub within_a_second_of_a_key: bool,
    /// Model requests whose latest prompt carried the message (more than
    /// one: a turn of DING's was cut short and the notice came again).
    pub carrying: usize,
    /// The screen said a turn was interrupted after the second Esc, or the
    /// message was carried again (DING's turn was cut short).
    pub interrupted: bool,
}

fn unix_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock");
    i64::try_from(now.as_millis()).expect("ms")
}

/// Rows of `snapshot` that say a turn was interrupted.
fn interrupted_rows(snapshot: &Snapshot) -> usize {
    snapshot
        .rows
        .iter()
        .filter(|row| row.to_lowercase().contains("interrupted"))
        .count()
}

/// A reading of one screen.
pub type ScreenTest<'a> = &'a dyn Fn(&Snapshot) -> bool;

/// What a trial of [`second_esc_after_a_dialog`] reads on a harness's
/// screen.
pub struct EscScreens<'a> {
    /// A dialog (and any other, such as a rewind menu the second Esc may
    /// open, which the person then closes with Esc too).
    pub dialog: ScreenTest<'a>,
    /// The screen a trial starts and ends on.
    pub idle_and_empty: ScreenTest<'a>,
    /// A composer the second Esc filled, and the keys a person clears it
    /// with.
    pub filled: Option<(ScreenTest<'a>, &'a str)>,
}

/// The person opens a dialog with `command` (typed, then Return), a
/// message arrives and waits for it, the person closes it with Esc (or,
/// `sent_after_close`, the message is sent just after), and presses Esc
/// again `offset` after the Esc that closed the dialog, reading the
/// harness's screens with `screens`. The timed press is the person's,
/// the stimulus measured; every wait is on a screen, a request or the
/// status.
pub fn second_esc_after_a_dialog(
    agent: &Agent,
    model: &ModelServer,
    command: &str,
    offset: Duration,
    sent_after_close: bool,
    screens: &EscScreens,
) -> SecondEsc {
    let (dialog, idle_and_empty) = (screens.dialog, screens.idle_and_empty);
    // The person reads the last reply a while before going on (and a
    // turn of DING's before is well over: no grace after it holds this
    // one).
    wait_unchanged(
        agent,
        "the last reply, read",
        Duration::from_secs(6),
        idle_and_empty,
    );
    type_keystrokes(agent, command);
    press_enter(agent);
    if !closes_within(agent, Duration::from_secs(3), &|snapshot: &Snapshot| {
        !dialog(snapshot)
    }) {
        // A command popup still open after the Return: a person presses
        // it again.
        press_enter(agent);
    }
    wait_unchanged(
        agent,
        "the dialog, read",
        Duration::from_millis(800),
        dialog,
    );
    // The message arrives while the dialog is open, and waits past the
    // gather for the dialog (`sent_after_close`: just after it closed).
    let early = (!sent_after_close).then(|| {
        let name = send_message(agent, "while a dialog is open\n");
        agent.wait_status("the message held by the dialog", |status| {
            message(status, &name).is_some_and(|m| {
                m["state"] == "pending"
                    && m["hold"]["code"].is_string()
                    && m["hold"]["code"] != "gathering"
            })
        });
        name
    });
    let mut closed_at = (Instant::now(), unix_ms());
    for _ in 0..3 {
        closed_at = (Instant::now(), unix_ms());
        agent.ding_ok(&["intervene", &agent.name, "\u{1b}", "--no-enter"]);
        if closes_within(agent, Duration::from_secs(2), &dialog) {
            break;
        }
    }
    let name = early.unwrap_or_else(|| send_message(agent, "after a dialog closed\n"));
    let before = interrupted_rows(&agent.pty().snapshot().expect("snapshot"));
    // The person's second Esc, at its offset from the first.
    thread::sleep((closed_at.0 + offset).saturating_duration_since(Instant::now()));
    let second_at = unix_ms();
    agent.ding_ok(&["intervene", &agent.name, "\u{1b}", "--no-enter"]);
    let after_esc = interrupted_rows(&agent.pty().snapshot().expect("snapshot"));
    // Until the message reaches the model; a menu the second Esc opened
    // is closed as a person would.
    let trace = std::env::var_os("DING_SECOND_ESC_TRACE").is_some();
    let said = std::cell::RefCell::new(String::new());
    let first = wait_until("the message carried", PATIENCE, || {
        if trace {
            let evidence = agent.status()["engine"]["evidence"].clone();
            let now = format!("{} {}", evidence["state"], evidence["adapterReason"]);
            if *said.borrow() != now {
                eprintln!("  +{} ms: {now}", closed_at.0.elapsed().as_millis());
                *said.borrow_mut() = now;
            }
        }
        let shown = agent.pty().snapshot().ok()?;
        if let Some((draft, keys)) = screens.filled
            && draft(&shown)
        {
            // What the second Esc put in the composer (Codex's Esc Esc
            // edits the last prompt), cleared as a person would.
            agent.ding_ok(&["intervene", &agent.name, keys, "--no-enter"]);
            let _ = closes_within(agent, Duration::from_secs(2), &draft);
        }
        if dialog(&shown) {
            agent.ding_ok(&["intervene", &agent.name, "\u{1b}", "--no-enter"]);
            let _ = closes_within(agent, Duration::from_secs(2), &dialog);
        }
        model
            .requests()
            .into_iter()
            .find(|request| carries(request, &name))
    });
    until_quiet("the trial settled", QUIET, SETTLE_PATIENCE, || {
        (model.requests().len(), pty_writes(agent).deliveries)
    });
    let shown = wait_screen(agent, "idle after the trial", idle_and_empty);
    let carrying = model
        .requests()
        .iter()
        .filter(|request| {
            request["prompt"]
                .as_str()
                .is_some_and(|prompt| prompt.contains(name.as_str()))
        })
        .count();
    let cut = interrupted_rows(&shown) > before.max(after_esc) || carrying > 1;
    let turn_at = first["t"].as_i64().unwrap_or(0);
    let within = |key: i64| (0..1_000).contains(&(turn_at - key));
    SecondEsc {
        offset,
        turn_after_close_ms: turn_at - closed_at.1,
        turn_after_second_esc_ms: turn_at - second_at,
        within_a_second_of_a_key: within(closed_at.1) || within(second_at),
        carrying,
        interrupted: cut,
    }
}

/// Runs [`second_esc_after_a_dialog`] `DING_SECOND_ESC_TRIALS` times (10
/// unless said), the second Esc 0.3 to 1.0 s after the closing in turn,
/// alternating `commands`, and prints each trial and the counts; returns
/// how many turns of DING's were interrupted plus how many began within
/// 1 s of a key of the person's (0 where the rule holds).
/// `DING_SECOND_ESC_AFTER_CLOSE=1` sends the message just after the
/// closing instead of while the dialog is open.
pub fn measure_second_esc(
    agent: &Agent,
    model: &ModelServer,
    commands: &[&str],
    screens: &EscScreens,
) -> usize {
    let trials: usize = std::env::var("DING_SECOND_ESC_TRIALS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(10);
    let after_close = std::env::var("DING_SECOND_ESC_AFTER_CLOSE").is_ok();
    let (mut interrupted, mut at_risk) = (0, 0);
    for trial in 0..trials {
        let offset = Duration::from_millis(300 + 100 * (trial as u64 % 8));
        let command = commands[trial % commands.len()];
        let result = second_esc_after_a_dialog(agent, model, command, offset, after_close, screens);
        eprintln!("second Esc, trial {trial}, {command}: {result:?}");
        interrupted += usize::from(result.interrupted);
        at_risk += usize::from(result.within_a_second_of_a_key);
    }
    eprintln!(
        "second Esc: {interrupted} of {trials} turns of DING's interrupted; {at_risk} of {trials} began within 1 s of a key of the person's"
    );
    interrupted + at_risk
}

/// Copies the agent's directory (logs, inbox, the model's requests) to
/// `DING_KEEP_AGENT_DIR`, when it is set, before the test ends.
pub fn keep_for_the_record(agent: &Agent) {
    if let Some(keep) = std::env::var_os("DING_KEEP_AGENT_DIR") {
        let copied = Command::new("cp")
            .arg("-r")
            .arg(agent.dir.path())
            .arg(&keep)
            .status();
        eprintln!("agent directory kept in {keep:?}: {copied:?}");
    }
}
