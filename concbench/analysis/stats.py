"""Paired ratios with intervals valid at any stopping time (``Ratio``).

A run's speedups are looked at after every round (``concbench.analysis.anytime``
holds their intervals); two files are compared once, when both are done
(``concbench.analysis.unpaired``).
"""

import contextlib
import dataclasses
import math
import statistics

from concbench.analysis import anytime
from concbench.rules import ALPHA


def mean(values):
    """The mean of a sequence of floats (``statistics.fmean`` without its
    checks)."""
    values = list(values)
    return sum(values) / len(values)


def stdev(values):
    """The sample standard deviation of floats: ``statistics.stdev``
    computes it exactly over fractions, far slower, and the rounds are read
    after every round (and simulated by the thousand)."""
    values = list(values)
    middle = sum(values) / len(values)
    return math.sqrt(sum((x - middle) ** 2 for x in values) / (len(values) - 1))


@dataclasses.dataclass(frozen=True, eq=False)
class Ratio:
    """A ratio of times with its interval, a record not changed once made
    (a reading that narrows it makes another, ``dataclasses.replace``):
    ``point`` is the geometric mean of the per-round ratios, [``low``,
    ``high``] the interval on their logarithms (None while there is none),
    ``above`` how many rounds had a ratio above 1, ``rounds`` how many were
    paired, ``values`` the per-round ratios and ``log_sd`` the standard
    deviation of their logarithms (paired ratios only)."""

    point: float
    low: float
    high: float
    above: int
    rounds: int
    values: tuple = ()
    log_sd: float = None
    # A comparison read side by side too: that part of it
    # (``comparisons.joined``).
    side: "Ratio" = None

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(self.values))

    def includes_one(self):
        return self.low is None or self.low <= 1.0 <= self.high

    def __repr__(self):
        return "Ratio(%.3f, %s, %s, %d/%d)" % (self.point, self.low, self.high,
                                               self.above, self.rounds)


# The largest log ratio an interval's end may have (exp overflows at 709.8).
UNBOUNDED_LOG = 700.0


def sequence_ratio(rounds, mean, log_sd, above=0, values=(), alpha=ALPHA):
    """The Ratio of ``rounds`` per-round log ratios of mean ``mean`` and
    standard deviation ``log_sd``, with the confidence sequence's interval
    at level 1 - ``alpha`` (none while it is unbounded)."""
    half = anytime.half_width(rounds, log_sd, alpha) if rounds >= 2 else math.inf
    # A half-width past exp's range (a level split over many rows, read at
    # round 3) bounds nothing a float can hold: no interval yet.
    low, high = ((None, None) if half > UNBOUNDED_LOG or abs(mean) > UNBOUNDED_LOG
                 else (math.exp(mean - half), math.exp(mean + half)))
    return Ratio(math.exp(mean), low, high, above, rounds, values, log_sd)


def ratio_of(by_round, alpha=ALPHA, floor=None):
    """The Ratio of per-round ratios ``by_round`` ({round: ratio}; those
    not above 0 are left out), with its anytime-valid interval at level
    1 - ``alpha``; None without any.

    ``floor``: the least standard deviation a round's log ratio can have,
    known from inside the rounds (``within_floor``). A handful of rounds
    can agree by chance far more closely than their pairs do; the spread
    the interval uses is never below it. This only widens the confidence
    sequence, so its guarantee stands.

    The interval is the intersection of the sequence's intervals after
    each round, in the rounds' order: the true ratio lies in all of them
    at once at the sequence's level, so an answer read off one round does
    not reopen at the next (the last interval alone, should the
    intersection be empty: then the sequence has already erred)."""
    # The same Ratio to every reader, which none can change.
    return remembered(("ratio", tuple(sorted(by_round.items())), alpha, floor),
                      lambda: _ratio_of(by_round, alpha, floor))


def remembered(key, compute):
    """``compute()``; within ``memoized``, what it gave for ``key`` the
    first time (``key`` names everything the result depends on)."""
    if _memo is None:
        return compute()
    if key not in _memo:
        _memo[key] = compute()
    return _memo[key]


# {key: result} while ``memoized``; None otherwise.
_memo = None


@contextlib.contextmanager
def memoized():
    """Within it, ``ratio_of`` computes each interval once and returns the
    same Ratio when asked again, and ``comparisons.rounds_needed`` each
    count. A simulated run (``research.simulation``) reads every row after
    every round, and most rows got no round since the last reading; the
    intervals and counts are the same, in half the time. Only within
    one run, so that a test that changes how intervals are computed between
    runs gets its own. It stays here, though only the simulation
    (``research.simulation``) enters it, because the cache must sit inside
    the functions bench.py and the report use, so the simulation runs them
    unchanged."""
    global _memo
    outer, _memo = _memo, {}
    try:
        yield
    finally:
        _memo = outer


def _ratio_of(by_round, alpha, floor):
    ratios = [by_round[r] for r in sorted(by_round) if by_round[r] > 0]
    if not ratios:
        return None
    logs = [math.log(x) for x in ratios]
    spread = stdev(logs) if len(logs) > 1 else None
    if spread is not None:
        spread = widened(spread, persistence(logs), floor)
    found = sequence_ratio(len(logs), mean(logs), spread,
                           sum(1 for x in ratios if x > 1), ratios, alpha)
    if found.low is None:
        return found
    low, high = found.low, found.high
    for count, middle, earlier in prefixes(logs, floor):
        before = sequence_ratio(count, middle, earlier, alpha=alpha)
        if before.low is not None:
            low, high = max(low, before.low), min(high, before.high)
    if low <= high:
        found = dataclasses.replace(found, low=low, high=high)
    return found


