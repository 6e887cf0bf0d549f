#!/usr/bin/env bash
# bench/io_of.sh LABEL COMMAND [ARGS...]: runs COMMAND, then prints what it and its children
# read and wrote, from /proc/PID/io of the shell that ran it: rchar, wchar, write_bytes (bytes
# that reached the block layer) and cancelled_write_bytes (pages of files removed before they
# were written back), each line prefixed with LABEL. Exits with COMMAND's status.
label=$1; shift
bash -c '"$@"; rc=$?; awk -v l="'"$label"'" "/^write_bytes|^cancelled_write_bytes|^rchar|^wchar/ {print l\": \"\$0}" /proc/$$/io; exit $rc' _ "$@"
