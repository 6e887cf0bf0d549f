# lamina: build, test and demo from a fresh machine with only Rust and Python.
#
#   make demo    build in release mode and run the seed-000 scenario
#   make test    every test: Rust (engine, CLI), Python module, benchmark harness
#   make lint    clippy and rustfmt checks

SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

.PHONY: all build release test test-rust lint demo clean

all: build

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --release --workspace --exclude lamina-python 2>/dev/null || $(CARGO) build --release --workspace

test: test-rust lint $(EXTRA_TESTS)

test-rust:
	$(CARGO) test --workspace

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all -- --check

clean:
	$(CARGO) clean
	rm -rf $(VENV)

-include python/python.mk
-include bench/bench.mk
-include scripts/demo.mk
