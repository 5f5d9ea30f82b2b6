//! `ding sidecar`: the mio loop around the sans-IO engine.
//!
//! One thread, one `Poll`, one token per descriptor:
//!
//! | token | source | becomes |
//! |---|---|---|
//! | `SIGNALS` | signalfd (SIGCHLD, SIGTERM, SIGINT, SIGHUP) | adapter exit, shutdown |
//! | `TIMER` | timerfd, armed to the earliest deadline | `handle_timeout`, PTY reconnect |
//! | `INBOX` | inotify on `new/` and the root | inbox inputs, rescans |
//! | `ADAPTER_OUT` / `ADAPTER_ERR` | the adapter's pipes | protocol lines / log lines |
//! | `ADAPTER_IN` | the adapter's stdin (writable) | queued downlink lines flushed |
//! | `PTY` | the PTY host's control socket | PTY inputs |
//! | `STATUS` and peers | `sidecar.sock` | status replies |
//!
//! Every readable descriptor is drained until `WouldBlock` (mio is
//! edge-triggered). Each fact becomes one engine input, after which the
//! engine's outputs are drained and carried out before the next input. After
//! each turn the journal is written if ownership changed, then the downlink
//! lines of that turn go to the adapter (a `claimed` answer hands files to a
//! hook, so the ownership it grants is durable before the hook hears of it),
//! and the timerfd is re-armed to the earliest deadline, or disarmed: an idle
//! sidecar sleeps in `poll` with no timeout at all.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::sys::signal::Signal;
use nix::sys::signalfd::SignalFd;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use serde_json::json;

use super::adapter_group;
use super::adapter_proc::{
    ADAPTER_KILL_WAIT, ADAPTER_STOP_GRACE, AdapterProcess, Drained, PIPE_READ_BUDGET, describe_exit,
};
use super::agent_record::AgentRecord;
use super::control::write_pid;
#[cfg(feature = "crash-points")]
use super::crash_point::{self, CRASH_AT_VAR, CrashPoint};
#[cfg(not(feature = "crash-points"))]
use super::crash_point::{self, CrashPoint};
use super::inbox::{Inbox, NameClass, Scan, Unreadable, classify_name};
use super::inbox_watch::{InboxEvent, InboxWatch};
use super::journal_store::JournalStore;
use super::log::{Log, LogFormat};
use super::paths::AgentPaths;
use super::pty_link::{LinkNote, PtyLink};
use super::status_document::{Running, StatusDocument, UnreadableView};
use super::status_server::{StatusRequest, StatusServer};
use crate::core::downlink::Downlink;
use crate::core::engine::{Engine, Input, Output};
use crate::core::status::MessageWindow;
use crate::core::time::Time;
use crate::decl::{AgentSpec, expand_argv_from_env};
use crate::escape::escape_bytes;
use crate::lines::Line;
use crate::signals::read_through_signalfd;

const SIGNALS: Token = Token(0);
const TIMER: Token = Token(1);
const INBOX: Token = Token(2);
const ADAPTER_OUT: Token = Token(3);
const ADAPTER_ERR: Token = Token(4);
const PTY: Token = Token(5);
const STATUS: Token = Token(6);
const ADAPTER_IN: Token = Token(7);
const FIRST_STATUS_PEER: usize = 100;

/// How long a shutdown waits for an in-flight transaction's reply, so that
/// its outcome is journaled rather than guessed at the next start.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The longest a sidecar takes to exit after SIGTERM: the in-flight reply's
/// grace, then its adapter's stop (SIGTERM, the grace, SIGKILL, the wait).
pub const STOP_WITHIN: Duration = Duration::from_secs(
    SHUTDOWN_GRACE.as_secs() + ADAPTER_STOP_GRACE.as_secs() + ADAPTER_KILL_WAIT.as_secs(),
);

/// Everything `ding sidecar` needs.
pub struct SidecarOptions {
    pub spec: AgentSpec,
    /// The declaration file, recorded for `ding status` and `ding up`.
    pub declaration: PathBuf,
    pub paths: AgentPaths,
    pub log_format: LogFormat,
}

