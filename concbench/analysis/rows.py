"""One benchmark's figures (a Row), its ideal time and its flags.

Everything the report knows of a workload or a model comes from the
benchmark's metadata, written by the workload and the model themselves
(concurrency, parallelism, interpreters, item side, reference model,
scaling series): it names none of them.
"""

import math
import os
import statistics

from concbench import cpus
from concbench.analysis.ceiling import is_ceiling
from concbench import schema as K
from concbench.rules import ALPHA, UNDECIDED, split
from concbench.analysis.stats import half_width, imprecise, paired_ratio
from concbench.thresholds import SERVER_BUSY_LIMIT, unstable_reasons
from concbench.workloads.base import JITTER_MS, LATENCY_MS

from . import latencies, pairs
from .runs import across_runs, run_figures, usual_gil

# What a model states of itself in the metadata (models.base.Model.metadata);
# a file without them (from an older bench.py) gets no ideal time.
MODEL_FACTS = (K.CONCURRENCY, K.PARALLELISM, K.INTERPRETERS, K.ITEM_SIDE)
# pyperf's units of a benchmark's values.
UNITS = ("second", "byte", "integer")
# Where a row's peak memory comes from, in order of preference, with the
# name its column gives it: for a row run on a user's Dask cluster, its
# workers' RSS as the scheduler reported it (the local tree holds only the
# client's side); else the suite's own PSS of the process tree, else
# what pyperf recorded of the one process that ran the benchmark (bytes,
# per run): its worker's peak RSS, or the command's that pyperformance
# runs in a process of its own.
TREE_PSS = "tree PSS"
CLUSTER_RSS = "cluster RSS"
# The keys that say a row ran on a user's Dask cluster, and the figures of
# its local tree that are then the client's side only.
CLUSTER_KEYS = (K.DASK_SCHEDULER, K.DASK_CLUSTER_MEMORY, K.DASK_CLUSTER_CPU)
CLIENT_SIDE = (K.CPU_TREE, K.CPU_TREE_SYSTEM, K.MEM_TREE_BASE)
MEMORY_SOURCES = ((K.DASK_CLUSTER_MEMORY, CLUSTER_RSS),
                  (K.MEM_TREE_PEAK, TREE_PSS),
                  ("mem_max_rss", "pyperf RSS"),
                  ("command_max_rss", "pyperf RSS"),
                  ("tracemalloc_peak", "tracemalloc"),
                  ("mem_peak", "pyperf track-memory"),
                  ("mem_peak_pagefile_usage", "pagefile"))


