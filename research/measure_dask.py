"""What a local Dask cluster costs the dask-N-chunk-C models (docs/models.md,
"Dask"; docs/figures.md, "Dask against a process pool").

``python research/measure_dask.py start [WORKERS] [REPEATS]`` times, each in
a fresh Python as a pyperf worker is, importing distributed, starting a
``LocalCluster`` of WORKERS worker processes of one thread the way the model
does, and closing it; it prints the median and range of each.

``python research/measure_dask.py task-cost FOLDER`` runs bench.py on a
workload of the user's kind whose items cost nothing, at 50 to 400 items,
with processes-2-chunk-1 and dask-2-chunk-1: the per-task cost of dask-2 is
the slope of its batch time against the item count, less processes-2's.

``python research/measure_dask.py crossover FOLDER`` runs the same workload
at growing item costs (about 20 us to 60 ms of pure-Python arithmetic, 40
items): the crossover is the smallest item cost at which dask-2-chunk-1 is
the same within the band as processes-2-chunk-1, or faster (its time over
theirs, through the speedups, at or below the band's upper end).

FOLDER keeps each run's JSON and the workload modules it wrote.
"""

import os
import statistics
import subprocess
import sys

START = r'''
import logging, sys, time
t0 = time.perf_counter()
from distributed import Client, LocalCluster
t1 = time.perf_counter()
cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True,
                       dashboard_address=":0", silence_logs=logging.ERROR)
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


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A workload of the user's kind: each item does ``STEPS`` steps of integer
# arithmetic, its cost the module's parameter.
COSTLY = """from concbench.workloads.simple import workload

STEPS = %d


def numbers(rnd, count):
    return [rnd.randrange(1, 1000) for _ in range(count)]


@workload("costly", items=numbers, count=40)
def spin(seed):
    total = seed
    for step in range(STEPS):
        total = (total * 31 + step) %% 1000003
    return total
"""
MODELS = "sequential,processes-2-chunk-1,dask-2-chunk-1"


def module(folder, steps):
    path = os.path.join(folder, "costly_%d.py" % steps)
    with open(path, "w") as out:
        out.write(COSTLY % steps)
    return path


def bench(folder, path, items, rounds, label):
    """One bench.py run of MODELS on the module at ``path``: its rows."""
    from concbench.analysis.rows import build_rows

    import pyperf

    out = os.path.join(folder, label + ".json")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([sys.executable, os.path.join(ROOT, "bench.py"), "--workload-module", path,
                    "--workload", "costly", "--items", str(items), "--model", MODELS,
                    "-p", str(rounds), "--no-control", "-o", out],
                   check=True, capture_output=True, text=True)
    rows = build_rows(pyperf.BenchmarkSuite.load(out))["costly"]
    return {row.model: row for row in rows}


def step_cost(steps, folder):
    """Seconds one item of ``steps`` steps takes here, sequentially."""
    code = ("import time, importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('m', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "best = min((lambda t: (m.spin(7), time.perf_counter() - t)[1])"
            "(time.perf_counter()) for _ in range(20))\nprint(best)")
    found = subprocess.run([sys.executable, "-c", code, module(folder, steps)],
                           capture_output=True, text=True, check=True)
    return float(found.stdout)


def task_cost(folder, counts=(50, 100, 200, 400), rounds=5):
    path = module(folder, 0)
    means = {"processes-2-chunk-1": [], "dask-2-chunk-1": []}
    for count in counts:
        rows = bench(folder, path, count, rounds, "tasks-%d" % count)
        for name in means:
            means[name].append(statistics.median(rows[name].by_round.values()
                                                 or rows[name].values))
    slopes = {name: statistics.linear_regression(counts, values).slope
              for name, values in means.items()}
    for name, values in means.items():
        print("%-22s batch medians at %s items: %s; slope %.0f us a task" % (
            name, "/".join(map(str, counts)), " ".join("%.1f ms" % (v * 1e3) for v in values),
            slopes[name] * 1e6))
    print("dask-2's per-task cost over processes-2's: %.0f us" % (
        (slopes["dask-2-chunk-1"] - slopes["processes-2-chunk-1"]) * 1e6))


def crossover(folder, levels=(300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000),
              rounds=5):
    from concbench import rules
    from concbench.analysis.comparisons import compare

    found = None
    for steps in levels:
        cost = step_cost(steps, folder)
        rows = bench(folder, module(folder, steps), 40, rounds, "cost-%d" % steps)
        dask, pool = rows["dask-2-chunk-1"], rows["processes-2-chunk-1"]
        ratio = compare(dask, pool)
        keeps_up = ratio is not None and ratio.high is not None and \
            ratio.high <= rules.SAME_BAND[1]
        print("item %7.1f us: dask-2 %.2fx, processes-2 %.2fx; dask-2's time over "
              "processes-2's %s%s" % (cost * 1e6, dask.speedup, pool.speedup,
                                      "%.2f [%.2f-%.2f]" % (ratio.point, ratio.low, ratio.high)
                                      if ratio and ratio.low else "(no interval)",
                                      ": the same or faster" if keeps_up else ""))
        if keeps_up and found is None:
            found = cost
    print("crossover: %s" % ("%.1f us an item" % (found * 1e6) if found
                             else "none within these costs"))


if __name__ == "__main__":
    what = sys.argv[1:2]
    if what == ["start"]:
        start(*(int(arg) for arg in sys.argv[2:4]))
    elif what in (["task-cost"], ["crossover"]) and len(sys.argv) == 3:
        os.makedirs(sys.argv[2], exist_ok=True)
        sys.path.insert(0, ROOT)
        (task_cost if what == ["task-cost"] else crossover)(sys.argv[2])
    else:
        sys.exit("usage: python research/measure_dask.py start [WORKERS] [REPEATS] | "
                 "task-cost FOLDER | crossover FOLDER")
