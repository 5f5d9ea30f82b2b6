//! A trial's waits: on the screen (ready, idle, a free composer), on the
//! model server's log (a request, a turn's end, a delivery), and for the
//! whole to settle. Each waits on what it waits for, within `PATIENCE`.

use super::*;

impl Trial {
    /// The screen now.
    pub fn screen(&self) -> Result<Snapshot> {
        Client::connect(&self.paths.pty_socket())?.snapshot()
    }

    /// Waits until the screen satisfies `ready`, re-reading it on every
    /// change the PTY host pushes.
    pub fn wait_screen(
        &self,
        what: &str,
        patience: Duration,
        ready: impl Fn(&Snapshot) -> bool,
    ) -> Result<Snapshot> {
        let socket = self.paths.pty_socket();
        let mut watcher = Client::connect(&socket)?;
        let mut revision = watcher.watch()?;
        let mut reader = Client::connect(&socket)?;
        let deadline = Instant::now() + patience;
        loop {
            let snapshot = reader.snapshot()?;
            if ready(&snapshot) {
                return Ok(snapshot);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "the screen never showed {what} within {patience:?}; it shows:\n{}",
                    snapshot.rows.join("\n")
                );
            }
            // The watch began before the snapshot: any later change is a
            // revision above the snapshot's.
            if let Some(seen) =
                watcher.wait_revision_above(revision.max(snapshot.revision), left)?
            {
                revision = seen;
            }
        }
    }

    /// Waits until the harness takes input (its composer is on screen).
    pub fn wait_ready(&self) -> Result<Snapshot> {
        let pane = self.pane;
        self.wait_screen("the composer", PATIENCE, |s| pane.ready(s))
    }

    /// Waits until the harness takes input after the start or resume a
    /// backlog waited for, and records when its composer was first seen
    /// ready: the backlog's latency counts from then. A composer already
    /// ready at the first look records nothing (its moment is unknown).
    pub fn note_when_ready(&mut self) -> Result<()> {
        let pane = self.pane;
        let first_look_ready = pane.ready(&self.screen()?);
        self.wait_ready()?;
        if first_look_ready {
            self.notes.push(
                "the composer was ready at the first look: the backlog's latency counts from its arrival".into(),
            );
        } else {
            self.records.ready_ms = Some(unix_ms());
        }
        Ok(())
    }

    /// Waits until the harness is idle with an empty composer.
    pub fn wait_idle(&self) -> Result<Snapshot> {
        let pane = self.pane;
        self.wait_screen("an idle, empty composer", PATIENCE, |s| pane::idle(pane, s))
    }

    /// Waits until the harness waits for the person, and empties its
    /// composer as a person would if it holds text: after an Esc that
    /// interrupted a turn, a harness puts the turn's prompt back there
    /// (the aggressive arm's typed notice, too), and the person clears it
    /// before writing their own line. Notes it when it happens.
    pub fn wait_free_composer(&mut self) -> Result<()> {
        let pane = self.pane;
        let screen = self.wait_screen("the harness waiting for the person", PATIENCE, |s| {
            pane::waiting(pane, s)
        })?;
        if !pane.empty_composer(&screen) {
            self.notes.push(
                "the composer held a prompt put back after the Esc: the person cleared it".into(),
            );
            self.press(pane.empty_composer_keys())?;
        }
        self.wait_idle()?;
        Ok(())
    }

    /// Every request logged so far.
    pub fn requests(&mut self) -> Result<&[Request]> {
        self.log.refresh()?;
        Ok(&self.log.requests)
    }

    /// Waits until a logged request satisfies `wanted`; returns it.
    pub fn wait_request(
        &mut self,
        what: &str,
        patience: Duration,
        wanted: impl Fn(&Request) -> bool,
    ) -> Result<Request> {
        let found = wait_for(patience, POLL_EVERY, || match self.requests() {
            Ok(requests) => requests.iter().find(|r| wanted(r)).cloned().map(Ok),
            Err(err) => Some(Err(err)),
        });
        found.unwrap_or_else(|| {
            // What a person would look at next: the screen.
            let shows = match self.screen() {
                Ok(snapshot) => snapshot.rows.join("\n"),
                Err(err) => format!("(the screen could not be read: {err})"),
            };
            Err(anyhow!(
                "the model server never saw {what} within {patience:?}; the screen shows:\n{shows}"
            ))
        })
    }

    /// Waits for a turn the typist started at `since_ms` to end: a model
    /// call after it, then an idle screen.
    pub fn wait_turn_done(&mut self, since_ms: u64) -> Result<()> {
        self.wait_request("the turn's model call", PATIENCE, |r| {
            r.is_turn_call() && r.t >= since_ms
        })?;
        self.wait_idle()?;
        Ok(())
    }

    /// The workload is over: waits until every sent message reached a
    /// model call (or the inbox's archive), or [`DELIVERY_PATIENCE`] has
    /// passed. From here on, a message that reaches the model is late.
    pub fn await_delivery(&mut self) -> Result<()> {
        self.records.deadline_ms = Some(unix_ms() + DELIVERY_PATIENCE.as_millis() as u64);
        let names: Vec<String> = self.records.sent.iter().map(|s| s.name.clone()).collect();
        let archive = self.inbox().join("archive");
        let outcome = wait_for(DELIVERY_PATIENCE, POLL_EVERY, || {
            let requests = match self.requests() {
                Ok(requests) => requests,
                Err(err) => return Some(Err(err)),
            };
            let done = names.iter().all(|name| {
                requests.iter().any(|r| r.is_turn_call() && r.carries(name))
                    || archive.join(name).exists()
            });
            done.then_some(Ok(()))
        });
        // Not all delivered by the deadline is a result, not an error.
        outcome.unwrap_or(Ok(()))
    }

    /// Waits until the conversation is quiet: no new request for
    /// [`QUIET`] and no turn on the screen. Notes it when it never is.
    pub fn settle(&mut self) -> Result<()> {
        let mut count = self.requests()?.len();
        let mut quiet_since = Instant::now();
        let settled = wait_for(SETTLE_PATIENCE, RETRY_EVERY, || {
            let now_count = match self.requests() {
                Ok(requests) => requests.len(),
                Err(err) => return Some(Err(err)),
            };
            if now_count != count {
                count = now_count;
                quiet_since = Instant::now();
            }
            if quiet_since.elapsed() >= QUIET {
                let busy = self.screen().is_ok_and(|s| self.pane.busy(&s));
                if !busy {
                    return Some(Ok(()));
                }
            }
            None
        });
        settled.unwrap_or_else(|| {
            self.notes
                .push(format!("did not settle within {SETTLE_PATIENCE:?}"));
            Ok(())
        })
    }
}
