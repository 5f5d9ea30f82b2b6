//! `docs/providers/opencode.md` and the README's OpenCode example run as
//! printed: the setup (hooks install,
//! compile-agent, check --adapters) succeeds, and the adapter it sets up
//! says OpenCode's configuration loads DING's two plugins.

mod support;

use support::doc_blocks::run_example;

/// `ding check --adapters` wants the harness program: a stand-in.
const OPENCODE: [(&str, &str); 1] = [("opencode", "#!/bin/sh\nexit 0\n")];

#[test]
fn the_readme_example_runs_as_printed() {
    let stdout = run_example("README.md", "compile-agent opencode", &OPENCODE);
    assert!(
        stdout.contains("scout: adapter: opencode plugins configured"),
        "{stdout}"
    );
}

#[test]
fn the_setup_example_runs_as_printed() {
    // `ding check --adapters` wants the harness program: a stand-in.
    let stand_ins = [("opencode", "#!/bin/sh\nexit 0\n")];
    let stdout = run_example(
        "docs/providers/opencode.md",
        "compile-agent opencode",
        &stand_ins,
    );
    assert!(stdout.contains("opencode-ding-adapter written"), "{stdout}");
    assert!(
        stdout.contains("worker: adapter: opencode plugins configured"),
        "{stdout}"
    );
}
