//! One trial: one harness, one matrix row, one arm, one seed, in a scratch
//! directory of its own, driven from outside as a user would drive it.
//!
//! A trial starts the loopback model server (`ding-eval model-server`),
//! prepares the harness's scratch home (the harness room), writes the
//! arm's agent declaration, and gives the scenario what a person at the
//! terminal has: `ding up`/`down`/`send`/`intervene`, the typist's hands,
//! the screen, and a supervisor's PTY host operations (restart). It waits
//! only on events: screens (PTY revision pushes), the model server's log,
//! processes. At the end it stops everything it started, by pid, keeps the
//! logs as evidence, with the inbox as it was left (`inbox.txt`), and
//! computes the metrics (`evidence`).

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::Serialize;

use super::arm::{self, Arm, CarefulArm, CarefulRequest, unavailable_text};
use super::evidence::{self, Metrics, Records};
use super::launch::{Launch, Permission, Setup};
use super::logs::{self, Request, RequestLog};
use super::pane::{self, Pane};
use super::processes::{self, Found};
use super::rng::Rng;
use super::row::Row;
use super::sender::Sender;
use super::trial_command::trial_command;
use super::typist::{Plan, Typist};
use crate::unix_time::unix_ms;
use ding::pty::client::Client;
use ding::pty::wire::Snapshot;
use ding::sidecar::paths::{AgentPaths, DirsEnv};
use ding::wait::{POLL_EVERY, RETRY_EVERY, wait_for};
use inbox_listing::inbox_listing;

/// The agent's name in every trial.
pub const AGENT: &str = "eval";

/// How long any awaited step may take (the harness to start, a dialog to
/// open). Generous: the machine is shared, and waits return as soon as
/// what they wait for happens.
pub const PATIENCE: Duration = Duration::from_secs(45);

/// How long after the workload's last action a message may still reach
/// the model and count as delivered.
pub const DELIVERY_PATIENCE: Duration = Duration::from_secs(15);

/// Settled: no new request for this long and no turn on the screen.
pub const QUIET: Duration = Duration::from_millis(1500);

/// The longest a trial waits to settle before it says it did not.
pub const SETTLE_PATIENCE: Duration = Duration::from_secs(30);

/// What to run.
#[derive(Clone)]
pub struct TrialSpec {
    pub harness: &'static crate::harnesses::Harness,
    pub harness_binary: PathBuf,
    /// The `ding` binary to drive.
    pub ding: PathBuf,
    /// The `ding-eval` binary, which serves the model.
    pub eval_binary: PathBuf,
    pub row: Row,
    pub arm: Arm,
    pub seed: u64,
    pub index: u32,
    /// Where the trial's logs are kept; created.
    pub evidence_dir: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "reason")]
pub enum Outcome {
    /// The workload ran to its end.
    Ran,
    /// The row or arm cannot be driven here; why.
    NotRun(String),
    /// The workload could not be driven to its end (a step never
    /// happened); why. The metrics of what did happen are still given.
    Error(String),
}

/// Everything one trial found.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialFacts {
    pub harness: String,
    pub row: u32,
    pub row_slug: String,
    pub arm: String,
    pub trial: u32,
    pub seed: u64,
    pub outcome: Outcome,
    pub metrics: Option<Metrics>,
    pub records: Option<Records>,
    pub notes: Vec<String>,
    /// Processes the trial ended at its end, by pid.
    pub ended: Vec<Found>,
    /// Pids that were still alive after SIGKILL (never expected).
    pub left_alive: Vec<i32>,
    pub evidence_dir: String,
    /// The trial's scratch directory (removed at its end); its `run/` is
    /// the runtime directory every process of the trial inherited.
    pub scratch_dir: String,
    pub duration_ms: u64,
}

/// The name of a trial's evidence directory.
pub fn trial_id(spec: &TrialSpec) -> String {
    format!(
        "{}-row{}-{}-{}-{}",
        spec.harness.name,
        spec.row.number(),
        spec.row.slug(),
        spec.arm,
        spec.index
    )
}

/// A trial in progress. Dropping it without `finish` still ends every
/// process it started.
pub struct Trial {
    pub spec: TrialSpec,
    pub pane: &'static dyn Pane,
    pub rng: Rng,
    pub dir: PathBuf,
    env: Vec<(String, OsString)>,
    model: Option<Child>,
    model_url: String,
    pub launch: Launch,
    log: RequestLog,
    typist: Option<Typist>,
    paths: AgentPaths,
    pub records: Records,
    pub notes: Vec<String>,
    started: Instant,
    finished: bool,
}

