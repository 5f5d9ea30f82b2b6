//! The adapter's process as the loop sees it: spawned with its
//! environment, its pipes registered and drained into engine inputs and log
//! lines, and retired when replaced.

use std::ffi::OsString;

use mio::Interest;
use mio::unix::SourceFd;
use serde_json::json;

use crate::core::engine::Input;
use crate::decl::expand_argv_from_env;
use crate::lines::Line;
use crate::sidecar::adapter_group;
use crate::sidecar::adapter_proc::{AdapterProcess, Drained};

use super::state::{ADAPTER_ERR, ADAPTER_IN, ADAPTER_OUT, RunningAdapter, Runtime};

impl Runtime {
    pub(super) fn spawn_adapter(&mut self) {
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

    pub(super) fn deregister_pipes(&self, running: &RunningAdapter) {
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

    pub(super) fn on_adapter_stdout(&mut self) {
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

    pub(super) fn on_adapter_stderr(&mut self) {
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
    pub(super) fn read_adapter_backlog(&mut self, read_stdout: bool, read_stderr: bool) {
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
}

fn argv_text(argv: &[OsString]) -> Vec<String> {
    argv.iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}
