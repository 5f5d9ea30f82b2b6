//! The adapter room and the providers decide without reading a clock, hiding
//! state in a `Cell` or sleeping: time is an input, state is in plain view.
//! Only the process shells (the kit's loop, the `ding hook` relay, the Codex
//! launcher, and the clock they share) touch the clock, and they move bytes.
//!
//! A source file's tests (`#[cfg(test)]` and below) may use a clock to make
//! up moments; the code above them may not.

use std::fs;
use std::path::{Path, PathBuf};

/// What a decision must never do. `crate::wait` sleeps between its looks.
const FORBIDDEN: [&str; 8] = [
    "Instant::now",
    "SystemTime::now",
    ".elapsed()",
    "Cell<",
    "Cell::new",
    "thread::sleep",
    "recv_timeout",
    "crate::wait",
];

/// The process shells, which move bytes and read the clock to do it (the
/// Codex launcher's: its setup before the loop, the loop, its log).
const SHELLS: [&str; 7] = [
    "src/adapter/clock.rs",
    "src/adapter/kit.rs",
    "src/adapter/relay.rs",
    "src/providers/codex/launch/mod.rs",
    "src/providers/codex/launch/app_server.rs",
    "src/providers/codex/launch/log.rs",
    "src/providers/codex/launch/shell.rs",
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

/// Every use of one of `forbidden` in `text` above its tests, as
/// `line:what`.
fn uses(text: &str, forbidden: &[&str]) -> Vec<String> {
    let mut hits = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        for what in forbidden {
            if line.contains(what) {
                hits.push(format!("{}:{what}", number + 1));
            }
        }
    }
    hits
}

fn clock_and_cells(text: &str) -> Vec<String> {
    uses(text, &FORBIDDEN)
}

#[test]
fn no_decision_in_the_adapter_room_or_a_provider_reads_a_clock_or_hides_state() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files_under(&root.join("src/adapter"), &mut files);
    rust_files_under(&root.join("src/providers"), &mut files);
    assert!(files.len() > 20, "the rooms were found");
    let mut offenders = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if SHELLS.contains(&relative.as_str()) {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for hit in clock_and_cells(&text) {
            offenders.push(format!("{relative}:{hit}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "clock reads, cells or sleeps outside the process shells:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_check_sees_what_it_forbids() {
    let decision = "fn decide() {\n    let now = Instant::now();\n    let c = Cell::new(1);\n}\n#[cfg(test)]\nmod tests { fn t() { Instant::now(); } }\n";
    assert_eq!(clock_and_cells(decision), ["2:Instant::now", "3:Cell::new"]);
}

/// What a provider's decision must never do either: read or write a file.
/// A harness's settings reach a provider as [`ding::adapter::SettingsRead`],
/// read by the shell.
const FILE_IO: [&str; 8] = [
    "std::fs",
    "fs::read",
    "fs::write",
    "File::open",
    "File::create",
    "read_file(",
    "read_regular(",
    "read_to_string(",
];

/// The files that decide: the machine, and each provider's reading of its
/// screens and hooks.
const DECISIONS: [&str; 5] = [
    "adapter.rs",
    "hooks.rs",
    "screen.rs",
    "activity.rs",
    "timing.rs",
];

fn file_io(text: &str) -> Vec<String> {
    uses(text, &FILE_IO)
}

#[test]
fn no_decision_of_the_machine_or_a_provider_reads_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files_under(&root.join("src/adapter/machine"), &mut files);
    let mut providers = Vec::new();
    rust_files_under(&root.join("src/providers"), &mut providers);
    files.extend(providers.into_iter().filter(|path| {
        path.file_name()
            .is_some_and(|name| DECISIONS.iter().any(|decision| name == *decision))
    }));
    assert!(files.len() > 10, "the decisions were found: {files:?}");
    let offenders: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            file_io(&fs::read_to_string(path).unwrap())
                .into_iter()
                .map(move |hit| format!("{relative}:{hit}"))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "file reads in a decision (the shell reads, the provider is handed what it read):\n{}",
        offenders.join("\n")
    );
    assert_eq!(
        file_io("fn check() {\n    let s = read_file(path);\n}\n"),
        ["2:read_file("]
    );
}
