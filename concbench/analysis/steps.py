"""Where more workers stopped helping: each step of a worker-count series
(threads-2 to threads-4, ...) shown to save more than the band, or less.

A step compares two rows of the same model family. Through their speedups
against the reference it rests on the rounds both ran, and its variance is
the sum of two workers', which leaves a step between near rows open for
many rounds. Where the series' rows are paired in
their worker (a choice made by the workload's kind, before any data), a
race (the fastest, the best worker count) may have run the same two rows
side by side in one worker (``schema.beside_name``), and the step reads
those pairs directly, and runs more of them while it is open. It opens
none of its own: each comparison side by side a race's level counts
(``race.Race.levels``), and one a step opened early would take the
largest share from the comparisons the races open later (the simulation's
world ``five`` answered no fastest so: measured in 60dce5b). Its level is
split in advance: STEP_SIDE_SHARE of each step's to the pairs side by
side (half to each direction, the following row run beside the current or
the current beside the following), the rest to the comparison through the
speedups; the two intervals are intersected (``comparisons.joined``).
"""

import dataclasses
import math

from concbench.analysis.comparisons import (Question, compare, joined, least_needed,
                                            rounds_needed, side_question)
from concbench.rules import ALPHA, STEP_SIDE_SHARE, split, step, step_room
from concbench.analysis.stats import ratio_of
from concbench.schema import IN_WORKER

def side_by_side(members):
    """Whether a series' steps run side by side: every row paired in its worker."""
    return all(row.pairing == IN_WORKER for row in members)


def step_runs(current, following):
    """[(benchmark, sign)]: the two rows' runs side by side (the following
    beside the current, then the current beside the following), with the
    sign that makes their pairs' logs the current's time over the
    following's."""
    found = []
    for this, that, sign in ((following, current, 1), (current, following, -1)):
        ran = getattr(this, "beside_runs", {}).get(that.model)
        if ran is not None:
            found.append((ran, sign))
    return found


def step_levels(members):
    """(through, side): the two-sided level of each step of the series
    ``members`` through the speedups, and of each direction side by side
    (None where the series does not run side by side): the level split
    over the steps, then in advance by STEP_SIDE_SHARE."""
    alpha = split(ALPHA, len(members) - 1)
    if not side_by_side(members):
        return alpha, None
    return (1 - STEP_SIDE_SHARE) * alpha, STEP_SIDE_SHARE * alpha / 2


def step_ratio(current, following, levels):
    """The current row's time over the following's, at ``levels``
    (``step_levels``): through the speedups, intersected with the pairs
    side by side."""
    through_alpha, side_alpha = levels
    through = compare(current, following, alpha=through_alpha)
    if side_alpha is None:
        return through
    direct, workers = None, 0
    for ran, sign in step_runs(current, following):
        one = ratio_of({number: math.exp(sign * log) for number, log in ran.paired_logs.items()},
                       side_alpha, floor=ran.within_floor)
        if one is not None:
            workers += one.rounds
            direct = one if direct is None else joined(direct, one)
    if direct is not None:      # its rounds: the workers of both directions
        direct = dataclasses.replace(direct, rounds=workers)
    return joined(through, direct)


def helping(members):
    """Where adding workers stopped saving more than the band, along a
    series sorted by worker count: ("stopped", current, following, ratio)
    once a step is shown to save less after steps shown to save more
    (``rules.step``); ("undecided", ...) at the first step shown neither;
    None when every step saved more. Each step is compared at the level
    split over the steps."""
    if len(members) < 2:
        return None
    levels = step_levels(members)
    for current, following in zip(members, members[1:]):
        ratio = step_ratio(current, following, levels)
        if ratio is not None and ratio.low is not None:
            helped = step(ratio)
            if helped:
                continue
            if helped is False:
                return "stopped", current, following, ratio
        return "undecided", current, following, ratio
    return None


def step_question(workload, counted, label, rows_of):
    """The question of one series: answered, or its open step, which runs
    its two rows (through the speedups) or, where a race ran them side by
    side, more workers of that run (``Question.beside``)."""
    found = helping(rows_of)
    topic = "more %s%s" % (counted, " (%s)" % label if label else "")
    if found is None or found[0] == "stopped":
        return Question("helping", workload, topic, True)
    _, current, following, ratio = found
    alpha, side_alpha = step_levels(rows_of)
    ran = step_runs(current, following) if side_alpha is not None else []
    if ran:
        # More workers of the race's run found first, at its share.
        return side_question("helping", workload, topic, [current, following],
                             (current, following), getattr(ratio, "side", None), step_room,
                             side_alpha, ran[0][0].within_floor, ran[0][0].name)
    logs = [math.log(x) for x in ratio.values] if ratio else []
    floor = ratio.log_sd if ratio else None
    return Question("helping", workload, topic, False, [current, following],
                    len(logs), rounds_needed(logs, step_room, alpha, floor),
                    pairs=[(current, following)],
                    room=step_room(math.log(ratio.point) if ratio else 0.0), alpha=alpha,
                    least=least_needed(logs, step_room, alpha, floor))
