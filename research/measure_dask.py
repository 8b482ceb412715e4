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

``python research/measure_dask.py crossover FOLDER [WORKERS] [STEPS,...]
[ROUNDS]`` runs the same workload at growing item costs (about 20 us to 250-300 ms of
pure-Python arithmetic; 40 items, fewer past 80 ms so that a batch stays
near 3 s of work): the crossover is the smallest item cost at which
dask-N-chunk-1 is the same within the band as processes-N-chunk-1, or
faster (its time over theirs, through the speedups, at or below the band's
upper end). N is WORKERS (2 by default), over ROUNDS rounds (5).

``python research/measure_dask.py cpu-share [WORKERS]`` says where a local
cluster's CPU goes, read from /proc by psutil: idle for 10 s, then over
batches of 400 tasks that cost nothing and of 40 tasks of about 70 ms: the
client's process (the scheduler runs there, in LocalCluster) and the
workers, against a process pool's workers running the same items.

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

def models(workers):
    return "sequential,processes-%d-chunk-1,dask-%d-chunk-1" % (workers, workers)


def module(folder, steps):
    path = os.path.join(folder, "costly_%d.py" % steps)
    with open(path, "w") as out:
        out.write(COSTLY % steps)
    return path


def bench(folder, path, items, rounds, label, workers=2):
    """One bench.py run of ``models(workers)`` on the module at ``path``:
    its rows."""
    from concbench.analysis.rows import build_rows

    import pyperf

    out = os.path.join(folder, label + ".json")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([sys.executable, os.path.join(ROOT, "bench.py"), "--workload-module", path,
                    "--workload", "costly", "--items", str(items), "--model", models(workers),
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


# Steps of the loop an item runs: about 20 us to 250-300 ms an item here.
LEVELS = (300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000, 3000000)


def crossover(folder, workers=2, levels=LEVELS, rounds=5):
    from concbench import rules
    from concbench.analysis.comparisons import compare

    found = None
    dask_name, pool_name = "dask-%d-chunk-1" % workers, "processes-%d-chunk-1" % workers
    for steps in levels:
        cost = step_cost(steps, folder)
        # 40 items; past 80 ms an item, as many as make about 3.2 s of work.
        items = max(8, min(40, round(3.2 / cost)))
        rows = bench(folder, module(folder, steps), items, rounds,
                     "cost-%d-w%d" % (steps, workers), workers)
        dask, pool = rows[dask_name], rows[pool_name]
        ratio = compare(dask, pool)
        keeps_up = ratio is not None and ratio.high is not None and \
            ratio.high <= rules.SAME_BAND[1]
        print("item %9.1f us, %2d items: dask-%d %.2fx, processes-%d %.2fx; dask-%d's time "
              "over processes-%d's %s%s" % (
                  cost * 1e6, items, workers, dask.speedup, workers, pool.speedup, workers,
                  workers, "%.2f [%.2f-%.2f]" % (ratio.point, ratio.low, ratio.high)
                  if ratio and ratio.low else "(no interval)",
                  ": the same or faster" if keeps_up else ""), flush=True)
        if keeps_up and found is None:
            found = cost
    print("crossover: %s" % ("%.1f us an item" % (found * 1e6) if found
                             else "none within these costs"))


CPU_SHARE = r'''
import logging, os, statistics, sys, time
from concurrent.futures import ProcessPoolExecutor
import psutil
from distributed import Client, LocalCluster, as_completed


def spin(seed, steps):
    total = seed
    for step in range(steps):
        total = (total * 31 + step) % 1000003
    return total


def seconds(proc):
    times = proc.cpu_times()
    return times.user + times.system


if __name__ == "__main__":
    cluster = LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    me = psutil.Process()
    workers = [psutil.Process(pid) for pid in client.run(os.getpid).values()]

    def used(during):
        before = [seconds(me), sum(seconds(w) for w in workers)]
        started = time.perf_counter()
        during()
        took = time.perf_counter() - started
        return took, seconds(me) - before[0], sum(seconds(w) for w in workers) - before[1]

    def batch(count, steps):
        def run():
            futures = client.map(spin, range(1, count + 1), [steps] * count, pure=False)
            for _ in as_completed(futures, with_results=True, loop=client.loop):
                pass
        return run

    took, mine, theirs = used(lambda: time.sleep(10))
    print("idle 10 s: the client's process (and scheduler) %.1f%% of a core, the workers "
          "%.1f%% of a core together" % (100 * mine / took, 100 * theirs / took))
    for count, steps in ((400, 0), (40, 1000000)):
        batch(count, steps)()
        found = [used(batch(count, steps)) for _ in range(5)]
        took, mine, theirs = (statistics.median(f[i] for f in found) for i in range(3))
        # The same items on a process pool of as many processes: its
        # workers' CPU is the work as it runs two at a time here.
        with ProcessPoolExecutor(len(workers)) as pool:
            list(pool.map(spin, range(1, count + 1), [steps] * count))
            # The pool's own processes: not the cluster's workers, not
            # multiprocessing's resource tracker.
            kids = [psutil.Process(pid) for pid in pool._processes]
            pooled = []
            for _ in range(5):
                before = sum(seconds(k) for k in kids)
                started = time.perf_counter()
                list(pool.map(spin, range(1, count + 1), [steps] * count))
                pooled.append((time.perf_counter() - started,
                               sum(seconds(k) for k in kids) - before))
        pool_took, pool_cpu = (statistics.median(p[i] for p in pooled) for i in range(2))
        print("%d tasks of %d steps: batch %.3f s (a process pool's %.3f s); CPU of the "
              "client's process %.3f s (%.2f ms a task), of the workers %.3f s, the pool's "
              "%.3f s (%.2f ms a task more)" % (
                  count, steps, took, pool_took, mine, 1e3 * mine / count, theirs,
                  pool_cpu, 1e3 * (theirs - pool_cpu) / count))
    client.close()
    cluster.close()
'''


def cpu_share(workers=2):
    found = subprocess.run([sys.executable, "-c", CPU_SHARE, str(workers)],
                           capture_output=True, text=True, check=True)
    print(found.stdout, end="")


if __name__ == "__main__":
    what, rest = sys.argv[1:2], sys.argv[2:]
    if what == ["start"]:
        start(*(int(arg) for arg in rest[:2]))
    elif what == ["cpu-share"]:
        cpu_share(*(int(arg) for arg in rest[:1]))
    elif what == ["task-cost"] and len(rest) == 1:
        os.makedirs(rest[0], exist_ok=True)
        sys.path.insert(0, ROOT)
        task_cost(rest[0])
    elif what == ["crossover"] and 1 <= len(rest) <= 4:
        os.makedirs(rest[0], exist_ok=True)
        sys.path.insert(0, ROOT)
        crossover(rest[0], int(rest[1]) if len(rest) > 1 else 2,
                  tuple(int(x) for x in rest[2].split(",")) if len(rest) > 2 else LEVELS,
                  int(rest[3]) if len(rest) > 3 else 5)
    else:
        sys.exit("usage: python research/measure_dask.py start [WORKERS] [REPEATS] | "
                 "cpu-share [WORKERS] | task-cost FOLDER | crossover FOLDER [WORKERS] "
                 "[STEPS,...] [ROUNDS]")
