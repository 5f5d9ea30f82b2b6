//! The adapter's process group as the other `ding` processes see it: the
//! sidecar records the group in `adapter.pid` while an adapter runs, and
//! `ding down` and `ding up` end a group that a sidecar left behind (it was
//! killed before it could stop its adapter).
//!
//! A recorded number is only signalled while a live member of that group
//! still carries this agent's `DING_SIDECAR_SOCKET` in its environment: a
//! process group number is free for reuse once its group is empty, and a
//! reused one belongs to someone else.

use std::fs;
use std::path::Path;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::adapter_proc::ADAPTER_KILL_WAIT;
use super::paths::AgentPaths;
use crate::wait::wait_until;

/// Records that an adapter leads process group `group`.
pub fn record(paths: &AgentPaths, group: u32) {
    // Best effort: without the record only the orphan clean-up is lost.
    let _ = fs::write(paths.adapter_pid(), format!("{group}\n"));
}

/// Forgets the record (the group is gone).
pub fn forget(paths: &AgentPaths) {
    let _ = fs::remove_file(paths.adapter_pid());
}

/// Kills what is left of a recorded adapter group that still belongs to
/// this agent, and forgets the record. Returns the group if it killed one.
/// Call it only when no sidecar of this agent runs.
pub fn end_orphaned(paths: &AgentPaths) -> Option<i32> {
    let recorded = fs::read_to_string(paths.adapter_pid()).ok();
    forget(paths);
    let group: i32 = recorded?.trim().parse().ok().filter(|&g| g > 1)?;
    let mut marker = b"DING_SIDECAR_SOCKET=".to_vec();
    marker.extend_from_slice(paths.sidecar_socket().as_os_str().as_encoded_bytes());
    if !has_live_member(group, Some(&marker)) {
        return None;
    }
    let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    wait_until(ADAPTER_KILL_WAIT, || !has_live_member(group, None));
    Some(group)
}

/// Whether a live (not zombie) process in process group `group` exists,
/// with the environment entry `marker` (`KEY=VALUE`, bytes) if one is given.
fn has_live_member(group: i32, marker: Option<&[u8]>) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| process_group_of(pid) == Some(group))
        .any(|pid| {
            marker.is_none_or(|marker| {
                fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|environ| environ.split(|&b| b == 0).any(|entry| entry == marker))
            })
        })
}

/// The process group of a live (not zombie) process, from /proc.
fn process_group_of(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
    // After the parenthesised command name: state, ppid, pgrp, ...
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    if state.starts_with(['Z', 'X']) {
        return None;
    }
    fields.nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sidecar::paths::DirsEnv;
    use std::os::unix::process::CommandExt;
    use std::process::Command;
    use std::time::Duration;

    fn paths_in(dir: &Path) -> AgentPaths {
        let env = DirsEnv::from_lookup(
            |key| match key {
                "XDG_RUNTIME_DIR" => Some(dir.join("run").into()),
                "XDG_STATE_HOME" => Some(dir.join("state").into()),
                _ => None,
            },
            nix::unistd::geteuid().as_raw(),
        );
        let paths = AgentPaths::resolve("orphan", &env).expect("paths");
        paths.ensure_runtime_dir().expect("runtime dir");
        paths
    }

    /// `sleep 30` in its own group, once it runs (until exec, a child's
    /// environment is still its parent's).
    fn sleeper(env: Option<(&str, &Path)>) -> std::process::Child {
        let mut command = Command::new("sleep");
        command.arg("30").process_group(0);
        if let Some((key, value)) = env {
            command.env(key, value);
        }
        let child = command.spawn().expect("spawn sleep");
        let cmdline = format!("/proc/{}/cmdline", child.id());
        assert!(wait_until(Duration::from_secs(10), || {
            fs::read(&cmdline).is_ok_and(|line| line.starts_with(b"sleep\0"))
        }));
        child
    }

    #[test]
    fn an_orphaned_group_is_killed_only_if_it_is_this_agents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = paths_in(dir.path());

        // Someone else's group under a recorded number: left alone.
        let mut stranger = sleeper(None);
        record(&paths, stranger.id());
        assert_eq!(end_orphaned(&paths), None);
        assert!(stranger.try_wait().expect("try_wait").is_none());
        assert!(!paths.adapter_pid().exists(), "the record is forgotten");
        stranger.kill().expect("kill");
        stranger.wait().expect("reap");

        // This agent's adapter, left behind: killed.
        let mut orphan = sleeper(Some(("DING_SIDECAR_SOCKET", &paths.sidecar_socket())));
        record(&paths, orphan.id());
        assert_eq!(end_orphaned(&paths), Some(orphan.id() as i32));
        let status = orphan.wait().expect("reap");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert_eq!(end_orphaned(&paths), None, "nothing recorded any more");
    }
}
