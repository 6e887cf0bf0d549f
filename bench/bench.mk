# Benchmarks against other engines (bench/). Included by the root Makefile:
#     -include bench/bench.mk
# Targets:
#   bench-setup   install the peers (Debian packages; PyPI packages into .venv) and what the
#                 bench package needs to build RocksDB (clang, libclang-dev, build-essential)
#   bench-cli     the release builds the suite runs: the `lamina` binary, and `lamina-bench`
#                 from the bench package (bench/Cargo.toml, a cargo workspace of its own; the
#                 first build compiles RocksDB's C++, about 17 minutes on 2 cores)
#   bench         the whole suite, under 30 minutes on a 2-core machine -> $(BENCH_OUT)/<date>/
#   bench-quick   the same steps at small sizes, under 3 minutes -> $(BENCH_OUT)/<date>-quick/
#                 and each step's wall time against the previous quick run's (steps.json):
#                 "no slower" is no step marked SLOWER (above 1.10x)
#   bench-engines `lamina-bench engines`: lamina beside release-built RocksDB, LMDB, redb and
#                 fjall on db_bench's workloads; tables and CSV in $(BENCH_OUT)/engines/
#                 e.g. make bench-engines BENCH_ARGS='--num 1000000'
#   bench-tpcb    `lamina-bench tpcb`: the TPC-B transaction (ex_tpcb's) at 1, 2, 4, 8, 16 threads,
#                 every commit durable, lamina beside RocksDB (TransactionDB), LMDB, SQLite and
#                 Berkeley DB (C), then bench/tpcb.py (the same from Python at 1 and 16 threads);
#                 tables, CSV and a chart in $(BENCH_OUT)/tpcb/ (about 5 minutes at the defaults)
#                 e.g. make bench-tpcb TPCB_ARGS='--seconds 2 --engines lamina,lmdb'
#   bench-btree-rows `lamina-bench btree-rows`: the rows of redb's engine comparison (its
#                 lmdb_benchmark: bulk load, writes, reads at 1 to 32 threads, range reads,
#                 removals, retain, extract_if, pop, sizes) for lamina, RocksDB, LMDB and redb at
#                 the harness's sizes and settings; table and CSV in $(BENCH_OUT)/btree-rows/
#                 e.g. make bench-btree-rows BTREE_ROWS_ARGS='--elements 20000 --engines lamina,redb'
#   bench-btree-py bench/btree_py.py: a B-tree's rows from Python (popitem() until empty, len(),
#                 items(prefix) of 10 items) for lamina, LMDB, dbm.gnu and SQLite; table, CSV and
#                 JSON in $(BENCH_OUT)/btree-py/
#                 e.g. make bench-btree-py BTREE_PY_ARGS='--pop-items 100000 --len-items 1000000'
#   bench-scale-reads `lamina-bench scale-reads`: random point lookups in 10^8 keys of 16 random
#                 bytes with 100-byte values, each engine's reading process capped at 512 MiB
#                 (page cache included): 1 thread, 16 threads, batches of 64, found and absent
#                 keys, for lamina, RocksDB, LMDB, redb and Berkeley DB, beside fio's random 4 KiB
#                 reads at queue depths 1 and 32; table, CSV and a chart of every data set's CSV
#                 there (scale-reads.png) in $(BENCH_OUT)/scale-reads/. Needs root
#                 (the cap, the page cache) and room for five databases of about 12 GB each in
#                 SCALE_READS_DIR, kept for the next run, and fio's file of as much while it runs;
#                 with room for one, SCALE_READS_ARGS='--one-by-one' loads, reads and removes
#                 each in turn
#                 e.g. make bench-scale-reads SCALE_READS_ARGS='--data numbers'
#   bench-migrate bench/migrate_bench.py: a 2^20-record gdbm file and Berkeley DB file loaded into
#                 lamina directly (`lamina load DB FILE`) beside `gdbm_dump | lamina load` and
#                 `db5.3_dump | lamina load`, and lamina.migrate(); MIGRATE_N sets the records
#   bench-open-loop bench/open_loop.py: open, one put, close from Python, R rounds (OPEN_LOOP_ROUNDS,
#                 default 500), lamina beside dbm.gnu, LMDB and SQLite
#   bench-test    the harness's own tests (pytest, seconds) and the bench package's (cargo, in
#                 release mode: RocksDB is built once for both); `make test` runs only the
#                 harness's (bench-test-harness, through EXTRA_TESTS) and never builds the package
# BENCH_ARGS passes options to bench/run.py (make bench BENCH_ARGS='--only dbm,numbers') or to
# `lamina-bench engines` (make bench-engines).
# BENCH_OUT is where results go (default target/bench-results, which git ignores); the
# scripts in bench/ read it from the environment too.

BENCH_PY   = $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
BENCH_ARGS ?=
CARGO      ?= cargo
BENCH_OUT  ?= target/bench-results
export BENCH_OUT

