//! The PTY host's event loop: one thread, one `mio::Poll` over the listening
//! socket, the PTY master, a signalfd and every client connection.
//!
//! This owns the revision counter, the order in which input reaches the
//! terminal, and the compare-and-send. Everything that touches the terminal
//! happens here, so ordering needs no locks:
//!
//! * Input is *committed* by appending it to `to_master` (a FIFO of bytes
//!   the kernel has not taken yet) and moving the revision once. Bytes leave
//!   `to_master` in order, whatever the kernel accepts per write.
//! * A transaction (`send-if` or `send`) runs step by step. While one is
//!   active, every other input (attached keystrokes, other transactions) is
//!   queued in arrival order and committed after it. Waits are timers, not
//!   sleeps: output keeps being read so the child never blocks on a full PTY.
//! * `send-if` compares the tuple and revision when it reaches the head of
//!   the input order, right after reading every byte of pending output.
//!
//! Shapes on the wire live in `wire`; the screen model in `screen`; the
//! socket checks in `socket`; starting the child in `child`.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use nix::errno::Errno;
use nix::sys::signal::{SigSet, Signal, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, Uid};
use serde_json::json;

use crate::pty::child::{self, Launch};
use crate::pty::connection::{Connection, Fill, Mode};
use crate::pty::identity::{LaunchSpec, fresh_incarnation};
use crate::pty::screen::Screen;
use crate::pty::socket;
use crate::pty::transport::{self, Step};
use crate::pty::wire::{
    ChildState, ErrorKind, ErrorReply, FrameKind, IdentityPart, MAX_REQUEST_LINE, Parsed, Push,
    Reply, Request, SendIfReply, ServerLine, Size, Status, parse_frame, parse_resize, push_frame,
};

const LISTENER: Token = Token(0);
const SIGNALS: Token = Token(1);
const MASTER: Token = Token(2);
const FIRST_CLIENT: usize = 3;

/// Most input bytes the host holds that the terminal has not taken yet
/// (queued behind a transaction or refused by a full PTY). Past it, the host
/// stops reading clients until the terminal catches up: keystrokes wait in
/// the socket buffers, nothing is dropped.
const MAX_PENDING_INPUT: usize = 1024 * 1024;
/// Largest terminal size accepted, per side; bounds the screen model's memory.
const MAX_SIDE: u16 = 1000;
/// How long `restart` waits after SIGHUP before it sends SIGKILL to a
/// child's process group that ignores hangups.
const RESTART_KILL_AFTER: Duration = Duration::from_secs(2);
/// Most output bytes read from the master in one turn of the loop.
const MASTER_READ_BUDGET: usize = 256 * 1024;

/// Everything `ding pty` was asked to do.
pub struct Config {
    pub socket: PathBuf,
    pub session: String,
    pub spec: LaunchSpec,
    pub size: Size,
    /// End the host this long after the child exits; `None` keeps serving.
    pub exit_with_child: Option<Duration>,
}

/// Runs the host until a terminating signal, or until the child exits when
/// `exit_with_child` is set. Returns the process exit code.
pub fn run(config: Config) -> Result<u8> {
    let mut host = Host::new(config)?;
    let result = host.serve();
    host.shut_down();
    result
}

/// The child currently (or last) running on the terminal.
struct Child {
    incarnation: String,
    pid: Pid,
    state: ChildState,
    /// `None` once the master reported end of file (EIO after the last slave
    /// closed) or was never opened.
    master: Option<OwnedFd>,
}

/// A unit of input waiting for its turn.
enum Input {
    /// Keystrokes from an attached client: committed as one write.
    Keys(Vec<u8>),
    /// A `send-if` or `send` with its steps.
    Transaction(Transaction),
}

struct Transaction {
    client: Token,
    /// The compare for send-if; `None` for an unconditional send.
    condition: Option<Condition>,
    steps: VecDeque<Step>,
    written: usize,
    wait_until: Option<Instant>,
}

struct Condition {
    session: String,
    incarnation: String,
    generation: String,
    expected_revision: u64,
}

