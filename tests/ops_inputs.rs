//! Inputs that fail clearly, and secrets that stay out of sight (OPS): an
//! unset `$ST_HOOKS` fails `ding check` and `ding up` with its name; a
//! mistyped inbox is refused rather than made; `ding send NAME TEXT` says
//! how to send text and `--text` does it; and a value of the declared
//! environment never appears on the command line of any process DING
//! starts.

mod support;

use std::fs;
use std::process::Output;

use support::sidecar_agent::*;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_unset_st_hooks_fails_check_and_up_naming_it() {
    let agent = Agent::new("hooks", &careful_decl("hooks", SLEEPING_HARNESS, ""));
    let check = agent.ding_unset(&["ST_HOOKS"], &["check", "agent.kdl"]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check));
    assert!(
        text(&check).contains("error: agent `hooks`: adapter `command`: `$ST_HOOKS` is not set"),
        "{}",
        text(&check)
    );
    let up = agent.ding_unset(&["ST_HOOKS"], &["up", "agent.kdl"]);
    assert_eq!(up.status.code(), Some(1), "{}", text(&up));
    assert!(
        text(&up).contains("`$ST_HOOKS` is not set"),
        "{}",
        text(&up)
    );
    assert_eq!(agent.processes(), Vec::<i32>::new(), "nothing was started");
    // Set, both pass.
    assert!(agent.ding(&["check", "agent.kdl"]).status.success());
    agent.up(&[]);
}

#[test]
fn a_harness_command_naming_an_unset_st_hooks_fails_up_naming_it() {
    let agent = Agent::new(
        "harness-hooks",
        &aggressive_decl("harness-hooks", r#"command "$ST_HOOKS/adapter.sh""#),
    );
    let up = agent.ding_unset(&["ST_HOOKS"], &["up", "agent.kdl"]);
    assert_eq!(up.status.code(), Some(1), "{}", text(&up));
    assert!(
        text(&up).contains("`command`: `$ST_HOOKS` is not set"),
        "{}",
        text(&up)
    );
    assert_eq!(agent.processes(), Vec::<i32>::new());
}

#[test]
fn send_refuses_an_inbox_that_does_not_exist_unless_asked_to_create_it() {
    let agent = Agent::new("mail", "");
    let typo = agent.ding(&["send", "mail", "--inbox", "inbxo", "--text", "x"]);
    assert_eq!(typo.status.code(), Some(1), "{}", text(&typo));
    assert!(text(&typo).contains("does not exist"), "{}", text(&typo));
    assert!(text(&typo).contains("--create"), "{}", text(&typo));
    assert_eq!(String::from_utf8_lossy(&typo.stdout), "", "no name printed");
    assert!(!agent.path("inbxo").exists(), "no inbox made");
    let made = agent.ding(&[
        "send", "mail", "--inbox", "inbxo", "--text", "x", "--create",
    ]);
    assert!(made.status.success(), "{}", text(&made));
    assert!(agent.path("inbxo/new").is_dir());
}

#[test]
fn send_takes_text_with_text_and_says_how_when_given_it_as_a_file() {
    let agent = Agent::new("words", "");
    fs::create_dir(agent.path("in")).expect("inbox");
    let wrong = agent.ding(&["send", "words", "some text", "--inbox", "in"]);
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
    assert!(
        text(&wrong).contains("ding send words --text 'some text'"),
        "{}",
        text(&wrong)
    );
    let sent = agent.ding(&["send", "words", "--text", "some text", "--inbox", "in"]);
    assert!(sent.status.success(), "{}", text(&sent));
    let name = String::from_utf8_lossy(&sent.stdout).trim().to_string();
    assert_eq!(
        fs::read_to_string(agent.path("in/new").join(name)).expect("message"),
        "some text\n"
    );
}

/// The NUL-separated command line of `pid`, or nothing if it is gone.
fn cmdline(pid: i32) -> Vec<u8> {
    fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

#[test]
fn a_declared_value_never_appears_on_the_command_line_of_any_process_ding_starts() {
    const SECRET: &str = "sk-test-0123456789abcdef-not-for-ps";
    let agent = Agent::new("secret", "");
    agent.write_declaration(&format!(
        "agent \"secret\" {{\n  command \"sh\" \"-c\" \"printf READY; exec sleep 600\"\n  env {{ API_KEY \"{SECRET}\"; }}\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{ {SCRIPTED_ADAPTER} }}\n  }}\n}}\n"
    ));
    agent.up(&[]);
    agent.wait_screen("READY");
    agent.wait_adapter_up();
    let processes = agent.processes();
    // The PTY host, the harness, the sidecar and the adapter (and its cat).
    assert!(processes.len() >= 4, "{processes:?}");
    for pid in &processes {
        let line = cmdline(*pid);
        assert!(
            !contains(&line, SECRET.as_bytes()),
            "pid {pid} carries the value: {}",
            String::from_utf8_lossy(&line)
        );
    }
    // It did reach the harness, through its environment.
    let harness = match agent.pty().status().expect("pty").child {
        ding::pty::wire::ChildState::Running { pid } => pid,
        other => panic!("{other:?}"),
    };
    let environ = fs::read(format!("/proc/{harness}/environ")).expect("environ");
    assert!(contains(&environ, format!("API_KEY={SECRET}").as_bytes()));
    // Nor does it show in what DING prints or logs.
    let status = agent.ding_ok(&["status", "secret", "--json"]);
    assert!(!status.contains(SECRET));
    let paths = agent.paths();
    for log in [paths.pty_log(), paths.sidecar_log()] {
        let logged = fs::read(&log).expect("log");
        assert!(!contains(&logged, SECRET.as_bytes()), "{}", log.display());
    }
}
