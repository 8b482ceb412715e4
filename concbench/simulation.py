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
the end is the takeaways' (``questions.Race``).

The rows and the kinds of noise are ``concbench.synthetic``'s.

    python -m concbench.simulation [--trials N] [--seed N]
"""

import argparse
import os
import random
import sys

from concbench.run.allocation import choose, demands, race_workers, with_controls
from concbench.run.calibration import values_for
from concbench.run.costs import Figures, pooled_between
from concbench.analysis.questions import Race, all_questions
from concbench.schema import IN_WORKER
from concbench.synthetic import FASTEST, NOISES, Noise, run_round, settle_all, world

SPREADS = (0.03, 0.15)
BUDGET_S = 400.0
# Rounds a simulated run stops at, whatever is left of its budget.
MOST_ROUNDS = 20
OVERHEAD_S, PAIR_S, VALUE_S = 1.0, 0.5, 0.1


def sizes(rows, questions, remaining):
    """Pairs for each paired row's next worker, as bench.py sizes them
    (``calibration``), for the rows an open question needs."""
    figures = {name: Figures(True, row.groups.values(), [PAIR_S] * len(row.groups),
                             OVERHEAD_S)
               for name, row in rows.items()
               if row.pairing == IN_WORKER and not hasattr(row, "against")}
    between = pooled_between(figures.values())
    wanted = demands(questions)
    horizon = remaining / max(1, len(wanted))
    return {name: values_for(figures[name], between, demand, horizon)
            for name, demand in wanted.items() if name in figures}


def simulate(kind, sd, rng, budget=BUDGET_S):
    """One simulated run: (the null row's verdict, the 1.08x row's, whether
    the fastest answer names the true fastest, rounds, answered)."""
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
        workers = race_workers(still)

        def cost(name):
            row = rows.get(name)
            if row is None or row.pairing == IN_WORKER:
                return (OVERHEAD_S + pairs.get(name, 3) * PAIR_S) * workers.get(name, 1)
            return OVERHEAD_S + (VALUE_S if row.model != "sequential" else 10 * VALUE_S)
        chosen, names, used = choose(still, cost, budget - spent,
                                     lambda found: with_controls(found, groups, controls))
        if not chosen:
            break
        run_round(rows, sorted(names), number, noise, pairs, rng, workers)
        spent += used
        number += 1
    groups, controls = settle_all(rows)
    race = Race(groups["w"])
    named = {row.model for row in race.named()}
    return (rows["w/null"].verdict, rows["w/near"].verdict, FASTEST in named,
            number, not any(not q.answered for q in all_questions(groups, controls)))


def _runs(task):
    kind, sd, count, seed, budget = task
    rng = random.Random(seed)
    return [simulate(kind, sd, rng, budget) for _ in range(count)]


def error_rates(trials, seed, noises=NOISES, spreads=SPREADS, budget=BUDGET_S,
                processes=1):
    """{(noise, sd): (a true 1.00x called faster or slower, a true 1.08x
    called the same, the true fastest left out of "fastest", the share of
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
    print("  noise     sd     1.00x faster/slower  1.08x same  fastest left out  "
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
