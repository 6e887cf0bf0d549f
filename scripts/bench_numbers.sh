#!/usr/bin/env bash
# The numbers load side by side: the same `store N "words"` stream of 2^K records
# (default K=23) loaded by `lamina shell --newdb`, `gdbmtool --newdb` and
# Berkeley DB's `db5.3_load -T -t btree` (fed the same records as key and
# value lines), one after the other in one run on one machine; plus
# lamina's own pipeline (`lamina gen | lamina shell`) and its built-in
# generator path (`lamina gen --into`). Prints a Markdown table: seconds
# (the command's wall time, closing the database included), records/s,
# size on disk, peak memory.
#
#   K=20 scripts/bench_numbers.sh          # a quick run
#   SKIP="gdbmtool" scripts/bench_numbers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

K=${K:-23}
N=$((1 << K))
DIR=${DIR:-${TMPDIR:-/tmp}/lamina-numbers}
SKIP=${SKIP:-}
cargo build --release -q -p lamina-cli
L=$PWD/target/release/lamina
mkdir -p "$DIR"
cd "$DIR"

"$L" gen numbers $((N - 1)) > input.txt
"$L" gen numbers $((N - 1)) --format db-load > input.dbload

rows=()
# run NAME OUTPUT COMMAND...: times COMMAND (through bash -c), records its size.
run() {
    local name=$1 out=$2
    shift 2
    case " $SKIP " in *" $name "*) return ;; esac
    rm -rf "$out"
    sync
    local t0 t1 rss
    t0=$(date +%s.%N)
    /usr/bin/time -f %M -o rss.txt bash -c "$*" > /dev/null
    t1=$(date +%s.%N)
    rss=$(tail -n 1 rss.txt)
    local bytes
    bytes=$(du -sb "$out" | cut -f1)
    rows+=("$(awk -v name="$name" -v n="$N" -v a="$t0" -v b="$t1" -v s="$bytes" -v m="$rss" 'BEGIN {
        t = b - a
        r = sprintf("%d", n / t); c = ""
        while (length(r) > 3) { c = "," substr(r, length(r) - 2) c; r = substr(r, 1, length(r) - 3) }
        printf "| %s | %.1f | %s | %.0f MiB | %.0f MiB |", name, t, r c, s / 1048576, m / 1024
    }')")
    echo "${rows[-1]}   # $*" >&2
}

run "lamina shell --newdb < input" numbers.lamina "$L shell --newdb numbers.lamina < input.txt"
run "lamina gen \\| lamina shell --newdb" numbers2.lamina "$L gen numbers $((N - 1)) | $L shell --newdb numbers2.lamina"
run "lamina gen --into (no text)" numbers3.lamina "$L -q gen numbers $((N - 1)) --into numbers3.lamina --newdb"
if command -v db5.3_load > /dev/null; then
    run "db5.3_load -T -t btree < input" numbers.bdb "db5.3_load -T -t btree numbers.bdb < input.dbload"
fi
if command -v gdbmtool > /dev/null; then
    run "gdbmtool --newdb < input" numbers.gdbm "gdbmtool --newdb --norc numbers.gdbm < input.txt"
fi

echo
echo "numbers load, $N records (2^$K), $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r)"
echo
echo "| loader | seconds | records/s | size on disk | peak memory |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
