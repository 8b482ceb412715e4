"""One batch: run the model on the items, timed by its clock alone, then
check the results against the reference; the figures around it (memory,
CPU, the machine's probe) are taken just outside the timed region, the same
for a benchmark's batch and the reference's beside it."""

import gc
import statistics
import sys
import time
import traceback

from concbench import item_stamps, schema
from concbench.histogram import histogram_of
from concbench.models.base import BatchClock, BatchLost
from concbench.run import gil
from concbench.run.interventions import used
from concbench.run.run_figures import BatchProbe, RunFigures
from concbench.thresholds import SERVER_BUSY_LIMIT, server_busy
from concbench.workloads.base import RATE, CheckError


class BatchFailed(Exception):
    """The benchmark cannot go on: one line, then the worker exits 1."""


def timed_run(bench, prepared, around=None):
    """Run one batch of ``bench``'s model, timed, then check it: (seconds,
    the check's counts, the items' latency figures). Each item's form is
    stamped (``concbench.item_stamps``); in an open-loop run its items are due
    on a schedule that starts with the batch. ``around``: (before, after)
    callables just outside the timed region."""
    items, reference, _, _ = prepared
    workload, model = bench.workload, bench.model
    sync_in, async_in = bench.item_forms(prepared)
    rate = workload.params.get(RATE.param) or 0
    if around:
        around[0]()
    clock = BatchClock()
    if rate:
        first_due = clock.began + SCHEDULE_LEAD
        given = [(first_due + index / rate, item) for index, item in enumerate(items)]
    else:
        given = items
    stamped = model.run(sync_in, async_in, given, clock)
    clock.stop()
    if around:
        around[1]()
    stamped = workload.check_count(stamped, reference)
    if not bench.record:
        return clock.elapsed, workload.check(stamped, reference), {}
    try:
        results, started, ended = item_stamps.unstamp(stamped)
    except (TypeError, ValueError):
        raise CheckError("the model's results are not its item function's") from None
    counts = workload.check(results, reference)
    # An item a sampling model did not time has no stamps (concbench.item_sampling.ItemSampler).
    if rate or model.latency_from == "item":
        waited = [end - start for start, end in zip(started, ended) if end is not None]
    else:
        waited = [end - clock.began for end in ended if end is not None]
    figures = {schema.LATENCY_HIST: histogram_of(waited)}
    if rate:
        figures[schema.ARRIVAL_RATE_ACHIEVED] = delivered_rate(started, ended, rate)
    return clock.elapsed, counts, figures


# An open-loop batch's first item is due this long after the batch starts.
SCHEDULE_LEAD = 0.001


def delivered_rate(due, ended, rate):
    """Results per second an open-loop batch delivered against its schedule.
    A model that keeps up delivers at the arrival rate, however long one
    item takes; one that falls behind makes each item later than the one
    before. Lateness that grows by g seconds per second of schedule spreads
    the results over 1 + g times the schedule: rate / (1 + g). The medians
    of the first and the last quarter of the items measure g, so that the
    jitter of single items does not count as falling behind."""
    late = [end - at for at, end in zip(due, ended)]
    quarter = len(late) // 4
    if quarter < 2:
        span = max(ended) - min(ended)
        return (len(late) - 1) / span if len(late) > 1 and span > 0 else rate
    schedule = statistics.median(due[-quarter:]) - statistics.median(due[:quarter])
    growth = (statistics.median(late[-quarter:]) - statistics.median(late[:quarter])) \
        / schedule
    return rate / max(1.0 + growth, 1e-9)


def watched_run(bench, prepared, partner=None, watch=True):
    """One timed, checked batch, watched as every batch of a pair is, the
    reference's beside it included (``concbench.run.partner``): the machine's
    probe before it, then the workload's figures and the memory sampler
    just outside the timed region. Whatever watching costs, both sides of
    a pair pay it; a watch on one side only would read as a difference
    between them. (seconds, counts, latency figures, the process tree's
    figures (None unwatched), the probe's seconds). ``partner``: the pid of
    the process running the reference's batches beside this one, not of
    its tree; ``watch``: False without the per-run figures (the hook),
    whose memory and CPU figures nobody reads then.

    First a full garbage collection, on both sides alike: every batch then
    starts from the same collector counts, instead of inheriting them from
    the batch before, and none pays for a full collection the batches
    before it prepared, which slows the batch it falls in (measured in
    c2ca82b: git show c2ca82b). Unlike a frozen heap, it leaves every
    object as the model would find it in a script."""
    if used("collect"):
        gc.collect()
    workload = bench.workload
    state = {"tree": None}

    def before():
        state["before"] = workload.before_batch()
        if watch:
            state["probe"] = BatchProbe(partner)

    def after():
        if watch:
            state["tree"] = state["probe"].finish()
    speed = machine_probe() if used("probe") else None
    seconds, counts, waits = timed_run(bench, prepared, (before, after))
    counts.update(workload.after_batch(state["before"], seconds))
    return seconds, counts, waits, state["tree"], speed


def run_batch(bench, prepared):
    """One timed, checked batch: (seconds, its figures for the run's hook,
    None without the hook)."""
    recorder = RunFigures.current
    gil_before = gil.enabled()    # after prepare(): the libraries are imported
    try:
        seconds, counts, waits, tree, speed = watched_run(
            bench, prepared, bench.partner_pid(), watch=recorder is not None)
    except CheckError as exc:
        raise BatchFailed("%s: result check failed: %s" % (bench.name, exc)) from None
    except BatchLost as exc:
        raise BatchFailed("%s: the batch was lost: %s" % (bench.name, exc)) from None
    except Exception as exc:
        traceback.print_exc()
        raise BatchFailed("%s: the batch raised %s: %s"
                          % (bench.name, type(exc).__name__, exc)) from None
    refuse_total_failure(bench, counts)
    warn_server_busy(bench, counts, seconds)
    if recorder is None:
        return seconds, None
    tree.update(counts)
    tree.update(waits)
    if speed is not None:
        tree[schema.PROBE_S] = speed
    tree[schema.GIL_ENABLED] = gil_before or gil.enabled()
    tree.update(bench.model.run_labels())
    if gil.GilWatch.modules:
        tree[schema.GIL_ENABLED_BY] = ",".join(gil.GilWatch.modules)
    return seconds, tree


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
