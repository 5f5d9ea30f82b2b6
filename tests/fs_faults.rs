//! Real filesystem faults under `ding send` and the sidecar's journal:
//! ENOSPC from a full tmpfs and from `/dev/full`, EIO from a block device
//! that fails its writes. The promises checked:
//!
//! * `ding send` never prints a name for a message it did not make
//!   durable: on a failed write or fsync it exits non-zero with the reason,
//!   prints nothing on stdout and leaves nothing in `new/`; when only
//!   printing the name fails, it says that the message was delivered, and
//!   names it;
//! * the sidecar keeps delivering (rings, claim answers) while its journal
//!   cannot be written, shows the error in status until a save succeeds,
//!   and the save that succeeds is durable (a `kill -9` after it repeats
//!   nothing).
//!
//! The faults are real, made in a mount namespace each test creates
//! (`unshare --mount`, private propagation, so nothing leaks out): a small
//! tmpfs filled to the last page (ENOSPC), and an ext2 filesystem on a loop
//! device whose capacity is shrunk under it (`losetup --set-capacity`: every
//! write past the new end fails with EIO) and grown back to recover. Only
//! processes started inside the namespace see these mounts; the test
//! reaches them through `/proc/PID/root`. Where the setup is refused (no
//! privilege for a mount namespace, no loop device, no `mkfs.ext2`), a test
//! prints `SKIPPED` and why on stderr and returns without checking
//! anything (`make test` ends with the list of such lines), or, with
//! `DING_REQUIRE_FAULTS` set to anything but `0`, fails with that reason.

mod support;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use support::sidecar_agent::*;

/// A private mount namespace held open by a sleeping process, with the
/// mounts its setup script made.
struct Namespace {
    holder: Child,
}

impl Namespace {
    /// Runs `setup` (a `sh` script) in a new mount namespace and keeps the
    /// namespace alive. `Err` says why the kernel or the system refused.
    fn new(setup: &str) -> Result<Namespace, String> {
        let script = format!("set -e\n{setup}\necho ready\nexec sleep 3600\n");
        let mut holder = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| format!("cannot run unshare: {err}"))?;
        let mut line = String::new();
        let stdout = holder.stdout.take().expect("stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        if line.trim() != "ready" {
            let _ = holder.kill();
            let output = holder.wait_with_output().expect("wait");
            return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
        }
        Ok(Namespace { holder })
    }

    fn pid(&self) -> String {
        self.holder.id().to_string()
    }

    /// `nsenter` arguments that run a program inside the namespace, in
    /// `dir` (entering a mount namespace otherwise starts at its root).
    fn wrapper(&self, dir: &Path) -> [String; 6] {
        [
            "nsenter".into(),
            "-t".into(),
            self.pid(),
            "-m".into(),
            format!("--wd={}", dir.display()),
            "--".into(),
        ]
    }

    /// Runs a `sh` script inside the namespace; requires success.
    fn sh(&self, script: &str) -> Output {
        let out = Command::new("nsenter")
            .args(["-t", &self.pid(), "-m", "--", "sh", "-c", script])
            .output()
            .expect("nsenter");
        assert!(out.status.success(), "{script}: {out:?}");
        out
    }

    /// `path` as processes inside the namespace see it.
    fn inside(&self, path: &Path) -> PathBuf {
        Path::new(&format!("/proc/{}/root", self.pid()))
            .join(path.strip_prefix("/").unwrap_or(path))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The namespace, or `None` after saying on stderr why this test checks
/// nothing here; a failure instead where faults are required.
fn namespace(test: &str, setup: &str) -> Option<Namespace> {
    namespace_or_skip(test, setup, faults_required(), |line| {
        // Written to the descriptor, not through `eprintln!`, which the
        // test harness captures and shows only for a failing test.
        let _ = writeln!(std::io::stderr(), "{line}");
    })
}

/// The namespace; where the machine refuses it, `report` gets the line
/// that says the test is skipped and why, or, if `required`, a panic.
fn namespace_or_skip(
    test: &str,
    setup: &str,
    required: bool,
    report: impl FnOnce(&str),
) -> Option<Namespace> {
    match Namespace::new(setup) {
        Ok(namespace) => Some(namespace),
        Err(why) if required => {
            panic!("{test}: DING_REQUIRE_FAULTS is set and the fault cannot be made here: {why}")
        }
        Err(why) => {
            report(&format!(
                "SKIPPED {test}: cannot make the fault here: {why}"
            ));
            None
        }
    }
}

/// Whether this run must make every fault (`DING_REQUIRE_FAULTS`, set and
/// not `0`) rather than skip the ones the machine refuses.
fn faults_required() -> bool {
    std::env::var("DING_REQUIRE_FAULTS").is_ok_and(|value| !value.is_empty() && value != "0")
}

/// A fault the machine refuses is a skip that says so, never a silent
/// pass, and a failure where faults are required.
#[test]
fn a_fault_that_cannot_be_made_is_a_visible_skip_or_a_failure_when_required() {
    let refused = "echo 'no such device' >&2; exit 3";
    let mut said = String::new();
    assert!(namespace_or_skip("refused", refused, false, |line| said = line.into()).is_none());
    assert_eq!(
        said,
        "SKIPPED refused: cannot make the fault here: no such device"
    );
    let required =
        std::panic::catch_unwind(|| namespace_or_skip("refused", refused, true, |_| ()).is_some());
    let message = required.expect_err("a required fault that cannot be made fails");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("no such device"), "{message}");
}

