"""A CI gate on two runs of bench.py: has a model got slower, or changed,
from the base run to the new one?

Raw times move between two runs on one machine (docs/figures.md, "A
default run from a fresh clone"), so the gate reads
each row's speedup against its own file's reference, a ratio of ratios:
what the machine did to both halves of a pair cancels. The two runs'
rounds are independent samples of that speedup, so the change is the
ratio of their geometric means, with Welch's two-sample Student interval on
the difference of their mean logarithms. Each run's spread is taken as its verdicts
take it (``stats.widened``: the rounds' persistence, ROUND_WIDENING at
least, never below the spread of the row's own pairs), so that a machine's
slow periods that last several rounds do not pass for a change.

The level is split over the rows compared (Bonferroni): two runs of the
same code fail the gate with at most ALPHA's chance together, however
many rows they share. A row is "slower" when its interval lies wholly
below 1 / the band's upper end, "faster" wholly above it, so a change
inside the band of "the same" never fails.
"""

import math
import statistics

from concbench.rules import ALPHA, SAME_BAND, SLOWER, changed, split
from concbench.analysis.stats import Ratio, persistence, widened
from concbench.analysis.unpaired import difference_ratio, not_comparable

# What --fail-on takes: "slower" fails on a row decided slower beyond the
# band, "changed" on one decided slower or faster.
FAIL_ON = ("slower", "changed")


class GateError(ValueError):
    """Two files the gate cannot compare: no common row, or a reference
    missing from one of them."""


class Change:
    """One row's speedup in the new file against the base file's."""

    def __init__(self, name, ratio, rows):
        self.name, self.ratio, self.rows = name, ratio, rows

    @property
    def direction(self):
        """"slower" or "faster" beyond the band, or None (inside it, or no
        interval: fewer than two rounds in a file)."""
        return changed(self.ratio)

    def reach(self):
        """How large a change of this row, either way, the gate could have
        told from these rounds: the interval's wider side times the band's
        upper end; None without an interval."""
        if self.ratio is None or self.ratio.low is None:
            return None
        return max(self.ratio.high / self.ratio.point, self.ratio.point / self.ratio.low) \
            * SAME_BAND[1]

    def fails(self, fail_on):
        return self.direction == SLOWER or (fail_on == "changed" and self.direction)


def round_logs(row):
    """The log of the row's speedup in each round that paired it with its
    reference (``pairs.settle``)."""
    return [math.log(x) for x in row.round_ratios() if x > 0]


def spread(row, logs):
    """The standard deviation of one round's log speedup, as the row's own
    verdict takes it (``stats.widened``)."""
    return widened(statistics.stdev(logs), persistence(logs), row.within_floor)


def change_of(base, new, alpha):
    """The Ratio of ``new``'s speedup to ``base``'s (two Rows of one
    benchmark, each settled against its own file's reference), with its
    interval at level 1 - ``alpha``; no interval with fewer than two
    rounds on a side."""
    logs = [round_logs(base), round_logs(new)]
    if not all(logs) or not all(math.isfinite(x) for one in logs for x in one):
        return None
    diff = statistics.fmean(logs[1]) - statistics.fmean(logs[0])
    if min(map(len, logs)) < 2:
        return Ratio(math.exp(diff), None, None, 0, 0)
    # Each mean's variance, and the Welch-Satterthwaite degrees of freedom
    # (rounded down: the interval only widens).
    parts = [spread(row, one) ** 2 / len(one) for row, one in zip((base, new), logs)]
    error = math.sqrt(sum(parts))
    df = sum(parts) ** 2 / sum(part ** 2 / (len(one) - 1) for part, one in zip(parts, logs)) \
        if error > 0 else min(map(len, logs)) - 1
    return difference_ratio(diff, error, df, alpha, min(map(len, logs)))


def gated_rows(base_groups, new_groups, skipped=None):
    """{benchmark: (base Row, new Row)} of the rows the gate compares: the
    models, not the reference or the A/A control, that both files have,
    each with a speedup against its own file's reference and measuring the
    same thing. The rows of bench.py's that are left out go to ``skipped``
    (a list) with why: in one file only, with no speedup in one, or not
    comparable (``unpaired.not_comparable``). GateError where no row is
    compared, or where a workload both files have lacks its reference in
    one, or has another."""
    skipped = [] if skipped is None else skipped
    pairs = {}
    for workload in dict.fromkeys(list(base_groups) + list(new_groups)):
        sides = [{r.name: r for r in groups.get(workload, []) if r.ours}
                 for groups in (base_groups, new_groups)]
        if not all(sides):
            skipped.extend((name, "only in the %s file" % which) for side, which in zip(
                sides, ("base", "new")) for name, row in side.items() if row.reference is not row)
            continue
        references = [next((r for r in side.values() if r.reference is r), None)
                      for side in sides]
        if None in references:
            raise GateError("workload %s has no reference row in %s file" % (
                workload, "the base" if references[0] is None else "the new"))
        if references[0].name != references[1].name:
            raise GateError("workload %s is measured against %s in the base file and "
                            "%s in the new one" % (workload, references[0].model,
                                                   references[1].model))
        for name in dict.fromkeys(list(sides[0]) + list(sides[1])):
            base, new = (side.get(name) for side in sides)
            if base is references[0] or new is references[1]:
                continue
            why = (("only in the %s file" % ("base" if new is None else "new"))
                   if base is None or new is None else
                   "no speedup in the %s file" % ("base" if base.ratio is None else "new")
                   if base.ratio is None or new.ratio is None else not_comparable(new, base))
            if why:
                skipped.append((name, why))
            else:
                pairs[name] = (base, new)
    if not pairs and skipped:
        raise GateError("no row is in both files with a speedup there, measuring the same "
                        "thing: %s" % "; ".join("%s (%s)" % one for one in skipped[:5])
                        + (" and %d more" % (len(skipped) - 5) if len(skipped) > 5 else ""))
    if not pairs:
        raise GateError("the two files share no row of bench.py's with a speedup "
                        "against its reference")
    return pairs


def gate(base_groups, new_groups, alpha=ALPHA, skipped=None):
    """[Change] of every row both files have (``gated_rows``), in the base
    file's order, each interval at ``alpha`` split over them all."""
    pairs = gated_rows(base_groups, new_groups, skipped)
    level = split(alpha, len(pairs))
    return [Change(name, change_of(base, new, level), (base, new))
            for name, (base, new) in pairs.items()]
