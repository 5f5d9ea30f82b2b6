//! Shared harness for the sidecar end-to-end tests: one agent run by the
//! real `ding up` in a private temp tree (runtime, state and home
//! directories all inside it), a scripted adapter that prints what the test
//! writes into its own FIFO, and a drop guard that stops and kills every
//! process the agent started, by pid.
//!
//! The scripted adapter is `sh $ST_HOOKS/adapter.sh`: it makes the FIFO
//! `feeds/PID` and then `exec cat`s it, holding both ends so it never sees
//! end of file. The test writes protocol lines into the FIFO of the pid the
//! sidecar reports (`adapterPid`), stamped with the identity it reads from
//! the PTY host itself, so every line is exactly what a real adapter would
//! have said at that moment.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ding::pty::client::Client;
use ding::sidecar::control::status_reply_within;
use ding::sidecar::paths::{AgentPaths, DirsEnv};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

pub const DING: &str = env!("CARGO_BIN_EXE_ding");
/// The evaluation's binary (model servers, harness homes, the A/B runner).
pub const DING_EVAL: &str = env!("CARGO_BIN_EXE_ding-eval");

/// The sidecar's status reply as JSON, as it is on the wire: what the
/// tests check is the document, field by field, as other programs read it.
pub fn status_json(socket: &Path) -> Result<Value, String> {
    let reply =
        status_reply_within(socket, Duration::from_secs(5)).map_err(|e| format!("{e:#}"))?;
    serde_json::from_slice(&reply).map_err(|e| e.to_string())
}

/// How long any awaited condition may take before the test fails. Generous:
/// waiting polls, so a passing test never sleeps this long.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// A harness that records every byte its terminal receives into `out`,
/// after putting the terminal in raw mode (so CR stays CR), asking for
/// bracketed paste as the TUIs DING serves do (DECSET 2004: DING's notice
/// then comes inside paste markers) and saying READY.
pub const RECORDING_HARNESS: &str =
    r#"command "sh" "-c" "stty raw -echo; printf '\\033[?2004hREADY'; exec cat > out""#;

/// The scripted adapter's declaration line.
pub const SCRIPTED_ADAPTER: &str = r#"command "sh" "$ST_HOOKS/adapter.sh""#;

const ADAPTER_SCRIPT: &str = r#"#!/bin/sh
# Scripted adapter for the sidecar tests: prints, as its protocol lines,
# whatever the test writes into the FIFO named after its pid.
fifo="$FEEDS/$$"
mkfifo "$fifo" || exit 1
# Read-write: cat holds a writer itself, so the FIFO never reports EOF.
exec cat 0<>"$fifo"
"#;

/// [`RECORDING_HARNESS`] that also draws what it receives, as a TUI draws a
/// paste into its composer: the Return of a typed notice waits for
/// evidence read after the paste was drawn ([`Agent::confirm_typed`]).
pub const DRAWING_HARNESS: &str =
    r#"command "sh" "-c" "stty raw -echo; printf '\\033[?2004hREADY'; exec tee out""#;

/// A harness that only waits.
pub const SLEEPING_HARNESS: &str = r#"command "sleep" "600""#;

/// The scripted adapter that also records every downlink line it is sent
/// into `feeds/PID.downlink` ([`Agent::downlink`]); its declaration line.
/// [`Agent::new`] installs it beside the scripted one.
pub const RECORDING_ADAPTER: &str = r#"command "sh" "$ST_HOOKS/recording-adapter.sh""#;

const RECORDING_ADAPTER_SCRIPT: &str = r#"#!/bin/sh
fifo="$FEEDS/$$"
mkfifo "$fifo" || exit 1
# The downlink pipe, kept as fd 3 for the recorder: a background job's
# stdin would otherwise be /dev/null.
exec 3<&0
cat <&3 > "$FEEDS/$$.downlink" &
exec cat 0<>"$fifo" 3<&-
"#;

/// A declaration of agent `name` with `harness` (a `command` line) under
/// the careful policy with the scripted adapter, plus `extra` ding settings.
pub fn careful_decl(name: &str, harness: &str, extra: &str) -> String {
    careful_decl_with_adapter(name, harness, SCRIPTED_ADAPTER, extra)
}

