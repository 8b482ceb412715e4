"""Rounds until each answer is known.

After the preset's rounds, the master looks at every benchmark's paired
speedup against its workload's reference, as the report will show it: a row
whose 95% interval says neither faster, slower nor the same (within 5%) is
open, and so is, under ``--precision PCT``, a row whose interval is wider
than +-PCT. Each further round runs only the open benchmarks and their
references, interleaved and shuffled like the others, until none is open or
the next round would not fit in the time budget (``--max-time``). Rows that
are settled stop costing time: a 0.5x result is decided long before it is
precise, and a ratio that is already tight (sleep: +-0.1%) gets no more runs.
"""

import argparse
import math
import re
import statistics

from concbench.progress import format_duration
from concbench.stats import SAME_BAND, imprecise, t_critical_95, verdict

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?")


def duration(text):
    """'90', '90s', '10m', '1h', '2m30s' -> seconds (> 0)."""
    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError("%r is not a positive duration" % text)
    match = _DURATION.fullmatch(text.strip().lower()) if text.strip() else None
    if match is None or not any(match.groups()):
        raise argparse.ArgumentTypeError(
            "%r is not a duration (examples: 90s, 10m, 1h30m)" % text)
    hours, minutes, seconds = (float(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError("%r is not a positive duration" % text)
    return total


def percentage(text):
    """--precision: a share in percent, 0 < PCT <= 100."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number" % text) from None
    if not 0 < value <= 100 or value != value:
        raise argparse.ArgumentTypeError(
            "%s is out of range: give a percentage above 0, at most 100" % text)
    return value


def is_open(row, precision=None):
    """Whether the row still needs rounds: undecided, or wider than
    +-``precision`` percent."""
    if precision is None:
        return verdict(row.ratio) == "undecided"
    return imprecise(row.ratio, precision)


# No estimate beyond this many rounds: a row that needs more is hopeless.
MOST_ROUNDS = 200


def rounds_needed(logs, precision=None):
    """How many rounds in all the row is likely to need before its interval
    is decided (or within +-``precision`` percent), if its per-round log
    ratios keep the mean and spread of ``logs``: the least n whose 95%
    half-width t(n-1) s / sqrt(n) fits the nearest target. The spread of
    two rounds says too little to give a row up: below three, one more."""
    count = len(logs)
    if count < 3:
        return count + 1
    mean, spread = statistics.fmean(logs), statistics.stdev(logs)
    if spread == 0:
        return count
    if precision:
        room = math.log(1 + precision / 100.0)
    else:
        # Faster or slower: the interval clear of 0; the same: inside the band.
        room = max(abs(mean), min(math.log(SAME_BAND[1]) - mean,
                                  mean - math.log(SAME_BAND[0])))
    if room <= 0:
        return MOST_ROUNDS
    for total in range(count, MOST_ROUNDS):
        if t_critical_95(total - 1) * spread / math.sqrt(total) < room:
            return total
    return MOST_ROUNDS


class OpenRow:
    """A row still open: its name, its reference's, its rounds so far and
    the rounds it is likely to need in all."""

    def __init__(self, name, reference, rounds, needed):
        self.name, self.reference = name, reference
        self.rounds, self.needed = rounds, needed

    def __repr__(self):
        return "OpenRow(%s, %d/%d)" % (self.name, self.rounds, self.needed)


def open_rows(suite, names, precision=None):
    """The rows among ``names`` that are still open, read as the report
    reads them, in file order."""
    from concbench.report.rows import build_rows

    found = []
    for rows in build_rows(suite).values():
        for row in rows:
            if (row.reference is None or row is row.reference
                    or row.name not in names or not is_open(row, precision)):
                continue
            logs = [math.log(x) for x in row.round_ratios()]
            found.append(OpenRow(row.name, row.reference.name, len(logs),
                                 rounds_needed(logs, precision)))
    return found


def choose(still, cost, remaining):
    """The open rows to run in the next round, within ``remaining`` seconds:
    those likely to be decided within the budget first (fewest rounds still
    needed), each with its reference; the others only when no such row is
    left, since a budget the user gave is there to be spent. ``cost``: the
    seconds a benchmark's worker last took, by name."""
    def can_finish(row):
        per_round = cost(row.name) + cost(row.reference)
        return (row.needed - row.rounds) * per_round <= remaining

    ranked = sorted(still, key=lambda row: row.needed - row.rounds)
    hopeful = [row for row in ranked if can_finish(row)]
    chosen, members, spent = [], set(), 0.0
    for row in hopeful or ranked:
        extra = cost(row.name) + (0.0 if row.reference in members
                                  else cost(row.reference))
        if spent + extra > remaining:
            continue
        chosen.append(row)
        members.update((row.name, row.reference))
        spent += extra
    return chosen, members, spent


class Plan:
    """Whether this run adds rounds, and within what budget."""

    def __init__(self, max_time=None, precision=None):
        self.max_time = max_time
        self.precision = precision

    @property
    def adaptive(self):
        return self.max_time is not None

    def describe(self):
        target = ("every speedup within +-%g%%" % self.precision if self.precision
                  else "every row decided")
        return "then rounds until %s, within %s in all" % (
            target, format_duration(self.max_time))
