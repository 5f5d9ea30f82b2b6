//! What runs for an agent, as its processes say it: the sidecar, the PTY
//! host and the harness the host runs, each probed on its own, so that one
//! being dead never hides the state of the others.
//!
//! A process is *running* (its pid file names a live process that answers
//! on its socket), *not answering* (alive, but silent: starting, or hung),
//! *dead* (its pid file names a process that is gone: it was killed or
//! crashed, since a clean stop removes the file) or *stopped* (no pid
//! file). The harness's state is the PTY host's report: *starting* (it has
//! run for less than [`START_GRACE`]; one that exits within it failed to
//! start), *running*, *restarting*, *exited* with its code or the signal
//! that killed it, or *unknown* when no PTY host answers.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::exit::Failure;
use crate::core::status::MessageWindow;
use crate::core::status::human_age;
use crate::escape::escape;
use crate::pty::client::Client;
use crate::pty::wire::{ChildState, HostStatus};
use crate::sidecar::agent_record::AgentRecord;
use crate::sidecar::control::{is_alive, recorded_pid, status_listing_within};
use crate::sidecar::paths::{AgentPaths, DirsEnv};
use crate::sidecar::status_document::{LiveStatus, UnreadableStatus};

/// How long a harness must run before it counts as started: one that exits
/// sooner (a missing config, a bad flag) is reported as a failed start.
pub const START_GRACE: Duration = Duration::from_millis(500);

/// How long a probe waits for a process to answer: as long as a status
/// page is given (`status_pages::PAGE_TIMEOUT`). A sidecar answering many
/// askers of a large backlog at once on a loaded machine took over 3 s to
/// get to the next one (make test's concurrent-askers test, in CI).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// A DING process (the sidecar or the PTY host) as its pid file and its
/// socket tell it; in the status document `{"state":"running","pid":N}`,
/// `{"state":"stopped"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Process {
    Running { pid: i32 },
    NotAnswering { pid: i32 },
    Dead { pid: i32 },
    Stopped,
}

impl Process {
    pub fn pid(self) -> Option<i32> {
        match self {
            Process::Running { pid } | Process::NotAnswering { pid } => Some(pid),
            Process::Dead { .. } | Process::Stopped => None,
        }
    }

    pub fn is_running(self) -> bool {
        matches!(self, Process::Running { .. })
    }

    /// `running`, `not-answering`, `dead` or `stopped`.
    pub fn word(self) -> &'static str {
        match self {
            Process::Running { .. } => "running",
            Process::NotAnswering { .. } => "not-answering",
            Process::Dead { .. } => "dead",
            Process::Stopped => "stopped",
        }
    }

    /// As people read it: `running (pid 42)`, `DEAD (pid 42 is gone: killed
    /// or crashed)`.
    pub fn describe(self) -> String {
        match self {
            Process::Running { pid } => format!("running (pid {pid})"),
            Process::NotAnswering { pid } => {
                format!("NOT ANSWERING (pid {pid}: starting, or hung)")
            }
            Process::Dead { pid } => {
                format!("DEAD (pid {pid} is gone: killed or crashed; `ding up` starts it again)")
            }
            Process::Stopped => "stopped".into(),
        }
    }
}

/// The harness as its PTY host reports it; in the status document
/// `{"state":"running","pid":N,"forMs":N}`, `{"state":"exited","code":N}`,
/// `{"state":"exited","signal":N}`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "state",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Harness {
    Starting {
        pid: i32,
        for_ms: u64,
    },
    Running {
        pid: i32,
        for_ms: u64,
    },
    Restarting {
        pid: i32,
    },
    Exited {
        code: i32,
        for_ms: u64,
    },
    /// Exited too, by a signal.
    #[serde(rename = "exited")]
    Killed {
        signal: i32,
        for_ms: u64,
    },
    /// No PTY host runs (it was stopped, and the harness with it).
    Stopped,
    /// The PTY host is dead or does not answer, so nobody can say.
    Unknown,
}

