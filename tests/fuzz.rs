//! Fuzz targets as standing tests (`docs/fuzzing.md`).
//!
//! `make test` replays each target's checked-in corpus
//! (`fixtures/fuzz/<target>/`: seeds and every crasher found so far,
//! minimized), which takes well under a second per target. `make fuzz`
//! runs the ignored `fuzz_targets` test: each target for a bounded time
//! (`DING_FUZZ_SECONDS`, 30 by default), mutating the corpus with the
//! seeded engine in `fuzz/engine.rs` and saving every new failing input
//! into the corpus directory for review.

mod support;

#[path = "fuzz/engine.rs"]
mod engine;
// The harmful-character list and the in-process print paths, shared with
// `hostile_names.rs`; not every item is used by a target.
#[allow(dead_code)]
#[path = "support/hostile.rs"]
mod support_hostile;
#[path = "fuzz/target.rs"]
mod target;
#[path = "fuzz/targets/mod.rs"]
mod targets;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ding::pty::wire::{ErrorKind, NextRequest, Reply, ServerLine, next_request};
use support::Host;
use target::Target;

#[test]
fn the_adapter_lines_corpus_keeps_its_invariants() {
    engine::replay(&targets::adapter_lines::TARGET);
}

#[test]
fn the_declarations_corpus_keeps_its_invariants() {
    engine::replay(&targets::declarations::TARGET);
}

#[test]
fn the_pty_requests_corpus_keeps_its_invariants() {
    engine::replay(&targets::pty_requests::TARGET);
}

#[test]
fn the_status_requests_corpus_keeps_its_invariants() {
    engine::replay(&targets::status_requests::TARGET);
}

#[test]
fn the_hook_calls_corpus_keeps_its_invariants() {
    engine::replay(&targets::hook_calls::TARGET);
}

#[test]
fn the_provider_hooks_corpus_keeps_its_invariants() {
    engine::replay(&targets::provider_hooks::TARGET);
}

#[test]
fn the_launcher_messages_corpus_keeps_its_invariants() {
    engine::replay(&targets::launcher_messages::TARGET);
}

#[test]
fn the_kdl_writer_corpus_keeps_its_invariants() {
    engine::replay(&targets::kdl_writer::TARGET);
}

#[test]
fn the_downlink_corpus_keeps_its_invariants() {
    engine::replay(&targets::downlink::TARGET);
}

#[test]
fn the_names_corpus_keeps_its_invariants() {
    engine::replay(&targets::names::TARGET);
}

/// Every line of the `pty-requests` corpus, sent to a live host on a
/// connection of its own: each gets the one reply its decoding promises
/// (the request's own reply, or one of the documented errors), a blank
/// line none, and the host answers `status` after every one.
#[test]
fn the_pty_requests_corpus_gets_documented_replies_from_a_live_host() {
    let host = Host::start(&[], &["sh", "-c", "stty raw -echo; exec cat > /dev/null"]);
    let mut sent = 0;
    for (path, bytes) in engine::corpus(&targets::pty_requests::TARGET) {
        let mut buf = bytes.clone();
        loop {
            let front = buf.clone();
            let (line, oversized) = match next_request(&mut buf) {
                NextRequest::Line(line) => (line, false),
                NextRequest::Oversized => (front, true),
                NextRequest::Incomplete => break,
            };
            let expected = targets::pty_requests::judge(&line);
            let reply = first_reply(&host, &line, oversized);
            let shown = format!("{}: {:?}", path.display(), String::from_utf8_lossy(&line));
            match (expected.as_str(), reply) {
                (_, Some(ServerLine::Error(refusal))) if oversized => {
                    assert_eq!(refusal.error, ErrorKind::OversizedRequest, "{shown}")
                }
                ("blank", reply) => assert!(reply.is_none(), "{shown}: {reply:?}"),
                ("err:malformed", Some(ServerLine::Error(refusal))) => {
                    assert_eq!(refusal.error, ErrorKind::MalformedRequest, "{shown}")
                }
                (ok, Some(ServerLine::Reply(reply))) if ok.starts_with("ok:") => {
                    let op = serde_json::to_value(&reply).expect("reply")["op"].clone();
                    assert_eq!(Some(&ok[3..]), op.as_str(), "{shown}");
                    assert!(!matches!(reply, Reply::Attach { .. }) || ok == "ok:attach");
                }
                (ok, Some(ServerLine::Error(refusal))) if ok.starts_with("ok:") => assert!(
                    matches!(
                        refusal.error,
                        ErrorKind::InvalidArgument | ErrorKind::Busy | ErrorKind::ChildExited
                    ),
                    "{shown}: {refusal:?}"
                ),
                (refused, Some(ServerLine::Error(refusal))) if refused.starts_with("refused:") => {
                    assert_eq!(refusal.error, ErrorKind::InvalidTransport, "{shown}")
                }
                (expected, reply) => panic!("{shown}: expected {expected}, got {reply:?}"),
            }
            host.client()
                .status()
                .unwrap_or_else(|err| panic!("{shown}: the host stopped answering: {err}"));
            sent += 1;
            if oversized {
                break;
            }
        }
    }
    assert!(sent > 10, "only {sent} lines replayed");
}

