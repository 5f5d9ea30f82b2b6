//! The child's life as the host sees it: starting it on a fresh PTY with
//! its environment, reaping it through the signalfd, restart and shutdown.

use super::orphans;
use super::*;
use crate::pty::last_exit;
use crate::wait::wait_until;

impl Host {
    pub(super) fn start_child(&mut self) -> Result<()> {
        self.end_job();
        if let Some(dir) = &self.spec.runtime_dir {
            last_exit::clear(dir);
        }
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
            since: Instant::now(),
        };
        self.screen = Screen::new(self.size);
        self.queries = QueryScanner::default();
        self.tell_terminal();
        self.redrawn();
        let revision = self.order.revision();
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
        self.log(json!({
            "event": "child-start",
            "pid": spawned.pid.as_raw(),
            "incarnation": incarnation,
            "revision": revision,
        }));
        Ok(())
    }

    /// The harness's environment: inherited, then `--env`, then the DING
    /// variables (which always win, so a nested host cannot leak its own).
    pub(super) fn child_env(&self, incarnation: &str) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        if std::env::var_os("TERM").is_none() && !self.spec.env.contains_key("TERM") {
            env.push(("TERM".into(), crate::pty::child::DEFAULT_TERM.into()));
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
        // Where the agent's hook channel is (spec §2.5): the host only names
        // it, so hooks running inside the harness can find the adapter.
        let hook_socket = self
            .spec
            .runtime_dir
            .as_ref()
            .map(|dir| dir.join("hook.sock"));
        env.push(("DING_HOOK_SOCKET".into(), path_or_empty(&hook_socket)));
        env
    }

    pub(super) fn drop_master(&mut self) {
        if let Some(master) = self.child.master.take() {
            let _ = self
                .poll
                .registry()
                .deregister(&mut SourceFd(&master.as_raw_fd()));
        }
        self.master_interest = None;
        // Bytes the old terminal never took are not delivered to a new one.
        self.to_master.clear();
        self.tell_terminal();
    }

    pub(super) fn child_exit_code(&self) -> u8 {
        match self.child.state {
            ChildState::Exited { code } => u8::try_from(code).unwrap_or(1),
            ChildState::Killed { signal } => u8::try_from(128 + signal).unwrap_or(1),
            ChildState::Running { .. } => 0,
        }
    }

    pub(super) fn read_signals(&mut self) -> Result<()> {
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
                    self.log(json!({"event": "shutdown", "signal": signal.as_str()}));
                    self.quit = Some(0);
                }
                Err(_) => {}
            }
        }
    }

    /// Records our child's end (SIGCHLD coalesces) without reaping it yet.
    ///
    /// The child leads its own process group, and what it started without
    /// leaving the group (a server, a tool's command) is the same job: the
    /// same incarnation, on the same terminal. When the leader ends, the
    /// rest is hung up at once, as a terminal hangs up its job, and killed
    /// after the restart grace, or at once when a new incarnation starts or
    /// the host stops (`end_job`): a new incarnation never shares the
    /// terminal with the last one's processes. Until then the leader stays
    /// a zombie, so its pid still names the group and cannot be reused by
    /// an unrelated process meanwhile.
    pub(super) fn reap(&mut self) {
        // Orphans of the job, adopted as the subreaper (`orphans`).
        orphans::reap_adopted(self.child.pid);
        if !matches!(self.child.state, ChildState::Running { .. }) {
            return;
        }
        let Ok(status) = exit_unreaped(self.child.pid) else {
            return;
        };
        if let Some(end) = child::exit_state(status) {
            let _ = killpg(self.child.pid, Signal::SIGHUP);
            self.job_end_at = Some(Instant::now() + RESTART_KILL_AFTER);
            self.child_ended(end);
        }
    }

    /// Kills what is left of the exited child's process group and reaps the
    /// child (see `reap`); nothing when no exited child is held.
    pub(super) fn end_job(&mut self) {
        if self.job_end_at.take().is_none() {
            return;
        }
        let _ = killpg(self.child.pid, Signal::SIGKILL);
        let _ = waitpid(self.child.pid, None);
        // What left the group (a double fork, `setsid`) came back to the
        // host as its subreaper; it ends with the job.
        let escaped = orphans::kill_what_remains(RESTART_KILL_AFTER);
        let escaped: Vec<i32> = escaped.iter().map(|pid| pid.as_raw()).collect();
        self.log(
            json!({"event": "job-end", "pid": self.child.pid.as_raw(), "escapedKilled": escaped}),
        );
    }

    pub(super) fn child_ended(&mut self, end: ChildState) {
        // The last output precedes the exit; read it into the model first.
        self.read_master();
        self.child.state = end;
        self.child.since = Instant::now();
        self.tell_terminal();
        let revision = self.order.revision();
        self.log(json!({"event": "child-exit", "child": end, "revision": revision}));
        self.keep_last_exit(end);
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

    /// Keeps how the child ended, and its screen's last lines, for
    /// `ding status` until the next start (`pty::last_exit`).
    fn keep_last_exit(&mut self, end: ChildState) {
        let Some(dir) = self.spec.runtime_dir.clone() else {
            return;
        };
        let record = last_exit::LastExit::of(
            end,
            crate::wall_clock::now_rfc3339(),
            &self.child.incarnation,
            &self.screen.snapshot(self.order.revision()),
        );
        if let Err(err) = last_exit::write(&dir, &record) {
            self.log(json!({"event": "last-exit-not-kept", "error": err.to_string()}));
        }
    }

    pub(super) fn restart_now(&mut self, client: Token) {
        match self.start_child() {
            Ok(()) => {
                let reply = Reply::Restart {
                    incarnation: self.child.incarnation.clone(),
                    revision: self.order.revision(),
                };
                self.reply(client, ServerLine::Reply(reply));
            }
            Err(err) => self.error(client, ErrorKind::ChildExited, format!("{err:#}")),
        }
    }

    pub(super) fn shut_down(&mut self) {
        if matches!(self.child.state, ChildState::Running { .. }) {
            // The whole job, as a terminal hangup would; a job that ignores
            // the hangup is killed after the same grace as a restart, so
            // stopping the host never leaves the harness running. The child
            // is only seen to end here, not reaped, so that what is left of
            // its group can still be named by its pid (see `reap`).
            let _ = killpg(self.child.pid, Signal::SIGHUP);
            let pid = self.child.pid;
            wait_until(RESTART_KILL_AFTER, || {
                !matches!(exit_unreaped(pid), Ok(WaitStatus::StillAlive))
            });
            self.job_end_at = Some(std::time::Instant::now());
        }
        self.end_job();
        for client in self.clients.values_mut() {
            client.flush();
        }
        let _ = std::fs::remove_file(&self.socket_path);
    }
}

/// Whether `pid` exited, without reaping it (so its pid keeps naming its
/// process group): `StillAlive` while it runs.
fn exit_unreaped(pid: Pid) -> nix::Result<WaitStatus> {
    let seen = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    waitid(Id::Pid(pid), seen)
}