impl Harness {
    pub fn of(status: &HostStatus) -> Harness {
        let for_ms = status.child_for_ms;
        match status.child {
            ChildState::Running { pid } if status.restarting => Harness::Restarting { pid },
            ChildState::Running { pid } if for_ms < START_GRACE.as_millis() as u64 => {
                Harness::Starting { pid, for_ms }
            }
            ChildState::Running { pid } => Harness::Running { pid, for_ms },
            ChildState::Exited { code } => Harness::Exited { code, for_ms },
            ChildState::Killed { signal } => Harness::Killed { signal, for_ms },
        }
    }

    pub fn is_running(self) -> bool {
        matches!(self, Harness::Running { .. } | Harness::Starting { .. })
    }

    pub fn has_ended(self) -> bool {
        matches!(self, Harness::Exited { .. } | Harness::Killed { .. })
    }

    /// `starting`, `running`, `restarting`, `exited`, `stopped` or
    /// `unknown`: its `state` in the status document.
    pub fn word(self) -> &'static str {
        match self {
            Harness::Starting { .. } => "starting",
            Harness::Running { .. } => "running",
            Harness::Restarting { .. } => "restarting",
            Harness::Exited { .. } | Harness::Killed { .. } => "exited",
            Harness::Stopped => "stopped",
            Harness::Unknown => "unknown",
        }
    }

    /// How it ended, for messages: `exited with code 3`, `killed by signal 9`.
    pub fn end(self) -> Option<String> {
        match self {
            Harness::Exited { code, .. } => Some(format!("exited with code {code}")),
            Harness::Killed { signal, .. } => Some(format!("killed by signal {signal}")),
            _ => None,
        }
    }

    pub fn describe(self) -> String {
        let age = |ms: u64| human_age(Duration::from_millis(ms));
        match self {
            Harness::Starting { pid, for_ms } => {
                format!("starting (pid {pid}, {})", age(for_ms))
            }
            Harness::Running { pid, for_ms } => format!("running (pid {pid}, up {})", age(for_ms)),
            Harness::Restarting { pid } => format!("restarting (pid {pid} is being stopped)"),
            Harness::Exited { for_ms, .. } | Harness::Killed { for_ms, .. } => format!(
                "{} {} ago (messages are held; `ding restart` starts it again)",
                self.end().map(|end| end.to_uppercase()).unwrap_or_default(),
                age(for_ms)
            ),
            Harness::Stopped => "stopped (no pty host)".into(),
            Harness::Unknown => "unknown (no pty host answers)".into(),
        }
    }
}

/// Everything that runs, or should, for one agent.
#[derive(Clone, Debug)]
pub struct AgentState {
    pub sidecar: Process,
    /// The sidecar's status document when it answered with one this ding
    /// reads, or why it is not one.
    pub sidecar_status: Option<Result<Box<LiveStatus>, UnreadableStatus>>,
    pub pty_host: Process,
    /// The PTY host's status, when it answered.
    pub host: Option<HostStatus>,
    pub harness: Harness,
}

/// The three parts of an agent that run, as the status document has them
/// (`sidecar`, `ptyHost`, `harness`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Processes {
    pub sidecar: Process,
    pub pty_host: Process,
    pub harness: Harness,
}

/// The harness's terminal as its PTY host reports it (`terminal`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Terminal {
    /// `COLSxROWS`.
    pub size: String,
    /// How many connections are attached.
    pub attached: usize,
    pub incarnation: String,
}

impl AgentState {
    /// Asks each process of the agent at `paths`; the sidecar's document
    /// counts the unread files and lists none.
    pub fn probe(paths: &AgentPaths) -> AgentState {
        AgentState::probe_listing(paths, &MessageWindow::Ends(0))
    }