/// Sends `line` (with its newline unless it is the oversized rest of a
/// stream) on a fresh connection, then a `status` probe, and returns the
/// reply to `line`: `None` when the probe's reply came and `line` (blank)
/// gets none. A transaction's reply comes when it finishes, so the probe's
/// may come first; pushes are skipped. The write side stays open: a peer
/// that shuts it down gets only the replies already queued when it does.
fn first_reply(host: &Host, line: &[u8], oversized: bool) -> Option<ServerLine> {
    let mut stream = UnixStream::connect(&host.socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    // A huge line may be refused before it is all written.
    let _ = stream.write_all(line);
    if !oversized {
        let _ = stream.write_all(b"\n{\"op\":\"status\"}\n");
    }
    let verdict = targets::pty_requests::judge(line);
    let mut reader = BufReader::new(stream);
    loop {
        let mut text = String::new();
        reader.read_line(&mut text).expect("read a reply");
        assert!(!text.is_empty(), "the host closed without a reply");
        let reply: ServerLine =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{text:?}: {err}"));
        match reply {
            ServerLine::Push(_) => continue,
            ServerLine::Reply(Reply::Status(_)) if oversized => return Some(reply),
            ServerLine::Reply(Reply::Status(_)) if verdict == "blank" => return None,
            ServerLine::Reply(Reply::Status(_)) if verdict != "ok:status" => continue,
            reply => return Some(reply),
        }
    }
}

/// The commands `docs/fuzzing.md` shows are `make fuzz` with variables
/// the script reads (they take minutes, so they are checked, not run); the
/// script refuses an engine it does not know, at once.
#[test]
fn the_documented_fuzz_commands_are_what_the_script_reads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/fuzzing.md")).expect("doc");
    let script = std::fs::read_to_string(root.join("scripts/fuzz.sh")).expect("script");
    let block = doc
        .split("Running\n\n```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the commands block");
    let mut commands = 0;
    for line in block.lines() {
        let mut rest = line.split('#').next().unwrap_or_default().trim();
        // Leading `NAME=value` or `NAME="a b"` assignments, then the command.
        while let Some((name, value)) = rest.split_once('=').filter(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        }) {
            assert!(
                script.contains(&format!("${{{name}")) || FUZZ_VARIABLES.contains(&name),
                "{name} is read by neither scripts/fuzz.sh nor fuzz_targets"
            );
            rest = match value.strip_prefix('"') {
                Some(quoted) => quoted.split_once('"').expect("closing quote").1,
                None => value.split_once(' ').map_or("", |(_, after)| after),
            }
            .trim_start();
        }
        assert_eq!(rest, "make fuzz", "{line}");
        commands += 1;
    }
    assert!(commands >= 3);
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/fuzz.sh"))
        .env("ENGINE", "bogus")
        .output()
        .expect("bash");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown ENGINE=bogus"));
}

const SECONDS_VAR: &str = "DING_FUZZ_SECONDS";
const SEED_VAR: &str = "DING_FUZZ_SEED";
const TARGET_VAR: &str = "DING_FUZZ_TARGET";
/// The variables `fuzz_targets` reads.
const FUZZ_VARIABLES: &[&str] = &[SECONDS_VAR, SEED_VAR, TARGET_VAR];

/// `make fuzz`: every target (or `DING_FUZZ_TARGET`) for
/// `DING_FUZZ_SECONDS` each, from `DING_FUZZ_SEED` (else the clock).
/// Fails when a run saved a new failing input.
#[test]
#[ignore = "run by `make fuzz`"]
fn fuzz_targets() {
    let seconds: u64 = std::env::var(SECONDS_VAR)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(30);
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |since| since.as_nanos() as u64)
        });
    let wanted = std::env::var(TARGET_VAR).ok();
    let chosen: Vec<&Target> = targets::ALL
        .iter()
        .copied()
        .filter(|target| wanted.as_deref().is_none_or(|name| name == target.name))
        .collect();
    assert!(!chosen.is_empty(), "no target named {wanted:?}");
    let mut saved = Vec::new();
    for target in chosen {
        let report = engine::fuzz(target, Duration::from_secs(seconds), seed);
        println!(
            "fuzz {}: seed {} execs {} ({}/s) classes {} pool {} new crashers {}",
            report.target,
            report.seed,
            report.execs,
            report.execs / seconds.max(1),
            report.classes,
            report.pool,
            report.saved.len()
        );
        for path in &report.saved {
            println!("  saved {}", path.display());
        }
        saved.extend(report.saved);
    }
    assert!(
        saved.is_empty(),
        "new failing inputs were saved for review:\n{saved:#?}"
    );
}
