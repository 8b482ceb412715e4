"""How often a run's answers err, on synthetic runs whose truth is known.

A simulated run has the rows of one workload, each with a known true
speedup, and goes the way bench.py goes: two rounds of every benchmark,
then rounds of what the open questions need until every question is
answered, the budget is spent or MOST_ROUNDS have run. Every step is the project's own code:
each row is settled as the report settles it (``concbench.analysis.pairs.settle``: a
worker's unit is the median of its pairs, the floor comes from their
spread), the questions are the report's (``questions.all_questions``: the
rows' verdicts, the fastest model, the best worker count, where more
workers stopped helping), what runs next is the allocation's
(``allocation.choose``, the A/A control joining as in bench.py, each
worker's pairs from ``calibration.values_for``), and the answer read at
the end is the takeaways' (``race.Race``).

The rows: the reference, its A/A control and a second row of no difference
(1.00x), a row of 1.08x, one of 0.80x, and a series threads-2/4/8 at 1.60x,
2.00x and 1.90x (the fastest, and the best count, is threads-4). Kinds of
noise, on the rounds (each worker's unit), scaled to a spread ``sd``:

- ``gaussian``: independent;
- ``regimes``: the machine's busy periods, persisting about 7 rounds, in
  which every row's rounds spread twice as much, and half of them jump by
  1.2 sd either way (one side of the pair ran in a slow moment);
- ``drift``: the same busy periods, but each row's rounds jump the same
  way all through a period (a bias that favours one side for 7 rounds at
  a time, so that 20 rounds hold 2 or 3 independent ones); the rounds'
  own widening for neighbours that resemble each other cannot see it in
  so few, and a verdict's widening fixed in advance
  (``stats.VERDICT_WIDENING``) is what holds it;
- ``ar1``: each row's rounds follow an AR(1) process (rho 0.3);
- ``skewed``: rows paired by round (IO), one value per benchmark and round,
  each benchmark's log time skewed to the slow side (an exponential);
- ``skew-reference``: the same, but only the reference's time is skewed
  (an IO reference's batch runs 10-80 times as long as a model's and
  meets the machine's slow moments, which a model's short batch mostly
  misses), the others' spread by a third of ``sd``: a skew that does not
  cancel in the ratio;
- ``pairs``: no noise between workers at all, and the pairs inside a
  worker spreading by ``sd`` with no jumps (this machine's noisy days:
  pairs spread 0.12, worker medians 0.067, docs/figures.md).

Rows paired in their worker add the pairs' own noise: a spread of 0.1 and,
in one pair of five, a jump of 0.5 of either sign (a change of the
machine's speed between the two batches).

    python -m concbench.simulation [--trials N] [--seed N]
"""

import argparse
import math
import os
import random
import sys

from concbench import schema as K
from concbench.run.allocation import choose, demands, with_controls
from concbench.run.calibration import values_for
from concbench.run.costs import Figures, pooled_between
from concbench.analysis.questions import all_questions
from concbench.analysis.race import Race
from concbench.analysis.pairs import settle, units
from concbench.schema import BY_ROUND, IN_WORKER, NONE

NOISES = ("gaussian", "regimes", "ar1", "skewed", "drift", "skew-reference", "pairs")
BY_ROUND_NOISES = ("skewed", "skew-reference")
SPREADS = (0.03, 0.15)
TRUTHS = (("sequential", 1.0), ("control", 1.0), ("null", 1.0), ("near", 1.08),
          ("slow", 0.80), ("threads-2", 1.60), ("threads-4", 2.00), ("threads-8", 1.90))
FASTEST = "threads-4"
BUDGET_S = 400.0
# Rounds a simulated run stops at, whatever is left of its budget.
MOST_ROUNDS = 20
OVERHEAD_S, PAIR_S, VALUE_S = 1.0, 0.5, 0.1
PAIR_SPREAD, JUMP, JUMPS = 0.1, 0.5, 0.2


