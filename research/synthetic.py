"""The synthetic runs the simulation (``research.simulation``) drives
through bench.py's own decision path: rows of known truth, and noise of
the kinds measured on this machine.

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
  so few, and the widening fixed in advance
  (``stats.ROUND_WIDENING``) is what holds it;
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
  pairs spread 0.12, worker medians 0.067: `git show 3613cc8:docs/history.md`, "A noisy
  morning").

Rows paired in their worker add the pairs' own noise: a spread of 0.1 and,
in one pair of five, a jump of 0.5 of either sign (a change of the
machine's speed between the two batches).
"""

import argparse
import math
import os

from concbench import schema as K
from concbench.rules import ALPHA, split
from concbench.analysis.pairs import SettledRow, settle, units
from concbench.analysis.race import Race
from concbench.schema import BY_ROUND, IN_WORKER, NONE, beside_of

NOISES = ("gaussian", "regimes", "ar1", "skewed", "drift", "skew-reference", "pairs")
BY_ROUND_NOISES = ("skewed", "skew-reference")
SPREADS = (0.03, 0.15)
TRUTHS = (("sequential", 1.0), ("control", 1.0), ("null", 1.0), ("near", 1.08),
          ("slow", 0.80), ("threads-2", 1.60), ("threads-4", 2.00), ("threads-8", 1.90))
FASTEST = "threads-4"
# Worlds of known truth, each (its rows' true speedups, the true fastest,
# the run's --precision): the rows above; a near tie at the top
# (threads-2/4/8 at 1.95x, 2.00x and 1.98x: any leader is within 5% of the
# best, so only leaving the fastest out is wrong); twelve rows as fast as
# the best (2.00x), so that every comparison a race makes is of a true
# 1.00 and any lower end above it is wrong, however the leader was picked;
# and the rows above run under --precision 5 (each row until it is decided
# and within +-5%, no race asked).
WORLDS = {
    "default": (TRUTHS, FASTEST, None),
    # The rows of ``default`` in each of five workloads, as a default run
    # has five, whose questions share one budget (the figures read the
    # first workload's): the allocation's choices between workloads.
    "five": (TRUTHS, FASTEST, None, 5),
    # And with eight rows more a workload (0.6x to 1.7x, none near the
    # fastest): 16 rows, as the wide preset's encode and rotate have (the
    # default's until it was cut to 7-9 models a workload).
    "five-wide": (TRUTHS + tuple(("x%d" % n, truth) for n, truth in enumerate(
        (0.6, 0.9, 1.1, 1.2, 1.3, 1.4, 1.5, 1.7))), FASTEST, None, 5),
    "near-tie": (TRUTHS[:5] + (("threads-2", 1.95), ("threads-4", 2.00),
                               ("threads-8", 1.98)), FASTEST, None),
    "tie": (TRUTHS[:4] + (("best", 2.00),) + tuple(("even%d" % n, 2.00) for n in range(12)),
            "best", None),
    "precise": (TRUTHS, FASTEST, 5.0),
}


def usl(count, sigma, kappa):
    """The Universal Scalability Law's speedup at ``count`` workers."""
    return count / (1 + sigma * (count - 1) + kappa * count * (count - 1))


# Machines of many CPUs, whose worker-count series follow known curves:
# (family, the one-worker rung's speedup against sequential, serial
# fraction, kappa). ``linear`` rises to the top (a process pool of
# shared-nothing work), ``peak`` peaks at 12 workers (sigma 0.02, kappa
# 0.98 / 144: contention on a shared resource), ``flat`` stays at one
# (threads on the GIL). Beyond the CPUs (2U, the ladder's last rung)
# workers share cores: the speedup at U, less OVERSUBSCRIBED's share (a
# fresh pool starts twice the workers; threads on the GIL switch more).
CURVES = (("linear", 0.97, 0.0, 0.0), ("peak", 0.97, 0.02, 0.98 / 144),
          ("flat", 0.95, 1.0, 0.0))
OVERSUBSCRIBED = {"linear": 0.90, "peak": 0.90, "flat": 0.95}


def curve_truths(cpus, kept):
    """The rows of a machine of ``cpus`` usable CPUs: the reference, its
    control and the rows of no difference, 1.08x and 0.80x, then every
    family of CURVES on the ladder's rungs that the preset ``kept``
    (``concbench.ladder.kept``: the default preset's U and 2U, the wide
    preset's every rung)."""
    from concbench.ladder import kept as kept_rungs

    rows = list(TRUTHS[:5])
    for family, one, sigma, kappa in CURVES:
        for count in kept_rungs(cpus, kept):
            speedup = one * usl(min(count, cpus), sigma, kappa)
            rows.append(("%s-%d" % (family, count),
                         speedup * (OVERSUBSCRIBED[family] if count > cpus else 1.0)))
    return tuple(rows)


def curve_facts(cpus):
    """{family: (true serial fraction, true peak or None)} of CURVES."""
    return {family: (sigma, math.sqrt((1 - sigma) / kappa) if kappa else None)
            for family, _, sigma, kappa in CURVES}


def _curve_worlds():
    """``cpus-16`` and ``cpus-64``: the default preset's rungs (U, 2U); and
    ``wide-16``, ``wide-64``: every rung, as the wide preset runs them, in
    its budget (WIDE_BUDGET_S), for the fits."""
    from concbench.ladder import ALL, DEFAULT

    for cpus in (16, 64):
        for name, kept in (("cpus", DEFAULT), ("wide", ALL)):
            rows = curve_truths(cpus, kept)
            WORLDS["%s-%d" % (name, cpus)] = (rows, max(rows, key=lambda row: row[1])[0],
                                              None)


_curve_worlds()

