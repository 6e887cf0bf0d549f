# The Python module: included by the root Makefile (`include python/python.mk`).
# Paths are relative to the repository root, where make runs.
#
#   make venv      .venv with maturin, pytest, hypothesis (installed only where missing)
#   make py-build  release build of the extension into .venv
#   make py-test   py-build, then the pytest suites in python/tests (Dask and
#                  pyarrow, pandas installed if missing, for lamina.dask's tests,
#                  and moto, s3fs, boto3 for its S3 staging test)
#   make py-bench  semidbm's dbm benchmark from Python: lamina beside dbm.gnu and semidbm
#                  (PY_BENCH_ARGS, default -n 1000000; semidbm installed if missing)
#   make py-install  `pip install ./python` into a fresh virtual environment,
#                  then import it there, and `cargo install` the CLI beside it
#                  (what a user's install does)

PY_VENV      ?= .venv
PY_PYTHON    := $(PY_VENV)/bin/python
PY_PIP       := $(PY_PYTHON) -m pip --disable-pip-version-check -q
PY_TOOLS     := maturin pytest hypothesis
PY_SOURCES   := $(wildcard python/src/*.rs) python/Cargo.toml python/pyproject.toml \
                $(wildcard crates/lamina/src/*.rs crates/lamina/src/*/*.rs crates/lamina/src/*/*/*.rs) crates/lamina/Cargo.toml
PY_STAMP     := $(PY_VENV)/.lamina-built
# The optional Dask extra (lamina[dask]) and what its tests need: an S3
# server (moto) and client (s3fs, boto3) for the staging test.
PY_DASK      := dask[dataframe,distributed]
PY_DASK_S3   := moto[server] s3fs boto3

.PHONY: venv py-build py-test py-bench py-install

# `make test` runs the Python suites too, and installs the package as a user would.
EXTRA_TESTS += py-test py-install

venv: $(PY_VENV)/.tools

$(PY_PYTHON):
	python3 -m venv $(PY_VENV)

# Installs each tool only when the venv lacks it, so a re-run costs nothing.
$(PY_VENV)/.tools: $(PY_PYTHON)
	@for tool in $(PY_TOOLS); do \
	  $(PY_PIP) show $$tool >/dev/null 2>&1 || { echo "pip install $$tool"; $(PY_PIP) install $$tool || exit 1; }; \
	done
	@touch $@

$(PY_STAMP): $(PY_VENV)/.tools $(PY_SOURCES) $(wildcard python/lamina/*)
	cd python && VIRTUAL_ENV=$(abspath $(PY_VENV)) PATH=$(abspath $(PY_VENV))/bin:$$PATH \
	  maturin develop --release --quiet
	@# A module built before the abi3 build would shadow it.
	@rm -f python/lamina/_lamina.cpython-*.so
	@touch $@

py-build: $(PY_STAMP)

# Installs Dask and pandas, and the S3 test's moto and s3fs, only when the
# venv lacks them.
$(PY_VENV)/.dask: $(PY_PYTHON) python/python.mk
	@$(PY_PYTHON) -c "import dask.dataframe, dask.distributed" 2>/dev/null || { echo "pip install $(PY_DASK)"; $(PY_PIP) install $(PY_DASK) || exit 1; }
	@$(PY_PYTHON) -c "import moto.server, s3fs, boto3" 2>/dev/null || { echo "pip install $(PY_DASK_S3)"; $(PY_PIP) install $(PY_DASK_S3) || exit 1; }
	@touch $@

py-test: py-build $(PY_VENV)/.dask
	$(PY_PYTHON) -m pytest python/tests -q

PY_BENCH_ARGS ?= -n 1000000

py-bench: py-build
	@$(PY_PIP) show semidbm >/dev/null 2>&1 || $(PY_PIP) install semidbm
	$(PY_PYTHON) bench/dbm_bench.py $(PY_BENCH_ARGS) -d lamina -d dbm.gnu -d semidbm

# A fresh environment each time, under target/ (ignored by git); cargo's
# target directory is shared, so the build reuses what py-build compiled.
PY_FRESH := target/py-install-venv

py-install:
	rm -rf $(PY_FRESH)
	python3 -m venv $(PY_FRESH)
	CARGO_TARGET_DIR=$(abspath target) $(PY_FRESH)/bin/python -m pip \
	  --disable-pip-version-check -q install ./python
	cd $(PY_FRESH) && bin/python -c 'import lamina, lamina.shelve, shutil, tempfile; \
	  d = tempfile.mkdtemp(); p = d + "/db"; \
	  db = lamina.open(p, "c"); db[b""] = b"empty"; db.close(); \
	  assert lamina.open(p, "r")[b""] == b"empty" and lamina.whichdb(p) == "lamina"; \
	  shutil.rmtree(d); print("installed lamina", lamina.__version__, "imports and works")'
	@# The command-line tool as README installs it, into the same fresh prefix
	@# (a debug build sharing the tests' target directory, so it costs seconds).
	$(CARGO) install --quiet --locked --debug --path crates/lamina-cli \
	  --root $(PY_FRESH) --target-dir $(abspath target)
	$(PY_FRESH)/bin/lamina --version
