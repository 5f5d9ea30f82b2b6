//! Signals in every DING process: the long-running ones read the signals
//! they handle through a signalfd, and every child any of them starts
//! begins with a clean signal state.
//!
//! A process inherits its parent's blocked-signal mask and every ignored
//! disposition, across fork and across exec. The PTY host and the sidecar
//! block SIGCHLD, SIGTERM, SIGINT and SIGHUP to read them through a
//! signalfd, and `ding up` itself may run under `nohup` or a supervisor that
//! ignores SIGTERM. Without a reset, a harness or adapter started from there
//! would never receive (blocked: it stays pending) or never act on
//! (ignored) the very signals that stop it; and a sidecar started with
//! SIGTERM ignored would never see `ding down`'s SIGTERM in its signalfd,
//! because the kernel discards an ignored signal instead of queueing it.
//!
//! So there are exactly two rules, each written once here:
//!
//! * [`read_through_signalfd`]: block the signals, set them back to their
//!   default action, then open the signalfd.
//! * [`start_clean`]: every `Command` DING spawns gets, between fork and
//!   exec, every catchable signal at its default action and an empty mask.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

use anyhow::{Context, Result};
use nix::libc;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// What every long-running DING process reads through its signalfd: the
/// end of a child, and the three requests to stop.
pub const HANDLED: [Signal; 4] = [
    Signal::SIGCHLD,
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
];

/// Blocks `signals` for this thread, restores their default action (an
/// ignored signal would never reach the signalfd), and returns a
/// non-blocking, close-on-exec signalfd that reads them.
///
/// Call it before starting any other thread: threads inherit the mask.
pub fn read_through_signalfd(signals: &[Signal]) -> Result<SignalFd> {
    let mut mask = SigSet::empty();
    for &signal in signals {
        mask.add(signal);
    }
    // Block first: a signal arriving from here on waits in the signalfd
    // rather than taking its default action.
    mask.thread_block().context("block signals")?;
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    for &signal in signals {
        // SAFETY: installing SIG_DFL replaces no handler of ours that could
        // be running; these signals are blocked.
        unsafe { sigaction(signal, &default) }
            .with_context(|| format!("reset the action of {}", signal.as_str()))?;
    }
    SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
        .context("create signalfd")
}

/// Makes `command`'s child start with every catchable signal at its default
/// action and nothing blocked, whatever this process inherited or blocked.
/// Runs after any `pre_exec` hook added before it.
pub fn start_clean(command: &mut Command) -> &mut Command {
    // Read before fork: the closure must only call async-signal-safe code.
    let last = libc::SIGRTMAX();
    // SAFETY: the closure calls only sigaction and pthread_sigmask, both
    // async-signal-safe, and touches no memory shared with the parent.
    unsafe { command.pre_exec(move || reset_in_child(last)) }
}

/// Between fork and exec: default actions for signals 1..=`last` (those
/// the C library reserves for itself refuse the change, harmlessly), then
/// an empty mask.
fn reset_in_child(last: libc::c_int) -> io::Result<()> {
    // SAFETY: a zeroed sigaction is a valid SIG_DFL action with no flags
    // and an empty mask.
    let mut default: libc::sigaction = unsafe { std::mem::zeroed() };
    default.sa_sigaction = libc::SIG_DFL;
    for signal in 1..=last {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        // SAFETY: `default` is a valid action; the old action is not wanted.
        unsafe { libc::sigaction(signal, &default, std::ptr::null_mut()) };
    }
    SigSet::empty().thread_set_mask()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    /// The `Sig*` masks of the child's /proc status, as numbers.
    fn child_masks(mut command: Command) -> (u64, u64) {
        let out = command
            .args(["-E", "^Sig(Blk|Ign):", "/proc/self/status"])
            .stdout(Stdio::piped())
            .output()
            .expect("run sh");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mask = |name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
                .unwrap_or_else(|| panic!("no {name} in {text:?}"))
        };
        (mask("SigBlk:"), mask("SigIgn:"))
    }

    /// A child whose parent blocked and ignored TERM, HUP, INT and CHLD
    /// before spawning it, as a supervisor (or `nohup`) might have.
    fn hostile_parent(clean: bool) -> (u64, u64) {
        let mut command = Command::new("grep");
        // SAFETY: signal and sigprocmask calls only, in the forked child.
        unsafe {
            command.pre_exec(|| {
                for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT, libc::SIGCHLD] {
                    libc::signal(signal, libc::SIG_IGN);
                }
                let mut mask = SigSet::empty();
                mask.add(Signal::SIGTERM);
                mask.add(Signal::SIGUSR1);
                mask.thread_block()?;
                Ok(())
            });
        }
        if clean {
            start_clean(&mut command);
        }
        child_masks(command)
    }

    /// Standard signals 1..=31; the C library's own real-time signals may
    /// show as ignored in some sandboxes and are not ours to judge.
    const STANDARD: u64 = 0x7fff_ffff;

    #[test]
    fn a_clean_start_undoes_an_inherited_mask_and_ignored_signals() {
        let (blocked, ignored) = hostile_parent(false);
        assert_ne!(ignored & STANDARD, 0, "the setup ignores signals");
        assert_ne!(blocked & STANDARD, 0, "the setup blocks signals");
        let (blocked, ignored) = hostile_parent(true);
        assert_eq!(blocked & STANDARD, 0, "blocked: {blocked:x}");
        assert_eq!(ignored & STANDARD, 0, "ignored: {ignored:x}");
    }
}
