//! Every requirement in `docs/vrs/01-ding/requirements.md` names the tests
//! that prove it; this checks that each named test really exists, so the
//! document cannot drift into citing tests that were renamed or deleted.

use std::fs;
use std::path::Path;

const REQUIREMENTS: &str = "docs/vrs/01-ding/requirements.md";

/// `(requirement id, "FILE::FUNCTION")` for every test citation.
fn citations(text: &str) -> Vec<(String, String)> {
    let mut current = String::from("(before any requirement)");
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            current = heading
                .split(['.', ' '])
                .next()
                .unwrap_or(heading)
                .to_string();
        }
        if let Some(rest) = line.strip_prefix("Test: ") {
            for cited in rest.split(',') {
                let cited = cited.trim().trim_matches('`');
                if !cited.is_empty() {
                    out.push((current.clone(), cited.to_string()));
                }
            }
        }
    }
    out
}

#[test]
fn every_cited_test_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join(REQUIREMENTS)).expect("requirements doc");
    let mut missing = Vec::new();
    for (requirement, cited) in citations(&text) {
        let Some((file, function)) = cited.rsplit_once("::") else {
            missing.push(format!("{requirement}: `{cited}` is not FILE::FUNCTION"));
            continue;
        };
        let source = fs::read_to_string(root.join(file)).unwrap_or_default();
        let defined = source.contains(&format!("fn {function}("))
            || source.contains(&format!("fn {function}<"));
        if !defined {
            missing.push(format!("{requirement}: no `fn {function}` in {file}"));
        }
    }
    assert!(
        missing.is_empty(),
        "requirements cite missing tests:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_cited_fixture_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join(REQUIREMENTS)).expect("requirements doc");
    let missing: Vec<String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("Fixtures: "))
        .flat_map(|rest| rest.split(','))
        .map(|cited| cited.trim().trim_matches('`').to_string())
        .filter(|cited| !root.join(cited).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "requirements cite missing fixtures: {missing:?}"
    );
}

#[test]
fn every_requirement_cites_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = fs::read_to_string(root.join(REQUIREMENTS)).expect("requirements doc");
    let mut uncited = Vec::new();
    let mut current: Option<String> = None;
    let mut cited = false;
    for line in text.lines().chain(std::iter::once("### END")) {
        if let Some(heading) = line.strip_prefix("### ") {
            if let Some(previous) = current.take()
                && !cited
            {
                uncited.push(previous);
            }
            current = Some(heading.to_string());
            cited = false;
        } else if line.starts_with("Test: ") {
            cited = true;
        }
    }
    uncited.retain(|heading| heading != "END");
    assert!(
        uncited.is_empty(),
        "requirements without a test: {uncited:?}"
    );
}
