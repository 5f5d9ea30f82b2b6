//! The adapter's process shell: one mio loop that moves bytes between the
//! sidecar, the hook channel, the PTY host and the adapter machine
//! (`machine/`), and holds no policy of its own.
//!
//! | token | source | becomes |
//! |---|---|---|
//! | `DOWNLINK` | stdin, from the sidecar | [`Input::Downlink`] bytes |
//! | `UPLINK` | stdout (writable) | queued protocol lines flushed |
//! | `HOOKS` and peers | `DING_HOOK_SOCKET` | hook calls and their ends |
//! | `PTY` | the PTY host, while the machine keeps it open | pushes, snapshots |
//!
//! Each turn of the loop feeds what arrived to the machine with the time it
//! was read, carries out every output (an output that fails, or that the
//! peer answers at once, becomes the next input), and sleeps in `poll`
//! until the machine's next deadline. With nothing wanted and no hook
//! waiting the machine names none, and the loop sleeps with no timeout:
//! zero wake-ups.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::clock::Clock;
use super::compile::guarded_hook_command;
use super::harness_env::HarnessEnv;
use super::hook_config::read_file;
use super::hook_plan::AgentContext;
use super::hook_wire::{MAX_CALL_BYTES, PROBE_ANSWER, PROBE_VARIABLE};
use super::incarnation::identity_from_env;
use super::machine::{AdapterMachine, Input, Output, Pacing, Peer};
use super::provider::Provider;
use super::pty_watch::{PtyEvent, PtyWatch};
use super::settings_check::SettingsRead;
use super::uplink::Pipe;
use crate::core::time::Time;
use crate::escape::escape;
use crate::line_server::{Limits, LineServer, ServerEvent, WhenFull};
use crate::nonblocking::set_nonblocking;

pub use super::timing::RECEIPT_DEADLINE;

const DOWNLINK: Token = Token(0);
const UPLINK: Token = Token(1);
const PTY: Token = Token(2);
const HOOKS: Token = Token(3);
const FIRST_HOOK_PEER: usize = 100;

/// What one hook call may make the adapter hold: its line, and at most this
/// many calls at once (a harness runs a handful of hooks; a flood of
/// connections closes the oldest, which then injects nothing).
const HOOK_LIMITS: Limits = Limits {
    max_request: MAX_CALL_BYTES,
    max_peers: 64,
    // A parked call holds its connection for long: a newer one closes
    // the oldest rather than wait behind it.
    when_full: WhenFull::CloseOldest,
};

/// Everything the loop needs; [`AdapterEnv::from_env`] reads what the
/// sidecar gives every adapter.
#[derive(Clone, Debug)]
pub struct AdapterEnv {
    pub pty_socket: PathBuf,
    /// Where to serve the hook channel; `None` serves none.
    pub hook_socket: Option<PathBuf>,
    pub agent: AgentContext,
    pub pacing: Pacing,
}

