//! The fuzzing engine: a seeded mutation fuzzer over a checked-in corpus,
//! built on the stable toolchain with nothing but the standard library.
//!
//! It is **not coverage-guided**: it cannot see which branches an input
//! reached. What it has instead is a cheap outcome signal: every target
//! names the *class* of each outcome (`ok:claim`, `err:invalid-field:limit`,
//! `oversized`), and an input that produced a class not seen before joins
//! the working pool, so inputs that reach a new verdict get mutated further.
//! `docs/fuzzing.md` says what that does and does not find, and how to run
//! the optional coverage-guided engine (AFL++) on the same targets.
//!
//! Mutations: bit flips, interesting bytes, random inserts and deletions,
//! duplicated ranges, the target's tokens (field names, keywords, escapes),
//! hostile characters, numbers at the edges of their types, runs repeated
//! to nesting limits, splices of two inputs, and lengths at each of the
//! target's bounds (one below, at, one above).

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use super::target::Target;

/// The corpus directory of `target`.
pub fn corpus_dir(target: &Target) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fuzz")
        .join(target.name)
}

/// Every corpus file of `target`, sorted by name.
pub fn corpus(target: &Target) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("corpus {}: {err}", dir.display()))
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            (path, bytes)
        })
        .collect()
}

/// Runs every corpus file through the target: what `make test` does.
/// Fails naming each file whose check panicked.
pub fn replay(target: &Target) {
    let files = corpus(target);
    assert!(
        !files.is_empty(),
        "{}: the corpus is empty",
        corpus_dir(target).display()
    );
    let mut failed = Vec::new();
    for (path, bytes) in &files {
        if panic::catch_unwind(AssertUnwindSafe(|| (target.check)(bytes))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "{}: {} of {} corpus inputs broke an invariant:\n{}",
        target.name,
        failed.len(),
        files.len(),
        failed.join("\n")
    );
}

/// What one fuzzing run did.
#[derive(Debug)]
pub struct Report {
    pub target: &'static str,
    pub seed: u64,
    pub execs: u64,
    pub classes: usize,
    pub pool: usize,
    /// Corpus files written for inputs that broke an invariant.
    pub saved: Vec<PathBuf>,
}

/// The most inputs kept in the working pool, and the most crashers saved
/// per run (past that they are nearly always the same bug).
const MAX_POOL: usize = 4096;
const MAX_SAVED: usize = 8;

/// Fuzzes `target` for `budget`. New failing inputs are minimized and saved
/// into its corpus directory as `crash-<hash>` for review.
pub fn fuzz(target: &Target, budget: Duration, seed: u64) -> Report {
    let inflight = inflight_path(target);
    let mut saved = Vec::new();
    // A previous run that died without unwinding (a stack overflow, an
    // abort) left the input it was running: that input is a crasher.
    if let Ok(bytes) = fs::read(&inflight) {
        saved.extend(save_crasher(target, &bytes));
        let _ = fs::remove_file(&inflight);
    }
    let mut pool: Vec<Vec<u8>> = corpus(target).into_iter().map(|(_, b)| b).collect();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let previous_hook = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|last| *last.borrow_mut() = location);
    }));
    let mut classes = HashSet::new();
    let mut failures: HashSet<String> = HashSet::new();
    for input in pool.clone() {
        if let Ok(class) = run_one(target, &inflight, &input) {
            classes.insert(class);
        }
    }
    let mut rng = Rng::new(seed);
    let deadline = Instant::now() + budget;
    let mut execs = 0u64;
    let max_len = target.bounds.iter().copied().max().unwrap_or(4096) * 2 + 4096;
    while Instant::now() < deadline {
        let parent = &pool[rng.below(pool.len())];
        let other = &pool[rng.below(pool.len())];
        let mut input = parent.clone();
        for _ in 0..rng.stack_depth() {
            mutate(&mut input, other, target, &mut rng);
        }
        input.truncate(max_len);
        execs += 1;
        match run_one(target, &inflight, &input) {
            Ok(class) => {
                if classes.insert(class) && pool.len() < MAX_POOL {
                    pool.push(input);
                }
            }
            Err(location) => {
                if failures.insert(location.clone()) && saved.len() < MAX_SAVED {
                    let small = minimize(target, &inflight, input, &location);
                    saved.extend(save_crasher(target, &small));
                }
            }
        }
    }
    let _ = fs::remove_file(&inflight);
    panic::set_hook(previous_hook);
    Report {
        target: target.name,
        seed,
        execs,
        classes: classes.len(),
        pool: pool.len(),
        saved,
    }
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Runs one input; `Err(panic location)` when an invariant broke. The
/// input is written to the in-flight file first, so that a run which dies
/// without unwinding still leaves it behind.
fn run_one(target: &Target, inflight: &Path, input: &[u8]) -> Result<String, String> {
    let _ = fs::write(inflight, input);
    panic::catch_unwind(AssertUnwindSafe(|| (target.check)(input)))
        .map_err(|_| LAST_PANIC.with(|last| last.borrow().clone()))
}

