#!/bin/bash
# mkprof.sh NAME: profiling build of the module at the work tree into /tmp/lp_NAME
set -e
cd /work/main/python && PYO3_PYTHON=/work/main/.venv/bin/python cargo build -q --profile profiling 2>&1 | grep -v warning | head -5
rm -rf /tmp/lp_$1 && mkdir -p /tmp/lp_$1 && cp -r /work/main/python/lamina /tmp/lp_$1/ && cp /work/main/target/profiling/lib_lamina.so /tmp/lp_$1/lamina/_lamina.abi3.so
