//! The child's life and the host's: environment, exit and reaping,
//! `--exit-with-child`, terminating signals, and attach (protocol and the
//! real `ding attach` in a terminal).

mod support;

use std::fs;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use ding::pty::screen::Screen;
use ding::pty::wire::{
    ChildState, FrameKind, Parsed, Push, SendIfReply, Size, parse_frame, push_frame, resize_payload,
};
use nix::pty::openpty;
use nix::sys::signal::Signal;
use nix::sys::termios::{LocalFlags, tcgetattr};
use support::{BIN, Host, PATIENCE, eventually, file_exists, write};

#[test]
fn child_environment_carries_identity_and_paths() {
    let host = Host::start(
        &["--inbox", "/srv/inbox", "--runtime-dir", "/srv/run"],
        &[
            "sh",
            "-c",
            "printf '%s\\n' \"$DING_SESSION\" \"$DING_INCARNATION\" \"$DING_GENERATION\" \
             \"$DING_INBOX\" \"$DING_RUNTIME_DIR\" \"$DING_PTY_SOCKET\"; exec cat",
        ],
    );
    let screen = host.wait_screen(|s| !s.rows[5].is_empty());
    let status = host.client().status().expect("status");
    assert_eq!(screen.rows[0], "test.agent");
    assert_eq!(screen.rows[1], status.incarnation);
    assert_eq!(screen.rows[2], status.generation);
    assert_eq!(screen.rows[3], "/srv/inbox");
    assert_eq!(screen.rows[4], "/srv/run");
    assert_eq!(screen.rows[5], host.socket.to_string_lossy());
}

#[test]
fn child_exit_is_reaped_and_reported() {
    let mut host = Host::start(&[], &["sh", "-c", "printf bye; read x; exit 7"]);
    host.wait_screen(|s| s.rows[0] == "bye");
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    let status = host.client().status().expect("status");
    let ChildState::Running { pid } = status.child else {
        panic!("child should run: {status:?}");
    };
    host.client().send(&[write(b"\r")]).expect("send");
    let exit = loop {
        match watcher.next_push(PATIENCE).expect("push") {
            Some(Push::Exit { child, .. }) => break child,
            Some(_) => {}
            None => panic!("no exit push"),
        }
    };
    assert_eq!(exit, ChildState::Exited { code: 7 });
    // Reaped once the rest of its job has had the restart grace: no zombie
    // left behind under the host.
    eventually("the exited child reaped", || {
        !file_exists(&std::path::Path::new("/proc").join(pid.to_string()))
    });
    // Still serving, with the exit status and the last screen.
    let status = host.client().status().expect("status");
    assert_eq!(status.child, ChildState::Exited { code: 7 });
    assert_eq!(host.client().snapshot().expect("snapshot").rows[0], "bye");
    let identity = support::identity_of(&status);
    let reply = host
        .client()
        .send_if(&identity, status.revision, &[write(b"x")])
        .expect("send-if");
    assert!(matches!(reply, SendIfReply::Exited { .. }), "{reply:?}");
    assert!(
        host.wait_exit(Duration::from_millis(100)).is_none(),
        "host keeps serving"
    );
}

#[test]
fn exit_with_child_ends_the_host_after_grace() {
    let mut host = Host::start(
        &["--exit-with-child=300ms"],
        &["sh", "-c", "read x; exit 3"],
    );
    host.client().send(&[write(b"\r")]).expect("send");
    let status = host.wait_exit(PATIENCE).expect("host ended");
    assert_eq!(status.code(), Some(3), "the host reports the child's code");
    assert!(!file_exists(&host.socket), "socket removed");
}

#[test]
fn sigterm_hangs_up_the_child_and_removes_the_socket() {
    let mut host = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "trap 'echo hup > hung-up; exit 0' HUP; printf ready; while :; do sleep 0.05; done",
        ],
    );
    host.wait_screen(|s| s.rows[0] == "ready");
    host.signal(Signal::SIGTERM);
    let status = host.wait_exit(PATIENCE).expect("host ended");
    assert_eq!(status.code(), Some(0));
    assert!(!file_exists(&host.socket));
    eventually("the child to get SIGHUP", || {
        file_exists(&host.path("hung-up"))
    });
}

