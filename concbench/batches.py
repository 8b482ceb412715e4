"""The timed function pyperf calls in its workers: run, time and check batches.

Only the batch itself is timed (``BatchClock``); its check against the
sequential reference and the figures around it happen outside the timed
region, and any mismatch ends the benchmark loudly.
"""

import sys
import time
import traceback

from concbench import gil, schema
from concbench.figures import BatchProbe, RunFigures
from concbench.models.base import BatchClock
from concbench.thresholds import SERVER_BUSY_LIMIT, server_busy
from concbench.workloads.base import CheckError


class BatchFailed(Exception):
    """The benchmark cannot go on: one line, then the worker exits 1."""


def time_batches(loops, bench):
    """pyperf's time function: ``loops`` batches of ``bench``, in seconds."""
    try:
        prepared = bench.prepare()
        elapsed = 0.0
        for _ in range(loops):
            elapsed += run_batch(bench, prepared)
        return elapsed
    except BatchFailed as exc:
        print("ERROR: %s" % exc, file=sys.stderr, flush=True)
        sys.exit(1)


def run_batch(bench, prepared):
    """One timed, checked batch; its figures go to the run's hook."""
    items, reference, sync_fn, async_fn = prepared
    workload = bench.workload
    recorder = RunFigures.current
    gil_before = gil.enabled()    # after prepare(): the libraries are imported
    try:
        speed = machine_probe()
        before = workload.before_batch()
        probe = BatchProbe() if recorder is not None else None
        clock = BatchClock()
        results = bench.model.run(sync_fn, async_fn, items, clock)
        clock.stop()
        tree = probe.finish() if probe else None
        counts = workload.check(results, reference)
        counts.update(workload.after_batch(before, clock.elapsed))
    except CheckError as exc:
        raise BatchFailed("%s: result check failed: %s" % (bench.name, exc)) from None
    except Exception as exc:
        traceback.print_exc()
        raise BatchFailed("%s: the batch raised %s: %s"
                          % (bench.name, type(exc).__name__, exc)) from None
    refuse_total_failure(bench, counts)
    warn_server_busy(bench, counts, clock.elapsed)
    if recorder is not None:
        tree.update(counts)
        tree[schema.PROBE_S] = speed
        tree[schema.GIL_ENABLED] = gil_before or gil.enabled()
        tree.update(bench.model.run_labels())
        if gil.GilWatch.modules:
            tree[schema.GIL_ENABLED_BY] = ",".join(gil.GilWatch.modules)
        recorder.add_batch(clock.elapsed, tree)
    return clock.elapsed


def machine_probe(repeat=3, loops=20_000):
    """Seconds a fixed pure-Python loop takes now (the best of ``repeat``):
    how fast the machine was around this batch. The report compares it
    across runs to say how noisy the machine was."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        total = 0
        for number in range(loops):
            total += number * number
        best = min(best, time.perf_counter() - started)
    return best


def refuse_total_failure(bench, counts):
    """A server that died or refuses everything: counting failures for every
    remaining batch and benchmark would say nothing."""
    if counts.get(schema.ITEMS) and counts.get(schema.FAILURES) == counts[schema.ITEMS]:
        kinds = ", ".join("%s %d" % (schema.failure_kind(key), value)
                          for key, value in sorted(counts.items())
                          if schema.failure_kind(key))
        raise BatchFailed("%s: every item of the batch failed (%s); is the server "
                          "down?" % (bench.name, kinds or counts[schema.FAILURES]))


def warn_server_busy(bench, counts, seconds):
    busy = server_busy(counts.get(schema.SERVER_CPU, 0.0), seconds)
    if busy > SERVER_BUSY_LIMIT and not bench.warned:
        bench.warned = True
        print("WARNING: %s: the server used %.0f%% of a CPU during the batch; "
              "it may have been the bottleneck (flagged in the results)"
              % (bench.name, busy * 100), file=sys.stderr, flush=True)
