//! `ding adapter codex launch [--ding P] [--idle-path native|terminal] --
//! CODEX [ARGS...]`: the harness command of a Codex agent, run by the PTY
//! host (so everything it starts carries the `DING_*` identity and dies with
//! the PTY host's process group).
//!
//! * **native** (the default): starts Codex's own `app-server` on
//!   `$DING_RUNTIME_DIR/codex.sock` with DING's hooks and their trust
//!   (`trust::config_args`) and the user's `-c`/`-p`/`--enable`/`--disable`
//!   arguments, waits for the socket, runs the TUI as `CODEX --remote
//!   unix://SOCKET ARGS...` on the terminal, and meanwhile drives the
//!   native idle path (`native.rs`) as a second client of the app-server.
//!   Hooks run in the app-server, so it is started here, under the PTY
//!   host. When the TUI exits, DING's leftover queue items are deleted and
//!   the app-server is ended by its pid; the exit status is the TUI's. An
//!   app-server that dies under the TUI is started again on the same
//!   socket (the TUI reconnects to it) while the thread has a turn to
//!   resume, at most `SERVER_RESTARTS` times; otherwise the TUI is ended
//!   and the launcher exits with status 1 (`native::after_server_lost`).
//! * **terminal**: tells the adapter which hooks it declares, then becomes
//!   `CODEX HOOK-ARGS ARGS...` (embedded: the TUI runs the hooks itself).
//!   Any `-c` argument also keeps Codex from starting its shared daemon.
//!
//! Nothing the launcher says goes to the terminal (the TUI owns it): its
//! log is `$DING_RUNTIME_DIR/codex-launch.log`, the app-server's
//! `codex-app-server.log` beside it.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};

use crate::adapter::HookAnswer;
use crate::adapter::clock::Clock;
use crate::adapter::compile::IdlePath;
use crate::adapter::relay;
use crate::wait::{POLL_EVERY, RETRY_EVERY, wait_for, wait_until};

use super::hooks::{LAUNCH, QUEUE};
use super::launcher_wire::{LaunchMode, LaunchReport};
use super::native::{Action, Native};
use super::timing::{LAUNCH_CALL_TIMEOUT, LISTEN_DEADLINE, QUEUE_CALL_TIMEOUT};
use super::trust::{PROVIDER, config_args, declared_events};
use super::websocket;

/// The app-server's socket, in the agent's runtime directory.
pub const SOCKET_NAME: &str = "codex.sock";

/// What the launcher was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRequest {
    pub ding: String,
    pub native: bool,
    pub program: String,
    pub args: Vec<String>,
}

/// Parses `launch`'s arguments.
pub fn parse(args: Vec<OsString>) -> Result<LaunchRequest> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut ding = None;
    let mut native = true;
    let mut argv = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("ding") => ding = Some(parser.value()?.string()?),
            Long("idle-path") => {
                native = IdlePath::parse(&parser.value()?.string()?)? == IdlePath::Native
            }
            Value(value) => argv.push(value.string()?),
            other => bail!("{}", other.unexpected()),
        }
        if !argv.is_empty() {
            for value in parser.raw_args()? {
                argv.push(value.string()?);
            }
        }
    }
    let Some((program, args)) = argv.split_first() else {
        bail!(
            "usage: ding adapter codex launch [--ding P] [--idle-path native|terminal] -- CODEX [ARGS...]"
        );
    };
    // By default the hooks run this very `ding`, by its path: they then
    // find it whatever PATH Codex gives its hooks.
    let ding = ding.unwrap_or_else(crate::ding_binary::ding_program);
    Ok(LaunchRequest {
        ding,
        native,
        program: program.clone(),
        args: args.to_vec(),
    })
}

/// The user's arguments that configure Codex (for the app-server as well
/// as the TUI): `-c`/`--config K=V`, `-p`/`--profile P`, `--enable F`,
/// `--disable F`.
pub fn config_of(args: &[String]) -> Vec<String> {
    const WITH_VALUE: [&str; 6] = ["-c", "--config", "-p", "--profile", "--enable", "--disable"];
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if WITH_VALUE.contains(&word.as_str()) {
            if let Some(value) = words.next() {
                out.extend([word.clone(), value.clone()]);
            }
        } else if WITH_VALUE
            .iter()
            .any(|flag| flag.starts_with("--") && word.starts_with(&format!("{flag}=")))
        {
            out.push(word.clone());
        }
    }
    out
}

