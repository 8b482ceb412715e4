"""Each row's item latencies: percentiles from the runs' histograms, the
open-loop rows that did not keep up with their arrival rate, and what a
rate sweep says of each model (``concbench.item_stamps`` records them)."""

from concbench import schema as K
from concbench.histogram import Histogram
from concbench.thresholds import KEPT_UP
from concbench.formatting import format_time

# The percentiles of a row's latency curve (the page's chart, JSON).
CURVE = (50, 75, 90, 95, 99, 99.9, 100)


def histogram(runs):
    """The runs' latency histograms merged; None when no run has one (an
    older file, plain pyperf). A malformed one is left out."""
    merged, found = Histogram(), False
    for meta in runs:
        text = meta.get(K.LATENCY_HIST)
        if not isinstance(text, str):
            continue
        try:
            merged.merge(Histogram.decode(text))
            found = True
        except ValueError:
            continue
    return merged if found and merged.total else None


def overloaded(row):
    """Whether an open-loop row fell behind its arrival rate in a run."""
    rate = row.meta.get("rate")
    achieved = [meta[K.ARRIVAL_RATE_ACHIEVED] for meta in row.runs
                if isinstance(meta.get(K.ARRIVAL_RATE_ACHIEVED), (int, float))]
    return bool(rate and achieved and min(achieved) < KEPT_UP * rate)


def percentile(row, share):
    return row.latency.percentile(share) if row.latency else None


def curve(row):
    """[[percentile, seconds], ...] of the row's latencies."""
    if not row.latency:
        return None
    return [[share, row.latency.percentile(share)] for share in CURVE]


def bound_of(rows, given=None):
    """The p99 a rate sweep asks of a model: ``given`` (seconds), else twice
    the item's own latency (latency_ms), at least 1 ms."""
    if given:
        return given
    latency_ms = next((r.meta.get("latency_ms") for r in rows if r.meta.get("latency_ms")),
                      0.0)
    return max(2 * latency_ms / 1000.0, 0.001)


def sweep_lines(groups, bound=None):
    """One line per workload run at several arrival rates: for each model,
    the highest rate it kept up with at a p99 within the bound, every lower
    rate too, and the knee, the first rate at which it no longer did; the
    higher rates it kept up with again after the knee (a noisy machine's
    slow moment) are named, not counted."""
    sweeps = {}
    for rows in groups.values():
        for row in rows:
            rate = row.meta.get("rate")
            if row.ours and rate and row.latency:
                base = row.workload.partition("@")[0]
                sweeps.setdefault(base, {}).setdefault(row.model, []).append((rate, row))
    lines = []
    for base, by_model in sweeps.items():
        rates = sorted({rate for found in by_model.values() for rate, _ in found})
        if len(rates) < 2:
            continue
        limit = bound_of([row for found in by_model.values() for _, row in found], bound)
        parts = []
        for model, found in by_model.items():
            held, knee, again = None, None, []
            for rate, row in sorted(found, key=lambda pair: pair[0]):
                if not overloaded(row) and row.latency.percentile(99) <= limit:
                    if knee is None:
                        held = rate
                    else:
                        again.append("%g/s" % rate)
                elif knee is None:
                    knee = rate
            notes = ["knee %g/s" % knee] if knee else []
            if again:
                notes.append("kept up again at " + ", ".join(again))
            parts.append("%s %s%s" % (model, "%g/s" % held if held else "none",
                                      " (%s)" % "; ".join(notes) if notes else ""))
        lines.append("rate sweep %s at %s/s: the highest rate kept up with a p99 "
                     "within %s: %s" % (base, ", ".join("%g" % r for r in rates),
                                        format_time(limit), "; ".join(parts)))
    return lines