/// [`careful_decl`] with the adapter `adapter` (a `command` line).
pub fn careful_decl_with_adapter(name: &str, harness: &str, adapter: &str, extra: &str) -> String {
    format!(
        "agent \"{name}\" {{\n  {harness}\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{ {adapter} }}\n    {extra}\n  }}\n}}\n"
    )
}

/// A declaration of agent `name` with `harness` and no `ding` block.
pub fn aggressive_decl(name: &str, harness: &str) -> String {
    format!("agent \"{name}\" {{\n  {harness}\n}}\n")
}

/// One agent in its own temp tree; everything it started dies with it.
pub struct Agent {
    pub dir: tempfile::TempDir,
    pub name: String,
    sequence: Cell<u64>,
    /// `typed` downlinks answered by [`Agent::confirm_typed`] so far, by
    /// the adapter's pid.
    typed_confirmed: RefCell<HashMap<i32, usize>>,
    /// Commands run under a deadline so far, to name their output files.
    runs: Cell<u64>,
}

impl Agent {
    /// Writes the declaration and the scripted adapter; starts nothing.
    pub fn new(name: &str, declaration: &str) -> Agent {
        let dir = private_tempdir();
        for sub in ["run", "state", "home", "hooks", "feeds"] {
            fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        fs::write(dir.path().join("hooks/adapter.sh"), ADAPTER_SCRIPT).expect("adapter");
        fs::write(
            dir.path().join("hooks/recording-adapter.sh"),
            RECORDING_ADAPTER_SCRIPT,
        )
        .expect("recording adapter");
        let agent = Agent {
            dir,
            name: name.to_string(),
            sequence: Cell::new(0),
            typed_confirmed: RefCell::default(),
            runs: Cell::new(0),
        };
        agent.write_declaration(declaration);
        agent
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn declaration(&self) -> PathBuf {
        self.path("agent.kdl")
    }

    pub fn write_declaration(&self, text: &str) {
        fs::write(self.declaration(), text).expect("write declaration");
    }

    /// The environment every ding process of this agent runs with: private
    /// XDG directories, `ding` on PATH, the hooks and the FIFO directory.
    fn environment(&self) -> Vec<(&'static str, OsString)> {
        let bin = Path::new(DING).parent().expect("bin dir");
        let mut path = OsString::from(bin);
        if let Some(inherited) = std::env::var_os("PATH") {
            path.push(":");
            path.push(inherited);
        }
        vec![
            ("XDG_RUNTIME_DIR", self.path("run").into()),
            ("XDG_STATE_HOME", self.path("state").into()),
            ("HOME", self.path("home").into()),
            ("ST_HOOKS", self.path("hooks").into()),
            ("FEEDS", self.path("feeds").into()),
            ("PATH", path),
        ]
    }

    /// [`Agent::ding`] run by `wrapper` (a program and its first
    /// arguments; `ding` and ARGS follow them), or directly if it is empty.
    pub fn ding_under(&self, wrapper: &[&str], args: &[&str]) -> Output {
        self.command_under(wrapper, args)
            .output()
            .expect("run ding")
    }

    /// `ding ARGS` in the agent's directory and environment, stdin closed.
    /// `ding ARGS` in the agent's directory and environment, stdin closed.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_under(&[], args)
    }

    /// [`Agent::command`] run by `wrapper`, or directly if it is empty.
    fn command_under(&self, wrapper: &[&str], args: &[&str]) -> Command {
        self.program_under(DING, wrapper, args)
    }

    /// `binary ARGS` (`ding` or `ding-eval`) run by `wrapper`, or directly
    /// if it is empty, in the agent's directory and environment.
    fn program_under(&self, binary: &str, wrapper: &[&str], args: &[&str]) -> Command {
        let mut command = match wrapper.split_first() {
            Some((program, first)) => {
                let mut command = Command::new(program);
                command.args(first).arg(binary);
                command
            }
            None => Command::new(binary),
        };
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        for key in [
            "DING_AGENT",
            "DING_INBOX",
            "DING_SESSION",
            "DING_PTY_SOCKET",
        ] {
            command.env_remove(key);
        }
        command.envs(self.environment());
        command
    }

    /// Runs `ding ARGS` in the agent's directory and environment.
    pub fn ding(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run ding")
    }

    /// [`Agent::ding`] with `extra` added to the environment (and passed on
    /// to every process it starts).
    pub fn ding_with_env(&self, extra: &[(&str, &str)], args: &[&str]) -> Output {
        let mut command = self.command(args);
        command.envs(extra.iter().copied());
        command.output().expect("run ding")
    }

    /// [`Agent::ding`] with the variables `unset` removed from its
    /// environment.
    pub fn ding_unset(&self, unset: &[&str], args: &[&str]) -> Output {
        let mut command = self.command(args);
        for key in unset {
            command.env_remove(key);
        }
        command.output().expect("run ding")
    }

    /// [`Agent::ding`] run in `dir` (relative to the agent's directory).
    pub fn ding_in(&self, dir: &str, args: &[&str]) -> Output {
        let mut command = self.command(args);
        command.current_dir(self.path(dir));
        command.output().expect("run ding")
    }

    /// The environment `ding` runs with here, for a process a test starts
    /// itself (a supervisor a unit file describes).
    pub fn env_vars(&self) -> Vec<(&'static str, OsString)> {
        self.environment()
    }

    /// Runs `ding ARGS` like [`Agent::ding`], but fails the test if it has
    /// not finished within `patience` (the process is killed first), so a
    /// command that hangs is a failure, not a hung test run. Output goes
    /// to files, so a large output cannot stall it.
    pub fn ding_within(&self, patience: Duration, args: &[&str]) -> Output {
        match self.run_within(patience, args) {
            Ok(output) => output,
            Err(stderr) => {
                panic!("ding {args:?} did not finish within {patience:?}; stderr so far: {stderr}")
            }
        }
    }

    /// [`Agent::ding_within`] without the panic: `Err(stderr so far)` if
    /// it had to be killed.
    fn run_within(&self, patience: Duration, args: &[&str]) -> Result<Output, String> {
        let stamp = self.runs.get() + 1;
        self.runs.set(stamp);
        let stdout = self.path(&format!("ding-{stamp}.out"));
        let stderr = self.path(&format!("ding-{stamp}.err"));
        let mut child = self
            .command(args)
            .stdout(fs::File::create(&stdout).expect("stdout file"))
            .stderr(fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("run ding");
        let deadline = Instant::now() + patience;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for ding") {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fs::read_to_string(&stderr).unwrap_or_default());
            }
            thread::sleep(Duration::from_millis(10));
        };
        Ok(Output {
            status,
            stdout: fs::read(&stdout).unwrap_or_default(),
            stderr: fs::read(&stderr).unwrap_or_default(),
        })
    }

