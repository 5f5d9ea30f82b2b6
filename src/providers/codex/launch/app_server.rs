//! The app-server the launcher runs: started and waited for before the TUI
//! (nothing else runs yet to watch), started again on the same socket from
//! the poll loop without waiting (the loop tries to connect until it
//! listens), and ended by its pid when the launcher exits.

use std::fs::OpenOptions;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use super::super::timing::LISTEN_DEADLINE;
use super::log::Log;
use crate::signals::start_clean;
use crate::wait::{POLL_EVERY, wait_for, wait_until};

/// The app-server the launcher runs, and how to run it again on the same
/// socket.
pub struct AppServer {
    child: Child,
    argv: Vec<String>,
    socket: PathBuf,
    log_path: PathBuf,
    /// Servers started before this one that still ran when it replaced
    /// them: asked to end, reaped when they do.
    retired: Vec<Child>,
}

impl AppServer {
    /// Starts `argv` (which listens on `socket`), its output to `log_path`,
    /// and waits until it listens.
    pub fn start(
        argv: Vec<String>,
        socket: PathBuf,
        log_path: PathBuf,
        log: &mut Log,
    ) -> Result<AppServer> {
        let _ = std::fs::remove_file(&socket);
        let child = spawn_server(&argv, &log_path)?;
        let mut server = AppServer {
            child,
            argv,
            socket,
            log_path,
            retired: Vec::new(),
        };
        log.line(&format!(
            "app-server {} on unix://{}",
            server.child.id(),
            server.socket.display()
        ));
        if let Err(err) = wait_listening(&server.socket, &mut server.child, &server.log_path) {
            end(&mut server.child);
            return Err(err);
        }
        Ok(server)
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts it again on the same socket (it binds over the stale socket
    /// file); the old one, if it still runs, is asked to end. Returns at
    /// once: the loop connects until the new one listens.
    pub fn restart(&mut self) -> Result<u32> {
        let child = spawn_server(&self.argv, &self.log_path)?;
        let mut old = std::mem::replace(&mut self.child, child);
        if matches!(old.try_wait(), Ok(None)) {
            terminate(&old);
            self.retired.push(old);
        }
        Ok(self.child.id())
    }

    /// How the current server exited, once it has (reaped now); servers it
    /// replaced are reaped on the way.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.retired
            .retain_mut(|old| !matches!(old.try_wait(), Ok(Some(_)) | Err(_)));
        self.child.try_wait().ok().flatten()
    }

    /// The last error its log says (why it gave up, in its own words).
    pub fn last_error(&self) -> Option<String> {
        last_error(&std::fs::read_to_string(&self.log_path).unwrap_or_default())
    }

    /// Ends it, and any server it replaced that still runs, by their pids
    /// (the launcher exits next).
    pub fn end_all(&mut self) {
        end(&mut self.child);
        for old in &mut self.retired {
            end(old);
        }
    }
}

fn spawn_server(argv: &[String], log_path: &Path) -> Result<Child> {
    let server_log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .context("open the app-server log")?;
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(server_log.try_clone().context("app-server log")?)
        .stderr(server_log);
    // The launcher reads SIGCHLD through a signalfd (blocked); Codex must
    // not inherit that.
    start_clean(&mut command)
        .spawn()
        .with_context(|| format!("start {} app-server", argv[0]))
}

/// Waits until the app-server accepts connections on `socket`. If it exits
/// first, says why in its own words (the last `Error:` line of its log),
/// since the TUI's terminal is the only place a person looks.
fn wait_listening(socket: &Path, server: &mut Child, log: &Path) -> Result<()> {
    let listening = wait_for(LISTEN_DEADLINE, POLL_EVERY, || {
        if UnixStream::connect(socket).is_ok() {
            return Some(Ok(()));
        }
        if let Ok(Some(status)) = server.try_wait() {
            let said = std::fs::read_to_string(log).unwrap_or_default();
            let why = last_error(&said).map_or(String::new(), |error| format!(": {error}"));
            return Some(Err(anyhow!(
                "the app-server exited before it listened ({status}){why} (log: {})",
                log.display()
            )));
        }
        None
    });
    listening.unwrap_or_else(|| {
        Err(anyhow!(
            "the app-server did not listen on {} within {:?}",
            socket.display(),
            LISTEN_DEADLINE
        ))
    })
}

/// The last line of a Rust program's log that reports its fatal error.
pub fn last_error(log: &str) -> Option<String> {
    log.lines()
        .rev()
        .find_map(|line| line.strip_prefix("Error: "))
        .map(|error| crate::escape::escape_bounded(error.trim(), 300))
}

/// Asks a child to end (`SIGTERM`).
pub fn terminate(child: &Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
}

/// Ends a child by its pid: SIGTERM, then SIGKILL after 3 s.
pub fn end(child: &mut Child) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    terminate(child);
    if wait_until(Duration::from_secs(3), || {
        matches!(child.try_wait(), Ok(Some(_)))
    }) {
        return;
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_server_that_gives_up_is_quoted_in_its_own_words() {
        // As Codex 0.169.0 logged it when the last incarnation's app-server
        // still held its control socket.
        let log = "WARNING: proceeding\n\u{1b}[31mERROR\u{1b}[0m bubblewrap\n\
                   Error: app-server control socket is already in use at /tmp/codex-daemon-0/fb83\n\n\
                   Stack backtrace:\n   0: <unknown>\n";
        assert_eq!(
            last_error(log).as_deref(),
            Some("app-server control socket is already in use at /tmp/codex-daemon-0/fb83")
        );
        assert_eq!(
            last_error("Error: \u{1b}]52;c;x\u{7}").as_deref(),
            Some("\\u{1b}]52;c;x\\u{7}"),
            "escaped as everything DING shows"
        );
        assert_eq!(last_error("no error here\n"), None);
    }
}