/// The current adapter and the pipes still open.
struct RunningAdapter {
    process: AdapterProcess,
    stdout_open: bool,
    stderr_open: bool,
    /// A pipe's last read stopped at its budget, not at `WouldBlock`.
    stdout_backlog: bool,
    stderr_backlog: bool,
}

impl RunningAdapter {
    fn has_backlog(&self) -> bool {
        self.stdout_backlog || self.stderr_backlog
    }
}

struct Runtime {
    poll: Poll,
    engine: Engine,
    spec: AgentSpec,
    /// The declaration file this sidecar runs from.
    declaration: PathBuf,
    paths: AgentPaths,
    log: Log,
    inbox: Inbox,
    watch: InboxWatch,
    store: JournalStore,
    timer: TimerFd,
    signals: SignalFd,
    link: PtyLink,
    status: StatusServer,
    adapter: Option<RunningAdapter>,
    /// Adapters that were replaced or stopped and still need reaping.
    zombies: Vec<AdapterProcess>,
    /// Entries of `new/` that cannot be messages, by name, for status.
    unreadable: BTreeMap<OsString, Unreadable>,
    inputs: VecDeque<Input>,
    /// Downlink lines of this turn, sent once the journal is written.
    downlink: Vec<Downlink>,
    journal_dirty: bool,
    /// Why the journal was quarantined at start, for status.
    journal_warning: Option<String>,
    /// Why the last journal write failed, until one succeeds, for status.
    journal_write_error: Option<String>,
    shutdown_deadline: Option<Time>,
    started: Time,
}

/// Runs the sidecar until SIGTERM, SIGINT or SIGHUP.
pub fn run(options: SidecarOptions) -> Result<ExitCode> {
    let mut runtime = Runtime::start(options)?;
    runtime.run()?;
    Ok(ExitCode::SUCCESS)
}

/// The monotonic clock, as the engine's time.
pub fn monotonic_now() -> Time {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .unwrap_or(TimeSpec::new(0, 0));
    let millis = (now.tv_sec() as u64).saturating_mul(1000) + (now.tv_nsec() as u64) / 1_000_000;
    Time::from_millis(millis)
}

