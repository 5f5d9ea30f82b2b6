//! `docs/providers/gemini.md` and the README's Gemini CLI example run as
//! printed: the setup (hooks install, compile-agent, check --adapters)
//! succeeds, and the adapter it sets up says its hooks are in place.

mod support;

use support::doc_blocks::run_example;

#[test]
fn the_readme_example_runs_as_printed() {
    let stdout = run_example("README.md", "compile-agent gemini", &[]);
    assert!(
        stdout.contains("helper: adapter: gemini hooks configured in"),
        "{stdout}"
    );
}

#[test]
fn the_setup_example_runs_as_printed() {
    let stdout = run_example("docs/providers/gemini.md", "compile-agent gemini", &[]);
    assert!(stdout.contains("gemini-ding-adapter written"), "{stdout}");
    assert!(
        stdout.contains("worker: adapter: gemini hooks configured in"),
        "{stdout}"
    );
}
