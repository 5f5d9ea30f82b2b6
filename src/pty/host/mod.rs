//! The PTY host's event loop: one thread, one `mio::Poll` over the listening
//! socket, the PTY master, a signalfd and every client connection.
//!
//! This is the shell of the input order: the rules of which input reaches
//! the terminal when (the queue behind a transaction, the compare-and-send,
//! the time fence, the hold, withdraw, the pacing of keys) and the revision
//! they compare live in the sans-IO machine [`crate::pty::input_order`].
//! The host feeds it (a client's keys or transaction, a chunk of output
//! read, the terminal having taken every committed byte, a child started
//! or ended, a client gone, the time) and carries out what it asks, in
//! order ([`Host::drive`]), the way `adapter::kit` carries out the adapter
//! machine's outputs. Everything that touches the terminal happens here, so
//! ordering needs no locks:
//!
//! * Input the machine *commits* is appended to `to_master` (a FIFO of
//!   bytes the kernel has not taken yet). Bytes leave `to_master` in order,
//!   whatever the kernel accepts per write; once it is empty the machine
//!   hears [`Input::Landed`].
//! * A transaction's waits are the machine's timers, not sleeps: output
//!   keeps being read so the child never blocks on a full PTY.
//! * Before a `send-if`'s compare the machine asks for every byte of
//!   pending output to be read ([`Output::ReadOutput`]).
//!
//! This file holds the state and the loop; `lifecycle` starts, reaps and
//! restarts the child, `terminal` reads and writes the PTY master,
//! `requests` serves the clients.
//! Shapes on the wire live in `wire`; the screen model in `screen`; the
//! socket checks in `socket`; spawning on a PTY in `child`.

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
use nix::sys::signal::{Signal, killpg};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::{Pid, Uid};
use serde_json::json;

use crate::core::time::Time;
use crate::log_file::LogSink;
use crate::private_socket;
use crate::pty::child::{self, Launch};
use crate::pty::connection::{Connection, Fill, Mode};
use crate::pty::identity::{LaunchSpec, fresh_incarnation};
use crate::pty::input_order::{
    Client, Condition, HoldAsk, Input, InputOrder, KeyPacing, Output, Record, Transaction,
};
use crate::pty::queries::QueryScanner;
use crate::pty::screen::Screen;
use crate::pty::transport::{self, WireStep};
use crate::pty::wire::{
    ChildState, ErrorKind, ErrorReply, FrameKind, HostStatus, MAX_HOLD_INPUT_MS, MAX_QUIET_MS,
    MAX_REQUEST_LINE, NextRequest, Origin, Parsed, Push, Reply, Request, ServerLine, Size,
    decode_request, next_request, parse_frame, parse_resize, push_frame,
};
use crate::signals;

mod lifecycle;
mod orphans;
mod requests;
mod terminal;

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
    /// What the host was started from, reported by `status` as `launch`.
    pub launch: Option<serde_json::Value>,
    /// The file stderr points at, if any: the log is then capped and
    /// rotated there (see [`crate::log_file`]).
    pub log: Option<PathBuf>,
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
    /// When it entered its state (started, or ended).
    since: Instant,
}

struct Host {
    poll: Poll,
    listener: mio::net::UnixListener,
    signals: SignalFd,
    socket_path: PathBuf,
    session: String,
    generation: String,
    spec: LaunchSpec,
    launch: Option<serde_json::Value>,
    size: Size,
    uid: u32,
    /// The host's own clock: the machine's times are milliseconds on it.
    clock: Instant,
    /// The input order, the revision and the terminal's times.
    order: InputOrder,
    screen: Screen,
    /// Terminal queries in the output, answered by the host (`queries.rs`).
    queries: QueryScanner,
    /// The last snapshot reply line and the revision it shows.
    snapshot_cache: Option<(u64, std::rc::Rc<[u8]>)>,
    child: Child,
    clients: BTreeMap<Token, Connection>,
    next_token: usize,
    /// Committed input the kernel has not accepted yet, in order.
    to_master: VecDeque<u8>,
    master_interest: Option<Interest>,
    restart_waiter: Option<Token>,
    /// When a restart's SIGHUP is followed by SIGKILL.
    restart_kill_at: Option<Instant>,
    /// Set while the exited child is held unreaped (see `reap`): when what
    /// is left of its process group is killed and the child reaped.
    job_end_at: Option<Instant>,
    /// The last master read stopped at its budget, not at WouldBlock.
    master_backlog: bool,
    exit_with_child: Option<Duration>,
    exit_at: Option<Instant>,
    quit: Option<u8>,
    /// Where [`Host::log`] writes; a failed write is counted, never fatal.
    log: LogSink,
}