/// A tmpfs of `size` at `dir`, owner-only.
fn tmpfs(dir: &Path, size: &str) -> String {
    format!(
        "mkdir -p '{0}'\nmount -t tmpfs -o size={size},mode=0700 tmpfs '{0}'",
        dir.display()
    )
}

/// An ext2 filesystem in the 16 MiB file `image`, mounted on a loop device
/// at `dir`.
fn loop_ext2(image: &Path, dir: &Path) -> String {
    format!(
        "truncate -s 16M '{0}'\nmkfs.ext2 -q -F '{0}'\nmkdir -p '{1}'\nmount -o loop '{0}' '{1}'\nchmod 0700 '{1}'",
        image.display(),
        dir.display()
    )
}

/// The loop device backing `image`.
fn loop_device(image: &Path) -> String {
    let out = Command::new("losetup")
        .args(["-j", &image.display().to_string(), "-n", "-O", "NAME"])
        .output()
        .expect("losetup");
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(device.starts_with("/dev/loop"), "{out:?}");
    device
}

/// Shrinks the device under the mounted filesystem to its first 4 KiB (so
/// every write past them fails with EIO), or grows it back.
fn set_capacity(image: &Path, failing: bool) {
    let size = if failing { "4K" } else { "16M" };
    let device = loop_device(image);
    let ok = Command::new("truncate")
        .args(["-s", size, &image.display().to_string()])
        .status()
        .expect("truncate")
        .success()
        && Command::new("losetup")
            .args(["-c", &device])
            .status()
            .expect("losetup -c")
            .success();
    assert!(ok, "cannot set the capacity of {device}");
}

/// `ding send w BODY --inbox INBOX`, inside the namespace.
fn send(ns: &Namespace, inbox: &Path, body: &Path) -> Output {
    let wrapper = ns.wrapper(Path::new("/"));
    Command::new(&wrapper[0])
        .args(&wrapper[1..])
        .arg(DING)
        .args(["send", "w"])
        .arg(body)
        .arg("--inbox")
        .arg(inbox)
        // The test makes a fresh inbox on the faulty device.
        .arg("--create")
        .stdin(Stdio::null())
        .output()
        .expect("ding send")
}

/// [`send`], which must succeed; the name it printed.
fn sent(ns: &Namespace, inbox: &Path, body: &Path) -> String {
    let out = send(ns, inbox, body);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .expect("name")
        .trim()
        .to_string()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A failed `ding send`: non-zero with `reason` on stderr, no name on
/// stdout, nothing new in `new/` and nothing left in `tmp/`.
fn assert_refused(out: &Output, reason: &str, inbox: &Path, before: &[String]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "a name was printed: {out:?}");
    assert!(stderr.contains(reason), "{stderr}");
    assert_eq!(entries(&inbox.join("new")), before, "new/ changed");
    assert!(
        entries(&inbox.join("tmp")).is_empty(),
        "tmp/ holds a leftover"
    );
}

