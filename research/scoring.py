"""Whether a simulated run's answers are right (``research.simulation``),
against the known truth of its rows (``research.synthetic``)."""

from concbench import schema as K
from concbench.rules import HELPED
from concbench.analysis.steps import helping


def lower_ends_hold(race):
    """Whether every lower end the race reads (a rival's time over the
    leader's, whose truth is the leader's true speedup over the rival's) is
    at or below its truth: the event its answer rests on."""
    return all(ratio is None or ratio.low is None or ratio.low <= race.leader.truth / row.truth
               for row, ratio, _ in race.entries)


def right_answer(race, best):
    """Whether a race's answer is right: it names the row ``best`` (the
    true fastest), and once answered its leader is within 5% of it (an
    epsilon-good answer)."""
    return best in race.named() and not (
        race.answered and race.leader.truth * 1.05 < best.truth)


def step_right(members):
    """Whether the answer to where more workers stopped helping is right
    (an undecided step is not wrong), None without a series: every step it
    says saved 5% or more truly did, and the one it says saved less truly
    did (a step's truth: the following row's true speedup over the
    current's)."""
    series = sorted((row for row in members if K.SCALING in row.meta),
                    key=lambda row: row.workers())
    if len(series) < 2:
        return None
    found = helping(series)
    steps = list(zip(series, series[1:]))
    if found is None:
        shown, stopped = steps, None
    else:
        state, current, following, _ = found
        shown = steps[:[pair[0] for pair in steps].index(current)]
        stopped = (current, following) if state == "stopped" else None
    saved = lambda pair: pair[1].truth / pair[0].truth >= HELPED
    return all(saved(pair) for pair in shown) and (stopped is None or not saved(stopped))
