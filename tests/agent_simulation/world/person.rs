//! The person at the keyboard: what they look at, what they type, and
//! how far apart their keys reach the terminal.

use super::*;

impl World {
    pub(super) fn person_looks(&mut self) {
        let quiet = self.now >= self.scenario.quiet_at_ms;
        let view = self.harness.view();
        if let Some((from, long)) = self.scenario.stall
            && (from.saturating_sub(RESIZES_A_WINDOW_MS)..from + long + READS_A_REDRAWN_SCREEN_MS)
                .contains(&self.now)
        {
            // The person resizes the window (their hand on its edge, not on
            // the keys) and waits for the harness to draw it again, and
            // reads what it drew, before typing on.
            let reads = self.rng.between(READS_A_REDRAWN_SCREEN_MS, 2_000);
            return self.at(from + long + reads, Due::PersonLooks);
        }
        // What the harness's hostile screens have the person do (open a
        // picker no hook announces, send on a notice that arrived
        // changed): its own stream decides, the world's draws nothing.
        let acts = if !quiet && matches!(view, View::Idle { .. }) {
            self.harness.person_acts()
        } else {
            None
        };
        let next = match &view {
            View::Dialog if let Some((keys, next)) = self.harness.answer_keys() => {
                // A dialog no hook announced: Esc, a digit, Return.
                self.person_types(keys);
                next
            }
            View::Dialog => {
                // Anyone answers a dialog, quiet or not: after reading it.
                let digit = if self.rng.chance(50) { b"1" } else { b"2" };
                self.person_types(digit.to_vec());
                self.rng.between(300, 2_500)
            }
            _ if quiet => {
                if !view.composer().is_empty() {
                    // The person's last act: their draft goes.
                    self.person_types(b"\r".to_vec());
                }
                1_000
            }
            _ if let Some((keys, next)) = acts => {
                self.person_types(keys);
                next
            }
            View::Busy { .. } if self.rng.chance(3) => {
                // Esc: the person stops the turn.
                self.person_types(b"\x1b".to_vec());
                self.rng.between(200, 2_000)
            }
            _ if !view.composer().is_empty() => match self.rng.between(0, 9) {
                0..=5 => {
                    let letter = b'a' + self.rng.between(0, 25) as u8;
                    self.person_types(vec![letter]);
                    self.rng.between(30, 250)
                }
                6 | 7 => {
                    self.person_types(b"\r".to_vec());
                    self.rng.between(200, 3_000)
                }
                8 => {
                    // Wipes the draft, one key at a time.
                    let keys = vec![0x7f; view.composer().chars().count()];
                    self.person_types(keys);
                    self.rng.between(100, 2_000)
                }
                _ => self.rng.between(500, 6_000),
            },
            View::Idle { .. } if !self.harness.commands().is_empty() && self.rng.chance(4) => {
                // A command, typed whole; Return follows at the next look.
                let commands = self.harness.commands();
                let command = commands[self.rng.between(0, commands.len() as u64 - 1) as usize];
                self.person_types(command.as_bytes().to_vec());
                self.rng.between(100, 1_500)
            }
            _ if self.rng.chance(self.scenario.eagerness) => {
                let letter = b'a' + self.rng.between(0, 25) as u8;
                self.person_types(vec![letter]);
                self.rng.between(30, 250)
            }
            _ => self.rng.between(200, 4_000),
        };
        self.after(next, Due::PersonLooks);
    }

    /// What a person types goes to the PTY host, which holds it behind
    /// DING's paste, paces it, or writes it at once (its input order).
    pub(super) fn person_types(&mut self, bytes: Vec<u8>) {
        self.note(format!(
            "person types {:?}",
            String::from_utf8_lossy(&bytes)
        ));
        self.keys_typed.push_back(self.now);
        self.cost_persons_key();
        self.drive_order(Some(ToOrder::Keys(bytes)));
    }

    /// The host wrote a person's keys to the terminal now: they must keep
    /// their distance from the keys before, and a key that joins DING's
    /// notice awaiting its Return races with it.
    pub(super) fn persons_key_written(&mut self, bytes: &[u8]) {
        let typed = self.keys_typed.pop_front().unwrap_or(self.now);
        if self.awaiting_return {
            // The key joins DING's notice in the composer before its
            // Return: what becomes of its files follows from this race.
            self.raced.extend(self.typing.iter().cloned());
        }
        if let Some((before, written)) = self.last_persons_key {
            let typed_apart = typed.saturating_sub(before);
            let written_apart = self.now - written;
            if typed_apart >= BURST_WINDOW_MS && written_apart + TIMER_SLACK_MS < BURST_WINDOW_MS {
                self.violate(
                    Class::KeysBunched,
                    format!(
                        "the person's {:?} reached the terminal {written_apart} ms after their previous keys, typed {typed_apart} ms after them",
                        String::from_utf8_lossy(bytes)
                    ),
                );
            }
        }
        self.last_persons_key = Some((typed, self.now));
    }
}
