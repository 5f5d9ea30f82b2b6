//! `ding compile-agent claude` as a user runs it: the declaration checks
//! and names the literal `$ST_HOOKS/claude-ding-adapter`; the hooks are
//! merged into the user's existing settings without touching theirs; running
//! it again changes nothing; settings that are not JSON are refused and left
//! alone; a secret is refused.

use std::fs;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const DING: &str = env!("CARGO_BIN_EXE_ding");

fn compile(dir: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(DING)
        .args([
            "compile-agent",
            "claude",
            "--name",
            "worker",
            "--cwd",
            "project",
        ])
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run ding")
}

/// Writes `worker.kdl` declaring the same harness argv every time.
fn compile_harness(dir: &std::path::Path) -> Output {
    let args = [
        "--out",
        "worker.kdl",
        "--",
        "/opt/claude",
        "--permission-mode",
        "manual",
    ];
    compile(dir, &args)
}

fn settings(dir: &std::path::Path) -> Value {
    let text =
        fs::read_to_string(dir.join("project/.claude/settings.local.json")).expect("settings");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn the_hooks_are_merged_beside_the_users_and_a_second_run_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("project/.claude")).expect("mkdir");
    let user = json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    });
    fs::write(
        dir.path().join("project/.claude/settings.local.json"),
        user.to_string(),
    )
    .expect("user settings");
    let first = compile_harness(dir.path());
    assert!(first.status.success(), "{first:?}");
    assert!(String::from_utf8_lossy(&first.stderr).contains("(merged)"));
    let merged = settings(dir.path());
    assert_eq!(merged["permissions"], user["permissions"]);
    assert_eq!(
        merged["hooks"]["Stop"][0], user["hooks"]["Stop"][0],
        "the user's hook stays first"
    );
    let ours: Vec<&str> = merged["hooks"]["Stop"][1]["hooks"]
        .as_array()
        .expect("DING's group")
        .iter()
        .filter_map(|handler| handler["command"].as_str())
        .collect();
    // The hooks name this ding by its path, guarded (tests/hooks_never_block.rs).
    assert_eq!(
        ours,
        [
            format!("command -v {DING} >/dev/null 2>&1 && exec {DING} hook claude Stop; exit 0"),
            format!(
                "command -v {DING} >/dev/null 2>&1 && exec {DING} hook claude wake --timeout 86340; exit 0"
            )
        ]
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "PreCompact",
        "StopFailure",
        "FileChanged",
    ] {
        assert!(merged["hooks"][event].is_array(), "{event}");
    }
    let declaration = fs::read_to_string(dir.path().join("worker.kdl")).expect("declaration");
    assert!(
        declaration.contains(r#"command "$ST_HOOKS/claude-ding-adapter" "--settings""#),
        "{declaration}"
    );
    assert!(declaration.contains(r#"command "/opt/claude" "--permission-mode" "manual""#));
    // The file alone: `/opt/claude` and `$ST_HOOKS` are another machine's.
    let check = Command::new(DING)
        .args(["check", "--portable", "worker.kdl"])
        .current_dir(dir.path())
        .output()
        .expect("check");
    assert!(check.status.success(), "{check:?}");
    // Again: nothing changes.
    let before = fs::read(dir.path().join("project/.claude/settings.local.json")).expect("read");
    let second = compile_harness(dir.path());
    assert!(second.status.success(), "{second:?}");
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains("(already in place)"), "{said}");
    assert!(
        said.contains("declaration: worker.kdl (already in place)"),
        "{said}"
    );
    assert_eq!(
        fs::read(dir.path().join("project/.claude/settings.local.json")).expect("read"),
        before
    );
}

#[test]
fn settings_that_are_not_json_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("project/.claude")).expect("mkdir");
    let path = dir.path().join("project/.claude/settings.local.json");
    fs::write(&path, "{\"hooks\": {,}").expect("broken settings");
    let out = compile(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("is not valid JSON; it was left as it is"),
        "{said}"
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), "{\"hooks\": {,}");
    assert!(
        out.stdout.is_empty(),
        "no declaration for a half-done setup"
    );
}

#[test]
fn a_secret_is_refused_and_plain_values_are_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = compile(dir.path(), &["--env", "ANTHROPIC_API_KEY=sk-123"]);
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("export ANTHROPIC_API_KEY where you run `ding up`"),
        "{said}"
    );
    assert!(
        !dir.path()
            .join("project/.claude/settings.local.json")
            .exists(),
        "nothing written"
    );
    let ok = compile(
        dir.path(),
        &["--env", "ANTHROPIC_BASE_URL=http://127.0.0.1:9"],
    );
    assert!(ok.status.success(), "{ok:?}");
    let declaration = String::from_utf8_lossy(&ok.stdout);
    assert!(
        declaration.contains(r#"ANTHROPIC_BASE_URL "http://127.0.0.1:9""#),
        "{declaration}"
    );
    assert!(
        declaration.contains(r#"command "claude""#),
        "the installed program: {declaration}"
    );
}
