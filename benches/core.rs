//! Core benchmarks: `make bench` (or `cargo bench --bench core`).
//!
//! Prints figures; asserts nothing. Targets from the core issue:
//! * protocol v1 validation >= 1,000,000 events/s on one core;
//! * engine decisions with 100,000 unread files, ownership O(log n);
//! * a journal write with 100,000 unread files costs O(owned), not O(unread).

use std::hint::black_box;
use std::time::{Duration, Instant};

use ding::core::config::{EngineConfig, Policy};
use ding::core::engine::{Engine, Input, Output};
use ding::core::identity::Identity;
use ding::core::message::MessageName;
use ding::core::protocol::parse_line;
use ding::core::time::Time;

fn activity(sequence: u64, revision: u64) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"9f2c4e1a","generation":"sha256:4c1d2b7e9a0f3c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5","sequence":{sequence},"state":"idle","validForMs":250,"composer":"empty","revision":{revision},"reason":"prompt visible, no spinner"}}"#
    )
    .into_bytes()
}

/// Idle evidence that the composer holds exactly the notice pasted as
/// `request`, at `revision`: what its Return waits for.
fn typed(sequence: u64, revision: u64, request: u64) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"activity","session":"host.worker","incarnation":"9f2c4e1a","generation":"sha256:4c1d2b7e9a0f3c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5","sequence":{sequence},"state":"idle","validForMs":250,"composer":"nonempty","revision":{revision},"typed":{request},"reason":"the notice alone in the composer"}}"#
    )
    .into_bytes()
}

/// CPU time this thread has used. Rates on "one core" divide by it rather
/// than by wall time, so other processes on a busy machine do not count.
fn thread_cpu() -> Duration {
    let spec = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .expect("thread cpu clock");
    Duration::new(spec.tv_sec() as u64, spec.tv_nsec() as u32)
}

