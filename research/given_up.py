"""What giving questions up costs, on synthetic runs whose truth is known.

bench.py stops a run once every question still open is given up: not even
the most favourable reading of its rounds could answer it in the time left
(``concbench.run.allocation.reachable``). Here simulated runs
(``research.simulation``) spend their budget on such questions instead,
as bench.py did before, and count what they answered after the point
where bench.py would have stopped.

    python -m research.given_up [--trials N] [--seed N] [--world W] [--budget S]
"""
import multiprocessing
import random
import sys

from research.simulation import simulate
from research.synthetic import BUDGET_S, NOISES, SPREADS, options, parsed


def answered(questions):
    """(takeaways, rows): the labels of the questions answered."""
    return ({q.label for q in questions if q.answered and q.kind not in ("row", "control")},
            {q.label for q in questions if q.answered and q.kind in ("row", "control")})


class Ledger:
    """One simulated run's: the seconds spent where bench.py would have
    stopped (``stopped``, None if it would not have) and what was answered
    then, and at the end."""

    def __init__(self):
        self.stopped = self.answered = self.ended = None
        self.spent = 0.0

    def note(self, questions, spent):
        if self.stopped is None:
            self.stopped, self.answered = spent, answered(questions)

    def end(self, questions, spent):
        self.ended, self.spent = answered(questions), spent


def given_up(kind, sd, seed, trials, budget=BUDGET_S, truths="default"):
    """What giving questions up costs in one cell: runs made to spend
    their budget on them, as bench.py did before it gave them up. (Runs
    bench.py would have stopped early, the seconds they would have
    saved, the runs that answered more after that point, and the
    takeaways and rows they answered.)"""
    rng = random.Random("%d/%s/%g/given-up%s" % (seed, kind, sd,
                                                  "" if truths == "default" else "/" + truths))
    stopped, saved, later, takeaways, rows = 0, 0.0, 0, 0, 0
    for _ in range(trials):
        ledger = Ledger()
        simulate(kind, sd, rng, budget, truths, ledger)
        if ledger.stopped is None:
            continue
        stopped += 1
        saved += ledger.spent - ledger.stopped
        more = [len(end - then) for end, then in zip(ledger.ended, ledger.answered)]
        later += any(more)
        takeaways, rows = takeaways + more[0], rows + more[1]
    return stopped, saved, later, takeaways, rows


def _given_up(task):
    return task, given_up(*task)


def report(trials, seed, processes, worlds, budget, out=sys.stdout):
    """The table: one line a cell."""
    tasks = [(kind, sd, seed, trials, budget, truths)
             for truths in worlds for kind in NOISES for sd in SPREADS]
    if processes > 1:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            done = pool.map(_given_up, tasks)
    else:
        done = [_given_up(task) for task in tasks]
    print("Simulated runs, %d per cell, spending their budget on the questions bench.py "
          "gives up, within %g s (seed %d):" % (trials, budget, seed), file=out)
    print("  world     noise           sd     would stop early  seconds saved (mean)  "
          "answered more after  takeaways  rows", file=out)
    for (kind, sd, _, _, _, truths), (stopped, saved, later, takeaways, rows) in done:
        print("  %-8s  %-14s  %-5g  %16d  %20.0f  %19d  %9d  %4d" % (
            truths, kind, sd, stopped, saved / max(1, stopped), later, takeaways, rows),
              file=out)
    return 0


def main(argv=None):
    args = parsed(options("python -m research.given_up", __doc__, 200, "cells"), argv)
    return report(args.trials, args.seed, args.processes, args.world, args.budget)


if __name__ == "__main__":
    sys.exit(main())