#[test]
fn attach_protocol_redraws_then_streams_and_detaches() {
    let host = Host::recording();
    let (mut stream, mut buf) = host.client().attach().expect("attach");
    stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
    let mut read_frame = |buf: &mut Vec<u8>| loop {
        if let Parsed::Frame {
            kind,
            payload,
            consumed,
        } = parse_frame(buf)
        {
            buf.drain(..consumed);
            return (kind, payload);
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "host closed");
        buf.extend_from_slice(&chunk[..n]);
    };
    let (kind, redraw) = read_frame(&mut buf);
    assert_eq!(kind, FrameKind::Data);
    let mut screen = Screen::new(Size { cols: 80, rows: 24 });
    screen.handle_output(&redraw);
    assert_eq!(screen.snapshot(0).rows[0], "READY");
    assert_eq!(host.client().status().expect("status").attached, 1);
    let mut frames = Vec::new();
    push_frame(&mut frames, FrameKind::Data, b"typed");
    push_frame(
        &mut frames,
        FrameKind::Resize,
        &resize_payload(Size { cols: 90, rows: 20 }),
    );
    push_frame(&mut frames, FrameKind::Detach, &[]);
    let mut writer = host.client().attach().expect("second attach").0;
    writer.write_all(&frames).expect("frames");
    assert_eq!(host.wait_file("out", 5), b"typed");
    eventually("the resize", || {
        host.client().status().expect("status").size == Size { cols: 90, rows: 20 }
    });
    // The detaching connection is closed by the host; the first stays.
    let mut rest = Vec::new();
    writer.set_read_timeout(Some(PATIENCE)).expect("timeout");
    writer.read_to_end(&mut rest).expect("closed by host");
    eventually("one attached client", || {
        host.client().status().expect("status").attached == 1
    });
}

/// A terminal for `ding attach`: the test holds the master side and reads
/// everything attach draws into a shared buffer.
struct Terminal {
    master: OwnedFd,
    slave: OwnedFd,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    fn new(size: Size) -> Terminal {
        let pty = openpty(Some(&ding::pty::child::winsize(size)), None).expect("openpty");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let reader_fd = pty.master.try_clone().expect("dup");
        let sink = Arc::clone(&seen);
        thread::spawn(move || {
            let mut file = fs::File::from(reader_fd);
            let mut chunk = [0u8; 4096];
            while let Ok(n) = file.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock().expect("lock").extend_from_slice(&chunk[..n]);
            }
        });
        Terminal {
            master: pty.master,
            slave: pty.slave,
            seen,
        }
    }

    fn first_row(&self, size: Size) -> String {
        let mut screen = Screen::new(size);
        screen.handle_output(&self.seen.lock().expect("lock"));
        screen.snapshot(0).rows[0].clone()
    }

    fn type_bytes(&self, bytes: &[u8]) {
        nix::unistd::write(&self.master, bytes).expect("type");
    }
}

