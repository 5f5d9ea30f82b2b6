//! Messages arriving from outside: `ding send` run as its own process, as
//! any user or script would, at moments the scenario chose, from a thread
//! of their own so that they land between the typist's keystrokes.

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::evidence::Sent;
use super::trial_command::trial_command;
use super::typist::sleep_until;
use crate::unix_time::unix_ms;

/// Runs `ding send` for one agent; cheap to clone into threads.
#[derive(Clone)]
pub struct Sender {
    pub ding: PathBuf,
    /// The trial's directory: `ding send` runs there, with `--decl agent.kdl`.
    pub dir: PathBuf,
    pub env: Vec<(String, OsString)>,
    pub agent: String,
    counter: Arc<AtomicU32>,
}

impl Sender {
    pub fn new(ding: PathBuf, dir: PathBuf, env: Vec<(String, OsString)>, agent: &str) -> Sender {
        Sender {
            ding,
            dir,
            env,
            agent: agent.to_string(),
            counter: Arc::new(AtomicU32::new(0)),
        }
    }

    /// Sends one new message now; returns its filename once `ding send`
    /// printed it (the message is durable from then on).
    pub fn send(&self) -> Result<Sent> {
        self.send_with(&[])
    }

    /// [`Sender::send`] with more options for `ding send` (`--create`).
    pub fn send_with(&self, options: &[&str]) -> Result<Sent> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let outbox = self.dir.join("outbox");
        fs::create_dir_all(&outbox).context("create the outbox")?;
        let body = outbox.join(format!("message-{n}.md"));
        fs::write(
            &body,
            format!("Message {n} of this trial: please look at item {n}.\n"),
        )
        .context("write the message body")?;
        let output = trial_command(&self.ding, &self.env)
            .arg("send")
            .arg(&self.agent)
            .arg(&body)
            .args(["--decl", "agent.kdl"])
            .args(options)
            .current_dir(&self.dir)
            .output()
            .context("run ding send")?;
        let at = unix_ms();
        if !output.status.success() {
            bail!(
                "ding send failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
        if name.is_empty() {
            bail!("ding send printed no filename");
        }
        Ok(Sent { name, unix_ms: at })
    }

    /// Sends one message at each of `moments` (in order; a moment already
    /// passed sends at once), from a thread of its own.
    pub fn arrive_at(&self, moments: Vec<Instant>) -> Arrivals {
        let sender = self.clone();
        Arrivals(thread::spawn(move || {
            moments
                .into_iter()
                .map(|moment| {
                    sleep_until(moment);
                    sender.send()
                })
                .collect()
        }))
    }
}

/// Messages on their way; `join` waits for every `ding send` to return.
pub struct Arrivals(JoinHandle<Vec<Result<Sent>>>);

impl Arrivals {
    /// Every message that was sent, and the first error, if any.
    pub fn join(self) -> (Vec<Sent>, Option<anyhow::Error>) {
        let results = match self.0.join() {
            Ok(results) => results,
            Err(_) => {
                return (
                    Vec::new(),
                    Some(anyhow::anyhow!("the sender thread panicked")),
                );
            }
        };
        let mut sent = Vec::new();
        let mut error = None;
        for result in results {
            match result {
                Ok(one) => sent.push(one),
                Err(err) if error.is_none() => error = Some(err),
                Err(_) => {}
            }
        }
        (sent, error)
    }
}
