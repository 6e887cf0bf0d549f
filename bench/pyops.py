"""Instruction counts of one kind of point operation from Python, for callgrind.

    valgrind --tool=callgrind .venv/bin/python bench/pyops.py OP N

OP: get-mem, get-table, get-cold, contains-table, set, del. 20,000 keys of
16 bytes with 100-byte values are written first; then N operations. The cost
of one operation is (instructions at N - instructions at N = 0) / N. get-cold
reads each key once after reopening (no row cached, blocks read from the
files as the dbm benchmark's read_cold does) and del deletes each key once: both run
at most 20,000 operations.
"""
import sys, tempfile, os
import lamina
op, n = sys.argv[1], int(sys.argv[2])
d = tempfile.mkdtemp()
p = os.path.join(d, "db")
keys = [b"%016d" % (i * 7919 % 10**16) for i in range(20000)]
v = b"v" * 100
db = lamina.open(p, "c")
for k in keys:
    db[k] = v
if op in ("get-table", "contains-table", "get-cold"):
    db.close()
    db = lamina.open(p, "w")
if op in ("get-table", "contains-table"):
    for k in keys:
        db[k]
ks = (keys * (n // len(keys) + 1))[:n]
if op in ("get-mem", "get-table"):
    for k in ks:
        db[k]
elif op == "get-cold":
    for k in ks[:min(n, len(keys))]:
        db[k]
elif op == "contains-table":
    for k in ks:
        k in db
elif op == "set":
    for k in ks:
        db[k] = v
elif op == "del":
    for k in ks[:min(n, len(keys))]:
        del db[k]
db.close()
