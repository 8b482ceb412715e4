"""Successive elimination's half of a race (``concbench.analysis.race``):
each row's own interval against the reference, which puts a row out
whatever rounds it shares with the others, and bounds its time over the
leader's without any shared round."""

import copy
import math

from concbench.rules import ELIMINATION_ALPHA
from concbench.analysis.stats import Ratio, ratio_of


def own_interval(row, alpha):
    """(low, high) of the row's speedup against the reference at level
    1 - ``alpha``, as its verdict reads it; (1, 1) for the reference
    itself; None while there is none."""
    if row is getattr(row, "reference", None):
        return 1.0, 1.0
    speedups = row.speedups()
    if not speedups:
        return None
    found = ratio_of(speedups, alpha, floor=getattr(row, "within_floor", None))
    if found is None or found.low is None:
        return None
    return found.low, found.high


def through_own(ratio, mine, theirs):
    """``ratio`` (a rival's time over the leader's) intersected with what
    the two rows' own intervals say of it, ``mine`` (the rival's) and
    ``theirs`` ((low, high) of each speedup): [their low / my high, their
    high / my low]. Only its lower end is read, one-sided, and it rests on
    the same two ends as the elimination rule (the rival's upper, the
    leader's lower), so it spends no level of its own. ``ratio`` unchanged
    where either row has no interval yet, where the own intervals' lower
    end is no higher, or where the two do not meet (one of them has erred,
    and the comparison reads as it did without its rows' own intervals)."""
    if not mine or not theirs:
        return ratio
    low, high = theirs[0] / mine[1], theirs[1] / mine[0]
    if ratio is None:
        return Ratio(math.sqrt(low * high), low, high, 0, 0)
    if ratio.low is not None and (low <= ratio.low or low > ratio.high):
        return ratio
    found = copy.copy(ratio)
    found.low, found.high = low, high if ratio.high is None else min(high, ratio.high)
    return found


def elimination_alpha(rows):
    """The level of each row's own interval in a race of ``rows`` rows:
    two-sided at twice ELIMINATION_ALPHA / rows, since the true fastest is
    left out only through one end of each row's (its own upper, another's
    lower), each one-sided at ELIMINATION_ALPHA / rows."""
    return 2 * ELIMINATION_ALPHA / rows
