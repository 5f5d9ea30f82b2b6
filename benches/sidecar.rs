//! `ding sidecar` figures, with the baselines people use today in the same run:
//!
//! * end-to-end latency from the rename into `new/` to the first byte of the
//!   notice read by the program in the terminal, p50 and p99, for the
//!   aggressive policy, for `turn-boundary+fresh-idle` with a ready lease,
//!   for an `inotifywait` loop calling `tmux send-keys`, and for a 1 s
//!   polling loop calling `tmux send-keys`;
//! * idle cost: voluntary context switches of an idle sidecar, with nothing
//!   pending and with held work waiting for a lease;
//! * resident memory idle and with 100,000 unread messages, and the startup
//!   time with 100,000 unread messages.
//!
//! The method is described in `docs/benchmarks.md`. A measurement, not a
//! test: it prints figures and never fails on them. Baselines are skipped
//! with a note when `tmux` or `inotifywait` is not installed.
//!
//! Environment: `DING_BENCH_MESSAGES` (default 1000) messages per latency
//! run, `DING_BENCH_POLL_MESSAGES` (default 200) for the 1 s polling loop,
//! `DING_BENCH_IDLE_SECS` (default 60) for the idle window,
//! `DING_BENCH_UNREAD` (default 100000) for the memory and startup run.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use ding::pty::client::Client;
use ding::pty::wire::Push;
use ding::sidecar::control::status_reply_within;
use nix::sys::signal::{Signal, kill};
use nix::time::{ClockId, clock_gettime};
use nix::unistd::Pid;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ding");

/// The first argument that makes this executable a scripted adapter.
const ADAPTER_ROLE: &str = "adapter-role";

/// How long one message may take before the run is declared broken.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The program in the terminal. It switches the terminal to raw mode, takes
/// the CLOCK_MONOTONIC time of the first byte of every notice (everything up
/// to a carriage return), archives the file the notice names, and reports
/// `"<nanoseconds> <name>"` to the bench on a datagram socket.
const RECORDER: &str = r#"
import os, re, socket, sys, time, tty
report, inbox = sys.argv[1], sys.argv[2]
tty.setraw(0)
out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
out.sendto(b"ready", report)
name_pattern = re.compile(rb"msg-[0-9]{6}[.]md")
pending, first = b"", None
while True:
    try:
        data = os.read(0, 65536)
    except OSError:
        break
    now = time.monotonic_ns()
    if not data:
        break
    if first is None:
        first = now
    # Draw what came, as a TUI draws a paste: a careful Return waits for a
    # screen read after the paste was drawn.
    os.write(1, b".")
    pending += data
    while b"\r" in pending:
        notice, _, pending = pending.partition(b"\r")
        found = name_pattern.search(notice)
        if found:
            name = found.group().decode()
            try:
                os.rename(os.path.join(inbox, "new", name), os.path.join(inbox, "archive", name))
            except OSError:
                pass
            out.sendto(("%d %s" % (first, name)).encode(), report)
        first = now if pending else None
"#;