impl Runtime {
    fn start(options: SidecarOptions) -> Result<Runtime> {
        let SidecarOptions {
            spec,
            declaration,
            paths,
            log_format,
        } = options;
        let mut log = Log::new(
            log_format,
            &spec.name,
            Some(&paths.sidecar_log()),
            monotonic_now,
        );
        // Test builds only (`crash_point`): read once, before anything can
        // reach one.
        #[cfg(feature = "crash-points")]
        {
            let crash_at = crash_point::arm_from_env().map_err(|value| {
                let names: Vec<&str> = CrashPoint::ALL.iter().map(|p| p.name()).collect();
                anyhow::anyhow!(
                    "{CRASH_AT_VAR}={value:?} names no crash point (one of {})",
                    names.join(", ")
                )
            })?;
            if let Some(point) = crash_at {
                log.event("crash-point-armed", json!({ "point": point.name() }));
            }
        }
        paths.ensure_runtime_dir()?;
        paths.ensure_state_dir()?;

        // Signals arrive through the signalfd only.
        let signals = read_through_signalfd(&crate::signals::HANDLED)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .context("create timerfd")?;

        let poll = Poll::new().context("create poll")?;
        let registry = poll.registry();
        registry.register(
            &mut SourceFd(&signals.as_raw_fd()),
            SIGNALS,
            Interest::READABLE,
        )?;
        registry.register(
            &mut SourceFd(&timer.as_fd().as_raw_fd()),
            TIMER,
            Interest::READABLE,
        )?;

        // Claim the agent first: binding refuses a second live sidecar, and
        // the pid file then lets `ding down` find this one even if what
        // follows fails or takes long.
        let status =
            StatusServer::bind(&paths.sidecar_socket(), registry, STATUS, FIRST_STATUS_PEER)?;
        write_pid(&paths.sidecar_pid(), std::process::id())?;
        let claim = Claim(Some(paths.clone()));

        let inbox = Inbox::open_or_create(&spec.inbox)?;
        let watch = InboxWatch::new(inbox.root())
            .with_context(|| format!("watch inbox {}", inbox.root().display()))?;
        registry.register(&mut SourceFd(&watch.fd()), INBOX, Interest::READABLE)?;

        let record = AgentRecord {
            agent: spec.name.clone(),
            declaration: declaration.clone(),
            inbox: spec.inbox.clone(),
            fingerprint: spec.fingerprint(),
            fingerprint_input: spec.fingerprint_input(),
        };
        record.save(paths.state_dir())?;
        let store = JournalStore::new(paths.state_dir());
        let loaded = store.load()?;
        let journal_warning = loaded.warning();
        if let Some(warning) = &journal_warning {
            log.event("journal-quarantined", json!({ "detail": warning }));
        }
        let journal = loaded.into_journal();

        let now = monotonic_now();
        let engine = Engine::new(spec.engine_config(), journal.as_ref(), now);
        let link = PtyLink::new(paths.pty_socket(), PTY);
        log.event(
            "sidecar-start",
            json!({
                "pid": std::process::id(),
                "policy": spec.ding.policy,
                "fingerprint": spec.fingerprint(),
                "inbox": inbox.root(),
                "ptySocket": paths.pty_socket(),
                "journal": journal.as_ref().map_or(0, |j| j.entries.len()),
            }),
        );
        let mut runtime = Runtime {
            poll,
            engine,
            spec,
            declaration,
            paths,
            log,
            inbox,
            watch,
            store,
            timer,
            signals,
            link,
            status,
            adapter: None,
            zombies: Vec::new(),
            unreadable: BTreeMap::new(),
            inputs: VecDeque::new(),
            downlink: Vec::new(),
            journal_dirty: false,
            journal_warning,
            journal_write_error: None,
            shutdown_deadline: None,
            started: now,
        };
        // The engine's first outputs (a spawn request under the careful policy).
        runtime.carry_out_outputs(now);
        // Scan right after the watch exists, so nothing slips between them.
        runtime.rescan();
        runtime.connect_pty(now);
        runtime.settle(now)?;
        claim.keep();
        Ok(runtime)
    }

    fn run(&mut self) -> Result<()> {
        let mut events = Events::with_capacity(64);
        loop {
            // Unread adapter output and connections not yet accepted wait
            // for no event: look, don't sleep.
            let backlog = self
                .adapter
                .as_ref()
                .is_some_and(RunningAdapter::has_backlog)
                || self.status.has_backlog();
            let timeout = backlog.then_some(Duration::ZERO);
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            let now = monotonic_now();
            // One budget per pipe per turn, whether an event or a backlog
            // brings us to it.
            let (mut read_stdout, mut read_stderr) = (false, false);
            for event in events.iter() {
                match event.token() {
                    SIGNALS => self.on_signals(now),
                    TIMER => self.on_timer(now),
                    INBOX => self.on_inbox(),
                    ADAPTER_OUT => {
                        read_stdout = true;
                        self.on_adapter_stdout();
                    }
                    ADAPTER_ERR => {
                        read_stderr = true;
                        self.on_adapter_stderr();
                    }
                    ADAPTER_IN => self.flush_downlink(),
                    PTY => {
                        self.link.on_ready(self.poll.registry(), now);
                        self.absorb_link();
                    }
                    token if self.status.owns(token) => self.on_status_peer(token, now),
                    _ => {}
                }
            }
            self.read_adapter_backlog(read_stdout, read_stderr);
            if self.status.has_backlog() {
                self.on_status_peer(STATUS, now);
            }
            self.settle(now)?;
            if self.ready_to_exit(now) {
                self.shut_down();
                return Ok(());
            }
        }
    }