    /// [`AgentState::probe`], the sidecar's document listing the unread
    /// files of `window`.
    pub fn probe_listing(paths: &AgentPaths, window: &MessageWindow) -> AgentState {
        // A reply that is no document still came: that sidecar answers.
        let (sidecar, sidecar_status) = probe_process(&paths.sidecar_pid(), |_| {
            let reply =
                status_listing_within(&paths.sidecar_socket(), ANSWER_TIMEOUT, window).ok()?;
            Some(LiveStatus::from_reply(&reply).map(Box::new))
        });
        let (pty_host, host) = probe_process(&paths.pty_pid(), |_| pty_status(&paths.pty_socket()));
        let harness = match (&host, pty_host) {
            (Some(host), _) => Harness::of(host),
            (None, Process::Stopped) => Harness::Stopped,
            (None, _) => Harness::Unknown,
        };
        AgentState {
            sidecar,
            sidecar_status,
            pty_host,
            host,
            harness,
        }
    }

    /// The running sidecar's status document, if it answered with one.
    pub fn live_status(&self) -> Option<&LiveStatus> {
        self.sidecar_status.as_ref()?.as_deref().ok()
    }

    pub fn processes(&self) -> Processes {
        Processes {
            sidecar: self.sidecar,
            pty_host: self.pty_host,
            harness: self.harness,
        }
    }

    /// Whether everything runs: the sidecar, the PTY host and the harness.
    pub fn all_running(&self) -> bool {
        self.processes().all_running()
    }

    /// Whether nothing of the agent runs.
    pub fn nothing_running(&self) -> bool {
        self.sidecar.pid().is_none() && self.pty_host.pid().is_none()
    }

    /// The harness's terminal, when the PTY host answered.
    pub fn terminal(&self) -> Option<Terminal> {
        self.host.as_ref().map(|host| Terminal {
            size: format!("{}x{}", host.size.cols, host.size.rows),
            attached: host.attached,
            incarnation: host.incarnation.clone(),
        })
    }

    /// The three lines `ding status` and `ding up` lead with.
    pub fn lines(&self) -> Vec<String> {
        self.processes().lines(self.terminal().as_ref(), None)
    }
}

impl Processes {
    pub fn all_running(self) -> bool {
        self.sidecar.is_running() && self.pty_host.is_running() && self.harness.is_running()
    }

    /// The harness, PTY host and sidecar lines, as people read them: with
    /// the `terminal` of a running harness and the `uptime` of a running
    /// sidecar, when known.
    pub fn lines(self, terminal: Option<&Terminal>, uptime: Option<Duration>) -> Vec<String> {
        let mut harness = self.harness.describe();
        if self.harness.is_running()
            && let Some(terminal) = terminal
        {
            harness.push_str(&format!(", terminal {}", terminal.size));
            if terminal.attached > 0 {
                harness.push_str(&format!(", {} attached", terminal.attached));
            }
        }
        let mut sidecar = self.sidecar.describe();
        if let Some(up) = uptime
            && self.sidecar.is_running()
        {
            sidecar.push_str(&format!(", up {}", human_age(up)));
        }
        vec![
            format!("  harness      {}", escape(&harness)),
            format!("  pty host     {}", escape(&self.pty_host.describe())),
            format!("  sidecar      {}", escape(&sidecar)),
        ]
    }

    /// What does not run, for the first line of a status: empty when all
    /// does.
    pub fn not_running(self) -> Vec<String> {
        let mut parts = Vec::new();
        match self.harness {
            harness if harness.is_running() => {}
            Harness::Stopped => parts.push("harness stopped".into()),
            Harness::Unknown => parts.push("harness unknown".into()),
            harness => parts.push(match harness.end() {
                Some(end) => format!("harness {end}"),
                None => "harness restarting".into(),
            }),
        }
        for (process, what) in [(self.pty_host, "pty host"), (self.sidecar, "sidecar")] {
            if !process.is_running() {
                parts.push(format!("{what} {}", process.word()));
            }
        }
        parts
    }
}

fn probe_process<T>(pid_file: &Path, ask: impl FnOnce(i32) -> Option<T>) -> (Process, Option<T>) {
    match recorded_pid(pid_file) {
        None => (Process::Stopped, None),
        Some(pid) if !is_alive(pid) => (Process::Dead { pid }, None),
        Some(pid) => match ask(pid) {
            Some(answer) => (Process::Running { pid }, Some(answer)),
            None => (Process::NotAnswering { pid }, None),
        },
    }
}