fn validation() {
    let lines: Vec<Vec<u8>> = (0..10_000).map(|i| activity(i, i * 3)).collect();
    let receipt = br#"{"v":1,"kind":"turn-boundary","session":"host.worker","incarnation":"9f2c4e1a","generation":"sha256:4c1d","sequence":9,"messages":["20261130T101500123Z-7f3a.md","20261130T101501456Z-09bc.md"]}"#;
    // DING_BENCH_ROUNDS shrinks the run, e.g. for counting instructions under callgrind.
    let rounds: usize = std::env::var("DING_BENCH_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let start = Instant::now();
    let cpu_start = thread_cpu();
    let mut ok = 0usize;
    for _ in 0..rounds {
        for line in &lines {
            ok += usize::from(parse_line(black_box(line)).is_ok());
        }
        ok += usize::from(parse_line(black_box(receipt)).is_ok());
    }
    let elapsed = start.elapsed();
    let cpu = thread_cpu() - cpu_start;
    let events = rounds * (lines.len() + 1);
    assert_eq!(ok, events);
    let bytes: usize = lines.iter().map(Vec::len).sum::<usize>() / lines.len();
    println!(
        "protocol v1 validation: {:.0} events/s per CPU second ({:.0}/s wall; {events} events of ~{bytes} bytes, {cpu:.2?} CPU, {elapsed:.2?} wall; target >= 1,000,000/s)",
        events as f64 / cpu.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64(),
    );
}

/// An engine with `unread` files scanned, and the moment its gather of
/// them closed (the burst window a backlog waits out before delivery):
/// the benches start from there.
fn engine_with_backlog(unread: usize) -> (Engine, Identity, Time) {
    let mut config = EngineConfig::new(Policy::TurnBoundaryFreshIdle, "worker", "inbox/new");
    config.tunables.lease_cap = Duration::from_secs(60);
    config.tunables.re_ring_after = None;
    // One file per notice: each delivery cycle delivers one.
    config.tunables.notice_max_files = 1;
    let mut engine = Engine::new(config, None, Time::ZERO);
    let identity = Identity {
        session: "host.worker".into(),
        incarnation: "9f2c4e1a".into(),
        generation: "sha256:4c1d2b7e9a0f3c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5"
            .into(),
    };
    engine.handle_input(Input::AdapterSpawned { pid: 1 }, Time::ZERO);
    engine.handle_input(
        Input::PtyStatus {
            identity: identity.clone(),
            revision: 0,
        },
        Time::ZERO,
    );
    let names = (0..unread)
        .map(|i| MessageName::new(&format!("20261130T{i:09}Z-7f3a.md")).unwrap())
        .collect();
    let start = Instant::now();
    engine.handle_input(Input::InboxScan(names), Time::ZERO);
    println!(
        "engine: initial scan of {unread} unread files in {:.2?}",
        start.elapsed()
    );
    while engine.poll_output().is_some() {}
    let gathered = engine.next_deadline().unwrap_or(Time::ZERO);
    engine.handle_timeout(gathered);
    while engine.poll_output().is_some() {}
    (engine, identity, gathered)
}

/// One delivery cycle per iteration against a 100,000-file backlog, as the
/// careful policy delivers (CORE-32): an idle lease (parse, fence, FIFO
/// pick, notice, the paste's compare-and-send), its sent reply (the notice
/// typed), the evidence that shows it alone in the composer (the Return's
/// compare-and-send), its sent reply (staging), the archive receipt of the
/// delivered file, and one arrival. A notice names one file here, so each
/// cycle delivers one; the cycles are two seconds apart on the engine's
/// clock, past the submit delay and the gather an arrival opens.
fn decisions() {
    let unread = 100_000;
    let (mut engine, _, start_at) = engine_with_backlog(unread);
    let cycles = 20_000u64;
    let mut decisions = 0u64;
    let mut inputs = 0u64;
    let start = Instant::now();
    let cpu_start = thread_cpu();
    // Drains the outputs, counting decisions; the compare-and-send asked.
    let mut drain = |engine: &mut Engine| {
        let mut request = None;
        while let Some(output) = engine.poll_output() {
            match output {
                Output::SendIf(send) => request = Some(send.request),
                Output::Decision(_) => decisions += 1,
                _ => {}
            }
        }
        request
    };
    for cycle in 0..cycles {
        let now = start_at + Duration::from_millis(2_000 * cycle);
        // The paste draws one revision, and the screen read after it shows
        // the next.
        let revision = 4 * cycle;
        engine.handle_input(Input::AdapterLine(activity(3 * cycle + 1, revision)), now);
        let Some(paste) = drain(&mut engine) else {
            panic!(
                "a fresh idle lease delivers, but cycle {cycle} is held: {:?}",
                engine.status(now).hold
            )
        };
        engine.handle_input(
            Input::PtySent {
                request: paste,
                revision: revision + 1,
            },
            now,
        );
        drain(&mut engine);
        let shown = now + Duration::from_millis(500);
        engine.handle_input(
            Input::AdapterLine(typed(3 * cycle + 2, revision + 2, paste)),
            shown,
        );
        let Some(submit) = drain(&mut engine) else {
            panic!(
                "the notice shown alone gets its Return, but cycle {cycle} is held: {:?}",
                engine.status(shown).hold
            )
        };
        engine.handle_input(
            Input::PtySent {
                request: submit,
                revision: revision + 3,
            },
            shown,
        );
        let oldest = MessageName::new(&format!("20261130T{cycle:09}Z-7f3a.md")).unwrap();
        engine.handle_input(Input::InboxRemoved(oldest), shown);
        let arrival =
            MessageName::new(&format!("20261130T{:09}Z-7f3a.md", unread + cycle as usize)).unwrap();
        engine.handle_input(Input::InboxAdded(arrival), shown);
        drain(&mut engine);
        inputs += 6;
    }
    let elapsed = start.elapsed();
    let cpu = (thread_cpu() - cpu_start).as_secs_f64();
    let status = engine.status(start_at + Duration::from_millis(2_000 * cycles));
    println!(
        "engine with {unread} unread: {:.0} inputs/s, {:.0} decisions/s, {:.0} deliveries/s per CPU second ({cycles} cycles, {cpu:.2}s CPU, {elapsed:.2?} wall; {} still unread)",
        inputs as f64 / cpu,
        decisions as f64 / cpu,
        cycles as f64 / cpu,
        status.unread,
    );
}

/// Ownership cost must not grow with the backlog: the same cycle at 1,000
/// and 100,000 unread files should take about the same time.
fn scaling() {
    for unread in [1_000, 100_000] {
        let (mut engine, _, start_at) = engine_with_backlog(unread);
        let cycles = 5_000u64;
        let start = thread_cpu();
        for cycle in 0..cycles {
            let now = start_at + Duration::from_millis(cycle);
            engine.handle_input(Input::AdapterLine(activity(cycle + 1, cycle)), now);
            let mut request = 0;
            while let Some(output) = engine.poll_output() {
                if let Output::SendIf(send) = output {
                    request = send.request;
                }
            }
            engine.handle_input(
                Input::PtyConflict {
                    request,
                    actual: cycle + 1,
                },
                now,
            );
            while engine.poll_output().is_some() {}
        }
        let per = (thread_cpu() - start) / (cycles as u32);
        println!("engine lease + conflict cycle with {unread:>6} unread: {per:.2?} CPU per cycle");
    }
}

/// A claim line that makes the `owned` oldest pending files hook-owned.
fn claim(sequence: u64, owned: usize) -> Vec<u8> {
    format!(
        r#"{{"v":1,"kind":"claim","session":"host.worker","incarnation":"9f2c4e1a","generation":"sha256:4c1d2b7e9a0f3c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5","sequence":{sequence},"claim":1,"limit":{owned}}}"#
    )
    .into_bytes()
}

/// The journal is O(owned), not O(unread): what a `JournalChanged` costs the
/// runtime with 100,000 unread files, 10 or 1,000 of them owned, next to
/// 1,000 unread. `snapshot + encode` is `Engine::journal()` and the JSON
/// encoding `JournalStore::save` writes; `durable save` adds the file write
/// (tmp, fsync, rename, fsync of the directory) into a temporary directory,
/// which the disk dominates.
fn journal() {
    let state = tempfile::tempdir().expect("a temporary state directory");
    let store = ding::sidecar::journal_store::JournalStore::new(state.path());
    for (unread, owned) in [(1_000, 10), (100_000, 10), (1_000, 1_000), (100_000, 1_000)] {
        let (mut engine, _, start_at) = engine_with_backlog(unread);
        engine.handle_input(Input::AdapterLine(claim(1, owned)), start_at);
        let mut changed = false;
        while let Some(output) = engine.poll_output() {
            changed |= matches!(output, Output::JournalChanged);
        }
        assert!(changed, "the claim changed ownership");
        assert_eq!(engine.journal().entries.len(), owned);
        let bytes = serde_json::to_vec(&engine.journal()).unwrap().len();
        // Enough rounds for a stable mean, bounded in time either way.
        let rounds = if owned > 100 { 2_000u32 } else { 200_000 };
        let start = thread_cpu();
        for _ in 0..rounds {
            let journal = black_box(&engine).journal();
            black_box(serde_json::to_vec(&journal).unwrap());
        }
        let snapshot = (thread_cpu() - start) / rounds;
        let saves = 50u32;
        let wall = Instant::now();
        for _ in 0..saves {
            store.save(&engine.journal()).expect("journal saved");
        }
        let save = wall.elapsed() / saves;
        println!(
            "journal with {unread:>6} unread, {owned:>4} owned ({bytes:>6} bytes): snapshot + encode {snapshot:>9.2?} CPU, durable save {save:>9.2?} wall"
        );
        if owned == 10 {
            // For scale: what one walk of every unread file costs.
            let start = thread_cpu();
            black_box(engine.status(Time::ZERO));
            println!(
                "  for scale, status() walking all {unread} unread: {:.2?} CPU",
                thread_cpu() - start
            );
        }
    }
}

/// `cargo bench --bench core -- NAME...` runs only the named parts.
fn main() {
    // `cargo test --all-targets` also runs this binary, in debug and
    // without `--bench`; the figures would be meaningless and slow to get.
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("core bench: skipped (run `make bench` for figures)");
        return;
    }
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let parts: [(&str, fn()); 4] = [
        ("validation", validation),
        ("decisions", decisions),
        ("scaling", scaling),
        ("journal", journal),
    ];
    for (name, part) in parts {
        if wanted.is_empty() || wanted.iter().any(|w| w == name) {
            part();
        }
    }
}