struct Host {
    poll: Poll,
    listener: mio::net::UnixListener,
    signals: SignalFd,
    socket_path: PathBuf,
    session: String,
    generation: String,
    spec: LaunchSpec,
    size: Size,
    uid: u32,
    revision: u64,
    screen: Screen,
    child: Child,
    clients: BTreeMap<Token, Connection>,
    next_token: usize,
    /// Committed input the kernel has not accepted yet, in order.
    to_master: VecDeque<u8>,
    master_interest: Option<Interest>,
    active: Option<Transaction>,
    queued: VecDeque<Input>,
    queued_bytes: usize,
    restart_waiter: Option<Token>,
    /// When a restart's SIGHUP is followed by SIGKILL.
    restart_kill_at: Option<Instant>,
    /// The last master read stopped at its budget, not at WouldBlock.
    master_backlog: bool,
    exit_with_child: Option<Duration>,
    exit_at: Option<Instant>,
    quit: Option<u8>,
}

impl Host {
    fn new(config: Config) -> Result<Host> {
        // Block the signals before anything can deliver them, so that none is
        // lost between now and the signalfd existing; the child unblocks them
        // before exec.
        let mut mask = SigSet::empty();
        for signal in [
            Signal::SIGCHLD,
            Signal::SIGTERM,
            Signal::SIGHUP,
            Signal::SIGINT,
        ] {
            mask.add(signal);
        }
        mask.thread_block().context("block host signals")?;
        let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
            .context("create signalfd")?;
        let mut listener = socket::bind_private(&config.socket)?;
        let socket_path = std::path::absolute(&config.socket).context("resolve socket path")?;
        let poll = Poll::new().context("create poll")?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .context("register listener")?;
        poll.registry()
            .register(
                &mut SourceFd(&signals.as_fd().as_raw_fd()),
                SIGNALS,
                Interest::READABLE,
            )
            .context("register signalfd")?;
        let generation = config.spec.generation();
        let mut host = Host {
            poll,
            listener,
            signals,
            socket_path,
            session: config.session,
            generation,
            spec: config.spec,
            size: config.size,
            uid: Uid::effective().as_raw(),
            revision: 0,
            screen: Screen::new(config.size),
            child: Child {
                incarnation: String::new(),
                pid: Pid::from_raw(0),
                state: ChildState::Exited { code: 0 },
                master: None,
            },
            clients: BTreeMap::new(),
            next_token: FIRST_CLIENT,
            to_master: VecDeque::new(),
            master_interest: None,
            active: None,
            queued: VecDeque::new(),
            queued_bytes: 0,
            restart_waiter: None,
            restart_kill_at: None,
            master_backlog: false,
            exit_with_child: config.exit_with_child,
            exit_at: None,
            quit: None,
        };
        if let Err(err) = host.start_child() {
            let _ = std::fs::remove_file(&host.socket_path);
            return Err(err);
        }
        Ok(host)
    }

