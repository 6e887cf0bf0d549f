# lamina: build, test and demo from a fresh machine with only Rust and Python.
#
#   make demo    build in release mode and run the numbers load (numbers in English)
#   make test    every test: Rust (engine, CLI), Python module, benchmark harness
#   make lint    clippy and rustfmt checks
#   make soak    kill-and-reopen soak of the engine (SOAK_SECONDS=300; not part of test)

SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

.PHONY: all build release test test-deps test-rust lint demo clean

all: build

# Fragments add their own targets, and their test targets to EXTRA_TESTS.
-include python/python.mk
-include bench/bench.mk
-include scripts/demo.mk
-include scripts/soak.mk

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --release -p lamina -p lamina-cli

# The reference tools the differential tests compare against (gdbm, Berkeley
# DB, perl), from Debian, installed only where missing and only when this
# user can; tests that need a missing one say so and pass.
TEST_TOOLS := gdbmtool:gdbmtool db5.3_load:db5.3-util perl:perl
test-deps:
	@missing=""; for t in $(TEST_TOOLS); do command -v $${t%%:*} >/dev/null || missing="$$missing $${t#*:}"; done; \
	python3 -c 'import dbm.gnu' 2>/dev/null || ls /usr/lib/python3*/lib-dynload/_gdbm.*.so >/dev/null 2>&1 || missing="$$missing python3-gdbm"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing$$missing"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) || echo "could not install$$missing; those comparisons will be skipped"; \
	fi

test: test-deps test-rust lint $(EXTRA_TESTS)

# Property tests draw their cases from a fixed seed, so that a run passes or
# fails the same way again; `make test PROPTEST_RNG_SEED=N` explores others.
export PROPTEST_RNG_SEED ?= 1

test-rust:
	$(CARGO) test --workspace

lint:
	@# The library alone, as a user builds it: without the internals feature
	@# that the tests' dev-dependency turns on for every target below.
	$(CARGO) check -p lamina --lib
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all -- --check
	@# Modules declared inside lib.rs's `internal!` macro are out of cargo
	@# fmt's reach: every tracked Rust file is checked by name as well.
	git ls-files 'crates/*.rs' 'python/src/*.rs' | xargs rustfmt --edition 2021 --check

clean:
	$(CARGO) clean
	rm -rf $(VENV)

