//! Shared harness for the `ding pty` integration tests: start the real
//! binary on a private socket in a temp dir, talk to it with the library's
//! blocking client, and wait on watch pushes instead of sleeping.

use std::fs;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use ding::core::identity::Identity;
use ding::pty::client::Client;
use ding::pty::transport::WireStep;
use ding::pty::wire::{FrameKind, HostStatus, Snapshot, push_frame};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

pub const BIN: &str = env!("CARGO_BIN_EXE_ding");
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A running `ding pty` host, killed (SIGTERM, by pid) when dropped.
pub struct Host {
    pub process: Child,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub stderr: PathBuf,
}

impl Host {
    /// Starts `ding pty` with `options` before `--` and `command` after it,
    /// and waits until the socket answers `status`.
    pub fn start(options: &[&str], command: &[&str]) -> Host {
        let dir = tempfile::tempdir().expect("tempdir");
        let socket = dir.path().join("run/pty.sock");
        let stderr = dir.path().join("host.stderr");
        let process = Command::new(BIN)
            .arg("pty")
            .arg("--socket")
            .arg(&socket)
            .args(["--session", "test.agent"])
            .arg("--cwd")
            .arg(dir.path())
            .args(options)
            .arg("--")
            .args(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("spawn ding pty");
        let host = Host {
            process,
            dir,
            socket,
            stderr,
        };
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(mut client) = Client::connect(&host.socket)
                && client.status().is_ok()
            {
                return host;
            }
            assert!(
                Instant::now() < deadline,
                "host did not come up: {}",
                host.stderr_text()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// A host whose child records every byte it reads, raw, into `out`.
    /// Returns once the child is in raw mode.
    pub fn recording() -> Host {
        let host = Host::start(
            &[],
            &["sh", "-c", "stty raw -echo; printf READY; exec cat > out"],
        );
        host.wait_screen(|s| s.rows[0].contains("READY"));
        host
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.socket).expect("connect")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    pub fn identity(&self) -> (Identity, u64) {
        let status = self.client().status().expect("status");
        (identity_of(&status), status.revision)
    }

    /// Waits until the snapshot satisfies `ready`, re-checking on every
    /// revision push; panics with the last screen after `PATIENCE`.
    pub fn wait_screen(&self, ready: impl Fn(&Snapshot) -> bool) -> Snapshot {
        self.wait_screen_within(PATIENCE, ready)
    }

    /// `wait_screen` with a longer patience, for tests that push megabytes
    /// through the terminal on a loaded machine.
    pub fn wait_screen_within(
        &self,
        patience: Duration,
        ready: impl Fn(&Snapshot) -> bool,
    ) -> Snapshot {
        wait_snapshot(&self.socket, patience, "the awaited screen", ready)
    }

    /// Waits until the file `name` in the host's cwd has at least `len` bytes.
    pub fn wait_file(&self, name: &str, len: usize) -> Vec<u8> {
        let path = self.path(name);
        let deadline = Instant::now() + PATIENCE;
        loop {
            let bytes = fs::read(&path).unwrap_or_default();
            if bytes.len() >= len {
                return bytes;
            }
            assert!(
                Instant::now() < deadline,
                "{} has {} bytes, wanted {len}: {:?}",
                path.display(),
                bytes.len(),
                String::from_utf8_lossy(&bytes)
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits until the file `name` contains `needle`; returns its bytes.
    pub fn wait_until_contains(&self, name: &str, needle: &str) -> Vec<u8> {
        let path = self.path(name);
        let deadline = Instant::now() + PATIENCE;
        loop {
            let bytes = fs::read(&path).unwrap_or_default();
            if String::from_utf8_lossy(&bytes).contains(needle) {
                return bytes;
            }
            assert!(
                Instant::now() < deadline,
                "{} never contained {needle:?}: {:?}",
                path.display(),
                String::from_utf8_lossy(&bytes)
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Waits for the host process to end; `None` after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.process.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn signal(&self, signal: Signal) {
        let pid = Pid::from_raw(i32::try_from(self.process.id()).expect("pid"));
        kill(pid, signal).expect("signal host");
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if let Ok(None) = self.process.try_wait() {
            self.signal(Signal::SIGTERM);
            let _ = self.wait_exit(Duration::from_secs(5));
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// Waits until the snapshot of the host at `socket` satisfies `ready`,
/// re-checking on every revision push; panics with the last screen after
/// `patience`, saying it waited for `what`.
pub fn wait_snapshot(
    socket: &Path,
    patience: Duration,
    what: &str,
    ready: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    let mut watcher = Client::connect(socket).expect("connect");
    let mut revision = watcher.watch().expect("watch");
    let mut reader = Client::connect(socket).expect("connect");
    let deadline = Instant::now() + patience;
    loop {
        let snapshot = reader.snapshot().expect("snapshot");
        if ready(&snapshot) {
            return snapshot;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(
            !left.is_zero(),
            "the screen never showed {what}:\n{}",
            snapshot.rows.join("\n")
        );
        // The watch began before the snapshot, so any change after it is a
        // revision above the snapshot's.
        if let Some(seen) = watcher
            .wait_revision_above(revision.max(snapshot.revision), left)
            .expect("watch")
        {
            revision = seen;
        }
    }
}

pub fn identity_of(status: &HostStatus) -> Identity {
    Identity {
        session: status.session.clone(),
        incarnation: status.incarnation.clone(),
        generation: status.generation.clone(),
    }
}

pub fn write(bytes: &[u8]) -> WireStep {
    WireStep::Write(bytes.to_vec())
}

/// Polls `check` every few milliseconds until it is true or `PATIENCE` ends.
pub fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(5));
    }
}

pub fn file_exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// An attach connection that types like a person: each call sends one data
/// frame.
pub struct Typist(UnixStream);

impl Typist {
    pub fn new(host: &Host) -> Typist {
        let (stream, _) = host.client().attach().expect("attach");
        Typist(stream)
    }

    pub fn type_bytes(&mut self, bytes: &[u8]) {
        let mut frame = Vec::new();
        push_frame(&mut frame, FrameKind::Data, bytes);
        self.0.write_all(&frame).expect("type");
    }
}
