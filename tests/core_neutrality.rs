//! The core is harness-neutral: nothing under `src/core/` or `fixtures/core/`
//! names a provider or a renderer glyph, and no source outside the
//! provider rooms (`src/providers/`) and the evaluation's per-harness
//! folders (`src/eval/harnesses/`) does either.

use std::fs;
use std::path::{Path, PathBuf};

const WORDS: [&str; 8] = [
    "codex",
    "claude",
    "gemini",
    "opencode",
    "openai",
    "anthropic",
    "google",
    "gpt",
];
const GLYPHS: [char; 5] = ['\u{203a}', '\u{276f}', '\u{23f5}', '\u{273b}', '\u{23bf}'];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every forbidden word or glyph in `text`, as `line:word`.
fn provider_vocabulary(text: &str) -> Vec<String> {
    let mut hits = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for word in WORDS {
            if lower.contains(word) {
                hits.push(format!("{}:{word}", number + 1));
            }
        }
        for glyph in GLYPHS {
            if line.contains(glyph) {
                hits.push(format!("{}:{glyph}", number + 1));
            }
        }
    }
    hits
}

/// Every forbidden word or glyph in `files`, as `path:line:word`.
fn offenders(root: &Path, files: Vec<PathBuf>) -> Vec<String> {
    let mut offenders = Vec::new();
    for path in files {
        let text = String::from_utf8_lossy(&fs::read(&path).unwrap()).into_owned();
        for hit in provider_vocabulary(&text) {
            offenders.push(format!(
                "{}:{hit}",
                path.strip_prefix(root).unwrap().display()
            ));
        }
    }
    offenders
}

#[test]
fn core_sources_and_fixtures_name_no_provider_or_glyph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("src/core"), &mut files);
    files_under(&root.join("fixtures/core"), &mut files);
    assert!(files.len() > 10, "the walk found the core");
    let offenders = offenders(root, files);
    assert!(
        offenders.is_empty(),
        "provider vocabulary in the neutral core: {offenders:?}"
    );
}

/// The rest of the crate is neutral too: only the provider rooms
/// (`src/providers/`), the evaluation's per-harness folders
/// (`src/eval/harnesses/`) and `fixtures/providers/` may name a provider
/// (the adapter kit in `src/adapter/` and the rest of the evaluation reach
/// them through their registries, by names they never spell), and the
/// normative spec names none.
#[test]
fn sources_outside_the_provider_rooms_name_no_provider_or_glyph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("src"), &mut files);
    files_under(&root.join("fixtures"), &mut files);
    files.push(root.join("docs/vrs/01-ding/spec.md"));
    // The `provider-hooks` fuzz corpus is a provider test's data: real
    // providers' hook payloads, each named by its provider and event.
    files.retain(|path| {
        !path.starts_with(root.join("src/providers"))
            && !path.starts_with(root.join("src/eval/harnesses"))
            && !path.starts_with(root.join("fixtures/providers"))
            && !path.starts_with(root.join("fixtures/fuzz/provider-hooks"))
    });
    assert!(
        files
            .iter()
            .any(|path| path.starts_with(root.join("src/adapter"))),
        "the walk found the adapter kit"
    );
    assert!(
        files
            .iter()
            .any(|path| path.starts_with(root.join("src/eval"))),
        "the walk found src/eval"
    );
    let offenders = offenders(root, files);
    assert!(
        offenders.is_empty(),
        "provider vocabulary outside the provider rooms and the evaluation's per-harness folders: {offenders:?}"
    );
}

#[test]
fn the_vocabulary_check_catches_each_word_and_glyph() {
    for word in WORDS {
        assert_eq!(
            provider_vocabulary(&format!("x {} y", word.to_uppercase())).len(),
            1,
            "{word}"
        );
    }
    for glyph in GLYPHS {
        assert_eq!(
            provider_vocabulary(&format!("prompt {glyph} ")).len(),
            1,
            "{glyph}"
        );
    }
    assert!(provider_vocabulary("a generic adapter").is_empty());
}

/// The engine is sans-IO: no file, socket, process, thread or clock use in
/// `src/core/`. Time is an input.
#[test]
fn core_performs_no_io_and_reads_no_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("src/core"), &mut files);
    let forbidden = [
        "std::fs",
        "std::net",
        "std::process",
        "std::thread",
        "std::io",
        "std::env",
        "Instant::now",
        "SystemTime",
        "mio::",
        "nix::",
        "std::os",
    ];
    let mut offenders = Vec::new();
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        for needle in forbidden {
            if text.contains(needle) {
                offenders.push(format!(
                    "{}: {needle}",
                    path.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "I/O or clock use in the sans-IO core: {offenders:?}"
    );
}