/// A harness that reads and discards input and never writes: a quiet terminal.
const QUIET_HARNESS: &[&str] = &["sh", "-c", "stty raw -echo; exec cat > /dev/null"];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(ADAPTER_ROLE) {
        scripted_adapter(args.get(2).map(String::as_str).unwrap_or(""));
        return;
    }
    // `cargo test --all-targets` runs bench targets too, unoptimized and
    // without `--bench`; the figures would be meaningless and slow to get.
    if !args.iter().any(|arg| arg == "--bench") {
        println!("sidecar bench: skipped (run `make bench` for figures)");
        return;
    }
    let messages = env_count("DING_BENCH_MESSAGES", 1000);
    let poll_messages = env_count("DING_BENCH_POLL_MESSAGES", 200);
    let idle_secs = env_count("DING_BENCH_IDLE_SECS", 60) as u64;
    let unread = env_count("DING_BENCH_UNREAD", 100_000);
    let bench = Bench::new();
    println!("ding sidecar benchmark (release build, {} cores)", cores());
    println!();
    if std::env::var_os("DING_BENCH_ONLY_WHOLE_AGENT").is_some() {
        bench.whole_agent_idle(idle_secs);
        return;
    }
    let fleet = env_count("DING_BENCH_FLEET", 100);
    if std::env::var_os("DING_BENCH_ONLY_FLEET").is_some() {
        bench.fleet(fleet);
        return;
    }
    if std::env::var_os("DING_BENCH_ONLY_UNREAD").is_some() {
        bench.many_unread(unread);
        return;
    }

    println!(
        "end-to-end latency, inbox rename -> first notice byte read in the terminal ({messages} messages, one at a time):"
    );
    let aggressive = bench.ding_latency("aggressive", messages);
    print_latency("ding, aggressive", &aggressive);
    // Fewer: each waits out the time fence first (`FENCE_PASSED`).
    let careful_messages = messages.min(200);
    let careful = bench.ding_latency("careful", careful_messages);
    print_latency(
        &format!("ding, careful, ready lease ({careful_messages} msgs)"),
        &careful,
    );
    let mut baselines = Vec::new();
    if tool_available("tmux", "-V") && tool_available("inotifywait", "--help") {
        let inotify = bench.tmux_latency(Baseline::Inotify, messages);
        print_latency("inotifywait loop + tmux send-keys", &inotify);
        baselines.push(("inotifywait loop", inotify));
    } else {
        println!(
            "  inotifywait loop + tmux send-keys: skipped (tmux or inotifywait not installed)"
        );
    }
    if tool_available("tmux", "-V") {
        let polling = bench.tmux_latency(Baseline::Polling, poll_messages);
        print_latency(
            &format!("1 s polling loop + tmux send-keys ({poll_messages} messages)"),
            &polling,
        );
        baselines.push(("1 s polling loop", polling));
    } else {
        println!("  1 s polling loop + tmux send-keys: skipped (tmux not installed)");
    }
    println!("  target: ding p99 under 5 ms");
    println!("ratios, baseline / ding (p50, p99):");
    for (label, baseline) in &baselines {
        for (ding_label, ding) in [("aggressive", &aggressive), ("ready lease", &careful)] {
            println!(
                "  {label:<18} / ding {ding_label:<12} p50 {:7.1}x   p99 {:7.1}x",
                ratio(baseline.at(0.50), ding.at(0.50)),
                ratio(baseline.at(0.99), ding.at(0.99))
            );
        }
    }
    println!();

    bench.idle_cost(idle_secs);
    println!();
    bench.whole_agent_idle(idle_secs);
    println!();
    bench.many_unread(unread);
    println!();
    bench.fleet(fleet);
}

// ---- figures ---------------------------------------------------------------

/// Latency samples, sorted.
struct Samples(Vec<Duration>);

impl Samples {
    fn new(mut samples: Vec<Duration>) -> Samples {
        samples.sort();
        Samples(samples)
    }

    fn at(&self, q: f64) -> Duration {
        self.0[((self.0.len() - 1) as f64 * q).round() as usize]
    }
}

