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

The rows and the kinds of noise are ``research.synthetic``'s.

    python -m research.simulation [--trials N] [--seed N]
"""
import datetime
import itertools
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time

from concbench.run.added_rounds import RoundsBetween
from concbench.run.allocation import choose, demands, with_controls
from concbench.run.calibration import values_for
from concbench.run.costs import Figures, pooled_between
from concbench.analysis.gate import gate
from concbench.analysis.questions import all_questions
from concbench.analysis.race import Race
from concbench.analysis.stats import memoized
from concbench.schema import IN_WORKER, beside_of
from research.scoring import lower_ends_hold, right_answer, step_right
from concbench import schema as K
from concbench.analysis.scaling import fit_series
from concbench.ladder import rungs as ladder_rungs
from research.synthetic import (BUDGET_S, MOST_ROUNDS, NOISES, OVERHEAD_S, PAIR_S,
                                 SPREADS, VALUE_S, WIDE_BUDGET_S, WORLDS, Noise,
                                 count_race_of, curve_facts, options, parsed, run_round,
                                 settle_all, world)


def sizes(rows, questions, remaining):
    """Pairs for each paired row's next worker, as bench.py sizes them
    (``calibration``), for the rows an open question needs."""
    figures = {name: figures_of(row) for name, row in rows.items()
               if row.pairing == IN_WORKER}
    between = pooled_between(f for name, f in figures.items() if not beside_of(name))
    wanted = demands(questions)
    horizon = remaining / max(1, len(wanted))
    found = {name: values_for(figures[name], between, demand, horizon)
             for name, demand in wanted.items() if name in figures}
    # A race's comparisons side by side: from their own runs once they
    # ran, else from the rival's, as bench.py sizes them
    # (calibration.beside_sizes); for the reference, unpaired, from the
    # leader's, whose batches are the other half of each pair.
    for name in filter(beside_of, wanted):
        own, leader = beside_of(name)
        ran = (figures.get(name) or figures.get(own)
               or figures.get(rows[own].workload + "/" + leader))
        found[name] = values_for(ran, between, wanted[name], horizon)
    return found


def figures_of(row):
    """The row's Figures, kept until it runs again (``settle_all`` drops them)."""
    if row.figures is None:
        row.figures = Figures(True, row.groups.values(), [PAIR_S] * len(row.groups),
                              OVERHEAD_S)
    return row.figures


def cost_of(rows, pairs):
    """A benchmark's seconds in a round, by name: a worker's start, and its
    pairs (``pairs[name]``, 3 by default) or its one value."""
    def cost(name):
        if beside_of(name) or rows[name].pairing == IN_WORKER:
            return OVERHEAD_S + pairs.get(name, 3) * PAIR_S
        return OVERHEAD_S + (VALUE_S if rows[name].model != "sequential" else 10 * VALUE_S)
    return cost


def simulate(kind, sd, rng, budget=BUDGET_S, truths="default", ledger=None, ends=None,
             slowed=None):
    """One simulated run of the world ``truths`` (``synthetic.WORLDS``, its
    --precision too): the preset's two rounds of every benchmark, charged to
    the budget, then the rounds the open questions need. (The null row's
    verdict, the 1.08x row's, whether the fastest answer is right, whether
    every lower end the race read held after every round, rounds, whether
    every question was answered, whether the best worker count's answer is
    right (None without a series), the share of its workloads that answered
    both races, whether the answer to where more workers stopped helping is
    right (None without a series), every round read, side by side ones
    included.) With a ``ledger`` (``given_up.Ledger``), the run spends its
    budget on what bench.py gives up, noting where bench.py would stop.
    ``ends``: a list that gets the run's rows by workload at its end;
    ``slowed``: {row name: factor} of true speedups changed from the
    world's (a model made slower)."""
    with memoized():
        return _simulate(kind, sd, rng, budget, truths, ledger, ends, slowed)


