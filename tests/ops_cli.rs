//! CLI conventions (OPS): `ding --version` names the commit, `ding help CMD`
//! is CMD's help, every usage line names every option, one invalid file is
//! one exit code whichever command reads it, `ding snapshot` prints the
//! screen escaped, `ding logs` merges the logs with wall-clock times and
//! tells DING's delivery from an intervention, and the unit that
//! `ding systemd-unit` prints keeps an agent up.

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use ding::escape::is_displayable;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use support::sidecar_agent::*;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn bare(args: &[&str]) -> Output {
    Command::new(DING)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run ding")
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = bare(&["--version"]);
    assert!(out.status.success(), "{}", text(&out));
    let version = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(bare(&["-V"]).stdout, out.stdout);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        version,
        format!("ding {} (commit {head})\n", env!("CARGO_PKG_VERSION"))
    );
}

/// `ding` holds only what runs agents: the evaluation is `ding-eval`'s
/// (its model servers, harness homes and A/B runner are not linked into
/// `ding` at all), and `ding --help` lists the demo agent and adapter
/// that the README's first declaration runs.
#[test]
fn the_evaluation_is_a_binary_of_its_own() {
    let help = |binary: &str| {
        let out = Command::new(binary).arg("--help").output().expect("run");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ding = help(DING);
    for listed in ["  demo-agent ", "  demo-adapter "] {
        assert!(ding.contains(listed), "{ding}");
    }
    assert!(!ding.contains("eval"), "{ding}");
    let unknown = Command::new(DING).arg("eval-run").output().expect("run");
    assert_eq!(unknown.status.code(), Some(2));
    let eval = help(DING_EVAL);
    for listed in [
        "  run ",
        "  model-server ",
        "  harness-env ",
        "  trial ",
        "  type ",
    ] {
        assert!(eval.contains(listed), "{eval}");
    }
    // Text only the evaluation's code holds: the report's heading and the
    // mock model's reply.
    let product = fs::read(DING).expect("read ding");
    let evaluation = fs::read(DING_EVAL).expect("read ding-eval");
    for text in [&b"Careful against aggressive"[..], b"mock reply to turn"] {
        let holds = |bytes: &[u8]| bytes.windows(text.len()).any(|window| window == text);
        assert!(holds(&evaluation), "{}", String::from_utf8_lossy(text));
        assert!(
            !holds(&product),
            "ding holds {}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn help_command_is_each_commands_own_help() {
    for command in ding::cli::COMMANDS {
        let via_help = bare(&["help", command]);
        let direct = bare(&[command, "--help"]);
        assert!(
            via_help.status.success(),
            "ding help {command}: {}",
            text(&via_help)
        );
        assert_eq!(via_help.stdout, direct.stdout, "ding help {command}");
        assert!(
            String::from_utf8_lossy(&via_help.stdout)
                .starts_with(&format!("Usage: ding {command}")),
            "ding help {command}"
        );
    }
    let unknown = bare(&["help", "frobnicate"]);
    assert_eq!(unknown.status.code(), Some(2));
}

/// The options a help text defines (its indented `--option` lines), but
/// `--help`.
fn defined_options(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter(|line| line.starts_with("  "))
        .filter_map(|line| {
            let line = line.trim_start();
            let line = match line.strip_prefix('-') {
                Some(rest) if rest.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                    rest.split_once(", ")?.1
                }
                _ => line,
            };
            let option = line.strip_prefix("--")?;
            let name: String = option
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            (!name.is_empty() && name != "help").then(|| format!("--{name}"))
        })
        .collect()
}

#[test]
fn every_usage_line_names_every_option_the_help_defines() {
    for command in ding::cli::COMMANDS {
        let help = String::from_utf8(bare(&[command, "--help"]).stdout).expect("UTF-8");
        let usage: String = help
            .lines()
            .take_while(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        for option in defined_options(&help) {
            assert!(
                usage.contains(&option),
                "ding {command}: usage does not name {option}:\n{usage}"
            );
        }
    }
}

#[test]
fn one_invalid_file_is_one_exit_code_whichever_command_reads_it() {
    let agent = Agent::new("bad", "agent \"bad\" { delivry \"x\"; }\n");
    let check = agent.ding(&["check", "agent.kdl"]);
    let up = agent.ding(&["up", "agent.kdl"]);
    let systemd = agent.ding(&["systemd-unit", "bad", "--decl", "agent.kdl"]);
    let send = agent.ding(&["send", "bad", "--decl", "agent.kdl", "--text", "x"]);
    for out in [&check, &up, &systemd, &send] {
        assert_eq!(out.status.code(), Some(1), "{}", text(out));
        assert!(
            text(out).contains("unknown node `delivry`"),
            "{}",
            text(out)
        );
    }
    let usage = agent.ding(&["up"]);
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
}

#[test]
fn commands_on_an_agent_tell_not_running_from_unknown() {
    let agent = Agent::new("idle", &aggressive_decl("idle", SLEEPING_HARNESS));
    for args in [
        vec!["status", "idle"],
        vec!["down", "idle"],
        vec!["restart", "idle"],
        vec!["snapshot", "idle"],
        vec!["logs", "idle"],
        vec!["attach", "idle"],
        vec!["intervene", "idle", "x"],
        vec!["send", "idle", "--text", "x"],
        vec!["systemd-unit", "idle"],
    ] {
        let out = agent.ding(&args);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", text(&out));
    }
    agent.up(&[]);
    agent.ding_ok(&["down", "idle"]);
    for args in [
        vec!["status", "idle"],
        vec!["restart", "idle"],
        vec!["snapshot", "idle"],
        vec!["attach", "idle"],
        vec!["intervene", "idle", "x"],
    ] {
        let out = agent.ding(&args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", text(&out));
    }
}

/// What a terminal would act on or hide is escaped, and everything it
/// draws (a TUI's frame, its bullets, accented letters) prints as itself,
/// as `tmux capture-pane` shows it; `--json` is exact.
#[test]
fn snapshot_prints_the_screen_as_text_escaped() {
    let agent = Agent::new(
        "screen",
        &aggressive_decl(
            "screen",
            r###"command "sh" "-c" #"printf 'hello\342\200\256olleh\n╭─● café ─╮\nREADY'; exec sleep 600"#"###,
        ),
    );
    agent.up(&[]);
    agent.wait_screen("READY");
    let out = agent.ding_ok(&["snapshot", "screen"]);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 24, "{out}");
    assert_eq!(
        rows[0], "hello\\u{202e}olleh",
        "the bidi override is escaped"
    );
    assert_eq!(rows[1], "╭─● café ─╮", "what the terminal draws, as drawn");
    assert_eq!(rows[2], "READY");
    assert!(out.lines().all(is_displayable), "{out}");
    let json: Value = serde_json::from_str(&agent.ding_ok(&["snapshot", "screen", "--json"]))
        .expect("snapshot JSON");
    assert_eq!(json["rows"][0], "hello\u{202e}olleh");
    assert_eq!(json["rows"][1], "╭─● café ─╮");
    assert_eq!(json["rows"][2], "READY");
}

/// The lines `ding logs NAME ARGS` prints.
fn logs(agent: &Agent, args: &[&str]) -> Vec<String> {
    let mut all = vec!["logs", agent.name.as_str()];
    all.extend_from_slice(args);
    agent.ding_ok(&all).lines().map(str::to_string).collect()
}

fn is_rfc3339_utc(time: &str) -> bool {
    let bytes = time.as_bytes();
    time.len() == 24
        && bytes[4] == b'-'
        && bytes[10] == b'T'
        && bytes[19] == b'.'
        && time.ends_with('Z')
}

#[test]
fn logs_carry_wall_clock_time_and_tell_delivery_from_intervention() {
    let agent = Agent::new("audit", &aggressive_decl("audit", RECORDING_HARNESS));
    agent.up_recording();
    agent.ding_ok(&["intervene", "audit", "by hand", "--no-enter"]);
    let hostile = "evil-\u{1b}]52;c;aGk=\u{7}.md";
    agent.drop_message(hostile, "x");
    agent.wait_out("the ring", |chunks| notices(chunks).len() == 1);
    wait_for("the pty host to log the delivery", || {
        fs::read_to_string(agent.paths().pty_log()).is_ok_and(|log| log.contains("\"delivery\""))
    });

    let human = logs(&agent, &[]);
    for line in &human {
        assert!(is_displayable(line), "{line:?}");
        let (time, rest) = line.split_once(' ').expect("a time first");
        assert!(is_rfc3339_utc(time), "{line}");
        assert!(
            rest.starts_with("sidecar ") || rest.starts_with("pty "),
            "{line}"
        );
    }
    let find = |what: &str| human.iter().find(|line| line.contains(what)).cloned();
    let rang = find(" rang ").expect("the sidecar's ring");
    assert!(
        rang.contains("origin=delivery") && rang.contains(" t+"),
        "{rang}"
    );
    // Values in a list are shown as JSON, escaped the JSON way.
    assert!(
        rang.contains(r#"evil-\u001b]52;c;aGk=\u0007.md"#),
        "escaped: {rang}"
    );
    let delivery = find("pty     delivery ").expect("the host's delivery");
    assert!(delivery.contains("op=send"), "{delivery}");
    let intervention = find("pty     INTERVENTION ").expect("the intervention");
    assert!(intervention.contains("op=send"), "{intervention}");
    let times: Vec<&str> = human.iter().map(|l| &l[..24]).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "merged in time order");

    for line in logs(&agent, &["--json"]) {
        let record: Value = serde_json::from_str(&line).expect("a JSON line");
        assert!(
            record["source"] == "sidecar" || record["source"] == "pty",
            "{line}"
        );
        assert!(
            record["time"].as_str().is_some_and(is_rfc3339_utc),
            "{line}"
        );
        assert!(is_displayable(&line), "{line:?}");
    }
    assert_eq!(logs(&agent, &["--lines", "2"]).len(), 2);

    // --follow prints what is written after it started.
    let mut env = agent.env_vars();
    env.retain(|(key, _)| *key != "DING_AGENT");
    let mut follower = Command::new(DING)
        .args(["logs", "audit", "--follow"])
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ding logs --follow");
    let (lines_tx, lines_rx) = mpsc::channel();
    let stdout = follower.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    // Everything there already first, then the new ring.
    agent.drop_message("late.md", "x");
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut seen = false;
    while std::time::Instant::now() < deadline && !seen {
        if let Ok(line) = lines_rx.recv_timeout(Duration::from_millis(100)) {
            seen = line.contains(" arrived ") && line.contains("late.md");
        }
    }
    let _ = follower.kill();
    let _ = follower.wait();
    assert!(seen, "ding logs --follow never showed the new arrival");
}

/// The unquoted words of a systemd `Key="w1" "w2"` line.
fn unit_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut word = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => word.extend(chars.next()),
                '%' | '$' => {
                    chars.next();
                    word.push(c);
                }
                other => word.push(other),
            }
        }
        words.push(word);
    }
    words
}

