//! The control socket's defences: private directory and socket, the peer
//! uid check, and requests that are malformed, oversized or over the
//! transport caps.

mod support;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::Duration;

use ding::pty::client::HostError;
use ding::pty::transport::{MAX_TRANSPORT_BYTES, WireStep};
use ding::pty::wire::{ErrorKind, MAX_REQUEST_LINE, ServerLine};
use support::flood::{connect_peers, memory_kib, pipeline_without_reading};
use support::{BIN, Host, write};

fn host_error(err: anyhow::Error) -> HostError {
    err.downcast::<HostError>().expect("a typed host error")
}

#[test]
fn socket_dir_and_socket_are_private() {
    let host = Host::start(&[], &["cat"]);
    let dir = host.socket.parent().expect("dir");
    assert_eq!(fs::metadata(dir).expect("dir").mode() & 0o777, 0o700);
    assert_eq!(
        fs::metadata(&host.socket).expect("socket").mode() & 0o777,
        0o600
    );
}

#[test]
fn host_refuses_a_socket_dir_open_to_others() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("open");
    fs::create_dir(&dir).expect("mkdir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    let output = Command::new(BIN)
        .args(["pty", "--session", "s", "--socket"])
        .arg(dir.join("pty.sock"))
        .args(["--", "true"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("accessible to group or others"), "{stderr}");
    assert!(!dir.join("pty.sock").exists());
}

/// Runs `ding attach --socket PATH` as uid/gid 65534 (`nobody`) with
/// setpriv, from a copy of the binary that `nobody` may execute.
fn attach_as_nobody(host: &Host) -> std::process::Output {
    let bin_dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(bin_dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    let bin = bin_dir.path().join("ding");
    fs::copy(BIN, &bin).expect("copy binary");
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&bin)
        .args(["attach", "--socket"])
        .arg(&host.socket)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run setpriv")
}

#[test]
fn other_uid_is_refused() {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("skipping other_uid_is_refused: needs root to become nobody");
        return;
    }
    let setpriv = Command::new("setpriv").arg("--version").output();
    if !setpriv.is_ok_and(|out| out.status.success()) {
        eprintln!("skipping other_uid_is_refused: setpriv (util-linux) is not installed");
        return;
    }
    let host = Host::recording();
    // Layer one: the 0700 directory keeps nobody from reaching the socket.
    let output = attach_as_nobody(&host);
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Permission denied"), "{stderr}");

    // Layer two: even with the file modes opened up by mistake, the peer
    // uid check refuses the connection before any request is read.
    let dir = host.socket.parent().expect("dir");
    fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).expect("chmod dir");
    fs::set_permissions(&host.socket, fs::Permissions::from_mode(0o777)).expect("chmod socket");
    let dir_parent = host.dir.path();
    fs::set_permissions(dir_parent, fs::Permissions::from_mode(0o755)).expect("chmod tmp");
    let output = attach_as_nobody(&host);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("forbidden"), "{stderr}");
    assert!(host.stderr_text().contains(r#""event":"refused""#));
    // Nothing reached the terminal, and the host still serves its owner.
    host.client().send(&[write(b"owner")]).expect("send");
    assert_eq!(host.wait_file("out", 5), b"owner");
}

#[test]
fn malformed_requests_get_errors_and_the_host_survives() {
    let host = Host::start(&[], &["cat"]);
    let mut client = host.client();
    let cases: [&[u8]; 7] = [
        b"not json\n",
        b"{\"op\":\"launch-missiles\"}\n",
        b"{\"op\":\"status\",\"extra\":true}\n",
        b"{\"op\":\"send-if\",\"session\":\"s\"}\n",
        b"{\"op\":\"send\",\"steps\":[{\"write\":\"not base64!\"}]}\n",
        b"\xff\xfe\n",
        b"{\"op\":\"resize\",\"cols\":0,\"rows\":5}\n",
    ];
    for case in cases {
        client.write_raw(case).expect("write");
        let err = host_error(client.read_reply().expect_err("an error reply"));
        let want = if case.starts_with(b"{\"op\":\"resize\"") {
            ErrorKind::InvalidArgument
        } else {
            ErrorKind::MalformedRequest
        };
        assert_eq!(err.kind, want, "{:?}", String::from_utf8_lossy(case));
    }
    // The same connection still works.
    client.status().expect("status after errors");
}

#[test]
fn oversized_request_is_refused_and_closed() {
    let host = Host::start(&[], &["cat"]);
    let mut stream = UnixStream::connect(&host.socket).expect("connect");
    // The host replies and closes as soon as it has read past the limit, so
    // the tail of this write may hit a closed socket; that is expected.
    let _ = stream.write_all(&vec![b'x'; MAX_REQUEST_LINE + 10]);
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("reply");
    let reply: ServerLine = serde_json::from_str(&line).expect("json");
    let ServerLine::Error(err) = reply else {
        panic!("expected an error, got {line}");
    };
    assert_eq!(err.error, ErrorKind::OversizedRequest);
    let mut rest = Vec::new();
    // Closed, not merely quiet: end of file (or a reset for the unread
    // tail), never the read timeout.
    match reader.read_to_end(&mut rest) {
        Ok(_) => assert!(rest.is_empty(), "nothing after the error: {rest:?}"),
        Err(err) => assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}"),
    }
    host.client().status().expect("host still serves");
}