class Row(pairs.SettledRow):
    """One benchmark's figures, with what pyperf alone does not show; its
    speedup, once settled against the reference (``compute_ideal``), in
    ``settled``."""

    def __init__(self, bench):
        self.bench = bench
        self.name = bench.get_name()
        self.meta = bench.get_metadata()
        self.runs = run_figures(bench)
        # A row whose items ran on a user's Dask cluster (in any of its runs:
        # pyperf drops a key from the benchmark's metadata where runs
        # differ, as two clusters' addresses do): its process tree is the
        # client's side only, so the CPU and the memory it added are no
        # model's cost of an item. They are left out of its figures here:
        # it shows no cores, CPU or system share, gives no ideal its CPU,
        # and its memory is the cluster's own figure (MEMORY_SOURCES).
        self.elsewhere = any(key in m for m in [self.meta] + self.runs
                             for key in CLUSTER_KEYS)
        if self.elsewhere:
            self.runs = [{key: value for key, value in m.items() if key not in CLIENT_SIDE}
                         for m in self.runs]
        self.ours = K.WORKLOAD in self.meta
        workload, _, model = self.name.partition("/")
        self.workload = self.meta.get(K.WORKLOAD, workload if model else "(other)")
        self.model = self.meta.get(K.MODEL, model or self.name)
        self.mean = bench.mean()
        # What the values are: pyperf's unit (seconds unless a file says
        # bytes, as --track-memory's do, or plain numbers).
        self.unit = self.meta.get("unit") if self.meta.get("unit") in UNITS else "second"
        self.stdev = bench.stdev() if bench.get_nvalue() >= 2 else 0.0
        self.values = bench.get_values()
        self.items = self.meta.get(K.ITEMS_PER_BATCH)
        self.items_per_s = self.items / self.mean if self.items else None
        self.cores = self._cores()
        key, self.mem_source = next(
            ((key, name) for key, name in MEMORY_SOURCES
             if any(key in m for m in self.runs)), (None, None))
        # Each run's peak: what a comparison of two files' memory pairs up.
        self.mem_peaks = [m[key] for m in self.runs if key in m]
        self.mem_peak = statistics.median(self.mem_peaks) if self.mem_peaks else None
        added = [m[K.MEM_TREE_PEAK] - m[K.MEM_TREE_BASE] for m in self.runs
                 if K.MEM_TREE_PEAK in m and K.MEM_TREE_BASE in m]
        self.mem_added = statistics.median(added) if added else None
        self.failures = across_runs(self.runs, K.FAILURES)
        self.latency = latencies.histogram(self.runs)
        self.cpu_per_item = self._cpu_per_item()
        self.by_round = self._by_round()
        self.pairing = self.meta.get(K.PAIRING, K.BY_ROUND)
        # {round: median log(reference / own) of the run's pairs}, their gaps
        # and the reference's median batch beside them (pairing "worker").
        self.paired_logs, self.paired_gaps, self.partner_by_round, \
            self.within_floor = pairs.in_worker(self.pairing, self.timed_runs())
        system = [m[K.CPU_TREE_SYSTEM] / m[K.CPU_TREE] for m in self.runs
                  if m.get(K.CPU_TREE) and K.CPU_TREE_SYSTEM in m]
        self.system_share = statistics.median(system) if system else None
        self.gap = None         # the median time between paired batches
        # The reference's batches beside this row's against those beside the
        # control's: what this model's leftovers did to the reference.
        self.reference_shift = None
        self.ideal = None
        # Whether the ideal is the reference's time (no model's CPU figures).
        self.ideal_from_time = False
        self.ideal_from = None  # the model whose CPU per item set the ideal
        self.efficiency = None
        self.flags = []
        # The level of the row's interval: a run's A/A controls share ALPHA.
        self.alpha = ALPHA
        self.beside_runs = {}   # with_beside_runs

    def timed_runs(self):
        """(pyperf run, its metadata) of every run with values."""
        return zip([r for r in self.bench.get_runs() if r.values], self.runs)

    def _by_round(self):
        """{round: median of the run's values}: what pairs with the other
        benchmarks' runs of the same round (files without rounds: the run's
        position)."""
        rounds = {}
        for position, (run, meta) in enumerate(self.timed_runs()):
            rounds.setdefault(meta.get(K.ROUND, position), []).extend(run.values)
        return {number: statistics.median(values) for number, values in rounds.items()}

    def _cores(self):
        shares = []
        for run, meta in self.timed_runs():
            timed = sum(run.values) * meta.get("loops", 1)
            if K.CPU_TREE in meta and timed > 0:
                shares.append(meta[K.CPU_TREE] / timed)
        return statistics.median(shares) if shares else None

    def per_batch(self, *keys):
        """Median over runs of the keys' sum divided by the run's batches."""
        shares = []
        for run, meta in self.timed_runs():
            if all(key in meta for key in keys):
                batches = len(run.values) * meta.get("loops", 1)
                shares.append(sum(meta[key] for key in keys) / batches)
        return statistics.median(shares) if shares else None

    def _cpu_per_item(self):
        """CPU per item over the runs whose accounting covered every process
        the sampler saw (``cpu_complete``): an undercount would drag the
        ideal of every row of the workload down."""
        complete = [meta for meta in self.runs if meta.get(K.CPU_COMPLETE) != "no"]
        cpu, items = across_runs(complete, K.CPU_TREE), across_runs(complete, K.ITEMS)
        return cpu / items if cpu is not None and items else None

    # -- what the model states of itself ----------------------------------------
    def knows_model(self):
        return all(key in self.meta for key in MODEL_FACTS)

    def is_reference(self):
        return self.model == self.meta.get(K.REFERENCE_MODEL)

    def is_control(self):
        """The A/A control: the reference run again under its own name."""
        return K.CONTROL_OF in self.meta

    def concurrency(self):
        """How many items can wait at once (C in the ideal time)."""
        concurrency = self.meta[K.CONCURRENCY]
        if concurrency == "unbounded":
            return self.items
        return min(self.items, concurrency)

    def workers(self):
        """How many items can compute at once before counting cores."""
        return self.meta[K.PARALLELISM]

    def processes(self):
        """P in the ideal time: how many items can run Python code at once:
        one per interpreter, or every worker on a build without the GIL."""
        if self.meta.get(K.GIL) == "disabled":
            return self.meta[K.PARALLELISM]
        return self.meta[K.INTERPRETERS]

    def series(self):
        """The worker-count series this row is a point of ("threads",
        "processes, chunk 4"), None if none."""
        if K.SCALING not in self.meta or K.PARALLELISM not in self.meta:
            return None
        return ", ".join(part for part in (
            self.meta[K.SCALING], self.meta.get(K.SCALING_SERIES)) if part)

    def side(self):
        """Which rows share c, the least CPU per item, in the ideal time:
        IO rows of the same client side (sync models use one library, async
        models another); CPU rows all together."""
        if self.meta.get(K.WORKLOAD_KIND) == "io":
            return self.meta.get(K.ITEM_SIDE) == "async"
        return None

    def settles(self, reference):
        """Whether this row gets a speedup against ``reference``: a row of
        bench.py's whose model states its facts, in a workload with one."""
        return self.ours and reference is not None and self.knows_model()

    def settle(self, reference):
        """Settle this row against the workload's reference (``pairs.settle``):
        its speedup, interval and verdict, and how far apart its pairs ran."""
        if not self.settles(reference):
            return
        self.settled = pairs.settle(self, reference, self.alpha)
        if self is not reference:
            self.gap = pairs.gap(self, reference)

    # -- what is physically possible ---------------------------------------------
    def compute_ideal(self, reference, cpu_count, least):
        """``reference``: the reference model's row; ``least``: the row with
        the least CPU per item of the workload (IO: of this row's client
        side, sync or async, whose libraries differ), or None. A row run
        on a user's cluster has none: its workers are not this machine's."""
        if not self.settles(reference) or self.elsewhere:
            return
        cpu_per_item = least.cpu_per_item if least else None
        kind = self.meta.get(K.WORKLOAD_KIND)
        if kind == "io" and self.items:
            cpu = (self.items * cpu_per_item / self.processes()
                   if cpu_per_item else 0.0)
            wait = self._least_wait()
            self.ideal = max(wait, cpu)
            if cpu > wait:
                self.ideal_from = least.model
        elif kind == "cpu":
            # A lower bound: no model does an item with less CPU than the
            # least any of them used. (The reference's time is none: a model
            # can do an item for less than the reference's main thread does,
            # as Pillow's buffers in a worker thread's arena do: seen in
            # 11f3489.) Without CPU figures, the reference's time stands in.
            if cpu_per_item and self.items:
                work, self.ideal_from = self.items * cpu_per_item, least.model
            elif reference.elsewhere:
                return      # its time is a cluster's, no bound of this machine's
            else:
                work, self.ideal_from = reference.mean, reference.model
                self.ideal_from_time = True
            self.ideal = work / min(self.workers(), cpu_count or 1)
        if self.ideal:
            self.efficiency = self.ideal / self.mean

    def _least_wait(self):
        """IO: the least time the items' latencies allow at this concurrency."""
        latency = self.meta.get(LATENCY_MS.param, 0.0) / 1000.0
        jitter = self.meta.get(JITTER_MS.param, 0.0) / 1000.0
        concurrency = max(1, self.concurrency())
        rounds = math.ceil(self.items / concurrency)
        if not jitter:
            return rounds * latency
        if K.LATENCY_SUM_S in self.meta:
            # No schedule beats the slowest item, nor the drawn latencies
            # spread evenly over C slots.
            return max(self.meta[K.LATENCY_MAX_S],
                       self.meta[K.LATENCY_SUM_S] / concurrency)
        # Files from before the latencies were recorded.
        return latency + jitter if rounds == 1 else rounds * latency

    def compute_flags(self, precision=None, usual_gil=None):
        """``precision``: the run's --precision target, in percent;
        ``usual_gil``: the GIL state the file's runs should have."""
        raw = [value * run.get_total_loops() for run in self.bench.get_runs()
               for value in run.values]
        if unstable_reasons(self.values, raw):
            self.flags.append("unstable")
        if self.verdict == UNDECIDED:
            self.flags.append("undecided")
        if precision and self.verdict and self.ratio and self.ratio.low \
                and imprecise(self.ratio, precision):
            self.flags.append("imprecise(+-%.0f%%)" % (half_width(self.ratio) * 100))
        # Above 100% as shown (to the percent): the ideal was not a bound.
        if self.efficiency and round(self.efficiency * 100) > 100:
            self.flags.append("above-ideal")
        if any(meta.get(K.CPU_COMPLETE) == "no" for meta in self.runs):
            # Its CPU figures miss a process: left out of the ideal.
            self.flags.append("cpu-incomplete")
        if self.failures:
            self.flags.append("failures")
        if latencies.overloaded(self):
            self.flags.append("overloaded")
        items = across_runs(self.runs, K.ITEMS)
        if self.items and items is not None:
            expected = self.items * sum(len(r.values) for r in self.bench.get_runs()
                                        if r.values) * self.meta.get("loops", 1)
            if items != expected:
                self.flags.append("check")
        limit = self.meta.get(K.SERVER_BUSY_LIMIT, SERVER_BUSY_LIMIT)
        if any(meta.get(K.SERVER_BUSY, 0) > limit for meta in self.runs):
            self.flags.append("server-bound")
        if usual_gil and any(m.get(K.GIL_ENABLED, usual_gil) != usual_gil
                             for m in self.runs):
            self.flags.append("gil")


