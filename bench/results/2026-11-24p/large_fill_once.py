import os, sys, time, shutil, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import lamina
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
keys = [os.urandom(8).hex().encode() for _ in range(1000)]
values = [os.urandom(100000) for _ in range(4)]
db = lamina.open(path, "c")
for i, k in enumerate(keys[:50]): db[k] = values[i % 4]
open("ready","w").close(); time.sleep(0.5)
t = time.perf_counter()
for i, k in enumerate(keys): db[k + b"x"] = values[i % 4]
print("fill ms", (time.perf_counter() - t) * 1e3, file=sys.stderr)
time.sleep(0.5)