def _simulate(kind, sd, rng, budget, truths, ledger=None, ends=None, slowed=None):
    rows, fastest, precision = world(kind, truths)
    for name, factor in (slowed or {}).items():
        rows[name].truth *= factor
    noise, preset = Noise(kind, sd, rng), cost_of(rows, {})
    for number in range(2):
        run_round(rows, list(rows), number, noise, {}, rng)
    spent, number, held, between = 2 * sum(preset(name) for name in rows), 2, True, RoundsBetween()
    # Rounds of the matrix: the rounds of their own between them
    # (added_rounds.RoundsBetween) are not counted against MOST_ROUNDS.
    matrix = number
    while matrix < MOST_ROUNDS:
        groups, controls = settle_all(rows)
        questions = all_questions(groups, controls, precision)
        held = held and lower_ends_hold(next((q.race for q in questions if q.kind == "fastest"),
                                             None) or Race(groups["w"]))
        still = [q for q in questions if not q.answered]
        if not still:
            break
        pairs = sizes(rows, questions, budget - spent)
        cost = cost_of(rows, pairs)
        names, used, _ = between.next_round(still, cost, budget - spent)
        if not names:
            joined = lambda found, groups=groups, controls=controls: with_controls(
                found, groups, controls)
            chosen, names, used = choose(still, cost, budget - spent, joined, ledger is None)
            if not chosen:
                break
            if ledger is not None and ledger.stopped is None and \
                    not choose(still, cost, budget - spent, joined)[0]:
                ledger.note(questions, spent)   # bench.py would stop here
            between = RoundsBetween(chosen, cost, used)
            matrix += 1
        run_round(rows, sorted(names), number, noise, pairs, rng)
        spent += used
        number += 1
    groups, controls = settle_all(rows)
    if ends is not None:
        ends.append(groups)
    if ledger is not None:
        ledger.end(all_questions(groups, controls, precision), spent)
    races = {workload: (Race(rows_of), count_race_of(rows_of))
             for workload, rows_of in groups.items()}
    race, count_race = races["w"]
    held = held and lower_ends_hold(race)
    count_right = (right_answer(count_race, max(count_race.members, key=lambda r: r.truth))
                   if count_race else None)
    every = not any(not q.answered for q in all_questions(groups, controls, precision))
    raced = [one.answered and (count is None or count.answered) for one, count in races.values()]
    curves = curves_read(groups["w"], truths)
    if curves is not None:
        count_right = curves["count right"]
    return (rows["w/null"].verdict, rows["w/near"].verdict,
            right_answer(race, rows["w/" + fastest]), held, matrix, every, count_right,
            sum(raced) / len(raced), step_right(groups["w"]), number, curves)


def curves_read(members, truths):
    """What a world of many CPUs (``synthetic.curve_truths``) reads of its
    curves, None in the others: whether each family's best count is
    answered and right, and whether each fit's intervals hold the true
    serial fraction and peak, the linear family's saying there is no peak
    within the rungs run."""
    if not truths.startswith(("cpus-", "wide-")):
        return None
    cpus = int(truths.partition("-")[2])
    reference = next(row for row in members if row.model == "sequential")
    found = {"count answered": 0.0, "count right": True}
    if truths.startswith("wide-"):
        found.update({"sigma held": True, "peak held": True, "no peak said": True,
                      "fitted": True})
    facts = curve_facts(cpus)
    for family, (sigma, peak) in facts.items():
        series = [row for row in members if row.meta.get(K.SCALING) == family]
        race = Race(series)
        found["count answered"] += race.answered / len(facts)
        found["count right"] &= right_answer(race, max(series, key=lambda r: r.truth))
        if "fitted" not in found:
            continue
        fit = fit_series(series, cpus, reference)
        if fit is None or fit.sigma_low is None:
            found["fitted"] = False
            continue
        found["sigma held"] &= fit.sigma_low - 1e-9 <= sigma <= fit.sigma_high + 1e-9
        if sigma == 1.0:
            continue    # no speedup to peak (the report names the GIL instead)
        if peak is not None:
            found["peak held"] &= fit.peak_low is not None and fit.peak_low <= peak and (
                fit.peak_high is None or peak <= fit.peak_high)
        else:
            # Wrong: a peak placed within the rungs fitted. Said: none within
            # the rungs run on the CPUs, the peak's interval lying beyond.
            top = max(count for count in ladder_rungs(cpus) if count <= cpus)
            found["peak held"] &= not fit.peak_within()
            found["no peak said"] &= fit.peak_low is not None and fit.peak_low > top
    return found


