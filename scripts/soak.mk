# `make soak`: random operations from several threads with the writer process
# killed (SIGKILL) and the database reopened and checked, again and again
# (crates/lamina/examples/soak/). Not part of `make test`.
#
#   SOAK_SECONDS=300  how long (default 300)
#   SOAK_SEED=N       replay a run (printed at its start)
#   SOAK_THREADS=4    writer threads
#   SOAK_CARGO_FLAGS  e.g. --release for more operations per second
.PHONY: soak
soak:
	$(CARGO) build -q -p lamina --example soak $(SOAK_CARGO_FLAGS)
	$(CARGO) run -q -p lamina --example soak $(SOAK_CARGO_FLAGS)

# `make soak-readers`: read-only processes, `lamina check`, `count` and `scan`
# beside a live writer process that writes, flushes and compacts (see
# scripts/readers_soak.py); prints the opens, refreshes, checks and errors.
#
#   SOAK_SECONDS=60   how long (default 60)
.PHONY: soak-readers
soak-readers: py-build
	$(CARGO) build -q --release -p lamina-cli
	$(PY_PYTHON) scripts/readers_soak.py --seconds $(or $(SOAK_SECONDS),60) --lamina target/release/lamina