/// A full tmpfs under the inbox: `ding send` fails with ENOSPC and names
/// nothing; with room again, the same send succeeds and names the file it
/// made durable in `new/`.
#[test]
fn send_on_a_full_filesystem_prints_no_name_and_exits_with_the_reason() {
    let temp = tempfile::tempdir().expect("tempdir");
    let mount = temp.path().join("small");
    let Some(ns) = namespace("send_on_a_full_filesystem", &tmpfs(&mount, "64k")) else {
        return;
    };
    let inbox = mount.join("inbox");
    let body = temp.path().join("body.md");
    fs::write(&body, vec![b'x'; 256 * 1024]).expect("body");
    let out = send(&ns, &inbox, &body);
    assert_refused(&out, "No space left on device", &ns.inside(&inbox), &[]);

    fs::write(&body, b"fits").expect("body");
    let name = sent(&ns, &inbox, &body);
    assert_eq!(entries(&ns.inside(&inbox).join("new")), [name]);
}

/// Writes that fail with EIO under the inbox (the device shrunk away
/// under its filesystem): `ding send` fails and names nothing; with the
/// device whole again it delivers.
#[test]
fn send_on_a_device_that_fails_its_writes_prints_no_name() {
    let temp = tempfile::tempdir().expect("tempdir");
    let image = temp.path().join("eio.img");
    let mount = temp.path().join("eio");
    let Some(ns) = namespace(
        "send_on_a_device_that_fails_its_writes",
        &loop_ext2(&image, &mount),
    ) else {
        return;
    };
    let inbox = mount.join("inbox");
    let body = temp.path().join("body.md");
    fs::write(&body, b"first").expect("body");
    let first = sent(&ns, &inbox, &body);
    ns.sh("sync");

    set_capacity(&image, true);
    fs::write(&body, b"second").expect("body");
    let out = send(&ns, &inbox, &body);
    assert_refused(
        &out,
        "Input/output error",
        &ns.inside(&inbox),
        std::slice::from_ref(&first),
    );

    set_capacity(&image, false);
    let second = sent(&ns, &inbox, &body);
    assert_eq!(entries(&ns.inside(&inbox).join("new")), [first, second]);
}

