"""How many values a benchmark's next worker runs, and whether it warms up
first, from what the run has measured of it so far.

Kalibera & Jones ("Rigorous benchmarking in reasonable time"): repeat at
the level where the variance is. A worker costs a fixed part (process
start, imports, inputs, the memory sampler: ``overhead``) and a part per
value (the model's batch and, paired in the worker, the reference's beside
it: ``pair``). Its unit, the median of its pairs' log ratios, varies by
the spread between workers (hash seed, address layout: ``between``) plus
the pairs' own spread over the pairs it holds (``within``; pi/2 times the
variance of a mean, for a median). Where the variance lies mostly between
the pairs of one worker (the machine's speed changing from one batch to the
next), more pairs in a worker buy precision without another process
start; but the confidence sequence needs units, and wide ones at few
rounds, so neither extreme is best. For each benchmark the number of pairs
is the one that answers its most demanding open question (``Demand``) in
the least time, by the same sequence the verdicts use, with the variances
and costs measured in this run; and at least enough that the worker's
timed batches are three quarters of its time.

What the runs measured (costs, spreads, whether a first batch is slower) is
``concbench.run.costs``'s. In the first round a worker paired with the
reference runs no warm-up (its unit is the median of its pairs, which one
slow first pair hardly moves, and the first pair tells), a worker paired
by round one; from the next round, a warm-up runs only where the first
batch was shown slower. A first-round worker runs the preset's pairs,
fewer where its workload's pairs already took long (``first_values``).
"""

import math

from concbench.analysis import anytime
from concbench.rules import ALPHA
from concbench.analysis.comparisons import MOST_ROUNDS
from concbench.analysis import stats
from concbench.run.costs import MEDIAN_VARIANCE, Figures, pooled_between

# The share of a worker's time its timed batches should at least take
# (its warm-ups are not timed): paired in its worker, and paired by round
# (IO rows, whose rounds agree closely, need values less than rounds),
# within LEAST_WORKER_S. The first rounds' workers, sized before the run
# knows their costs, take less, so 0.75 from then on aims above the 70% a
# run's whole share should reach.
SHARE, SHARE_BY_ROUND, LEAST_WORKER_S = 0.75, 0.5, 2.5
# A worker's values stop here, however precise its question needs them:
# rounds interleave benchmarks, and a long worker would hold a slow
# period for itself.
MOST_WORKER_S = 5.0
MOST_VALUES = 40
# The fewest pairs of a first-round worker paired in its worker: two give
# the pairs' spread within a worker, and whether the first is slower.
FIRST_PAIRS = 2


class Demand:
    """What a benchmark's most demanding open question asks of its next
    rounds: an interval's half-width below ``room`` (log) at level 1 -
    ``alpha``, on ``rounds`` rounds so far; ``rows`` is 2 for a comparison
    of two rows (each brings its own spread), else 1."""

    def __init__(self, room, alpha=ALPHA, rounds=0, rows=1):
        self.room, self.alpha, self.rounds, self.rows = room, alpha, rounds, rows

    def harder(self, other):
        """The more demanding of two."""
        if other is None:
            return self
        return self if self.room / math.sqrt(self.rows) < other.room / math.sqrt(
            other.rows) else other


def first_values(preset, pair_s):
    """The pairs of a first-round worker paired in its worker, before its
    own benchmark has run: the preset's count, but no more than fit in
    LEAST_WORKER_S at ``pair_s``, the seconds a pair of its workload took
    so far in this round (None: none ran yet), and at least FIRST_PAIRS.
    On a slow machine every pair takes longer, and the first round, which
    runs every benchmark, would otherwise spend much of the budget on one
    workload whose reference's batch is long (measured in dfc5ea8: git show
    dfc5ea8)."""
    if not pair_s or preset <= FIRST_PAIRS:
        return preset
    return max(FIRST_PAIRS, min(preset, int(LEAST_WORKER_S / pair_s)))


def least_values(figures, warmups=0):
    """Enough values that the timed batches take SHARE of the worker
    (SHARE_BY_ROUND unpaired), its ``warmups`` counted with its fixed cost,
    as long as they fit in LEAST_WORKER_S."""
    if not figures.pair_s:
        return 1
    share = SHARE if figures.paired else SHARE_BY_ROUND
    fixed = figures.seconds(0, warmups)
    wanted = math.ceil(share / (1 - share) * fixed / figures.pair_s)
    return max(1, min(wanted, int(LEAST_WORKER_S / figures.pair_s), MOST_VALUES))


def most_values(figures):
    if not figures.pair_s:
        return MOST_VALUES
    return max(1, min(MOST_VALUES, int(MOST_WORKER_S / figures.pair_s)))


def rounds_for(sd, demand):
    """The least rounds at which a sequence on units of spread ``sd``
    (widened as every interval widens it, ``stats.ROUND_WIDENING``) would
    fit ``demand``'s room; MOST_ROUNDS when none does."""
    if sd <= 0:
        return max(demand.rounds + 1, anytime.first_bounded(demand.alpha))
    return anytime.least_rounds(demand.room, sd * stats.ROUND_WIDENING, demand.alpha,
                                max(demand.rounds + 1, 2), MOST_ROUNDS)


