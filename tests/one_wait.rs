//! The crate has one sleep-poll loop, `src/wait.rs`: a wait for something
//! to happen looks again through `wait::wait_for` or `wait::wait_until`,
//! with a named interval, and never hand-writes `loop { ...; sleep(..) }`.
//! The only other sleeps are pacing, listed here with their reasons: they
//! wait for a moment, not for a fact.
//!
//! Every source file counts, its tests included.

use std::fs;
use std::path::{Path, PathBuf};

/// `(file, the sleeping line as written, why it is not a wait)`.
const ALLOWED: [(&str, &str, &str); 5] = [
    (
        "src/wait.rs",
        "thread::sleep(every.min(left));",
        "the one wait helper",
    ),
    (
        "src/cli/logs.rs",
        "std::thread::sleep(FOLLOW_EVERY);",
        "`ding logs --follow` prints what was appended, every FOLLOW_EVERY, \
         until it is ended: pacing, with nothing to wait for and no deadline",
    ),
    (
        "src/eval/typist.rs",
        "thread::sleep(left);",
        "`sleep_until`: the workload's own timing, a person's pace",
    ),
    (
        "src/eval/model_server.rs",
        "thread::sleep(event.after);",
        "a scripted model's pause between two streamed events",
    ),
    (
        "src/line_server.rs",
        "std::thread::sleep(STALLED_AFTER);",
        "a unit test of what a reader that takes nothing for STALLED_AFTER \
         makes room for: that much time must pass, with no fact to wait for",
    ),
];

fn rust_files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files_under(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

fn is_word(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether `line` sleeps: the word `sleep` (or `sleep_ms`) called, or
/// named through a path (`thread::sleep`), however it was imported.
fn sleeps(line: &str) -> bool {
    let bytes = line.as_bytes();
    for word in ["sleep", "sleep_ms"] {
        for (at, _) in line.match_indices(word) {
            let end = at + word.len();
            let alone = (at == 0 || !is_word(bytes[at - 1]))
                && bytes.get(end).is_none_or(|&next| !is_word(next));
            let called = line[end..].trim_start().starts_with('(');
            let named = line[..at].ends_with("::");
            if alone && (called || named) {
                return true;
            }
        }
    }
    false
}

/// Every sleeping line of `text` outside comments, as `(number, line)`.
fn sleeping_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .map(|(number, line)| (number + 1, line.trim()))
        .filter(|(_, line)| !line.starts_with("//") && sleeps(line))
        .map(|(number, line)| (number, line.to_string()))
        .collect()
}

#[test]
fn nothing_sleeps_but_the_wait_helper_and_named_pacing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files_under(&root.join("src"), &mut files);
    assert!(files.len() > 100, "the sources were found");
    let mut offenders = Vec::new();
    let mut seen = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&path).unwrap();
        for (number, line) in sleeping_lines(&text) {
            let allowed = ALLOWED
                .iter()
                .position(|&(file, site, _)| file == relative && site == line);
            match allowed {
                Some(entry) if !seen.contains(&entry) => seen.push(entry),
                _ => offenders.push(format!("{relative}:{number}: {line}")),
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "a sleep outside src/wait.rs: wait with crate::wait::wait_for or \
         wait_until (or, for pacing that waits for no fact, list it in \
         ALLOWED with its reason):\n{}",
        offenders.join("\n")
    );
    let stale: Vec<String> = ALLOWED
        .iter()
        .enumerate()
        .filter(|(entry, _)| !seen.contains(entry))
        .map(|(_, (file, site, _))| format!("{file}: {site}"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed sleeps no longer found (drop them from ALLOWED):\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_check_sees_a_sleep_however_it_is_spelled() {
    let text = "\
fn wait() {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        thread::sleep (EVERY);
        sleep(EVERY);
        nix::unistd::sleep(1);
        pauses.for_each(thread::sleep);
        // thread::sleep(in a comment);
        sleep_until(moment);
        Command::new(\"sleep\").arg(\"600\");
        fn the_command_does_not_start_with_sleep() {}
        thread::sleep_ms(20);
    }
}
";
    let lines: Vec<usize> = sleeping_lines(text)
        .into_iter()
        .map(|(number, _)| number)
        .collect();
    assert_eq!(lines, [3, 4, 5, 6, 7, 12]);
}