#[test]
fn the_systemd_unit_keeps_the_agent_up_and_stops_it_in_order() {
    let agent = Agent::new("kept", &careful_decl("kept", SLEEPING_HARNESS, ""));
    agent.up(&[]);
    let unit = agent.ding_ok(&["systemd-unit", "kept"]);
    agent.ding_ok(&["down", "kept"]);
    for line in [
        "Restart=on-failure",
        "KillMode=mixed",
        "WantedBy=default.target",
    ] {
        assert!(unit.lines().any(|l| l == line), "{line}:\n{unit}");
    }
    let exec = unit
        .lines()
        .find_map(|line| line.strip_prefix("ExecStart="))
        .expect("ExecStart");
    let argv = unit_words(exec);
    assert_eq!(argv[0], DING, "{unit}");
    assert_eq!(
        &argv[1..],
        [
            "up",
            agent.declaration().to_str().expect("path"),
            "--agent",
            "kept",
            "--foreground"
        ]
    );
    let environment: Vec<(String, String)> = unit
        .lines()
        .filter_map(|line| line.strip_prefix("Environment="))
        .filter_map(|words| {
            let word = unit_words(words).pop()?;
            let (key, value) = word.split_once('=')?;
            Some((key.to_string(), value.to_string()))
        })
        .collect();
    assert!(
        environment.iter().any(|(key, _)| key == "ST_HOOKS"),
        "{unit}"
    );

    // Run it as systemd would: the environment it names, nothing else.
    let mut supervisor = Command::new(&argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(environment)
        .env("FEEDS", agent.path("feeds"))
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(fs::File::create(agent.path("supervisor.out")).expect("out"))
        .spawn()
        .expect("the unit's ExecStart");
    let supervising = |out: &str| {
        fs::read_to_string(agent.path(out)).is_ok_and(|said| said.contains(" supervising;"))
    };
    wait_for("the supervisor to have started the agent", || {
        supervising("supervisor.out")
    });
    assert!(agent.ding(&["status", "kept"]).status.success());
    let sidecar = agent.sidecar_pid().expect("sidecar");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9 the sidecar");
    wait_for("a new sidecar", || {
        agent.sidecar_pid().is_some_and(|pid| pid != sidecar)
            && agent.ding(&["status", "kept"]).status.success()
    });
    let pty = agent.pty_pid().expect("pty host");
    kill(Pid::from_raw(pty), Signal::SIGKILL).expect("kill -9 the pty host");
    wait_for("a new pty host and harness", || {
        agent.pty_pid().is_some_and(|pid| pid != pty)
            && agent.ding(&["status", "kept"]).status.success()
    });
    // What systemctl stop does: SIGTERM to the supervisor alone.
    kill(Pid::from_raw(supervisor.id() as i32), Signal::SIGTERM).expect("stop");
    assert!(ended(&mut supervisor).success());
    assert_eq!(agent.processes(), Vec::<i32>::new(), "everything stopped");

    // `ding down` of a supervised agent ends the supervisor too.
    let mut supervisor = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(agent.env_vars())
        .stdin(Stdio::null())
        .stdout(fs::File::create(agent.path("again.out")).expect("out"))
        .spawn()
        .expect("the unit's ExecStart");
    wait_for("the supervisor to have started the agent", || {
        supervising("again.out")
    });
    agent.ding_ok(&["down", "kept"]);
    assert!(
        ended(&mut supervisor).success(),
        "the supervisor ended by itself"
    );
}

/// What `make install` or a package manager does: a new file renamed over
/// the old path (a new inode; the running image loses its name).
fn install_over(source: &str, path: &std::path::Path) {
    let fresh = path.with_extension("new");
    fs::copy(source, &fresh).expect("copy the new ding");
    fs::rename(&fresh, path).expect("rename it over the old one");
}

#[test]
fn a_supervisor_restarts_from_the_binary_installed_over_it_and_fails_when_none_is_left() {
    let agent = Agent::new("upgraded", &careful_decl("upgraded", SLEEPING_HARNESS, ""));
    let installed = agent.path("bin/ding");
    fs::create_dir(agent.path("bin")).expect("mkdir bin");
    install_over(DING, &installed);
    let mut supervisor = Command::new(&installed)
        .args(["up", "--foreground", "--agent", "upgraded"])
        .arg(agent.declaration())
        .envs(agent.env_vars())
        .current_dir(agent.dir.path())
        .stdin(Stdio::null())
        .stdout(fs::File::create(agent.path("supervisor.out")).expect("out"))
        .spawn()
        .expect("ding up --foreground");
    let said = || fs::read_to_string(agent.path("supervisor.out")).unwrap_or_default();
    wait_for("the supervisor to have started the agent", || {
        said().contains(" supervising;")
    });

    // Upgraded in place, then the sidecar dies: it comes back, run from
    // the file now installed at the path.
    install_over(DING, &installed);
    let sidecar = agent.sidecar_pid().expect("sidecar");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9 the sidecar");
    wait_for("a new sidecar after the upgrade", || {
        agent.sidecar_pid().is_some_and(|pid| pid != sidecar)
            && agent.ding(&["status", "upgraded"]).status.success()
    });
    let restarted = agent.sidecar_pid().expect("sidecar");
    let exe = fs::read_link(format!("/proc/{restarted}/exe")).expect("its exe");
    assert_eq!(exe, installed, "the new sidecar runs the installed file");
    let pty = agent.pty_pid().expect("pty host");
    kill(Pid::from_raw(pty), Signal::SIGKILL).expect("kill -9 the pty host");
    wait_for("a new pty host after the upgrade", || {
        agent.pty_pid().is_some_and(|pid| pid != pty)
            && agent.ding(&["status", "upgraded"]).status.success()
    });

    // Uninstalled: nothing can start a ding again, so the supervisor ends
    // with failure for its service manager to see, instead of retrying.
    fs::remove_file(&installed).expect("uninstall");
    let sidecar = agent.sidecar_pid().expect("sidecar");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9 the sidecar");
    let status = ended(&mut supervisor);
    assert!(!status.success(), "{}", said());
    assert!(said().contains("is gone"), "{}", said());
    agent.ding_ok(&["down", "upgraded"]);
}

/// How `child` ended, waiting at most [`DEADLINE`] (then it is killed).
fn ended(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            panic!("pid {} did not end within {DEADLINE:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
