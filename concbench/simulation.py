"""How often the verdicts err, on synthetic rounds whose truth is known.

A row's per-round log speedups are drawn with a known true speedup and a
known spread, and read after every round exactly as bench.py reads a real
row: ``stats.sequence_ratio`` makes its interval, ``adaptive.is_open``
decides whether it needs another round, and ``stats.verdict`` names what it
says. A row stops at its first decision, or after LOOKS rounds (where a
run's budget would end it). A run stopped by a user earlier reports what it
had, so counting the first decision counts every way a run can stop.

Three kinds of noise, each scaled to a standard deviation of about ``sd``:
``gaussian``; ``heavy``, Student's t with 3 degrees of freedom (outliers of
5 sd and more); ``regimes``, the machine's two speeds: a calm state
(spread 0.4 sd) and a busy one (spread sd, plus a jump of 1.2 sd of either
sign in half its rounds, when one of the pair ran in a slow period), each
lasting about 7 rounds.

    python -m concbench.simulation [--trials N] [--seed N]

prints the share of runs that call a true 1.00x faster or slower, the share
that call a true 1.08x the same, and the rounds needed to decide 0.8x, 1.25x
and 2x, beside what a Student interval with a number of rounds fixed in
advance needs (and the share that the same Student interval, looked at after
every round, calls a true 1.00x faster or slower: the rule this replaces).
"""

import argparse
import math
import random
import sys

from concbench.adaptive import is_open
from concbench.stats import sequence_ratio, t_critical_95, verdict

LOOKS = 200
SPREADS = (0.01, 0.03, 0.1, 0.3, 0.5)
NOISES = ("gaussian", "heavy", "regimes")
DECIDE = (0.8, 1.25, 2.0)


def noise(kind, sd, rng):
    """An endless source of per-round noise of kind ``kind``."""
    if kind == "gaussian":
        while True:
            yield rng.gauss(0.0, sd)
    if kind == "heavy":
        scale = sd / math.sqrt(3.0)     # t(3) has variance 3
        while True:
            chi2 = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
            yield scale * rng.gauss(0.0, 1.0) / math.sqrt(chi2 / 3.0)
    if kind == "regimes":
        busy = rng.random() < 0.5
        while True:
            if rng.random() < 0.15:
                busy = not busy
            if not busy:
                yield rng.gauss(0.0, 0.4 * sd)
            else:
                jump = 0.0 if rng.random() < 0.5 else rng.choice((-1.2, 1.2)) * sd
                yield rng.gauss(0.0, sd) + jump
    raise ValueError("unknown noise %r" % kind)


class Moments:
    """Count, mean and standard deviation of the rounds so far (Welford)."""

    def __init__(self):
        self.count, self.mean, self.squares = 0, 0.0, 0.0

    def add(self, x):
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.squares += delta * (x - self.mean)
        return self.count

    @property
    def sd(self):
        return math.sqrt(self.squares / (self.count - 1))


def first_decision(truth, source, looks=LOOKS):
    """(verdict, rounds) of one row read after every round: its first
    decision, or what it says after ``looks`` rounds."""
    shift = math.log(truth)
    rounds, ratio = Moments(), None
    for _ in range(looks):
        if rounds.add(shift + next(source)) < 2:
            continue
        ratio = sequence_ratio(rounds.count, rounds.mean, rounds.sd)
        if not is_open(ratio):
            return verdict(ratio), rounds.count
    return verdict(ratio), looks


def student_half(rounds):
    """The half-width of a Student 95% interval on the rounds so far."""
    return t_critical_95(rounds.count - 1) * rounds.sd / math.sqrt(rounds.count)


def naive_decision(source, looks=LOOKS):
    """Whether a Student interval looked at after every round calls a true
    1.00x faster or slower (the rule before confidence sequences)."""
    rounds = Moments()
    band = math.log(1.05)
    for _ in range(looks):
        if rounds.add(next(source)) < 2:
            continue
        half = student_half(rounds)
        if abs(rounds.mean) > half:
            return True
        if -band <= rounds.mean - half and rounds.mean + half <= band:
            return False
    return False


