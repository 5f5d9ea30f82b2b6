# The README's commands. `make test` is exactly what CI runs (.ci/run).
CARGO ?= cargo

.PHONY: test fmt-check clippy unit demo bench build harnesses eval

build:
	$(CARGO) build --release --bins

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

unit: harnesses
	$(CARGO) test --all-targets

# DING on the bundled demo agent, aggressive then turn-boundary+fresh-idle.
demo:
	bash scripts/demo.sh

# Benchmarks are measurements, never pass/fail tests. Each prints its figures.
bench:
	$(CARGO) bench --bench core
	$(CARGO) bench --bench pty
	$(CARGO) bench --bench sidecar

# The A/B evaluation on the real harnesses (docs/evaluation.md): every
# matrix row for each harness, aggressive against careful, one trial at a
# time. DING_EVAL_TRIALS trials per row and arm (default 1), DING_EVAL_SEED
# replays a printed seed. Writes target/eval/report.md and report.json, and
# each trial's logs under target/eval/trials/; prints the tables.
eval:
	$(CARGO) build --release --bins
	mkdir -p target/eval
	bash scripts/install-harnesses.sh >target/eval/harnesses.env
	target/release/ding eval-run --harnesses target/eval/harnesses.env --out target/eval