impl AdapterEnv {
    /// From `DING_PTY_SOCKET`, `DING_HOOK_SOCKET`, `DING_AGENT`, `DING_INBOX`
    /// and `DING_QUIET_INPUT_MS` (the declaration's `quiet-input`; the
    /// default without it, and a value outside its range is clamped).
    pub fn from_env() -> Result<AdapterEnv> {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let Some(pty_socket) = var("DING_PTY_SOCKET") else {
            bail!("DING_PTY_SOCKET is not set: an adapter runs under `ding sidecar`");
        };
        Ok(AdapterEnv {
            pty_socket: pty_socket.into(),
            hook_socket: var("DING_HOOK_SOCKET").map(PathBuf::from),
            agent: AgentContext {
                agent: var("DING_AGENT")
                    .map(|value| value.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                inbox: var("DING_INBOX").map(PathBuf::from).unwrap_or_default(),
            },
            pacing: Pacing {
                quiet_input: quiet_input(var("DING_QUIET_INPUT_MS")),
                ..Pacing::default()
            },
        })
    }
}

/// The quiet a parked call waits for, from `DING_QUIET_INPUT_MS`: the
/// default when unset or unreadable, else within the tunable's range.
fn quiet_input(value: Option<std::ffi::OsString>) -> std::time::Duration {
    use crate::core::config::QUIET_INPUT;
    value
        .and_then(|value| value.to_str()?.parse::<u64>().ok())
        .map(std::time::Duration::from_millis)
        .map_or(QUIET_INPUT.default, |quiet| {
            quiet.clamp(QUIET_INPUT.min, QUIET_INPUT.max)
        })
}

struct AdapterShell<P: Provider> {
    machine: AdapterMachine<P>,
    hook_socket: Option<PathBuf>,
    poll: Poll,
    clock: Clock,
    uplink: Pipe<io::Stdout>,
    uplink_writable: bool,
    hooks: Option<LineServer>,
    pty: PtyWatch,
}

/// Set (non-empty) in an adapter's environment by `ding check --adapters`:
/// the adapter prints whether its setup is complete and exits.
pub const CHECK_VARIABLE: &str = "DING_ADAPTER_CHECK";

/// Beside [`CHECK_VARIABLE`]: the declared harness argv as a JSON list of
/// strings (empty when the declaration has no `command`).
pub const HARNESS_VARIABLE: &str = "DING_ADAPTER_CHECK_HARNESS";

/// An adapter's main: with [`CHECK_VARIABLE`] set, prints
/// [`Provider::check_setup`] (an error if the setup is incomplete, or if
/// [`Provider::check_harness_env`] refuses the environment the harness will
/// get: this one with the declared variables of
/// [`super::harness_env::DECLARED_ENV_VARIABLE`] over it) and returns;
/// otherwise runs `provider` with `options()` until the sidecar closes
/// stdin.
pub fn main<P: Provider>(provider: P, options: impl FnOnce() -> Result<AdapterEnv>) -> Result<()> {
    if std::env::var_os(CHECK_VARIABLE).is_some_and(|value| !value.is_empty()) {
        let harness: Option<Vec<String>> = std::env::var(HARNESS_VARIABLE)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        let mut provider = provider;
        look_up_hook_program(&mut provider);
        let read = read_settings(provider.settings_files());
        provider.on_settings_read(&read);
        let env = HarnessEnv::for_check();
        return match provider
            .check_setup(harness.as_deref())
            .and_then(|line| provider.check_harness_env(&env).map(|()| line))
            .and_then(|line| probe_hook_command(&provider).map(|()| line))
        {
            Ok(line) => {
                writeln!(io::stdout(), "{line}")?;
                Ok(())
            }
            Err(line) => bail!("{line}"),
        };
    }
    let mut provider = provider;
    look_up_hook_program(&mut provider);
    run(provider, options()?)
}

/// Runs one of the provider's hook commands as the harness would (`sh -c`,
/// this environment) with [`PROBE_VARIABLE`] set: it must reach a `ding`
/// that answers [`PROBE_ANSWER`]. The command is built by the kit's one
/// rule ([`guarded_hook_command`]), as every provider's hooks are.
fn probe_hook_command<P: Provider>(provider: &P) -> Result<(), String> {
    let Some(program) = provider.hook_program() else {
        return Ok(());
    };
    let command = guarded_hook_command(&program, &format!("{} SessionStart", provider.name()));
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env(PROBE_VARIABLE, "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|err| {
            format!(
                "{} hooks: cannot run `sh` to try them: {err}",
                provider.name()
            )
        })?;
    let said = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && said.trim_end() == PROBE_ANSWER {
        return Ok(());
    }
    Err(format!(
        "{} hooks cannot run: `{}` does not answer as ding where the harness runs them (tried `{}`), so they do nothing (run `ding compile-agent {}` again with the ding you use, or name it with --ding PATH)",
        provider.name(),
        escape(&program),
        escape(&command),
        provider.name()
    ))
}

/// Tells `provider` whether the program its hook commands run is found
/// here (the PTY host runs the harness from the same `ding up`, so its
/// hooks look it up on the same `PATH`).
fn look_up_hook_program<P: Provider>(provider: &mut P) {
    if let Some(program) = provider.hook_program() {
        let found = super::find_program::find_on_path(&program).is_some();
        provider.on_hook_program(found);
    }
}

