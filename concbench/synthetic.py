"""The synthetic runs that ``concbench.simulation`` drives through the
project's own code: rows of known truth, and the noise of their rounds.

The rows: the reference, its A/A control and a second row of no difference
(1.00x), a row of 1.08x, one of 0.80x, and a series threads-2/4/8 at 1.60x,
2.00x and 1.90x (the fastest, and the best count, is threads-4). Kinds of
noise, on the rounds (each worker's unit), scaled to a spread ``sd``:

- ``gaussian``: independent;
- ``regimes``: the machine's busy periods, persisting about 7 rounds, in
  which every row's rounds spread twice as much, and half of them jump by
  1.2 sd either way (one side of the pair ran in a slow moment);
- ``drift``, a stress case beyond the guarantee: the same busy periods,
  but each row's rounds jump the same way all through a period (a bias
  that favours one side for 7 rounds at a time, so that 20 rounds hold 2
  or 3 independent ones); the rounds' widening for neighbours that
  resemble each other cannot see it in so few;
- ``ar1``: each row's rounds follow an AR(1) process (rho 0.3);
- ``skewed``: rows paired by round (IO), one value per benchmark and round,
  each benchmark's log time skewed to the slow side (an exponential).

Rows paired in their worker add the pairs' own noise: a spread of 0.1 and,
in one pair of five, a jump of 0.5 of either sign (a change of the
machine's speed between the two batches). A close race or step between
two of them runs, as in bench.py, as the two in one worker of their own
(``concbench.run.races``), several workers in a round, each simulated with
a row's noise drawn on its own, one after the other (an AR(1) or a drift
carries from one to the next): the simulation checks the answers' errors
when both sources are read, not how much sooner that pairing answers.
"""

import math

from concbench import schema as K
from concbench.analysis.pairs import settle, units
from concbench.schema import BY_ROUND, IN_WORKER, NONE

NOISES = ("gaussian", "regimes", "ar1", "skewed", "drift")
TRUTHS = (("sequential", 1.0), ("control", 1.0), ("null", 1.0), ("near", 1.08),
          ("slow", 0.80), ("threads-2", 1.60), ("threads-4", 2.00), ("threads-8", 1.90))
FASTEST = "threads-4"
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
        # Comparisons in one worker with another row (``race``), and
        # whether the run makes them (rows paired in their worker).
        self.races, self.one_worker_races = {}, pairing == IN_WORKER
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
        return rng.gauss(0.0, sd)


def world(kind):
    paired = kind != "skewed"
    rows = [SimRow(name, truth, position, NONE if name == "sequential" else
                   IN_WORKER if paired else BY_ROUND)
            for position, (name, truth) in enumerate(TRUTHS)]
    return {row.name: row for row in rows}


def race(rows, name):
    """The comparison ``w/<a> vs <b>`` of two rows in one worker, made on
    its first round: a row paired in its worker whose truth is b's time
    over a's (as a speedup is the reference's over the model's)."""
    if name not in rows:
        first, _, second = name.partition(" vs ")
        one, other = rows[first], rows["w/" + second]
        found = SimRow(name[2:], one.truth / other.truth, len(rows), IN_WORKER)
        found.name, found.model, found.against = name, one.model, other
        rows[name] = found
    return rows[name]


def run_round(rows, names, number, noise, pairs, rng, workers=None):
    """Round ``number`` of the benchmarks ``names``: rows paired in their
    worker get ``pairs[name]`` pairs, rows paired by round one value; a
    race's comparison in one worker ``workers[name]`` workers, one after
    the other, each a unit (keyed round, worker) with noise of its own."""
    noise.next_round()
    for name in names:
        if " vs " in name:
            row = race(rows, name)
            for worker in range(workers.get(name, 1)):
                row.groups[number, worker] = paired_group(row, noise.draw(name), 3, rng)
            continue
        row = rows[name]
        shift = noise.draw(name)
        if row.pairing == IN_WORKER:
            row.groups[number] = paired_group(row, shift, pairs.get(name, 3), rng)
        else:
            row.by_round[number] = math.exp(-math.log(row.truth) + shift)


def paired_group(row, shift, count, rng):
    """One worker's pairs: log ratios around the truth, each with the
    pairs' own noise and, now and then, a jump."""
    group = []
    for _ in range(count):
        jump = rng.choice((-JUMP, JUMP)) if rng.random() < JUMPS else 0.0
        group.append(math.log(row.truth) + shift + rng.gauss(0.0, PAIR_SPREAD) + jump)
    return group


def settle_all(rows):
    reference = rows["w/sequential"]
    for row in rows.values():
        if row.pairing == IN_WORKER:
            row.paired_logs, row.within_floor = units(row.groups)
        against = getattr(row, "against", None)
        settle(row, against or reference)
        if against is not None:
            rows["w/" + row.model].races[against.model] = row
    groups = {"w": [r for r in rows.values()
                    if r.model != "control" and getattr(r, "against", None) is None]}
    return groups, {"w": rows["w/control"]}
