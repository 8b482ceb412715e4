"""One comparison between two rows, on the rounds both ran: its interval,
whether it is still open, how many rounds it is likely to need, and the
``Question`` a user reads of it; where the two also ran side by side in one
worker (a race's rows, a step's), that reading joined with it. The
questions of a run (``concbench.analysis.questions``) are made of these."""

import dataclasses
import math

from concbench.analysis import anytime
from concbench.schema import BY_ROUND, NONE
from concbench.rules import ALPHA, UNDECIDED, split, verdict, verdict_room
from concbench.analysis.stats import (Ratio, imprecise, joint_floor, mean, paired_ratio,
                                      persistence, remembered, stdev, widened)


# No estimate beyond this many rounds: a question that needs more is hopeless.
MOST_ROUNDS = 200


def compare(row, other, comparisons=1, alpha=None):
    """row's time / other's time, per round they share, at the level split
    over ``comparisons`` (or at 1 - ``alpha``). Rows paired by round (and the
    reference) compare their own runs of the same round, so that a round
    needs no run of the reference; rows paired in their worker compare
    their speedups, each read from the worker's own pairs."""
    if alpha is None:
        alpha = split(ALPHA, comparisons)
    if _by_round(row) and _by_round(other):
        return paired_ratio(row.by_round, other.by_round, alpha)
    mine, theirs = row.speedups(), other.speedups()
    if mine is None and theirs is None:
        return None
    if mine is None:
        mine = dict.fromkeys(theirs, 1.0)
    if theirs is None:
        theirs = dict.fromkeys(mine, 1.0)
    floor = joint_floor(getattr(row, "within_floor", None),
                        getattr(other, "within_floor", None))
    return paired_ratio(theirs, mine, alpha, floor)


def _by_round(row):
    return row.pairing in (BY_ROUND, NONE) and row.by_round


def is_open(ratio, precision=None):
    """Whether a row whose speedup is ``ratio`` still needs rounds:
    undecided, or wider than +-``precision`` percent. A row within the
    precision whose interval still straddles 1 or an end of the "same"
    band (0.99x [0.94-1.03]) has answered nothing yet: it stays open."""
    if verdict(ratio) == UNDECIDED:
        return True
    return precision is not None and imprecise(ratio, precision)


def rounds_needed(logs, room, alpha=ALPHA, floor=None):
    """How many rounds in all a comparison is likely to need, if its
    per-round log ratios ``logs`` keep their mean and spread: the least n
    whose confidence sequence's half-width (at 1 - ``alpha``) is below
    ``room(mean)``, the distance from the mean to the nearest answer. The
    spread of two rounds says too little to give one up: below three, one
    more. ``floor``: the least spread; the spread is widened as the
    interval widens it (``stats.widened``)."""
    return _needed(logs, room, alpha, floor)


# How far in its favour a question's figures are read before the run gives
# it up (``least_needed``), in standard errors: its spread's lower bound
# (about 84% one-sided), and its mean as far towards its answer: a
# futility bound as sequential trials set one, whose cost in answers the
# simulation counts (docs/statistics.md).
HOPE_Z = (1.0, 1.0)


def least_needed(logs, room, alpha=ALPHA, floor=None):
    """The fewest rounds in all a comparison could need were its figures
    as favourable as its rounds allow (HOPE_Z): the spread at its lower
    bound (chi-square, Wilson-Hilferty) and the mean wherever within its
    bound leaves the most room. A run gives a question up only when even
    this cannot be met in the time left (``allocation.reachable``), so
    that the spread of a few rounds, which says little, does not end one
    that more rounds would likely answer. Below three rounds, one more."""
    return _needed(logs, room, alpha, floor, hope=HOPE_Z)


def _needed(logs, room, alpha, floor, hope=None):
    """``rounds_needed``, or with ``hope`` (z of the spread, z of the mean)
    ``least_needed``."""
    return remembered(("needed", tuple(logs), room, alpha, floor, hope),
                      lambda: _count(logs, room, alpha, floor, hope))


def _count(logs, room, alpha, floor, hope):
    count = len(logs)
    if count < 3:
        return count + 1
    factor, middle = persistence(logs), mean(logs)
    spread = found = widened(stdev(logs), factor, floor)
    target = room(middle)
    if hope:
        df, (z_spread, z_mean) = count - 1, hope
        upper = df * (1 - 2 / (9 * df) + z_spread * math.sqrt(2 / (9 * df))) ** 3
        spread = widened(stdev(logs) * math.sqrt(df / upper), factor, floor)
        reach = z_mean * found / math.sqrt(count)
        target = max(room(middle + reach * (i / 10.0 - 1)) for i in range(21))
    if spread == 0:
        return max(count, anytime.first_bounded(alpha))
    if target <= 0:
        return MOST_ROUNDS
    return anytime.least_rounds(target, spread, alpha, count, MOST_ROUNDS)


