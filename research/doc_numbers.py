"""The levels every question is read at, and the simulation's error rates,
as the documentation prints them: the pages take these numbers at every
build (docs/conf.py, MyST substitutions), so that a change of a level in
the code, or a new run of the simulation, changes the pages with it."""

import json
import math

from concbench import rules
from concbench.analysis import anytime, race, stats
from concbench.run.added_rounds import SIDE_WORKERS
from research.simulation import COLUMNS


percent = rules.percent


def substitutions():
    """{name: text} of the levels, fixed in advance, that docs/statistics.md
    states."""
    alpha = rules.ALPHA
    race_share = alpha - rules.ELIMINATION_ALPHA
    through = race_share - rules.SIDE_BY_SIDE_ALPHA
    return {
        "alpha": percent(alpha),
        "confidence": percent(1 - alpha),
        "race_share": percent(race_share),
        "race_one_sided": "%s / (rows - 1)" % percent(1 - race_share),
        "race_two_sided": "%s / (rows - 1)" % percent(1 - 2 * race_share),
        "elimination_share": percent(rules.ELIMINATION_ALPHA),
        "elimination_one_sided": "%s / rows" % percent(1 - rules.ELIMINATION_ALPHA),
        "elimination_two_sided": "%s / rows" % percent(1 - 2 * rules.ELIMINATION_ALPHA),
        "through_share": percent(through),
        "through_one_sided": "%s / (rows - 1)" % percent(1 - through),
        "side_share": percent(rules.SIDE_BY_SIDE_ALPHA),
        "side_first": percent(race.side_level(1)),
        "side_second": percent(race.side_level(2)),
        "side_first_workers": "%d" % anytime.first_bounded(2 * race.side_level(1)),
        "side_workers": "%d" % SIDE_WORKERS,
        "near": percent(race.NEAR - 1),
        "step_side_share": percent(rules.STEP_SIDE_SHARE),
        "step_through_share": percent((1 - rules.STEP_SIDE_SHARE) * alpha),
        "step_side_each": percent(rules.STEP_SIDE_SHARE * alpha / 2),
        "same_band": "%.2f-%.2f" % rules.SAME_BAND,
        "same_within": rules.BAND_TEXT,
        "band_high": "%.2f" % rules.SAME_BAND[1],
        "widening": "%.2f" % stats.ROUND_WIDENING,
        "widening_squared": "%.2f" % stats.ROUND_WIDENING ** 2,
        "most_persistence": "%g" % stats.MOST_PERSISTENCE,
        "mixture": "%g" % anytime.MIXTURE,
        "first_bounded": "%d" % anytime.first_bounded(),
    }


# The simulation's error columns (the rest are answers and rounds).
ERRORS = COLUMNS[:6]


def simulation(path):
    """{name: text} of the simulation's run recorded at ``path`` (written
    by ``python -m research.simulation --json``), and its table in
    Markdown under "simulation_table"."""
    with open(path) as f:
        record = json.load(f)
    cells = record["cells"]
    errors = [cell[name] for cell in cells for name in ERRORS]
    found = {"sim_command": "`%s`" % record["command"], "sim_date": record["date"],
             "sim_trials": "{:,}".format(record["trials"]),
             "sim_budget": "%g s" % record["budget"],
             "sim_minutes": "%d min %d s" % divmod(record["seconds"], 60),
             "sim_processes": "one process" if record["jobs"] == 1
                              else "%d processes" % record["jobs"],
             "sim_commit": record.get("commit") or "an uncommitted tree",
             "sim_worst": percent(round(max(errors), 3)),
             "sim_best": percent(round(min(errors), 3)),
             "sim_pass_chance": percent(round(_pass_chance(record["trials"]), 3))}
    found["simulation_table"] = _table(cells)
    return found


def _pass_chance(trials, rate=0.07, limit=rules.ALPHA):
    """The chance that a method erring at ``rate`` shows ``limit`` or less
    in ``trials`` runs."""
    return binomial_below(int(math.floor(limit * trials + 1e-9)), trials, rate)


def binomial_below(errors, runs, rate):
    """The chance of ``errors`` or fewer in ``runs`` at a true ``rate``."""
    return sum(math.comb(runs, k) * rate ** k * (1 - rate) ** (runs - k)
               for k in range(errors + 1))


def _table(cells):
    """One line a world and noise, its two spreads side by side."""
    spreads = sorted({cell["sd"] for cell in cells})
    keys = []
    for cell in cells:
        if (cell["world"], cell["noise"]) not in keys:
            keys.append((cell["world"], cell["noise"]))
    by = {(cell["world"], cell["noise"], cell["sd"]): cell for cell in cells}
    lines = ["| world, noise, sd %s | %s |" % (" / ".join("%g" % sd for sd in spreads),
                                               " | ".join(COLUMNS)),
             "| --- |" + " --- |" * len(COLUMNS)]
    for world, noise in keys:
        row = []
        for name in COLUMNS:
            found = [by.get((world, noise, sd)) for sd in spreads]
            row.append(" / ".join(
                "-" if cell is None else
                "%d" % cell[name] if name == "median rounds" else
                "%.1f%%" % (100 * cell[name]) for cell in found))
        lines.append("| %s, %s | %s |" % (world, noise, " | ".join(row)))
    return "\n".join(lines)
