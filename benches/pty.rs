//! `ding pty` figures, side by side with tmux in the same run:
//!
//! * output throughput: a program writes 200 MB of 80-column lines; the time
//!   is taken inside the terminal (from before the first byte until the
//!   writer's last write returned), the same way for both hosts;
//! * send-if round trip over 10,000 requests on an idle terminal (and, for
//!   scale, `tmux send-keys`, which costs a process per call);
//! * resident memory of the host with a 100x50 screen.
//!
//! A measurement, not a test: it prints figures and never fails on them.
//! tmux figures are skipped with a note when tmux is not installed.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ding::core::identity::Identity;
use ding::pty::client::Client;
use ding::pty::transport::WireStep;
use ding::pty::wire::SendIfReply;

const BIN: &str = env!("CARGO_BIN_EXE_ding");
const OUTPUT_BYTES: u64 = 200_000_000;
const ROUND_TRIPS: usize = 10_000;
const TMUX_ROUND_TRIPS: usize = 300;
const SNAPSHOTS: usize = 1_000;

/// Writes OUTPUT_BYTES of text and records the nanoseconds it took in `t`.
fn writer_script() -> String {
    let line = "x".repeat(79);
    format!(
        "start=$(date +%s%N); yes {line} | head -c {OUTPUT_BYTES}; end=$(date +%s%N); \
         echo $((end - start)) > t"
    )
}

