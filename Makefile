# The README's commands. `make test` is exactly what CI runs (.ci/run).
CARGO ?= cargo

.PHONY: test fmt-check clippy unit demo bench build

build:
	$(CARGO) build --release --bins

test: fmt-check clippy unit

fmt-check:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --all-targets -- -D warnings

unit:
	$(CARGO) test --all-targets

# DING on the bundled demo agent, aggressive then turn-boundary+fresh-idle.
demo:
	bash scripts/demo.sh

# Benchmarks are measurements, never pass/fail tests. Each prints its figures.
bench:
	$(CARGO) bench --bench core
	$(CARGO) bench --bench pty
	$(CARGO) bench --bench sidecar
