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
# The whole-agent simulation's two sweeps run optimized below, on 100,000
# seeds (and 25,000 on the Gemini model): here only its named scenarios.
sweeps=(random_whole_agent_runs_keep_every_invariant gemini_whole_agent_runs_keep_every_invariant)
"${CARGO:-cargo}" test --all-targets --no-fail-fast -- "${sweeps[@]/#/--skip=}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
DING_AGENT_SIM_SEEDS=${DING_AGENT_SIM_SEEDS:-100000} \
  "${CARGO:-cargo}" test --profile sim --test agent_simulation -- --nocapture "${sweeps[@]}" 2>&1 | tee -a "$log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  status=1
fi
# The mutation check: defects planted in DING's own code, one at a time,
# against the same sweeps (docs/simulation.md); alone in its process.
"${CARGO:-cargo}" test --profile sim --test agent_simulation_mutations -- --ignored --nocapture 2>&1 | tee -a "$log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  status=1
fi
# The product without the tests' features (crash points): checked apart,
# since every test build has them.
if ! CARGO="${CARGO:-cargo}" bash scripts/product-has-no-test-machinery.sh; then
  status=1
fi
skipped=$(grep -c '^SKIPPED ' "$log")
echo "== tests that skipped what they check: $skipped"
grep '^SKIPPED ' "$log"
exit "$status"