    /// Feeds every queued input, carrying out outputs after each; writes the
    /// journal if ownership changed; re-arms the timer.
    fn settle(&mut self, now: Time) -> Result<()> {
        self.feed_inputs(now);
        if self.journal_dirty {
            self.journal_dirty = false;
            self.save_journal();
        }
        let grants = self
            .downlink
            .iter()
            .any(|line| matches!(line, Downlink::Claimed(claimed) if !claimed.granted.is_empty()));
        if grants && self.journal_write_error.is_none() {
            crash_point::reach(CrashPoint::AfterClaimJournaled);
        }
        self.send_downlink();
        self.arm_timer(now);
        Ok(())
    }

    /// Hands this turn's downlink lines to the adapter's stdin queue.
    fn send_downlink(&mut self) {
        let lines = std::mem::take(&mut self.downlink);
        let Some(running) = self.adapter.as_mut() else {
            return;
        };
        let pid = running.process.pid();
        let mut dropped = 0;
        for line in lines {
            if !running.process.queue_line(&line.to_line()) {
                dropped += 1;
            }
        }
        if dropped > 0 {
            self.log.event(
                "adapter-stdin-full",
                json!({ "pid": pid, "dropped": dropped }),
            );
        }
        self.flush_downlink();
    }

    fn flush_downlink(&mut self) {
        if let Some(running) = self.adapter.as_mut() {
            running.process.flush_stdin();
        }
    }

    /// Writes the journal; a failure is logged once per cause, shown in
    /// status and retried at the end of every later turn. The inbox stays
    /// the authority: a lost journal write can cost one duplicate ring after
    /// a crash, never a message.
    fn save_journal(&mut self) {
        match self.store.save(&self.engine.journal()) {
            Ok(()) => {
                if self.journal_write_error.take().is_some() {
                    self.log.event("journal-write-recovered", json!({}));
                }
            }
            Err(err) => {
                let error = format!("{err:#}");
                if self.journal_write_error.as_deref() != Some(error.as_str()) {
                    self.log
                        .event("journal-write-failed", json!({ "error": error }));
                }
                self.journal_write_error = Some(error);
                self.journal_dirty = true;
            }
        }
    }

    fn feed_inputs(&mut self, now: Time) {
        while let Some(input) = self.inputs.pop_front() {
            self.engine.handle_input(input, now);
            self.carry_out_outputs(now);
        }
    }

    fn carry_out_outputs(&mut self, now: Time) {
        while let Some(output) = self.engine.poll_output() {
            match output {
                Output::SendIf(send) => {
                    self.link.send_if(self.poll.registry(), now, &send);
                    self.absorb_link();
                }
                Output::Send(send) => {
                    self.link.send(self.poll.registry(), now, &send);
                    self.absorb_link();
                }
                Output::SpawnAdapter => self.spawn_adapter(),
                Output::ToAdapter(line) => self.downlink.push(line),
                Output::JournalChanged => self.journal_dirty = true,
                Output::StatusChanged => {}
                Output::Decision(record) => self.log.decision(&record),
            }
        }
    }

    /// Queues what the PTY link learned and logs its notes.
    fn absorb_link(&mut self) {
        let (inputs, notes) = self.link.take();
        self.inputs.extend(inputs);
        for note in notes {
            match note {
                LinkNote::Connected => self.log.event(
                    "pty-connected",
                    json!({ "socket": self.paths.pty_socket() }),
                ),
                LinkNote::Lost(why) => self.log.event("pty-lost", json!({ "why": why })),
                LinkNote::ChildExited(child) => {
                    self.log.event("harness-exited", json!({ "child": child }))
                }
                LinkNote::Unexpected(what) => {
                    self.log.event("pty-unexpected", json!({ "what": what }))
                }
            }
        }
    }

    fn arm_timer(&mut self, now: Time) {
        let deadline = [
            self.engine.next_deadline(),
            self.link.retry_at(),
            self.shutdown_deadline,
            self.log.next_summary_at(),
        ]
        .into_iter()
        .flatten()
        .min();
        let result = match deadline {
            None => self.timer.unset(),
            Some(deadline) => {
                let millis = deadline.max(now).as_millis();
                // An absolute time of zero would disarm the timer.
                let spec = TimeSpec::new(
                    (millis / 1000) as i64,
                    ((millis % 1000) * 1_000_000).max(1) as i64,
                );
                self.timer.set(
                    Expiration::OneShot(spec),
                    TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                )
            }
        };
        if let Err(err) = result {
            self.log
                .event("timer-failed", json!({ "error": err.to_string() }));
        }
    }

