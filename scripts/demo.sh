#!/usr/bin/env bash
# The numbers load (`make demo`): generate N numbers-in-English records
# (default 2^24), pipe them through `lamina shell --newdb` with progress, as
# "How well does a GNU dbm database scale?" piped numbers.pl into `gdbmtool
# --newdb`; then show `lamina stat`, fetch a few records, and print the rate
# and the file size.
#
#   N=1048576 scripts/demo.sh        # a smaller run
#   DB=/tmp/numbers.lamina scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-16777216}
DB=${DB:-target/demo/numbers.lamina}
CARGO=${CARGO:-cargo}

"$CARGO" build --release -q -p lamina-cli
L=target/release/lamina
mkdir -p "$(dirname "$DB")"

echo "== lamina gen numbers $((N - 1)) | lamina shell --newdb --progress $DB   ($N records)"
start=$(date +%s.%N)
"$L" gen numbers $((N - 1)) | "$L" shell --newdb --progress --total "$N" "$DB"
end=$(date +%s.%N)

echo
echo "== lamina stat $DB"
"$L" stat "$DB"

echo
echo "== a few records, fetched with the shell"
cmds=""
for k in 0 7 1001 123456 1000001 $((N / 2)) $((N - 1)); do
    if [ "$k" -lt "$N" ]; then cmds+="fetch $k"$'\n'; fi
done
cmds+="count"$'\n'
printf '%s' "$cmds" | sed 's/^/   > /'
printf '%s' "$cmds" | "$L" shell --read-only "$DB"

bytes=$(du -sb "$DB" | cut -f1)
awk -v n="$N" -v s="$start" -v e="$end" -v b="$bytes" 'BEGIN {
    t = e - s
    printf "\n== %d records in %.1f s: %.0f records/s; database %.1f MiB on disk\n", n, t, n / t, b / 1048576
    printf "   (gdbm, in the original write-up: 21 h 43 min for 125,000,000 records, a 20.6 GiB file)\n"
}'
