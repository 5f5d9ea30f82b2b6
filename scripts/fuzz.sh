#!/usr/bin/env bash
# make fuzz: run every fuzz target for a bounded time (docs/fuzzing.md).
#
#   DING_FUZZ_SECONDS  seconds per target (default 30)
#   DING_FUZZ_TARGETS  space-separated targets (default: all)
#   DING_FUZZ_SEED     the stable engine's seed (default: the clock)
#   ENGINE             stable (default): the seeded mutation fuzzer of
#                      tests/fuzz.rs, on the stable toolchain;
#                      afl: AFL++ through `cargo afl`, coverage-guided
#                      (needs `cargo install cargo-afl`)
#
# Each target runs in its own process, so one that dies without unwinding
# (a stack overflow) does not stop the others; its in-flight input is then
# saved by a second, zero-length run. New failing inputs land in
# fixtures/fuzz/<target>/ as crash-* for review; the script exits non-zero
# when there are any.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${DING_FUZZ_SECONDS:-30}
targets=${DING_FUZZ_TARGETS:-adapter-lines declarations pty-requests status-requests hook-calls downlink names provider-hooks launcher-messages kdl-writer}
engine=${ENGINE:-stable}
failed=()

stable_run() {
  DING_FUZZ_TARGET=$1 DING_FUZZ_SECONDS=$2 \
    cargo test --quiet --profile fuzz --manifest-path "$root/Cargo.toml" --test fuzz \
    -- --ignored --nocapture --exact fuzz_targets
}

case $engine in
stable)
  cargo test --quiet --profile fuzz --manifest-path "$root/Cargo.toml" --test fuzz --no-run || exit 1
  for target in $targets; do
    if ! stable_run "$target" "$seconds"; then
      # A run that died without unwinding left the input it was running;
      # a zero-length run saves it into the corpus.
      if [ -e "$root/target/tmp/fuzz-inflight/$target" ]; then
        stable_run "$target" 0 >/dev/null 2>&1
      fi
      failed+=("$target")
    fi
  done
  ;;
afl)
  if ! cargo afl --version >/dev/null 2>&1; then
    echo "ENGINE=afl needs cargo-afl: cargo install cargo-afl" >&2
    exit 1
  fi
  (cd "$root/fuzz/afl" && cargo afl build --release --target-dir "$root/target/afl") || exit 1
  binary="$root/target/afl/release/ding-fuzz-afl"
  mkdir -p "$root/target/afl/out"
  for target in $targets; do
    out="$root/target/afl/out/$target"
    rm -rf "$out"
    "$binary" "$target" --dictionary >"$out.dict"
    AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
      cargo afl fuzz -V "$seconds" -x "$out.dict" -i "$root/fixtures/fuzz/$target" -o "$out" \
      -- "$binary" "$target" >"$out.log" 2>&1 || echo "fuzz $target (afl): afl-fuzz failed, see $out.log" >&2
    found=0
    for crash in "$out"/default/crashes/id:*; do
      [ -e "$crash" ] || continue
      cp "$crash" "$root/fixtures/fuzz/$target/crash-afl-$(sha256sum "$crash" | cut -c1-16)"
      found=1
    done
    grep -h 'execs_done\|saved_crashes\|corpus_count\|bitmap_cvg' "$out/default/fuzzer_stats" 2>/dev/null |
      tr -s ' ' | paste -sd' ' | sed "s/^/fuzz $target (afl): /"
    [ $found -eq 1 ] && failed+=("$target")
  done
  ;;
*)
  echo "unknown ENGINE=$engine (stable or afl)" >&2
  exit 2
  ;;
esac

if [ ${#failed[@]} -gt 0 ]; then
  echo "new failing inputs saved for review in fixtures/fuzz/ for: ${failed[*]}" >&2
  exit 1
fi
