//! A DING hook never blocks, slows or changes the person's own work: the
//! hook commands `ding compile-agent` writes, run as the harness runs them
//! (`bash -c`, the payload on stdin), exit 0 with nothing on stdout or
//! stderr when `ding` cannot be found there, when no adapter answers, and
//! when `ding hook` itself is called wrongly; and `ding check --adapters`
//! fails, saying why, when the hooks cannot reach a `ding`.

mod support;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use support::doc_blocks::run_script;
use support::sidecar_agent::DING;

/// Every command of DING's handlers in the settings file at `path`.
fn ding_commands(path: &Path) -> Vec<String> {
    let settings: Value =
        serde_json::from_str(&fs::read_to_string(path).expect("settings")).expect("JSON");
    let mut commands = Vec::new();
    for groups in settings["hooks"].as_object().expect("hooks").values() {
        for group in groups.as_array().expect("groups") {
            for handler in group["hooks"].as_array().expect("handlers") {
                let command = handler["command"].as_str().expect("command");
                if command.contains(" hook ") {
                    commands.push(command.to_string());
                }
            }
        }
    }
    assert!(
        !commands.is_empty(),
        "DING's hooks are in {}",
        path.display()
    );
    commands
}

/// Runs `command` as a harness does: `bash -c`, the payload on stdin, no
/// hook socket or identity (no adapter answers), `PATH` as given.
fn run_as_the_harness(command: &str, path: &str) -> std::process::Output {
    let mut child = Command::new("bash")
        .args(["-c", command])
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(br#"{"hook_event_name":"BeforeAgent","prompt":"hi"}"#);
    child.wait_with_output().expect("the hook")
}

fn compile(provider: &str, dir: &Path, ding: Option<&str>) -> std::process::Output {
    let project = dir.join("project");
    fs::create_dir_all(&project).expect("project");
    let mut args = vec![
        "compile-agent".to_string(),
        provider.to_string(),
        "--name".into(),
        "worker".into(),
        "--cwd".into(),
        project.display().to_string(),
        "--out".into(),
        dir.join("worker.kdl").display().to_string(),
    ];
    if let Some(ding) = ding {
        args.extend(["--ding".to_string(), ding.to_string()]);
    }
    Command::new(DING)
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("compile-agent")
}

#[test]
fn generated_hooks_exit_0_silently_whatever_fails() {
    for (provider, settings) in [
        ("gemini", ".gemini/settings.json"),
        ("claude", ".claude/settings.local.json"),
    ] {
        let dir = tempfile::tempdir().expect("dir");
        // Named by a path that is gone (uninstalled, moved), and by a name
        // the harness's PATH does not have.
        for ding in [Some("/nonexistent/bin/ding"), Some("ding")] {
            let compiled = compile(provider, dir.path(), ding);
            assert!(compiled.status.success(), "{compiled:?}");
            for command in ding_commands(&dir.path().join("project").join(settings)) {
                let out = run_as_the_harness(&command, "/usr/bin:/bin");
                assert_eq!(out.status.code(), Some(0), "{provider}: {command}: {out:?}");
                assert!(out.stdout.is_empty(), "{provider}: {command}: {out:?}");
                assert!(out.stderr.is_empty(), "{provider}: {command}: {out:?}");
            }
        }
        // By default the hooks name this ding by its path: found whatever
        // the PATH, and with no adapter to answer, still silent and 0.
        let compiled = compile(provider, dir.path(), None);
        assert!(compiled.status.success(), "{compiled:?}");
        for command in ding_commands(&dir.path().join("project").join(settings)) {
            assert!(command.contains(DING), "{command}");
            let out = run_as_the_harness(&command, "/usr/bin:/bin");
            assert_eq!(out.status.code(), Some(0), "{provider}: {command}: {out:?}");
            assert!(out.stdout.is_empty(), "{provider}: {command}: {out:?}");
            assert!(out.stderr.is_empty(), "{provider}: {command}: {out:?}");
        }
    }
}

#[test]
fn ding_hook_called_wrongly_still_exits_0_silently() {
    for args in [
        &["hook"][..],
        &["hook", "gemini"],
        &["hook", "gemini", "BeforeAgent", "--timeout", "0"],
        &["hook", "gemini", "BeforeAgent", "--no-such-flag"],
    ] {
        let out = Command::new(DING)
            .args(args)
            .env_remove("DING_HOOK_SOCKET")
            .env_remove("DING_RUNTIME_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("ding hook");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
    }
}

#[test]
fn check_adapters_fails_when_the_hooks_cannot_reach_ding() {
    for provider in ["gemini", "claude", "codex"] {
        let home = tempfile::tempdir().expect("home");
        let script = format!(
            "ding hooks install \"$PWD/hooks\"\nexport ST_HOOKS=\"$PWD/hooks\"\nmkdir -p project\n\
             ding compile-agent {provider} --name worker --cwd \"$PWD/project\" --ding /nonexistent/bin/ding --out worker.kdl\n\
             ding check --adapters worker.kdl\n"
        );
        let out = run_script(&script, home.path(), &[]);
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{provider}: {said}");
        assert!(said.contains("hooks cannot run"), "{provider}: {said}");
        assert!(said.contains("/nonexistent/bin/ding"), "{provider}: {said}");
    }
}