#[test]
fn transport_caps_are_enforced_with_zero_bytes_written() {
    let host = Host::recording();
    let mut client = host.client();
    let (identity, revision) = host.identity();
    let too_big = [WireStep::Write(vec![b'a'; MAX_TRANSPORT_BYTES + 1])];
    let too_slow = [write(b"a"), WireStep::WaitMs(5_001)];
    let empty = [WireStep::WaitMs(1)];
    for steps in [&too_big[..], &too_slow[..], &empty[..]] {
        let err = host_error(
            client
                .send_if(&identity, revision, steps)
                .expect_err("refused"),
        );
        assert_eq!(err.kind, ErrorKind::InvalidTransport);
    }
    client.send(&[write(b"end")]).expect("send");
    assert_eq!(host.wait_file("out", 3), b"end");
}

/// Peers that pipeline snapshot requests and never read a reply.
const FLOODERS: usize = 8;
/// Each would queue about 40,000 replies if the host kept reading; far more
/// than the socket buffers between a peer and the host hold.
const FLOOD_BYTES: usize = 768 * 1024;
/// A peer that could not write a byte for this long is not being read.
const STUCK: Duration = Duration::from_secs(1);
/// What the host's memory may grow by under the flood. Unbounded, the
/// replies queued for these peers would take hundreds of megabytes.
const FLOOD_GROWTH_LIMIT_KIB: u64 = 16 * 1024;

#[test]
fn peers_that_pipeline_requests_without_reading_are_paused_and_others_are_served() {
    let host = Host::recording();
    let pid = host.process.id();
    let before = memory_kib(pid, "VmRSS");
    let mut flooders = connect_peers(&host.socket, FLOODERS);
    let written = pipeline_without_reading(
        &mut flooders,
        b"{\"op\":\"snapshot\"}\n",
        FLOOD_BYTES,
        STUCK,
    );
    // Delivery and status keep working meanwhile.
    let (_, bytes) = host
        .client()
        .send(&[write(b"still-delivered")])
        .expect("a send while the flooders wait");
    assert_eq!(bytes, 15);
    assert_eq!(host.wait_file("out", 15), b"still-delivered");
    host.client()
        .status()
        .expect("status while the flooders wait");

    let peak = memory_kib(pid, "VmHWM");
    assert!(
        peak.saturating_sub(before) < FLOOD_GROWTH_LIMIT_KIB,
        "the host grew from {before} KiB to a peak of {peak} KiB"
    );
    assert!(
        written
            .iter()
            .all(|end| end.written < FLOOD_BYTES && !end.closed),
        "the host kept reading requests whose replies nobody reads: {written:?}"
    );

    // A flooder that starts reading gets every reply, in order.
    let mut reader = BufReader::new(flooders.swap_remove(0));
    reader.get_mut().set_nonblocking(false).expect("blocking");
    reader
        .get_mut()
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let complete = written[0].written / b"{\"op\":\"snapshot\"}\n".len();
    for _ in 0..complete.min(2000) {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a reply");
        assert!(line.starts_with("{\"op\":\"snapshot\""), "{line}");
    }
}