BUDGET_S = 400.0
# The wide preset's budget in the same measure: 1,200 s against the
# default's 510, as 400 stands for 510.
WIDE_BUDGET_S = 940.0
# Rounds a simulated run stops at, whatever is left of its budget.
MOST_ROUNDS = 20
OVERHEAD_S, PAIR_S, VALUE_S = 1.0, 0.5, 0.1
PAIR_SPREAD, JUMP, JUMPS = 0.1, 0.5, 0.2


class SimRow(SettledRow):
    """A row as ``concbench.analysis.questions`` reads it, fed with synthetic rounds."""

    ours = True

    def __init__(self, name, truth, position, pairing, workload="w"):
        self.model, self.truth, self.position = name, truth, position
        self.name, self.workload = workload + "/" + name, workload
        self.pairing = pairing
        self.meta = {K.REFERENCE_MODEL: "sequential", K.PARALLELISM: 1}
        family, _, count = name.partition("-")
        if count.isdigit():     # a series of worker counts: threads-2, -4, -8
            self.meta.update({K.SCALING: family, K.SCALING_UNIT: family.rstrip("s"),
                              K.PARALLELISM: int(count)})
        self.groups, self.by_round = {}, {}
        self.alpha = ALPHA      # a control's: the family's share (settle_all)
        self.mean = 1.0
        self.paired_logs, self.within_floor, self.settled_groups = {}, None, 0
        # What the simulation's allocation computed of its costs
        # (research.simulation.figures_of), until it runs again.
        self.figures = None
        # A race's comparisons side by side of this row's model, by the
        # leader's (concbench.analysis.rows.Row.beside_runs); the leader's name
        # where this is one of them.
        self.beside_runs, self.leader = {}, None

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
            if name.endswith("/sequential"):
                return sd * (rng.expovariate(1.0) - 1.0)
            return rng.gauss(0.0, sd / 3)
        if self.kind == "pairs":
            return 0.0
        return rng.gauss(0.0, sd)


def workloads(truths):
    """The workloads of the world ``truths``: "w", then "w2", "w3", ..."""
    count = WORLDS[truths][3] if len(WORLDS[truths]) > 3 else 1
    return ["w"] + ["w%d" % number for number in range(2, count + 1)]


def world(kind, truths="default"):
    """({name: SimRow} of the world ``truths`` (WORLDS), its true fastest,
    its --precision)."""
    paired = kind not in BY_ROUND_NOISES
    found, fastest, precision = WORLDS[truths][:3]
    rows = {}
    for workload in workloads(truths):
        for name, truth in found:
            row = SimRow(name, truth, len(rows), NONE if name == "sequential" else
                         IN_WORKER if paired else BY_ROUND, workload)
            rows[row.name] = row
    return rows, fastest, precision


def beside_row(rows, name):
    """The benchmark ``name`` of a race's comparison side by side
    (``schema.beside_name``): made the first time a round runs it, its
    truth the rival's speedup over the leader's, and kept with its rival
    for the race to read, as the report's rows keep theirs."""
    if name not in rows:
        own, leader = beside_of(name)
        rival = rows[own]
        row = SimRow(rival.model, rival.truth / rows[rival.workload + "/" + leader].truth,
                     len(rows), IN_WORKER, rival.workload)
        row.name, row.leader, row.meta = name, leader, {}
        rival.beside_runs[leader] = rows[name] = row
    return rows[name]


def run_round(rows, names, number, noise, pairs, rng):
    """Round ``number`` of the benchmarks ``names``: rows paired in their
    worker get ``pairs[name]`` pairs, rows paired by round one value, and a
    race's comparison side by side its pairs, noised as a paired row's."""
    noise.next_round()
    for name in names:
        row = beside_row(rows, name) if beside_of(name) else rows[name]
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
    groups, controls = {}, {}
    # The controls are one family, as the report's rows hold them
    # (``analysis.rows.build_rows``): each at 95% / their number.
    family = sum(1 for row in rows.values() if row.model == "control")
    for row in rows.values():
        # A row's groups only grow: its units, and its figures, change only
        # once it has run.
        if row.pairing == IN_WORKER and row.settled_groups != len(row.groups):
            row.paired_logs, row.within_floor = units(row.groups)
            row.settled_groups, row.figures = len(row.groups), None
        if row.leader is None:      # not a comparison side by side
            if row.model == "control":
                row.alpha = split(ALPHA, family)
            row.settled = settle(row, rows[row.workload + "/sequential"], row.alpha)
            if row.model == "control":
                controls[row.workload] = row
            else:
                groups.setdefault(row.workload, []).append(row)
    return groups, controls


def count_race_of(members):
    """The race of a workload's worker-count series, None without one."""
    series = [row for row in members if K.SCALING in row.meta]
    return Race(series) if len(series) > 1 else None


def options(prog, doc, trials, spread_over="runs"):
    """The command line of a table of simulated runs (``simulation``,
    ``given_up``): runs per cell, seed, processes, worlds and budget."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=trials,
                        help="runs per cell (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="processes to share the %s (default: one per CPU)" % spread_over)
    parser.add_argument("--world", action="append", choices=sorted(WORLDS),
                        help="a world of known truth to run (repeatable; default: all)")
    parser.add_argument("--budget", type=float, default=BUDGET_S, metavar="SECONDS",
                        help="each run's budget, its preset's two rounds included "
                        "(default: %(default)g; at 100 the preset's take 38%%, as in a "
                        "default run)")
    return parser


def parsed(parser, argv):
    """``parser``'s arguments, a budget or a count of runs that cannot be
    one line and exit 2."""
    args = parser.parse_args(argv)
    if args.budget <= 0:
        parser.error("--budget: more than 0 seconds")
    if args.trials < 10:
        parser.error("--trials: at least 10")
    args.world = args.world or list(WORLDS)
    return args