    fn on_timer(&mut self, now: Time) {
        // Clear the expiration count; a spurious wake-up is harmless.
        let mut count = [0u8; 8];
        let _ = nix::unistd::read(&self.timer, &mut count);
        self.engine.handle_timeout(now);
        self.carry_out_outputs(now);
        self.connect_pty(now);
        self.log.summarize_ended();
    }

    fn connect_pty(&mut self, now: Time) {
        self.link.poll_connect(self.poll.registry(), now);
        self.absorb_link();
    }

    // ----- inbox -----

    fn on_inbox(&mut self) {
        let mut events = Vec::new();
        if let Err(err) = self.watch.drain(&mut events) {
            self.log
                .event("inbox-watch-failed", json!({ "error": err.to_string() }));
            events.push(InboxEvent::Rescan);
        }
        let mut rescan = false;
        for event in events {
            match event {
                InboxEvent::Rescan => rescan = true,
                InboxEvent::Added(name) => match self.inbox.classify(&name) {
                    Some(NameClass::Message(message)) => {
                        self.unreadable.remove(&name);
                        self.inputs.push_back(Input::InboxAdded(message));
                    }
                    Some(NameClass::Unreadable(reason)) => {
                        self.log.event(
                            "inbox-unreadable",
                            json!({ "name": escape_bytes(name.as_encoded_bytes()), "reason": reason.to_string() }),
                        );
                        // A message that was replaced by something else
                        // under the same name is no longer one.
                        if let NameClass::Message(message) = classify_name(&name) {
                            self.inputs.push_back(Input::InboxRemoved(message));
                        }
                        self.unreadable
                            .insert(name.clone(), Unreadable { name, reason });
                    }
                    // Hidden, or gone already (its removal event follows).
                    Some(NameClass::Hidden) | None => {}
                },
                InboxEvent::Removed(name) => {
                    if self.unreadable.remove(&name).is_none()
                        && let NameClass::Message(message) = classify_name(&name)
                    {
                        self.inputs.push_back(Input::InboxRemoved(message));
                    }
                }
            }
        }
        if rescan {
            self.rescan();
        }
    }

    /// Lists `new/` and hands the engine the whole truth. Recreates the
    /// inbox's subdirectories if someone removed them; a root that is gone
    /// (moved away, not yet replaced) is an empty inbox, not recreated, so
    /// that whoever is replacing it is not raced. Its watch reports the new
    /// one.
    fn rescan(&mut self) {
        let scan = if self.inbox.root().exists() {
            self.inbox.scan_unread().or_else(|_| {
                self.inbox = Inbox::open(&self.spec.inbox)?;
                self.inbox.scan_unread()
            })
        } else {
            self.log
                .event("inbox-missing", json!({ "inbox": self.inbox.root() }));
            Ok(Scan::default())
        };
        match scan {
            Ok(scan) => {
                self.unreadable = scan
                    .unreadable
                    .into_iter()
                    .map(|entry| (entry.name.clone(), entry))
                    .collect();
                self.inputs.push_back(Input::InboxScan(scan.unread));
            }
            Err(err) => self
                .log
                .event("inbox-scan-failed", json!({ "error": format!("{err:#}") })),
        }
    }

    // ----- adapter -----

