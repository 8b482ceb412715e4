"""Intervals that keep their level however often they are looked at.

bench.py looks at every row's interval after every round and stops a row as
soon as its interval decides it; a user may stop the whole run at any moment.
A Student interval holds its level only for a number of rounds fixed in
advance: looked at after every round, it calls a row with no real
difference faster or slower far more often (the mutation kept in
tests/test_anytime.py; docs/figures.md, "The simulation's table"). A confidence
sequence holds at every round at once, so it holds wherever the run stopped.

The one used here is the t confidence sequence for a Gaussian mean of
unknown variance (Lai 1976; Wang & Ramdas 2023, "Anytime-valid t-tests and
confidence sequences for Gaussian means with unknown variance"): for the
per-round log ratios x_1..x_n, the likelihood ratio of a mean mu + theta
sigma against mu, with theta ~ N(0, MIXTURE) and sigma mixed out with the
scale-invariant (right Haar) prior, is

    M_n(mu) = (1 + n tau2) ** -1/2 * (1 - tau2 / (1 + n tau2) * S**2 / V) ** -n/2

where S and V are the sum and the sum of squares of x_i - mu. It is a
nonnegative martingale with M_1 = 1 when mu is the true mean (in the data's
scale-invariant filtration), so by Ville's inequality the set of mu where
M_n(mu) < 1/alpha misses the true mean at some n with probability at most
alpha. Since S**2 / V = n T**2 / (n - 1 + T**2) for Student's T of mu, that
set is the mean +- critical(n) * s / sqrt(n): a t interval whose critical
value holds for every n at once. It is unbounded for the first rounds (at
95%: up to 2), about 1.8 times as wide as a fixed-n t interval at 20
rounds, and it does not depend on the spread's scale, so a row whose ratio is
settled to 0.1% is decided at round 3 as surely as one settled to 10%.

Its guarantee assumes Gaussian rounds; rounds with heavier tails, or whose
spread changes in regimes, make it more conservative still (see
research.simulation, which drives this code and the verdicts with known
truths).
"""

import functools
import math

from concbench.rules import ALPHA
# tau2, the prior variance of the effect in units of the rounds' spread,
# chosen for where a run decides: a default run's budget gives a row 3 to 8
# rounds, and paired rounds spread by 1-10%, so the effects it looks for (5%
# to 2x) are 1 to 20 spreads. With 10 the sequence is bounded from round 3
# and narrowest over rounds 3 to 6 (critical value 13.2 at 3, 6.5 at 4, 4.9
# at 6; 2 gives none at 3, 12.1 at 4, 4.8 at 6) and 8% wider than with 2 at
# 20 rounds.
MIXTURE = 10.0


@functools.lru_cache(maxsize=4096)
def critical(n, alpha=ALPHA):
    """The half-width of the (1 - alpha) confidence sequence at ``n``
    rounds, in units of s / sqrt(n) (s: the sample standard deviation);
    infinite while the sequence is unbounded."""
    if n < 2:
        return math.inf
    grown = 1.0 + n * MIXTURE
    q = (1.0 - (alpha * alpha / grown) ** (1.0 / n)) * grown / MIXTURE
    if q >= n:
        return math.inf
    return math.sqrt(q * (n - 1) / (n - q))


def first_bounded(alpha=ALPHA):
    """The fewest rounds at which the sequence is bounded."""
    n = 2
    while math.isinf(critical(n, alpha)):
        n += 1
    return n


def half_width(n, spread, alpha=ALPHA):
    """critical(n) * spread / sqrt(n): the sequence's half-width around the
    mean of ``n`` values of standard deviation ``spread`` (infinite while
    unbounded)."""
    c = critical(n, alpha)
    if math.isinf(c):
        return math.inf
    return c * spread / math.sqrt(n)


def martingale(n, mean, spread, mu=0.0):
    """M_n(mu) above, from the rounds' count, mean and standard deviation:
    the evidence against a true mean of ``mu`` (the sequence excludes mu
    exactly when it reaches 1/alpha)."""
    if n < 2:
        return 1.0
    squares = (n - 1) * spread * spread + n * (mean - mu) ** 2
    if squares == 0:
        return math.inf if mean != mu else 1.0
    total = n * (mean - mu)
    shrink = MIXTURE / (1.0 + n * MIXTURE)
    remaining = 1.0 - shrink * total * total / squares
    if remaining <= 0:
        return math.inf
    return (1.0 + n * MIXTURE) ** -0.5 * remaining ** (-n / 2.0)


def least_rounds(room, spread, alpha=ALPHA, least=2, most=200):
    """The fewest rounds n (from ``least``) at which the sequence's
    half-width on values of standard deviation ``spread`` is below
    ``room``; ``most`` when none up to it is (c(n) / sqrt(n) falls with n,
    so a bisection finds it)."""
    if half_width(most - 1, spread, alpha) >= room:
        return most
    low, high = max(least, first_bounded(alpha)), most - 1
    if half_width(low, spread, alpha) < room:
        return max(least, low)
    while high - low > 1:
        middle = (low + high) // 2
        if half_width(middle, spread, alpha) < room:
            high = middle
        else:
            low = middle
    return high
