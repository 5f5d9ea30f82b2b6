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

use serde_json::{Value, json};

use super::exit::Failure;
use crate::core::escape::escape;
use crate::core::status::human_age;
use crate::pty::client::Client;
use crate::pty::wire::{ChildState, HostStatus};
use crate::sidecar::control::{is_alive, query_status_within, recorded_pid};
use crate::sidecar::paths::{AgentPaths, DirsEnv};

/// How long a harness must run before it counts as started: one that exits
/// sooner (a missing config, a bad flag) is reported as a failed start.
pub const START_GRACE: Duration = Duration::from_millis(500);

/// How long a probe waits for a process to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

/// A DING process (the sidecar or the PTY host) as its pid file and its
/// socket tell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    pub fn to_json(self) -> Value {
        match self {
            Process::Running { pid } | Process::NotAnswering { pid } | Process::Dead { pid } => {
                json!({ "state": self.word(), "pid": pid })
            }
            Process::Stopped => json!({ "state": "stopped" }),
        }
    }

    /// The inverse of [`Process::to_json`], for documents read back.
    pub fn from_json(value: &Value) -> Option<Process> {
        let pid = || {
            value["pid"]
                .as_i64()
                .and_then(|pid| i32::try_from(pid).ok())
        };
        Some(match value["state"].as_str()? {
            "running" => Process::Running { pid: pid()? },
            "not-answering" => Process::NotAnswering { pid: pid()? },
            "dead" => Process::Dead { pid: pid()? },
            "stopped" => Process::Stopped,
            _ => return None,
        })
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

/// The harness as its PTY host reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

    /// `{"state":"running","pid":N,"forMs":N}`, `{"state":"exited","code":N}`,
    /// `{"state":"exited","signal":N}`, ...
    pub fn to_json(self) -> Value {
        match self {
            Harness::Starting { pid, for_ms } => {
                json!({ "state": "starting", "pid": pid, "forMs": for_ms })
            }
            Harness::Running { pid, for_ms } => {
                json!({ "state": "running", "pid": pid, "forMs": for_ms })
            }
            Harness::Restarting { pid } => json!({ "state": "restarting", "pid": pid }),
            Harness::Exited { code, for_ms } => {
                json!({ "state": "exited", "code": code, "forMs": for_ms })
            }
            Harness::Killed { signal, for_ms } => {
                json!({ "state": "exited", "signal": signal, "forMs": for_ms })
            }
            Harness::Stopped => json!({ "state": "stopped" }),
            Harness::Unknown => json!({ "state": "unknown" }),
        }
    }

    /// The inverse of [`Harness::to_json`], for documents read back.
    pub fn from_json(value: &Value) -> Option<Harness> {
        let int = |key: &str| value[key].as_i64().and_then(|n| i32::try_from(n).ok());
        let for_ms = value["forMs"].as_u64().unwrap_or(0);
        Some(match value["state"].as_str()? {
            "starting" => Harness::Starting {
                pid: int("pid")?,
                for_ms,
            },
            "running" => Harness::Running {
                pid: int("pid")?,
                for_ms,
            },
            "restarting" => Harness::Restarting { pid: int("pid")? },
            "exited" => match (int("code"), int("signal")) {
                (Some(code), _) => Harness::Exited { code, for_ms },
                (None, Some(signal)) => Harness::Killed { signal, for_ms },
                (None, None) => return None,
            },
            "stopped" => Harness::Stopped,
            "unknown" => Harness::Unknown,
            _ => return None,
        })
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
    /// The sidecar's status document, when it answered.
    pub sidecar_status: Option<Value>,
    pub pty_host: Process,
    /// The PTY host's status, when it answered.
    pub host: Option<HostStatus>,
    pub harness: Harness,
}

impl AgentState {
    /// Asks each process of the agent at `paths`.
    pub fn probe(paths: &AgentPaths) -> AgentState {
        let (sidecar, sidecar_status) = probe_process(&paths.sidecar_pid(), |_| {
            query_status_within(&paths.sidecar_socket(), ANSWER_TIMEOUT).ok()
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

    /// Whether everything runs: the sidecar, the PTY host and the harness.
    pub fn all_running(&self) -> bool {
        self.sidecar.is_running() && self.pty_host.is_running() && self.harness.is_running()
    }

    /// Whether nothing of the agent runs.
    pub fn nothing_running(&self) -> bool {
        self.sidecar.pid().is_none() && self.pty_host.pid().is_none()
    }

    /// `sidecar`, `ptyHost` and `harness` for the status document.
    pub fn add_to(&self, document: &mut Value) {
        document["sidecar"] = self.sidecar.to_json();
        document["ptyHost"] = self.pty_host.to_json();
        document["harness"] = self.harness.to_json();
        if let Some(host) = &self.host {
            document["terminal"] = json!({
                "size": format!("{}x{}", host.size.cols, host.size.rows),
                "attached": host.attached,
                "incarnation": host.incarnation,
            });
            if let Some(failure) = &host.log_failure {
                document["ptyHostLogWriteFailure"] = json!(failure);
            }
        }
    }

    /// The three lines `ding status` and `ding up` lead with.
    pub fn lines(&self) -> Vec<String> {
        let mut document = json!({});
        self.add_to(&mut document);
        state_lines(&document)
    }
}

/// The harness, PTY host and sidecar lines of a status document, as
/// people read them.
pub fn state_lines(document: &Value) -> Vec<String> {
    let mut harness =
        Harness::from_json(&document["harness"]).map_or_else(|| "?".to_string(), Harness::describe);
    let terminal = &document["terminal"];
    if Harness::from_json(&document["harness"]).is_some_and(Harness::is_running)
        && let Some(size) = terminal["size"].as_str()
    {
        harness.push_str(&format!(", terminal {size}"));
        if let Some(attached) = terminal["attached"].as_u64().filter(|&n| n > 0) {
            harness.push_str(&format!(", {attached} attached"));
        }
    }
    let process = |key: &str| {
        Process::from_json(&document[key]).map_or_else(|| "?".to_string(), Process::describe)
    };
    let mut sidecar = process("sidecar");
    if let Some(up) = document["uptimeMs"].as_u64()
        && Process::from_json(&document["sidecar"]).is_some_and(Process::is_running)
    {
        sidecar.push_str(&format!(", up {}", human_age(Duration::from_millis(up))));
    }
    vec![
        format!("  harness      {}", escape(&harness)),
        format!("  pty host     {}", escape(&process("ptyHost"))),
        format!("  sidecar      {}", escape(&sidecar)),
    ]
}

/// What does not run, for the first line of a status: empty when all
/// does.
pub fn not_running(document: &Value) -> Vec<String> {
    let mut parts = Vec::new();
    match Harness::from_json(&document["harness"]) {
        Some(harness) if harness.is_running() => {}
        Some(Harness::Stopped) => parts.push("harness stopped".into()),
        Some(Harness::Unknown) | None => parts.push("harness unknown".into()),
        Some(harness) => parts.push(match harness.end() {
            Some(end) => format!("harness {end}"),
            None => "harness restarting".into(),
        }),
    }
    for (key, what) in [("ptyHost", "pty host"), ("sidecar", "sidecar")] {
        match Process::from_json(&document[key]) {
            Some(process) if process.is_running() => {}
            Some(process) => parts.push(format!("{what} {}", process.word())),
            None => parts.push(format!("{what} unknown")),
        }
    }
    parts
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
    if !super::down::ever_ran(&paths) {
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
        assert_eq!(exited.to_json()["code"], 3);
        assert_eq!(exited.to_json()["state"], "exited");
        let killed = Harness::of(&host(ChildState::Killed { signal: 9 }, 5, false));
        assert_eq!(killed.to_json()["signal"], 9);
        assert_eq!(killed.end().as_deref(), Some("killed by signal 9"));
        assert!(!killed.is_running() && killed.has_ended());
    }
}
