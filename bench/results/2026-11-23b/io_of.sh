#!/usr/bin/env bash
# io_of.sh LABEL CMD...: runs CMD, then prints the bytes it (and its children) wrote, from /proc/self/io.
label=$1; shift
bash -c '"$@"; rc=$?; awk -v l="'"$label"'" "/^write_bytes|^cancelled_write_bytes|^rchar|^wchar/ {print l\": \"\$0}" /proc/$$/io; exit $rc' _ "$@"