def values_for(figures, between, demand, horizon=None, warmups=0):
    """The values (pairs) for the next worker of a benchmark: for a paired
    one with an open question, the count that answers it soonest, if it
    can within ``horizon`` seconds of this benchmark's workers (the share
    of the budget left that is its); otherwise, or unpaired, or with no
    open question, ``least_values``; at most ``most_values``. A worker's
    ``warmups`` cost what its process start does, once per worker."""
    low, high = least_values(figures, warmups), most_values(figures)
    low = min(low, high)
    within = figures.within()
    if not figures.paired or demand is None or within is None or demand.room <= 0:
        return low
    best = None
    for count in sorted({low, high} | {k for k in (2, 3, 4, 6, 8, 12, 16, 24, 32)
                                       if low < k < high}):
        sd = math.sqrt(demand.rows * (between + MEDIAN_VARIANCE * within ** 2 / count))
        rounds = rounds_for(sd, demand) - demand.rounds
        seconds = rounds * figures.seconds(count, warmups)
        if best is None or seconds < best[0]:
            best = (seconds, count)
    if horizon is not None and best[0] > horizon:
        return low      # not in this budget: spend no more than a worker must
    return best[1]


def beside_sizes(ran, took, rival, demand=None, horizon=None):
    """The next worker of a race's comparison side by side
    (``schema.BESIDE``): from the figures of its own runs (``ran``), or
    before it ran, of the rival's row (the same batches, beside the
    reference's); its spread between workers from the rival's row. Sized as
    a row's worker is (``values_for``, for the comparison's ``demand``):
    its unit is the worker's median, as a row's is. None before the rival
    has run."""
    f = Figures.of_row(ran, took)
    if not f.pairs_s:
        return None
    between = (f if ran is rival else Figures.of_row(rival)).between_variance()
    between = max(0.0, between or 0.0)
    warmups = int(f.keeps_warmup())
    values = values_for(f, between, demand, horizon, warmups)
    return Sizes(values, warmups, f.seconds(values, warmups))


class Sizes:
    """A benchmark's next worker: ``values``, ``warmups``, and the
    ``seconds`` it is likely to take."""

    def __init__(self, values, warmups, seconds):
        self.values, self.warmups, self.seconds = values, warmups, seconds

    def __repr__(self):
        return "Sizes(%d, %d, %.1fs)" % (self.values, self.warmups, self.seconds)


def plan_sizes(rows, took, demands, remaining=None, fixed_values=None,
               fixed_warmups=None, round_budget=None):
    """{name: Sizes} for every row of ``rows`` (by workload) that has run:
    ``took``: seconds its last worker took, by name; ``demands``: the
    Demand of each benchmark with an open question; ``remaining``: the
    seconds left of the budget (None: no budget), which the open
    benchmarks share; ``fixed_*``: counts the user set (-n, -w), which win;
    ``round_budget``: the seconds the next round, which runs every one of
    them (the preset's rounds), may take (``fit``)."""
    found, figures_of = {}, {}
    horizon = None if remaining is None else remaining / max(1, len(demands))
    for group in rows.values():
        figures = {row.name: Figures.of_row(row, took.get(row.name)) for row in group}
        between = pooled_between(figures.values())
        for row in group:
            f = figures[row.name]
            if not f.pairs_s:
                continue
            warmups = fixed_warmups if fixed_warmups is not None else int(f.keeps_warmup())
            values = fixed_values or values_for(f, between, demands.get(row.name), horizon,
                                                warmups)
            found[row.name] = Sizes(values, warmups, f.seconds(values, warmups))
            figures_of[row.name] = f
    if round_budget is not None and not fixed_values:
        fit(found, figures_of, round_budget)
    return found


def fit(found, figures, budget):
    """Shrink the workers of ``found`` (in place) so that a round of all of
    them takes ``budget`` seconds or less, where one value each allows it:
    the pairs beyond what the floor of three quarters timed, or an open
    question, asked for are what goes. The largest workers give up values
    first (every worker at most ``cap`` seconds, the largest cap that
    fits), so that a round a budget cannot hold runs each benchmark as
    often as its neighbours. Sized by that floor alone, a preset's round
    can overrun its budget when the machine runs slow (measured in 423da4d:
    git show 423da4d)."""
    def sized(name, cap):
        f, old = figures[name], found[name]
        most = int((cap - f.seconds(0, old.warmups)) / f.pair_s) if cap is not None else old.values
        values = max(1, min(old.values, most))
        return Sizes(values, old.warmups, f.seconds(values, old.warmups))

    def total(cap):
        return sum(sized(name, cap).seconds for name in found)

    if not found or total(None) <= budget:
        return
    low, high = 0.0, max(size.seconds for size in found.values())
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if total(middle) <= budget else (low, middle)
    for name in found:
        found[name] = sized(name, low)
