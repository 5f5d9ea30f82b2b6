//! `ding check` end to end, on the real binary: exit codes, the summary
//! line, `--fingerprint`, and compiler-style diagnostics on stderr.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn ding(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ding"))
        .args(args)
        .current_dir(dir)
        .env_remove("ST_HOOKS")
        .output()
        .expect("run ding")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const TWO_AGENTS: &str = r#"
agent "worker" {
  command "harness"
  ding {
    delivery "turn-boundary+fresh-idle"
    adapter { command "$ST_HOOKS/generic-adapter" "--strict"; }
  }
}
agent "reviewer" { command "review-bot"; }
"#;

#[test]
fn check_prints_one_summary_line_per_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("fleet.kdl"), TWO_AGENTS).expect("write");
    let out = ding(dir.path(), &["check", "fleet.kdl"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with(
            "worker: delivery=turn-boundary+fresh-idle adapter=[\"$ST_HOOKS/generic-adapter\",\"--strict\"] fingerprint=sha256:"
        ),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("reviewer: delivery=aggressive adapter=none fingerprint=sha256:"),
        "{stdout}"
    );
}

#[test]
fn check_fingerprint_prints_only_the_fingerprints() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("fleet.kdl"), TWO_AGENTS).expect("write");
    let summary = text(&ding(dir.path(), &["check", "fleet.kdl"]).stdout);
    let out = ding(dir.path(), &["check", "--fingerprint", "fleet.kdl"]);
    assert!(out.status.success());
    let fingerprints = text(&out.stdout);
    let expected: Vec<&str> = summary
        .lines()
        .map(|line| line.rsplit_once("fingerprint=").expect("field").1)
        .collect();
    assert_eq!(fingerprints.lines().collect::<Vec<_>>(), expected);
    for line in fingerprints.lines() {
        assert_eq!(line.len(), "sha256:".len() + 64, "{line}");
        assert!(line.starts_with("sha256:"));
    }
    let one = ding(
        dir.path(),
        &["check", "--fingerprint", "--agent", "reviewer", "fleet.kdl"],
    );
    assert_eq!(text(&one.stdout), format!("{}\n", expected[1]));
    let none = ding(dir.path(), &["check", "--agent", "nobody", "fleet.kdl"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no agent `nobody`"));
}

#[test]
fn check_accepts_the_seed_example_verbatim() {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/providers/codex/declarations/seed.kdl");
    let dir = tempfile::tempdir().expect("tempdir");
    fs::copy(&seed, dir.path().join("AGENT.kdl")).expect("copy");
    let out = ding(dir.path(), &["check", "AGENT.kdl"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("worker: delivery=turn-boundary+fresh-idle adapter=[\"$ST_HOOKS/")
    );
    // Only the missing-command warning, which does not fail the check.
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("AGENT.kdl:1:1: warning: agent `worker` has no `command`"),
        "{stderr}"
    );
    assert!(!stderr.contains("error:"), "{stderr}");
}

#[test]
fn check_exits_nonzero_with_every_diagnostic_on_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(
        dir.path().join("bad.kdl"),
        "agent \"w\" {\n  command \"h\"\n  ding {\n    delivry \"turn-boundary+fresh-idle\"\n    lease-cap 5\n  }\n}\nagent \"w\" {}\n",
    )
    .expect("write");
    let out = ding(dir.path(), &["check", "bad.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    for expected in [
        "bad.kdl:4:5: error: unknown node `delivry` in `ding`\n  hint: did you mean `delivery`?\n",
        "bad.kdl:5:15: error: `lease-cap` expects a duration string, found an integer\n",
        "bad.kdl:8:7: error: duplicate agent `w`\n",
        "ding check: bad.kdl: 3 error(s), 0 warning(s)\n",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}

#[test]
fn check_explains_kdl_v1_syntax() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(
        dir.path().join("v1.kdl"),
        "agent \"w\" {\n  command r\"raw\" true\n}\n",
    )
    .expect("write");
    let out = ding(dir.path(), &["check", "v1.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "v1.kdl:2:11: error: `r\"...\"` raw strings are KDL v1 syntax; declarations are KDL v2"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("v1.kdl:2:18: error: bare `true` is KDL v1 syntax"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: write `#true`"), "{stderr}");
}

#[test]
fn check_refuses_oversized_and_non_utf8_files_without_crashing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut huge = "agent \"w\" { command \"h\"; }\n".to_string();
    huge.push_str(&format!(
        "// {}\n",
        "x".repeat(ding::decl::MAX_DECLARATION_BYTES)
    ));
    fs::write(dir.path().join("huge.kdl"), huge).expect("write");
    let out = ding(dir.path(), &["check", "huge.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("huge.kdl:1:1: error: declaration is larger than the limit of 65536 bytes")
    );

    fs::write(dir.path().join("latin1.kdl"), b"agent \"caf\xe9\" {}\n").expect("write");
    let out = ding(dir.path(), &["check", "latin1.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("latin1.kdl:1:11: error: declaration is not valid UTF-8 (byte 0xe9)")
    );

    // 30 000 levels fit the size limit and meet the nesting limit; 100 000
    // levels meet the size limit first. Neither reaches the parser.
    fs::write(dir.path().join("deep.kdl"), "x{".repeat(30_000)).expect("write");
    let out = ding(dir.path(), &["check", "deep.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("deep.kdl:1:34: error: blocks nest deeper than the limit of 16 levels"),
        "{}",
        text(&out.stderr)
    );
    fs::write(dir.path().join("deeper.kdl"), "x{".repeat(100_000)).expect("write");
    let out = ding(dir.path(), &["check", "deeper.kdl"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("larger than the limit"));
}

#[test]
fn check_without_a_readable_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = ding(dir.path(), &["check", "missing.kdl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("ding: cannot open missing.kdl"),
        "{}",
        text(&out.stderr)
    );
    let out = ding(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("needs a declaration file"));
}

#[test]
fn check_help_is_terse_and_long_help_explains() {
    let dir = tempfile::tempdir().expect("tempdir");
    let short = text(&ding(dir.path(), &["check", "-h"]).stdout);
    assert!(
        short.lines().all(|line| line.chars().count() < 80),
        "{short}"
    );
    assert!(short.contains("--fingerprint"));
    let long = text(&ding(dir.path(), &["check", "--help"]).stdout);
    assert!(long.contains("Exit status"));
    let top = text(&ding(dir.path(), &["--help"]).stdout);
    assert!(top.contains("check"), "{top}");
}

#[test]
fn check_fingerprint_does_not_depend_on_how_the_file_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fleet = dir.path().join("fleet");
    fs::create_dir(&fleet).expect("mkdir");
    fs::create_dir(dir.path().join("elsewhere")).expect("mkdir");
    fs::write(fleet.join("a.kdl"), TWO_AGENTS).expect("write");
    let direct = ding(&fleet, &["check", "--fingerprint", "a.kdl"]);
    let roundabout = ding(
        &dir.path().join("elsewhere"),
        &["check", "--fingerprint", "../fleet/a.kdl"],
    );
    assert!(direct.status.success());
    assert_eq!(text(&direct.stdout), text(&roundabout.stdout));
}
