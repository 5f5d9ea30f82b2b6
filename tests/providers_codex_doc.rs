//! `docs/providers/codex.md` and the README's Codex example run as
//! printed: the setup (hooks install, compile-agent, check --adapters)
//! succeeds with `codex` on `PATH`, the adapter says its launcher declares
//! the hooks, and the declaration the doc shows is what compile-agent
//! writes.

mod support;

use std::fs;
use std::path::Path;

use support::doc_blocks::{blocks, run_example};
use support::sidecar_agent::ding_in;

const DOC: &str = "docs/providers/codex.md";

/// `ding check --adapters` wants a `codex` to run.
const STAND_IN: (&str, &str) = ("codex", "#!/bin/sh\nexit 0\n");

#[test]
fn the_setup_example_runs_as_printed() {
    let stdout = run_example(DOC, "compile-agent codex", &[STAND_IN]);
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
    let stdout = run_example("README.md", "compile-agent codex", &[STAND_IN]);
    assert!(
        stdout.contains("coder: adapter: codex hooks declared and trusted per invocation"),
        "{stdout}"
    );
}

#[test]
fn the_declaration_shown_is_what_compile_agent_writes() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(DOC)).expect("doc");
    let shown = blocks(&doc, "kdl");
    assert_eq!(shown.len(), 1, "one declaration");
    let dir = tempfile::tempdir().expect("dir");
    let written = ding_in(
        dir.path(),
        &[
            "compile-agent",
            "codex",
            "--name",
            "worker",
            "--cwd",
            "/home/me/src/project",
        ],
    );
    assert!(written.status.success(), "{written:?}");
    let written: String = String::from_utf8_lossy(&written.stdout)
        .lines()
        .filter(|line| !line.starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(written, shown[0]);
}
