"""The verdicts keep their 95% however often they are read.

The interval is a confidence sequence (concbench.anytime); these tests check
its closed form against the mixture it comes from, and drive the verdict and
stopping code with synthetic rounds of known truth (concbench.simulation):
Gaussian, heavy-tailed and regime-switching noise, spreads 0.01 to 0.5, up
to 200 looks.
"""

import math
import random
import statistics

import pytest

from concbench import anytime
from concbench.adaptive import is_open
from concbench.simulation import (LOOKS, error_rates, first_decision, noise,
                                  rounds_to_decide)
from concbench.report.pairs import in_worker
from concbench.stats import (paired_ratio, ratio_of, sequence_ratio, t_critical_95,
                             verdict, within_floor)

# Runs per cell of the simulation below, and its Monte Carlo margin: with a
# true error rate of exactly 5%, a share over 600 runs exceeds 5% + 2.33
# standard errors (7.1%) in 1% of cells.
TRIALS = 600
MARGIN = 2.33 * math.sqrt(0.05 * 0.95 / TRIALS)


def test_the_critical_value_is_where_the_mixture_reaches_one_over_alpha():
    for n in (4, 5, 8, 13, 40, 200):
        c = anytime.critical(n)
        spread = 0.3
        at = anytime.martingale(n, c * spread / math.sqrt(n), spread)
        assert at == pytest.approx(1 / anytime.ALPHA, rel=1e-6), n
        inside = anytime.martingale(n, 0.99 * c * spread / math.sqrt(n), spread)
        assert inside < 1 / anytime.ALPHA


def test_the_martingale_is_the_mixture_it_claims():
    """M_n, by numerical integration: N(0, tau2) over the effect in units of
    sigma, dsigma/sigma over the scale, against the null's dsigma/sigma."""
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    for n, shift in ((4, 0.3), (7, 0.05), (12, -0.2)):
        xs = np.array([shift + rng.gauss(0, 0.2) for _ in range(n)])
        sigmas = np.exp(np.linspace(math.log(1e-3), math.log(30.0), 4000))
        thetas = np.linspace(-12, 12, 4001) * math.sqrt(anytime.MIXTURE)
        prior = np.exp(-thetas ** 2 / (2 * anytime.MIXTURE)) / math.sqrt(
            2 * math.pi * anytime.MIXTURE)

        def log_likelihood(means, sigma):
            return (-0.5 * ((xs[None, :] - means[:, None]) ** 2).sum(axis=1) / sigma ** 2
                    - n * math.log(sigma))
        mixed, null = [], []
        for sigma in sigmas:
            mixed.append(np.trapezoid(np.exp(log_likelihood(thetas * sigma, sigma))
                                      * prior, thetas))
            null.append(math.exp(log_likelihood(np.zeros(1), sigma)[0]))
        # dsigma/sigma on a log grid is d(log sigma).
        logs = np.log(sigmas)
        ratio = np.trapezoid(mixed, logs) / np.trapezoid(null, logs)
        mean, spread = float(xs.mean()), float(xs.std(ddof=1))
        assert anytime.martingale(n, mean, spread) == pytest.approx(ratio, rel=1e-3)


def test_unbounded_for_two_rounds_then_wider_than_a_fixed_interval():
    assert anytime.first_bounded() == 3
    assert math.isinf(anytime.critical(2)) and math.isfinite(anytime.critical(3))
    # At 20 rounds the sequence is 1.5 to 1.9 times as wide as Student's.
    assert 1.5 < anytime.critical(20) / t_critical_95(19) < 1.9
    # A stricter level is wider; a Bonferroni share of it too.
    assert anytime.critical(20, anytime.ALPHA / 10) > anytime.critical(20)
    # No interval while unbounded: the row is undecided, however clear.
    ratio = sequence_ratio(2, math.log(5.0), 0.001)
    assert ratio.low is None and verdict(ratio) == "undecided" and is_open(ratio)
    assert verdict(sequence_ratio(3, math.log(5.0), 0.001)) == "faster"


def test_paired_ratio_carries_the_sequence_and_the_log_spread():
    reference = {r: 1.0 for r in range(10)}
    model = {r: 0.5 * (1.1 if r % 2 else 0.9) for r in range(10)}
    ratio = paired_ratio(reference, model)
    logs = [math.log(reference[r] / model[r]) for r in range(10)]
    mean = sum(logs) / 10
    spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / 9)
    assert ratio.log_sd == pytest.approx(spread)
    assert ratio.low == pytest.approx(math.exp(mean - anytime.half_width(10, spread)))
    assert ratio.rounds == 10 and ratio.above == 10
    # Bonferroni: the same rounds at a stricter level give a wider interval.
    strict = paired_ratio(reference, model, anytime.ALPHA / 5)
    assert strict.low < ratio.low and strict.high > ratio.high