def ideal_cpus(meta):
    """The CPUs a CPU row's ideal divides by: the usable ones the run
    recorded; in a file from before they were, the logical CPUs, as its
    ideal was computed then (``cpus.from_metadata``)."""
    machine = cpus.from_metadata(meta)
    if machine is not None:
        return machine.usable
    return cpus.whole(meta.get("cpu_count")) or os.cpu_count()


def with_beside_runs(rows):
    """``rows`` without the races' comparisons side by side
    (``schema.BESIDE``), which are no rows of the table: each goes to the
    row of its model, in its ``beside_runs`` ({the leader's model: the
    benchmark run beside it}), for the race to read."""
    kept = [row for row in rows if not row.meta.get(K.BESIDE)]
    for row in rows:
        if row.meta.get(K.BESIDE):
            own = next((r for r in kept if r.workload == row.workload
                        and r.model == row.model), None)
            if own is not None:
                own.beside_runs[row.meta[K.BESIDE]] = row
    return kept


def build_rows(suite, controls=None):
    """Every model's row, grouped by workload, each group in the file's
    order. The A/A controls' rows, computed alike, go to ``controls`` (a
    dict, by workload) when one is given, and are left out otherwise."""
    usual = usual_gil(suite)
    rows = [Row(bench) for bench in suite.get_benchmarks()
            if not is_ceiling(bench.get_metadata())]
    for position, row in enumerate(rows):
        row.position = position
    groups = {}
    for row in with_beside_runs(rows):
        groups.setdefault(row.workload, []).append(row)
    found = {}
    cpu_count = ideal_cpus(suite.get_metadata())
    precision = suite.get_metadata().get(K.PRECISION_TARGET_PCT)
    # The controls are one family: a run whose arrangement is sound has
    # one of them come out faster or slower with at most ALPHA's chance.
    family = sum(1 for r in rows if r.is_control())
    for row in rows:
        if row.is_control():
            row.alpha = split(ALPHA, family)
    for name, group in groups.items():
        for row in [r for r in group if r.is_control()]:
            group.remove(row)
            found[name] = row
        reference = next((r for r in group if r.is_reference()), None)
        # c in the ideal time: the least CPU per item seen for each side.
        # Concurrent runs amortize per-request costs, so the sequential
        # run's is not a bound.
        least = {}
        for row in group:
            if row.cpu_per_item and (row.side() not in least or row.cpu_per_item
                                     < least[row.side()].cpu_per_item):
                least[row.side()] = row
        for row in group + ([found[name]] if name in found else []):
            row.settle(reference)
            row.compute_ideal(reference, cpu_count, least.get(row.side()))
            row.compute_flags(precision, usual)
        control = found.get(name)
        if control is not None and control.partner_by_round:
            for row in group:
                if row.partner_by_round:
                    row.reference_shift = paired_ratio(row.partner_by_round,
                                                       control.partner_by_round)
    if controls is not None:
        controls.update(found)
    return {name: group for name, group in groups.items() if group}