impl Host {
    fn new(config: Config) -> Result<Host> {
        // Before anything can deliver them, so that none is lost between now
        // and the signalfd existing; the child starts clean (see `child`).
        let signals = signals::read_through_signalfd(&signals::HANDLED)?;
        // Before the first child, so that nothing it starts can escape.
        orphans::adopt_orphans().context("become the subreaper of the harness's processes")?;
        let mut listener = private_socket::bind_private(&config.socket)?;
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
        let order = InputOrder::new(
            config.session.clone(),
            generation.clone(),
            KeyPacing::PERSON,
        );
        let mut host = Host {
            poll,
            listener,
            signals,
            socket_path,
            session: config.session,
            generation,
            spec: config.spec,
            launch: config.launch,
            size: config.size,
            uid: Uid::effective().as_raw(),
            clock: Instant::now(),
            order,
            screen: Screen::new(config.size),
            queries: QueryScanner::default(),
            snapshot_cache: None,
            child: Child {
                incarnation: String::new(),
                pid: Pid::from_raw(0),
                state: ChildState::Exited { code: 0 },
                master: None,
                since: Instant::now(),
            },
            clients: BTreeMap::new(),
            next_token: FIRST_CLIENT,
            to_master: VecDeque::new(),
            master_interest: None,
            restart_waiter: None,
            restart_kill_at: None,
            job_end_at: None,
            master_backlog: false,
            exit_with_child: config.exit_with_child,
            log: LogSink::stderr(config.log.as_deref()),
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

    /// Whether a client has unread bytes (see `Connection::stalled`) that
    /// may be read now: the input queue has room and its replies are not
    /// waiting for it. Then the loop must not sleep.
    fn can_resume_reading(&self) -> bool {
        self.pending_input() < MAX_PENDING_INPUT
            && self.clients.values().any(Connection::may_resume)
    }

    /// The earliest timer: the input order's (a transaction's wait, a
    /// hold's end, a person's paced keys), the exit grace, a restart's
    /// escalation to SIGKILL, or the end of an exited child's job.
    fn next_deadline(&self) -> Option<Instant> {
        let order = self
            .order
            .next_deadline()
            .map(|at| self.clock + Duration::from_millis(at.as_millis()));
        [order, self.exit_at, self.restart_kill_at, self.job_end_at]
            .into_iter()
            .flatten()
            .min()
    }

    /// Work that follows every batch of events: timers, resumed reads,
    /// watch pushes, flushing, and interest derived from the new state.
    fn after_events(&mut self) {
        let now = Instant::now();
        let at = self.time(now);
        self.order.handle_timeout(at);
        self.drive(None);
        if self.exit_at.is_some_and(|at| at <= now) {
            self.quit = Some(self.child_exit_code());
        }
        if self.restart_kill_at.is_some_and(|at| at <= now) {
            self.restart_kill_at = None;
            self.log(json!({"event": "restart-kill", "pid": self.child.pid.as_raw()}));
            let _ = killpg(self.child.pid, Signal::SIGKILL);
        }
        if self.job_end_at.is_some_and(|at| at <= now) {
            self.end_job();
        }
        if self.pending_input() < MAX_PENDING_INPUT {
            let stalled: Vec<Token> = self
                .clients
                .iter()
                .filter(|(_, c)| c.may_resume())
                .map(|(t, _)| *t)
                .collect();
            for token in stalled {
                self.read_client(token);
            }
        }
        let revision = self.order.revision();
        let terminal = self.order.terminal();
        // A redraw renders the whole screen: only once, and only if needed.
        let mut redraw: Option<Vec<u8>> = None;
        let screen = &self.screen;
        for client in self.clients.values_mut() {
            // First what the socket takes now: a push or redraw waits for an
            // empty queue, and no later event may come to say it emptied.
            client.flush();
            if client.mode == Mode::Watch
                && client.outbuf.is_empty()
                && client.pushed_revision < revision
            {
                client.pushed_revision = revision;
                client.send_line(&ServerLine::Push(Push::Revision { revision, terminal }));
            }
            if client.mode == Mode::Attach && client.needs_redraw && client.outbuf.is_empty() {
                client.needs_redraw = false;
                let redraw = redraw.get_or_insert_with(|| screen.redraw());
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
            // A hold whose client is gone lets what it held go on now.
            self.drive(Some(Input::ClientGone(Client(token.0))));
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
}

impl Host {
    /// One JSON line per decision on stderr, with the wall-clock time
    /// (`time`, RFC 3339 UTC) so it reads beside the sidecar's log. The
    /// file is capped and rotated; a line that cannot be written (a full
    /// runtime filesystem) is counted and shown by `status`, never fatal:
    /// this process runs the agent's harness.
    fn log(&mut self, mut line: serde_json::Value) {
        if let Some(object) = line.as_object_mut() {
            object.insert(
                "time".into(),
                serde_json::Value::String(crate::wall_clock::now_rfc3339()),
            );
        }
        if let Some(note) = self.log.write_line(&line.to_string()).note() {
            self.log(note);
        }
    }
}

impl Host {
    /// `at` on the host's own clock, the machine's time.
    fn time(&self, at: Instant) -> Time {
        Time::from_millis(self.clock_ms(at))
    }

    /// Gives the input order `input` (if any) now, then carries out
    /// everything it asks, in order; tells it when the terminal has taken
    /// every committed byte, and carries out what follows, until it asks
    /// nothing more.
    fn drive(&mut self, input: Option<Input>) {
        if let Some(input) = input {
            let now = self.time(Instant::now());
            self.order.handle_input(input, now);
        }
        loop {
            while let Some(output) = self.order.poll_output() {
                self.carry_out(output);
            }
            if self.order.landed() || !self.to_master.is_empty() {
                return;
            }
            let now = self.time(Instant::now());
            self.order.handle_input(Input::Landed, now);
        }
    }

    /// One output of the input order, one action.
    fn carry_out(&mut self, output: Output) {
        match output {
            Output::Write { bytes, .. } => {
                self.to_master.extend(bytes);
                self.flush_master();
            }
            Output::ReadOutput => {
                self.read_master();
                let now = self.time(Instant::now());
                self.order.handle_input(Input::OutputRead, now);
            }
            Output::Reply { client, line } => self.reply(Token(client.0), line),
            Output::Withdrawn { revision } => {
                for client in self.clients.values_mut() {
                    if client.mode == Mode::Watch {
                        client.send_line(&ServerLine::Push(Push::Withdrawn { revision }));
                    }
                }
            }
            Output::Log(record) => {
                let mut line = record.to_json();
                if let Record::Began { client, .. } = record {
                    let peer = self.clients.get(&Token(client.0)).map_or(0, |c| c.peer_pid);
                    line["peerPid"] = json!(peer);
                }
                self.log(line);
            }
        }
    }

    /// Tells the input order which child is on the terminal now.
    fn tell_terminal(&mut self) {
        let input = Input::Terminal {
            incarnation: self.child.incarnation.clone(),
            running: matches!(self.child.state, ChildState::Running { .. }),
            open: self.child.master.is_some(),
        };
        self.drive(Some(input));
    }
}
