//! Table tests over `fixtures/decl/`: every invalid declaration reports
//! exactly the diagnostics in its `.expected` file (`LINE:COL: error: ...`
//! plus hint lines), and every valid one checks without an error, with the
//! warnings in its `.expected` file if it has one.
//!
//! Set `DING_BLESS=1` to rewrite the `.expected` files from the current
//! output; review the diff before committing it.

use std::fs;
use std::path::{Path, PathBuf};

use ding::decl::{self, Checked};

/// A stand-in declaration directory: fixtures must not depend on where the
/// repository is checked out.
const BASE_DIR: &str = "/srv/agents";

/// The declarations of `fixtures/decl/KIND/`; valid ones also include the
/// seed example, which names a provider's adapter and so lives in that
/// provider's fixture room.
fn fixtures(kind: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("fixtures/decl").join(kind)];
    if kind == "valid" {
        dirs.push(root.join("fixtures/providers/codex/declarations"));
    }
    let mut files = Vec::new();
    for dir in dirs {
        let mut found: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()))
            .map(|entry| entry.expect("directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "kdl"))
            .collect();
        assert!(!found.is_empty(), "no fixtures in {}", dir.display());
        found.sort();
        files.extend(found);
    }
    files
}

fn check(path: &Path) -> Checked {
    let bytes = fs::read(path).expect("fixture is readable");
    let name = path.file_name().expect("file name").to_string_lossy();
    decl::check_bytes(&name, &bytes, Path::new(BASE_DIR))
}

/// Compares against `<fixture>.expected`, or writes it when blessing.
/// Returns a failure description, if any.
fn compare_expected(path: &Path, actual: &str, required: bool) -> Option<String> {
    let expected_path = path.with_extension("expected");
    if std::env::var_os("DING_BLESS").is_some() {
        if actual.is_empty() && !required {
            let _ = fs::remove_file(&expected_path);
        } else {
            fs::write(&expected_path, actual).expect("write .expected");
        }
        return None;
    }
    let expected = match fs::read_to_string(&expected_path) {
        Ok(expected) => expected,
        Err(_) if !required => String::new(),
        Err(_) => {
            return Some(format!(
                "{}: missing {}",
                path.display(),
                expected_path.display()
            ));
        }
    };
    (expected != actual).then(|| {
        format!(
            "{}:\n--- expected\n{expected}--- actual\n{actual}",
            path.display()
        )
    })
}

#[test]
fn invalid_declarations_report_expected_diagnostics() {
    let mut failures = Vec::new();
    for path in fixtures("invalid") {
        let checked = check(&path);
        if !checked.has_errors() {
            failures.push(format!("{}: expected errors, found none", path.display()));
        }
        if !checked.agents.is_empty() {
            failures.push(format!(
                "{}: an invalid file yielded agents",
                path.display()
            ));
        }
        failures.extend(compare_expected(&path, &checked.render_positioned(), true));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_declarations_check_without_errors() {
    let mut failures = Vec::new();
    for path in fixtures("valid") {
        let checked = check(&path);
        if checked.has_errors() || checked.agents.is_empty() {
            failures.push(format!(
                "{}: expected agents and no errors:\n{}",
                path.display(),
                checked.render_positioned()
            ));
            continue;
        }
        failures.extend(compare_expected(&path, &checked.render_positioned(), false));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_invalid_fixture_has_an_expected_file_and_vice_versa() {
    for kind in ["valid", "invalid"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/decl")
            .join(kind);
        for entry in fs::read_dir(&dir).expect("fixture dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|ext| ext == "expected") {
                assert!(
                    path.with_extension("kdl").exists(),
                    "{} has no .kdl beside it",
                    path.display()
                );
            }
        }
    }
    for path in fixtures("invalid") {
        assert!(
            path.with_extension("expected").exists(),
            "{} has no .expected",
            path.display()
        );
    }
}
