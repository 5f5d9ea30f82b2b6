//! What `ding compile-agent` and `ding hooks install` write and print, fed
//! hostile paths and names (hardening, round 2): a carriage return (or any
//! other break KDL knows) in a path cannot declare a second agent, no raw
//! control reaches the operator's terminal, a launcher directory anyone
//! else may write is refused, and a secret-looking variable is refused
//! with the way to pass it instead.
//!
//! The provider is Claude Code's compiler (the one with a settings path in
//! its comment); the rules are the neutral writer's and the CLI's.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use ding::escape::is_plain;
use support::sidecar_agent::{compile_agent, ding_in, private_tempdir};

/// Every character of `text` is plain or a line feed (or the backslash of
/// an escape): no raw control, line break, format or bidi character.
fn assert_printable(what: &str, text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || c == '\\' || is_plain(c),
            "{what}: raw {c:?} in {text:?}"
        );
    }
}

/// The hostile pass's injection: `--settings` with a CR breaks out of the
/// header comment and declares `agent "evil"`. Every KDL line break is
/// tried. The declaration written holds the one agent asked for (`ding
/// check` lists only it, `ding up --agent evil` finds none), and nothing
/// raw is printed.
#[test]
fn a_line_break_in_a_path_never_declares_another_agent() {
    let dir = private_tempdir();
    fs::create_dir(dir.path().join("project")).expect("mkdir");
    for (index, breaker) in ['\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}']
        .into_iter()
        .enumerate()
    {
        let settings = format!(
            "s{index}{breaker}agent \"evil\" {{ command \"sh\" \"-c\" \"touch pwned\" }}{breaker}// \u{1b}]0;title\u{7}.json"
        );
        let out_file = format!("w{index}.kdl");
        let out = compile_agent(
            dir.path(),
            "claude",
            &["--settings", &settings, "--out", &out_file],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{breaker:?}: {stderr}");
        assert_printable("compile-agent stderr", &stderr);
        assert_printable(
            "compile-agent stdout",
            &String::from_utf8_lossy(&out.stdout),
        );
        let written = fs::read_to_string(dir.path().join(&out_file)).expect("declaration");
        assert_printable("the declaration", &written);
        let check = ding_in(dir.path(), &["check", "--portable", &out_file]);
        let listed = String::from_utf8_lossy(&check.stdout);
        assert_eq!(
            listed.lines().count(),
            1,
            "{breaker:?}: {listed}\n{written}"
        );
        assert!(listed.starts_with("worker:"), "{listed}");
        let up = ding_in(dir.path(), &["up", &out_file, "--agent", "evil"]);
        assert!(!up.status.success(), "{up:?}");
        assert!(!dir.path().join("project/pwned").exists());
    }
}

/// A variable name that could break a line, or one that is not a name, is
/// refused before anything is written; secret-looking names (the common
/// spellings the first pass missed among them) are refused with how to
/// pass the value from the environment instead.
#[test]
fn env_names_are_checked_and_secrets_refused_with_the_way_around() {
    let dir = private_tempdir();
    fs::create_dir(dir.path().join("project")).expect("mkdir");
    let compile = |env: &str| compile_agent(dir.path(), "claude", &["--env", env]);
    let out = compile("A\rB=1");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("letters, digits and `_`"), "{stderr}");
    assert_printable("stderr", &stderr);
    for secret in ["PGPASSWORD", "DB_PASS", "GH_PAT", "GITLAB_PAT", "SMTP_PASS"] {
        let out = compile(&format!("{secret}=x"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{secret}: {stderr}");
        assert!(stderr.contains("looks like a secret"), "{stderr}");
        assert!(
            stderr.contains(&format!("export {secret} where you run `ding up`")),
            "{stderr}"
        );
    }
    let out = compile("PATH_PREFIX=/opt");
    assert!(out.status.success(), "{out:?}");
}

/// `ding hooks install` into a directory that group or others may write is
/// refused (as `ding send` refuses such an inbox), and so is `ding check
/// --adapters` for a declaration whose launcher lies in one; the paths it
/// prints are escaped.
#[test]
fn a_launcher_directory_others_may_write_is_refused() {
    let dir = private_tempdir();
    let open = dir.path().join("open hooks");
    fs::create_dir(&open).expect("mkdir");
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = ding_in(dir.path(), &["hooks", "install", "open hooks"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr.contains("writable by group or others"), "{stderr}");
    assert!(fs::read_dir(&open).expect("list").next().is_none());

    let hostile = dir.path().join("hooks\u{1b}]52;c;x\u{7}");
    let out = ding_in(
        dir.path(),
        &["hooks", "install", hostile.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_printable("hooks install stdout", &stdout);
    assert!(stdout.contains("hooks\\u{1b}]52;c;x\\u{7}/"), "{stdout}");

    // A declaration whose launcher is in the open directory: refused by
    // `ding check --adapters`, the launcher never run.
    let launcher = open.join("claude-ding-adapter");
    fs::write(&launcher, "#!/bin/sh\ntouch ran\necho ok\n").expect("launcher");
    fs::set_permissions(&launcher, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::write(
        dir.path().join("w.kdl"),
        "agent \"w\" {\n  command \"sh\"\n  ding {\n    delivery \"turn-boundary+fresh-idle\"\n    adapter { command \"$ST_HOOKS/claude-ding-adapter\"; }\n  }\n}\n",
    )
    .expect("declaration");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ding"))
        .args(["check", "--adapters", "w.kdl"])
        .current_dir(dir.path())
        .env("ST_HOOKS", &open)
        .env("HOME", dir.path())
        .output()
        .expect("ding check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("adapter check FAILED"), "{stdout}");
    assert!(stdout.contains("writable by group or others"), "{stdout}");
    assert!(!dir.path().join("ran").exists(), "the launcher ran");
}

/// Settings that are a FIFO are refused at once, never waited on (before,
/// compile-agent blocked in the open until a writer came). Run under a
/// deadline, so a hang fails the test instead of stalling the run.
#[test]
fn settings_that_are_a_fifo_are_refused_at_once() {
    let dir = private_tempdir();
    fs::create_dir_all(dir.path().join("project/.claude")).expect("mkdir");
    let fifo = dir.path().join("project/.claude/settings.local.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ding"))
        .args([
            "compile-agent",
            "claude",
            "--name",
            "worker",
            "--cwd",
            "project",
        ])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run ding");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().expect("try_wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("compile-agent hangs on a FIFO as its settings");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}
