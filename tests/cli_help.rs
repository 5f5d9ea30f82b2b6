//! Every subcommand's help: `-h` and `--help` print its usage and succeed,
//! `--help` says at least as much as `-h`, and help into a closed pipe
//! (`ding pty --help | head -0`) is a quiet success, never a panic.

use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_ding");

/// Every command, the hidden ones included.
const COMMANDS: &[&str] = ding::cli::COMMANDS;

fn help(command: &str, flag: &str) -> String {
    let output = Command::new(BIN)
        .args([command, flag])
        .stdin(Stdio::null())
        .output()
        .expect("run ding");
    assert!(output.status.success(), "ding {command} {flag}: {output:?}");
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

#[test]
fn every_subcommand_prints_its_usage_for_h_and_help() {
    for command in COMMANDS {
        let short = help(command, "-h");
        let long = help(command, "--help");
        let usage = format!("Usage: ding {command}");
        assert!(short.starts_with(&usage), "ding {command} -h: {short}");
        assert!(long.starts_with(&usage), "ding {command} --help: {long}");
        assert!(
            long.len() >= short.len(),
            "ding {command}: --help says less than -h"
        );
    }
}

#[test]
fn help_into_a_closed_pipe_is_a_quiet_success() {
    let top_level = [vec![], vec!["--help"], vec!["help"]];
    let subcommands = COMMANDS.iter().map(|command| vec![*command, "--help"]);
    for args in top_level.into_iter().chain(subcommands) {
        let (read_end, write_end): (OwnedFd, OwnedFd) = nix::unistd::pipe().expect("pipe");
        drop(read_end);
        let output = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::piped())
            .output()
            .expect("run ding");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "ding {args:?} into a closed pipe: {:?} {stderr}",
            output.status
        );
        assert!(!stderr.contains("panicked"), "ding {args:?}: {stderr}");
    }
}
