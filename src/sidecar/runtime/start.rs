//! Starting the sidecar: claim the agent (its socket and pid file), open
//! the inbox, the journal and every descriptor, then run the loop until a
//! signal stops it.

use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::os::fd::{AsFd, AsRawFd};
use std::process::ExitCode;

use anyhow::{Context, Result};
use mio::unix::SourceFd;
use mio::{Interest, Poll};
use nix::sys::timerfd::{ClockId, TimerFd, TimerFlags};
use serde_json::json;

use crate::core::engine::Engine;
use crate::sidecar::agent_record::AgentRecord;
use crate::sidecar::control::write_pid;
#[cfg(feature = "crash-points")]
use crate::sidecar::crash_point::{self, CRASH_AT_VAR, CrashPoint};
use crate::sidecar::inbox::Inbox;
use crate::sidecar::inbox_watch::InboxWatch;
use crate::sidecar::journal_store::JournalStore;
use crate::sidecar::log::Log;
use crate::sidecar::paths::AgentPaths;
use crate::sidecar::pty_link::PtyLink;
use crate::sidecar::status_server::StatusServer;
use crate::signals::read_through_signalfd;

use super::state::{
    FIRST_STATUS_PEER, INBOX, PTY, Runtime, SIGNALS, STATUS, SidecarOptions, TIMER, monotonic_now,
};

/// Runs the sidecar until SIGTERM, SIGINT or SIGHUP.
pub fn run(options: SidecarOptions) -> Result<ExitCode> {
    let mut runtime = Runtime::start(options)?;
    runtime.run()?;
    Ok(ExitCode::SUCCESS)
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
