//! `docs/providers/gemini.md` and the README's Gemini CLI example run as
//! printed: the setup (hooks install, compile-agent, check --adapters)
//! succeeds, and the adapter it sets up says its hooks are in place; the
//! environment example is refused and fails where the page says, as it
//! shows.

mod support;

use support::doc_blocks::{blocks, run_example};

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

/// `--env CI=false` is refused with the reason the page shows, and nothing
/// is written; `CI=false` with `GITHUB_ACTIONS=false` passes the check; a
/// `NO_COLOR` where `ding up` would run fails it, naming the variable.
#[test]
fn the_environment_example_refuses_what_stops_gemini_drawing_as_printed() {
    let doc = "docs/providers/gemini.md";
    let stdout = run_example(doc, "GITHUB_ACTIONS=false --out", &[]);
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(doc))
        .expect("doc");
    let shown = blocks(&text, "text")
        .into_iter()
        .find(|block| block.contains("--env CI=false:"))
        .expect("the refusal is shown");
    assert!(stdout.contains(shown.trim()), "{stdout}\nshown:\n{shown}");
    assert!(stdout.contains("refused (exit "), "{stdout}");
    assert!(
        stdout.contains("worker: adapter: gemini hooks configured in"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "worker: adapter check FAILED: gemini: NO_COLOR=1 in the harness's environment"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("check failed (exit 1)"), "{stdout}");
}