    fn serve(&mut self) -> Result<u8> {
        let mut events = Events::with_capacity(256);
        loop {
            let timeout = if self.can_resume_reading() || self.master_backlog {
                Some(Duration::ZERO)
            } else {
                self.next_deadline()
                    .map(|at| at.saturating_duration_since(Instant::now()))
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept_all(),
                    SIGNALS => self.read_signals()?,
                    MASTER => {
                        if event.is_readable() || event.is_read_closed() || event.is_error() {
                            self.read_master();
                        }
                        if event.is_writable() {
                            self.write_master();
                        }
                    }
                    token => {
                        if event.is_readable() || event.is_read_closed() {
                            self.read_client(token);
                        }
                        if event.is_writable()
                            && let Some(client) = self.clients.get_mut(&token)
                        {
                            client.flush();
                        }
                    }
                }
            }
            if self.master_backlog {
                self.read_master();
            }
            self.after_events();
            if let Some(code) = self.quit {
                return Ok(code);
            }
        }
    }

    /// Whether a client has unread bytes (see `Connection::stalled`) and the
    /// input queue has room for them: then the loop must not sleep.
    fn can_resume_reading(&self) -> bool {
        self.pending_input() < MAX_PENDING_INPUT && self.clients.values().any(|c| c.stalled)
    }

    /// The earliest timer: a transaction's wait, the exit grace, or a
    /// restart's escalation to SIGKILL.
    fn next_deadline(&self) -> Option<Instant> {
        let wait = self.active.as_ref().and_then(|tx| tx.wait_until);
        [wait, self.exit_at, self.restart_kill_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// Work that follows every batch of events: timers, resumed reads,
    /// watch pushes, flushing, and interest derived from the new state.
    fn after_events(&mut self) {
        let now = Instant::now();
        self.advance(now);
        if self.exit_at.is_some_and(|at| at <= now) {
            self.quit = Some(self.child_exit_code());
        }
        if self.restart_kill_at.is_some_and(|at| at <= now) {
            self.restart_kill_at = None;
            log(json!({"event": "restart-kill", "pid": self.child.pid.as_raw()}));
            let _ = killpg(self.child.pid, Signal::SIGKILL);
        }
        if self.pending_input() < MAX_PENDING_INPUT {
            let stalled: Vec<Token> = self
                .clients
                .iter()
                .filter(|(_, c)| c.stalled)
                .map(|(t, _)| *t)
                .collect();
            for token in stalled {
                self.read_client(token);
            }
        }
        let revision = self.revision;
        // A redraw renders the whole screen: only for a client that needs it.
        let redraw = self
            .clients
            .values()
            .any(|c| c.mode == Mode::Attach && c.needs_redraw && c.outbuf.is_empty())
            .then(|| self.screen.redraw());
        for client in self.clients.values_mut() {
            if client.mode == Mode::Watch
                && client.outbuf.is_empty()
                && client.pushed_revision < revision
            {
                client.pushed_revision = revision;
                client.send_line(&ServerLine::Push(Push::Revision { revision }));
            }
            if let Some(redraw) = &redraw
                && client.mode == Mode::Attach
                && client.needs_redraw
                && client.outbuf.is_empty()
            {
                client.needs_redraw = false;
                push_frame(&mut client.outbuf, FrameKind::Data, redraw);
            }
            client.flush();
        }
        let dead: Vec<Token> = self
            .clients
            .iter()
            .filter(|(_, c)| c.dead)
            .map(|(t, _)| *t)
            .collect();
        for token in dead {
            if let Some(mut client) = self.clients.remove(&token) {
                let _ = self.poll.registry().deregister(&mut client.stream);
            }
            if self.restart_waiter == Some(token) {
                self.restart_waiter = None;
            }
        }
        for (token, client) in self.clients.iter_mut() {
            let wanted = client.wanted_interest();
            if wanted != client.interest {
                client.interest = wanted;
                if self
                    .poll
                    .registry()
                    .reregister(&mut client.stream, *token, wanted)
                    .is_err()
                {
                    client.dead = true;
                }
            }
        }
        self.update_master_interest();
    }

    // ---- the child ----------------------------------------------------

    fn start_child(&mut self) -> Result<()> {
        let incarnation = fresh_incarnation()?;
        let env = self.child_env(&incarnation);
        let spawned = child::spawn(&Launch {
            argv: &self.spec.argv,
            cwd: &self.spec.cwd,
            env: &env,
            size: self.size,
        })?;
        self.drop_master();
        self.poll
            .registry()
            .register(
                &mut SourceFd(&spawned.master.as_raw_fd()),
                MASTER,
                Interest::READABLE,
            )
            .context("register pty master")?;
        self.master_interest = Some(Interest::READABLE);
        self.child = Child {
            incarnation: incarnation.clone(),
            pid: spawned.pid,
            state: ChildState::Running {
                pid: spawned.pid.as_raw(),
            },
            master: Some(spawned.master),
        };
        self.screen = Screen::new(self.size);
        self.bump();
        let revision = self.revision;
        let redraw = self.screen.redraw();
        for client in self.clients.values_mut() {
            match client.mode {
                Mode::Watch => client.send_line(&ServerLine::Push(Push::Start {
                    incarnation: incarnation.clone(),
                    revision,
                })),
                Mode::Attach => client.send_output(&redraw),
                Mode::Control => {}
            }
        }
        log(json!({
            "event": "child-start",
            "pid": spawned.pid.as_raw(),
            "incarnation": incarnation,
            "revision": revision,
        }));
        Ok(())
    }

    /// The harness's environment: inherited, then `--env`, then the DING
    /// variables (which always win, so a nested host cannot leak its own).
    fn child_env(&self, incarnation: &str) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        if std::env::var_os("TERM").is_none() && !self.spec.env.contains_key("TERM") {
            env.push(("TERM".into(), "xterm-256color".into()));
        }
        for (key, value) in &self.spec.env {
            env.push((key.into(), value.into()));
        }
        let path_or_empty = |path: &Option<PathBuf>| -> OsString {
            path.as_ref()
                .map(|p| p.clone().into_os_string())
                .unwrap_or_default()
        };
        env.push(("DING_SESSION".into(), self.session.clone().into()));
        env.push(("DING_INCARNATION".into(), incarnation.into()));
        env.push(("DING_GENERATION".into(), self.generation.clone().into()));
        env.push((
            "DING_PTY_SOCKET".into(),
            self.socket_path.clone().into_os_string(),
        ));
        env.push(("DING_INBOX".into(), path_or_empty(&self.spec.inbox)));
        env.push((
            "DING_RUNTIME_DIR".into(),
            path_or_empty(&self.spec.runtime_dir),
        ));
        env
    }

    fn drop_master(&mut self) {
        if let Some(master) = self.child.master.take() {
            let _ = self
                .poll
                .registry()
                .deregister(&mut SourceFd(&master.as_raw_fd()));
        }
        self.master_interest = None;
        // Bytes the old terminal never took are not delivered to a new one.
        self.to_master.clear();
    }

    fn child_alive(&self) -> bool {
        matches!(self.child.state, ChildState::Running { .. }) && self.child.master.is_some()
    }

    fn child_exit_code(&self) -> u8 {
        match self.child.state {
            ChildState::Exited { code } => u8::try_from(code).unwrap_or(1),
            ChildState::Killed { signal } => u8::try_from(128 + signal).unwrap_or(1),
            ChildState::Running { .. } => 0,
        }
    }

    fn read_signals(&mut self) -> Result<()> {
        loop {
            let info = match self.signals.read_signal() {
                Ok(Some(info)) => info,
                Ok(None) => return Ok(()),
                Err(Errno::EINTR) => continue,
                Err(err) => return Err(err).context("read signalfd"),
            };
            match Signal::try_from(info.ssi_signo as i32) {
                Ok(Signal::SIGCHLD) => self.reap(),
                Ok(signal) => {
                    log(json!({"event": "shutdown", "signal": signal.as_str()}));
                    self.quit = Some(0);
                }
                Err(_) => {}
            }
        }
    }

    /// Reaps every exited child (SIGCHLD coalesces); records our child's end.
    fn reap(&mut self) {
        loop {
            match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) | Err(_) => return,
                Ok(status) => {
                    if status.pid() == Some(self.child.pid)
                        && let Some(end) = child::exit_state(status)
                    {
                        self.child_ended(end);
                    }
                }
            }
        }
    }

    fn child_ended(&mut self, end: ChildState) {
        // The last output precedes the exit; read it into the model first.
        self.read_master();
        self.child.state = end;
        let revision = self.revision;
        log(json!({"event": "child-exit", "child": end, "revision": revision}));
        let exit_payload = serde_json::to_vec(&end).unwrap_or_default();
        for client in self.clients.values_mut() {
            match client.mode {
                Mode::Watch => client.send_line(&ServerLine::Push(Push::Exit {
                    child: end,
                    revision,
                })),
                Mode::Attach => push_frame(&mut client.outbuf, FrameKind::Exit, &exit_payload),
                Mode::Control => {}
            }
        }
        self.restart_kill_at = None;
        if let Some(waiter) = self.restart_waiter.take() {
            self.restart_now(waiter);
        } else if let Some(grace) = self.exit_with_child {
            self.exit_at = Some(Instant::now() + grace);
        }
    }

    fn restart_now(&mut self, client: Token) {
        match self.start_child() {
            Ok(()) => {
                let reply = Reply::Restart {
                    incarnation: self.child.incarnation.clone(),
                    revision: self.revision,
                };
                self.reply(client, ServerLine::Reply(reply));
            }
            Err(err) => self.error(client, ErrorKind::ChildExited, format!("{err:#}")),
        }
    }

    fn shut_down(&mut self) {
        if matches!(self.child.state, ChildState::Running { .. }) {
            // The whole job, as a terminal hangup would.
            let _ = killpg(self.child.pid, Signal::SIGHUP);
        }
        for client in self.clients.values_mut() {
            client.flush();
        }
        let _ = std::fs::remove_file(&self.socket_path);
    }

    // ---- the terminal ---------------------------------------------------

    /// Reads the master until WouldBlock or until `MASTER_READ_BUDGET` bytes
    /// were read this turn, so a program that floods the terminal cannot
    /// starve the clients; `master_backlog` brings the loop back at once.
    /// Each chunk moves the revision once, feeds the model and goes to every
    /// attached client. EIO means the last slave closed: end of file, not a
    /// failure.
    ///
    /// N.B. a send-if compared after a budget-limited read is still exact:
    /// if any chunk was read the revision moved, so a caller's expected
    /// revision from before cannot match; if none was, the master was drained.
    fn read_master(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        let mut budget = MASTER_READ_BUDGET;
        self.master_backlog = false;
        loop {
            let Some(master) = self.child.master.as_ref() else {
                return;
            };
            if budget == 0 {
                self.master_backlog = true;
                return;
            }
            match nix::unistd::read(master, &mut buf) {
                Ok(0) | Err(Errno::EIO) => {
                    self.drop_master();
                    return;
                }
                Ok(n) => {
                    budget = budget.saturating_sub(n);
                    let chunk = &buf[..n];
                    self.bump();
                    self.screen.handle_output(chunk);
                    for client in self.clients.values_mut() {
                        if client.mode == Mode::Attach {
                            client.send_output(chunk);
                        }
                    }
                }
                Err(Errno::EAGAIN) => return,
                Err(Errno::EINTR) => continue,
                Err(err) => {
                    log(json!({"event": "pty-read-error", "error": err.to_string()}));
                    self.drop_master();
                    return;
                }
            }
        }
    }

    /// Writes committed input until the kernel refuses more; the rest waits
    /// for writable. A transaction waiting for its bytes to land continues.
    fn write_master(&mut self) {
        self.flush_master();
        self.advance(Instant::now());
    }

    fn update_master_interest(&mut self) {
        let Some(master) = self.child.master.as_ref() else {
            return;
        };
        let wanted = if self.to_master.is_empty() {
            Interest::READABLE
        } else {
            Interest::READABLE | Interest::WRITABLE
        };
        if self.master_interest != Some(wanted) {
            let fd = master.as_raw_fd();
            if self
                .poll
                .registry()
                .reregister(&mut SourceFd(&fd), MASTER, wanted)
                .is_ok()
            {
                self.master_interest = Some(wanted);
            }
        }
    }

    fn bump(&mut self) {
        self.revision += 1;
    }

    /// Commits input: it is now inevitable and ordered after everything
    /// committed before it.
    fn commit(&mut self, bytes: &[u8]) {
        self.to_master.extend(bytes);
        self.bump();
        self.flush_master();
    }

    /// Writes `to_master` in order until it is empty or the kernel's buffer
    /// is full. A failed write means the terminal is gone: those bytes can
    /// reach no one, so they are dropped with it.
    fn flush_master(&mut self) {
        while !self.to_master.is_empty() {
            let Some(master) = self.child.master.as_ref() else {
                self.to_master.clear();
                return;
            };
            let (front, _) = self.to_master.as_slices();
            match nix::unistd::write(master, front) {
                Ok(n) => {
                    self.to_master.drain(..n);
                }
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN) => return,
                Err(_) => {
                    self.to_master.clear();
                    return;
                }
            }
        }
    }

    fn pending_input(&self) -> usize {
        self.to_master.len() + self.queued_bytes
    }

    // ---- input order and transactions -----------------------------------

    /// Hands input to the terminal in arrival order, or queues it behind the
    /// active transaction.
    fn submit(&mut self, input: Input) {
        if self.active.is_some() || !self.queued.is_empty() {
            self.queued_bytes += input_len(&input);
            self.queued.push_back(input);
            return;
        }
        self.begin(input);
        self.advance(Instant::now());
    }

    fn begin(&mut self, input: Input) {
        match input {
            Input::Keys(bytes) => {
                if self.child_alive() {
                    self.commit(&bytes);
                }
            }
            Input::Transaction(tx) => self.begin_transaction(tx),
        }
    }

    /// The compare: runs when the transaction reaches the head of the input
    /// order, after reading all pending output, immediately before its first
    /// byte would be committed.
    fn begin_transaction(&mut self, tx: Transaction) {
        self.read_master();
        if !self.child_alive() {
            let reply = match tx.condition {
                Some(_) => ServerLine::Reply(Reply::SendIf(SendIfReply::Exited {
                    revision: self.revision,
                })),
                None => ServerLine::Error(ErrorReply {
                    error: ErrorKind::ChildExited,
                    message: "the child has exited; nothing was written".into(),
                }),
            };
            self.reply(tx.client, reply);
            return;
        }
        if let Some(condition) = &tx.condition {
            if let Some(part) = self.mismatch(condition) {
                let reply = SendIfReply::Mismatch {
                    part,
                    revision: self.revision,
                };
                self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
                return;
            }
            if condition.expected_revision != self.revision {
                let reply = SendIfReply::Conflict {
                    revision: self.revision,
                };
                self.reply(tx.client, ServerLine::Reply(Reply::SendIf(reply)));
                return;
            }
        } else {
            let peer = self.clients.get(&tx.client).map_or(0, |c| c.peer_pid);
            let bytes: usize = tx
                .steps
                .iter()
                .map(|s| match s {
                    Step::Write(b) => b.len(),
                    Step::WaitMs(_) => 0,
                })
                .sum();
            log(json!({
                "event": "intervention",
                "op": "send",
                "peerPid": peer,
                "bytes": bytes,
                "revision": self.revision,
            }));
        }
        self.active = Some(tx);
    }

    fn mismatch(&self, condition: &Condition) -> Option<IdentityPart> {
        if condition.session != self.session {
            Some(IdentityPart::Session)
        } else if condition.incarnation != self.child.incarnation {
            Some(IdentityPart::Incarnation)
        } else if condition.generation != self.generation {
            Some(IdentityPart::Generation)
        } else {
            None
        }
    }

    /// Runs the active transaction as far as it can go now, then, once it
    /// is done, the queued input behind it.
    fn advance(&mut self, now: Instant) {
        loop {
            let Some(tx) = self.active.as_mut() else {
                let Some(next) = self.queued.pop_front() else {
                    return;
                };
                self.queued_bytes -= input_len(&next);
                self.begin(next);
                continue;
            };
            if let Some(until) = tx.wait_until {
                if now < until {
                    return;
                }
                tx.wait_until = None;
            }
            if self.child.master.is_none() {
                let Some(tx) = self.active.take() else { return };
                let message = format!(
                    "the terminal closed during the transaction after {} bytes",
                    tx.written
                );
                self.error(tx.client, ErrorKind::ChildExited, message);
                continue;
            }
            match tx.steps.pop_front() {
                Some(Step::Write(bytes)) => {
                    tx.written += bytes.len();
                    self.commit(&bytes);
                }
                Some(Step::WaitMs(ms)) => {
                    if !self.to_master.is_empty() {
                        // The wait starts when the earlier bytes have landed.
                        tx.steps.push_front(Step::WaitMs(ms));
                        return;
                    }
                    tx.wait_until = Some(now + Duration::from_millis(ms));
                }
                None => {
                    if !self.to_master.is_empty() {
                        return;
                    }
                    let Some(tx) = self.active.take() else { return };
                    let revision = self.revision;
                    let written = tx.written;
                    let reply = match tx.condition {
                        Some(_) => Reply::SendIf(SendIfReply::Sent { revision, written }),
                        None => Reply::Send { revision, written },
                    };
                    self.reply(tx.client, ServerLine::Reply(reply));
                }
            }
        }
    }

    fn resize(&mut self, size: Size) -> Result<(), String> {
        if size.cols == 0 || size.rows == 0 || size.cols > MAX_SIDE || size.rows > MAX_SIDE {
            return Err(format!(
                "size {}x{} is outside 1x1..{MAX_SIDE}x{MAX_SIDE}",
                size.cols, size.rows
            ));
        }
        if let Some(master) = self.child.master.as_ref() {
            child::set_size(master, size).map_err(|e| format!("{e:#}"))?;
        }
        self.size = size;
        self.screen.resize(size);
        self.bump();
        Ok(())
    }

    // ---- clients --------------------------------------------------------

    fn accept_all(&mut self) {
        loop {
            let (mut stream, _) = match self.listener.accept() {
                Ok(pair) => pair,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    log(json!({"event": "accept-error", "error": err.to_string()}));
                    return;
                }
            };
            let creds =
                nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials);
            let (uid, pid) = match creds {
                Ok(cred) => (cred.uid(), cred.pid()),
                Err(_) => (u32::MAX, 0),
            };
            if uid != self.uid {
                log(json!({"event": "refused", "peerUid": uid, "peerPid": pid}));
                let mut refusal = Connection::new(stream, pid);
                refusal.send_line(&ServerLine::Error(ErrorReply {
                    error: ErrorKind::Forbidden,
                    message: format!("uid {uid} may not use this terminal"),
                }));
                // One best-effort write; the connection is dropped either way.
                refusal.flush();
                continue;
            }
            let token = Token(self.next_token);
            self.next_token += 1;
            if self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE)
                .is_err()
            {
                continue;
            }
            self.clients.insert(token, Connection::new(stream, pid));
            // Edge-triggered: bytes that arrived with the connection produce
            // no later event, so read now.
            self.read_client(token);
        }
    }

    fn read_client(&mut self, token: Token) {
        let over = self.pending_input() >= MAX_PENDING_INPUT;
        let Some(client) = self.clients.get_mut(&token) else {
            return;
        };
        if client.dead || client.closing {
            return;
        }
        if over {
            client.stalled = true;
            return;
        }
        client.stalled = false;
        let fill = client.fill(MAX_REQUEST_LINE + 1);
        self.process_client(token);
        if let Some(client) = self.clients.get_mut(&token) {
            match fill {
                Fill::Closed => client.dead = true,
                // More may be waiting and mio will not say so again.
                Fill::Limit => client.stalled = true,
                Fill::Drained => {}
            }
        }
    }

    /// Handles every complete request line or frame in the client's buffer.
    fn process_client(&mut self, token: Token) {
        loop {
            let Some(client) = self.clients.get_mut(&token) else {
                return;
            };
            if client.closing || client.dead {
                return;
            }
            match client.mode {
                Mode::Control | Mode::Watch => {
                    let Some(end) = client.inbuf.iter().position(|&b| b == b'\n') else {
                        if client.inbuf.len() >= MAX_REQUEST_LINE {
                            client.inbuf.clear();
                            client.closing = true;
                            client.send_line(&ServerLine::Error(ErrorReply {
                                error: ErrorKind::OversizedRequest,
                                message: format!(
                                    "request line is longer than {MAX_REQUEST_LINE} bytes"
                                ),
                            }));
                        }
                        return;
                    };
                    let line: Vec<u8> = client.inbuf.drain(..=end).collect();
                    if line.len() > MAX_REQUEST_LINE {
                        client.closing = true;
                        client.send_line(&ServerLine::Error(ErrorReply {
                            error: ErrorKind::OversizedRequest,
                            message: format!(
                                "request line is longer than {MAX_REQUEST_LINE} bytes"
                            ),
                        }));
                        return;
                    }
                    self.handle_line(token, &line[..line.len() - 1]);
                }
                Mode::Attach => match parse_frame(&client.inbuf) {
                    Parsed::Incomplete => return,
                    Parsed::Invalid(why) => {
                        log(json!({"event": "attach-protocol-error", "error": why}));
                        client.dead = true;
                        return;
                    }
                    Parsed::Frame {
                        kind,
                        payload,
                        consumed,
                    } => {
                        client.inbuf.drain(..consumed);
                        self.handle_frame(token, kind, payload);
                    }
                },
            }
        }
    }

    fn handle_frame(&mut self, token: Token, kind: FrameKind, payload: Vec<u8>) {
        match kind {
            FrameKind::Data => {
                if !payload.is_empty() {
                    self.submit(Input::Keys(payload));
                }
            }
            FrameKind::Resize => {
                if let Some(size) = parse_resize(&payload) {
                    // An impossible size from a terminal is ignored, not fatal.
                    let _ = self.resize(size);
                }
            }
            FrameKind::Detach => {
                if let Some(client) = self.clients.get_mut(&token) {
                    client.closing = true;
                }
            }
            FrameKind::Exit => {
                if let Some(client) = self.clients.get_mut(&token) {
                    client.dead = true;
                }
            }
        }
    }

    fn handle_line(&mut self, token: Token, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let request: Request = match serde_json::from_slice(line) {
            Ok(request) => request,
            Err(err) => {
                self.error(token, ErrorKind::MalformedRequest, err.to_string());
                return;
            }
        };
        match request {
            Request::Status {} => {
                // Fresh: output already waiting in the PTY counts.
                self.read_master();
                let status = self.status();
                self.reply(token, ServerLine::Reply(Reply::Status(status)));
            }
            Request::Snapshot {} => {
                self.read_master();
                let snapshot = self.screen.snapshot(self.revision);
                self.reply(token, ServerLine::Reply(Reply::Snapshot(snapshot)));
            }
            Request::SendIf {
                session,
                incarnation,
                generation,
                expected_revision,
                steps,
            } => {
                let condition = Condition {
                    session,
                    incarnation,
                    generation,
                    expected_revision,
                };
                self.transaction(token, Some(condition), steps);
            }
            Request::Send { steps } => self.transaction(token, None, steps),
            Request::Watch {} => {
                let revision = self.revision;
                if let Some(client) = self.clients.get_mut(&token) {
                    client.mode = Mode::Watch;
                    client.pushed_revision = revision;
                }
                self.reply(token, ServerLine::Reply(Reply::Watch { revision }));
            }
            Request::Resize { cols, rows } => match self.resize(Size { cols, rows }) {
                Ok(()) => {
                    let reply = Reply::Resize {
                        revision: self.revision,
                    };
                    self.reply(token, ServerLine::Reply(reply));
                }
                Err(message) => self.error(token, ErrorKind::InvalidArgument, message),
            },
            Request::Restart {} => self.restart(token),
            Request::Attach {} => {
                let revision = self.revision;
                let redraw = self.screen.redraw();
                self.reply(token, ServerLine::Reply(Reply::Attach { revision }));
                let ended = (!matches!(self.child.state, ChildState::Running { .. }))
                    .then(|| serde_json::to_vec(&self.child.state).unwrap_or_default());
                if let Some(client) = self.clients.get_mut(&token) {
                    client.mode = Mode::Attach;
                    push_frame(&mut client.outbuf, FrameKind::Data, &redraw);
                    if let Some(payload) = ended {
                        push_frame(&mut client.outbuf, FrameKind::Exit, &payload);
                    }
                }
            }
        }
    }

    fn transaction(&mut self, token: Token, condition: Option<Condition>, steps: Vec<Step>) {
        let bytes = match transport::validate(&steps) {
            Ok(bytes) => bytes,
            Err(err) => {
                self.error(token, ErrorKind::InvalidTransport, err.to_string());
                return;
            }
        };
        if self.pending_input() + bytes > MAX_PENDING_INPUT {
            self.error(
                token,
                ErrorKind::Busy,
                "too much input is queued for the terminal; nothing was written".into(),
            );
            return;
        }
        self.submit(Input::Transaction(Transaction {
            client: token,
            condition,
            steps: steps.into(),
            written: 0,
            wait_until: None,
        }));
    }

    fn restart(&mut self, token: Token) {
        if self.active.is_some() || !self.queued.is_empty() || self.restart_waiter.is_some() {
            let message = "input is in flight; restart after it lands".into();
            self.error(token, ErrorKind::Busy, message);
            return;
        }
        self.exit_at = None;
        if matches!(self.child.state, ChildState::Running { .. }) {
            self.restart_waiter = Some(token);
            log(json!({
                "event": "intervention",
                "op": "restart",
                "pid": self.child.pid.as_raw(),
            }));
            let _ = killpg(self.child.pid, Signal::SIGHUP);
            self.restart_kill_at = Some(Instant::now() + RESTART_KILL_AFTER);
        } else {
            self.restart_now(token);
        }
    }

    fn status(&self) -> Status {
        Status {
            session: self.session.clone(),
            incarnation: self.child.incarnation.clone(),
            generation: self.generation.clone(),
            revision: self.revision,
            child: self.child.state,
            size: self.size,
            bracketed_paste: self.screen.bracketed_paste(),
            attached: self
                .clients
                .values()
                .filter(|c| c.mode == Mode::Attach)
                .count(),
        }
    }

    fn reply(&mut self, token: Token, line: ServerLine) {
        if let Some(client) = self.clients.get_mut(&token) {
            client.send_line(&line);
        }
    }

    fn error(&mut self, token: Token, error: ErrorKind, message: String) {
        self.reply(token, ServerLine::Error(ErrorReply { error, message }));
    }
}

fn input_len(input: &Input) -> usize {
    match input {
        Input::Keys(bytes) => bytes.len(),
        Input::Transaction(tx) => tx
            .steps
            .iter()
            .map(|s| match s {
                Step::Write(b) => b.len(),
                Step::WaitMs(_) => 0,
            })
            .sum(),
    }
}

/// One JSON line per decision on stderr.
fn log(line: serde_json::Value) {
    eprintln!("{line}");
}
