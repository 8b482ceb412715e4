"""What the races a run left open would cost to answer (docs/figures.md,
"Five workloads on a noisy day: the budget the races need"). For each open
comparison of a "fastest" or "best count" race: the units (workers side by side, or
shared rounds; a comparison not yet run side by side, its shared rounds)
it needs in all by the run's own plan (``Question.needed``: the
confidence sequence at the comparison's level, on the spread widened as
every interval widens it), and by a yardstick no run can use, a test of
a number of units fixed in advance, at the same one-sided level, that
knew the spread of its units beforehand (the run's, unwidened), to its
nearest answer (``rules.race_room``: shown slower, or no more than
5% faster), at 50% and 80% power. A unit costs the median worker seconds
(``duration``) of the runs it reads; for rows compared by round, both
rows' runs, so a leader that runs once for several rivals is counted
once for each.

    python research/measure_race_cost.py results/d1.json
"""

import math
import statistics
import sys
from statistics import NormalDist

from concbench.analysis import stats
from concbench.analysis.comparisons import MOST_ROUNDS
from concbench.rules import race_room
from concbench.analysis.questions import all_questions
from concbench.analysis.rows import build_rows
from concbench.analysis.runs import median_of, run_figures
from concbench.report.load import load

RACES = ("fastest", "count")


def seconds_a_run(suite):
    """{benchmark: the median worker seconds of its runs}, of those that
    recorded them."""
    found = {bench.get_name(): median_of(run_figures(bench), "duration")
             for bench in suite.get_benchmarks()}
    return {name: seconds for name, seconds in found.items() if seconds}


def fixed_units(spread, room, alpha, power):
    """Units a fixed-size one-sided test at ``alpha`` needs to clear
    ``room`` with ``power``, its spread known."""
    if room <= 0:
        return math.inf
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(power)
    return (z * spread / room) ** 2


def open_parts(path):
    """[(question, part, its comparison, unit seconds)] of a file's open races."""
    suite = load(path)
    controls = {}
    groups = build_rows(suite, controls)
    took = seconds_a_run(suite)
    found = []
    for question in all_questions(groups, controls):
        if question.answered or question.kind not in RACES:
            continue
        for part in question.parts:
            leader, row = part.rows[0], part.rows[1]
            ratio = next(r for other, r, _ in question.race.entries if other is row)
            unit = ratio.side if ratio is not None and ratio.side is not None else ratio
            both = took.get(row.name, 0.0) + took.get(leader.name, 0.0)
            cost = took.get(part.beside, both) if part.beside else both
            found.append((question, part, unit, cost))
    return found


def costs(path):
    """[(question, part, units so far, their mean ratio, the spread of a
    unit, one-sided level, {way: units needed in all}, unit seconds)]."""
    found = []
    for question, part, unit, cost in open_parts(path):
        if unit is None or len(unit.values) < 2:
            continue
        logs = [math.log(v) for v in unit.values]
        # Unwidened: the spread the interval took, over its widening.
        spread = max(stats.stdev(logs), (unit.log_sd or 0.0) / stats.ROUND_WIDENING)
        room = race_room(statistics.fmean(logs))
        level = part.alpha / 2
        needs = {"plan": part.needed, "fixed 50%": fixed_units(spread, room, level, 0.5),
                 "fixed 80%": fixed_units(spread, room, level, 0.8)}
        found.append((question, part, len(logs), math.exp(statistics.fmean(logs)), spread,
                      level, needs, cost))
    return found


def main(paths):
    for path in paths:
        print(path)
        totals = dict.fromkeys(("plan", "fixed 50%", "fixed 80%"), 0.0)
        for question, part, count, point, spread, level, needs, cost in costs(path):
            for way, units in needs.items():
                totals[way] += min(units, MOST_ROUNDS) * cost
            print("  %s: %s over %s, %s: %d units, %.3f [%.3f a unit], one-sided %.4f; "
                  "needs %s%d (%.0f s), fixed %.0f / %.0f (%.0f / %.0f s)" % (
                      question.label, part.rows[1].model, part.rows[0].model,
                      "side by side" if part.beside else "through shared rounds", count,
                      point, spread, level, "" if needs["plan"] < MOST_ROUNDS else ">=",
                      needs["plan"], needs["plan"] * cost, needs["fixed 50%"],
                      needs["fixed 80%"], needs["fixed 50%"] * cost, needs["fixed 80%"] * cost))
        print("  in all: the run's plan %.0f s of workers; fixed, spread known: %.0f s at "
              "50%% power, %.0f s at 80%%" % tuple(totals.values()))


if __name__ == "__main__":
    main(sys.argv[1:])
