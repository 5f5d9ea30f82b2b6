//! `docs/providers/codex.md` and the README's Codex example run as
//! printed: the setup (hooks install, compile-agent, check --adapters)
//! succeeds with `codex` on `PATH`, the adapter says its launcher declares
//! the hooks, and the declaration the doc shows is what compile-agent
//! writes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

const DING: &str = env!("CARGO_BIN_EXE_ding");
const DOC: &str = "docs/providers/codex.md";

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

/// Runs `script` with bash in `dir` (`HOME` there too), `ding` and a
/// stand-in `codex` on `PATH`.
fn run(script: &str, dir: &Path) -> std::process::Output {
    let stand_in = dir.join("bin");
    fs::create_dir_all(&stand_in).expect("bin");
    fs::write(stand_in.join("codex"), "#!/bin/sh\nexit 0\n").expect("codex");
    fs::set_permissions(stand_in.join("codex"), fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = Path::new(DING).parent().expect("bin dir");
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        stand_in.display(),
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

fn doc() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC)).expect("the doc")
}

#[test]
fn the_setup_example_runs_as_printed() {
    let scripts = blocks(&doc(), "sh");
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
    assert!(stdout.contains("codex-ding-adapter written"), "{stdout}");
    assert!(
        stdout.contains(
            "worker: adapter: codex hooks declared and trusted per invocation by the launcher"
        ),
        "{stdout}"
    );
}

#[test]
fn the_readme_example_runs_as_printed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).expect("README");
    let script = blocks(&readme, "sh")
        .into_iter()
        .find(|block| block.contains("compile-agent codex"))
        .expect("the Codex example");
    let home = tempfile::tempdir().expect("home");
    let output = run(&script, home.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("coder: adapter: codex hooks declared and trusted per invocation"),
        "{stdout}"
    );
}

#[test]
fn the_declaration_shown_is_what_compile_agent_writes() {
    let shown = blocks(&doc(), "kdl");
    assert_eq!(shown.len(), 1, "one declaration");
    let written = Command::new(DING)
        .args([
            "compile-agent",
            "codex",
            "--name",
            "worker",
            "--cwd",
            "/home/me/src/project",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("compile-agent");
    assert!(written.status.success(), "{written:?}");
    let written: String = String::from_utf8_lossy(&written.stdout)
        .lines()
        .filter(|line| !line.starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(written, shown[0]);
}