def widened(spread, factor, floor):
    """The spread an interval takes: the rounds' own, widened by their
    persistence (``factor``) or ROUND_WIDENING, whichever is more, and never
    below ``floor``."""
    spread *= max(factor, ROUND_WIDENING)
    return max(spread, floor) if floor else spread


def prefixes(logs, floor):
    """(count, mean, spread as ``ratio_of`` takes it) of the first 2, 3,
    ... rounds of ``logs``, all but the last, from running sums: the same
    figures as ``stdev`` and ``persistence`` of each prefix (checked by
    tests/test_anytime.py), in one pass, since every interval of a run,
    and thousands of simulated runs, read them after every round."""
    total = squared = products = 0.0
    for count, value in enumerate(logs[:-1], start=1):
        if count > 1:
            products += logs[count - 2] * value
        total += value
        squared += value * value
        if count < 2:
            continue
        middle = total / count
        squares = max(squared - count * middle * middle, 0.0)
        factor = 1.0
        if count >= 4 and squares > 0:
            lagged = (products - middle * (2 * total - logs[0] - value)
                      + (count - 1) * middle * middle)
            r = min(max(lagged / squares, 0.0), MOST_PERSISTENCE)
            factor = math.sqrt((1 + r) / (1 - r))
        yield count, middle, widened(math.sqrt(squares / (count - 1)), factor, floor)


# The most lag-1 autocorrelation the rounds' spread is widened for.
MOST_PERSISTENCE = 0.6
# Every interval of a run widens its rounds' spread at least as for a
# lag-1 autocorrelation of 0.3, fixed in advance: the rounds' own estimate
# runs low over a handful of rounds, and without it, the machine's slow
# periods that keep their sign for several rounds, and an IO reference's
# one-sided skew, carry the simulation's errors past ALPHA (docs/figures.md,
# "How a row's rounds vary: autocorrelation and skew"; docs/statistics.md).
ROUND_WIDENING = math.sqrt((1 + 0.3) / (1 - 0.3))


def persistence(logs):
    """How much wider than its values' spread the mean of rounds in time
    order varies when neighbouring rounds resemble each other: the
    machine's slow periods can last several rounds and favour one side of
    a pair all along. From the rounds' lag-1 autocorrelation r (taken as 0
    when negative, at most MOST_PERSISTENCE): sqrt((1 + r) / (1 - r)), the
    long-run factor of an AR(1) process; 1 below four rounds. This only
    widens the interval."""
    count = len(logs)
    if count < 4:
        return 1.0
    middle = sum(logs) / count
    squares = sum((x - middle) ** 2 for x in logs)
    if squares == 0:
        return 1.0
    lagged = sum((a - middle) * (b - middle) for a, b in zip(logs, logs[1:]))
    r = min(max(lagged / squares, 0.0), MOST_PERSISTENCE)
    return math.sqrt((1 + r) / (1 - r))


def within_floor(groups):
    """The standard deviation that the median of each group of ``groups``
    (a round's paired log ratios) has from its own pairs' spread alone: a
    round's value varies at least this much, whatever the rounds'
    differences add; None without any group of two. Pooled over every
    round, it rests on many more pairs than the rounds' own spread.

    The pairs' spread is taken robustly (1.4826 times the median absolute
    deviation from each group's median, with Bessel's factor for the
    group's own median), as the median is: a pair that ran across a change
    of the machine's speed can be off by half, and a variance would
    take its share of those for the spread of the median, which they
    hardly move. A median of k pairs varies as pi/2 times a mean of k."""
    deviations, sizes = [], []
    for group in groups:
        if len(group) > 1:
            middle = statistics.median(group)
            bessel = math.sqrt(len(group) / (len(group) - 1))
            deviations.extend(abs(x - middle) * bessel for x in group)
            sizes.append(len(group))
    if not sizes:
        return None
    scale = 1.4826 * statistics.median(deviations)
    return math.sqrt(math.pi / 2 * scale * scale * mean(1 / k for k in sizes))


def joint_floor(*floors):
    """The floor of a ratio of two rows' per-round values (each carries its
    own pairs' spread): None when neither has one."""
    known = [f for f in floors if f]
    return math.sqrt(sum(f * f for f in known)) if known else None


def paired_ratio(numerator, denominator, alpha=ALPHA, floor=None):
    """numerator[r] / denominator[r] over the rounds r both have, with its
    anytime-valid interval at level 1 - ``alpha``.

    Runs of the same round ran within seconds of each other (interleaved), so
    their ratio cancels most of the machine's drift; the interval comes from
    the spread of the per-round ratios."""
    return ratio_of({r: numerator[r] / denominator[r] for r in numerator
                     if r in denominator and numerator[r] > 0 and denominator[r] > 0},
                    alpha, floor)


def quantile(values, share):
    """The nearest-rank quantile of ``values`` (0 < share <= 1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def half_width(ratio):
    """The interval's half-width as a share of the point (the wider side:
    the interval is symmetric in logarithms); None without an interval."""
    if ratio is None or ratio.low is None:
        return None
    return max(ratio.high / ratio.point - 1, 1 - ratio.low / ratio.point)


def imprecise(ratio, precision):
    """Whether the interval is wider than +-``precision`` percent (or
    missing)."""
    width = half_width(ratio)
    return width is None or width > precision / 100.0