    /// Runs `ding ARGS`, requires success, returns stdout.
    pub fn ding_ok(&self, args: &[&str]) -> String {
        succeeded("ding", args, self.ding(args))
    }

    /// Runs `ding-eval ARGS` in the agent's directory and environment,
    /// requires success, returns stdout.
    pub fn ding_eval_ok(&self, args: &[&str]) -> String {
        let out = self.program_under(DING_EVAL, &[], args).output();
        succeeded("ding-eval", args, out.expect("run ding-eval"))
    }

    /// `ding up agent.kdl [EXTRA]`; returns what it printed.
    pub fn up(&self, extra: &[&str]) -> String {
        let mut args = vec!["up", "agent.kdl"];
        args.extend_from_slice(extra);
        self.ding_ok(&args)
    }

    pub fn paths(&self) -> AgentPaths {
        let environment = self.environment();
        let env = DirsEnv::from_lookup(
            |key| {
                environment
                    .iter()
                    .find(|(name, _)| *name == key)
                    .map(|(_, value)| value.clone())
            },
            nix::unistd::geteuid().as_raw(),
        );
        AgentPaths::resolve(&self.name, &env).expect("paths")
    }

    pub fn new_dir(&self) -> PathBuf {
        self.path(&format!("inbox/{}/new", self.name))
    }