/// Where the input being run is kept, outside the corpus.
fn inflight_path(target: &Target) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-inflight");
    let _ = fs::create_dir_all(&dir);
    dir.join(target.name)
}

/// Cuts `input` down while it still fails at `location`: halving chunks
/// first, single bytes last, within a bounded number of attempts.
fn minimize(target: &Target, inflight: &Path, mut input: Vec<u8>, location: &str) -> Vec<u8> {
    let mut attempts = 0;
    let mut chunk = input.len().div_ceil(2).max(1);
    while attempts < 4000 {
        let mut at = 0;
        let mut shrank = false;
        while at < input.len() && attempts < 4000 {
            attempts += 1;
            let end = (at + chunk).min(input.len());
            let mut candidate = input[..at].to_vec();
            candidate.extend_from_slice(&input[end..]);
            if run_one(target, inflight, &candidate).err().as_deref() == Some(location) {
                input = candidate;
                shrank = true;
            } else {
                at += chunk;
            }
        }
        if chunk == 1 && !shrank {
            break;
        }
        if !shrank {
            chunk = chunk.div_ceil(2);
        }
    }
    input
}

/// Saves a failing input into the corpus as `crash-<hash>` (unless that
/// file exists); returns its path.
fn save_crasher(target: &Target, input: &[u8]) -> Option<PathBuf> {
    let path = corpus_dir(target).join(format!("crash-{:016x}", fnv1a(input)));
    if path.exists() {
        return None;
    }
    let mut file = fs::File::create(&path).ok()?;
    file.write_all(input).ok()?;
    Some(path)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// SplitMix64: small, fast, and the same sequence for the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }

    /// How many mutations to stack: usually one or two, sometimes eight.
    fn stack_depth(&mut self) -> usize {
        1 + self.next().trailing_zeros().min(7) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes that sit on edges: NUL, the ends of ASCII and of a byte, the
/// framing of lines and JSON, a UTF-8 lead byte without its tail.
const INTERESTING_BYTES: &[u8] = &[
    0x00, 0x01, 0x07, 0x08, b'\t', b'\n', 0x0b, 0x0c, b'\r', 0x1b, b' ', b'"', b'\\', b'{', b'}',
    b'[', b']', b',', b':', b'/', b'.', b'0', b'-', 0x7f, 0x80, 0x9b, 0xc0, 0xc3, 0xe2, 0xed, 0xf0,
    0xf4, 0xfe, 0xff,
];

/// Characters a terminal, a line editor or a reader's eye acts on, plus
/// JSON escapes of the same, for every text target.
const HOSTILE_TOKENS: &[&str] = &[
    "\n",
    "\r",
    "\u{b}",
    "\u{c}",
    "\u{1b}",
    "\u{1b}[201~",
    "\u{1b}]52;c;eA==\u{7}",
    "\u{7}",
    "\u{7f}",
    "\u{85}",
    "\u{9b}",
    "\u{9d}",
    "\u{2028}",
    "\u{2029}",
    "\u{200b}",
    "\u{200d}",
    "\u{202e}",
    "\u{2066}",
    "\u{feff}",
    "\u{ad}",
    "\u{e0041}",
    "\u{3164}",
    "\u{a0}",
    "\\",
    "\\n",
    "\\u0000",
    "\\u001b",
    "\\u2028",
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\\"",
];

/// Numbers at the edges of the types that read them.
const NUMBER_TOKENS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.0",
    "1e2",
    "01",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e400",
    "-1e400",
    "0.000000000000000000001",
];

/// Repeat counts for runs: around the nesting bounds and beyond.
const REPEATS: &[usize] = &[2, 3, 16, 127, 128, 129, 256, 1000];

fn mutate(input: &mut Vec<u8>, other: &[u8], target: &Target, rng: &mut Rng) {
    let len = input.len();
    match rng.below(14) {
        0 if len > 0 => {
            let at = rng.below(len);
            input[at] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let at = rng.below(len);
            input[at] = *rng.pick(INTERESTING_BYTES);
        }
        2 => {
            let at = rng.below(len + 1);
            let count = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..count).map(|_| rng.next() as u8).collect();
            input.splice(at..at, bytes);
        }
        3 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(16.min(len - start))).min(len);
            input.drain(start..end);
        }
        4 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(32.min(len - start))).min(len);
            let piece = input[start..end].to_vec();
            let at = rng.below(input.len() + 1);
            input.splice(at..at, piece);
        }
        5 | 6 if !target.tokens.is_empty() => {
            let token = rng.pick(target.tokens).as_bytes().to_vec();
            insert_or_replace(input, token, rng);
        }
        7 => {
            let token = rng.pick(HOSTILE_TOKENS).as_bytes().to_vec();
            insert_or_replace(input, token, rng);
        }
        8 => {
            let token = rng.pick(NUMBER_TOKENS).as_bytes().to_vec();
            replace_number(input, token, rng);
        }
        9 => {
            // A run repeated to a nesting or count bound.
            let unit: Vec<u8> = if len > 0 && rng.chance(2) {
                let start = rng.below(len);
                input[start..(start + 1 + rng.below(4)).min(len)].to_vec()
            } else {
                rng.pick(&["[", "{\"a\":", "\"a\",", "a{", "{", "}", "\\"])
                    .as_bytes()
                    .to_vec()
            };
            let count = *rng.pick(REPEATS);
            let run: Vec<u8> = unit
                .iter()
                .copied()
                .cycle()
                .take(unit.len() * count)
                .collect();
            let at = rng.below(len + 1);
            input.splice(at..at, run);
        }
        10 if !other.is_empty() => {
            // Splice: this input's front, the other's back.
            let cut = rng.below(len + 1);
            let from = rng.below(other.len());
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
        11 if !other.is_empty() => {
            let start = rng.below(other.len());
            let end = (start + 1 + rng.below(64)).min(other.len());
            let at = rng.below(len + 1);
            input.splice(at..at, other[start..end].iter().copied());
        }
        12 if !target.bounds.is_empty() => {
            // A length at a bound: one below, at, one above.
            let bound = *rng.pick(target.bounds);
            let wanted = match rng.below(3) {
                0 => bound.saturating_sub(1),
                1 => bound,
                _ => bound + 1,
            };
            resize_to(input, wanted, rng);
        }
        13 if len > 0 => input.truncate(rng.below(len)),
        _ => input.push(rng.next() as u8),
    }
}

