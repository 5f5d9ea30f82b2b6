//! The document `ding status NAME` shows: the sidecar's status document
//! (or, when no sidecar answers with one, the inbox listed from disk), the
//! state of each process and the drift from the declaration.
//!
//! The sidecar's part is the one definition of
//! [`crate::sidecar::status_document`], read typed; what this module adds
//! is typed as well. A sidecar that answers with a document this ding
//! cannot read (one of another version) is running all the same: the
//! inbox is then listed from disk and `sidecarStatusError` says why, so the
//! agent is still shown, never guessed at.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use super::agent_decl::load_agent;
use super::agent_state::{AgentState, Processes, Terminal};
use super::exit::Failure;
use super::launch::LaunchRecord;
use crate::core::config::Policy;
use crate::core::journal::{Journal, JournalEntry};
use crate::core::ownership::MessageState;
use crate::decl::FieldDrift;
use crate::escape::escape;
use crate::log_file::LogFailure;
use crate::pty::last_exit::{self, LastExit};
use crate::sidecar::agent_record::{AgentRecord, FILE as AGENT_RECORD};
use crate::sidecar::inbox::Inbox;
use crate::sidecar::journal_store::{Found, JournalStore};
use crate::sidecar::paths::AgentPaths;
use crate::sidecar::status_document::{
    DiskEngine, DiskMessage, DiskStatus, Recorded, Running, StatusReport, UnreadableView,
};

/// Everything `ding status NAME --json` prints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    #[serde(flatten)]
    pub document: StatusReport,
    /// Why the running sidecar's answer is not a document this ding reads,
    /// when it is not (the document is then listed from disk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidecar_status_error: Option<String>,
    #[serde(flatten)]
    pub processes: Processes,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<Terminal>,
    /// How the harness last ended, while it is not running: kept by its
    /// PTY host until the next start (`pty::last_exit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exit: Option<LastExit>,
    /// Since when the PTY host's log writes fail, while they do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pty_host_log_write_failure: Option<LogFailure>,
    /// The declaration's fingerprint, when it was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_fingerprint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
}

/// How the declaration differs from what runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Drift {
    /// The declaration could not be loaded, so nobody can say.
    Unknown { error: String },
    /// Field by field, for the sidecar (its fingerprint input) and the
    /// harness (the launch its PTY host reports); each `None` when that
    /// process does not run or cannot say.
    Judged {
        /// The declaration compared with, shown lossily if not UTF-8.
        declaration: String,
        sidecar: Option<Vec<DriftedField>>,
        harness: Option<Vec<DriftedField>>,
    },
}

/// One field in which the declaration differs from what runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DriftedField {
    pub field: String,
    pub running: String,
    pub declared: String,
}

/// The status of agent `name`, with the state of each of its processes.
pub fn agent_status(name: &str, paths: &AgentPaths) -> Result<AgentStatus> {
    AgentStatus::of(name, paths, AgentState::probe(paths))
}

impl AgentStatus {
    /// The status of agent `name` in `state`: the live document a running
    /// sidecar answered with (moved out of `state`), or one listed from
    /// disk.
    pub fn of(name: &str, paths: &AgentPaths, mut state: AgentState) -> Result<AgentStatus> {
        let (document, sidecar_status_error) = match state.sidecar_status.take() {
            Some(Ok(live)) => (StatusReport::Live(live), None),
            answer => (
                StatusReport::FromDisk(Box::new(from_disk(name, paths, &state)?)),
                answer.and_then(Result::err).map(|why| why.to_string()),
            ),
        };
        Ok(AgentStatus {
            document,
            sidecar_status_error,
            processes: state.processes(),
            terminal: state.terminal(),
            last_exit: (!state.harness.is_running())
                .then(|| last_exit::read(paths.runtime_dir()))
                .flatten(),
            pty_host_log_write_failure: state.host.and_then(|host| host.log_failure),
            declared_fingerprint: None,
            drift: None,
        })
    }

    /// Adds `drift` (and the declaration's fingerprint, when it was
    /// loaded): see [`judge_drift`].
    pub fn with_drift(mut self, judged: Option<(Drift, Option<String>)>) -> AgentStatus {
        if let Some((drift, declared_fingerprint)) = judged {
            self.drift = Some(drift);
            self.declared_fingerprint = declared_fingerprint;
        }
        self
    }
}