mod inbox_listing;
mod waits;

impl Trial {
    /// Sets the trial up: directory, model server, harness home, the arm's
    /// declaration. `Err(outcome)` when the trial cannot run at all.
    pub fn prepare(spec: &TrialSpec) -> std::result::Result<Trial, Outcome> {
        let mut trial = Trial::scratch(spec).map_err(|err| Outcome::Error(format!("{err:#}")))?;
        match trial
            .start_model_server()
            .and_then(|()| trial.prepare_home())
        {
            Ok(()) => {}
            Err(err) => {
                trial.teardown();
                return Err(Outcome::Error(format!("{err:#}")));
            }
        }
        match trial.write_declaration(&trial.launch.clone()) {
            Ok(None) => Ok(trial),
            Ok(Some(reason)) => {
                trial.teardown();
                Err(Outcome::NotRun(reason))
            }
            Err(err) => {
                trial.teardown();
                Err(Outcome::Error(format!("{err:#}")))
            }
        }
    }

    fn scratch(spec: &TrialSpec) -> Result<Trial> {
        let dir = scratch_dir()?;
        for sub in ["run", "state", "home", "markers"] {
            fs::create_dir(dir.join(sub)).with_context(|| format!("create {sub}"))?;
        }
        let bin = spec.ding.parent().unwrap_or(Path::new("/"));
        let mut path = OsString::from(bin);
        if let Some(inherited) = std::env::var_os("PATH") {
            path.push(":");
            path.push(inherited);
        }
        let env: Vec<(String, OsString)> = vec![
            ("XDG_RUNTIME_DIR".into(), dir.join("run").into()),
            ("XDG_STATE_HOME".into(), dir.join("state").into()),
            ("HOME".into(), dir.join("home").into()),
            ("PATH".into(), path),
        ];
        let paths = AgentPaths::resolve(
            AGENT,
            &DirsEnv::from_lookup(
                |key| {
                    env.iter()
                        .find(|(name, _)| name == key)
                        .map(|(_, value)| value.clone())
                },
                nix::unistd::geteuid().as_raw(),
            ),
        )?;
        Ok(Trial {
            spec: spec.clone(),
            pane: spec.harness.pane,
            rng: Rng::new(spec.seed),
            log: RequestLog::new(&dir.join("model/requests.jsonl")),
            dir,
            env,
            model: None,
            model_url: String::new(),
            launch: Launch {
                argv: Vec::new(),
                env: Vec::new(),
                cwd: PathBuf::new(),
            },
            typist: None,
            paths,
            records: Records::default(),
            notes: Vec::new(),
            started: Instant::now(),
            finished: false,
        })
    }

