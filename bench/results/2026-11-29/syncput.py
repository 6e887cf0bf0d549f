# syncput.py N: N puts of S-byte values (default 100,000) with durability "sync" into a new database; prints puts/s and latency percentiles. LAMINA_PY: the package directory
import sys, os, time, tempfile, shutil, statistics
sys.path.insert(0, os.environ["LAMINA_PY"])
import lamina
S=int(os.environ.get("S","100000")); n=int(sys.argv[1])
v=os.urandom(S)
d=tempfile.mkdtemp(dir="/work"); p=os.path.join(d,"db")
db=lamina.open(p,"c",durability="sync")
lat=[]
for i in range(n):
    t=time.perf_counter(); db[b"k%08d"%i]=v; lat.append(time.perf_counter()-t)
db.close(); shutil.rmtree(d)
lat.sort()
print(f"{n/sum(lat):.0f} puts/s  p50 {lat[n//2]*1e6:.0f} us  p99 {lat[int(n*.99)]*1e6:.0f} us  max {lat[-1]*1e6:.0f} us")
