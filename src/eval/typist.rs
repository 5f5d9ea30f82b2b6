//! The scripted typist: a person at the keyboard of the agent's terminal.
//!
//! It types one keystroke at a time, with a person's pauses (a little
//! longer after a space, now and then a hesitation, a breath before
//! Return), and may leave a draft unfinished for a while. Every keystroke
//! is one unconditional `send` on the PTY host's control socket with the
//! default origin, exactly the path `ding intervene` takes, so the PTY host
//! logs each as an `intervention` and never as DING's `delivery`.
//!
//! A typing [`Plan`] is computed from the trial's seed before anything is
//! typed: each key's moment is an offset from the plan's start, so the
//! scenario knows when the draft is in progress and can make a message
//! arrive between two given keystrokes. Keys are sent at their planned
//! moments (a late key is sent at once; the plan never speeds up to catch
//! up).

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::rng::Rng;
use crate::unix_time::unix_ms;
use ding::pty::client::Client;
use ding::pty::transport::WireStep;

/// Return, as a terminal sends it.
pub const ENTER: &[u8] = b"\r";

/// Esc, as a terminal sends it alone.
pub const ESC: &[u8] = b"\x1b";

/// One planned keystroke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// When, from the plan's start.
    pub at: Duration,
    pub bytes: Vec<u8>,
}

/// Keystrokes at planned moments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub keys: Vec<Key>,
}

impl Plan {
    /// When the last key is typed, from the start.
    pub fn duration(&self) -> Duration {
        self.keys.last().map_or(Duration::ZERO, |key| key.at)
    }

    /// The moment of key `index` (the end if there is no such key).
    pub fn key_at(&self, index: usize) -> Duration {
        self.keys
            .get(index)
            .map_or_else(|| self.duration(), |key| key.at)
    }

    /// Whether the plan ends with Return.
    pub fn submits(&self) -> bool {
        self.keys.last().is_some_and(|key| key.bytes == ENTER)
    }

    /// The text the plan types, Return excluded.
    pub fn text(&self) -> String {
        let bytes: Vec<u8> = self
            .keys
            .iter()
            .filter(|key| key.bytes != ENTER)
            .flat_map(|key| key.bytes.iter().copied())
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// How a person types: each keystroke's pause before it.
pub struct Pace<'a> {
    rng: &'a mut Rng,
}

impl<'a> Pace<'a> {
    pub fn new(rng: &'a mut Rng) -> Pace<'a> {
        Pace { rng }
    }

    /// The pause before one character, after `previous`.
    fn gap(&mut self, previous: Option<char>) -> Duration {
        let mut gap = self.rng.millis(70, 190);
        if previous == Some(' ') {
            gap += self.rng.millis(0, 150);
        }
        if self.rng.percent(4) {
            gap += self.rng.millis(300, 900);
        }
        gap
    }

    /// `text`, one character per keystroke, starting right away.
    pub fn text(&mut self, text: &str) -> Plan {
        let mut plan = Plan::default();
        self.extend(&mut plan, text);
        plan
    }

    /// `text` then Return after a breath.
    pub fn line(&mut self, text: &str) -> Plan {
        let mut plan = self.text(text);
        self.enter(&mut plan);
        plan
    }

    /// A draft left unfinished for `pause` after its first `typed_first`
    /// characters, then finished and submitted with Return.
    pub fn draft(&mut self, text: &str, typed_first: usize, pause: Duration) -> Plan {
        let split = text
            .char_indices()
            .map(|(index, _)| index)
            .nth(typed_first)
            .unwrap_or(text.len());
        let mut plan = self.text(&text[..split]);
        let resume_at = plan.duration() + pause;
        let mut rest = self.text(&text[split..]);
        for key in &mut rest.keys {
            key.at += resume_at;
        }
        plan.keys.append(&mut rest.keys);
        self.enter(&mut plan);
        plan
    }

    fn extend(&mut self, plan: &mut Plan, text: &str) {
        let mut at = plan.duration();
        let mut previous = None;
        for (index, c) in text.chars().enumerate() {
            if index > 0 || !plan.keys.is_empty() {
                at += self.gap(previous);
            }
            let mut buf = [0u8; 4];
            plan.keys.push(Key {
                at,
                bytes: c.encode_utf8(&mut buf).as_bytes().to_vec(),
            });
            previous = Some(c);
        }
    }

    fn enter(&mut self, plan: &mut Plan) {
        let at = plan.duration() + self.rng.millis(300, 700);
        plan.keys.push(Key {
            at,
            bytes: ENTER.to_vec(),
        });
    }
}

/// One keystroke as it was typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Typed {
    pub unix_ms: u64,
    pub bytes: Vec<u8>,
}

/// The typist's hands on one terminal.
pub struct Typist {
    client: Client,
    /// Every keystroke typed so far, in order.
    pub typed: Vec<Typed>,
}

impl Typist {
    pub fn connect(socket: &Path) -> Result<Typist> {
        let client = Client::connect(socket).context("the typist connects to the PTY host")?;
        Ok(Typist {
            client,
            typed: Vec::new(),
        })
    }

    /// Types `plan`, each key at `start` plus its offset. Returns the unix
    /// time of its last key.
    pub fn perform(&mut self, plan: &Plan, start: Instant) -> Result<u64> {
        let mut last = unix_ms();
        for key in &plan.keys {
            sleep_until(start + key.at);
            last = self.press(&key.bytes)?;
        }
        Ok(last)
    }

    /// Presses one key now; returns when, in unix milliseconds.
    pub fn press(&mut self, bytes: &[u8]) -> Result<u64> {
        self.client
            .send(&[WireStep::Write(bytes.to_vec())])
            .context("the typist's keystroke")?;
        let at = unix_ms();
        self.typed.push(Typed {
            unix_ms: at,
            bytes: bytes.to_vec(),
        });
        Ok(at)
    }
}

/// Sleeps until `moment` (at once if it passed): the workload's own timing,
/// a person's pace, never a wait for something to happen.
pub fn sleep_until(moment: Instant) {
    let left = moment.saturating_duration_since(Instant::now());
    if !left.is_zero() {
        thread::sleep(left);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_types_one_character_per_key_at_increasing_moments() {
        let mut rng = Rng::new(1);
        let plan = Pace::new(&mut rng).line("héllo there");
        assert_eq!(plan.text(), "héllo there");
        assert!(plan.submits());
        assert_eq!(plan.keys.len(), "héllo there".chars().count() + 1);
        assert_eq!(plan.keys[0].at, Duration::ZERO);
        for pair in plan.keys.windows(2) {
            assert!(
                pair[1].at >= pair[0].at + Duration::from_millis(70),
                "{pair:?}"
            );
        }
        let before_enter = plan.keys[plan.keys.len() - 2].at;
        assert!(plan.duration() >= before_enter + Duration::from_millis(300));
    }

    #[test]
    fn a_draft_pauses_where_it_was_left_and_finishes() {
        let mut rng = Rng::new(2);
        let pause = Duration::from_secs(3);
        let plan = Pace::new(&mut rng).draft("fix the parser", 4, pause);
        assert_eq!(plan.text(), "fix the parser");
        assert!(plan.submits());
        let gap = plan.keys[4].at - plan.keys[3].at;
        assert!(gap >= pause, "{gap:?}");
    }

    #[test]
    fn the_same_seed_plans_the_same_keys() {
        let a = Pace::new(&mut Rng::new(9)).line("same words");
        let b = Pace::new(&mut Rng::new(9)).line("same words");
        let c = Pace::new(&mut Rng::new(10)).line("same words");
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
