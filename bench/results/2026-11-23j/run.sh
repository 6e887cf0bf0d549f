#!/usr/bin/env bash
# Issue 12, the commit pipeline's gathering and parking: durable commits at
# 1..32 threads from Rust, before (BASE, a build of 0f5b5b9) and after (the
# tree's release build), interleaved twice; then from Python threads; then
# seed 002 db-insert-multiple before and after. Alone on the machine.
set -u
cd "$(dirname "$0")/../../.."
R=bench/results/2026-11-23j
BASE=${BASE:-/tmp/lamina-base}
NEW=target/release/lamina
log() { echo "$1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/LOG; }
: > $R/LOG
for round in 1 2; do
  for which in base new; do
    bin=$BASE; [ $which = new ] && bin=$NEW
    log "commit $which $round"
    $bin bench commit -q --seconds 2 --threads 1,2,4,8,16,32 \
      > $R/commit_${which}_$round.txt 2>&1
  done
done
log "python"
.venv/bin/python bench/commit_threads.py --threads 1,2,4,8,16,32 --seconds 2 \
  > $R/commit_python.txt 2>&1
log "testfile after"
$NEW bench commit -q --seconds 1 --threads 1 > $R/commit_testfile_after.txt 2>&1
for which in base new; do
  bin=$BASE; [ $which = new ] && bin=$NEW
  log "multi $which"
  $bin bench db-insert-multiple -q --rows 1000000 > $R/multi_$which.txt 2>&1
done
log "end"