def error_rates(trials, seed, looks=LOOKS, spreads=SPREADS, noises=NOISES):
    """{(noise, sd): (false faster or slower at 1.00, false same at 1.08,
    the old rule's false faster or slower at 1.00)}, shares of ``trials``."""
    found = {}
    for kind in noises:
        for sd in spreads:
            rng = random.Random("%d/%s/%g" % (seed, kind, sd))
            wrong = same = naive = 0
            for _ in range(trials):
                said, _ = first_decision(1.0, noise(kind, sd, rng), looks)
                wrong += said in ("faster", "slower")
                said, _ = first_decision(1.08, noise(kind, sd, rng), looks)
                same += said == "same"
                naive += naive_decision(noise(kind, sd, rng), looks)
            found[kind, sd] = (wrong / trials, same / trials, naive / trials)
    return found


def fixed_rounds(truth, sd, trials, rng, share=0.9, most=LOOKS):
    """The fewest rounds, fixed in advance, at which a Student 95% interval
    calls a ``truth`` (Gaussian noise) the right way in ``share`` of runs
    (each n's share is read on the first n rounds of the same runs)."""
    shift = math.log(truth)
    hits = [0] * (most + 1)
    for _ in range(trials):
        rounds = Moments()
        for n in range(1, most + 1):
            if rounds.add(shift + rng.gauss(0.0, sd)) >= 2:
                half = student_half(rounds)
                hits[n] += (rounds.mean - half > 0) if truth > 1 else (rounds.mean + half < 0)
    return next((n for n in range(2, most + 1) if hits[n] >= share * trials), None)


def rounds_to_decide(trials, seed, truths=DECIDE, spreads=SPREADS, looks=LOOKS):
    """{(truth, sd): (median rounds, 90th percentile rounds, share decided
    the right way, fixed rounds for 90%)} with Gaussian noise."""
    found = {}
    for truth in truths:
        for sd in spreads:
            rng = random.Random("%d/decide/%g/%g" % (seed, truth, sd))
            runs = [first_decision(truth, noise("gaussian", sd, rng), looks)
                    for _ in range(trials)]
            right = "faster" if truth > 1 else "slower"
            taken = sorted(rounds for _, rounds in runs)
            found[truth, sd] = (
                taken[len(taken) // 2], taken[int(0.9 * len(taken))],
                sum(1 for said, _ in runs if said == right) / trials,
                fixed_rounds(truth, sd, max(200, trials // 5), rng))
    return found


def report(trials, seed, out=sys.stdout):
    print("False decisions, %d runs per cell, each read after every round, up to "
          "%d rounds (seed %d):" % (trials, LOOKS, seed), file=out)
    print("  noise     sd    1.00x called faster/slower   1.08x called same   "
          "(Student interval looked at every round: 1.00x faster/slower)", file=out)
    for (kind, sd), (wrong, same, naive) in error_rates(trials, seed).items():
        print("  %-8s  %-4g  %26.1f%%  %18.1f%%   %8.1f%%" % (
            kind, sd, 100 * wrong, 100 * same, 100 * naive), file=out)
    print("Rounds to decide (Gaussian noise; median / 90th percentile; share "
          "decided the right way by round %d; a fixed-n Student interval's n for "
          "90%%):" % LOOKS, file=out)
    for (truth, sd), (median, p90, right, fixed) in rounds_to_decide(
            max(100, trials // 4), seed).items():
        print("  %.2fx  sd %-4g  %3d / %3d rounds  %5.1f%%  fixed n: %s" % (
            truth, sd, median, p90, 100 * right,
            fixed if fixed is not None else "> %d" % LOOKS), file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m concbench.simulation",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=4000,
                        help="runs per cell (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.trials < 10:
        parser.error("--trials: at least 10")
    report(args.trials, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