def gate_trial(kind, sd, rng, truths="five", slowed=None, budget=BUDGET_S, alpha=None):
    """Two simulated runs of one world, the second with the true speedups
    ``slowed`` ({row name: factor}; none: the same code twice), read by
    report.py's --fail-on (``analysis.gate``): (the rows it calls slower,
    the rows it calls changed)."""
    ends = []
    simulate(kind, sd, rng, budget, truths, ends=ends)
    simulate(kind, sd, rng, budget, truths, ends=ends, slowed=slowed)
    changes = gate(*ends, **({} if alpha is None else {"alpha": alpha}))
    return ([c.name for c in changes if c.fails("slower")],
            [c.name for c in changes if c.fails("changed")])


def gate_rates(trials, seed, noises=NOISES, spreads=SPREADS, truths="five", slowed=None,
               budget=BUDGET_S, alpha=None):
    """{(noise, sd): (the share of trials the gate failed on "slower", on
    "changed", and where ``slowed``, the share that named every slowed row
    slower)}, each cell of ``trials`` pairs of runs (``gate_trial``)."""
    found = {}
    for kind in noises:
        for sd in spreads:
            rng = random.Random("gate/%d/%s/%g/%s" % (seed, kind, sd, truths))
            outcomes = [gate_trial(kind, sd, rng, truths, slowed, budget, alpha)
                        for _ in range(trials)]
            found[(kind, sd)] = (
                sum(1 for slower, _ in outcomes if slower) / trials,
                sum(1 for _, changed in outcomes if changed) / trials,
                sum(1 for slower, _ in outcomes if slowed and set(slowed) <= set(slower))
                / trials if slowed else None)
    return found


def cell_runs(kind, sd, seed, budget=BUDGET_S, truths="default", part=0):
    """One cell's runs in order, without end: its first N are those of
    ``error_rates`` in one process, so a check can read N, then go on."""
    rng = random.Random("%d/%s/%g/%d%s" % (seed, kind, sd, part,
                                           "" if truths == "default" else "/" + truths))
    while True:
        yield simulate(kind, sd, rng, budget, truths)


def _runs(task):
    count, arguments = task
    return list(itertools.islice(cell_runs(*arguments), count))