    fn spawn_adapter(&mut self) {
        self.retire_adapter();
        let Some(command) = self.spec.adapter_command() else {
            self.inputs.push_back(Input::AdapterSpawnFailed {
                error: "no adapter command declared".into(),
            });
            return;
        };
        let argv = match expand_argv_from_env(command) {
            Ok(argv) => argv,
            Err(err) => {
                self.inputs.push_back(Input::AdapterSpawnFailed {
                    error: err.to_string(),
                });
                return;
            }
        };
        let env = self.adapter_env();
        match AdapterProcess::spawn(&argv, &env, &self.spec.cwd) {
            Ok(process) => {
                let registry = self.poll.registry();
                let mut registered = true;
                if let Some(fd) = process.stdout_fd() {
                    registered &= registry
                        .register(&mut SourceFd(&fd), ADAPTER_OUT, Interest::READABLE)
                        .is_ok();
                }
                if let Some(fd) = process.stderr_fd() {
                    registered &= registry
                        .register(&mut SourceFd(&fd), ADAPTER_ERR, Interest::READABLE)
                        .is_ok();
                }
                // Edge-triggered: a writable event comes only after the pipe
                // filled and drained again, so this never spins.
                if let Some(fd) = process.stdin_fd() {
                    registered &= registry
                        .register(&mut SourceFd(&fd), ADAPTER_IN, Interest::WRITABLE)
                        .is_ok();
                }
                let pid = process.pid();
                adapter_group::record(&self.paths, pid);
                self.log.event(
                    "adapter-spawned",
                    json!({ "pid": pid, "argv": argv_text(&argv) }),
                );
                self.adapter = Some(RunningAdapter {
                    process,
                    stdout_open: true,
                    stderr_open: true,
                    stdout_backlog: false,
                    stderr_backlog: false,
                });
                self.inputs.push_back(Input::AdapterSpawned { pid });
                if !registered {
                    self.inputs.push_back(Input::AdapterSpawnFailed {
                        error: "cannot watch the adapter's pipes".into(),
                    });
                }
            }
            Err(err) => self.inputs.push_back(Input::AdapterSpawnFailed {
                error: format!(
                    "{}: {err}",
                    argv.first()
                        .map(|p| p.to_string_lossy())
                        .unwrap_or_default()
                ),
            }),
        }
    }

    /// The adapter's environment: where everything is, so it needs no flags,
    /// and the terminal identity when the sidecar already knows it (the
    /// downlink's `pty` line says it again, and every change after).
    fn adapter_env(&self) -> Vec<(String, OsString)> {
        let identity = self.engine.pty_identity();
        let part = |get: fn(&crate::core::identity::Identity) -> &String| -> OsString {
            identity.map(get).cloned().unwrap_or_default().into()
        };
        vec![
            ("DING_SESSION".into(), part(|id| &id.session)),
            ("DING_INCARNATION".into(), part(|id| &id.incarnation)),
            ("DING_GENERATION".into(), part(|id| &id.generation)),
            (
                "DING_HOOK_SOCKET".into(),
                self.paths.hook_socket().into_os_string(),
            ),
            ("DING_AGENT".into(), self.spec.name.clone().into()),
            (
                "DING_PTY_SOCKET".into(),
                self.paths.pty_socket().into_os_string(),
            ),
            (
                "DING_INBOX".into(),
                self.inbox.root().as_os_str().to_owned(),
            ),
            (
                "DING_RUNTIME_DIR".into(),
                self.paths.runtime_dir().as_os_str().to_owned(),
            ),
            (
                "DING_SIDECAR_SOCKET".into(),
                self.paths.sidecar_socket().into_os_string(),
            ),
            (
                "DING_QUIET_INPUT_MS".into(),
                self.engine
                    .config()
                    .tunables
                    .quiet_input
                    .as_millis()
                    .to_string()
                    .into(),
            ),
        ]
    }

    /// Stops the current adapter, if any, keeping it for reaping.
    fn retire_adapter(&mut self) {
        if let Some(mut running) = self.adapter.take() {
            self.deregister_pipes(&running);
            running.process.kill();
            self.zombies.push(running.process);
        }
    }

    fn deregister_pipes(&self, running: &RunningAdapter) {
        let registry = self.poll.registry();
        if running.stdout_open
            && let Some(fd) = running.process.stdout_fd()
        {
            let _ = registry.deregister(&mut SourceFd(&fd));
        }
        if running.stderr_open
            && let Some(fd) = running.process.stderr_fd()
        {
            let _ = registry.deregister(&mut SourceFd(&fd));
        }
        if let Some(fd) = running.process.stdin_fd() {
            let _ = registry.deregister(&mut SourceFd(&fd));
        }
    }