#[test]
fn ding_attach_redraws_forwards_resizes_and_restores_the_terminal() {
    let host = Host::start(
        &["--size", "60x12"],
        &[
            "sh",
            "-c",
            "stty raw -echo; printf 'drawn before attach'; exec cat > out",
        ],
    );
    host.wait_screen(|s| s.rows[0] == "drawn before attach");
    let size = Size { cols: 60, rows: 12 };
    let terminal = Terminal::new(size);
    let cooked = tcgetattr(&terminal.slave).expect("termios");
    assert!(cooked.local_flags.contains(LocalFlags::ICANON));
    let mut attach = Command::new(BIN);
    attach
        .args(["attach", "--socket"])
        .arg(&host.socket)
        .stdin(Stdio::from(terminal.slave.try_clone().expect("dup")))
        .stdout(Stdio::from(terminal.slave.try_clone().expect("dup")))
        .stderr(Stdio::from(terminal.slave.try_clone().expect("dup")));
    // SAFETY: setsid and ioctl are async-signal-safe. The terminal becomes
    // attach's controlling terminal, so a size change sends it SIGWINCH.
    unsafe {
        attach.pre_exec(move || {
            nix::unistd::setsid()?;
            if nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut attach = attach.spawn().expect("spawn ding attach");

    eventually("the redraw", || {
        terminal.first_row(size) == "drawn before attach"
    });
    eventually("raw mode", || {
        !tcgetattr(&terminal.slave)
            .expect("termios")
            .local_flags
            .contains(LocalFlags::ICANON)
    });
    terminal.type_bytes(b"keys\x03");
    assert_eq!(
        host.wait_file("out", 5),
        b"keys\x03",
        "Ctrl-C is a key in raw mode"
    );

    ding::pty::child::set_size(&terminal.master.as_fd(), Size { cols: 70, rows: 15 })
        .expect("resize terminal");
    eventually("the resize to reach the host", || {
        host.client().status().expect("status").size == Size { cols: 70, rows: 15 }
    });

    terminal.type_bytes(b"\x1c");
    let status = attach.wait().expect("attach ends");
    assert_eq!(status.code(), Some(0));
    let restored = tcgetattr(&terminal.slave).expect("termios");
    assert_eq!(
        restored.local_flags, cooked.local_flags,
        "terminal settings restored"
    );
    eventually("the detach message", || {
        String::from_utf8_lossy(&terminal.seen.lock().expect("lock")).contains("[ding: detached]")
    });
    // The program keeps running after the detach.
    assert!(matches!(
        host.client().status().expect("status").child,
        ChildState::Running { .. }
    ));
}

#[test]
fn large_attach_input_arrives_whole_and_in_order() {
    let host = Host::recording();
    let (mut stream, _) = host.client().attach().expect("attach");
    // Several MiB through the queue limit and the request-size read limit,
    // so reading must stall and resume without losing or reordering bytes.
    let input: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| b'a' + (i % 26) as u8)
        .collect();
    let mut frames = Vec::new();
    for chunk in input.chunks(40_000) {
        push_frame(&mut frames, FrameKind::Data, chunk);
    }
    let writer = thread::spawn(move || {
        stream.write_all(&frames).expect("write frames");
        stream
    });
    let out = host.wait_file("out", input.len());
    assert!(out == input, "bytes were lost or reordered");
    drop(writer.join().expect("writer"));
}

/// Writes `$0` bytes as fast as the terminal takes them, then waits.
const FLOOD: &str =
    "yes 0123456789012345678901234567890123456789 | head -c \"$0\"; printf '\\nflood-done'; read x";
/// Floods take seconds on a loaded machine; they must not fail for that.
const FLOOD_PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn watch_pushes_are_coalesced_for_a_slow_reader() {
    // A full 200x100 screen makes every snapshot reply about 20 KB. The
    // flood starts on Return, once the watcher is stalled, and marks its end
    // with a file so that waiting for it costs no snapshots.
    let script = format!(
        "yes {} | head -n 120; printf drawn; read x; \
         yes 0123456789012345678901234567890123456789 | head -c 1000000; touch flooded; read x",
        "y".repeat(198)
    );
    let host = Host::start(&["--size", "200x100"], &["sh", "-c", &script]);
    host.wait_screen(|s| s.rows.iter().any(|row| row == "drawn"));
    let mut watcher = host.client();
    let start = watcher.watch().expect("watch");
    // Stall the watcher: ask for more snapshot replies than the socket
    // buffer holds and read none of them yet, so the host has output queued
    // for it throughout the flood.
    let requests = "{\"op\":\"snapshot\"}\n".repeat(STALLING_SNAPSHOTS);
    watcher.write_raw(requests.as_bytes()).expect("requests");
    host.client()
        .send(&[write(b"\r")])
        .expect("start the flood");
    eventually("the flood to end", || file_exists(&host.path("flooded")));
    let end = host.client().status().expect("status").revision;
    assert!(end - start > 100, "the flood moved the revision many times");
    for _ in 0..STALLING_SNAPSHOTS {
        watcher.read_reply().expect("snapshot reply");
    }
    let mut pushes = 0;
    let mut last = start;
    while let Some(push) = watcher.next_push(Duration::from_millis(300)).expect("push") {
        if let Push::Revision { revision, .. } = push {
            assert!(revision > last, "pushes move forward");
            last = revision;
            pushes += 1;
        }
    }
    assert_eq!(last, end, "the watcher ends on the latest revision");
    assert!(
        pushes <= 3,
        "{pushes} pushes for {} revisions while stalled: not coalesced",
        end - start
    );
}

/// Enough 200x100 snapshot replies to fill a Unix socket's buffer.
const STALLING_SNAPSHOTS: usize = 40;

#[test]
fn slow_attach_client_is_resynced_by_a_redraw() {
    // More than the 1 MiB attach backlog plus the socket buffers.
    let host = Host::start(&["--size", "50x10"], &["sh", "-c", FLOOD, "3000000"]);
    let (mut stream, mut buf) = host.client().attach().expect("attach");
    host.wait_screen_within(FLOOD_PATIENCE, |s| {
        s.rows.iter().any(|row| row == "flood-done")
    });
    let expected = host.client().snapshot().expect("snapshot");
    // Now read everything the host queued for this client and render it.
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .expect("timeout");
    let mut screen = Screen::new(Size { cols: 50, rows: 10 });
    let mut received = 0usize;
    loop {
        while let Parsed::Frame {
            kind,
            payload,
            consumed,
        } = parse_frame(&buf)
        {
            buf.drain(..consumed);
            if kind == FrameKind::Data {
                received += payload.len();
                screen.handle_output(&payload);
            }
        }
        let mut chunk = [0u8; 64 * 1024];
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    assert!(
        received < 3_000_000,
        "the backlog was bounded ({received} bytes)"
    );
    assert_eq!(
        screen.snapshot(0).rows,
        expected.rows,
        "the redraw shows the current screen"
    );
}

#[test]
fn restart_kills_a_child_that_ignores_hangup() {
    let host = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "trap '' HUP; printf stubborn; while :; do sleep 0.05; done",
        ],
    );
    host.wait_screen(|s| s.rows[0] == "stubborn");
    let mut client = host.client();
    let before = client.status().expect("status").incarnation;
    let (incarnation, _) = client.restart().expect("restart escalates to SIGKILL");
    assert_ne!(incarnation, before);
    assert!(host.stderr_text().contains(r#""event":"restart-kill""#));
    host.wait_screen(|s| s.rows[0] == "stubborn");
}

#[test]
fn stopping_the_host_kills_a_child_that_ignores_hangup() {
    let mut host = Host::start(
        &[],
        &[
            "sh",
            "-c",
            "trap '' HUP; printf stubborn; while :; do sleep 0.05; done",
        ],
    );
    host.wait_screen(|s| s.rows[0] == "stubborn");
    let pid = match host.client().status().expect("status").child {
        ding::pty::wire::ChildState::Running { pid } => pid,
        other => panic!("child not running: {other:?}"),
    };
    host.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(
        host.wait_exit(std::time::Duration::from_secs(10)).is_some(),
        "host exits"
    );
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "the child that ignores SIGHUP outlived its host"
    );
}

/// A harness whose leader ends but leaves a process of its own job that
/// ignores the hangup (a server it started, say): `sh` runs the background
/// job in its own process group, so the job is what the leader left.
const LEAVES_A_STUBBORN_JOB: &str =
    "(trap '' HUP; exec sleep 1000) & echo $! > \"$0\"; printf started; read x; exit 0";

/// Whether `pid` is still a live process (a zombie left to init is not).
fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// A host whose harness leaves a stubborn job, with the job's pid once the
/// harness shows it started (and the directory holding the pid file).
fn host_with_a_stubborn_job() -> (Host, tempfile::TempDir, i32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("job.pid");
    let host = Host::start(
        &[],
        &[
            "sh",
            "-c",
            LEAVES_A_STUBBORN_JOB,
            pid_file.to_str().unwrap(),
        ],
    );
    host.wait_screen(|s| s.rows[0] == "started");
    eventually("the harness wrote its job's pid", || {
        fs::read_to_string(&pid_file).is_ok_and(|text| text.trim().parse::<i32>().is_ok())
    });
    let job = fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    fs::remove_file(&pid_file).expect("remove pid file");
    (host, dir, job)
}

#[test]
fn a_restart_never_shares_the_terminal_with_the_last_incarnations_job() {
    let (host, _dir, job) = host_with_a_stubborn_job();
    let mut watcher = host.client();
    watcher.watch().expect("watch");
    host.client().send(&[write(b"\r")]).expect("send");
    loop {
        match watcher.next_push(PATIENCE).expect("push") {
            Some(Push::Exit { .. }) => break,
            Some(_) => {}
            None => panic!("no exit push"),
        }
    }
    assert!(
        alive(job),
        "the job ignores the hangup, so it is still there"
    );
    host.client().restart().expect("restart");
    assert!(
        !alive(job),
        "the previous incarnation's job outlived the start of the next one"
    );
    host.wait_screen(|s| s.rows[0] == "started");
    assert!(host.stderr_text().contains(r#""event":"job-end""#));
}

#[test]
fn a_harness_that_ends_takes_its_job_with_it_after_the_grace() {
    let (host, _dir, job) = host_with_a_stubborn_job();
    host.client().send(&[write(b"\r")]).expect("send");
    eventually("the job of the exited harness ended", || !alive(job));
    let status = host.client().status().expect("status");
    assert_eq!(status.child, ChildState::Exited { code: 0 });
}

#[test]
fn stopping_the_host_ends_what_its_harness_left_running() {
    let (mut host, _dir, job) = host_with_a_stubborn_job();
    host.signal(Signal::SIGTERM);
    assert!(host.wait_exit(PATIENCE).is_some(), "host exits");
    // The host's SIGKILL is sent before it exits; the job turns zombie
    // when the kernel next runs it, which on a loaded machine can come
    // just after the host is gone.
    eventually("the harness's job ended with its host", || !alive(job));
}