class Rates:
    """One cell's figures: a true 1.00x called faster or slower (``null``), a
    true 1.08x called the same (``near``), "fastest" wrong (``wrong``: the true
    fastest left out, or a leader over 5% slower), the best worker count wrong
    alike (``count``), a lower end read above its truth at some round (``lower``),
    the runs that answered every question and both races, the median rounds
    of the matrix and of all those read (``reads``)."""

    def __init__(self, runs):
        share = lambda test: sum(1 for run in runs if test(run)) / len(runs)
        self.null = share(lambda run: run[0] in ("faster", "slower"))
        self.near = share(lambda run: run[1] == "same")
        self.wrong = share(lambda run: not run[2])
        self.count = share(lambda run: run[6] is False)
        self.step = share(lambda run: run[8] is False)
        self.lower = share(lambda run: not run[3])
        self.answered = share(lambda run: run[5])
        self.raced = sum(run[7] for run in runs) / len(runs)
        self.rounds = sorted(run[4] for run in runs)[len(runs) // 2]
        # Every round the run read its questions after: the matrix's and
        # those side by side of their own between them.
        self.reads = sorted(run[9] for run in runs)[len(runs) // 2]
        # A world of many CPUs (``curves_read``): its best counts answered
        # (a share of its families), its fits' intervals missing the true
        # serial fraction or peak, and the linear curve said to have no peak
        # within the rungs run.
        curves = [run[10] for run in runs if run[10] is not None]
        mean = lambda key, test=bool: (sum(test(c[key]) for c in curves) / len(curves)
                                       if curves and key in curves[0] else None)
        self.counted = mean("count answered", float)
        self.sigma = mean("sigma held", lambda held: not held)
        self.peak = mean("peak held", lambda held: not held)
        self.no_peak = mean("no peak said")

    def errors(self):
        found = {"1.00x faster/slower": self.null, "1.08x same": self.near,
                 "fastest wrong": self.wrong, "best count wrong": self.count,
                 "more workers wrong": self.step, "a lower end wrong": self.lower}
        if self.sigma is not None:
            found.update({"serial fraction missed": self.sigma, "peak missed": self.peak})
        return found

    def curves(self):
        """The figures of a world of many CPUs only, by column."""
        found = {"best counts answered": self.counted, "no peak said (linear)": self.no_peak}
        return {name: value for name, value in found.items() if value is not None}


def error_rates(trials, seed, noises=NOISES, spreads=SPREADS, budget=BUDGET_S,
                processes=1, truths="default"):
    """{(noise, sd): Rates} of the world ``truths``; each cell's runs split
    over ``processes`` processes (each with a seed of its own, so that the
    figures do not depend on how many)."""
    cells = [(kind, sd) for kind in noises for sd in spreads]
    chunks = max(1, processes)
    tasks = [(trials // chunks + (part < trials % chunks), (kind, sd, seed, budget, truths, part))
             for kind, sd in cells for part in range(chunks)]
    if processes > 1:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            done = pool.map(_runs, tasks)
    else:
        done = [_runs(task) for task in tasks]
    return {cell: Rates(sum(done[position * chunks:(position + 1) * chunks], []))
            for position, cell in enumerate(cells)}


COLUMNS = ("1.00x faster/slower", "1.08x same", "fastest wrong", "best count wrong",
           "more workers wrong", "a lower end wrong", "all answered", "races answered",
           "median rounds")


def cells(trials, seed, processes=1, worlds=WORLDS, budget=BUDGET_S):
    """Every cell of the table: [{world, noise, sd, and its figures}]."""
    found = []
    for truths in worlds:
        spend = world_budget(truths, budget)
        for (kind, sd), rates in error_rates(trials, seed, processes=processes,
                                             truths=truths, budget=spend).items():
            found.append(dict({"world": truths, "noise": kind, "sd": sd}, **rates.errors(),
                              **{"all answered": rates.answered, "races answered": rates.raced,
                                 "median rounds": rates.rounds}, **rates.curves()))
    return found


def world_budget(truths, budget):
    """A world's budget: the wide preset's in the wide worlds of many CPUs,
    whose every rung it runs, where ``budget`` is the default's."""
    return WIDE_BUDGET_S if truths.startswith("wide-") and budget == BUDGET_S else budget


CURVE_COLUMNS = ("fastest wrong", "best count wrong", "best counts answered",
                 "serial fraction missed", "peak missed", "no peak said (linear)")


def report(found, trials, seed, budget, out=sys.stdout):
    curves = [cell for cell in found if "best counts answered" in cell]
    found = [cell for cell in found if "best counts answered" not in cell]
    if found:
        table(found, trials, seed, budget, out)
    if curves:
        curve_table(curves, trials, seed, budget, out)


def curve_table(found, trials, seed, budget, out=sys.stdout):
    """The worlds of many CPUs: their races, and their fits' intervals."""
    print("Simulated machines of many CPUs, %d runs per cell, within %g s (the wide "
          "worlds: %g s), seed %d:" % (trials, budget, WIDE_BUDGET_S, seed), file=out)
    print("  world    noise           sd     " + "  ".join(CURVE_COLUMNS), file=out)
    for cell in found:
        figures = ["%*s" % (len(name), "-" if cell.get(name) is None else
                            "%.1f%%" % (100 * cell[name])) for name in CURVE_COLUMNS]
        print("  %-7s  %-14s  %-5g  %s" % (cell["world"], cell["noise"], cell["sd"],
                                           "  ".join(figures)), file=out)


def table(found, trials, seed, budget, out=sys.stdout):
    print("Simulated runs, %d per cell, each driven by bench.py's own rows, questions "
          "and allocation within %g s (seed %d):" % (trials, budget, seed), file=out)
    print("  world     noise           sd     " + "  ".join(COLUMNS), file=out)
    for cell in found:
        print("  %-8s  %-14s  %-5g  %19.1f%%  %9.1f%%  %12.1f%%  %15.1f%%  %17.1f%%  "
              "%16.1f%%  %11.1f%%  %13.1f%%  %13d" % (
                  (cell["world"], cell["noise"], cell["sd"])
                  + tuple(100 * cell[name] for name in COLUMNS[:-1])
                  + (cell["median rounds"],)), file=out)


def _commit():
    """The checkout's commit, where the code runs from a clean one; else None."""
    try:
        found = subprocess.run(["git", "describe", "--always", "--dirty", "--exclude=*"],
                               cwd=os.path.dirname(os.path.abspath(__file__)),
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    name = found.stdout.strip()
    return None if found.returncode or name.endswith("-dirty") else name


def gate_table(trials, seed, worlds, budget, out=sys.stdout):
    """report.py --fail-on on pairs of simulated runs: how often two runs of
    the same code fail it, and how often a row made a third or half slower
    in the second run is named slower."""
    slow = {"w/threads-2": 2 / 3}, {"w/threads-2": 1 / 2}
    print("report.py --fail-on on pairs of simulated runs, %d pairs per cell, within "
          "%g s each (seed %d):" % (trials, budget, seed), file=out)
    print("  world     noise           sd     same code: slower  changed  "
          "1.5x slower found  2x slower found", file=out)
    for truths in worlds:
        null = gate_rates(trials, seed, truths=truths, budget=budget)
        found = [gate_rates(trials, seed, truths=truths, budget=budget, slowed=one)
                 for one in slow]
        for cell, (slower, changed, _) in null.items():
            print("  %-8s  %-14s  %-5g  %17.1f%%  %6.1f%%  %16.1f%%  %14.1f%%" % (
                truths, cell[0], cell[1], 100 * slower, 100 * changed,
                100 * found[0][cell][2], 100 * found[1][cell][2]), file=out, flush=True)


def main(argv=None):
    parser = options("python -m research.simulation", __doc__, 3000)
    parser.add_argument("--json", metavar="PATH",
                        help="also write the table there, as the documentation "
                        "reads it (docs/data/simulation.json)")
    parser.add_argument("--gate", action="store_true",
                        help="the table of report.py --fail-on instead: pairs of runs")
    args = parsed(parser, argv)
    if args.gate:
        gate_table(args.trials, args.seed, args.world, args.budget)
        return 0
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        parser.error("--json: no folder %s" % os.path.dirname(os.path.abspath(args.json)))
    started = time.monotonic()
    found = cells(args.trials, args.seed, processes=args.processes,
                  worlds=args.world, budget=args.budget)
    report(found, args.trials, args.seed, args.budget)
    if args.json:
        # What the documentation's tables and error rates are built from.
        record = {"command": " ".join(["python -m research.simulation"] + list(
                      sys.argv[1:] if argv is None else argv)),
                  "trials": args.trials, "seed": args.seed, "budget": args.budget,
                  "jobs": args.processes,
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                      "%Y-%m-%d %H:%M UTC"),
                  "seconds": round(time.monotonic() - started), "commit": _commit(),
                  "cells": found}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