/// How `declaration` (default: the one agent `name` runs from, if one is
/// found) differs from what runs in `state`, with the declaration's
/// fingerprint when it loads; `None` when there is nothing to compare with.
/// Judged before [`AgentStatus::of`] takes the sidecar's document.
pub fn judge_drift(
    name: &str,
    state: &AgentState,
    paths: &AgentPaths,
    declaration: Option<&Path>,
) -> Option<(Drift, Option<String>)> {
    let declared_path = match declaration {
        Some(path) => path.to_path_buf(),
        None => recorded_declaration(state, paths)?,
    };
    let Ok(spec) = load_agent(&declared_path, Some(name)) else {
        let error = format!("cannot load {}", declared_path.display());
        return Some((Drift::Unknown { error }, None));
    };
    let fields = |fields: Option<Vec<FieldDrift>>| {
        fields.map(|fields| {
            fields
                .into_iter()
                .map(|f| DriftedField {
                    field: f.field,
                    running: f.old,
                    declared: f.new,
                })
                .collect()
        })
    };
    let sidecar = state
        .sidecar_status
        .is_some()
        .then(|| super::up::sidecar_drift(state, &spec))
        .and_then(fields);
    let harness = state
        .host
        .is_some()
        .then(|| super::up::harness_drift(state, &spec))
        .and_then(fields);
    let drift = Drift::Judged {
        declaration: declared_path.to_string_lossy().into_owned(),
        sidecar,
        harness,
    };
    Some((drift, Some(spec.fingerprint())))
}

/// The document of an agent whose sidecar does not answer with one: the
/// inbox from disk, each file in the state the journal restores.
fn from_disk(name: &str, paths: &AgentPaths, state: &AgentState) -> Result<DiskStatus> {
    let Some(record) = AgentRecord::load(paths.state_dir())? else {
        if state.nothing_running() && !super::agent_state::ever_ran(paths) {
            return Err(Failure::UnknownAgent.because(format!(
                "no agent `{name}` has run here (no {})\nhint: start it with `ding up AGENT.kdl`; `ding ls` lists the agents that have run",
                paths.state_dir().join(AGENT_RECORD).display()
            )));
        }
        // Its PTY host runs (or ran), but no sidecar ever recorded what it
        // delivers: say what can be said.
        return Ok(DiskStatus {
            agent: name.into(),
            running: Running,
            recorded: None,
            engine: DiskEngine::default(),
            lines: Vec::new(),
        });
    };
    let (journal, journal_warning) = match JournalStore::new(paths.state_dir()).read()? {
        Found::Journal(journal) => (journal, None),
        Found::Missing => (Journal::default(), None),
        Found::Unreadable(reason) => (
            Journal::default(),
            Some(format!(
                "the journal is unreadable ({reason}); every message is listed as pending"
            )),
        ),
    };
    let owned: BTreeMap<&str, &JournalEntry> = journal
        .entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry))
        .collect();
    let scan = Inbox::open(&record.inbox)?.scan_unread()?;
    let messages: Vec<DiskMessage> = scan
        .unread
        .into_iter()
        .map(|name| DiskMessage {
            state: owned
                .get(name.as_str())
                .map_or(MessageState::Pending, |entry| MessageState::restored(entry)),
            name,
        })
        .collect();
    let lines = messages.iter().map(disk_line).collect();
    Ok(DiskStatus {
        agent: name.into(),
        running: Running,
        recorded: Some(Recorded {
            policy: Policy::from_token(&record.fingerprint_input.delivery),
            fingerprint: record.fingerprint,
            fingerprint_input: record.fingerprint_input,
            declaration: record.declaration,
            inbox: record.inbox,
            journal_warning,
            unreadable: scan.unreadable.iter().map(UnreadableView::of).collect(),
        }),
        engine: DiskEngine {
            unread: messages.len(),
            messages,
        },
        lines,
    })
}

/// The human line of a message listed from disk.
fn disk_line(message: &DiskMessage) -> String {
    let shown = escape(message.name.as_str());
    match message.state {
        MessageState::Staged { .. } => format!("{shown}  staged (journal), awaiting archive"),
        MessageState::HookOwned { .. } => {
            format!("{shown}  hook-owned (journal), awaiting archive")
        }
        // Nothing delivers while no sidecar runs; nothing else is restored.
        MessageState::Pending | MessageState::InFlight { .. } => {
            format!("{shown}  held: sidecar not running")
        }
    }
}

/// The declaration the agent runs from: the sidecar's, the PTY host's, or
/// the one its sidecar last recorded. Data from processes and the state
/// directory: only a regular file (or a link to one) is opened, never a
/// FIFO.
fn recorded_declaration(state: &AgentState, paths: &AgentPaths) -> Option<PathBuf> {
    let from_sidecar = state
        .live_status()
        .map(|status| status.declaration.to_path_buf());
    let from_host = state
        .host
        .as_ref()
        .and_then(LaunchRecord::from_status)
        .map(|record| record.declaration);
    let from_record = AgentRecord::load(paths.state_dir())
        .ok()
        .flatten()
        .map(|record| record.declaration);
    [from_sidecar, from_host, from_record]
        .into_iter()
        .flatten()
        .find(|path| fs::metadata(path).is_ok_and(|m| m.is_file()))
}