fn insert_or_replace(input: &mut Vec<u8>, token: Vec<u8>, rng: &mut Rng) {
    let len = input.len();
    let at = rng.below(len + 1);
    let end = if rng.chance(2) {
        (at + rng.below(8)).min(len)
    } else {
        at
    };
    input.splice(at..end, token);
}

/// Replaces a run of digits with `number`, or inserts it.
fn replace_number(input: &mut Vec<u8>, number: Vec<u8>, rng: &mut Rng) {
    let digits: Vec<usize> = (0..input.len())
        .filter(|&i| input[i].is_ascii_digit())
        .collect();
    if digits.is_empty() {
        let at = rng.below(input.len() + 1);
        input.splice(at..at, number);
        return;
    }
    let start = *rng.pick(&digits);
    let mut end = start;
    while end < input.len() && (input[end].is_ascii_digit() || b".eE+-".contains(&input[end])) {
        end += 1;
    }
    input.splice(start..end, number);
}

/// Grows `input` to `wanted` bytes by repeating a filler somewhere inside
/// it (a long string, a long name), or cuts it there.
fn resize_to(input: &mut Vec<u8>, wanted: usize, rng: &mut Rng) {
    if input.len() >= wanted {
        input.truncate(wanted);
        return;
    }
    let filler = *rng.pick(b"aa \\\xe2\x80\x8b");
    let at = match input.iter().position(|&b| b == b'"') {
        Some(quote) if rng.chance(2) => quote + 1,
        _ => rng.below(input.len() + 1),
    };
    let missing = wanted - input.len();
    input.splice(at..at, std::iter::repeat_n(filler, missing));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_numbers() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let first: Vec<u64> = (0..4).map(|_| a.next()).collect();
        let second: Vec<u64> = (0..4).map(|_| b.next()).collect();
        assert_eq!(first, second);
    }
}
