//! Everything a harness starts is the PTY host's to end.
//!
//! A harness's job can outlive its process group: a tool's command that
//! double-forks, a daemon that calls `setsid`, a sandbox helper. Killing the
//! harness's group leaves those running after `ding down`. So the host is
//! a child subreaper (`PR_SET_CHILD_SUBREAPER`): an orphan anywhere below
//! it is re-parented to it instead of to init. The host reaps those
//! adopted children as they exit, and when a job ends (after the same
//! grace as the harness's group) it kills every process still below it.
//!
//! This is the process shell's business (it reads `/proc` and sends
//! signals); no decision lives here.

use std::collections::BTreeSet;
use std::fs;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::wait::wait_until;

/// Makes this process the subreaper of everything it starts from now on.
pub fn adopt_orphans() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// The direct children of `pid`, from every thread's `children` list
/// (empty when `/proc` cannot say).
pub fn children_of(pid: Pid) -> BTreeSet<Pid> {
    let mut children = BTreeSet::new();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return children;
    };
    for task in tasks.flatten() {
        let Ok(list) = fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        children.extend(
            list.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .map(Pid::from_raw),
        );
    }
    children
}

/// Every process below `pid`, children before their own children.
pub fn descendants_of(pid: Pid) -> Vec<Pid> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for child in children_of(parent) {
            if seen.insert(child) {
                found.push(child);
                next.push(child);
            }
        }
    }
    found
}

/// Reaps every exited child of this process except `keep` (the harness,
/// which the host reaps itself, late, so that its pid keeps naming its
/// process group): the orphans it adopted. Returns how many it reaped.
pub fn reap_adopted(keep: Pid) -> usize {
    let me = Pid::this();
    children_of(me)
        .into_iter()
        .filter(|&child| child != keep)
        .filter(|&child| {
            matches!(
                waitpid(child, Some(WaitPidFlag::WNOHANG)),
                Ok(status) if status.pid().is_some()
            )
        })
        .count()
}

/// Kills every process still below this one with SIGKILL (the end of a
/// job, once its harness is reaped: what its group's kill did not reach),
/// and reaps the children among them for at most `patience` (a process
/// killed while in uninterruptible sleep dies only when it wakes; the next
/// SIGCHLD reaps it then). Returns the pids it killed.
pub fn kill_what_remains(patience: Duration) -> Vec<Pid> {
    let me = Pid::this();
    let remaining = descendants_of(me);
    for &pid in &remaining {
        let _ = kill(pid, Signal::SIGKILL);
    }
    if !remaining.is_empty() {
        // A killed child's own children come back to this subreaper as
        // they die, so this reaps until no child is left.
        wait_until(patience, || {
            reap_adopted(Pid::from_raw(0));
            children_of(me).is_empty()
        });
    }
    remaining
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn a_childs_children_are_its_descendants() {
        // sh, and below it a sleep it waits for.
        let mut sh = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(sh.stdout.take().expect("stdout")),
            &mut line,
        )
        .expect("the sleep's pid");
        let sleep = Pid::from_raw(line.trim().parse().expect("pid"));
        let sh_pid = Pid::from_raw(sh.id() as i32);
        assert!(children_of(Pid::this()).contains(&sh_pid));
        assert_eq!(descendants_of(sh_pid), vec![sleep]);
        let _ = kill(sleep, Signal::SIGKILL);
        let _ = sh.wait();
    }
}