# The rotate A/A control of one default run: three rounds of three pairs
# each (log(reference / own) per pair), whose medians agreed to 0.0005.
CHANCE_ROUNDS = [[0.0031, 0.0053, 0.0140], [0.0082, 0.0012, 0.0056],
                 [-0.0037, 0.0057, 0.0253]]


def test_rounds_that_agree_by_chance_do_not_decide_on_their_own():
    medians = {r: math.exp(sorted(g)[1]) for r, g in enumerate(CHANCE_ROUNDS)}
    # On the rounds alone, the sequence called the control faster at round 3.
    assert verdict(ratio_of(medians)) == "faster"
    floor = within_floor(CHANCE_ROUNDS)
    expected = math.sqrt(sum(statistics.variance(g) / 3 for g in CHANCE_ROUNDS) / 3)
    assert floor == pytest.approx(expected)
    held = ratio_of(medians, floor=floor)
    assert held.log_sd == pytest.approx(floor)
    assert held.low < 1.0 < held.high and verdict(held) != "faster"
    # The floor only ever widens: rounds that spread more than their pairs
    # keep their own interval.
    spread = {0: 1.3, 1: 1.5, 2: 1.1, 3: 1.4}
    assert ratio_of(spread, floor=0.01).low == ratio_of(spread).low
    assert within_floor([[0.1]]) is None


def test_a_row_paired_in_its_worker_takes_the_floor_from_its_pairs():
    import pyperf

    timed = []
    for number, group in enumerate(CHANCE_ROUNDS):
        own = [0.2] * len(group)
        meta = {"round": number, "pair_gap_s": 0.15,
                "paired_reference_s": " ".join(repr(0.2 * math.exp(x)) for x in group)}
        timed.append((pyperf.Run(own, metadata={"name": "w/m"},
                                 collect_metadata=False), meta))
    logs, gaps, _, floor = in_worker("worker", timed)
    assert sorted(logs) == [0, 1, 2] and set(gaps.values()) == {0.15}
    assert floor == pytest.approx(within_floor(CHANCE_ROUNDS), rel=1e-6)
    assert in_worker("round", timed)[3] is None


def test_no_verdict_errs_more_than_five_percent_whenever_it_is_read():
    """The simulation drives sequence_ratio, is_open and verdict, as bench.py
    does after every round: at a true 1.00x no noise and spread makes more
    than 5% of runs read faster or slower, and a true 1.08x reads the same
    in at most 5%. The rule it replaces (a Student interval read after every
    round) fails the same check, so the check can fail."""
    rates = error_rates(TRIALS, seed=2026)
    assert len(rates) == 15
    for (kind, sd), (wrong, same, naive) in rates.items():
        assert wrong <= 0.05 + MARGIN, (kind, sd, wrong)
        assert same <= 0.05 + MARGIN, (kind, sd, same)
    assert max(naive for _, _, naive in rates.values()) > 0.25


def test_rounds_to_decide_are_reported_and_decide_the_right_way():
    found = rounds_to_decide(150, seed=2026, spreads=(0.03, 0.1, 0.3))
    lines = []
    for (truth, sd), (median, p90, right, fixed) in found.items():
        lines.append("%.2fx sd %g: median %d, 90%% by %d, right %.0f%%, fixed n %s"
                     % (truth, sd, median, p90, 100 * right, fixed))
        assert median >= anytime.first_bounded()
        assert right >= 0.95, lines[-1]
        # Valid at any round costs rounds over a fixed plan's, not orders of
        # magnitude.
        assert p90 <= 3 * fixed + 4, lines[-1]
    print("\n".join(lines))


def test_one_rows_reading_stops_at_its_first_decision():
    rng = random.Random(3)
    said, rounds = first_decision(2.0, noise("gaussian", 0.01, rng))
    assert said == "faster" and rounds == anytime.first_bounded()
    said, rounds = first_decision(1.0, noise("gaussian", 0.5, rng), looks=30)
    assert said == "undecided" and rounds == 30
    assert LOOKS == 200
