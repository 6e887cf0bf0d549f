import os, sys, time, shutil, tempfile, resource
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import lamina
base = tempfile.mkdtemp(); path = os.path.join(base, "db")
keys = [os.urandom(8).hex().encode() for _ in range(1000)]
values = [os.urandom(100000) for _ in range(4)]
for r in range(5):
    shutil.rmtree(path, ignore_errors=True)
    db = lamina.open(path, "c")
    ru0 = resource.getrusage(resource.RUSAGE_SELF); t = time.perf_counter(); c = time.thread_time()
    for i, k in enumerate(keys): db[k] = values[i % 4]
    w = time.perf_counter() - t; ct = time.thread_time() - c
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    print(f"wall {w*1e3:.0f} ms  thread cpu {ct*1e3:.0f} ms  process user {1e3*(ru1.ru_utime-ru0.ru_utime):.0f} sys {1e3*(ru1.ru_stime-ru0.ru_stime):.0f}  vol cs {ru1.ru_nvcsw-ru0.ru_nvcsw} invol {ru1.ru_nivcsw-ru0.ru_nivcsw} majflt {ru1.ru_majflt-ru0.ru_majflt} minflt {ru1.ru_minflt-ru0.ru_minflt}")
    db.close()
