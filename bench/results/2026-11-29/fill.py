# fill.py ROUNDS: n=1000 values of S (default 100,000) bytes, dbm_bench.py data, written into a new database ROUNDS times; prints each round's rate without/with close. LAMINA_PY: the lamina package's directory
import sys, os, time, shutil, tempfile
sys.path.insert(0, "/work/main/bench"); sys.path.insert(0, os.environ["LAMINA_PY"])
import dbm_bench, lamina
S=int(os.environ.get("S","100000")); data = dbm_bench.Data(1000, 16, S); buf=data.buffer
out=[]
for r in range(int(sys.argv[1])):
    d = tempfile.mkdtemp(); p = os.path.join(d, "db")
    db = lamina.open(p, "c"); pos = 0
    t=time.perf_counter()
    for k in data.keys:
        db[k] = buf[pos:pos+S]; pos += S
        if pos + S > len(buf): pos = 0
    t1=time.perf_counter(); db.close(); t2=time.perf_counter()
    out.append(f"{1000/(t1-t):.0f}/{1000/(t2-t):.0f}")
    shutil.rmtree(d)
print(" ".join(out))
