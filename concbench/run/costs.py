"""What a benchmark's runs so far measured of it: the seconds a pair (a
value) costs, what a worker costs besides its batches, how its pairs'
log ratios spread within a worker and between workers, and whether its
first batch is really slower. ``concbench.run.calibration`` sizes the next
workers from these.

Warm-ups are kept only where the data say the first batch is really
slower: more than 5% slower than the rest, against the reference's first
batch beside it (or more than 10% on its own), and by more than twice what
one of its batches varies by.
"""

import math
import statistics

from concbench import schema as K
from concbench.analysis.stats import mean, stdev
from concbench.run.schedule import IN_WORKER

# A worker's fixed cost before it was measured.
OVERHEAD_S = 0.8
MEDIAN_VARIANCE = math.pi / 2
# The first batch is "really slower" beyond these log excesses.
WARM_PAIRED, WARM_ALONE = math.log(1.05), math.log(1.10)


class Figures:
    """What a benchmark's runs so far say of its costs and its spread:
    ``groups``, each worker's pair log ratios (paired) or log values;
    ``pairs_s``, each worker's seconds per value (with the reference's
    batch beside it); ``overhead_s``, the seconds a worker costs besides
    its batches; ``excess``, each worker's first batch against the rest
    (``keeps_warmup``)."""

    def __init__(self, paired, groups=(), pairs_s=(), overhead_s=OVERHEAD_S, excess=()):
        self.paired = paired
        self.groups, self.pairs_s = list(groups), list(pairs_s)
        self.excess = list(excess)
        self.overhead_s = overhead_s
        self.pair_s = statistics.median(self.pairs_s) if self.pairs_s else None

    @classmethod
    def of_row(cls, row, took=None):
        """From a report row's runs; ``took``: the seconds its last worker
        took, as the master timed it (None: not known)."""
        found = cls(row.pairing == IN_WORKER)
        spent = []
        for run, meta in row.timed_runs():
            values = list(run.values)
            partner = _floats(meta.get(K.PAIRED_REFERENCE_S)) if found.paired else []
            if found.paired and len(partner) == len(values):
                found.groups.append([math.log(a / b) for a, b in zip(partner, values)
                                     if a > 0 and b > 0])
                found.pairs_s.append(pair_seconds(run, meta))
            elif values:
                found.groups.append([math.log(v) for v in values if v > 0])
                found.pairs_s.append(sum(values) / len(values))
            warm = [value for _, value in run.warmups]
            if warm and values:
                found.excess.append(found._excess(warm[0], values, partner, meta))
            elif len(values) >= 2:
                # No warm-up: the worker's first value was its first batch.
                found.excess.append(found._excess(
                    values[0], values[1:], partner[1:],
                    {K.WARMUP_REFERENCE_S: partner[0] if partner else None}))
            spent.append(sum(values) + sum(partner) + sum(warm)
                         + sum(_floats(meta.get(K.WARMUP_REFERENCE_S))))
        found.pair_s = statistics.median(found.pairs_s) if found.pairs_s else None
        if took is not None and spent:
            found.overhead_s = max(0.2, took - spent[-1])
        return found

    def _excess(self, first, values, partner, meta):
        """(log of the first batch over the values', the same against the
        reference's first batch beside it, None when unpaired)."""
        alone = math.log(first / statistics.median(values))
        beside = _floats(meta.get(K.WARMUP_REFERENCE_S))
        if not (self.paired and beside and len(partner) == len(values)):
            return alone, None
        ratios = [math.log(b / a) for a, b in zip(partner, values)]
        return alone, math.log(first / beside[0]) - statistics.median(ratios)

    def seconds(self, values, warmups=0):
        """What a worker of ``values`` values and ``warmups`` warm-ups
        costs: its fixed part and its batches (each a pair where paired)."""
        return self.overhead_s + (values + warmups) * self.pair_s

    def medians(self):
        if getattr(self, "_medians", None) is None or len(self._medians) != len(self.groups):
            self._medians = [statistics.median(group) if group else None
                             for group in self.groups]
        return self._medians

    def within(self):
        """The spread of one pair's log ratio (one value's log, unpaired),
        robust to the spikes of a batch that ran in a slow period: 1.4826
        times the median absolute deviation from each run's median, pooled."""
        if getattr(self, "_within", (None, -1))[1] != len(self.groups):
            self._within = (self._spread(), len(self.groups))
        return self._within[0]

    def _spread(self):
        deviations = []
        for group, middle in zip(self.groups, self.medians()):
            if len(group) > 1:
                bessel = math.sqrt(len(group) / (len(group) - 1))
                deviations.extend(abs(x - middle) * bessel for x in group)
        if len(deviations) < 2:
            return None
        return 1.4826 * statistics.median(deviations)

    def between_variance(self, within=None):
        """The variance of a worker's unit beyond what its pairs' spread
        gives it (None without three runs), as an estimate, not clipped."""
        units = [m for m in self.medians() if m is not None]
        within = self.within() if within is None else within
        if len(units) < 3 or within is None:
            return None
        share = mean(MEDIAN_VARIANCE * within ** 2 / len(g) for g in self.groups if g)
        return stdev(units) ** 2 - share

    def keeps_warmup(self):
        """Whether the first batch is really slower (no data: keep it):
        beyond the margin, and beyond twice what one batch varies by
        (``within``; a single first batch in a slow period is not a
        first-call cost)."""
        if not self.excess:
            return True
        noise = 2 * (self.within() or 0.0)
        alone = statistics.median(a for a, _ in self.excess)
        beside = [b for _, b in self.excess if b is not None]
        return alone > max(WARM_ALONE, noise) or bool(beside) and \
            statistics.median(beside) > max(WARM_PAIRED, noise)


def _floats(text):
    try:
        return [float(x) for x in str(text).split()] if text else []
    except ValueError:
        return []


def pair_seconds(run, meta=None):
    """The seconds per pair of a run paired in its worker (its batches and
    the reference's beside them), None for another; ``meta``: the run's
    metadata, if already read."""
    meta = run.get_metadata() if meta is None else meta
    partner = _floats(meta.get(K.PAIRED_REFERENCE_S))
    if not run.values or len(partner) != len(run.values):
        return None
    return (sum(run.values) + sum(partner)) / len(run.values)


def pooled_between(figures):
    """The workload's variance between workers: the mean of its paired
    rows' estimates, at least 0."""
    found = [f.between_variance() for f in figures if f.paired]
    found = [v for v in found if v is not None]
    return max(0.0, mean(found)) if found else 0.0