class SimRow:
    """A row as ``concbench.analysis.questions`` reads it, fed with synthetic rounds."""

    ours = True

    def __init__(self, name, truth, position, pairing):
        self.model, self.truth, self.position = name, truth, position
        self.name, self.workload = "w/" + name, "w"
        self.pairing = pairing
        self.meta = {K.REFERENCE_MODEL: "sequential", K.PARALLELISM: 1}
        family, _, count = name.partition("-")
        if count.isdigit():     # a series of worker counts: threads-2, -4, -8
            self.meta.update({K.SCALING: family, K.SCALING_UNIT: family.rstrip("s"),
                              K.PARALLELISM: int(count)})
        self.groups, self.by_round = {}, {}
        self.ratio = self.reference = self.verdict = None
        self.speedup, self.mean, self._speedups = None, 1.0, {}
        self.paired_logs, self.within_floor = {}, None

    def speedups(self):
        return None if self is self.reference else self._speedups

    def round_ratios(self):
        return self.ratio.values if self.ratio else []

    def workers(self):
        return self.meta[K.PARALLELISM]


class Noise:
    """Each row's per-round noise, of one kind, for one simulated run."""

    def __init__(self, kind, sd, rng):
        self.kind, self.sd, self.rng = kind, sd, rng
        self.busy, self.signs, self.last = False, {}, {}

    def next_round(self):
        if self.rng.random() < 0.15:
            self.busy, self.signs = not self.busy, {}

    def draw(self, name):
        rng, sd = self.rng, self.sd
        if self.kind in ("regimes", "drift"):
            if not self.busy:
                return rng.gauss(0.0, 0.5 * sd)
            if self.kind == "drift":
                jump = self.signs.setdefault(name, rng.choice((-1.2, 1.2)))
            else:
                jump = 0.0 if rng.random() < 0.5 else rng.choice((-1.2, 1.2))
            return rng.gauss(0.0, sd) + jump * sd
        if self.kind == "ar1":
            value = 0.3 * self.last.get(name, 0.0) + math.sqrt(1 - 0.09) * rng.gauss(0.0, sd)
            self.last[name] = value
            return value
        if self.kind == "skewed":
            return sd * (rng.expovariate(1.0) - 1.0)
        if self.kind == "skew-reference":
            if name == "w/sequential":
                return sd * (rng.expovariate(1.0) - 1.0)
            return rng.gauss(0.0, sd / 3)
        if self.kind == "pairs":
            return 0.0
        return rng.gauss(0.0, sd)


def world(kind):
    paired = kind not in BY_ROUND_NOISES
    rows = [SimRow(name, truth, position, NONE if name == "sequential" else
                   IN_WORKER if paired else BY_ROUND)
            for position, (name, truth) in enumerate(TRUTHS)]
    return {row.name: row for row in rows}


def run_round(rows, names, number, noise, pairs, rng):
    """Round ``number`` of the benchmarks ``names``: rows paired in their
    worker get ``pairs[name]`` pairs, rows paired by round one value."""
    noise.next_round()
    for name in names:
        row = rows[name]
        shift = noise.draw(name)
        if row.pairing == IN_WORKER:
            group = []
            spread, jumps = ((noise.sd, 0.0) if noise.kind == "pairs"
                             else (PAIR_SPREAD, JUMPS))
            for _ in range(pairs.get(name, 3)):
                jump = rng.choice((-JUMP, JUMP)) if rng.random() < jumps else 0.0
                group.append(math.log(row.truth) + shift + rng.gauss(0.0, spread) + jump)
            row.groups[number] = group
        else:
            row.by_round[number] = math.exp(-math.log(row.truth) + shift)


def settle_all(rows):
    reference = rows["w/sequential"]
    for row in rows.values():
        if row.pairing == IN_WORKER:
            row.paired_logs, row.within_floor = units(row.groups)
        settle(row, reference)
    groups = {"w": [r for r in rows.values() if r.model != "control"]}
    return groups, {"w": rows["w/control"]}


def sizes(rows, questions, remaining):
    """Pairs for each paired row's next worker, as bench.py sizes them
    (``calibration``), for the rows an open question needs."""
    figures = {name: Figures(True, row.groups.values(), [PAIR_S] * len(row.groups),
                             OVERHEAD_S)
               for name, row in rows.items() if row.pairing == IN_WORKER}
    between = pooled_between(figures.values())
    wanted = demands(questions)
    horizon = remaining / max(1, len(wanted))
    return {name: values_for(figures[name], between, demand, horizon)
            for name, demand in wanted.items() if name in figures}