    /// Delivers a message the Maildir way: write `tmp/NAME`, rename it into
    /// `new/`.
    pub fn drop_message(&self, name: &str, body: &str) {
        let inbox = self.path(&format!("inbox/{}", self.name));
        let tmp = inbox.join("tmp").join(name);
        fs::write(&tmp, body).expect("write tmp");
        fs::rename(&tmp, inbox.join("new").join(name)).expect("rename into new");
    }

    /// The live status document, straight from the sidecar's socket.
    pub fn status(&self) -> Value {
        status_json(&self.paths().sidecar_socket()).expect("sidecar status")
    }

    /// Polls the live status until `ready` holds; returns that document.
    pub fn wait_status(&self, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
        self.wait_status_every(Duration::from_millis(10), DEADLINE, what, ready)
    }

    /// [`Agent::wait_status`] polling every `interval` for up to
    /// `patience`: a status of many thousand messages is work for the
    /// sidecar's one thread, and asking for it back to back would slow down
    /// what the test waits for.
    pub fn wait_status_every(
        &self,
        interval: Duration,
        patience: Duration,
        what: &str,
        ready: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + patience;
        loop {
            let status = status_json(&self.paths().sidecar_socket()).ok();
            if let Some(status) = status.as_ref().filter(|status| ready(status)) {
                return status.clone();
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last status:\n{}\nthe adapter said: {}",
                status
                    .as_ref()
                    .map(|s| s["lines"].to_string())
                    .unwrap_or_default(),
                status.as_ref().map(adapter_says).unwrap_or_default()
            );
            thread::sleep(interval);
        }
    }

    /// Waits for message `name` to be held with hold code `code`.
    pub fn wait_held(&self, name: &str, code: &str) -> Value {
        self.wait_status(&format!("{name} held: {code}"), |status| {
            message(status, name)
                .is_some_and(|m| m["state"] == "pending" && m["hold"]["code"] == code)
        })
    }