def precision_room(precision):
    return lambda mean: math.log(1 + precision / 100.0)


class Question:
    """One thing a user reads from the run: ``kind`` ("row", "control",
    "fastest", "count" or "helping"), the ``workload``, a ``topic`` as the
    report words it, whether it is ``answered``, and while open, the rows a
    round of it must run (``rows``: as pairs needing both, with the
    reference implied by each row's pairing), the rounds its comparisons
    share so far and the rounds they are likely to need in all."""

    def __init__(self, kind, workload, topic, answered, rows=(), rounds=0,
                 needed=0, pairs=(), room=0.0, alpha=ALPHA, least=None,
                 beside=None, parts=(), race=None):
        self.kind, self.workload, self.topic = kind, workload, topic
        self.answered = answered
        self.rows = list(rows)
        self.rounds, self.needed = rounds, needed
        # The fewest rounds it could need at the most favourable reading
        # of its rounds (``least_needed``); ``needed`` where not read.
        self.least = needed if least is None else min(least, needed)
        self.pairs = list(pairs)    # (row, other) comparisons still open
        # A comparison run side by side: the benchmark a round of it runs
        # (concbench.schema.beside_name).
        self.beside = beside
        # A race's open comparisons, each a question of its own to run, and
        # the race it was read from.
        self.parts, self.race = list(parts), race
        # The half-width (log) its nearest answer needs, at level 1 - alpha.
        self.room, self.alpha = room, alpha

    @property
    def label(self):
        return self.topic if self.kind in ("row", "control") else \
            "%s: %s" % (self.workload, self.topic)

    def __repr__(self):
        return "Question(%s, %s, %d/%d)" % (
            self.label, "answered" if self.answered else "open", self.rounds, self.needed)


def row_question(row, precision=None, kind="row"):
    """A row's verdict against its reference (under --precision, also its
    interval's width)."""
    answered = not is_open(row.ratio, precision)
    logs = [math.log(x) for x in row.round_ratios()]
    alpha = getattr(row, "alpha", ALPHA)
    needed = rounds_needed(logs, verdict_room, alpha, floor=row.within_floor)
    least = least_needed(logs, verdict_room, alpha, floor=row.within_floor)
    room = verdict_room(mean(logs)) if logs else 0.0
    if precision:
        needed = max(needed, rounds_needed(logs, precision_room(precision), alpha,
                                           floor=row.within_floor))
        least = max(least, least_needed(logs, precision_room(precision), alpha,
                                         floor=row.within_floor))
        room = min(room, precision_room(precision)(0.0)) if logs else 0.0
    return Question(kind, row.workload, row.name, answered, [row], len(logs), needed,
                    room=room, alpha=alpha, least=least)


def joined(through, direct):
    """The intersection of a comparison's interval through the speedups
    and its interval side by side (each a confidence sequence at its own
    share of the level, so the truth lies in both at once at their sum);
    the point is the pairs' side by side. Either alone while the other has
    no interval, and the side-by-side one should they not meet (one has
    erred). Its ``side`` is the side-by-side part; its ``rounds``, the
    rounds the comparison through the speedups shares."""
    if direct is None:
        return through
    if direct.low is None or through is None or through.low is None:
        found = through if direct.low is None and through is not None else direct
    elif max(through.low, direct.low) > min(through.high, direct.high):
        found = direct
    else:
        found = Ratio(direct.point, max(through.low, direct.low),
                      min(through.high, direct.high), through.above, through.rounds,
                      through.values, through.log_sd)
    # Its rounds are the shared rounds whichever interval it holds; the
    # workers side by side are ``side``'s.
    above, rounds = (through.above, through.rounds) if through else (0, 0)
    return dataclasses.replace(found, above=above, rounds=rounds, side=direct)


def side_question(kind, workload, topic, rows, pair, direct, room, alpha, floor, beside):
    """The open comparison ``pair`` of ``rows`` run side by side in the
    benchmark ``beside``: its rounds are workers of it (``direct``: its
    interval so far, or None), and those it needs come from theirs at level
    1 - ``alpha`` two-sided, none fewer than the first interval needs
    (``anytime.first_bounded``)."""
    logs = [math.log(x) for x in direct.values] if direct else []
    first = anytime.first_bounded(alpha)
    return Question(kind, workload, topic, False, rows, len(logs),
                    max(first, rounds_needed(logs, room, alpha, floor)),
                    pairs=[pair], alpha=alpha,
                    room=room(math.log(direct.point) if direct else 0.0),
                    least=max(first, least_needed(logs, room, alpha, floor)),
                    beside=beside)
