//! `ding compile-agent codex` as a user runs it: the declaration checks,
//! runs DING's launcher as the harness command and names the literal
//! `$ST_HOOKS/codex-ding-adapter` as its adapter; no file of the user's is
//! written (the hooks are declared per invocation); running it again
//! changes nothing; a secret and a settings file are refused.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use support::sidecar_agent::{DING, compile_agent};

fn compile(dir: &Path, extra: &[&str]) -> Output {
    compile_agent(dir, "codex", extra)
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path.to_string_lossy().into_owned());
        }
    }
    out
}

#[test]
fn the_declaration_runs_the_launcher_checks_and_a_second_run_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir(dir.path().join("project")).expect("project");
    let args = ["--out", "worker.kdl", "--", "/opt/codex", "--no-alt-screen"];
    let first = compile(dir.path(), &args);
    assert!(first.status.success(), "{first:?}");
    let declaration = fs::read_to_string(dir.path().join("worker.kdl")).expect("declaration");
    assert!(
        declaration.contains(
            r#"command "$ST_HOOKS/codex-ding-adapter" "launch" "--" "/opt/codex" "--no-alt-screen""#
        ),
        "{declaration}"
    );
    assert!(
        declaration.contains(r#"adapter {"#)
            && declaration.contains(r#"command "$ST_HOOKS/codex-ding-adapter""#)
            && declaration.contains(r#"delivery "turn-boundary+fresh-idle""#),
        "{declaration}"
    );
    // ST_HOOKS set, as for `ding up`: the file checks whatever machine's
    // programs it names.
    let check = Command::new(DING)
        .args(["check", "worker.kdl"])
        .current_dir(dir.path())
        .env("ST_HOOKS", dir.path())
        .output()
        .expect("ding check");
    assert!(check.status.success(), "{check:?}");
    // Nothing but the declaration was written: no settings, no hooks file,
    // nothing in the project or in HOME.
    let written = files_under(dir.path());
    assert_eq!(written.len(), 1, "{written:?}");
    let second = compile(dir.path(), &args);
    assert!(second.status.success(), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already in place"),
        "{second:?}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("worker.kdl")).expect("again"),
        declaration
    );
}

#[test]
fn the_terminal_idle_path_and_an_odd_ding_reach_both_the_launcher_and_the_adapter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = compile(
        dir.path(),
        &["--idle-path", "terminal", "--ding", "/opt/my ding/ding"],
    );
    assert!(out.status.success(), "{out:?}");
    let declaration = String::from_utf8_lossy(&out.stdout);
    let options = r#""--ding" "/opt/my ding/ding" "--idle-path" "terminal""#;
    assert!(
        declaration.contains(&format!(
            r#"command "$ST_HOOKS/codex-ding-adapter" "launch" {options} "--" "codex""#
        )),
        "{declaration}"
    );
    assert!(
        declaration.contains(&format!(
            r#"command "$ST_HOOKS/codex-ding-adapter" {options}"#
        )),
        "{declaration}"
    );
}

#[test]
fn a_secret_and_a_settings_file_are_refused_and_plain_values_are_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = compile(dir.path(), &["--env", "OPENAI_API_KEY=sk-test"]);
    assert!(!secret.status.success());
    assert!(
        String::from_utf8_lossy(&secret.stderr).contains("looks like a secret"),
        "{secret:?}"
    );
    let settings = compile(dir.path(), &["--settings", "x.json"]);
    assert!(!settings.status.success());
    assert!(
        String::from_utf8_lossy(&settings.stderr).contains("codex takes no --settings"),
        "{settings:?}"
    );
    let plain = compile(dir.path(), &["--env", "CODEX_HOME=/srv/codex-home"]);
    assert!(plain.status.success(), "{plain:?}");
    assert!(
        String::from_utf8_lossy(&plain.stdout).contains(r#"CODEX_HOME "/srv/codex-home""#),
        "{}",
        String::from_utf8_lossy(&plain.stdout)
    );
    assert!(
        files_under(dir.path()).is_empty(),
        "nothing written without --out"
    );
}