fn print_latency(label: &str, samples: &Samples) {
    println!(
        "  {label:<55} p50 {:9.3} ms   p99 {:9.3} ms   max {:9.3} ms",
        millis(samples.at(0.50)),
        millis(samples.at(0.99)),
        millis(samples.at(1.0))
    );
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn cores() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

fn tool_available(tool: &str, flag: &str) -> bool {
    Command::new(tool)
        .arg(flag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// CLOCK_MONOTONIC in nanoseconds, the clock the recorder uses too.
fn monotonic_nanos() -> u64 {
    let now = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("clock_gettime");
    now.tv_sec() as u64 * 1_000_000_000 + now.tv_nsec() as u64
}

/// A field of `/proc/PID/status`, as a number (kB for memory fields).
fn proc_status(pid: i32, field: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A small xorshift generator: the polling baseline needs random phases,
/// not good randomness.
struct Phase(u64);

impl Phase {
    fn next_below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

// ---- the bench's private world --------------------------------------------

/// Temporary XDG runtime and state directories shared by every agent of the
/// run, and the recorder script.
struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["run", "state"] {
            fs::create_dir(dir.path().join(sub)).expect("create xdg dir");
        }
        fs::write(dir.path().join("recorder.py"), RECORDER).expect("write recorder");
        Bench { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `ding` command in this bench's XDG world.
    fn ding(&self) -> Command {
        let mut command = Command::new(BIN);
        command
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("XDG_STATE_HOME", self.path("state"))
            .stdin(Stdio::null());
        command
    }

    /// Declares agent `name` in its own directory (inbox `inbox/`) and starts
    /// it with `ding up`.
    fn agent(&self, name: &str, harness: &[&str], ding_block: &str) -> Agent<'_> {
        let dir = self.path(name);
        for sub in ["inbox/tmp", "inbox/new", "inbox/archive"] {
            fs::create_dir_all(dir.join(sub)).expect("create inbox");
        }
        let command: Vec<String> = harness.iter().map(|arg| format!("{arg:?}")).collect();
        let declaration = dir.join("agent.kdl");
        fs::write(
            &declaration,
            format!(
                "agent \"{name}\" {{\n  command {}\n  inbox \"inbox\"\n  ding {{\n{ding_block}  }}\n}}\n",
                command.join(" ")
            ),
        )
        .expect("write declaration");
        let agent = Agent {
            name: name.into(),
            declaration,
            inbox: dir.join("inbox"),
            runtime: self.path("run").join("ding").join(name),
            bench: self,
        };
        agent.up();
        agent
    }

    /// A socket the recorder reports to.
    fn report_socket(&self, name: &str) -> (UnixDatagram, PathBuf) {
        let path = self.path(&format!("{name}.report"));
        let socket = UnixDatagram::bind(&path).expect("bind report socket");
        socket
            .set_read_timeout(Some(DELIVERY_TIMEOUT))
            .expect("set timeout");
        (socket, path)
    }

    fn recorder_argv(&self, report: &Path, inbox: &Path) -> Vec<String> {
        vec![
            "python3".into(),
            self.path("recorder.py").display().to_string(),
            report.display().to_string(),
            inbox.display().to_string(),
        ]
    }
}

/// One agent started by `ding up`; `ding down` on drop.
struct Agent<'a> {
    name: String,
    declaration: PathBuf,
    inbox: PathBuf,
    runtime: PathBuf,
    bench: &'a Bench,
}

impl Agent<'_> {
    fn up(&self) {
        let out = self
            .bench
            .ding()
            .arg("up")
            .arg(&self.declaration)
            .output()
            .expect("run ding up");
        assert!(
            out.status.success(),
            "ding up {}: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pid(&self, file: &str) -> i32 {
        fs::read_to_string(self.runtime.join(file))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or_else(|| panic!("no pid in {file} of {}", self.name))
    }

    fn sidecar_pid(&self) -> i32 {
        self.pid("sidecar.pid")
    }

    fn status(&self) -> Value {
        let socket = self.runtime.join("sidecar.sock");
        let reply = status_reply_within(&socket, Duration::from_secs(5)).expect("sidecar status");
        serde_json::from_slice(&reply).expect("status JSON")
    }

    /// Waits until `ready` holds for the sidecar's status (checked every
    /// millisecond, so the waiting itself disturbs the sidecar little).
    fn wait_status(&self, what: &str, ready: impl Fn(&Value) -> bool) {
        let deadline = Instant::now() + DELIVERY_TIMEOUT;
        loop {
            let status = self.status();
            if ready(&status["engine"]) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{}: never {what}: {status}",
                self.name
            );
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// What `ding logs NAME` prints: why a bench run went wrong.
    fn logs(&self) -> String {
        let out = self
            .bench
            .ding()
            .args(["logs", &self.name])
            .output()
            .expect("ding logs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Stops the sidecar alone (the PTY host keeps running).
    fn stop_sidecar(&self) {
        stop_pid(self.sidecar_pid());
    }
}

impl Drop for Agent<'_> {
    fn drop(&mut self) {
        let _ = self
            .bench
            .ding()
            .args(["down", &self.name])
            .stdout(Stdio::null())
            .status();
    }
}

/// A status query that allows for a large document on a loaded machine.
fn long_status_query(socket: &Path) -> Value {
    let mut stream = UnixStream::connect(socket).expect("connect to the sidecar");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("set timeout");
    stream
        .write_all(b"{\"op\":\"status\"}\n")
        .expect("ask for status");
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .expect("read the status");
    serde_json::from_str(&line).expect("parse the status")
}

fn stop_pid(pid: i32) {
    let pid = Pid::from_raw(pid);
    if kill(pid, Signal::SIGTERM).is_err() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while kill(pid, None).is_ok() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
}

// ---- latency ----------------------------------------------------------------

/// Waits for the recorder's `ready`.
fn await_ready(reports: &UnixDatagram, what: &str) {
    let mut buf = [0u8; 256];
    let len = reports
        .recv(&mut buf)
        .unwrap_or_else(|err| panic!("{what}: the recorder never started: {err}"));
    assert_eq!(&buf[..len], b"ready", "{what}: unexpected first report");
}

/// Renames `count` messages into `inbox/new/` one at a time and returns, for
/// each, the time from just before its rename to the recorder's first byte.
/// `before_each` runs before every message (outside the measurement) and
/// must return once the system is ready for it.
fn measure(
    inbox: &Path,
    reports: &UnixDatagram,
    count: usize,
    mut before_each: impl FnMut(),
    why_not: impl Fn() -> String,
) -> Samples {
    let mut samples = Vec::with_capacity(count);
    let mut buf = [0u8; 256];
    for index in 0..count {
        before_each();
        let name = format!("msg-{index:06}.md");
        let staging = inbox.join("tmp").join(&name);
        fs::write(&staging, format!("benchmark message {index}\n")).expect("write message");
        let renamed_at = monotonic_nanos();
        fs::rename(&staging, inbox.join("new").join(&name)).expect("rename into new/");
        loop {
            let len = reports
                .recv(&mut buf)
                .unwrap_or_else(|err| panic!("{name} was not delivered: {err}\n{}", why_not()));
            let report = String::from_utf8_lossy(&buf[..len]);
            let Some((nanos, reported)) = report.split_once(' ') else {
                continue;
            };
            // Reports for other names are repeats (the polling loop may list
            // a file twice before the recorder archived it).
            if reported == name {
                let first_byte: u64 = nanos.parse().expect("recorder nanoseconds");
                samples.push(Duration::from_nanos(first_byte.saturating_sub(renamed_at)));
                break;
            }
        }
    }
    Samples::new(samples)
}

impl Bench {
    /// `policy` is `aggressive` or `careful` (turn-boundary+fresh-idle with the
    /// scripted adapter that keeps a lease ready).
    fn ding_latency(&self, policy: &str, count: usize) -> Samples {
        let name = format!("lat-{policy}");
        let (reports, report_path) = self.report_socket(&name);
        let inbox = self.path(&name).join("inbox");
        let recorder = self.recorder_argv(&report_path, &inbox);
        let recorder: Vec<&str> = recorder.iter().map(String::as_str).collect();
        // The shortest allowed submit delay: the wait after the first byte
        // only spaces the messages out, it is not part of the latency.
        let mut block = String::from("    submit-delay \"121ms\"\n");
        if policy == "careful" {
            // The transport's latency with a ready lease: without the
            // gather's quiet time, which is policy (docs/evaluation.md,
            // "Batching", says what it costs).
            block.push_str(&format!(
                "    delivery \"turn-boundary+fresh-idle\"\n    gather-quiet \"0s\"\n    adapter {{\n      command {:?} \"{ADAPTER_ROLE}\" \"keep-ready\"\n    }}\n",
                std::env::current_exe()
                    .expect("bench executable")
                    .display()
                    .to_string()
            ));
        }
        let agent = self.agent(&name, &recorder, &block);
        await_ready(&reports, &name);
        let careful = policy == "careful";
        measure(
            &agent.inbox,
            &reports,
            count,
            || {
                // The previous message is archived and its transaction is over;
                // under the careful policy, a lease for the current revision waits.
                agent.wait_status("settled", |engine| {
                    let settled = engine["inFlight"].is_null() && engine["unread"] == 0;
                    let lease = &engine["lease"];
                    let ready = lease["freshness"] == "fresh"
                        && lease["remainingMs"].as_u64().unwrap_or(0) > 500
                        && lease["revision"] == engine["pty"]["revision"];
                    settled && (!careful || ready)
                });
                if careful {
                    // The recorder drew the last Return: let the time fence
                    // (settled output, quiet input) pass too, so that the
                    // figure is the transaction's own latency.
                    thread::sleep(FENCE_PASSED);
                }
            },
            || {
                format!(
                    "its sidecar's status: {}\nits logs:\n{}",
                    agent.status(),
                    agent.logs()
                )
            },
        )
    }
}

/// Longer than the declaration's default time fence (quiet input 300 ms,
/// settled output 250 ms), waited outside the measurement before each
/// careful message.
const FENCE_PASSED: Duration = Duration::from_millis(350);

/// The baselines people run today, each driving `tmux send-keys`.
#[derive(Clone, Copy, PartialEq)]
enum Baseline {
    Inotify,
    Polling,
}

impl Bench {
    fn tmux_latency(&self, baseline: Baseline, count: usize) -> Samples {
        let name = match baseline {
            Baseline::Inotify => "tmux-inotify",
            Baseline::Polling => "tmux-polling",
        };
        let inbox = self.path(name).join("inbox");
        for sub in ["tmp", "new", "archive"] {
            fs::create_dir_all(inbox.join(sub)).expect("create inbox");
        }
        let (reports, report_path) = self.report_socket(name);
        let tmux_socket = self.path(&format!("{name}.tmux"));
        let recorder = self.recorder_argv(&report_path, &inbox).join(" ");
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&tmux_socket)
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "bench"])
            .args(["-x", "100", "-y", "50", &recorder])
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        await_ready(&reports, name);
        let send = format!(
            "tmux -S '{}' send-keys -t bench \"You have a new message: $f\" Enter",
            tmux_socket.display()
        );
        let new = inbox.join("new");
        let script = match baseline {
            Baseline::Inotify => format!(
                "inotifywait -m -q -e moved_to --format %f '{}' | while read -r f; do {send}; done",
                new.display()
            ),
            Baseline::Polling => format!(
                "cd '{}' && while sleep 1; do for f in $(ls); do {send}; done; done",
                new.display()
            ),
        };
        let mut watcher = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start the baseline loop");
        // inotifywait prints nothing when its watch is set up; give it time.
        thread::sleep(Duration::from_millis(500));
        let mut phase = Phase(monotonic_nanos() | 1);
        let samples = measure(
            &inbox,
            &reports,
            count,
            || match baseline {
                // Let the previous send-keys process finish.
                Baseline::Inotify => thread::sleep(Duration::from_millis(5)),
                // A random phase against the loop's 1 s tick, else every message
                // would land just after a tick and wait the same time.
                Baseline::Polling => {
                    thread::sleep(Duration::from_millis(phase.next_below(1000)));
                }
            },
            || format!("the baseline {name} never typed it"),
        );
        stop_group(&mut watcher);
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&tmux_socket)
            .arg("kill-server")
            .output();
        samples
    }
}

fn stop_group(child: &mut Child) {
    let _ = kill(Pid::from_raw(-(child.id() as i32)), Signal::SIGTERM);
    let _ = child.wait();
}

// ---- idle cost and memory --------------------------------------------------

/// The `ding {}` block of a careful agent whose adapter (this bench executable)
/// reports the harness active once and then stays silent.
fn active_once_adapter() -> String {
    format!(
        "    delivery \"turn-boundary+fresh-idle\"\n    adapter {{\n      command {:?} \"{ADAPTER_ROLE}\" \"active-once\"\n    }}\n",
        std::env::current_exe()
            .expect("bench executable")
            .display()
            .to_string()
    )
}

impl Bench {
    fn idle_cost(&self, secs: u64) {
        println!(
            "idle cost over {secs} s (voluntary context switches; target 0 with nothing pending):"
        );
        let quiet = self.agent("idle-aggressive", QUIET_HARNESS, "");
        let adapter = active_once_adapter();
        let careful_empty = self.agent("idle-careful-empty", QUIET_HARNESS, &adapter);
        let careful_held = self.agent("idle-careful-held", QUIET_HARNESS, &adapter);
        fs::write(careful_held.inbox.join("new/msg-000000.md"), "held\n").expect("write message");
        careful_held.wait_status("listed the held message", |engine| {
            engine["unread"] == 1 && engine["pending"] == 1
        });
        // Let start-up work (PTY connection, adapter spawn) finish.
        thread::sleep(Duration::from_secs(1));

        let watched = [
            (&quiet, "aggressive, nothing pending", "sidecar.pid"),
            (&quiet, "  (its ding pty host, quiet harness)", "pty.pid"),
            (
                &careful_empty,
                "turn-boundary+fresh-idle, nothing pending, adapter reported active once",
                "sidecar.pid",
            ),
            (
                &careful_held,
                "turn-boundary+fresh-idle, 1 held message, adapter reported active once",
                "sidecar.pid",
            ),
        ];
        let before: Vec<u64> = watched
            .iter()
            .map(|(agent, _, file)| proc_status(agent.pid(file), "voluntary_ctxt_switches"))
            .collect();
        thread::sleep(Duration::from_secs(secs));
        for ((agent, label, file), before) in watched.iter().zip(before) {
            let pid = agent.pid(file);
            let after = proc_status(pid, "voluntary_ctxt_switches");
            println!("  {label:<75} {:6}", after.saturating_sub(before));
        }
        let held = careful_held.status();
        println!(
            "  (the held message: {})",
            held["lines"][0].as_str().unwrap_or("?")
        );
        println!();
        println!("resident memory (VmRSS; target under 8 MiB idle):");
        for (agent, label) in [
            (&quiet, "sidecar idle, aggressive"),
            (&careful_empty, "sidecar idle, turn-boundary+fresh-idle"),
        ] {
            println!(
                "  {label:<75} {:6} KiB",
                proc_status(agent.sidecar_pid(), "VmRSS")
            );
        }
    }

    /// Wake-ups of a whole agent under `turn-boundary+fresh-idle` with a
    /// real kit-based adapter: the demo agent, its PTY host, its sidecar and
    /// `ding demo-adapter`, over `secs` seconds, with nothing pending and
    /// with one message held by a draft in the composer.
    /// `ding up` of one declaration of `agents` careful demo agents (the
    /// README's agent), every one running after it, then `ding down
    /// --decl` of it: the wall time of each command.
    fn fleet(&self, agents: usize) {
        println!(
            "a fleet of {agents} careful demo agents in one declaration (target: up under 5 s, down under 2 s):"
        );
        let dir = self.path("fleet");
        fs::create_dir_all(&dir).expect("fleet dir");
        let mut declaration = String::new();
        for n in 0..agents {
            declaration.push_str(&format!(
                "agent \"fleet-{n:03}\" {{\n  command {BIN:?} \"demo-agent\"\n  inbox \"inbox-{n:03}\"\n  ding {{\n    delivery \"turn-boundary+fresh-idle\"\n    adapter {{\n      command {BIN:?} \"demo-adapter\"\n    }}\n  }}\n}}\n"
            ));
            fs::create_dir_all(dir.join(format!("inbox-{n:03}/new"))).expect("inbox");
        }
        let file = dir.join("fleet.kdl");
        fs::write(&file, declaration).expect("write the fleet");
        let started = Instant::now();
        let up = self.ding().arg("up").arg(&file).output().expect("ding up");
        let up_took = started.elapsed();
        assert!(
            up.status.success(),
            "ding up: {}",
            String::from_utf8_lossy(&up.stderr)
        );
        let listed = self
            .ding()
            .args(["ls", "--json"])
            .output()
            .expect("ding ls");
        let agents_listed: Vec<Value> = serde_json::from_slice(&listed.stdout).expect("ls JSON");
        let running = agents_listed
            .iter()
            .filter(|agent| {
                ["harness", "ptyHost", "sidecar"]
                    .iter()
                    .all(|part| agent[*part]["state"] == "running")
            })
            .count();
        let started = Instant::now();
        let down = self
            .ding()
            .args(["down", "--decl"])
            .arg(&file)
            .output()
            .expect("ding down");
        let down_took = started.elapsed();
        assert!(
            down.status.success(),
            "ding down: {}",
            String::from_utf8_lossy(&down.stderr)
        );
        println!(
            "  ding up FILE          {:6.2} s  ({running} of {agents} agents running after it)",
            up_took.as_secs_f64()
        );
        println!("  ding down --decl FILE {:6.2} s", down_took.as_secs_f64());
    }

    fn whole_agent_idle(&self, secs: u64) {
        println!(
            "whole agent idle over {secs} s (voluntary context switches per minute; demo agent + ding demo-adapter; target 0 with nothing pending):"
        );
        let block = format!(
            "    delivery \"turn-boundary+fresh-idle\"\n    adapter {{\n      command {BIN:?} \"demo-adapter\"\n    }}\n"
        );
        let harness = [BIN, "demo-agent"];
        let empty = self.agent("whole-empty", &harness, &block);
        let held = self.agent("whole-held", &harness, &block);
        for agent in [&empty, &held] {
            agent.wait_status("the adapter up", |engine| {
                engine["adapter"]["state"] == "up"
            });
        }
        // A draft in the composer holds the message (the evidence is wanted
        // the whole time, so the adapter keeps re-reading the screen).
        let typed = self
            .ding()
            .args(["intervene", "whole-held", "a draft", "--no-enter"])
            .status()
            .expect("ding intervene");
        assert!(typed.success());
        fs::write(held.inbox.join("new/msg-000000.md"), "held\n").expect("write message");
        held.wait_status("the message held by the draft", |engine| {
            engine["messages"][0]["hold"]["code"] == "composer-nonempty"
        });
        thread::sleep(Duration::from_secs(1));
        let processes = |agent: &Agent<'_>| -> Vec<(&'static str, i32)> {
            let status = agent.status();
            let adapter = status["adapterPid"].as_i64().unwrap_or(0) as i32;
            let pty = agent.pid("pty.pid");
            let harness = fs::read_to_string(format!("/proc/{pty}/task/{pty}/children"))
                .ok()
                .and_then(|text| text.split_whitespace().next().and_then(|p| p.parse().ok()))
                .unwrap_or(0);
            vec![
                ("pty host", pty),
                ("sidecar", agent.sidecar_pid()),
                ("adapter", adapter),
                ("harness (demo agent)", harness),
            ]
        };
        let watched: Vec<(&str, &str, i32)> =
            [("nothing pending", &empty), ("1 held message", &held)]
                .into_iter()
                .flat_map(|(label, agent)| {
                    processes(agent)
                        .into_iter()
                        .map(move |(role, pid)| (label, role, pid))
                })
                .collect();
        let before: Vec<u64> = watched
            .iter()
            .map(|(_, _, pid)| proc_status(*pid, "voluntary_ctxt_switches"))
            .collect();
        thread::sleep(Duration::from_secs(secs));
        for ((label, role, pid), before) in watched.iter().zip(before) {
            let after = proc_status(*pid, "voluntary_ctxt_switches");
            let per_minute = after.saturating_sub(before) as f64 * 60.0 / secs as f64;
            println!("  {label:<16} {role:<22} {per_minute:8.1}/min");
        }
    }

    /// Memory and startup with `count` unread messages, created in `new/`
    /// while the sidecar is stopped.
    fn many_unread(&self, count: usize) {
        let adapter = active_once_adapter();
        let agent = self.agent("many", QUIET_HARNESS, &adapter);
        agent.stop_sidecar();
        let new = agent.inbox.join("new");
        for index in 0..count {
            fs::write(new.join(format!("msg-{index:06}.md")), "unread\n").expect("write message");
        }
        let started = Instant::now();
        let mut sidecar = self
            .ding()
            .arg("sidecar")
            .arg(&agent.declaration)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ding sidecar");
        let pid = sidecar.id() as i32;
        // The sidecar logs one JSON line per decision on stderr; `scanned`
        // follows the initial scan of `new/`.
        let log = BufReader::new(sidecar.stderr.take().expect("stderr pipe"));
        let (scanned_tx, scanned_rx) = mpsc::channel();
        let reader = thread::spawn(move || {
            for line in log.lines().map_while(Result::ok) {
                if line.contains(r#""decision":"scanned""#) {
                    let _ = scanned_tx.send((started.elapsed(), line));
                }
            }
        });
        let (scanned, line) = scanned_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the sidecar never logged its scan");
        assert!(
            line.contains(&format!(r#""unread":{count}"#)),
            "the scan missed messages: {line}"
        );
        thread::sleep(Duration::from_millis(500));
        let holding = proc_status(pid, "VmRSS");
        println!("with {count} unread messages (turn-boundary+fresh-idle, all held):");
        // What people run, end to end (the command's own start included):
        // `ding status NAME` (a summary), `ding ls`, and the whole listing
        // page by page; then eight of each at once, and the sidecar's
        // memory after them.
        let run = |args: &[&str]| -> (Duration, usize) {
            let asked = Instant::now();
            let out = self.ding().args(args).output().expect("run ding");
            let took = asked.elapsed();
            assert!(
                matches!(out.status.code(), Some(0 | 3)),
                "ding {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            (took, out.stdout.len())
        };
        let median = |args: &[&str]| -> (Duration, usize) {
            let mut runs: Vec<(Duration, usize)> = (0..5).map(|_| run(args)).collect();
            runs.sort();
            runs[2]
        };
        for (label, args) in [
            ("ding status NAME (summary)", &["status", "many"][..]),
            ("ding ls", &["ls"][..]),
            (
                "ding status NAME --all (every one, paged)",
                &["status", "many", "--all"][..],
            ),
            (
                "ding status NAME --json (every one, paged)",
                &["status", "many", "--json"][..],
            ),
        ] {
            let (took, printed) = median(args);
            println!(
                "  {label:<44} {:9.1} ms   ({:.2} MB printed; median of 5)",
                millis(took),
                printed as f64 / 1e6
            );
        }
        let before = holding;
        for args in [&["status", "many"][..], &["status", "many", "--json"][..]] {
            thread::scope(|scope| {
                for _ in 0..8 {
                    scope.spawn(|| run(args));
                }
            });
            println!(
                "  sidecar VmRSS after 8 x `ding {}` at once {:9} KiB   (after startup {before} KiB)",
                args.join(" "),
                proc_status(pid, "VmRSS")
            );
        }
        // Then one document listing every file at once, as `{"op":"status"}`
        // without a window asks.
        let socket = agent.runtime.join("sidecar.sock");
        let asked = Instant::now();
        let status = long_status_query(&socket);
        let answered = asked.elapsed();
        assert_eq!(
            status["engine"]["unread"], count,
            "status lists every message"
        );
        let size = status.to_string().len();
        let after_status = proc_status(pid, "VmRSS");
        let hwm = proc_status(pid, "VmHWM");
        println!(
            "  startup, spawn -> log shows the scan of all {count}     {:9.1} ms",
            millis(scanned)
        );
        println!(
            "  one status query listing all {count} (document {:.1} MB) {:9.1} ms",
            size as f64 / 1e6,
            millis(answered)
        );
        println!("  resident memory after startup (VmRSS)                 {holding:9} KiB");
        println!(
            "  resident memory after that status query (VmRSS)       {after_status:9} KiB   (peak VmHWM {hwm} KiB)"
        );
        let _ = std::io::stdout().flush();
        stop_pid(pid);
        let _ = sidecar.wait();
        let _ = reader.join();
    }
}

// ---- the scripted adapter ----------------------------------------------------

/// The adapter the careful runs use, started by the sidecar as
/// `<this executable> adapter-role MODE`:
///
/// * `keep-ready`: reports `idle` with an empty composer at the PTY's
///   current revision, again after every revision push (a delivery moves the
///   revision, which ends the lease's use) and every second besides, so a
///   fresh lease for the current revision is always waiting; after DING
///   pastes a notice (the downlink's `typed`), the next report names it in
///   `typed` (the composer holds it alone, as a harness that drew the paste
///   would show), which is what the notice's Return waits for;
/// * `active-once`: reports `active` once, then stays silent with its
///   stdout open.
fn scripted_adapter(mode: &str) {
    let Some(socket) = std::env::var_os("DING_PTY_SOCKET") else {
        return;
    };
    let Ok(mut client) = Client::connect(Path::new(&socket)) else {
        return;
    };
    let Ok(status) = client.status() else {
        return;
    };
    let mut stdout = std::io::stdout().lock();
    let mut sequence = 0u64;
    // The downlink, read beside the PTY watch: the request of each notice
    // DING pasted and now waits to submit.
    let (typed_tx, typed_rx) = std::sync::mpsc::channel::<u64>();
    thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { return };
            let Ok(down) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if down["kind"] == "typed"
                && let Some(request) = down["request"].as_u64()
                && typed_tx.send(request).is_err()
            {
                return;
            }
        }
    });
    let mut typed: Option<u64> = None;
    let mut report = |state: &str, revision: u64, typed: Option<u64>| -> bool {
        sequence += 1;
        let mut line = serde_json::json!({
            "v": 1,
            "kind": "activity",
            "session": status.session,
            "incarnation": status.incarnation,
            "generation": status.generation,
            "sequence": sequence,
            "state": state,
            "validForMs": 5000,
            "composer": "empty",
            "revision": revision,
            "reason": "benchmark script",
        });
        if let Some(request) = typed {
            line["composer"] = serde_json::json!("nonempty");
            line["typed"] = serde_json::json!(request);
        }
        writeln!(stdout, "{line}")
            .and_then(|()| stdout.flush())
            .is_ok()
    };
    if mode == "active-once" {
        report("active", status.revision, None);
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    let Ok(mut revision) = client.watch() else {
        return;
    };
    // A second connection, for the host's revision right after the paste.
    let Ok(mut asker) = Client::connect(Path::new(&socket)) else {
        return;
    };
    let mut last_report = Instant::now();
    let mut reported = None;
    // The revision at which the pasted notice was known to be in place,
    // and whether it was named at a later one (drawn) since.
    let mut typed_at = 0;
    let mut named_drawn = false;
    loop {
        // The downlink's `typed` comes after the paste was written: from
        // then on the composer holds the notice (a harness draws it; the
        // recorder draws nothing, and this stands for it) until the
        // revision moves again, by its Return.
        if let Ok(request) = typed_rx.try_recv() {
            let Ok(now) = asker.status() else { return };
            typed = Some(request);
            typed_at = now.revision;
            named_drawn = false;
            revision = revision.max(now.revision);
        }
        let due = last_report.elapsed() >= Duration::from_secs(1);
        if due || reported != Some((revision, typed)) {
            if !report("idle", revision, typed) {
                return;
            }
            reported = Some((revision, typed));
            last_report = Instant::now();
            named_drawn |= typed.is_some() && revision > typed_at;
        }
        match client.next_push(Duration::from_millis(20)) {
            Ok(Some(Push::Revision { revision: seen, .. })) => {
                // Named once drawn, the notice then leaves the composer
                // with the next move: its Return.
                if named_drawn && seen > revision {
                    typed = None;
                    named_drawn = false;
                }
                revision = revision.max(seen);
            }
            Ok(Some(_)) | Err(_) => return,
            Ok(None) => {}
        }
    }
}
