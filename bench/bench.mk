# Benchmarks against other engines (bench/). Included by the root Makefile:
#     -include bench/bench.mk
# Targets:
#   bench-setup   install the peers (Debian packages; PyPI packages into .venv)
#   bench         the whole suite, under 30 minutes on a 2-core machine -> $(BENCH_OUT)/<date>/
#   bench-quick   the same steps at small sizes, under 3 minutes -> $(BENCH_OUT)/<date>-quick/
#                 and each step's wall time against the previous quick run's (steps.json):
#                 "no slower" is no step marked SLOWER (above 1.10x)
#   bench-test    the harness's own tests (seconds); `make test` runs them through EXTRA_TESTS
# BENCH_ARGS passes options to bench/run.py, e.g. make bench BENCH_ARGS='--only dbm,numbers'.
# BENCH_OUT is where results go (default target/bench-results, which git ignores); the
# scripts in bench/ read it from the environment too.

BENCH_PY   = $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
BENCH_ARGS ?=
BENCH_OUT  ?= target/bench-results
export BENCH_OUT

# What lamina brings to the benchmarks: the release `lamina` binary, and the Python module
# built into .venv (python/python.mk's py-build), where those exist.
BENCH_BUILD := $(if $(wildcard crates/lamina-cli/Cargo.toml),bench-cli)
BENCH_BUILD += $(if $(wildcard python/python.mk),py-build)

.PHONY: bench-setup bench bench-quick bench-test bench-cli

EXTRA_TESTS += bench-test

bench-setup:
	bash bench/setup

bench-cli:
	cargo build --release -p lamina-cli

bench: $(BENCH_BUILD)
	$(BENCH_PY) bench/run.py $(BENCH_ARGS)

bench-quick: $(BENCH_BUILD)
	$(BENCH_PY) bench/run.py --quick $(BENCH_ARGS)

bench-test:
	$(BENCH_PY) -m pytest -q bench/tests