# Where the root workspace builds, and where the bench package does: target/bench beside it
# (bench/.cargo/config.toml), or $(CARGO_TARGET_DIR)/bench.
BENCH_ROOT_TARGET := $(if $(CARGO_TARGET_DIR),$(CARGO_TARGET_DIR),$(CURDIR)/target)
BENCH_TARGET      := $(BENCH_ROOT_TARGET)/bench
LAMINA_BIN        := $(BENCH_ROOT_TARGET)/release/lamina
LAMINA_BENCH      := $(BENCH_TARGET)/release/lamina-bench
BENCH_CARGO        = cd bench && CARGO_TARGET_DIR=$(BENCH_TARGET) $(CARGO)

# What lamina brings to the benchmarks: the release `lamina` and `lamina-bench` binaries, and the
# Python module built into .venv (python/python.mk's py-build), where those exist.
BENCH_BUILD := $(if $(wildcard crates/lamina-cli/Cargo.toml),bench-cli)
BENCH_BUILD += $(if $(wildcard python/python.mk),py-build)

.PHONY: bench-setup bench bench-quick bench-engines bench-test bench-test-harness \
	bench-test-package bench-cli bench-migrate bench-open-loop bench-tpcb bench-btree-rows \
	bench-scale-reads

EXTRA_TESTS += bench-test-harness

bench-setup:
	bash bench/setup

bench-cli:
	$(CARGO) build --release -p lamina-cli
	$(BENCH_CARGO) build --release

bench: $(BENCH_BUILD)
	$(BENCH_PY) bench/run.py --lamina $(LAMINA_BIN) --lamina-bench $(LAMINA_BENCH) $(BENCH_ARGS)

bench-quick: $(BENCH_BUILD)
	$(BENCH_PY) bench/run.py --quick --lamina $(LAMINA_BIN) --lamina-bench $(LAMINA_BENCH) \
		$(BENCH_ARGS)

bench-engines:
	$(BENCH_CARGO) build --release
	$(LAMINA_BENCH) engines $(BENCH_ARGS)

# `lamina-bench tpcb`'s options (TPCB_ARGS) and bench/tpcb.py's (TPCB_PY_ARGS).
TPCB_ARGS    ?=
TPCB_PY_ARGS ?=

bench-tpcb: $(if $(wildcard python/python.mk),py-build)
	$(BENCH_CARGO) build --release
	$(LAMINA_BENCH) tpcb --out $(BENCH_OUT)/tpcb $(TPCB_ARGS)
	$(BENCH_PY) bench/tpcb.py --out $(BENCH_OUT)/tpcb $(TPCB_PY_ARGS)
	$(BENCH_PY) bench/plot_tpcb.py $(BENCH_OUT)/tpcb/tpcb.csv $(BENCH_OUT)/tpcb/tpcb-python.csv \
		$(BENCH_OUT)/tpcb/tpcb.png

# `lamina-bench btree-rows`'s options (the default: every row at the harness's 5,000,000 pairs).
BTREE_ROWS_ARGS ?=

bench-btree-rows:
	$(BENCH_CARGO) build --release
	$(LAMINA_BENCH) btree-rows --out $(BENCH_OUT)/btree-rows $(BTREE_ROWS_ARGS)

# bench/btree_py.py's options (the default: 10^6 pops, len() of 10^7 items).
BTREE_PY_ARGS ?=

.PHONY: bench-btree-py
bench-btree-py: $(if $(wildcard python/python.mk),py-build)
	$(BENCH_PY) bench/btree_py.py $(BTREE_PY_ARGS)

# `lamina-bench scale-reads`'s options, and the work directory that keeps each engine's database
# between runs (a run of the same data set uses them again).
SCALE_READS_ARGS ?=
SCALE_READS_DIR  ?= $(BENCH_ROOT_TARGET)/scale-reads

bench-scale-reads:
	$(BENCH_CARGO) build --release
	$(LAMINA_BENCH) scale-reads --dir $(SCALE_READS_DIR) --out $(BENCH_OUT)/scale-reads \
		$(SCALE_READS_ARGS)
	$(BENCH_PY) bench/plot_scale_reads.py $(BENCH_OUT)/scale-reads/scale-reads-*.csv \
		$(BENCH_OUT)/scale-reads/scale-reads.png

MIGRATE_N        ?= 1048576
OPEN_LOOP_ROUNDS ?= 500

bench-migrate:
	$(CARGO) build --release -p lamina-cli
	$(BENCH_PY) bench/migrate_bench.py -n $(MIGRATE_N) --lamina $(LAMINA_BIN)

bench-open-loop: $(if $(wildcard python/python.mk),py-build)
	$(BENCH_PY) bench/open_loop.py --rounds $(OPEN_LOOP_ROUNDS)

bench-test: bench-test-harness bench-test-package

bench-test-harness:
	$(BENCH_PY) -m pytest -q bench/tests

# The numbers workload's tests drive the `lamina` binary (a debug build does for them).
bench-test-package:
	$(CARGO) build -p lamina-cli
	cd bench && LAMINA_BIN=$(BENCH_ROOT_TARGET)/debug/lamina CARGO_TARGET_DIR=$(BENCH_TARGET) \
		$(CARGO) test --release