    fn start_model_server(&mut self) -> Result<()> {
        let dir = self.dir.join("model");
        fs::create_dir_all(&dir)?;
        let port_file = dir.join("port");
        let child = trial_command(&self.spec.eval_binary, &self.env)
            .args(["model-server", "--api", self.spec.harness.api, "--log"])
            .arg(dir.join("requests.jsonl"))
            .arg("--port-file")
            .arg(&port_file)
            .stdout(Stdio::null())
            .stderr(fs::File::create(dir.join("stderr")).context("model server stderr")?)
            .spawn()
            .context("start ding-eval model-server")?;
        self.model = Some(child);
        let port = wait_for(Duration::from_secs(15), POLL_EVERY, || {
            fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.trim().parse::<u16>().ok())
        })
        .context("the model server wrote no port file")?;
        self.model_url = format!("http://127.0.0.1:{port}");
        Ok(())
    }

    fn prepare_home(&mut self) -> Result<()> {
        self.launch = (self.spec.harness.prepare)(&self.setup(false))?;
        Ok(())
    }

    fn setup(&self, ask_at_startup: bool) -> Setup {
        Setup {
            binary: self.spec.harness_binary.clone(),
            home: self.dir.join("harness-home"),
            cwd: self.dir.join("project"),
            model_url: self.model_url.clone(),
            permission: Permission::Manual,
            ask_at_startup,
            outside_dirs: vec![self.dir.join("markers")],
        }
    }

    /// Prepares the harness's home again so that the harness asks the
    /// person something at startup (before `up`; the launch is the same).
    pub fn ask_at_startup(&mut self) -> Result<()> {
        let launch = (self.spec.harness.prepare)(&self.setup(true))?;
        if launch != self.launch {
            bail!("preparing the home to ask at startup changed the launch");
        }
        Ok(())
    }

    /// Writes `agent.kdl` for this arm running `launch`. `Some(reason)`
    /// when the arm cannot be set up.
    fn write_declaration(&mut self, launch: &Launch) -> Result<Option<String>> {
        let text = match self.spec.arm {
            Arm::Aggressive => launch.declaration(AGENT),
            Arm::Careful => {
                let request = CarefulRequest {
                    ding: &self.spec.ding,
                    env: &self.env,
                    agent: AGENT,
                    launch,
                    dir: &self.dir,
                };
                match arm::careful(self.spec.harness, &request)? {
                    CarefulArm::Ready { declaration, env } => {
                        for (name, value) in env {
                            self.env.retain(|(existing, _)| *existing != name);
                            self.env.push((name, value.into()));
                        }
                        declaration
                    }
                    CarefulArm::Unavailable { reason } => {
                        return Ok(Some(unavailable_text(&reason)));
                    }
                }
            }
        };
        fs::write(self.dir.join("agent.kdl"), text).context("write agent.kdl")?;
        Ok(None)
    }

    /// Runs `ding ARGS` in the trial's directory and environment.
    pub fn ding(&self, args: &[&str]) -> Result<Output> {
        trial_command(&self.spec.ding, &self.env)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .with_context(|| format!("run ding {}", args.join(" ")))
    }

    fn ding_ok(&self, args: &[&str]) -> Result<String> {
        let output = self.ding(args)?;
        if !output.status.success() {
            bail!(
                "ding {} failed: {}{}",
                args.join(" "),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// `ding up agent.kdl`, then the typist sits down at the terminal.
    pub fn up(&mut self) -> Result<()> {
        self.ding_ok(&["up", "agent.kdl"])?;
        self.typist = Some(Typist::connect(&self.paths.pty_socket())?);
        Ok(())
    }

    /// `ding down`: the harness ends with its PTY host.
    pub fn down(&mut self) -> Result<()> {
        self.count_keys();
        self.typist = None;
        self.ding_ok(&["down", AGENT])?;
        Ok(())
    }

    /// Starts the harness again on its last session: the harness's
    /// resume argv, a new declaration for this arm, `ding up`.
    pub fn resume(&mut self) -> Result<()> {
        let mut launch = self.launch.clone();
        launch.argv = self.pane.resume(&launch.argv);
        if let Some(reason) = self.write_declaration(&launch)? {
            bail!("{reason}");
        }
        self.up()
    }

    /// Someone to send messages from other threads.
    pub fn sender(&self) -> Sender {
        Sender::new(
            self.spec.ding.clone(),
            self.dir.clone(),
            self.env.clone(),
            AGENT,
        )
    }

    /// Sends one message now and records it.
    pub fn send_message(&mut self) -> Result<()> {
        self.send_message_with(&[])
    }

    /// [`Trial::send_message`] with more options for `ding send`.
    pub fn send_message_with(&mut self, options: &[&str]) -> Result<()> {
        let sent = self.sender().send_with(options)?;
        self.records.sent.push(sent);
        Ok(())
    }

    fn typist(&mut self) -> Result<&mut Typist> {
        self.typist
            .as_mut()
            .context("the typist has no terminal (the agent is down)")
    }

    /// Types `plan` from `start`; returns the unix time of its last key.
    pub fn perform(&mut self, plan: &Plan, start: Instant) -> Result<u64> {
        self.typist()?.perform(plan, start)
    }

    /// Presses one key now.
    pub fn press(&mut self, bytes: &[u8]) -> Result<u64> {
        self.typist()?.press(bytes)
    }

    /// The harness's pid, from the PTY host.
    pub fn harness_pid(&self) -> Result<i32> {
        let status = Client::connect(&self.paths.pty_socket())?.status()?;
        match status.child {
            ding::pty::wire::ChildState::Running { pid } => Ok(pid),
            other => bail!("the harness is not running: {other:?}"),
        }
    }

    /// Kills the harness with SIGKILL: a crash.
    pub fn crash_harness(&mut self) -> Result<()> {
        let pid = self.harness_pid()?;
        kill(Pid::from_raw(pid), Signal::SIGKILL).context("kill the harness")?;
        self.notes
            .push(format!("killed the harness (pid {pid}) with SIGKILL"));
        Ok(())
    }

    /// A supervisor restarts the harness through the PTY host.
    pub fn restart_harness(&mut self) -> Result<()> {
        let (incarnation, _) = Client::connect(&self.paths.pty_socket())?.restart()?;
        self.notes
            .push(format!("restarted the harness (incarnation {incarnation})"));
        Ok(())
    }

    /// The adapter's pid, if the agent runs one.
    pub fn adapter_pid(&self) -> Option<i32> {
        fs::read_to_string(self.paths.adapter_pid())
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// `ding intervene eval TEXT`, as a supervisor types it.
    pub fn intervene(&mut self, text: &str) -> Result<()> {
        self.ding_ok(&["intervene", AGENT, text])?;
        self.records
            .interventions
            .push(super::evidence::Intervention {
                text: text.to_string(),
                unix_ms: unix_ms(),
            });
        Ok(())
    }

    /// A fresh marker path for a permission-gated command.
    pub fn marker(&self, n: u32) -> PathBuf {
        self.dir.join("markers").join(format!("marker-{n}"))
    }

    fn inbox(&self) -> PathBuf {
        self.dir.join("inbox").join(AGENT)
    }

    fn count_keys(&mut self) {
        if let Some(typist) = &self.typist {
            self.records.typist_keys += typist.typed.len();
        }
    }

    /// Ends everything, keeps the evidence, computes the facts.
    pub fn finish(mut self, outcome: Outcome) -> TrialFacts {
        self.count_keys();
        self.typist = None;
        let _ = fs::create_dir_all(&self.spec.evidence_dir);
        if let Ok(screen) = self.screen() {
            let _ = fs::write(
                self.spec.evidence_dir.join("screen.txt"),
                screen.rows.join("\n"),
            );
        }
        self.records.archived = archived(&self.inbox().join("archive"));
        let (ended, left_alive) = self.teardown();
        let _ = self.log.refresh();
        let evidence = &self.spec.evidence_dir;
        let pty_log = fs::read_to_string(self.paths.pty_log()).unwrap_or_default();
        let _ = fs::write(evidence.join("pty.log"), &pty_log);
        let _ = fs::write(evidence.join("inbox.txt"), inbox_listing(&self.inbox()));
        for (from, to) in [
            (self.dir.join("model/requests.jsonl"), "requests.jsonl"),
            (self.paths.sidecar_log(), "sidecar.log"),
            (self.dir.join("agent.kdl"), "agent.kdl"),
        ] {
            let _ = fs::copy(from, evidence.join(to));
        }
        // Whatever else the agent's processes logged beside them (a
        // launcher, a harness's own server), for a person to read.
        for other in other_logs(self.paths.runtime_dir()) {
            if let Some(name) = other.file_name() {
                let _ = fs::copy(&other, evidence.join(name));
            }
        }
        let metrics = evidence::metrics(
            &self.records,
            &self.log.requests,
            &logs::pty_inputs(&pty_log),
        );
        let facts = TrialFacts {
            harness: self.spec.harness.name.to_string(),
            row: self.spec.row.number(),
            row_slug: self.spec.row.slug().to_string(),
            arm: self.spec.arm.to_string(),
            trial: self.spec.index,
            seed: self.spec.seed,
            outcome,
            metrics: Some(metrics),
            records: Some(self.records.clone()),
            notes: self.notes.clone(),
            ended,
            left_alive,
            evidence_dir: evidence.display().to_string(),
            scratch_dir: self.dir.display().to_string(),
            duration_ms: self.started.elapsed().as_millis() as u64,
        };
        if let Ok(json) = serde_json::to_string_pretty(&facts) {
            let _ = fs::write(evidence.join("facts.json"), json);
        }
        let _ = fs::remove_dir_all(&self.dir);
        facts
    }

    /// Stops the agent (`ding down`), ends by pid every process left with
    /// the trial's runtime directory (a harness daemon among them), then
    /// the model server.
    fn teardown(&mut self) -> (Vec<Found>, Vec<i32>) {
        if self.finished {
            return (Vec::new(), Vec::new());
        }
        self.finished = true;
        self.typist = None;
        let _ = self.ding(&["down", AGENT]);
        let runtime = self.dir.join("run");
        let model = self.model.as_ref().map(|child| child.id() as i32);
        let mut ended = Vec::new();
        let mut left = Vec::new();
        for _ in 0..3 {
            let found = processes::with_variable("XDG_RUNTIME_DIR", &runtime);
            if found.is_empty() {
                break;
            }
            let pids: Vec<i32> = found.iter().map(|f| f.pid).collect();
            left = processes::end(&pids, Duration::from_secs(5));
            ended.extend(found);
        }
        let outlived: Vec<String> = ended
            .iter()
            .filter(|f| Some(f.pid) != model)
            .map(|f| short_command(&f.command))
            .collect();
        if !outlived.is_empty() {
            self.notes.push(format!(
                "{} process(es) outlived ding down, ended by pid: {}",
                outlived.len(),
                outlived.join("; ")
            ));
        }
        if let Some(mut model) = self.model.take() {
            let _ = model.kill();
            let _ = model.wait();
        }
        (ended, left)
    }
}

impl Drop for Trial {
    fn drop(&mut self) {
        self.teardown();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The files in `archive/`, with the time each got there (its ctime: a
/// rename sets it).
fn archived(dir: &Path) -> Vec<(String, u64)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let meta = entry.metadata().ok()?;
            let ms = meta.ctime() as u64 * 1000 + meta.ctime_nsec() as u64 / 1_000_000;
            Some((entry.file_name().to_string_lossy().into_owned(), ms))
        })
        .collect()
}

/// The `*.log` files of the agent's runtime directory that the trial does
/// not already keep under a name of its own.
fn other_logs(runtime: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(runtime) else {
        return Vec::new();
    };
    let mut logs: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
        .filter(|path| {
            let name = path.file_name().and_then(|name| name.to_str());
            !matches!(name, Some("pty.log" | "sidecar.log"))
        })
        .filter(|path| path.is_file())
        .collect();
    logs.sort();
    logs
}

/// A command line for a note: the program's file name and its arguments,
/// at most 60 characters.
fn short_command(command: &str) -> String {
    let (program, args) = command.split_once(' ').unwrap_or((command, ""));
    let name = program.rsplit('/').next().unwrap_or(program);
    let line = format!("{name} {args}");
    let line = line.trim_end();
    match line.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// A new private directory for one trial, with a short path (the agent's
/// sockets live under it, and socket paths are short).
fn scratch_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for attempt in 0..100u32 {
        let mut rng = Rng::new(unix_ms() ^ u64::from(std::process::id()) ^ u64::from(attempt));
        let dir = base.join(format!("ding-eval-{:08x}", rng.next_u64() as u32));
        match fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err).with_context(|| format!("create {}", dir.display())),
        }
    }
    bail!("no free scratch directory name in {}", base.display())
}

/// Runs one trial: prepare, drive the row's workload, finish. Never
/// panics on what the harness does; every failure is a fact.
pub fn run(spec: &TrialSpec, drive: impl FnOnce(&mut Trial) -> Result<()>) -> TrialFacts {
    let started = Instant::now();
    let mut trial = match Trial::prepare(spec) {
        Ok(trial) => trial,
        Err(outcome) => {
            return TrialFacts {
                harness: spec.harness.name.to_string(),
                row: spec.row.number(),
                row_slug: spec.row.slug().to_string(),
                arm: spec.arm.to_string(),
                trial: spec.index,
                seed: spec.seed,
                outcome,
                metrics: None,
                records: None,
                notes: Vec::new(),
                ended: Vec::new(),
                left_alive: Vec::new(),
                evidence_dir: spec.evidence_dir.display().to_string(),
                scratch_dir: String::new(),
                duration_ms: started.elapsed().as_millis() as u64,
            };
        }
    };
    let outcome = match drive(&mut trial) {
        Ok(()) => Outcome::Ran,
        Err(err) => Outcome::Error(format!("{err:#}")),
    };
    trial.finish(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_a_process_by_its_file_name_and_arguments() {
        assert_eq!(
            short_command("/opt/x/bin/daemon app-server --listen unix:// --flag"),
            "daemon app-server --listen unix:// --flag"
        );
        assert_eq!(short_command("sleep"), "sleep");
        assert_eq!(
            short_command(&format!("/p {}", "a".repeat(80)))
                .chars()
                .count(),
            61
        );
    }
}
