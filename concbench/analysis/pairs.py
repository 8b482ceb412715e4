"""Where a row is settled: its speedup against the reference, its interval
and its verdict (read by ``concbench.rules.verdict``), made into one
``Settled`` record. The speedup pairs the row's batches with the
reference's, per round: from its worker's own pairs (pairing "worker": the
reference's batches ran beside its own, ``concbench.run.schedule``), or
from the reference's run of the same round; and how far apart in time the
paired batches ran."""

import dataclasses
import datetime
import math
import statistics
from types import MappingProxyType

from concbench import schema as K
from concbench.rules import ALPHA
from concbench.rules import verdict
from concbench.analysis.stats import ratio_of, within_floor


def in_worker(pairing, timed_runs):
    """({round: median over the run's pairs of log(reference / own)},
    {round: the run's pair_gap_s}, {round: the median of the reference's
    batches beside it}, the least spread of a round's value from its
    pairs' own: ``stats.within_floor``) of the runs whose worker ran the
    reference's batches beside its own; a run without them, or whose list
    does not match its values, is left out. ``timed_runs``: (pyperf run,
    metadata)."""
    gaps, partner, groups = {}, {}, {}
    if pairing != K.IN_WORKER:
        return {}, gaps, partner, None
    for position, (run, meta) in enumerate(timed_runs):
        try:
            batches = [float(x) for x in meta[K.PAIRED_REFERENCE_S].split()]
        except (KeyError, ValueError, AttributeError):
            continue
        if len(batches) != len(run.values) or not all(
                K.SMALLEST < x < K.LARGEST for x in batches + list(run.values)):
            continue
        number = meta.get(K.ROUND, position)
        partner[number] = statistics.median(batches)
        groups[number] = [math.log(a / b) for a, b in zip(batches, run.values)]
        if isinstance(meta.get(K.PAIR_GAP_S), (int, float)):
            gaps[number] = meta[K.PAIR_GAP_S]
    logs, floor = units(groups)
    return logs, gaps, partner, floor


def units(groups):
    """({round: the median of its pairs' log(reference / own)}, the least
    spread of a round's value from its pairs' own: ``stats.within_floor``)
    of ``groups`` ({round: [log ratio of each pair]})."""
    return ({number: statistics.median(group) for number, group in groups.items()},
            within_floor(list(groups.values())))


@dataclasses.dataclass(frozen=True)
class Settled:
    """A row's speedup against its workload's reference, as settling made
    it: a record of its own, not changed once made."""
    reference: object               # the reference's row
    speedup: float
    ratio: object = None            # stats.Ratio: the reference's time / the row's
    verdict: str = None             # rules.verdict of ``ratio``; None for the reference
    by_round: MappingProxyType = dataclasses.field(         # {round: speedup}
        default_factory=lambda: MappingProxyType({}))


def settle(row, reference, alpha=ALPHA):
    """``row``'s speedup against ``reference`` from the rounds that pair
    them (``round_speedups``): its interval (at level 1 - ``alpha``),
    point and verdict. The report's rows and the simulation's
    (``research.simulation``) are settled alike."""
    if row is reference:
        return Settled(reference, 1.0)
    speedups = round_speedups(row, reference)
    ratio = ratio_of(speedups, alpha, floor=row.within_floor)
    return Settled(reference, ratio.point if ratio else reference.mean / row.mean,
                   ratio, verdict(ratio), MappingProxyType(speedups))


class SettledRow:
    """What a row reads of its ``Settled`` record (``settled``, which the
    row sets from ``settle``): each None until it is settled."""

    settled = None

    @property
    def reference(self):
        """The workload's reference row."""
        return self.settled.reference if self.settled else None

    @property
    def speedup(self):
        return self.settled.speedup if self.settled else None

    @property
    def ratio(self):
        """The reference's time / this row's, paired, with its interval."""
        return self.settled.ratio if self.settled else None

    @property
    def verdict(self):
        """faster, slower, same or undecided; None for the reference."""
        return self.settled.verdict if self.settled else None

    def speedups(self):
        """{round: speedup} as the interval reads them; None for the
        reference, whose speedup is 1 in every round."""
        if self.settled is None:
            return {}
        return None if self is self.settled.reference else self.settled.by_round

    def round_ratios(self):
        """The reference's time / this row's, per round that pairs them."""
        return self.ratio.values if self.ratio else []


def round_speedups(row, reference):
    """{round: the reference's time / the row's} for the rounds that pair
    them: each run's own pairs (pairing "worker"), else the reference's run
    of the same round (medians of each run's values)."""
    if row.pairing == K.IN_WORKER:
        return {r: math.exp(log) for r, log in row.paired_logs.items()}
    return {r: reference.by_round[r] / row.by_round[r] for r in row.by_round
            if r in reference.by_round and row.by_round[r] > 0
            and reference.by_round[r] > 0}


def gap(row, reference):
    """The median time between paired batches: within the worker, as the
    runs measured it; by round, between the middles of the row's run and
    the reference's run of the same round (pyperf's date and duration);
    None when unknown."""
    if row.pairing == K.IN_WORKER:
        gaps = [row.paired_gaps[r] for r in row.paired_logs if r in row.paired_gaps]
    else:
        ours, theirs = middles(row), middles(reference)
        gaps = [abs(ours[r] - theirs[r]) for r in ours if r in theirs]
    return statistics.median(gaps) if gaps else None


def middles(row):
    """{round: the middle of the run's worker, in seconds since the epoch}."""
    found = {}
    for position, (_, meta) in enumerate(row.timed_runs()):
        try:
            start = datetime.datetime.fromisoformat(meta["date"]).timestamp()
            found[meta.get(K.ROUND, position)] = start + meta["duration"] / 2
        except (KeyError, TypeError, ValueError):
            continue
    return found