/// The paths of agent `name`, which must have run here (else "unknown
/// agent", exit 4): what every command that acts on a named agent asks
/// first.
pub fn known_agent(name: &str) -> anyhow::Result<AgentPaths> {
    let paths = AgentPaths::resolve(name, &DirsEnv::from_process())?;
    if !ever_ran(&paths) {
        return Err(Failure::UnknownAgent.because(format!(
            "no agent `{name}` has run here\nhint: `ding ls` lists the agents that have; `ding up AGENT.kdl` starts one"
        )));
    }
    Ok(paths)
}

/// The PTY host's status, waiting at most [`ANSWER_TIMEOUT`].
pub fn pty_status(socket: &Path) -> Option<HostStatus> {
    let mut client = Client::connect(socket).ok()?;
    client.set_timeout(Some(ANSWER_TIMEOUT));
    client.status().ok()
}

/// Whether agent `paths` left anything here: a record of its sidecar, or
/// a pid file of either process.
pub fn ever_ran(paths: &AgentPaths) -> bool {
    matches!(AgentRecord::load(paths.state_dir()), Ok(Some(_)))
        || recorded_pid(&paths.sidecar_pid()).is_some()
        || recorded_pid(&paths.pty_pid()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pty::wire::Size;

    fn host(child: ChildState, for_ms: u64, restarting: bool) -> HostStatus {
        HostStatus {
            session: "h.w".into(),
            incarnation: "i".into(),
            generation: "g".into(),
            revision: 1,
            child,
            size: Size { cols: 80, rows: 24 },
            bracketed_paste: false,
            attached: 0,
            restarting,
            child_for_ms: for_ms,
            launch: None,
            log_failure: None,
            clock_ms: 0,
            terminal: Default::default(),
        }
    }

    #[test]
    fn the_harness_state_is_starting_running_restarting_or_how_it_ended() {
        let running = ChildState::Running { pid: 7 };
        assert_eq!(
            Harness::of(&host(running, 10, false)),
            Harness::Starting { pid: 7, for_ms: 10 }
        );
        assert_eq!(
            Harness::of(&host(running, 900, false)),
            Harness::Running {
                pid: 7,
                for_ms: 900
            }
        );
        assert_eq!(
            Harness::of(&host(running, 900, true)),
            Harness::Restarting { pid: 7 }
        );
        let exited = Harness::of(&host(ChildState::Exited { code: 3 }, 5, false));
        assert_eq!(
            serde_json::to_value(exited).expect("json"),
            serde_json::json!({"state": "exited", "code": 3, "forMs": 5})
        );
        let killed = Harness::of(&host(ChildState::Killed { signal: 9 }, 5, false));
        assert_eq!(
            serde_json::to_value(killed).expect("json"),
            serde_json::json!({"state": "exited", "signal": 9, "forMs": 5})
        );
        assert_eq!(killed.end().as_deref(), Some("killed by signal 9"));
        assert!(!killed.is_running() && killed.has_ended());
    }

    /// The words people read are the `state` the document says.
    #[test]
    fn each_word_is_the_state_in_the_document() {
        for process in [
            Process::Running { pid: 1 },
            Process::NotAnswering { pid: 1 },
            Process::Dead { pid: 1 },
            Process::Stopped,
        ] {
            let json = serde_json::to_value(process).expect("json");
            assert_eq!(json["state"], process.word(), "{json}");
        }
        for harness in [
            Harness::Starting { pid: 1, for_ms: 2 },
            Harness::Running { pid: 1, for_ms: 2 },
            Harness::Restarting { pid: 1 },
            Harness::Exited { code: 1, for_ms: 2 },
            Harness::Killed {
                signal: 1,
                for_ms: 2,
            },
            Harness::Stopped,
            Harness::Unknown,
        ] {
            let json = serde_json::to_value(harness).expect("json");
            assert_eq!(json["state"], harness.word(), "{json}");
        }
    }
}