/// `ding adapter codex launch ...`.
pub fn main(args: Vec<OsString>) -> Result<()> {
    let request = parse(args)?;
    let runtime = runtime_dir()?;
    let mut log = Log::open(&runtime.join("codex-launch.log"));
    if !request.native {
        return embedded(&request, &mut log);
    }
    let status = native(&request, &runtime, &mut log)?;
    std::process::exit(status.code().unwrap_or(1));
}

/// The agent's runtime directory, else a private one of the launcher's.
fn runtime_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("DING_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let template = std::env::temp_dir().join("ding-codex-XXXXXX");
    nix::unistd::mkdtemp(&template).context("create a private directory for the app-server socket")
}

/// The terminal path: report the hooks, then become Codex.
fn embedded(request: &LaunchRequest, log: &mut Log) -> Result<()> {
    let hooks = config_args(&request.ding);
    let report = LaunchReport {
        mode: LaunchMode::Embedded,
        declared: Some(declared_events(&hooks)),
        error: None,
    };
    tell_adapter(&relay::socket_from_env(), &report, log);
    let err = Command::new(&request.program)
        .args(&hooks)
        .args(&request.args)
        .exec();
    Err(err).with_context(|| format!("run {}", request.program))
}

enum Event {
    /// A message from the app-server, on connection `link`.
    Rpc {
        link: u64,
        text: String,
    },
    /// Connection `link` to the app-server closed.
    RpcClosed {
        link: u64,
        why: String,
    },
    Answer {
        call: u64,
        answer: Option<HookAnswer>,
    },
    TuiExited(std::io::Result<ExitStatus>),
}

/// The app-server the launcher runs, and how to run it again on the same
/// socket.
struct AppServer {
    child: Child,
    argv: Vec<String>,
    socket: PathBuf,
    log_path: PathBuf,
}

impl AppServer {
    /// Starts it and waits until it listens.
    fn start(request: &LaunchRequest, runtime: &Path, log: &mut Log) -> Result<AppServer> {
        let socket = runtime.join(SOCKET_NAME);
        let _ = std::fs::remove_file(&socket);
        let url = format!("unix://{}", socket.display());
        let mut argv = vec![
            request.program.clone(),
            "app-server".into(),
            "--listen".into(),
            url,
        ];
        argv.extend(config_args(&request.ding));
        argv.extend(config_of(&request.args));
        let child = spawn_server(&argv, &runtime.join("codex-app-server.log"))?;
        let mut server = AppServer {
            child,
            argv,
            socket,
            log_path: runtime.join("codex-app-server.log"),
        };
        log.line(&format!(
            "app-server {} on {}",
            server.child.id(),
            server.url()
        ));
        if let Err(err) = wait_listening(&server.socket, &mut server.child, &server.log_path) {
            end(&mut server.child);
            return Err(err);
        }
        Ok(server)
    }

    fn url(&self) -> &str {
        &self.argv[3]
    }

    /// How it ended, once it has (reaped now if it exited meanwhile).
    fn ended(&mut self) -> String {
        let waited = wait_for(Duration::from_secs(1), POLL_EVERY, || {
            self.child.try_wait().ok().flatten()
        });
        match waited {
            Some(status) => format!("the app-server exited ({status})"),
            None => "the app-server's connection closed".into(),
        }
    }

    /// Starts it again on the same socket (it binds over the stale socket
    /// file) and waits until it listens.
    fn restart(&mut self, log: &mut Log) -> Result<()> {
        end(&mut self.child);
        self.child = spawn_server(&self.argv, &self.log_path)?;
        log.line(&format!("app-server started again: {}", self.child.id()));
        wait_listening(&self.socket, &mut self.child, &self.log_path)
    }
}

fn spawn_server(argv: &[String], log_path: &Path) -> Result<Child> {
    let server_log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .context("open the app-server log")?;
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(server_log.try_clone().context("app-server log")?)
        .stderr(server_log)
        .spawn()
        .with_context(|| format!("start {} app-server", argv[0]))
}

