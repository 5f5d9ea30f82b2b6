//! One AFL++ fuzz binary for every target of `tests/fuzz.rs`: the target's
//! name is the first argument (`ding-fuzz-afl names`). The targets' code is
//! the test suite's own, included by path, so both engines check the same
//! invariants. `ding-fuzz-afl TARGET --dictionary` prints the target's
//! tokens as an AFL dictionary. Run through `make fuzz ENGINE=afl`; see
//! docs/fuzzing.md.

#[path = "../../tests/support/hostile.rs"]
#[allow(dead_code)]
mod support_hostile;
// AFL++ finds the bounds by itself; only the tokens are handed to it.
#[allow(dead_code)]
#[path = "../../tests/fuzz/target.rs"]
mod target;
#[path = "../../tests/fuzz/targets/mod.rs"]
mod targets;

use std::fmt::Write as _;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_default();
    let Some(target) = targets::ALL.iter().find(|target| target.name == name) else {
        let names: Vec<&str> = targets::ALL.iter().map(|target| target.name).collect();
        eprintln!(
            "usage: ding-fuzz-afl TARGET [--dictionary], TARGET one of {}",
            names.join(", ")
        );
        std::process::exit(2);
    };
    if args.next().as_deref() == Some("--dictionary") {
        print!("{}", dictionary(target.tokens));
        return;
    }
    afl::fuzz!(|data: &[u8]| {
        (target.check)(data);
    });
}

/// `token_N="..."` lines, every byte that is not printable ASCII (and `"`
/// and `\`) as `\xNN`.
fn dictionary(tokens: &[&str]) -> String {
    let mut out = String::new();
    for (index, token) in tokens.iter().enumerate() {
        let _ = write!(out, "token_{index}=\"");
        for &byte in token.as_bytes() {
            if (b' '..=b'~').contains(&byte) && byte != b'"' && byte != b'\\' {
                out.push(char::from(byte));
            } else {
                let _ = write!(out, "\\x{byte:02x}");
            }
        }
        out.push_str("\"\n");
    }
    out
}
