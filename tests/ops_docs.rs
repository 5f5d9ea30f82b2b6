//! The operator's documentation says what the code does (OPS): the hold
//! reasons table of `docs/operating.md` has one row per hold code with the
//! advice `ding status` prints, its exit code table is the CLI's, and the
//! README's install, quickstart and "using it for real" commands work as
//! pasted.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use ding::cli::exit::{Failure, SUCCESS};
use ding::core::hold::ADVICE;
use support::sidecar_agent::*;

fn doc(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect(path)
}

/// The cells of every table row of `text` whose first cell satisfies
/// `first`.
fn rows(text: &str, first: impl Fn(&str) -> bool) -> Vec<Vec<String>> {
    text.lines()
        .filter(|line| line.starts_with("| ") && line.ends_with(" |"))
        .map(|line| {
            line[2..line.len() - 2]
                .split(" | ")
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|cells| first(&cells[0]))
        .collect()
}

#[test]
fn the_hold_table_has_one_row_per_hold_code_with_the_advice_status_prints() {
    let operating = doc("docs/operating.md");
    let table = rows(&operating, |cell| {
        cell.starts_with('`') && ADVICE.iter().any(|a| cell == format!("`{}`", a.code))
    });
    let expected: Vec<Vec<String>> = ADVICE
        .iter()
        .map(|a| {
            vec![
                format!("`{}`", a.code),
                a.meaning.into(),
                a.what_to_do.into(),
            ]
        })
        .collect();
    assert_eq!(table, expected);
}

#[test]
fn the_exit_code_table_is_the_clis() {
    let operating = doc("docs/operating.md");
    let table = rows(&operating, |cell| {
        cell.len() == 1 && cell.as_bytes()[0].is_ascii_digit()
    });
    let mut expected = vec![vec!["0".to_string(), SUCCESS.to_string()]];
    expected.extend(
        Failure::ALL
            .iter()
            .map(|f| vec![f.code().to_string(), f.meaning().to_string()]),
    );
    assert_eq!(table, expected);
}

/// The code blocks of `lang` in the section of `text` headed `heading`.
fn blocks(text: &str, heading: &str, lang: &str) -> Vec<String> {
    let start = text.find(heading).unwrap_or_else(|| panic!("no {heading}"));
    let section = &text[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let fence = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find(&fence) {
        let body = &rest[open + fence.len()..];
        let close = body.find("```").expect("closed block");
        found.push(body[..close].to_string());
        rest = &body[close..];
    }
    found
}

/// Each command of a `sh` block, comments dropped.
fn commands(block: &str) -> Vec<String> {
    block
        .lines()
        .map(|line| match line.find("   #") {
            Some(comment) => line[..comment].trim_end().to_string(),
            None => line.trim_end().to_string(),
        })
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn the_readme_commands_work_as_pasted() {
    let readme = doc("README.md");
    // Install and quickstart: the make targets exist and are what the text
    // says; building a release or running the whole suite inside the
    // suite is not practical, so they are checked with `make -n`.
    let quickstart = commands(&blocks(&readme, "## Quickstart", "sh")[0]);
    assert_eq!(quickstart[0], "make install");
    let install = Command::new("make")
        .args(["-n", "install"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("make -n install");
    assert!(
        String::from_utf8_lossy(&install.stdout)
            .contains("cargo install --locked --path . --bin ding"),
        "{install:?}"
    );
    for target in ["demo", "test", "eval", "offsets"] {
        let dry = Command::new("make")
            .args(["-n", target])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("make -n");
        assert!(dry.status.success(), "make {target}: {dry:?}");
    }

    // Using it for real: the declaration and every command, as pasted, on
    // the `ding` this build installed on PATH.
    let agent = Agent::new("worker", &blocks(&readme, "## Using it for real", "kdl")[0]);
    fs::rename(agent.declaration(), agent.path("agents.kdl")).expect("agents.kdl");
    let version = quickstart.iter().find(|c| c.starts_with("ding --version"));
    let real = commands(&blocks(&readme, "## Using it for real", "sh")[0]);
    for line in version.into_iter().chain(&real) {
        if line.starts_with("ding attach") {
            // Interactive: it needs a terminal (tested in pty_lifecycle).
            continue;
        }
        let out = Command::new("sh")
            .args(["-c", line])
            .current_dir(agent.dir.path())
            .envs(agent.env_vars())
            .env_remove("ST_HOOKS")
            .output()
            .expect("sh");
        assert!(
            out.status.success(),
            "`{line}` failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if line.starts_with("ding up") {
            agent.wait_adapter_up();
        }
    }
}
