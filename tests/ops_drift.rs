//! Drift of everything declared, and names that cannot collide (OPS): the
//! PTY host reports the launch it was started from, `ding up` and
//! `ding status` name every drifted field of it (without ever showing an
//! environment value), `--replace` says which process it restarts and does
//! it; and an agent started from one declaration file is never adopted by
//! another file's `ding up`, whose `--takeover` is how a name changes hands.

mod support;

use std::fs;
use std::process::Output;

use serde_json::Value;
use support::sidecar_agent::*;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn declaration(command: &str, cwd: &str, value: &str, size: &str) -> String {
    format!(
        "agent \"edit\" {{\n  command {command}\n  cwd \"{cwd}\"\n  env {{ MODE \"{value}\"; }}\n  size \"{size}\"\n}}\n"
    )
}

/// The harness's argv, from /proc.
fn harness_argv(agent: &Agent) -> Vec<String> {
    let pid = match agent.pty().status().expect("pty status").child {
        ding::pty::wire::ChildState::Running { pid } => pid,
        other => panic!("harness not running: {other:?}"),
    };
    fs::read(format!("/proc/{pid}/cmdline"))
        .expect("cmdline")
        .split(|&b| b == 0)
        .filter(|arg| !arg.is_empty())
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect()
}

#[test]
fn every_drifted_launch_field_is_named_and_replace_restarts_the_pty_host() {
    let agent = Agent::new("edit", "");
    fs::create_dir(agent.path("work")).expect("work");
    agent.write_declaration(&declaration(
        r#""sleep" "600""#,
        ".",
        "first-value",
        "80x24",
    ));
    agent.up(&[]);
    let (sidecar, pty) = (agent.sidecar_pid(), agent.pty_pid());

    agent.write_declaration(&declaration(
        r#""sleep" "601""#,
        "work",
        "second-value",
        "100x30",
    ));
    let printed = agent.up(&[]);
    assert!(
        printed.contains("pty host adopted with DRIFT, not restarted (--replace restarts it)"),
        "{printed}"
    );
    for field in [
        "pty host drift   command: running \"sleep\" \"600\" -> declared \"sleep\" \"601\"",
        "pty host drift   cwd: running ",
        "pty host drift   env: running { MODE } (values ",
        "pty host drift   size: running \"80x24\" -> declared \"100x30\"",
    ] {
        assert!(printed.contains(field), "{field}:\n{printed}");
    }
    assert!(
        printed.contains("sidecar adopted"),
        "the sidecar did not drift: {printed}"
    );
    assert_eq!(
        (agent.sidecar_pid(), agent.pty_pid()),
        (sidecar, pty),
        "nothing restarted"
    );
    assert_eq!(harness_argv(&agent), ["sleep", "600"]);

    let out = agent.ding(&["status", "edit", "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    let fields: Vec<&str> = status["drift"]["harness"]
        .as_array()
        .expect("harness drift")
        .iter()
        .filter_map(|f| f["field"].as_str())
        .collect();
    assert_eq!(fields, ["command", "cwd", "env", "size"], "{status}");
    assert_eq!(status["drift"]["sidecar"], Value::Array(Vec::new()));
    let human = agent.ding_ok(&["status", "edit"]);
    assert!(
        human.contains("    pty host  size: running \"80x24\" -> declared \"100x30\""),
        "{human}"
    );
    for shown in [
        &printed,
        &human,
        &String::from_utf8_lossy(&out.stdout).into_owned(),
    ] {
        assert!(
            !shown.contains("first-value") && !shown.contains("second-value"),
            "an environment value is shown: {shown}"
        );
    }

    let printed = agent.up(&["--replace"]);
    assert!(
        printed.contains(&format!(
            "pty host replaced (was pid {}; the harness restarts): command, cwd, env, size changed",
            pty.expect("pty pid")
        )),
        "{printed}"
    );
    assert_ne!(agent.pty_pid(), pty, "a new pty host");
    assert_eq!(agent.sidecar_pid(), sidecar, "the sidecar did not drift");
    assert_eq!(harness_argv(&agent), ["sleep", "601"]);
    let status = agent.pty().status().expect("pty status");
    assert_eq!((status.size.cols, status.size.rows), (100, 30));
    let out = agent.ding(&["status", "edit", "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        status["drift"]["harness"],
        Value::Array(Vec::new()),
        "{status}"
    );
}

#[test]
fn two_projects_with_the_same_agent_name_never_share_it_by_accident() {
    let agent = Agent::new("py", "");
    for project in ["p1", "p2"] {
        fs::create_dir(agent.path(project)).expect("project");
        fs::write(
            agent.path(&format!("{project}/agent.kdl")),
            aggressive_decl("py", SLEEPING_HARNESS),
        )
        .expect("declaration");
    }
    let first = agent.ding_in("p1", &["up", "agent.kdl"]);
    assert!(first.status.success(), "{}", text(&first));
    let (sidecar, pty) = (agent.sidecar_pid(), agent.pty_pid());

    // The second project's `up` does not adopt the first's agent.
    let second = agent.ding_in("p2", &["up", "agent.kdl"]);
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    let said = text(&second);
    assert!(
        said.contains("agent `py` runs from ")
            && said.contains("p1/agent.kdl, not from ")
            && said.contains("--takeover"),
        "{said}"
    );
    assert_eq!(
        (agent.sidecar_pid(), agent.pty_pid()),
        (sidecar, pty),
        "untouched"
    );

    // `ding status` from either project says whose agent it is.
    for project in ["p1", "p2"] {
        let status = agent.ding_in(project, &["status", "py", "--json"]);
        let status: Value = serde_json::from_slice(&status.stdout).expect("json");
        assert!(
            status["declaration"]
                .as_str()
                .is_some_and(|d| d.ends_with("p1/agent.kdl")),
            "{status}"
        );
    }
    // A plain name means the one agent of that name: the running one.
    let sent = agent.ding_in("p2", &["send", "py", "--text", "hello"]);
    assert!(sent.status.success(), "{}", text(&sent));
    let name = String::from_utf8_lossy(&sent.stdout).trim().to_string();
    assert!(agent.path("p1/inbox/py/new").join(&name).exists());
    // Its own declaration names the second project's inbox, which no
    // agent has created: refused, not made.
    let own = agent.ding_in("p2", &["send", "py", "--decl", "agent.kdl", "--text", "x"]);
    assert_eq!(own.status.code(), Some(1), "{}", text(&own));
    assert!(!agent.path("p2/inbox").exists());

    // Taking the name over stops the first project's agent.
    let taken = agent.ding_in("p2", &["up", "agent.kdl", "--takeover"]);
    assert!(taken.status.success(), "{}", text(&taken));
    assert!(
        text(&taken).contains("py: taken over from "),
        "{}",
        text(&taken)
    );
    assert!(!process_alive(sidecar.expect("pid")) && !process_alive(pty.expect("pid")));
    let status = agent.ding_in("p1", &["status", "py", "--json"]);
    let status: Value = serde_json::from_slice(&status.stdout).expect("json");
    assert!(
        status["declaration"]
            .as_str()
            .is_some_and(|d| d.ends_with("p2/agent.kdl")),
        "{status}"
    );
    let back = agent.ding_in("p1", &["up", "agent.kdl"]);
    assert_eq!(
        back.status.code(),
        Some(1),
        "now the first is refused: {}",
        text(&back)
    );
}