/// Reads a provider's hook settings files, each as the agent compiler reads
/// them.
fn read_settings(files: Vec<PathBuf>) -> Vec<SettingsRead> {
    files
        .into_iter()
        .map(|path| SettingsRead {
            settings: read_file(&path).map_err(|err| format!("{err:#}")),
            path,
        })
        .collect()
}

/// Runs `provider` until the sidecar closes stdin.
pub fn run<P: Provider>(provider: P, options: AdapterEnv) -> Result<()> {
    let mut kit = AdapterShell::new(provider, options)?;
    kit.serve()
}

impl<P: Provider> AdapterShell<P> {
    fn new(provider: P, options: AdapterEnv) -> Result<AdapterShell<P>> {
        let poll = Poll::new().context("create poll")?;
        let stdin = io::stdin();
        // An adapter started by hand (stdin a terminal or /dev/null) has no
        // downlink: the machine then treats evidence as always wanted.
        let downlink = set_nonblocking(&stdin).is_ok()
            && poll
                .registry()
                .register(
                    &mut SourceFd(&stdin.as_raw_fd()),
                    DOWNLINK,
                    Interest::READABLE,
                )
                .is_ok();
        let stdout = io::stdout();
        // A stdout that cannot be polled (a file) is written blocking.
        let _ = set_nonblocking(&stdout).is_ok()
            && poll
                .registry()
                .register(
                    &mut SourceFd(&stdout.as_raw_fd()),
                    UPLINK,
                    Interest::WRITABLE,
                )
                .is_ok();
        let hooks = match &options.hook_socket {
            Some(path) => Some(
                LineServer::bind(path, poll.registry(), HOOKS, FIRST_HOOK_PEER, HOOK_LIMITS)
                    .with_context(|| format!("serve the hook channel at {}", path.display()))?,
            ),
            None => None,
        };
        let machine = AdapterMachine::new(
            provider,
            options.agent,
            options.pacing,
            identity_from_env(),
            downlink,
            Time::ZERO,
        );
        let mut kit = AdapterShell {
            machine,
            hook_socket: options.hook_socket,
            poll,
            clock: Clock::start(),
            uplink: Pipe::new(stdout),
            uplink_writable: true,
            hooks,
            pty: PtyWatch::new(&options.pty_socket, PTY),
        };
        kit.carry_out();
        Ok(kit)
    }

    fn now(&self) -> Time {
        self.clock.now()
    }