def simulate(kind, sd, rng, budget=BUDGET_S):
    """One simulated run: (the null row's verdict, the 1.08x row's, whether
    the fastest answer is right: it names the true fastest, and once
    answered its leader is within 5% of it; rounds, answered)."""
    rows = world(kind)
    noise = Noise(kind, sd, rng)
    for number in range(2):
        run_round(rows, list(rows), number, noise, {}, rng)
    spent, number = 0.0, 2
    while number < MOST_ROUNDS:
        groups, controls = settle_all(rows)
        questions = all_questions(groups, controls)
        still = [q for q in questions if not q.answered]
        if not still:
            break
        pairs = sizes(rows, questions, budget - spent)

        def cost(name):
            row = rows[name]
            if row.pairing == IN_WORKER:
                return OVERHEAD_S + pairs.get(name, 3) * PAIR_S
            return OVERHEAD_S + (VALUE_S if row.model != "sequential" else 10 * VALUE_S)
        chosen, names, used = choose(still, cost, budget - spent,
                                     lambda found: with_controls(found, groups, controls))
        if not chosen:
            break
        run_round(rows, sorted(names), number, noise, pairs, rng)
        spent += used
        number += 1
    groups, controls = settle_all(rows)
    race = Race(groups["w"])
    # The answer is right when it names the true fastest and, once
    # answered, its leader is within 5% of it (an epsilon-good answer).
    best = rows["w/" + FASTEST].truth
    right = FASTEST in {row.model for row in race.named()} and not (
        race.answered and race.leader.truth * 1.05 < best)
    return (rows["w/null"].verdict, rows["w/near"].verdict, right,
            number, not any(not q.answered for q in all_questions(groups, controls)))


def _runs(task):
    kind, sd, count, seed, budget = task
    rng = random.Random(seed)
    return [simulate(kind, sd, rng, budget) for _ in range(count)]


def error_rates(trials, seed, noises=NOISES, spreads=SPREADS, budget=BUDGET_S,
                processes=1):
    """{(noise, sd): (a true 1.00x called faster or slower, a true 1.08x
    called the same, "fastest" wrong (the true fastest left out, or answered
    with a leader more than 5% slower), the share of
    runs that answered every question, the median rounds)}; each cell's
    runs split over ``processes`` processes (each with a seed of its own,
    so that the figures do not depend on how many)."""
    cells = [(kind, sd) for kind in noises for sd in spreads]
    chunks = max(1, processes)
    tasks = [(kind, sd, trials // chunks + (part < trials % chunks),
              "%d/%s/%g/%d" % (seed, kind, sd, part), budget)
             for kind, sd in cells for part in range(chunks)]
    if processes > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(processes) as pool:
            done = pool.map(_runs, tasks)
    else:
        done = [_runs(task) for task in tasks]
    found = {}
    for position, (kind, sd) in enumerate(cells):
        runs = [run for part in done[position * chunks:(position + 1) * chunks]
                for run in part]
        found[kind, sd] = (
            sum(null in ("faster", "slower") for null, *_ in runs) / len(runs),
            sum(near == "same" for _, near, *_ in runs) / len(runs),
            sum(not named for _, _, named, _, _ in runs) / len(runs),
            sum(done for *_, done in runs) / len(runs),
            sorted(rounds for *_, rounds, _ in runs)[len(runs) // 2])
    return found


def report(trials, seed, out=sys.stdout, processes=1):
    print("Simulated runs, %d per cell, each driven by bench.py's own rows, questions "
          "and allocation within %g s (seed %d):" % (trials, BUDGET_S, seed), file=out)
    print("  noise     sd     1.00x faster/slower  1.08x same     fastest wrong  "
          "all answered  median rounds", file=out)
    for (kind, sd), (null, near, left, done, rounds) in error_rates(
            trials, seed, processes=processes).items():
        print("  %-8s  %-5g  %19.1f%%  %9.1f%%  %15.1f%%  %11.1f%%  %13d" % (
            kind, sd, 100 * null, 100 * near, 100 * left, 100 * done, rounds), file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m concbench.simulation",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=3000,
                        help="runs per cell (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="processes to share the runs (default: one per CPU)")
    args = parser.parse_args(argv)
    if args.trials < 10:
        parser.error("--trials: at least 10")
    report(args.trials, args.seed, processes=args.processes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