    /// Runs `ding hook PROVIDER EVENT` the way a harness runs it: `payload`
    /// on stdin, the PTY host's identity and the hook socket in its
    /// environment. Requires exit 0; returns what it printed.
    pub fn run_hook(&self, provider: &str, event: &str, payload: &Value) -> String {
        let status = self.pty().status().expect("pty status");
        let mut child = Command::new(DING)
            .args(["hook", provider, event])
            .env("DING_SESSION", &status.session)
            .env("DING_INCARNATION", &status.incarnation)
            .env("DING_GENERATION", &status.generation)
            .env(
                "DING_HOOK_SOCKET",
                self.paths().runtime_dir().join("hook.sock"),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn ding hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(payload.to_string().as_bytes())
            .expect("payload");
        let out = child.wait_with_output().expect("ding hook");
        assert!(out.status.success(), "ding hook exits 0: {out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// Waits for the adapter to be up; returns its pid.
    pub fn wait_adapter_up(&self) -> i32 {
        let status = self.wait_status("adapter up", |status| {
            status["engine"]["adapter"]["state"] == "up" && status["adapterPid"].is_u64()
        });
        status["adapterPid"].as_i64().expect("adapterPid") as i32
    }

    /// How many hook calls the adapter has parked so far, from its log
    /// (`EVENT: parked in slot …`): a connection the kernel lists may not
    /// have been read yet, so a call is only known parked once logged.
    pub fn parked_calls(&self) -> usize {
        let out = self.ding(&["logs", &self.name]);
        String::from_utf8_lossy(&out.stdout)
            .matches(": parked in slot ")
            .count()
    }

    pub fn sidecar_pid(&self) -> Option<i32> {
        read_pid(&self.paths().sidecar_pid())
    }

    pub fn pty_pid(&self) -> Option<i32> {
        read_pid(&self.paths().pty_pid())
    }

    pub fn pty(&self) -> Client {
        Client::connect(&self.paths().pty_socket()).expect("connect pty host")
    }

    /// The PTY host's current revision.
    pub fn revision(&self) -> u64 {
        self.pty().status().expect("pty status").revision
    }

    /// Waits until the harness screen shows `text`.
    pub fn wait_screen(&self, text: &str) {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let snapshot = self.pty().snapshot().expect("snapshot");
            if snapshot.rows.iter().any(|row| row.contains(text)) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "screen never showed {text:?}:\n{}",
                snapshot.rows.join("\n")
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Starts the agent with the recording harness and waits until the
    /// harness is in raw mode and recording.
    pub fn up_recording(&self) {
        self.up(&[]);
        self.wait_screen("READY");
        wait_for("the harness to open out", || self.path("out").exists());
    }

    /// Everything the recording harness has received so far.
    pub fn out(&self) -> Vec<u8> {
        fs::read(self.path("out")).unwrap_or_default()
    }

    /// Polls `out` until `ready` holds on its parsed chunks.
    pub fn wait_out(&self, what: &str, ready: impl Fn(&[Chunk]) -> bool) -> Vec<Chunk> {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let chunks = parse_out(&self.out());
            if ready(&chunks) {
                return chunks;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; out holds {chunks:?}"
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// An `activity` line for the PTY host's current identity.
    pub fn activity(&self, state: &str, composer: &str, revision: Option<u64>) -> Value {
        let mut line = self.envelope("activity");
        line["state"] = json!(state);
        line["composer"] = json!(composer);
        line["validForMs"] = json!(5000);
        if let Some(revision) = revision {
            line["revision"] = json!(revision);
        }
        line
    }

    /// A `printed` line: a claim's hook printed `messages` for its harness.
    pub fn printed(&self, messages: &[&str]) -> Value {
        let mut line = self.envelope("printed");
        line["messages"] = json!(messages);
        line
    }

    /// A `turn-boundary` receipt naming `messages`.
    pub fn turn_boundary(&self, messages: &[&str]) -> Value {
        let mut line = self.envelope("turn-boundary");
        line["messages"] = json!(messages);
        line
    }

    fn envelope(&self, kind: &str) -> Value {
        let status = self.pty().status().expect("pty status");
        let sequence = self.sequence.get() + 1;
        self.sequence.set(sequence);
        json!({
            "v": 1,
            "kind": kind,
            "session": status.session,
            "incarnation": status.incarnation,
            "generation": status.generation,
            "sequence": sequence,
        })
    }

    /// Makes the scripted adapter with pid `adapter` print `line`.
    pub fn feed(&self, adapter: i32, line: &Value) {
        self.feed_all(adapter, std::slice::from_ref(line));
    }

    /// Makes the scripted adapter with pid `adapter` print `lines`, in
    /// order, as fast as it can.
    pub fn feed_all(&self, adapter: i32, lines: &[Value]) {
        let fifo = self.path(&format!("feeds/{adapter}"));
        let deadline = Instant::now() + DEADLINE;
        // Non-blocking open: a FIFO without a reader fails (ENXIO) instead
        // of hanging the test; the adapter opens it right after mkfifo.
        let mut writer = loop {
            match fs::OpenOptions::new()
                .write(true)
                .custom_flags(nix::libc::O_NONBLOCK)
                .open(&fifo)
            {
                Ok(file) => break file,
                Err(err) => {
                    assert!(
                        Instant::now() < deadline,
                        "adapter {adapter} never opened {}: {err}",
                        fifo.display()
                    );
                    thread::sleep(Duration::from_millis(5));
                }
            }
        };
        // Opened: from here on, wait for the adapter to take every byte.
        nix::fcntl::fcntl(
            &writer,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
        )
        .expect("blocking writes");
        let mut bytes = Vec::new();
        for line in lines {
            bytes.extend_from_slice(line.to_string().as_bytes());
            bytes.push(b'\n');
        }
        writer.write_all(&bytes).expect("feed the adapter");
    }

    /// Every downlink line the recording adapter with pid `adapter` was
    /// sent so far.
    pub fn downlink(&self, adapter: i32) -> Vec<Value> {
        fs::read_to_string(self.path(&format!("feeds/{adapter}.downlink")))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("downlink JSON"))
            .collect()
    }

    /// Answers DING's next paste as an adapter reading the screen does:
    /// waits for the recording adapter `adapter` to be told of a typed
    /// notice, then for the harness (one that draws, [`DRAWING_HARNESS`])
    /// to draw it, and reports an idle composer holding that notice at the
    /// drawn screen's revision. Returns the notice's number.
    pub fn confirm_typed(&self, adapter: i32) -> u64 {
        let seen = self
            .typed_confirmed
            .borrow()
            .get(&adapter)
            .copied()
            .unwrap_or(0);
        let deadline = Instant::now() + DEADLINE;
        let told: Vec<Value> = loop {
            let told: Vec<Value> = self
                .downlink(adapter)
                .into_iter()
                .filter(|line| line["kind"] == "typed")
                .collect();
            if told.len() > seen {
                break told;
            }
            assert!(
                Instant::now() < deadline,
                "the adapter was never told of typed notice {}",
                seen + 1
            );
            thread::sleep(Duration::from_millis(5));
        };
        let text = told[seen]["text"].as_str().expect("typed text");
        let notice = told[seen]["request"].as_u64().expect("typed request");
        // The same text may be typed again: its newest copy must be drawn.
        let copies = told[..=seen].iter().filter(|t| t["text"] == text).count();
        let wanted = squeezed(text);
        let revision = loop {
            let snapshot = self.pty().snapshot().expect("snapshot");
            if squeezed(&snapshot.rows.concat()).matches(&wanted).count() >= copies {
                break snapshot.revision;
            }
            assert!(
                Instant::now() < deadline,
                "the harness never drew notice {notice} {text:?}:\n{}",
                snapshot.rows.join("\n")
            );
            thread::sleep(Duration::from_millis(5));
        };
        let mut line = self.activity("idle", "nonempty", Some(revision));
        line["typed"] = json!(notice);
        self.feed(adapter, &line);
        self.typed_confirmed.borrow_mut().insert(adapter, seen + 1);
        notice
    }

    /// The `claimed` answers among them.
    pub fn claims_answered(&self, adapter: i32) -> Vec<Value> {
        self.downlink(adapter)
            .into_iter()
            .filter(|line| line["kind"] == "claimed")
            .collect()
    }

    /// A `claim` line for the PTY host's current identity, asking for
    /// `messages` by name.
    pub fn claim(&self, id: u64, messages: &[&str]) -> Value {
        let mut line = self.envelope("claim");
        line["claim"] = json!(id);
        line["messages"] = json!(messages);
        line
    }

    /// A `claim` line asking for the oldest `limit` files of `scope`.
    pub fn claim_oldest(&self, id: u64, limit: u64, scope: &str) -> Value {
        let mut line = self.envelope("claim");
        line["claim"] = json!(id);
        line["limit"] = json!(limit);
        line["scope"] = json!(scope);
        line
    }

    /// Pids of live processes started for this agent: every one inherits
    /// this agent's private `XDG_RUNTIME_DIR`, which no other process has.
    pub fn processes(&self) -> Vec<i32> {
        let mut marker = b"XDG_RUNTIME_DIR=".to_vec();
        marker.extend_from_slice(self.path("run").as_os_str().as_encoded_bytes());
        let me = std::process::id() as i32;
        let Ok(entries) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| pid != me)
            .filter(|pid| {
                fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|environ| environ.split(|&b| b == 0).any(|var| var == marker))
            })
            .collect()
    }
}

/// Set to `1`, a test that fails keeps its agent's directory (the
/// sidecar's, adapter's and harness's logs, the inbox, the journal) and
/// prints where it is.
pub const KEEP_FAILED: &str = "DING_TEST_KEEP_FAILED";

impl Drop for Agent {
    fn drop(&mut self) {
        // Bounded: a `ding down` that hangs must not hang the test run.
        let _ = self.run_within(DEADLINE, &["down", &self.name]);
        if thread::panicking() && std::env::var_os(KEEP_FAILED).is_some_and(|value| value == "1") {
            // Its logs, inbox and journal, as they were when it failed.
            self.dir.disable_cleanup(true);
            eprintln!("{KEEP_FAILED}=1: kept {}", self.dir.path().display());
        }
        // Whatever survived (an adapter orphaned by a SIGKILLed sidecar, a
        // harness that ignored the hangup) is killed by pid.
        for _ in 0..50 {
            let left = self.processes();
            if left.is_empty() {
                return;
            }
            for pid in left {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The stdout of `binary ARGS`, which must have succeeded.
fn succeeded(binary: &str, args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "{binary} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A temp dir in memory when the system has `/dev/shm`: these tests are
/// about behaviour, not disks, and on a busy disk 20,000 small files take
/// tens of seconds to write and as long to remove. Elsewhere, the default
/// temp dir.
pub fn private_tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new().prefix("ding-test").tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().expect("tempdir")
}

/// The names a journal document holds with `owner` (`staged`,
/// `hook-owned`).
pub fn journal_owned(journal: &Value, owner: &str) -> Vec<String> {
    journal["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|entry| entry["owner"] == owner)
        .filter_map(|entry| entry["name"].as_str().map(str::to_string))
        .collect()
}

/// The unread message `name` in a status document.
/// Runs `ding ARGS` in `dir`, with `HOME` there too and stdin closed, as a
/// user at a shell would (no agent of this harness involved).
pub fn ding_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(DING)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .output()
        .expect("run ding")
}

/// `ding compile-agent PROVIDER --name worker --cwd project EXTRA...` in
/// `dir`, as [`ding_in`] runs it.
pub fn compile_agent(dir: &Path, provider: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "compile-agent",
        provider,
        "--name",
        "worker",
        "--cwd",
        "project",
    ];
    args.extend_from_slice(extra);
    ding_in(dir, &args)
}

/// What the adapter said last (`ding status`'s `adapter says ...`).
pub fn adapter_says(status: &Value) -> String {
    status["engine"]["evidence"]["adapterReason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn message<'a>(status: &'a Value, name: &str) -> Option<&'a Value> {
    status["engine"]["messages"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)
}

/// The names of the unread messages, in the order status lists them.
pub fn message_names(status: &Value) -> Vec<String> {
    status["engine"]["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter_map(|m| m["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Direct children of `pid`, from each process's parent pid in /proc.
pub fn children_of(pid: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| {
            fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                // Fields after the parenthesised command: state, ppid, ...
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

pub fn process_alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
        && !fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
}

/// The blocked and ignored signal masks of `pid` (`SigBlk`, `SigIgn` in
/// /proc), as numbers.
pub fn signal_masks(pid: i32) -> (u64, u64) {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let mask = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or_else(|| panic!("no {name} for pid {pid}"))
    };
    (mask("SigBlk:"), mask("SigIgn:"))
}

/// The bit of `signal` in a /proc signal mask.
pub fn signal_bit(signal: Signal) -> u64 {
    1 << (signal as i32 - 1)
}

fn read_pid(path: &Path) -> Option<i32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Polls `check` until it holds, failing after [`DEADLINE`].
pub fn wait_for(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// What the recording harness received, split into DING transports and
/// anything else, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Chunk {
    /// `ESC[200~ TEXT ESC[201~ CR`: one whole ring.
    Notice(String),
    /// Bytes that are not (or not yet) a whole ring.
    Other(Vec<u8>),
}

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~\r";

pub fn parse_out(mut out: &[u8]) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    while !out.is_empty() {
        let start = find(out, PASTE_START);
        let end = start.and_then(|s| find(&out[s..], PASTE_END).map(|e| s + e));
        match (start, end) {
            (Some(start), Some(end)) => {
                if start > 0 {
                    chunks.push(Chunk::Other(out[..start].to_vec()));
                }
                let text = &out[start + PASTE_START.len()..end];
                chunks.push(Chunk::Notice(String::from_utf8_lossy(text).into_owned()));
                out = &out[end + PASTE_END.len()..];
            }
            _ => {
                chunks.push(Chunk::Other(out.to_vec()));
                break;
            }
        }
    }
    chunks
}

/// `text` without its whitespace: a drawn notice wraps where the screen
/// ends.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The notices among `chunks`.
pub fn notices(chunks: &[Chunk]) -> Vec<&str> {
    chunks
        .iter()
        .filter_map(|chunk| match chunk {
            Chunk::Notice(text) => Some(text.as_str()),
            Chunk::Other(_) => None,
        })
        .collect()
}