fn main() {
    // `cargo test --all-targets` runs bench targets too, unoptimized and
    // without `--bench`; the figures would be meaningless and slow to get.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("pty bench: skipped (run `make bench` for figures)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tmux = tmux_available();
    println!("ding pty benchmark (release build, 100x50 screen)");
    println!();

    let ding_mbps = ding_throughput(dir.path());
    print!(
        "output throughput, {} MB:  ding pty {ding_mbps:8.1} MB/s",
        OUTPUT_BYTES / 1_000_000
    );
    if tmux {
        let tmux_mbps = tmux_throughput(dir.path());
        println!(
            "   tmux {tmux_mbps:8.1} MB/s   ratio ding/tmux {:.2}",
            ding_mbps / tmux_mbps
        );
    } else {
        println!("   (tmux not installed)");
    }

    let (p50, p99, rss_kib) = ding_round_trips(dir.path());
    println!(
        "send-if round trip, {ROUND_TRIPS} on an idle terminal:  p50 {:7.1} us   p99 {:7.1} us",
        micros(p50),
        micros(p99)
    );
    if tmux {
        let (p50, p99, server_kib) = tmux_round_trips(dir.path());
        println!(
            "tmux send-keys round trip, {TMUX_ROUND_TRIPS} (a process per call):  p50 {:7.1} us   p99 {:7.1} us",
            micros(p50),
            micros(p99)
        );
        println!(
            "resident memory, 100x50 screen:  ding pty host {rss_kib} KiB   tmux server {server_kib} KiB"
        );
    } else {
        println!("resident memory, 100x50 screen:  ding pty host {rss_kib} KiB");
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ding_host(
    dir: &Path,
    name: &str,
    extra: &[&str],
    command: &[&str],
) -> (Child, std::path::PathBuf) {
    let socket = dir.join(format!("run-{name}/pty.sock"));
    let child = Command::new(BIN)
        .args(["pty", "--session", "bench", "--size", "100x50", "--socket"])
        .arg(&socket)
        .arg("--cwd")
        .arg(dir)
        .args(extra)
        .arg("--")
        .args(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ding pty");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Client::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "ding pty did not start");
        thread::sleep(Duration::from_millis(5));
    }
    (child, socket)
}

fn ding_throughput(dir: &Path) -> f64 {
    let _ = fs::remove_file(dir.join("t"));
    let script = writer_script();
    let (mut host, _) = ding_host(dir, "tp", &["--exit-with-child=0"], &["sh", "-c", &script]);
    host.wait().expect("host ends with its child");
    mbps(&dir.join("t"))
}

fn mbps(timing: &Path) -> f64 {
    let nanos: f64 = fs::read_to_string(timing)
        .expect("timing file")
        .trim()
        .parse()
        .expect("nanoseconds");
    OUTPUT_BYTES as f64 / 1e6 / (nanos / 1e9)
}

fn ding_round_trips(dir: &Path) -> (Duration, Duration, u64) {
    let (mut host, socket) = ding_host(
        dir,
        "rt",
        &[],
        &[
            "sh",
            "-c",
            "stty raw -echo; printf ready; exec cat > /dev/null",
        ],
    );
    let mut client = Client::connect(&socket).expect("connect");
    // Wait until the child is in raw mode and quiet.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client.snapshot().expect("snapshot").rows[0].contains("ready") {
        assert!(Instant::now() < deadline, "child never got ready");
        thread::sleep(Duration::from_millis(5));
    }
    let status = client.status().expect("status");
    let identity = Identity {
        session: status.session,
        incarnation: status.incarnation,
        generation: status.generation,
    };
    let mut revision = status.revision;
    let steps = [WireStep::Write(b"x".to_vec())];
    let mut samples = Vec::with_capacity(ROUND_TRIPS);
    let mut conflicts = 0;
    for _ in 0..ROUND_TRIPS {
        let started = Instant::now();
        let reply = client
            .send_if(&identity, revision, &steps)
            .expect("send-if");
        samples.push(started.elapsed());
        match reply {
            SendIfReply::Sent { revision: now, .. } => revision = now,
            SendIfReply::Conflict { revision: now } => {
                conflicts += 1;
                revision = now;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    if conflicts > 0 {
        println!("(note: {conflicts} round trips conflicted on an idle terminal)");
    }
    // Snapshots of the 100x50 screen, each at a new revision (so none is
    // served from the host's per-revision cache).
    let mut snapshots = Vec::with_capacity(SNAPSHOTS);
    for _ in 0..SNAPSHOTS {
        if let SendIfReply::Sent { revision: now, .. } = client
            .send_if(&identity, revision, &steps)
            .expect("send-if")
        {
            revision = now;
        }
        let started = Instant::now();
        let snapshot = client.snapshot().expect("snapshot");
        snapshots.push(started.elapsed());
        revision = revision.max(snapshot.revision);
    }
    let (snap50, snap99) = percentiles(&mut snapshots);
    println!(
        "snapshot round trip, 100x50, {SNAPSHOTS} at fresh revisions:  p50 {:7.1} us   p99 {:7.1} us",
        micros(snap50),
        micros(snap99)
    );
    let rss = rss_kib(host.id());
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = host.wait();
    let (p50, p99) = percentiles(&mut samples);
    (p50, p99, rss)
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.50), at(0.99))
}

fn rss_kib(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

// ---- tmux, on a private server -------------------------------------------

fn tmux_available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn tmux(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .arg("-S")
        .arg(dir.join("tmux.sock"))
        .args(["-f", "/dev/null"])
        .args(args)
        .output()
        .expect("run tmux")
}

/// A detached 100x50 tmux session running `sh -c script`, like the ding host.
fn tmux_pane(dir: &Path, script: &str) {
    let out = tmux(
        dir,
        &[
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "50",
            "sh",
            "-c",
            script,
        ],
    );
    assert!(
        out.status.success(),
        "tmux: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tmux_throughput(dir: &Path) -> f64 {
    let _ = fs::remove_file(dir.join("t"));
    let script = format!(
        "cd {}; {}; tmux -S {}/tmux.sock wait-for -S done",
        dir.display(),
        writer_script(),
        dir.display()
    );
    tmux_pane(dir, &script);
    tmux(dir, &["wait-for", "done"]);
    let result = mbps(&dir.join("t"));
    tmux(dir, &["kill-server"]);
    result
}

fn tmux_round_trips(dir: &Path) -> (Duration, Duration, u64) {
    tmux_pane(dir, "stty raw -echo; exec cat > /dev/null");
    let mut samples = Vec::with_capacity(TMUX_ROUND_TRIPS);
    for _ in 0..TMUX_ROUND_TRIPS {
        let started = Instant::now();
        let out = tmux(dir, &["send-keys", "-l", "x"]);
        samples.push(started.elapsed());
        assert!(out.status.success());
    }
    let pid = String::from_utf8_lossy(&tmux(dir, &["display-message", "-p", "#{pid}"]).stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    let rss = rss_kib(pid);
    tmux(dir, &["kill-server"]);
    let (p50, p99) = percentiles(&mut samples);
    (p50, p99, rss)
}
