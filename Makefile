# The README's commands. `make test` is exactly what CI runs (.ci/run).
CARGO ?= cargo

.PHONY: test fmt-check clippy unit demo bench build harnesses fuzz install eval measure-draw offsets soak test-real

build:
	$(CARGO) build --release --bins

# Installs `ding` with cargo: into ~/.cargo/bin, or PREFIX/bin with
# `make install PREFIX=~/.local`. The same as `cargo install --locked --path
# . --bin ding` (the evaluation's `ding-eval` is not installed).
install:
	$(CARGO) install --locked --path . --bin ding $(if $(PREFIX),--root $(PREFIX))

test: harnesses fmt-check clippy unit

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

# The real-pane tests run the pinned real harnesses: installed once from the
# npm registry into a cache outside the repository (reused after; checking
# a cached install takes milliseconds). See docs/providers/model-servers.md.
harnesses:
	bash scripts/install-harnesses.sh >/dev/null

# Every test target; ends with the list of tests that skipped what they
# check on this machine (DING_REQUIRE_FAULTS=1 makes those fail instead).
unit: harnesses
	CARGO="$(CARGO)" bash scripts/unit-tests.sh

# The real-pane runs too long for `make test`: every real-pane test with
# the aggressive arm's baseline of rows 5 and 6 (DING_REAL_PANE_BASELINE=1),
# the burst measurements `make test` leaves out, and `make offsets`' twenty
# trials per act. About half an hour on 2 cores.
test-real: harnesses
	DING_REAL_PANE_BASELINE=1 $(CARGO) test --test providers_claude_real_pane \
	  --test providers_claude_careful_real_pane --test providers_codex_real_pane \
	  --test providers_codex_careful_real_pane --test providers_gemini_real_pane \
	  --test providers_opencode_real_pane -- --include-ignored
	$(MAKE) offsets

# DING on the bundled demo agent, aggressive then turn-boundary+fresh-idle.
demo:
	bash scripts/demo.sh

# The whole-agent simulation's sweeps on a million seeds (and 250,000 on the
# Gemini model), optimized, with a progress line at every hundredth: every
# seed that breaks an invariant is printed, with how to replay it.
# DING_AGENT_SIM_SEEDS=N runs another count. About five minutes on 2 cores
# (313 s with the build on 2026-12-07, the machine otherwise idle).
soak:
	DING_AGENT_SIM_PROGRESS=1 DING_AGENT_SIM_SEEDS=$${DING_AGENT_SIM_SEEDS:-1000000} \
	  $(CARGO) test --profile sim --test agent_simulation -- --nocapture \
	  random_whole_agent_runs_keep_every_invariant gemini_whole_agent_runs_keep_every_invariant

# Benchmarks are measurements, never pass/fail tests. Each prints its figures.
bench:
	$(CARGO) bench --bench core
	$(CARGO) bench --bench pty
	$(CARGO) bench --bench sidecar

# Each fuzz target for DING_FUZZ_SECONDS (30) seconds; new failing inputs
# are saved into fixtures/fuzz/<target>/ for review. ENGINE=afl runs AFL++
# (coverage-guided, needs cargo-afl) instead of the stable engine. `make
# test` only replays the corpus. See docs/fuzzing.md.
fuzz:
	bash scripts/fuzz.sh

# The A/B evaluation on the real harnesses (docs/evaluation.md): every
# matrix row for each harness, aggressive against careful, one trial at a
# time. DING_EVAL_TRIALS trials per row and arm (default 5), DING_EVAL_SEED
# replays a printed seed. Writes target/eval/report.md and report.json, and
# each trial's logs under target/eval/trials/; prints the tables.
eval:
	$(CARGO) build --release --bins
	mkdir -p target/eval
	bash scripts/install-harnesses.sh >target/eval/harnesses.env
	target/release/ding-eval run --harnesses target/eval/harnesses.env --out target/eval

# How long the real harnesses take to draw a key, a paste and a fresh start,
# idle and under two busy loops, on the PTY host's clock: the evidence for
# the send-if fence's quiet windows (docs/providers/draw-times.md). A
# measurement, never a pass/fail test: about ten minutes, prints a
# table. DING_DRAW_SCALE=25 runs a quarter of the trials.
measure-draw: harnesses
	$(CARGO) test --release --test providers_draw_times -- --ignored --nocapture

# A person pressing a key at offsets from -100 to +300 ms around each of
# DING's acts (a typed notice's paste and its Return, Claude Code's wake,
# Codex's queued turn) on the real harnesses: DING_OFFSET_TRIALS (20)
# trials per act, one act at a time, each judged on what the terminal and
# the model server saw (tests/real_pane_offsets.rs; `make test` runs 2 per
# act). About fifteen minutes; prints each act's offsets and counts.
offsets: harnesses
	DING_OFFSET_TRIALS=$${DING_OFFSET_TRIALS:-20} $(CARGO) test --test real_pane_offsets -- --test-threads=1 --nocapture