/// The native path: app-server, TUI, and the RPC client between them and
/// the adapter. Returns the TUI's exit status.
fn native(request: &LaunchRequest, runtime: &Path, log: &mut Log) -> Result<ExitStatus> {
    let mut server = AppServer::start(request, runtime, log)?;
    let mut tui = Command::new(&request.program)
        .args(["--remote", server.url()])
        .args(&request.args)
        .spawn()
        .with_context(|| format!("start {} --remote", request.program));
    let status = match tui.as_mut() {
        Ok(tui) => drive(tui, &mut server, log),
        Err(_) => None,
    };
    end(&mut server.child);
    match (tui, status) {
        (Ok(_), Some(status)) => Ok(status),
        (Ok(mut tui), None) => tui.wait().context("wait for the TUI"),
        (Err(err), _) => Err(err),
    }
}

/// Waits until the app-server accepts connections on `socket`. If it exits
/// first, says why in its own words (the last `Error:` line of its log),
/// since the TUI's terminal is the only place a person looks.
fn wait_listening(socket: &Path, server: &mut Child, log: &Path) -> Result<()> {
    let listening = wait_for(LISTEN_DEADLINE, POLL_EVERY, || {
        if UnixStream::connect(socket).is_ok() {
            return Some(Ok(()));
        }
        if let Ok(Some(status)) = server.try_wait() {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            let why = last_error(&said).map_or(String::new(), |error| format!(": {error}"));
            return Some(Err(anyhow!(
                "the app-server exited before it listened ({status}){why} (log: {})",
                log.display()
            )));
        }
        None
    });
    listening.unwrap_or_else(|| {
        Err(anyhow!(
            "the app-server did not listen on {} within {:?}",
            socket.display(),
            LISTEN_DEADLINE
        ))
    })
}

/// The last line of a Rust program's log that reports its fatal error.
fn last_error(log: &str) -> Option<String> {
    log.lines()
        .rev()
        .find_map(|line| line.strip_prefix("Error: "))
        .map(|error| crate::escape::escape_bounded(error.trim(), 300))
}

