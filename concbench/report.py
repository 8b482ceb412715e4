#!/usr/bin/env python3
"""report.py: tables and plots from bench.py's pyperf JSON files.

pyperf shows time; choosing a concurrency model also takes memory, CPU,
failures and how far each model is from what is physically possible. Per
workload, one row per model; with several files (two Python versions, two
loop types, two machines), the files side by side with the change and
whether it is significant.

Everything it knows of a workload or a model comes from the benchmark's
metadata, written by the workload and the model themselves (their
concurrency, parallelism, interpreters, item side, reference model, scaling
series): the report names none of them. It reads the files through pyperf's
public API only.
"""


import argparse
import csv
import glob
import io
import json
import math
import os
import statistics
import subprocess
import sys

from concbench.stats import (half_width, imprecise, paired_ratio, quantile,
                             unpaired_ratio, verdict)
from concbench.thresholds import SERVER_BUSY_LIMIT, unstable_reasons
from concbench.units import format_time as fmt_time

PROG = "report.py"
FORMATS = ("text", "markdown", "csv", "json")
SORTS = ("name", "time", "speedup", "memory", "cpu", "efficiency")
MIB = 1024 * 1024
# What a model states of itself in the metadata (models.base.Model.metadata);
# a file without them (from an older bench.py) gets no ideal time.
MODEL_FACTS = ("concurrency", "parallelism", "interpreters", "item_side")
# An undecided row after this many rounds is reported as a finding: its
# spread is the model's own, not a lack of rounds.
WIDE_AFTER = 6


class ReportError(Exception):
    """Bad input: one line on stderr, exit status 2."""


# -- reading ------------------------------------------------------------------

