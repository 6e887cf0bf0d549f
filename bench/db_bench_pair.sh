#!/usr/bin/env bash
# bench/db_bench_pair.sh [small|large] [DIR]: the engine beside RocksDB's db_bench, one run each,
# lamina's `dbbench` example first, then `db_bench`, with what each wrote to the disk.
#
#   small  10^7 random puts of 16-byte keys and 100-byte values, then 10^6 random gets
#          (keys drawn from the same space: about 63% are found); lz4 for RocksDB.
#   large  5x10^4 random puts of 64 KiB values, as many overwrites, then 5x10^4 random gets;
#          RocksDB with blob files (--enable_blob_files=true).
# NUM=N sets the count of puts (and of gets, for large), e.g. NUM=100000 for 10^5 large values.
#
# Writes DIR/dbbench_WORKLOAD.txt (lamina) and DIR/db_bench_WORKLOAD.txt (RocksDB), each ending
# with the bytes written (bench/io_of.sh) and the size on disk, and appends start and end times
# with the load average to DIR/LOG. DIR defaults to $BENCH_OUT/<date> ($BENCH_OUT defaults to
# target/bench-results, which git ignores); the databases go under $TMPDIR (or /tmp) and are
# removed after. Debian's db_bench is built with assertions enabled (it prints a warning): its
# figures understate a release build of RocksDB.
set -u
W=${1:-small}
cd "$(dirname "$0")/.."
R=${2:-${BENCH_OUT:-target/bench-results}/$(date -u +%F)}
mkdir -p "$R"
T=${TMPDIR:-/tmp}
LDB=$T/lamina-dbbench.$$
RDB=$T/rocksdb-dbbench.$$
IO=bench/io_of.sh
case $W in
    small)
        N=${NUM:-10000000}
        LAM=(--num "$N" --reads 1000000 --benchmarks fillrandom,readrandom)
        ROCKS=(--benchmarks=fillrandom,readrandom --num="$N" --reads=1000000
               --key_size=16 --value_size=100 --compression_type=lz4) ;;
    large)
        N=${NUM:-50000}
        LAM=(--num "$N" --reads "$N" --value_size 65536
             --benchmarks fillrandom,overwrite,readrandom,flush)
        ROCKS=(--benchmarks=fillrandom,overwrite,readrandom --num="$N" --reads="$N"
               --key_size=16 --value_size=65536 --compression_type=lz4 --enable_blob_files=true) ;;
    *)
        echo "usage: bench/db_bench_pair.sh [small|large] [DIR]" >&2; exit 2 ;;
esac
command -v db_bench > /dev/null || { echo "db_bench not found (Debian: rocksdb-tools; bench/setup)" >&2; exit 1; }
cargo build -q --release -p lamina --example dbbench || exit 1
mark() { echo "$1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$R/LOG"; }
mark "dbbench $W start ($(git rev-parse --short HEAD 2>/dev/null))"
rm -rf "$LDB" "$RDB"
$IO lamina target/release/examples/dbbench "${LAM[@]}" --db "$LDB" > "$R/dbbench_$W.txt" 2>&1
du -sb "$LDB" >> "$R/dbbench_$W.txt"; rm -rf "$LDB"
$IO rocksdb db_bench "${ROCKS[@]}" --db="$RDB" > "$R/db_bench_$W.txt" 2>&1
du -sb "$RDB" >> "$R/db_bench_$W.txt"; rm -rf "$RDB"
mark "dbbench $W done"
grep -hE '^(fillrandom|overwrite|readrandom) |found\)|write_bytes|/rocksdb-dbbench|/lamina-dbbench' \
    "$R/dbbench_$W.txt" "$R/db_bench_$W.txt"
echo "results in $R"