    fn serve(&mut self) -> Result<()> {
        let mut events = Events::with_capacity(64);
        while !self.machine.is_done() {
            // Hook connections not yet accepted wait for no event.
            let accepting = self.hooks.as_ref().is_some_and(LineServer::has_backlog);
            let timeout = if accepting {
                Some(Duration::ZERO)
            } else {
                self.machine.next_deadline().map(|at| self.clock.until(at))
            };
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            for event in events.iter() {
                match event.token() {
                    DOWNLINK => self.on_downlink(),
                    UPLINK => self.uplink_writable = true,
                    PTY => self.on_pty(),
                    token => self.on_hook_ready(token),
                }
            }
            if self.hooks.as_ref().is_some_and(LineServer::has_backlog) {
                self.on_hook_ready(HOOKS);
            }
            let now = self.now();
            self.machine.handle_timeout(now);
            self.carry_out();
            self.flush_uplink()?;
        }
        if let Some(path) = &self.hook_socket {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    fn feed(&mut self, input: Input) {
        let now = self.now();
        self.machine.handle_input(input, now);
        self.carry_out();
    }

    /// Carries out every output the machine has; what that makes happen at
    /// once is fed back in (and its outputs carried out in turn).
    fn carry_out(&mut self) {
        while let Some(output) = self.machine.poll_output() {
            let mut results = Vec::new();
            self.perform(output, &mut results);
            for input in results {
                let now = self.now();
                self.machine.handle_input(input, now);
            }
        }
    }

    fn perform(&mut self, output: Output, results: &mut Vec<Input>) {
        let registry = self.poll.registry();
        match output {
            Output::Uplink(line) => self.uplink.push(&line),
            Output::HookAnswer { peer, line } => {
                if let Some(server) = self.hooks.as_mut() {
                    server.reply(registry, Token(peer.0), line.as_bytes());
                }
            }
            Output::HookAnswerForReceipt { peer, line } => {
                if let Some(server) = self.hooks.as_mut() {
                    let mut events = Vec::new();
                    server.reply_for_receipt(registry, Token(peer.0), line.as_bytes(), &mut events);
                    results.extend(events.into_iter().map(hook_input));
                }
            }
            Output::HookClose { peer } => {
                if let Some(server) = self.hooks.as_mut() {
                    server.close(registry, Token(peer.0));
                }
            }
            Output::PtyOpen => results.push(match self.pty.open(registry) {
                Ok(()) => Input::PtyOpened,
                Err(err) => Input::PtyLost(format!("connect to the pty host: {err}")),
            }),
            Output::PtyClose => self.pty.close(registry),
            Output::PtySnapshot => {
                if let Err(err) = self.pty.request_snapshot(registry) {
                    results.push(Input::PtyLost(format!("ask for a snapshot: {err}")));
                }
            }
            Output::PtyStatus => {
                if let Err(err) = self.pty.request_status(registry) {
                    results.push(Input::PtyLost(format!("ask for the status: {err}")));
                }
            }
            // To the sidecar, which logs it; `eprintln!` would panic (and
            // end the adapter) on a stderr it cannot write.
            Output::Log(line) => {
                let _ = writeln!(io::stderr(), "{line}");
            }
            Output::ReadSettings(files) => results.push(Input::SettingsRead(read_settings(files))),
        }
    }

    fn flush_uplink(&mut self) -> Result<()> {
        if !self.uplink_writable {
            return Ok(());
        }
        match self.uplink.flush() {
            Ok(waiting) => {
                // Edge-triggered: wait for the next writable event.
                self.uplink_writable = !waiting;
                Ok(())
            }
            Err(err) => Err(err).context("write to the sidecar"),
        }
    }

    fn on_downlink(&mut self) {
        let mut chunk = [0u8; 16 * 1024];
        let mut stdin = io::stdin();
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) => return self.feed(Input::DownlinkClosed),
                Ok(n) => self.feed(Input::Downlink(chunk[..n].to_vec())),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => return self.feed(Input::DownlinkClosed),
            }
        }
    }

    fn on_pty(&mut self) {
        let mut events = Vec::new();
        self.pty.on_ready(self.poll.registry(), &mut events);
        for event in events {
            self.feed(match event {
                PtyEvent::Moved => Input::PtyMoved,
                PtyEvent::Started => Input::PtyStarted,
                PtyEvent::Status(status) => Input::PtyStatus(status),
                PtyEvent::Snapshot(snapshot) => Input::PtySnapshot(snapshot),
                PtyEvent::Lost(why) => Input::PtyLost(why),
            });
        }
    }

    fn on_hook_ready(&mut self, token: Token) {
        let Some(server) = self.hooks.as_mut() else {
            return;
        };
        if !server.owns(token) {
            return;
        }
        let mut events = Vec::new();
        server.on_ready(self.poll.registry(), token, &mut events);
        for event in events {
            self.feed(hook_input(event));
        }
    }
}

/// The machine's input for one event of the hook channel.
fn hook_input(event: ServerEvent) -> Input {
    match event {
        ServerEvent::Request { peer, line } => Input::HookCall {
            peer: Peer(peer.0),
            line,
        },
        ServerEvent::TooLong { peer, len } => Input::HookCallTooLong {
            peer: Peer(peer.0),
            len,
        },
        ServerEvent::Gone { peer } => Input::HookGone { peer: Peer(peer.0) },
        ServerEvent::Receipt { peer } => Input::HookReceipt { peer: Peer(peer.0) },
        ServerEvent::NoReceipt { peer } => Input::HookNoReceipt { peer: Peer(peer.0) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::QUIET_INPUT;
    use std::time::Duration;

    #[test]
    fn the_declared_quiet_reaches_the_machine_within_its_range() {
        let quiet = |text: &str| quiet_input(Some(text.into()));
        assert_eq!(quiet("450"), Duration::from_millis(450));
        assert_eq!(quiet("1"), QUIET_INPUT.min);
        assert_eq!(quiet("99999999"), QUIET_INPUT.max);
        assert_eq!(quiet("soon"), QUIET_INPUT.default);
        assert_eq!(quiet_input(None), QUIET_INPUT.default);
    }
}