def load(path):
    import pyperf

    if not os.path.exists(path):
        raise ReportError("%s: no such file" % path)
    if os.path.isdir(path):
        raise ReportError("%s: is a directory, not a pyperf JSON file" % path)
    try:
        with open(path, "rb") as f:
            head = f.read(2)
        opener = __import__("gzip").open if head == b"\x1f\x8b" else open
        with opener(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
    except (UnicodeDecodeError, ValueError, EOFError, OSError) as exc:
        raise ReportError("%s: not a JSON file (%s)" % (path, str(exc).splitlines()[0]))
    if not isinstance(data, dict) or "benchmarks" not in data or "version" not in data:
        raise ReportError("%s: a JSON file, but not one written by pyperf "
                          "(no 'version' and 'benchmarks' keys)" % path)
    try:
        suite = pyperf.BenchmarkSuite.load(path)
    except Exception as exc:    # pyperf's own validation, in its words
        raise ReportError("%s: pyperf cannot read it: %s" % (path, exc))
    if not suite.get_benchmarks():
        raise ReportError("%s: holds no benchmark" % path)
    return suite


def run_figures(bench):
    """Each run's metadata; pyperf's get_metadata() drops keys that differ."""
    return [run.get_metadata() for run in bench.get_runs() if run.values]


def median_of(runs, key):
    values = [meta[key] for meta in runs if key in meta]
    return statistics.median(values) if values else None


def sum_of(runs, key):
    values = [meta[key] for meta in runs if key in meta]
    return sum(values) if values else None


class Row:
    """One benchmark's figures, with what pyperf alone does not show."""

    def __init__(self, bench):
        self.bench = bench
        self.name = bench.get_name()
        self.meta = bench.get_metadata()
        self.runs = run_figures(bench)
        self.ours = "workload" in self.meta
        workload, _, model = self.name.partition("/")
        self.workload = self.meta.get("workload", workload if model else "(other)")
        self.model = self.meta.get("model", model or self.name)
        self.mean = bench.mean()
        self.stdev = bench.stdev() if bench.get_nvalue() >= 2 else 0.0
        self.values = bench.get_values()
        self.items = self.meta.get("items_per_batch")
        self.items_per_s = self.items / self.mean if self.items else None
        self.cores = self._cores()
        self.mem_peak = median_of(self.runs, "mem_tree_peak")
        added = [m["mem_tree_peak"] - m["mem_tree_base"] for m in self.runs
                 if "mem_tree_peak" in m and "mem_tree_base" in m]
        self.mem_added = statistics.median(added) if added else None
        self.mem_samples = [m["mem_tree_peak"] for m in self.runs if "mem_tree_peak" in m]
        self.failures = sum_of(self.runs, "failures")
        self.cpu_per_item = self._cpu_per_item()
        self.by_round = self._by_round()
        self.probes = [m["probe_s"] for m in self.runs if "probe_s" in m]
        system = [m["cpu_tree_system"] / m["cpu_tree"] for m in self.runs
                  if m.get("cpu_tree") and "cpu_tree_system" in m]
        self.system_share = statistics.median(system) if system else None
        self.ratio = None       # the reference's time / this row's, paired
        self.speedup = None
        self.verdict = None     # faster, slower, same, undecided (not the reference)
        self.reference = None   # the workload's reference row
        self.ideal = None
        self.ideal_from = None  # the model whose CPU per item set the ideal
        self.efficiency = None
        self.flags = []

    def _by_round(self):
        """{round: median of the run's values}: what pairs with the other
        benchmarks' runs of the same round (files without rounds: the run's
        position)."""
        rounds = {}
        runs = [run for run in self.bench.get_runs() if run.values]
        for position, (run, meta) in enumerate(zip(runs, self.runs)):
            rounds.setdefault(meta.get("round", position), []).extend(run.values)
        return {number: statistics.median(values) for number, values in rounds.items()}

    def _cores(self):
        shares = []
        for run, meta in zip([r for r in self.bench.get_runs() if r.values], self.runs):
            timed = sum(run.values) * meta.get("loops", 1)
            if "cpu_tree" in meta and timed > 0:
                shares.append(meta["cpu_tree"] / timed)
        return statistics.median(shares) if shares else None

    def per_batch(self, *keys):
        """Median over runs of the keys' sum divided by the run's batches."""
        shares = []
        for run, meta in zip([r for r in self.bench.get_runs() if r.values], self.runs):
            if all(key in meta for key in keys):
                batches = len(run.values) * meta.get("loops", 1)
                shares.append(sum(meta[key] for key in keys) / batches)
        return statistics.median(shares) if shares else None

    def _cpu_per_item(self):
        """CPU per item over the runs whose accounting covered every process
        the sampler saw (``cpu_complete``): an undercount would drag the
        ideal of every row of the workload down."""
        complete = [meta for meta in self.runs if meta.get("cpu_complete") != "no"]
        cpu, items = sum_of(complete, "cpu_tree"), sum_of(complete, "items")
        return cpu / items if cpu is not None and items else None

    # -- what is physically possible -----------------------------------------
    def knows_model(self):
        return all(key in self.meta for key in MODEL_FACTS)

    def concurrency(self):
        """How many items can wait at once (C in the ideal time)."""
        concurrency = self.meta["concurrency"]
        if concurrency == "unbounded":
            return self.items
        return min(self.items, concurrency)

    def workers(self):
        """How many items can compute at once before counting cores."""
        return self.meta["parallelism"]

    def processes(self):
        """P in the ideal time: how many items can run Python code at once:
        one per interpreter, or every worker on a build without the GIL."""
        if self.meta.get("gil") == "disabled":
            return self.meta["parallelism"]
        return self.meta["interpreters"]

    def round_ratios(self):
        """The reference's value / this row's, per round both ran."""
        return self.ratio.values if self.ratio else []

    def is_async(self):
        return self.meta.get("item_side") == "async"

    def compute_ideal(self, reference, cpu_count, least):
        """``reference``: the reference model's row; ``least``: the row with
        the least CPU per item of the workload (IO: of this row's client
        side, sync or async, whose libraries differ), or None."""
        if not self.ours or reference is None or not self.knows_model():
            return
        self.reference = reference
        cpu_per_item = least.cpu_per_item if least else None
        if self is reference:
            self.speedup = 1.0
        else:
            self.ratio = paired_ratio(reference.by_round, self.by_round)
            self.speedup = (self.ratio.point if self.ratio
                            else reference.mean / self.mean)
            self.verdict = verdict(self.ratio)
        if self.meta.get("workload_kind") == "io" and self.items:
            latency = self.meta.get("latency_ms", 0.0) / 1000.0
            jitter = self.meta.get("jitter_ms", 0.0) / 1000.0
            concurrency = max(1, self.concurrency())
            rounds = math.ceil(self.items / concurrency)
            if not jitter:
                wait = rounds * latency
            elif "latency_sum_s" in self.meta:
                # No schedule beats the slowest item, nor the drawn latencies
                # spread evenly over C slots.
                wait = max(self.meta["latency_max_s"],
                           self.meta["latency_sum_s"] / concurrency)
            else:
                # Files from before the latencies were recorded.
                wait = latency + jitter if rounds == 1 else rounds * latency
            cpu = (self.items * cpu_per_item / self.processes()
                   if cpu_per_item else 0.0)
            self.ideal = max(wait, cpu)
            if cpu > wait:
                self.ideal_from = least.model
        elif self.meta.get("workload_kind") == "cpu":
            # A lower bound: no model does an item with less CPU than the
            # least any of them used. (The reference's time is none: in the
            # main thread Pillow's buffers cost page faults that a worker
            # thread's arena avoids.) Without CPU figures, the reference's
            # time stands in.
            if cpu_per_item and self.items:
                work, self.ideal_from = self.items * cpu_per_item, least.model
            else:
                work, self.ideal_from = reference.mean, reference.model
            self.ideal = work / min(self.workers(), cpu_count or 1)
        if self.ideal:
            self.efficiency = self.ideal / self.mean

    def compute_flags(self, precision=None):
        """``precision``: the run's --precision target, in percent."""
        raw = [value * run.get_total_loops() for run in self.bench.get_runs()
               for value in run.values]
        if unstable_reasons(self.values, raw):
            self.flags.append("unstable")
        if self.verdict == "undecided":
            self.flags.append("undecided")
        if precision and self.verdict and self.ratio and self.ratio.low \
                and imprecise(self.ratio, precision):
            self.flags.append("imprecise(+-%.0f%%)" % (half_width(self.ratio) * 100))
        # Above 100% as shown (to the percent): the ideal was not a bound.
        if self.efficiency and round(self.efficiency * 100) > 100:
            self.flags.append("above-ideal")
        if any(meta.get("cpu_complete") == "no" for meta in self.runs):
            # Its CPU figures miss a process: left out of the ideal.
            self.flags.append("cpu-incomplete")
        if self.failures:
            self.flags.append("failures")
        items = sum_of(self.runs, "items")
        if self.items and items is not None:
            expected = self.items * sum(len(r.values) for r in self.bench.get_runs()
                                        if r.values) * self.meta.get("loops", 1)
            if items != expected:
                self.flags.append("check")
        limit = self.meta.get("server_busy_limit", SERVER_BUSY_LIMIT)
        if any(meta.get("server_busy", 0) > limit for meta in self.runs):
            self.flags.append("server-bound")


def build_rows(suite, workloads=None):
    """Rows grouped by workload, each group in the file's order."""
    rows = [Row(bench) for bench in suite.get_benchmarks()]
    for position, row in enumerate(rows):
        row.position = position
    groups = {}
    for row in rows:
        if workloads and row.workload not in workloads:
            continue
        groups.setdefault(row.workload, []).append(row)
    cpu_count = suite.get_metadata().get("cpu_count") or os.cpu_count()
    precision = suite.get_metadata().get("precision_target_pct")
    usual = usual_gil(suite)
    for group in groups.values():
        reference = next((r for r in group
                          if r.model == r.meta.get("reference_model")), None)
        # c in the ideal time: the least CPU per item seen for each client side
        # (sync models use one library, async models another). Concurrent runs
        # amortize per-request costs, so the sequential run's is not a bound.
        least = {}
        for row in group:
            if row.cpu_per_item:
                side = row.is_async() if row.meta.get("workload_kind") == "io" else None
                if side not in least or row.cpu_per_item < least[side].cpu_per_item:
                    least[side] = row
        for row in group:
            side = row.is_async() if row.meta.get("workload_kind") == "io" else None
            row.compute_ideal(reference, cpu_count, least.get(side))
            row.compute_flags(precision)
            if usual and any(m.get("gil_enabled", usual) != usual for m in row.runs):
                row.flags.append("gil")
    return groups


def noise_floor(suite):
    """(variation across rounds, spread between runs) of the machine probe
    that precedes every batch, as shares; None without probes. The spread
    between runs (90th against 10th percentile) is what a paired ratio of two
    benchmarks' runs can be off by: below it, a difference is a tie."""
    by_round = {}
    probes = []
    for bench in suite.get_benchmarks():
        for position, run in enumerate(bench.get_runs()):
            meta = run.get_metadata()
            if "probe_s" in meta and run.values:
                probes.append(meta["probe_s"])
                by_round.setdefault(meta.get("round", position), []).append(meta["probe_s"])
    if len(probes) < 2:
        return None
    medians = [statistics.median(values) for values in by_round.values()]
    return (max(medians) / min(medians) - 1,
            quantile(probes, 0.9) / quantile(probes, 0.1) - 1)


def gil_runs(suite):
    """Each run's gil_enabled ("yes"/"no"), and the modules that re-enabled it."""
    states, by = [], []
    for bench in suite.get_benchmarks():
        for run in bench.get_runs():
            meta = run.get_metadata()
            if "gil_enabled" in meta:
                states.append(meta["gil_enabled"])
                by.extend(m for m in meta.get("gil_enabled_by", "").split(",")
                          if m and m not in by)
    return states, by


def usual_gil(suite):
    """The GIL state the file's runs should have (``gil_expected``: on a
    free-threaded build off, unless --gil on or PYTHON_GIL=1 asked for it),
    or, in files without it, the state of most runs; None if no run
    recorded it."""
    states, _ = gil_runs(suite)
    if not states:
        return None
    expected = suite.get_metadata().get("gil_expected")
    if expected:
        return expected
    return max(("yes", "no"), key=states.count)


def gil_state(suite):
    """One line: the GIL state the runs recorded."""
    states, by = gil_runs(suite)
    if not states:
        return ""
    enabled = states.count("yes")
    if enabled == len(states):
        text = "enabled in every run"
    elif not enabled:
        text = "disabled in every run"
    else:
        text = "enabled in %d of %d runs" % (enabled, len(states))
    usual = usual_gil(suite)
    if any(state != usual for state in states):
        text += " (expected %s: flagged gil)" % ("on" if usual == "yes" else "off")
    if by:
        text += "; re-enabled by importing %s" % ", ".join(by)
    return text


def is_tie(ratio):
    """A paired ratio whose 95% interval holds 1 (or that has none). The
    machine probe's spread is shown, not used here: the paired interval
    already carries the noise that the two benchmarks' runs shared."""
    return ratio is None or ratio.includes_one()


# -- formatting ---------------------------------------------------------------

def fmt_mib(value):
    return "" if value is None else "%.1f" % (value / MIB)


def fmt_ratio(ratio, point):
    """2.05x [1.90-2.21]; the point alone when there is no interval."""
    if point is None:
        return ""
    if ratio is None or ratio.low is None:
        return "%.2fx" % point
    return "%.2fx [%.2f-%.2f]" % (point, ratio.low, ratio.high)


def fmt_num(value, pattern):
    return "" if value is None else pattern % value


COLUMNS = [
    # (title, key in JSON/CSV, text formatter, raw value)
    ("benchmark", "benchmark", lambda r: r.name, lambda r: r.name),
    ("mean +- std dev", "mean_s",
     lambda r: "%s +- %s" % (fmt_time(r.mean), fmt_time(r.stdev)),
     lambda r: r.mean),
    ("std dev", "stdev_s", None, lambda r: r.stdev),
    ("speedup [95% CI]", "speedup", lambda r: fmt_ratio(r.ratio, r.speedup),
     lambda r: r.speedup),
    ("", "speedup_ci_low", None, lambda r: r.ratio.low if r.ratio else None),
    ("", "speedup_ci_high", None, lambda r: r.ratio.high if r.ratio else None),
    ("faster in", "speedup_rounds_faster",
     lambda r: "%d/%d" % (r.ratio.above, r.ratio.rounds) if r.ratio else "",
     lambda r: r.ratio.above if r.ratio else None),
    ("", "speedup_rounds", None, lambda r: r.ratio.rounds if r.ratio else None),
    ("verdict", "verdict", lambda r: r.verdict or "", lambda r: r.verdict),
    ("", "speedup_halfwidth", None, lambda r: half_width(r.ratio)),
    ("items/s", "items_per_s", lambda r: fmt_num(r.items_per_s, "%.0f"),
     lambda r: r.items_per_s),
    ("ideal", "ideal_s", lambda r: fmt_time(r.ideal), lambda r: r.ideal),
    ("", "ideal_from", None, lambda r: r.ideal_from),
    ("efficiency", "efficiency",
     lambda r: "" if r.efficiency is None else "%.0f%%" % (r.efficiency * 100),
     lambda r: r.efficiency),
    ("CPU cores", "cpu_cores", lambda r: fmt_num(r.cores, "%.2f"), lambda r: r.cores),
    ("sys CPU", "cpu_system_share",
     lambda r: "" if r.system_share is None else "%.0f%%" % (r.system_share * 100),
     lambda r: r.system_share),
    ("peak MiB", "mem_peak_bytes", lambda r: fmt_mib(r.mem_peak), lambda r: r.mem_peak),
    ("added MiB", "mem_added_bytes", lambda r: fmt_mib(r.mem_added),
     lambda r: r.mem_added),
    # /usr/bin/time's figures per batch, in csv and json only (seeds/002).
    ("CPU s/batch", "cpu_s_per_batch", None, lambda r: r.per_batch("cpu_tree")),
    ("ctx switches/batch", "ctx_switches_per_batch", None,
     lambda r: r.per_batch("ctx_switches_voluntary", "ctx_switches_involuntary")),
    ("failures", "failures", lambda r: "" if r.failures is None else str(r.failures),
     lambda r: r.failures),
    ("flags", "flags", lambda r: ",".join(r.flags), lambda r: ",".join(r.flags)),
]

SORT_KEYS = {
    "name": None,
    "time": lambda r: r.mean,
    "speedup": lambda r: -(r.speedup or 0),
    "memory": lambda r: r.mem_peak if r.mem_peak is not None else float("inf"),
    "cpu": lambda r: r.cores if r.cores is not None else float("inf"),
    "efficiency": lambda r: -(r.efficiency or 0),
}


def sort_rows(rows, key):
    if SORT_KEYS.get(key) is None:
        return list(rows)
    return sorted(rows, key=SORT_KEYS[key])


def table(headers, body, fmt):
    from tabulate import tabulate

    if fmt == "markdown":
        return tabulate(body, headers=headers, tablefmt="github", disable_numparse=True)
    return tabulate(body, headers=headers, tablefmt="simple", disable_numparse=True)


def header_lines(suites, paths):
    lines = []
    for path, suite in zip(paths, suites):
        meta = suite.get_metadata()
        first = suite.get_benchmarks()[0].get_runs()[0].get_metadata()
        meta = dict(first, **meta)
        gil = meta.get("gil")
        build = ("free-threaded build, GIL %s" % gil
                 if meta.get("free_threaded_build") == "yes"
                 else "GIL build" if gil else "")
        python = " ".join(x for x in (meta.get("python_implementation", ""),
                                      meta.get("python_version", ""), build) if x)
        libs = ", ".join("%s %s" % (name, meta[key]) for name, key in (
            ("pyperf", "pyperf_version"), ("Pillow", "pillow_version"),
            ("uvloop", "uvloop_version"), ("psutil", "psutil_version"))
            if key in meta)
        lines.append("%s: %s" % (path, python or "(no Python version recorded)"))
        details = [("platform", meta.get("platform")),
                   ("CPU", "%s, %s logical CPUs" % (meta.get("cpu_model_name", "?"),
                                                    meta.get("cpu_count", "?"))),
                   ("libraries", libs),
                   ("preset", meta.get("preset")),
                   ("scenario", meta.get("scenario")),
                   ("scaled", meta.get("scenario_scaled")),
                   ("date", meta.get("date"))]
        for label, value in details:
            if value:
                lines.append("  %s: %s" % (label, value))
        noise = noise_floor(suite)
        if noise:
            lines.append("  noise: machine speed varied %.0f%% across rounds and "
                         "%.0f%% between runs (a fixed probe before every batch); "
                         "speedups pair runs of the same round, and their "
                         "intervals carry what remains" % (noise[0] * 100,
                                                           noise[1] * 100))
        lines.extend("  " + line for line in decided_lines(suite, meta))
        state = gil_state(suite)
        if state:
            lines.append("  GIL: " + state)
        order = meta.get("order")
        if order:
            lines.append("  order: %s%s" % (
                "interleaved rounds" if order == "interleaved" else "pyperf's",
                " (seed %s)" % meta["order_seed"] if "order_seed" in meta else ""))
    return lines


def decided_lines(suite, meta):
    """How many rows the run decided (and made precise, under --precision)."""
    rows = [r for group in build_rows(suite).values() for r in group
            if r.verdict is not None]
    if not rows:
        return []
    counts = {name: sum(1 for r in rows if r.verdict == name)
              for name in ("faster", "slower", "same", "undecided")}
    rounds = [len(r.round_ratios()) for r in rows]
    lines = ["decided: %d of %d speedups (%d faster, %d slower, %d the same "
             "within 5%%, by their 95%% interval), %s rounds each" % (
                 len(rows) - counts["undecided"], len(rows), counts["faster"],
                 counts["slower"], counts["same"],
                 "%d" % rounds[0] if min(rounds) == max(rounds)
                 else "%d-%d" % (min(rounds), max(rounds)))]
    target = meta.get("precision_target_pct")
    if target:
        within = sum(1 for r in rows if not imprecise(r.ratio, target))
        lines.append("precision: %d of %d speedups within +-%g%% (the target)"
                     % (within, len(rows), target))
    return lines


def workload_params(rows):
    """The workload's own one-line description of its parameters."""
    return rows[0].meta.get("workload_params", "")


def takeaways(rows):
    """A few sentences derived from the rows of one workload. A winner is
    named alone only when every other candidate is slower (paired interval
    clear of 1); otherwise the tie is named."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return []
    lines = []
    best, tied = winners(ours)
    text = "fastest: %s (%s" % (describe_winners(best, tied, lambda r: r.model),
                                fmt_time(best.mean))
    if best.speedup:
        text += ", %.2fx %s" % (best.speedup, best.meta.get("reference_model",
                                                             "the reference"))
    lines.append(text + ")")
    for counted, members in scaling_groups(ours).items():
        best, tied = winners(members)
        counts = [r.workers() for r in [best] + tied]
        # Two series (chunk sizes) can tie at one count: name the models.
        name = ((lambda r: str(r.workers())) if len(set(counts)) == len(counts)
                else (lambda r: r.model))
        lines.append("best %s count: %s (%s, %s)" % (
            best.meta["scaling_unit"], describe_winners(best, tied, name),
            best.model, fmt_time(best.mean)))
        # One series per label (chunk size): only the worker count changes.
        series = {}
        for r in members:
            series.setdefault(r.meta.get("scaling_series", ""), []).append(r)
        for label, rows_of in sorted(series.items()):
            rows_of.sort(key=lambda r: r.workers())
            stop = stopped_helping(rows_of)
            if stop is not None:
                where = " (%s)" % label if label else ""
                lines.append("more %s stopped helping after %d%s"
                             % (counted, stop, where))
    bad = [r for r in ours if "failures" in r.flags or "check" in r.flags]
    if bad:
        lines.append("failures or failed checks: " + ", ".join(
            "%s (%s)" % (r.model, r.failures or "check") for r in bad))
    bound = [r.model for r in ours if "server-bound" in r.flags]
    if bound:
        lines.append("server-bound (the server, not the model, set the pace): "
                     + ", ".join(bound))
    wide = [r for r in ours if r.verdict == "undecided"
            and len(r.round_ratios()) >= WIDE_AFTER]
    if wide:
        lines.append("still undecided after %d rounds or more, the spread is "
                     "the model's own: %s" % (WIDE_AFTER, ", ".join(
                         "%s (per-round speedup %.2fx-%.2fx over %d rounds)" % (
                             r.model, min(r.round_ratios()), max(r.round_ratios()),
                             len(r.round_ratios())) for r in wide)))
    incomplete = [r.model for r in ours if "cpu-incomplete" in r.flags]
    if incomplete:
        lines.append("cpu-incomplete: %s saw a process exit that no process "
                     "whose CPU is read had reaped; its CPU figures are low and "
                     "left out of the ideal" % ", ".join(incomplete))
    source = next((r.ideal_from for r in ours if r.ideal_from), None)
    if source and ours[0].meta.get("workload_kind") == "cpu":
        lines.append("ideal: from the least CPU per item of any model (%s's)"
                     % source)
    above = [r.model for r in ours if "above-ideal" in r.flags]
    if above:
        lines.append("above-ideal: %s ran faster than the ideal made from the "
                     "least CPU per item any model used; CPU is read just "
                     "outside the timed region, so for short batches that "
                     "least CPU is not a bound" % ", ".join(above))
    return lines


def scaling_groups(rows):
    """Models that state a scaling series (threads-2, threads-4, ...), by
    what they count, in the order of the file."""
    groups = {}
    for r in rows:
        if "scaling" in r.meta:
            groups.setdefault(r.meta["scaling"], []).append(r)
    return groups


def decisions(rows):
    """{topic: the names the takeaways state as the winner, a tie's all}."""
    ours = [r for r in rows if r.ours]
    if not ours:
        return {}
    best, tied = winners(ours)
    found = {"fastest": {r.model for r in [best] + tied}}
    for members in scaling_groups(ours).values():
        best, tied = winners(members)
        found["best %s count" % best.meta["scaling_unit"]] = {
            r.workers() for r in [best] + tied}
    return found


def agreement(first, other, workloads=None):
    """How far two files of the same benchmarks agree: speedups within 10%
    of each other (of those both have), and takeaways that contradict (a
    winner, or tie, of one file that shares no name with the other's)."""
    rows = [build_rows(suite, workloads) for suite in (first, other)]
    close = total = 0
    contradictions = []
    for workload, group in rows[0].items():
        other_group = {r.name: r for r in rows[1].get(workload, [])}
        for row in group:
            twin = other_group.get(row.name)
            if row.ratio and twin is not None and twin.ratio:
                total += 1
                close += max(row.speedup, twin.speedup) <= 1.10 * min(
                    row.speedup, twin.speedup)
        if workload not in rows[1]:
            continue
        said = [decisions(g) for g in (group, rows[1][workload])]
        for topic, names in said[0].items():
            if topic in said[1] and not names & said[1][topic]:
                contradictions.append("%s %s: %s against %s" % (
                    workload, topic, ", ".join(map(str, sorted(names, key=str))),
                    ", ".join(map(str, sorted(said[1][topic], key=str)))))
    return {"speedups_within_10pct": close, "speedups": total,
            "contradictions": contradictions}


def winners(rows):
    """The fastest row, and the others whose paired interval against it
    holds 1 (file order).

    Rows that ran a different number of rounds (added rounds go to the
    undecided ones) are ranked by their speedup against the common
    reference, paired by round, rather than by their means over different
    moments; and two rows whose speedup intervals against it are disjoint
    differ, however few rounds they share with each other."""
    if all(r.speedup for r in rows):
        best = max(rows, key=lambda r: (r.speedup, -r.mean))
    else:
        best = min(rows, key=lambda r: r.mean)
    tied = [r for r in rows if r is not best
            and is_tie(paired_ratio(r.by_round, best.by_round))
            and not disjoint(r.ratio, best.ratio)]
    return best, tied


def disjoint(first, second):
    """Two speedup intervals against the same reference that do not meet."""
    if first is None or second is None or first.low is None or second.low is None:
        return False
    return first.high < second.low or second.high < first.low


def describe_winners(best, tied, name):
    if not tied:
        return name(best)
    together = sorted([best] + tied, key=lambda r: r.position)
    return "%s: within noise" % ", ".join(name(r) for r in together)


def stopped_helping(members):
    """The worker count after which adding workers no longer saved 5% or
    more, significantly (``members`` sorted by worker count)."""
    for current, following in zip(members, members[1:]):
        ratio = paired_ratio(current.by_round, following.by_round)
        if is_tie(ratio) or ratio.point < 1 / 0.95:
            return current.workers()
    return None


def render_single(suite, path, args):
    groups = build_rows(suite, args.workload)
    if not groups:
        raise ReportError("%s: no benchmark of workload %s" % (path, ",".join(args.workload)))
    if args.format == "json":
        return json.dumps({"file": path, "header": header_lines([suite], [path]),
                           "workloads": {
                               name: {"rows": [{key: raw(r) for _, key, _, raw in COLUMNS}
                                               for r in sort_rows(rows, args.sort)],
                                      "takeaways": takeaways(rows)}
                               for name, rows in groups.items()}}, indent=2)
    if args.format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["workload"] + [key for _, key, _, _ in COLUMNS])
        for name, rows in groups.items():
            for r in sort_rows(rows, args.sort):
                writer.writerow([name] + ["" if raw(r) is None else raw(r)
                                          for _, _, _, raw in COLUMNS])
        return out.getvalue().rstrip("\n")
    lines = header_lines([suite], [path])
    notes = [r.name for rows in groups.values() for r in rows if not r.ours]
    if notes:
        lines.append("note: %d benchmark(s) carry no concurrency-bench metadata "
                     "(not written by bench.py?); only pyperf's figures are shown "
                     "for them" % len(notes))
    older = [r.name for rows in groups.values() for r in rows
             if r.ours and not (r.knows_model() and "reference_model" in r.meta)]
    if older:
        lines.append("note: %d benchmark(s) come from an older bench.py that did "
                     "not record what their model is (%s, reference_model); they "
                     "get no speedup, ideal time or efficiency"
                     % (len(older), ", ".join(MODEL_FACTS)))
    shown = [c for c in COLUMNS if c[2] is not None]
    for name, rows in groups.items():
        lines.append("")
        title = "## %s" % name if args.format == "markdown" else "%s" % name
        params = workload_params(rows) if rows[0].ours else ""
        lines.append(title + (" (%s)" % params if params else ""))
        lines.append("")
        lines.append(table([c[0] for c in shown],
                           [[c[2](r) for c in shown] for r in sort_rows(rows, args.sort)],
                           args.format))
        tips = takeaways(rows)
        if tips:
            lines.append("")
            lines.extend(("- " if args.format == "markdown" else "  * ") + t for t in tips)
    return "\n".join(lines)


# -- several files --------------------------------------------------------------

def change(ratio):
    """'1.25x slower [1.10-1.42]' style text for a ratio other / reference."""
    def slower(value):
        return value if ratio.point >= 1 else 1 / value
    text = "%.2fx %s" % (slower(ratio.point), "slower" if ratio.point >= 1 else "faster")
    if ratio.low is not None:
        low, high = sorted((slower(ratio.low), slower(ratio.high)))
        text += " [%.2f-%.2f]" % (low, high)
    return text


def significance(ratio):
    """None with too few values to tell, else whether the interval clears 1."""
    if ratio is None or ratio.low is None:
        return None
    return not ratio.includes_one()


# A row of two files measures the same thing only if these agree: the
# workload's parameters, and for http the server and the Python it ran on.
SAME_IN_A_COMPARISON = (("workload_params", "workload parameters"),
                        ("http_server", "server"),
                        ("http_server_python", "server's Python"))


def not_comparable(row, ref):
    """What differs between two files' rows that must not ("" if nothing)."""
    differ = [label for key, label in SAME_IN_A_COMPARISON
              if row.meta.get(key) != ref.meta.get(key)]
    return "different " + " and ".join(differ) if differ else ""


def compare_rows(suites, paths, args):
    per_file = [{r.name: r for rows in build_rows(s, args.workload).values()
                 for r in rows} for s in suites]
    names = []
    for rows in per_file:
        names.extend(n for n in rows if n not in names)
    records = []
    for name in names:
        present = [rows.get(name) for rows in per_file]
        ref = present[0]
        record = {"benchmark": name, "files": [],
                  "workload": next(r for r in present if r is not None).workload}
        for path, row in zip(paths, present):
            entry = {"file": path}
            if row is not None:
                entry.update(mean_s=row.mean, stdev_s=row.stdev, mem_peak_bytes=row.mem_peak)
                differs = not_comparable(row, ref) if ref is not None else ""
                if differs and row is not ref:
                    entry["not_comparable"] = differs
                elif ref is not None and row is not ref:
                    # Runs of two files are not paired: each file's per-round
                    # values form one sample.
                    ratio = unpaired_ratio(list(row.by_round.values()),
                                           list(ref.by_round.values()))
                    entry.update(time_change=change(ratio), time_ratio=ratio.point,
                                 time_ci_low=ratio.low, time_ci_high=ratio.high,
                                 time_significant=significance(ratio))
                    memory = unpaired_ratio(row.mem_samples, ref.mem_samples)
                    if memory is not None:
                        entry.update(
                            mem_change_pct=(memory.point - 1) * 100,
                            mem_change_ci_pct=None if memory.low is None else
                            [(memory.low - 1) * 100, (memory.high - 1) * 100],
                            mem_significant=significance(memory))
            record["files"].append(entry)
        records.append(record)
    return records


def render_compare(suites, paths, args):
    records = compare_rows(suites, paths, args)
    agreements = [dict(agreement(suites[0], suite, args.workload), file=path)
                  for suite, path in zip(suites[1:], paths[1:])]
    best = best_per_file(suites, paths, args.workload)
    if args.format == "json":
        return json.dumps({"files": paths, "header": header_lines(suites, paths),
                           "benchmarks": records, "best": best,
                           "agreement": agreements}, indent=2)
    labels = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    headers = ["benchmark"]
    for i, label in enumerate(labels):
        headers.append("%s time" % label)
        if i:
            headers.append("time change")
        headers.append("%s MiB" % label)
        if i:
            headers.append("memory change")
    body = []
    for record in records:
        row = [record["workload"], record["benchmark"]]
        for i, entry in enumerate(record["files"]):
            if "mean_s" not in entry:
                row.extend([""] * (2 if not i else 4))
                continue
            row.append("%s +- %s" % (fmt_time(entry["mean_s"]), fmt_time(entry["stdev_s"])))
            if i:
                row.append("not comparable: " + entry["not_comparable"]
                           if "not_comparable" in entry else
                           describe_change(entry.get("time_change"),
                                           entry.get("time_significant")))
            row.append(fmt_mib(entry.get("mem_peak_bytes")))
            if i and "not_comparable" in entry:
                row.append("not comparable")
            elif i:
                pct = entry.get("mem_change_pct")
                interval = entry.get("mem_change_ci_pct")
                text = None if pct is None else "%+.1f%%" % pct + (
                    " [%+.1f%%, %+.1f%%]" % tuple(interval) if interval else "")
                row.append(describe_change(text, entry.get("mem_significant")))
        body.append(row)
    if args.format == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        keys = ("mean_s", "stdev_s", "time_ratio", "time_ci_low", "time_ci_high",
                "time_significant", "mem_peak_bytes", "mem_change_pct",
                "mem_significant", "not_comparable")
        writer.writerow(("benchmark", "file") + keys)
        for record in records:
            for entry in record["files"]:
                writer.writerow([record["benchmark"], entry["file"]] + [
                    "" if entry.get(k) is None else entry.get(k) for k in keys])
        return out.getvalue().rstrip("\n")
    lines = header_lines(suites, paths)
    # One table per workload (a version's or a build's change reads per
    # workload), then each file's best model of it.
    for workload in dict.fromkeys(row[0] for row in body):
        lines.append("")
        lines.append("## %s" % workload if args.format == "markdown" else workload)
        lines.append("")
        lines.append(table(headers, [row[1:] for row in body if row[0] == workload],
                           args.format))
        lines.append("")
        lines.append(("- " if args.format == "markdown" else "  * ") + "best: " + "; ".join(
            "%s %s" % (label, ", ".join(best[workload].get(path, [])) or "-")
            for label, path in zip(labels, paths)))
    lines.append("")
    for found in agreements:
        lines.append("%s against %s: %s; %s" % (
            found["file"], paths[0],
            "speedups within 10%% of each other: %d of %d"
            % (found["speedups_within_10pct"], found["speedups"])
            if found["speedups"] else "no speedup in both",
            "takeaways: none contradicts" if not found["contradictions"] else
            "takeaways that contradict: " + "; ".join(found["contradictions"])))
    return "\n".join(lines)


def best_per_file(suites, paths, workloads=None):
    """{workload: {file: the fastest model, or the models tied with it}}."""
    best = {}
    for suite, path in zip(suites, paths):
        for workload, rows in build_rows(suite, workloads).items():
            ours = [r for r in rows if r.ours] or rows
            fastest, tied = winners(ours)
            best.setdefault(workload, {})[path] = [
                r.model for r in sorted([fastest] + tied, key=lambda r: r.position)]
    return best


def describe_change(text, significant):
    if text is None:
        return ""
    if significant is None:
        return "%s (too few values to tell)" % text
    return text if significant else "%s (not significant)" % text


# -- plots ----------------------------------------------------------------------

def plot(suite, directory, workloads=None):
    """One chart per workload (time, memory, CPU per model) and, where
    models form a worker-count series, a scaling chart; return the paths."""
    try:
        import matplotlib
    except ImportError:
        raise ReportError("--plot needs matplotlib: pip install -e '.[plot]' "
                          "(or pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    written = []
    for name, rows in build_rows(suite, workloads).items():
        for draw, suffix in ((plot_models, ""), (plot_scaling, "-scaling")):
            fig = draw(plt, name, rows)
            if fig is None:
                continue
            path = os.path.join(directory, "%s%s.png" % (name, suffix))
            fig.savefig(path, dpi=100)
            plt.close(fig)
            written.append(path)
    return written


def plot_models(plt, name, rows):
    labels = [r.model for r in rows]
    panels = [("time (ms)", [r.mean * 1e3 for r in rows]),
              ("peak memory of the process tree (MiB)",
               [(r.mem_peak or 0) / MIB for r in rows]),
              ("CPU used (cores)", [r.cores or 0 for r in rows])]
    fig, axes = plt.subplots(1, 3, figsize=(15, max(3, 0.35 * len(rows) + 1.5)),
                             sharey=True)
    for axis, (title, values) in zip(axes, panels):
        axis.barh(labels, values, color="tab:blue")
        axis.set_title(title)
        axis.invert_yaxis()
        axis.grid(axis="x", alpha=0.3)
    fig.suptitle("%s (%s)" % (name, workload_params(rows) if rows[0].ours else ""))
    fig.tight_layout()
    return fig


def plot_scaling(plt, name, rows):
    """Time against worker count, one line per series the models state."""
    import matplotlib.ticker

    series = {}
    for r in rows:
        if "scaling" in r.meta:
            label = ", ".join(part for part in (
                r.meta["scaling"], r.meta.get("scaling_series")) if part)
            series.setdefault(label, []).append((r.workers(), r.mean * 1e3))
    series = {k: sorted(v) for k, v in series.items() if len(v) >= 2}
    if not series:
        return None
    fig, axis = plt.subplots(figsize=(7, 4.5))
    for label, points in series.items():
        axis.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                  label=label)
    reference = next((r for r in rows
                      if r.model == r.meta.get("reference_model")), None)
    if reference:
        axis.axhline(reference.mean * 1e3, color="gray", linestyle="--",
                     label=reference.model)
    axis.set_xscale("log", base=2)
    axis.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%d"))
    axis.set_xlabel("workers")
    axis.set_ylabel("time (ms)")
    axis.set_title("%s: time against worker count" % name)
    axis.grid(alpha=0.3)
    axis.legend()
    fig.tight_layout()
    return fig


# -- main -----------------------------------------------------------------------

def expand(paths):
    """Glob patterns that match no file as given (tox passes them unexpanded),
    expanded in name order; a pattern that matches nothing is an error."""
    files = []
    for path in paths:
        if os.path.exists(path) or not any(c in path for c in "*?["):
            files.append(path)
            continue
        matches = sorted(glob.glob(path))
        if not matches:
            raise ReportError("no file matches %s" % path)
        files.extend(matches)
    return files


def compare_to_table(paths):
    """pyperf's own comparison, as pyperf prints it."""
    proc = subprocess.run([sys.executable, "-m", "pyperf", "compare_to", "--table"]
                          + list(paths), capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReportError("pyperf compare_to failed: %s"
                          % " ".join(proc.stderr.split())[:500])
    return proc.stdout.rstrip("\n") + "\n"


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ReportError(message)


def parse_args(argv):
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="pyperf JSON files written by bench.py")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--sort", choices=SORTS, default="name",
                        help="row order within a workload (default: as run)")
    parser.add_argument("--workload", type=lambda s: [w for w in s.split(",") if w],
                        help="only these workloads (comma-separated)")
    parser.add_argument("--compare-to-table", action="store_true",
                        help="print `python -m pyperf compare_to --table` on the "
                        "files first")
    parser.add_argument("--plot", metavar="DIR",
                        help="write PNG charts per workload into DIR (needs matplotlib)")
    return parser.parse_args(argv)


def main(argv=None):
    try:
        args = parse_args(argv)
        args.files = expand(args.files)
        suites = [load(path) for path in args.files]
        if args.compare_to_table:
            if len(suites) < 2:
                raise ReportError("--compare-to-table needs two files or more")
            print(compare_to_table(args.files))
        if len(suites) == 1:
            print(render_single(suites[0], args.files[0], args))
        else:
            print(render_compare(suites, args.files, args))
        if args.plot:
            for path, suite in zip(args.files, suites):
                directory = args.plot if len(suites) == 1 else os.path.join(
                    args.plot, os.path.splitext(os.path.basename(path))[0])
                for written in plot(suite, directory, args.workload):
                    print("wrote %s" % written, file=sys.stderr)
    except ReportError as exc:
        print("%s: error: %s" % (PROG, exc), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
