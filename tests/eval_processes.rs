//! The evaluation's process finder (`src/eval/processes.rs`, compiled into
//! the tests' support): a process is found by a variable of its
//! environment and ended by its pid.

mod support;

use std::process::Command;
use std::time::Duration;

use ding::wait::{POLL_EVERY, wait_for};
use support::processes::{end, with_variable};

#[test]
fn a_process_is_found_by_its_variable_and_ended_by_its_pid() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new("sleep")
        .arg("600")
        .env("DING_EVAL_TEST_MARK", dir.path())
        .spawn()
        .expect("spawn");
    let pid = child.id() as i32;
    // `spawn` returns once the child is in `execve`, which may be before
    // its new environment is readable: wait for that event.
    let found = wait_for(Duration::from_secs(10), POLL_EVERY, || {
        Some(with_variable("DING_EVAL_TEST_MARK", dir.path())).filter(|found| !found.is_empty())
    })
    .unwrap_or_default();
    assert_eq!(found.iter().map(|f| f.pid).collect::<Vec<_>>(), [pid]);
    assert_eq!(found[0].command, "sleep 600");
    let left = end(&[pid], Duration::from_secs(5));
    assert!(left.is_empty());
    let _ = child.wait();
    assert!(with_variable("DING_EVAL_TEST_MARK", dir.path()).is_empty());
}