/// Ends a child by its pid: SIGTERM, then SIGKILL after 3 s.
fn end(child: &mut Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    if wait_until(Duration::from_secs(3), || {
        matches!(child.try_wait(), Ok(Some(_)))
    }) {
        return;
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The launcher's end of its conversations: the app-server connection
/// (numbered, so that a closed one's last words are told from the new
/// one's), the hook channel, and the events both feed.
struct Shell {
    events: mpsc::Sender<Event>,
    hook_socket: Option<PathBuf>,
    sender: Option<websocket::Sender>,
    link: u64,
    /// What the native path said of a lost app-server, for the loop to
    /// carry out: start it again (`true`) or end the TUI.
    lost: Vec<(String, bool)>,
}

impl Shell {
    /// Connects to the app-server and starts reading it; `false` (said to
    /// the adapter) if it cannot.
    fn connect(&mut self, socket: &Path, log: &mut Log) -> bool {
        if let Some(old) = self.sender.take() {
            old.shutdown();
        }
        self.link += 1;
        let (sender, mut receiver) = match websocket::connect(socket) {
            Ok(connection) => connection,
            Err(err) => {
                log.line(&format!("no RPC connection: {err}"));
                let why = format!("connect to the app-server: {err}");
                self.tell(LaunchMode::NativeUnavailable, &why, log);
                return false;
            }
        };
        let (events, link) = (self.events.clone(), self.link);
        thread::spawn(move || {
            loop {
                let event = match receiver.next_text() {
                    Ok(text) => Event::Rpc { link, text },
                    Err(err) => Event::RpcClosed {
                        link,
                        why: err.to_string(),
                    },
                };
                let closed = matches!(event, Event::RpcClosed { .. });
                if events.send(event).is_err() || closed {
                    return;
                }
            }
        });
        self.sender = Some(sender);
        true
    }

    /// Says to the adapter what became of the native path.
    fn tell(&self, mode: LaunchMode, why: &str, log: &mut Log) {
        let report = LaunchReport {
            mode,
            declared: None,
            error: Some(why.to_string()),
        };
        tell_adapter(&self.hook_socket, &report, log);
    }

    fn perform(&mut self, actions: Vec<Action>, native: &mut Option<Native>, log: &mut Log) {
        for action in actions {
            match action {
                Action::Send(line) => {
                    log.line(&format!("-> {}", abbreviated(&line)));
                    if let Some(sender) = &self.sender
                        && let Err(err) = sender.send_text(&line)
                    {
                        log.line(&format!("send failed: {err}"));
                    }
                }
                Action::Call { call, report } => {
                    let payload = report.to_payload();
                    log.line(&format!("call {call}: {payload}"));
                    let Some(hook_socket) = self.hook_socket.clone() else {
                        continue;
                    };
                    let events = self.events.clone();
                    thread::spawn(move || {
                        let answer = relay::call(
                            &hook_socket,
                            PROVIDER,
                            QUEUE,
                            payload,
                            false,
                            QUEUE_CALL_TIMEOUT,
                        );
                        // Handed to the native path of this process: passed
                        // on, as far as the hook channel is concerned.
                        match answer {
                            Ok((answer, receipt)) => {
                                let answer = Some(answer);
                                if events.send(Event::Answer { call, answer }).is_ok() {
                                    receipt.send();
                                }
                            }
                            Err(_) => {
                                let _ = events.send(Event::Answer { call, answer: None });
                            }
                        }
                    });
                }
                Action::Unavailable(why) => {
                    log.line(&format!("native idle path unavailable: {why}"));
                    self.tell(LaunchMode::NativeUnavailable, &why, log);
                    *native = None;
                }
                Action::ServerLost { why, restart } => {
                    log.line(&why);
                    self.tell(LaunchMode::NativeDown, &why, log);
                    self.lost.push((why, restart));
                }
            }
        }
    }
}

/// Runs the native path until the TUI exits; its status. `None` if the TUI
/// could not be waited for here. An app-server that dies under the TUI is
/// started again on the same socket (the TUI reconnects to it), or the TUI
/// ended, as the native path decides ([`Native::on_closed`]); a TUI the
/// launcher ended makes it exit with failure.
fn drive(tui: &mut Child, server: &mut AppServer, log: &mut Log) -> Option<ExitStatus> {
    let clock = Clock::start();
    let (events, inbox) = mpsc::channel::<Event>();
    // The TUI: its exit ends everything.
    let pid = tui.id();
    {
        let events = events.clone();
        thread::spawn(move || {
            let status = nix::sys::wait::waitpid(nix::unistd::Pid::from_raw(pid as i32), None)
                .map(|status| match status {
                    nix::sys::wait::WaitStatus::Exited(_, code) => exit_status(code << 8),
                    nix::sys::wait::WaitStatus::Signaled(_, signal, _) => {
                        exit_status(signal as i32)
                    }
                    _ => exit_status(1 << 8),
                })
                .map_err(std::io::Error::from);
            let _ = events.send(Event::TuiExited(status));
        });
    }
    let mut shell = Shell {
        events,
        hook_socket: relay::socket_from_env(),
        sender: None,
        link: 0,
        lost: Vec::new(),
    };
    let mut native = None;
    if shell.connect(&server.socket, log) {
        let cwd = std::env::current_dir()
            .map(|dir| dir.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (started, actions) = Native::start(&cwd);
        native = Some(started);
        shell.perform(actions, &mut native, log);
    }
    // Why, once the launcher ended the TUI itself: it then exits with
    // failure, and says why once the TUI has left the terminal.
    let mut ended_it: Option<String> = None;
    let status = loop {
        let timeout = native
            .as_ref()
            .and_then(Native::next_deadline)
            .map(|at| clock.until(at));
        let event = match timeout {
            Some(timeout) => inbox.recv_timeout(timeout),
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let now = clock.now();
        let actions = match event {
            Ok(Event::TuiExited(status)) => break status.ok(),
            Ok(Event::Rpc { link, text }) if link == shell.link => {
                if worth_logging(&text) {
                    log.line(&format!("<- {}", abbreviated(&text)));
                }
                native
                    .as_mut()
                    .map(|native| native.on_message(&text, now))
                    .unwrap_or_default()
            }
            Ok(Event::RpcClosed { link, why }) if link == shell.link => {
                let lost = format!("{} ({why})", server.ended());
                native
                    .as_mut()
                    .map(|native| native.on_closed(&lost))
                    .unwrap_or_default()
            }
            Ok(Event::Rpc { .. } | Event::RpcClosed { .. }) => Vec::new(),
            Ok(Event::Answer { call, answer }) => {
                log.line(&format!(
                    "answer {call}: {}",
                    answer
                        .as_ref()
                        .map(|answer| abbreviated(&answer.to_line()))
                        .unwrap_or("unreachable".into())
                ));
                native
                    .as_mut()
                    .map(|native| native.on_answer(call, answer.as_ref(), now))
                    .unwrap_or_default()
            }
            Err(RecvTimeoutError::Timeout) => Vec::new(),
            Err(RecvTimeoutError::Disconnected) => break None,
        };
        shell.perform(actions, &mut native, log);
        for (why, restart) in std::mem::take(&mut shell.lost) {
            if !restart {
                end_the_tui(tui);
                ended_it = Some(why);
                continue;
            }
            match server.restart(log) {
                Ok(()) if shell.connect(&server.socket, log) => {
                    let actions = native.as_mut().map(Native::reconnected).unwrap_or_default();
                    shell.perform(actions, &mut native, log);
                }
                // Connecting said why to the adapter: the path is down
                // for good.
                Ok(()) => native = None,
                Err(err) => {
                    let why = format!("{why}, but it could not be: {err:#}; ending the TUI");
                    log.line(&why);
                    shell.tell(LaunchMode::NativeDown, &why, log);
                    end_the_tui(tui);
                    ended_it = Some(why);
                }
            }
        }
        let due = native
            .as_mut()
            .map(|native| native.on_time(clock.now()))
            .unwrap_or_default();
        shell.perform(due, &mut native, log);
    };
    if let Some(mut left) = native.take() {
        // DING's items still queued would run if this thread were resumed
        // later: delete them, waiting a moment for the answers.
        let leftovers = left.leftovers();
        if !leftovers.is_empty() {
            log.line(&format!("deleting {} leftover deliveries", leftovers.len()));
            shell.perform(leftovers, &mut None, log);
            let deadline = Instant::now() + Duration::from_secs(1);
            while !left.settled() {
                let Ok(Event::Rpc { text, .. }) =
                    inbox.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                else {
                    break;
                };
                left.on_message(&text, clock.now());
            }
        }
    }
    if let Some(sender) = &shell.sender {
        sender.shutdown();
    }
    // A TUI the launcher ended is a failure, whatever its signal says. Why
    // is said only now that the TUI has left the terminal: said while it
    // still drew, it landed over its last frame.
    if let Some(why) = &ended_it {
        eprintln!("ding: {why}");
    }
    status.map(|status| {
        if ended_it.is_some() {
            exit_status(1 << 8)
        } else {
            status
        }
    })
}

/// Ends the TUI whose app-server is gone for good (the adapter and the
/// launcher's log were told why); the caller says why once it has exited.
fn end_the_tui(tui: &mut Child) {
    let pid = nix::unistd::Pid::from_raw(tui.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
}

fn exit_status(raw: i32) -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(raw)
}

/// One `launch` call, answered at once. The sidecar may start the adapter a
/// moment after the PTY host started the launcher: a hook channel not there
/// yet is waited for, briefly.
fn tell_adapter(hook_socket: &Option<PathBuf>, report: &LaunchReport, log: &mut Log) {
    let Some(socket) = hook_socket else {
        return;
    };
    let payload = serde_json::to_value(report).unwrap_or_default();
    let mut absent = None;
    let answered = wait_for(LAUNCH_CALL_TIMEOUT, RETRY_EVERY, || {
        let call = relay::call(
            socket,
            PROVIDER,
            LAUNCH,
            payload.clone(),
            false,
            LAUNCH_CALL_TIMEOUT,
        );
        match call {
            Err(failure @ relay::RelayFailure::Connect(_)) => {
                absent = Some(failure);
                None
            }
            other => Some(other),
        }
    });
    if let Some(failure) = answered.map_or(absent, Result::err) {
        log.line(&format!(
            "the adapter did not take the launch call: {failure:?}"
        ));
    }
}

/// Replies and the notifications the native path acts on; not the stream
/// of a turn's items and deltas.
fn worth_logging(text: &str) -> bool {
    const ACTED_ON: [&str; 3] = [
        "\"thread/started\"",
        "\"thread/status/changed\"",
        "\"thread/queue/changed\"",
    ];
    !text.starts_with("{\"method\"") || ACTED_ON.iter().any(|method| text.contains(method))
}

fn abbreviated(text: &str) -> String {
    const MAX: usize = 600;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

/// The most the launcher writes into its log in one launch: a long session
/// must not fill the runtime directory.
const LOG_BUDGET: usize = 4 * 1024 * 1024;

/// The launcher's own log (never the terminal), bounded by [`LOG_BUDGET`].
struct Log {
    file: Option<File>,
    left: usize,
}

impl Log {
    fn open(path: &Path) -> Log {
        Log {
            file: OpenOptions::new().create(true).append(true).open(path).ok(),
            left: LOG_BUDGET,
        }
    }

    fn line(&mut self, text: &str) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!("{}.{:03} {text}\n", at.as_secs(), at.subsec_millis());
        if line.len() > self.left {
            let _ = writeln!(
                file,
                "log budget of {LOG_BUDGET} bytes spent: no more lines"
            );
            self.file = None;
            return;
        }
        self.left -= line.len();
        let _ = file.write_all(line.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<OsString> {
        text.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn an_app_server_that_gives_up_is_quoted_in_its_own_words() {
        // As Codex 0.169.0 logged it when the last incarnation's app-server
        // still held its control socket.
        let log = "WARNING: proceeding\n\u{1b}[31mERROR\u{1b}[0m bubblewrap\n\
                   Error: app-server control socket is already in use at /tmp/codex-daemon-0/fb83\n\n\
                   Stack backtrace:\n   0: <unknown>\n";
        assert_eq!(
            last_error(log).as_deref(),
            Some("app-server control socket is already in use at /tmp/codex-daemon-0/fb83")
        );
        assert_eq!(
            last_error("Error: \u{1b}]52;c;x\u{7}").as_deref(),
            Some("\\u{1b}]52;c;x\\u{7}"),
            "escaped as everything DING shows"
        );
        assert_eq!(last_error("no error here\n"), None);
    }

    #[test]
    fn the_codex_argv_follows_the_options_untouched() {
        let request = parse(words(
            "--ding /opt/ding -- codex -c model=\"x\" --no-alt-screen",
        ))
        .expect("parse");
        assert_eq!(request.ding, "/opt/ding");
        assert!(request.native);
        assert_eq!(request.program, "codex");
        assert_eq!(request.args, ["-c", "model=\"x\"", "--no-alt-screen"]);
        let terminal = parse(words("--idle-path terminal codex --help")).expect("parse");
        assert!(!terminal.native);
        assert_eq!(
            (terminal.program.as_str(), terminal.args.as_slice()),
            ("codex", &["--help".to_string()][..])
        );
        assert!(parse(words("--idle-path")).is_err());
        assert!(parse(Vec::new()).is_err());
    }

    #[test]
    fn the_log_keeps_replies_and_the_notifications_acted_on_and_stays_bounded() {
        assert!(worth_logging(r#"{"id":3,"result":{}}"#));
        assert!(worth_logging(
            r#"{"method":"thread/status/changed","params":{"threadId":"t"}}"#
        ));
        assert!(!worth_logging(
            r#"{"method":"item/agentMessage/delta","params":{"delta":"x"}}"#
        ));
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("log");
        let mut log = Log::open(&path);
        let line = "x".repeat(1024 * 1024);
        for _ in 0..8 {
            log.line(&line);
        }
        let size = std::fs::metadata(&path).expect("log").len() as usize;
        assert!(size <= LOG_BUDGET + 100, "{size}");
    }

    #[test]
    fn configuration_arguments_go_to_the_app_server_too() {
        let args: Vec<String> = [
            "-c",
            "a=1",
            "--no-alt-screen",
            "-p",
            "work",
            "--enable=x",
            "--disable",
            "y",
            "prompt",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            config_of(&args),
            ["-c", "a=1", "-p", "work", "--enable=x", "--disable", "y"]
        );
    }
}
