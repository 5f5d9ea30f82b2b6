//! The loop: poll, turn each event into engine inputs, then settle the
//! turn (feed the inputs, carry out the outputs, write the journal, send
//! the downlink, re-arm the timer).

use std::io;
use std::time::Duration;

use anyhow::{Context, Result};
use mio::Events;
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{Expiration, TimerSetTimeFlags};
use serde_json::json;

use crate::core::downlink::Downlink;
use crate::core::engine::Output;
use crate::core::time::Time;
use crate::sidecar::crash_point::{self, CrashPoint};
use crate::sidecar::pty_link::LinkNote;

use super::state::{
    ADAPTER_ERR, ADAPTER_IN, ADAPTER_OUT, INBOX, PTY, RunningAdapter, Runtime, SIGNALS, STATUS,
    TIMER, monotonic_now,
};

impl Runtime {
    pub(super) fn run(&mut self) -> Result<()> {
        let mut events = Events::with_capacity(64);
        loop {
            // Unread adapter output and connections not yet accepted wait
            // for no event: look, don't sleep.
            let backlog = self
                .adapter
                .as_ref()
                .is_some_and(RunningAdapter::has_backlog)
                || self.status.has_backlog();
            let timeout = backlog.then_some(Duration::ZERO);
            match self.poll.poll(&mut events, timeout) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err).context("poll"),
            }
            let now = monotonic_now();
            // One budget per pipe per turn, whether an event or a backlog
            // brings us to it.
            let (mut read_stdout, mut read_stderr) = (false, false);
            for event in events.iter() {
                match event.token() {
                    SIGNALS => self.on_signals(now),
                    TIMER => self.on_timer(now),
                    INBOX => self.on_inbox(),
                    ADAPTER_OUT => {
                        read_stdout = true;
                        self.on_adapter_stdout();
                    }
                    ADAPTER_ERR => {
                        read_stderr = true;
                        self.on_adapter_stderr();
                    }
                    ADAPTER_IN => self.flush_downlink(),
                    PTY => {
                        self.link.on_ready(self.poll.registry(), now);
                        self.absorb_link();
                    }
                    token if self.status.owns(token) => self.on_status_peer(token, now),
                    _ => {}
                }
            }
            self.read_adapter_backlog(read_stdout, read_stderr);
            if self.status.has_backlog() {
                self.on_status_peer(STATUS, now);
            }
            self.settle(now)?;
            if self.ready_to_exit(now) {
                self.shut_down();
                return Ok(());
            }
        }
    }

    /// Feeds every queued input, carrying out outputs after each; writes the
    /// journal if ownership changed; re-arms the timer.
    pub(super) fn settle(&mut self, now: Time) -> Result<()> {
        self.feed_inputs(now);
        if self.journal_dirty {
            self.journal_dirty = false;
            self.save_journal();
        }
        let grants = self
            .downlink
            .iter()
            .any(|line| matches!(line, Downlink::Claimed(claimed) if !claimed.granted.is_empty()));
        if grants && self.journal_write_error.is_none() {
            crash_point::reach(CrashPoint::AfterClaimJournaled);
        }
        self.send_downlink();
        self.arm_timer(now);
        Ok(())
    }

    /// Hands this turn's downlink lines to the adapter's stdin queue.
    fn send_downlink(&mut self) {
        let lines = std::mem::take(&mut self.downlink);
        let Some(running) = self.adapter.as_mut() else {
            return;
        };
        let pid = running.process.pid();
        let mut dropped = 0;
        for line in lines {
            if !running.process.queue_line(&line.to_line()) {
                dropped += 1;
            }
        }
        if dropped > 0 {
            self.log.event(
                "adapter-stdin-full",
                json!({ "pid": pid, "dropped": dropped }),
            );
        }
        self.flush_downlink();
    }

    fn flush_downlink(&mut self) {
        if let Some(running) = self.adapter.as_mut() {
            running.process.flush_stdin();
        }
    }

    /// Writes the journal; a failure is logged once per cause, shown in
    /// status and retried at the end of every later turn. The inbox stays
    /// the authority: a lost journal write can cost one duplicate ring after
    /// a crash, never a message.
    pub(super) fn save_journal(&mut self) {
        match self.store.save(&self.engine.journal()) {
            Ok(()) => {
                if self.journal_write_error.take().is_some() {
                    self.log.event("journal-write-recovered", json!({}));
                }
            }
            Err(err) => {
                let error = format!("{err:#}");
                if self.journal_write_error.as_deref() != Some(error.as_str()) {
                    self.log
                        .event("journal-write-failed", json!({ "error": error }));
                }
                self.journal_write_error = Some(error);
                self.journal_dirty = true;
            }
        }
    }

    fn feed_inputs(&mut self, now: Time) {
        while let Some(input) = self.inputs.pop_front() {
            self.engine.handle_input(input, now);
            self.carry_out_outputs(now);
        }
    }

    pub(super) fn carry_out_outputs(&mut self, now: Time) {
        while let Some(output) = self.engine.poll_output() {
            match output {
                Output::SendIf(send) => {
                    self.link.send_if(self.poll.registry(), now, &send);
                    self.absorb_link();
                }
                Output::Send(send) => {
                    self.link.send(self.poll.registry(), now, &send);
                    self.absorb_link();
                }
                Output::SpawnAdapter => self.spawn_adapter(),
                Output::ToAdapter(line) => self.downlink.push(line),
                Output::JournalChanged => self.journal_dirty = true,
                Output::StatusChanged => {}
                Output::Decision(record) => self.log.decision(&record),
            }
        }
    }

    /// Queues what the PTY link learned and logs its notes.
    fn absorb_link(&mut self) {
        let (inputs, notes) = self.link.take();
        self.inputs.extend(inputs);
        for note in notes {
            match note {
                LinkNote::Connected => self.log.event(
                    "pty-connected",
                    json!({ "socket": self.paths.pty_socket() }),
                ),
                LinkNote::Lost(why) => self.log.event("pty-lost", json!({ "why": why })),
                LinkNote::ChildExited(child) => {
                    self.log.event("harness-exited", json!({ "child": child }))
                }
                LinkNote::Unexpected(what) => {
                    self.log.event("pty-unexpected", json!({ "what": what }))
                }
            }
        }
    }

    fn arm_timer(&mut self, now: Time) {
        let deadline = [
            self.engine.next_deadline(),
            self.link.retry_at(),
            self.shutdown_deadline,
            self.log.next_summary_at(),
        ]
        .into_iter()
        .flatten()
        .min();
        let result = match deadline {
            None => self.timer.unset(),
            Some(deadline) => {
                let millis = deadline.max(now).as_millis();
                // An absolute time of zero would disarm the timer.
                let spec = TimeSpec::new(
                    (millis / 1000) as i64,
                    ((millis % 1000) * 1_000_000).max(1) as i64,
                );
                self.timer.set(
                    Expiration::OneShot(spec),
                    TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                )
            }
        };
        if let Err(err) = result {
            self.log
                .event("timer-failed", json!({ "error": err.to_string() }));
        }
    }

    fn on_timer(&mut self, now: Time) {
        // Clear the expiration count; a spurious wake-up is harmless.
        let mut count = [0u8; 8];
        let _ = nix::unistd::read(&self.timer, &mut count);
        self.engine.handle_timeout(now);
        self.carry_out_outputs(now);
        self.connect_pty(now);
        self.log.summarize_ended();
    }

    pub(super) fn connect_pty(&mut self, now: Time) {
        self.link.poll_connect(self.poll.registry(), now);
        self.absorb_link();
    }
}