    fn on_adapter_stdout(&mut self) {
        let Some(running) = self.adapter.as_mut() else {
            return;
        };
        let mut lines = Vec::new();
        let drained = running.process.drain_stdout(&mut lines);
        running.stdout_backlog = drained == Drained::Budget;
        for line in lines {
            self.inputs.push_back(match line {
                Line::Complete(bytes) => Input::AdapterLine(bytes),
                Line::TooLong { len } => Input::AdapterLineTooLong { len },
            });
        }
        if drained == Drained::Eof && running.stdout_open {
            running.stdout_open = false;
            if let Some(fd) = running.process.stdout_fd() {
                let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            }
            self.inputs.push_back(Input::AdapterEof);
        }
    }

    fn on_adapter_stderr(&mut self) {
        let Some(running) = self.adapter.as_mut() else {
            return;
        };
        let mut lines = Vec::new();
        let drained = running.process.drain_stderr(&mut lines);
        running.stderr_backlog = drained == Drained::Budget;
        let pid = running.process.pid();
        if drained == Drained::Eof && running.stderr_open {
            running.stderr_open = false;
            if let Some(fd) = running.process.stderr_fd() {
                let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            }
        }
        for line in lines {
            let text = match line {
                Line::Complete(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Line::TooLong { len } => format!("(at least {len} bytes, not shown)"),
            };
            self.log
                .event("adapter-stderr", json!({ "pid": pid, "line": text }));
        }
    }

    /// Reads on where a pipe's last read stopped at its budget (the lines
    /// read then were handled in the previous turn), unless this turn read
    /// that pipe already.
    fn read_adapter_backlog(&mut self, read_stdout: bool, read_stderr: bool) {
        let Some(running) = self.adapter.as_ref() else {
            return;
        };
        let (stdout, stderr) = (running.stdout_backlog, running.stderr_backlog);
        if stdout && !read_stdout {
            self.on_adapter_stdout();
        }
        if stderr && !read_stderr {
            self.on_adapter_stderr();
        }
    }

    // ----- signals -----

    fn on_signals(&mut self, now: Time) {
        while let Ok(Some(info)) = self.signals.read_signal() {
            match Signal::try_from(info.ssi_signo as i32) {
                Ok(Signal::SIGCHLD) => self.reap(),
                Ok(signal @ (Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP))
                    if self.shutdown_deadline.is_none() =>
                {
                    self.log
                        .event("sidecar-stopping", json!({ "signal": signal.as_str() }));
                    self.shutdown_deadline = Some(now.saturating_add(SHUTDOWN_GRACE));
                    // The delivery in flight finishes; nothing new is typed
                    // while the sidecar waits for it.
                    self.inputs.push_back(Input::Stopping);
                }
                _ => {}
            }
        }
    }

    fn reap(&mut self) {
        self.zombies
            .retain_mut(|zombie| zombie.try_reap().is_none());
        let Some(running) = self.adapter.as_mut() else {
            return;
        };
        let Some(status) = running.process.try_reap() else {
            return;
        };
        // The group lives as long as the adapter: helpers it left behind
        // would hold its pipes or keep acting for it.
        running.process.kill();
        // Whatever it wrote before dying counts: read it first, all of it
        // that a pipe can hold (the default maximum pipe size is 1 MiB).
        for _ in 0..(1024 * 1024 / PIPE_READ_BUDGET).max(1) {
            self.on_adapter_stdout();
            self.on_adapter_stderr();
            if !self
                .adapter
                .as_ref()
                .is_some_and(RunningAdapter::has_backlog)
            {
                break;
            }
        }
        if let Some(running) = self.adapter.take() {
            self.deregister_pipes(&running);
            adapter_group::forget(&self.paths);
            if running.stdout_open {
                self.inputs.push_back(Input::AdapterEof);
            }
        }
        self.inputs.push_back(Input::AdapterExited {
            status: describe_exit(status),
        });
    }

    /// Exit once asked to, after the in-flight transaction (if any) got its
    /// reply or the grace period ran out.
    fn ready_to_exit(&self, now: Time) -> bool {
        let Some(deadline) = self.shutdown_deadline else {
            return false;
        };
        !self.engine.is_in_flight() || now >= deadline
    }

    fn shut_down(&mut self) {
        self.save_journal();
        if let Some(mut running) = self.adapter.take() {
            self.deregister_pipes(&running);
            let pid = running.process.pid();
            let stopped = running.process.stop(ADAPTER_STOP_GRACE);
            self.log.event(
                "adapter-stopped",
                json!({ "pid": pid, "how": stopped.as_str() }),
            );
        }
        adapter_group::forget(&self.paths);
        for zombie in &mut self.zombies {
            zombie.try_reap();
        }
        let _ = fs::remove_file(self.paths.sidecar_socket());
        let _ = fs::remove_file(self.paths.sidecar_pid());
        self.log.summarize_all();
        self.log.event("sidecar-stopped", json!({}));
    }

    // ----- status -----

    /// Answers the requests that arrived. Every request of one call is
    /// answered at the same `now`, so the document is built once for all
    /// of them: a flood of askers (up to the accept budget a call) costs one
    /// rendering of a many-thousand-message status, not one each, and the
    /// asker behind them waits for a few renderings, not for dozens.
    fn on_status_peer(&mut self, token: Token, now: Time) {
        let registry = self.poll.registry();
        let mut documents: Vec<(MessageWindow, Vec<u8>)> = Vec::new();
        for (peer, request) in self.status.on_ready(registry, token) {
            let StatusRequest::Status { messages } = request;
            let window = messages.unwrap_or(MessageWindow::All);
            let at = match documents.iter().position(|(built, _)| *built == window) {
                Some(at) => at,
                None => {
                    let document = status_document(self, now, &window);
                    documents.push((window, document));
                    documents.len() - 1
                }
            };
            self.status
                .reply(self.poll.registry(), peer, &documents[at].1);
        }
    }
}

/// The status document `ding status --json` prints, listing the unread
/// files of `window`.
fn status_document(runtime: &Runtime, now: Time, window: &MessageWindow) -> Vec<u8> {
    let engine = runtime.engine.status_listing(now, window);
    let lines = engine
        .messages
        .iter()
        .map(|message| message.describe(now))
        .collect();
    StatusDocument {
        agent: Cow::Borrowed(&runtime.spec.name),
        running: Running,
        pid: std::process::id(),
        uptime_ms: now.since(runtime.started).as_millis() as u64,
        policy: runtime.spec.ding.policy,
        fingerprint: runtime.spec.fingerprint(),
        fingerprint_input: runtime.spec.fingerprint_input(),
        declaration: Cow::Borrowed(&runtime.declaration),
        inbox: Cow::Borrowed(runtime.inbox.root()),
        pty_socket: runtime.paths.pty_socket(),
        pty_connected: runtime.link.is_connected(),
        adapter_command: runtime.spec.adapter_command().map(Cow::Borrowed),
        adapter_pid: runtime
            .adapter
            .as_ref()
            .map(|running| running.process.pid()),
        journal: runtime.store.path(),
        journal_warning: runtime.journal_warning.as_deref().map(Cow::Borrowed),
        journal_write_error: runtime.journal_write_error.as_deref().map(Cow::Borrowed),
        log_write_failure: runtime.log.failing().map(Cow::Borrowed),
        unreadable: runtime
            .unreadable
            .values()
            .map(UnreadableView::of)
            .collect(),
        engine,
        lines,
    }
    .to_json()
}

/// The socket and pid file of a start that has claimed the agent, removed
/// again if the start fails before the loop runs.
struct Claim(Option<AgentPaths>);

impl Claim {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(paths) = self.0.take() {
            let _ = fs::remove_file(paths.sidecar_socket());
            let _ = fs::remove_file(paths.sidecar_pid());
        }
    }
}

fn argv_text(argv: &[OsString]) -> Vec<String> {
    argv.iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}
