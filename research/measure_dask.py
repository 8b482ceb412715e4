"""What a local Dask cluster costs the dask-N-chunk-C models (docs/models.md,
"Dask"): ``python research/measure_dask.py start [WORKERS] [REPEATS]`` times,
each in a fresh Python as a pyperf worker is, importing distributed,
starting a ``LocalCluster`` of WORKERS worker processes of one thread the
way the model does, and closing it; it prints the median and range of each.
"""

import statistics
import subprocess
import sys

START = r'''
import logging, sys, time
t0 = time.perf_counter()
from distributed import Client, LocalCluster
t1 = time.perf_counter()
cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True,
                       dashboard_address=None, silence_logs=logging.ERROR)
client = Client(cluster, set_as_default=False)
t2 = time.perf_counter()
client.close()
cluster.close()
print(t1 - t0, t2 - t1, time.perf_counter() - t2)
'''


def start(workers=2, repeats=7):
    rows = []
    for _ in range(repeats):
        found = subprocess.run([sys.executable, "-c", START, str(workers)],
                               capture_output=True, text=True, check=True)
        rows.append([float(x) for x in found.stdout.split()])
    for index, what in enumerate(("import", "start (%d workers)" % workers, "close")):
        values = [row[index] for row in rows]
        print("%-18s median %.2f s (%.2f-%.2f) over %d" % (
            what, statistics.median(values), min(values), max(values), repeats))


if __name__ == "__main__":
    if sys.argv[1:2] != ["start"]:
        sys.exit("usage: python research/measure_dask.py start [WORKERS] [REPEATS]")
    start(*(int(arg) for arg in sys.argv[2:4]))
