#!/usr/bin/env bash
# `make unit`: every test target, then the list of tests that checked
# nothing on this machine. A test that cannot make its precondition here
# (the filesystem faults need a mount namespace and a loop device) prints
# `SKIPPED NAME: why` on stderr and passes; this makes each such skip a
# visible line of the run's summary instead of a silent pass.
# DING_REQUIRE_FAULTS=1 turns those skips into failures.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${CARGO:-cargo}" test --all-targets --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The product without the tests' features (crash points): checked apart,
# since every test build has them.
if ! CARGO="${CARGO:-cargo}" bash scripts/product-has-no-test-machinery.sh; then
  status=1
fi
skipped=$(grep -c '^SKIPPED ' "$log")
echo "== tests that skipped what they check: $skipped"
grep '^SKIPPED ' "$log"
exit "$status"
