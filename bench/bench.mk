# Benchmarks against other engines (bench/). Included by the root Makefile:
#     include bench/bench.mk
# Targets:
#   bench-setup   install the peers (Debian packages, PyPI packages into .venv)
#   bench         the whole suite, under 30 minutes on a 2-core machine -> bench/results/<date>/
#   bench-quick   the same steps at small sizes, under 3 minutes -> bench/results/<date>-quick/
#   bench-test    the harness's own tests (fast; part of `make test`)
# BENCH_ARGS passes options to bench/run.py, e.g. make bench BENCH_ARGS='--only dbm,numbers'.

BENCH_PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
BENCH_ARGS ?=

.PHONY: bench-setup bench bench-quick bench-test bench-build

bench-setup:
	bash bench/setup

# Builds what lamina brings to the benchmarks, where it exists yet: the `lamina` binary
# (release) and the Python module (into .venv). Peers are compared without it otherwise.
bench-build:
	@if [ -d crates/lamina-cli ]; then cargo build --release -p lamina-cli; fi
	@if [ -f python/pyproject.toml ] && [ -x .venv/bin/python ] && command -v maturin >/dev/null; then \
	  VIRTUAL_ENV=$(CURDIR)/.venv maturin develop --release -m python/Cargo.toml \
	    || echo "bench: the lamina Python module did not build; its rows are left out"; fi

bench: bench-build
	$(BENCH_PY) bench/run.py $(BENCH_ARGS)

bench-quick: bench-build
	$(BENCH_PY) bench/run.py --quick $(BENCH_ARGS)

bench-test:
	$(BENCH_PY) -m pytest -q bench/tests
