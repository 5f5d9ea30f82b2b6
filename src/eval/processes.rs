//! Finding and ending, by pid, every process a trial started.
//!
//! Every process of a trial inherits the trial's private
//! `XDG_RUNTIME_DIR` (the `ding` processes, the harness, its children, and
//! a daemon the harness starts that outlives it), which no other process
//! has. So the trial's processes are exactly the live ones whose
//! environment holds that variable with that value; each is ended by its
//! own pid, SIGTERM first, SIGKILL for what is still alive after a grace.
//!
//! The real-pane tests, which drive `ding-eval` from outside, compile this
//! very file into their support (`tests/support/mod.rs`) to find what a
//! trial or a harness left; its test is theirs (`tests/eval_processes.rs`).

use std::fs;
use std::path::Path;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use ding::wait::wait_until;

/// A live process of the trial.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    pub pid: i32,
    /// Its command line, for the report.
    pub command: String,
}

/// Live processes (zombies excluded) whose environment has `NAME=VALUE`.
///
/// A process in the middle of `execve` has no readable environment for a
/// moment (the kernel installs the new memory before it writes the
/// environment there, and a `vfork` parent already runs again), so a
/// caller that must find everything asks again after ending what it found,
/// as the trial's teardown does.
pub fn with_variable(name: &str, value: &Path) -> Vec<Found> {
    let mut marker = format!("{name}=").into_bytes();
    marker.extend_from_slice(value.as_os_str().as_encoded_bytes());
    let me = std::process::id() as i32;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me && alive(pid))
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|&b| b == 0).any(|var| var == marker))
        })
        .map(|pid| Found {
            pid,
            command: command_line(pid),
        })
        .collect()
}

fn command_line(pid: i32) -> String {
    let bytes = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = bytes
        .split(|&b| b == 0)
        .filter(|word| !word.is_empty())
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect();
    words.join(" ")
}

/// Whether `pid` is alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
        && !fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
}

/// Ends each of `pids`: SIGTERM, then SIGKILL for those still alive after
/// `grace`. Returns those that were still alive when it gave up (none,
/// unless a process survives SIGKILL).
pub fn end(pids: &[i32], grace: Duration) -> Vec<i32> {
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    }
    let alive_of =
        |pids: &[i32]| -> Vec<i32> { pids.iter().copied().filter(|&p| alive(p)).collect() };
    wait_until(grace, || alive_of(pids).is_empty());
    for pid in alive_of(pids) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    wait_until(Duration::from_secs(2), || alive_of(pids).is_empty());
    alive_of(pids)
}
