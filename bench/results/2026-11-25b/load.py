"""Loads N keys (%016d, 100-byte slices of one random MiB, as seed 001) into PATH and closes;
an optional third argument sets block_size.  usage: load.py PATH N [BLOCK_SIZE]"""
import sys, random, os, shutil
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import lamina
path = sys.argv[1]
n = int(sys.argv[2])
shutil.rmtree(path, ignore_errors=True)
random.seed(100)
buf = random.randbytes(1 << 20)
db = lamina.open(path, "c", **({"block_size": int(sys.argv[3])} if len(sys.argv) > 3 else {}))
for i in range(n):
    o = (i * 100) % ((1 << 20) - 100)
    db[b"%016d" % i] = buf[o:o+100]
db.close()
