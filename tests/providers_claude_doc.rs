//! `docs/providers/claude.md` and the README's Claude Code example run as
//! printed: the setup (hooks install, compile-agent, check --adapters)
//! succeeds, and the adapter it sets up says its hooks are in place.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

const DING: &str = env!("CARGO_BIN_EXE_ding");
const DOC: &str = "docs/providers/claude.md";

/// The doc's fenced blocks with the given info string.
fn blocks(doc: &str, info: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for line in doc.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(tag)) if tag.trim() == info => open = Some(String::new()),
            (None, Some(_)) => open = None,
            (Some(block), Some(_)) => {
                out.push(std::mem::take(block));
                open = None;
            }
            (Some(block), None) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// Runs `script` with bash in `dir` (`HOME` there too), `ding` on `PATH`.
fn run(script: &str, dir: &Path) -> std::process::Output {
    let bin = Path::new(DING).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", &path)
        .env("HOME", dir)
        .env_remove("ST_HOOKS")
        .stdin(Stdio::null())
        .output()
        .expect("run bash")
}

#[test]
fn the_readme_example_runs_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).expect("README");
    let script = blocks(&readme, "sh")
        .into_iter()
        .find(|block| block.contains("compile-agent claude"))
        .expect("the Claude Code example");
    let home = tempfile::tempdir().expect("home");
    let output = run(&script, home.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("worker: adapter: claude hooks configured in"),
        "{stdout}"
    );
}

#[test]
fn the_setup_example_runs_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = fs::read_to_string(root.join(DOC)).expect("the doc");
    let scripts = blocks(&doc, "sh");
    assert_eq!(scripts.len(), 1, "one setup example");
    let home = tempfile::tempdir().expect("home");
    let output = run(&scripts[0], home.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the example failed:\n{}\n{stdout}{}",
        scripts[0],
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("claude-ding-adapter written"), "{stdout}");
    assert!(
        stdout.contains("worker: adapter: claude hooks configured in"),
        "{stdout}"
    );
}
