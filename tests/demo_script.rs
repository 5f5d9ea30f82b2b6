//! `make demo` itself, run on this test build (`DING_BIN_DIR`), so the
//! README's first command stays true at every commit: it succeeds, nothing
//! it waits for times out, each policy shows the behaviour the demo exists to
//! show, and no process it started outlives it.

use std::fs;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ding");

/// Processes whose command line mentions `dir`.
fn processes_mentioning(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").expect("read /proc").flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let Ok(raw) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(&needle) {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn make_demo_shows_both_policies_and_cleans_up() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let bin_dir = Path::new(BIN).parent().expect("binary directory");
    let output = Command::new("bash")
        .arg(root.join("scripts/demo.sh"))
        .env("DING_BIN_DIR", bin_dir)
        .env("TMPDIR", tmp.path())
        .output()
        .expect("run the demo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "demo failed:\n{stdout}\n{stderr}");
    assert!(
        !stdout.contains("gave up"),
        "a demo step timed out:\n{stdout}"
    );

    // The closing summary: what reached each agent, aggressive then careful.
    let (aggressive, careful) = stdout
        .split_once("== what reached each agent")
        .and_then(|(_, summary)| summary.split_once("\ncareful:\n"))
        .unwrap_or_else(|| panic!("no per-agent summary:\n{stdout}"));
    // Aggressive: the notice is glued onto the half-typed draft, and the
    // Return after the next paste answers the open menu.
    assert!(
        aggressive.contains("submitted (pasted): refactor the par[ding]"),
        "{stdout}"
    );
    assert!(
        aggressive.contains("menu answered YES by the Return after a paste"),
        "{stdout}"
    );
    // Careful: the human's draft goes through as typed, the human answers
    // the menu, and only then does one notice naming both messages arrive.
    let typed = careful
        .find("submitted (typed): refactor the parser")
        .unwrap_or_else(|| panic!("{stdout}"));
    let answered = careful
        .find("menu answered NO")
        .unwrap_or_else(|| panic!("{stdout}"));
    let delivered = careful
        .find("submitted (pasted): [ding] 2 unread inbox messages")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(typed < answered && answered < delivered, "{stdout}");
    assert!(!careful.contains("by the Return after a paste"), "{stdout}");

    let left = processes_mentioning(tmp.path());
    assert!(left.is_empty(), "the demo left processes behind: {left:#?}");
}