/// stdout is `/dev/full`: the message is durable in `new/`, but its name
/// cannot be printed. `ding send` fails, and says on stderr that it
/// delivered the message and under which name, so that no one sends it
/// again believing it lost.
#[test]
fn send_that_cannot_print_the_name_says_what_it_delivered() {
    let temp = tempfile::tempdir().expect("tempdir");
    let inbox = temp.path().join("inbox");
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(DING)
        .args(["send", "w", "-", "--create", "--inbox"])
        .arg(&inbox)
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .expect("ding send");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    let delivered = entries(&inbox.join("new"));
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert!(
        stderr.contains(&format!("delivered {}", delivered[0])),
        "{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
}

/// `ding up` inside the namespace, then waits until the harness records.
fn up_inside(agent: &Agent, ns: &Namespace) {
    let wrapper = ns.wrapper(agent.dir.path());
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let out = agent.ding_under(&wrapper, &["up", "agent.kdl"]);
    assert!(out.status.success(), "{out:?}");
    agent.wait_screen("READY");
    wait_for("the harness to open out", || agent.path("out").exists());
}

fn journal_inside(agent: &Agent, ns: &Namespace) -> Value {
    let text = fs::read_to_string(ns.inside(&agent.paths().journal())).expect("journal");
    serde_json::from_str(&text).expect("journal JSON")
}

/// The state directory on a tmpfs filled to its last page: every journal
/// save fails with ENOSPC. The sidecar still answers a hook's claim (whose
/// hook says it printed the file) and still rings under a fresh lease, and status shows the error; once there
/// is room the next save succeeds, status clears, and the journal holds
/// both facts, durably: a `kill -9` and a restart ring nothing again.
#[test]
fn a_full_state_directory_keeps_claims_and_rings_going_and_shows_in_status() {
    let agent = Agent::new(
        "fullstate",
        &careful_decl_with_adapter("fullstate", DRAWING_HARNESS, RECORDING_ADAPTER, ""),
    );
    let state = agent.path("state");
    let Some(ns) = namespace("a_full_state_directory", &tmpfs(&state, "256k")) else {
        return;
    };
    up_inside(&agent, &ns);
    let adapter = agent.wait_adapter_up();
    agent.drop_message("m1.md", "m1");
    agent.drop_message("m2.md", "m2");
    agent.wait_held("m2.md", "no-evidence");
    let filler = state.join("filler");
    ns.sh(&format!(
        "dd if=/dev/zero of='{}' bs=4k 2>/dev/null || true",
        filler.display()
    ));

    agent.feed(adapter, &agent.claim(1, &["m1.md"]));
    wait_for("the claim's answer", || {
        !agent.claims_answered(adapter).is_empty()
    });
    assert_eq!(
        agent.claims_answered(adapter)[0]["granted"],
        json!(["m1.md"])
    );
    // The hook printed it: delivered, no longer in doubt.
    agent.feed(adapter, &agent.printed(&["m1.md"]));
    let status = agent.wait_status("the journal write failure", |s| {
        s["journalWriteError"]
            .as_str()
            .is_some_and(|e| e.contains("No space left on device"))
    });
    assert!(message(&status, "m1.md").is_some_and(|m| m["state"] == "hook-owned"));

    agent.feed(
        adapter,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(adapter);
    let chunks = agent.wait_out("the ring", |chunks| notices(chunks).len() == 1);
    let ring = notices(&chunks)[0];
    assert!(ring.contains("m2.md") && !ring.contains("m1.md"), "{ring}");
    agent.wait_status("m2 staged, still unsaved", |s| {
        message(s, "m2.md").is_some_and(|m| m["state"] == "staged")
            && s["journalWriteError"].is_string()
    });

    ns.sh(&format!("rm '{}'", filler.display()));
    agent.wait_status("the journal saved", |s| s["journalWriteError"].is_null());
    let saved = journal_inside(&agent, &ns);
    assert_eq!(journal_owned(&saved, "hook-owned"), ["m1.md"]);
    assert_eq!(journal_owned(&saved, "staged"), ["m2.md"]);

    let sidecar = agent.sidecar_pid().expect("sidecar pid");
    kill(Pid::from_raw(sidecar), Signal::SIGKILL).expect("kill -9");
    wait_for("the sidecar to die", || !process_alive(sidecar));
    up_inside(&agent, &ns);
    let second = agent.wait_adapter_up();
    agent.wait_status("both restored", |s| {
        message(s, "m1.md").is_some_and(|m| m["state"] == "hook-owned")
            && message(s, "m2.md").is_some_and(|m| m["state"] == "staged")
    });
    agent.drop_message("m3.md", "m3");
    agent.wait_held("m3.md", "no-evidence");
    agent.feed(
        second,
        &agent.activity("idle", "empty", Some(agent.revision())),
    );
    agent.confirm_typed(second);
    let chunks = agent.wait_out("the probe's ring", |chunks| notices(chunks).len() == 2);
    let ring = notices(&chunks)[1];
    assert!(ring.contains("m3.md"), "{ring}");
    assert!(!ring.contains("m1.md") && !ring.contains("m2.md"), "{ring}");
}

/// The state directory on a device that fails its writes (EIO): the
/// aggressive sidecar rings every message as it comes, shows the error in
/// status, and saves the journal once the device works again.
#[test]
fn a_state_directory_that_fails_with_eio_keeps_rings_going_and_shows_in_status() {
    let agent = Agent::new("eiostate", &aggressive_decl("eiostate", RECORDING_HARNESS));
    let image = agent.path("eio.img");
    let state = agent.path("state");
    let Some(ns) = namespace(
        "a_state_directory_that_fails_with_eio",
        &loop_ext2(&image, &state),
    ) else {
        return;
    };
    up_inside(&agent, &ns);
    agent.drop_message("m1.md", "m1");
    agent.wait_out("the first ring", |chunks| notices(chunks).len() == 1);
    agent.wait_status("m1 staged and saved", |s| {
        message(s, "m1.md").is_some_and(|m| m["state"] == "staged")
            && s["journalWriteError"].is_null()
    });
    ns.sh("sync");

    set_capacity(&image, true);
    agent.drop_message("m2.md", "m2");
    agent.wait_out("the ring while failing", |chunks| {
        notices(chunks).len() == 2
    });
    agent.wait_status("the journal write failure", |s| {
        s["journalWriteError"]
            .as_str()
            .is_some_and(|e| e.contains("Input/output error"))
    });
    agent.drop_message("m3.md", "m3");
    let chunks = agent.wait_out("another ring while failing", |chunks| {
        notices(chunks).len() == 3
    });
    assert!(notices(&chunks)[2].contains("m3.md"));

    set_capacity(&image, false);
    agent.wait_status("the journal saved", |s| s["journalWriteError"].is_null());
    let saved = journal_inside(&agent, &ns);
    assert_eq!(journal_owned(&saved, "staged"), ["m1.md", "m2.md", "m3.md"]);
}

/// `ding ARGS` inside the namespace, from the agent's directory.
fn ding_inside(agent: &Agent, ns: &Namespace, args: &[&str]) -> Output {
    let wrapper = ns.wrapper(agent.dir.path());
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    agent.ding_under(&wrapper, args)
}

/// The runtime directory (sockets, pid files, `pty.log`, `sidecar.log`)
/// on a 1 MiB tmpfs that another process fills: every log write of the
/// PTY host and the sidecar fails with ENOSPC. The harness lives on, every
/// message is still rung, and status says since when the logs fail; once
/// there is room, the logs say how many lines were lost and status clears.
/// Before, the PTY host's `eprintln!` panicked on the first failed write
/// and took the harness with it.
#[test]
fn a_full_runtime_directory_neither_ends_the_harness_nor_stops_delivery() {
    let agent = Agent::new("fullrun", &aggressive_decl("fullrun", RECORDING_HARNESS));
    let run = agent.path("run");
    let Some(ns) = namespace("a_full_runtime_directory", &tmpfs(&run, "1m")) else {
        return;
    };
    let up = ding_inside(&agent, &ns, &["up", "agent.kdl"]);
    assert!(up.status.success(), "{up:?}");
    wait_for("the harness to open out", || agent.path("out").exists());
    let host_pid = {
        let pid = fs::read_to_string(ns.inside(&agent.paths().pty_pid())).expect("pid");
        pid.trim().parse::<i32>().expect("pid number")
    };
    let filler = run.join("filler");
    ns.sh(&format!(
        "dd if=/dev/zero of='{}' bs=4k 2>/dev/null || true",
        filler.display()
    ));

    // A file's last page has room that the filler cannot take: enough
    // interventions (one log line each) to fill it, whatever the page size.
    for _ in 0..60 {
        let out = ding_inside(&agent, &ns, &["intervene", "fullrun", ".", "--no-enter"]);
        assert!(out.status.success(), "{out:?}");
    }
    let names: Vec<String> = (0..40).map(|i| format!("m{i:02}.md")).collect();
    for name in &names {
        agent.drop_message(name, "x");
    }
    let chunks = agent.wait_out("every message rung", |chunks| {
        let notices = notices(chunks);
        names
            .iter()
            .all(|name| notices.iter().any(|notice| notice.contains(name.as_str())))
    });
    assert!(process_alive(host_pid), "the pty host died: {chunks:?}");
    let status = ding_inside(&agent, &ns, &["status", "fullrun"]);
    let human = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{status:?}");
    assert!(human.contains("harness      running"), "{human}");
    for whose in ["sidecar", "pty host"] {
        assert!(
            human.contains(&format!("{whose} log writes failing since ")),
            "{whose}: {human}"
        );
    }
    assert!(human.contains("No space left on device"), "{human}");

    ns.sh(&format!("rm '{}'", filler.display()));
    agent.drop_message("after.md", "x");
    agent.wait_out("the message after the room came back", |chunks| {
        notices(chunks).iter().any(|n| n.contains("after.md"))
    });
    wait_for("status to clear", || {
        let out = ding_inside(&agent, &ns, &["status", "fullrun"]);
        !String::from_utf8_lossy(&out.stdout).contains("failing since")
    });
    let pty_log = fs::read_to_string(ns.inside(&agent.paths().pty_log())).expect("pty.log");
    let sidecar_log =
        fs::read_to_string(ns.inside(&agent.paths().sidecar_log())).expect("sidecar.log");
    // The record that ends the failure is a line of its own (a line cut
    // short by the full disk ends where it was cut) and says how many
    // lines were lost.
    for (which, log) in [("pty.log", &pty_log), ("sidecar.log", &sidecar_log)] {
        let recovered: Value = log
            .lines()
            .find(|line| line.contains("log-writes-recovered"))
            .map(|line| serde_json::from_str(line).expect("a whole JSON line"))
            .unwrap_or_else(|| panic!("no log-writes-recovered in {which}"));
        assert!(
            recovered["lostLines"].as_u64().is_some_and(|lost| lost > 0),
            "{which}: {recovered}"
        );
    }
    let down = ding_inside(&agent, &ns, &["down", "fullrun"]);
    assert!(down.status.success(), "{down:?}");
}
