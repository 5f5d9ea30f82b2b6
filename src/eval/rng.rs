//! The evaluation's only source of chance: a small seeded generator
//! (SplitMix64), so a trial's every random moment (when a message arrives,
//! how fast the typist types, what it answers) follows from one printed
//! seed and a trial can be replayed exactly (`DING_EVAL_SEED`).
//!
//! Not for anything secret: it is predictable by design.

use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A whole number in `low..=high` (`low` when the range is empty).
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        let span = high - low + 1;
        low + self.next_u64() % span
    }

    /// A duration of `low_ms..=high_ms` milliseconds.
    pub fn millis(&mut self, low_ms: u64, high_ms: u64) -> Duration {
        Duration::from_millis(self.between(low_ms, high_ms))
    }

    /// True with probability `percent` in 100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.between(1, 100) <= percent
    }

    /// One of `items` (which must not be empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        let index = self.between(0, items.len().saturating_sub(1) as u64) as usize;
        &items[index]
    }
}

/// The seed of trial `index` of a run whose base seed is `base`: trial 0
/// uses the base itself, so a printed trial seed replays that trial as
/// trial 0 of a one-trial run. Harness and arm do not enter it: both arms
/// of a row on every harness see the same workload for the same seed.
pub fn trial_seed(base: u64, index: u32) -> u64 {
    base.wrapping_add(u64::from(index))
}

/// A base seed when none was given: the clock and the pid.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let mut rng = Rng::new(nanos ^ (u64::from(std::process::id()) << 32));
    // Small enough to type back in.
    rng.next_u64() % 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(43).next_u64(), xs[0]);
    }

    #[test]
    fn ranges_are_inclusive_and_stay_inside() {
        let mut rng = Rng::new(7);
        let mut seen = [false; 3];
        for _ in 0..200 {
            let n = rng.between(4, 6);
            assert!((4..=6).contains(&n), "{n}");
            seen[(n - 4) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(rng.between(5, 5), 5);
        assert_eq!(rng.between(9, 2), 9);
        assert!(rng.millis(10, 20) >= Duration::from_millis(10));
    }

    #[test]
    fn trial_zero_replays_with_the_printed_seed() {
        assert_eq!(trial_seed(1000, 0), 1000);
        assert_eq!(trial_seed(1000, 3), 1003);
        assert_eq!(trial_seed(u64::MAX, 1), 0);
    }
}
