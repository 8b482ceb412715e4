"""A race's comparisons side by side: a rival and the leader run in one
worker, their batches paired (``schema.BESIDE``), and read at levels
fixed in advance (``concbench.analysis.race`` reads them)."""

import copy
import math

from concbench import rules
from concbench.analysis import anytime
from concbench.analysis.comparisons import Question, least_needed, rounds_needed
from concbench.analysis.stats import Ratio

# A rival not told apart from the leader runs beside it once its time
# reads within 10% of the leader's on the rounds they share (from the
# preset's rounds on: through the speedups, a comparison among 17 rows
# is unbounded up to its fourth round, which a default run on a slow day
# hardly passes): one further behind is shown slower sooner through the
# speedups, and would spend a comparison's share of the level for little.
NEAR = 1.10


def side_level(number):
    """The one-sided level of a race's ``number``-th comparison side by
    side, in the order they opened: SIDE_BY_SIDE_ALPHA / 2 ** number, which
    sum to SIDE_BY_SIDE_ALPHA however many open."""
    return rules.SIDE_BY_SIDE_ALPHA / 2 ** number


def joined(through, direct):
    """The intersection of a comparison's interval through the speedups
    and its interval side by side (each a confidence sequence at its own
    share of the race's level, so the truth lies in both at once at their
    sum); the point is the pairs' side by side. Either alone while the
    other has no interval, and the side-by-side one should they not meet
    (one has erred). ``side``: the side-by-side part; ``rounds``, the
    rounds the comparison through the speedups shares."""
    if direct is None:
        return through
    # A copy of either before it is marked: ``stats.memoized`` hands out
    # the same Ratio to every reader of the same rounds.
    if direct.low is None or through is None or through.low is None:
        found = copy.copy(through if direct.low is None and through is not None else direct)
    elif max(through.low, direct.low) > min(through.high, direct.high):
        found = copy.copy(direct)
    else:
        found = Ratio(direct.point, max(through.low, direct.low),
                      min(through.high, direct.high), through.above, through.rounds,
                      through.values, through.log_sd)
    # Its rounds are the shared rounds whichever interval it holds; the
    # workers side by side are ``side``'s.
    found.above, found.rounds = (through.above, through.rounds) if through else (0, 0)
    found.side = direct
    return found


def side_question(kind, workload, topic, rows, pair, direct, room, alpha, floor, beside):
    """The open comparison ``pair`` of ``rows`` run side by side in the
    benchmark ``beside``: its rounds are
    workers of it (``direct``: its interval so far, or None), and those it
    needs come from theirs at level 1 - ``alpha`` two-sided, none fewer
    than the first interval needs (``anytime.first_bounded``)."""
    logs = [math.log(x) for x in direct.values] if direct else []
    first = anytime.first_bounded(alpha)
    part = Question(kind, workload, topic, False, rows, len(logs),
                    max(first, rounds_needed(logs, room, alpha, floor)),
                    pairs=[pair], alpha=alpha,
                    room=room(math.log(direct.point) if direct else 0.0),
                    least=max(first, least_needed(logs, room, alpha, floor)))
    part.beside = beside
    return part
