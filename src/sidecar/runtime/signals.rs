//! The signalfd: SIGCHLD reaps the adapter (reading what it wrote first),
//! SIGTERM, SIGINT and SIGHUP start the shutdown, which waits for the
//! transaction in flight and then stops the adapter.

use std::fs;

use nix::sys::signal::Signal;
use serde_json::json;

use crate::core::engine::Input;
use crate::core::time::Time;
use crate::sidecar::adapter_group;
use crate::sidecar::adapter_proc::{ADAPTER_STOP_GRACE, PIPE_READ_BUDGET, describe_exit};

use super::state::{RunningAdapter, Runtime, SHUTDOWN_GRACE};

impl Runtime {
    pub(super) fn on_signals(&mut self, now: Time) {
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
    pub(super) fn ready_to_exit(&self, now: Time) -> bool {
        let Some(deadline) = self.shutdown_deadline else {
            return false;
        };
        !self.engine.is_in_flight() || now >= deadline
    }

    pub(super) fn shut_down(&mut self) {
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
}
