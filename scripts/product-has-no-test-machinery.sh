#!/usr/bin/env bash
# The `ding` people install holds no test machinery: built as `cargo
# build` and `cargo install` build it (no `crash-points` feature, which
# only the crate's tests turn on), it neither reads DING_CRASH_AT nor holds
# the crash points' names, nor the switch of the planted defects. Run by `make unit` after the tests (whose own
# `ding` has them); prints one verdict line, exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
"${CARGO:-cargo}" build --quiet --bin ding
binary=target/debug/ding
found=()
for name in DING_CRASH_AT crash-point-armed before-journal-rename after-claim-journaled; do
  if grep -aq -- "$name" "$binary"; then
    found+=("$name")
  fi
done
# The mutation check's switch (src/mutation.rs) exists only with the
# `mutations` feature.
if nm "$binary" | grep -q 'mutation6switch7PLANTED'; then
  found+=(mutation-switch)
fi
if [ ${#found[@]} -gt 0 ]; then
  echo "FAILED: the ding built without test features holds test machinery: ${found[*]}"
  exit 1
fi
echo "ok: the ding built without test features holds no crash points and no planted defects"
