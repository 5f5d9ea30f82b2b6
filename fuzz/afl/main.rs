//! One AFL++ fuzz binary for every target of `tests/fuzz.rs`: the target's
//! name is the first argument (`ding-fuzz-afl names`). The targets' code is
//! the test suite's own, included by path, so both engines check the same
//! invariants. Run through `make fuzz ENGINE=afl`; see docs/fuzzing.md.

#[path = "../../tests/support/hostile.rs"]
#[allow(dead_code)]
mod support_hostile;
#[path = "../../tests/fuzz/target.rs"]
mod target;
#[path = "../../tests/fuzz/targets/mod.rs"]
mod targets;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some(target) = targets::ALL.iter().find(|target| target.name == name) else {
        let names: Vec<&str> = targets::ALL.iter().map(|target| target.name).collect();
        eprintln!("usage: ding-fuzz-afl TARGET, one of {}", names.join(", "));
        std::process::exit(2);
    };
    afl::fuzz!(|data: &[u8]| {
        (target.check)(data);
    });
}
