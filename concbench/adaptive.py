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
Looking after every round and stopping each row once it is decided keeps
the verdicts' 95% because the interval is a confidence sequence
(``concbench.anytime``): it holds at every round at once.
"""

import argparse
import math
import re
import statistics

from concbench import anytime
from concbench.progress import format_duration
from concbench.stats import SAME_BAND, imprecise, verdict

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


def is_open(ratio, precision=None):
    """Whether a row whose speedup is ``ratio`` still needs rounds:
    undecided, or wider than +-``precision`` percent. A row within the
    precision whose interval still straddles 1 or an end of the "same"
    band (0.99x [0.94-1.03]) has answered no question yet: it stays open."""
    if verdict(ratio) == "undecided":
        return True
    return precision is not None and imprecise(ratio, precision)


# No estimate beyond this many rounds: a row that needs more is hopeless.
MOST_ROUNDS = 200


def rounds_needed(logs, precision=None, alpha=anytime.ALPHA, bar=None, floor=None):
    """How many rounds in all the row is likely to need before its interval
    is decided (or within +-``precision`` percent), if its per-round log
    ratios keep the mean and spread of ``logs``: the least n whose
    confidence sequence's half-width (at level 1 - ``alpha``) fits the
    nearest target; with ``bar``, the target is an interval clear of that
    log ratio. The spread of two rounds says too little to give a row up:
    below three, one more. ``floor``: the least spread, as the interval
    takes it (``stats.ratio_of``)."""
    count = len(logs)
    if count < 3:
        return count + 1
    mean, spread = statistics.fmean(logs), max(statistics.stdev(logs), floor or 0.0)
    if spread == 0:
        return max(count, anytime.first_bounded(alpha))
    if precision:
        room = math.log(1 + precision / 100.0)
    elif bar is not None:
        room = abs(mean - bar)
    else:
        # Faster or slower: the interval clear of 0; the same: inside the band.
        room = max(abs(mean), min(math.log(SAME_BAND[1]) - mean,
                                  mean - math.log(SAME_BAND[0])))
    if room <= 0:
        return MOST_ROUNDS
    for total in range(count, MOST_ROUNDS):
        if anytime.half_width(total, spread, alpha) < room:
            return total
    return MOST_ROUNDS


class OpenRow:
    """An open question: a row against its reference, or a comparison a
    takeaway rests on (``takeaway``) of the row with ``reference``; the
    rounds they share so far, the rounds they are likely to need in all,
    and the benchmarks a round of it runs (``members``: the row alone when
    its worker pairs it with the reference itself)."""

    def __init__(self, name, reference, rounds, needed, takeaway=False, members=None):
        self.name, self.reference = name, reference
        self.rounds, self.needed = rounds, needed
        self.takeaway = takeaway
        self.members = set(members or (name, reference))

    def label(self):
        return "%s vs %s" % (self.name, self.reference) if self.takeaway else self.name

    def __repr__(self):
        return "OpenRow(%s, %d/%d)" % (self.label(), self.rounds, self.needed)


def open_rows(suite, names, precision=None):
    """The open questions among the benchmarks ``names``, read as the
    report reads them, in file order: rows still open (the A/A controls
    alike), then, unless ``precision`` is the target, the paired comparisons
    that the takeaways rest on and that are still undecided."""
    from concbench.report.rows import build_rows
    from concbench.report.verdicts import open_comparisons, pair

    controls = {}
    groups = build_rows(suite, controls)
    found = []
    for workload, rows in groups.items():
        for row in rows + ([controls[workload]] if workload in controls else []):
            if (row.reference is None or row is row.reference
                    or row.name not in names or not is_open(row.ratio, precision)):
                continue
            logs = [math.log(x) for x in row.round_ratios()]
            found.append(OpenRow(row.name, row.reference.name, len(logs),
                                 max(rounds_needed(logs, precision, floor=row.within_floor),
                                     rounds_needed(logs, floor=row.within_floor)),
                                 members=runs_needed(row, row.reference)))
    if precision is not None:
        return found
    pairs = {}
    for rows in groups.values():
        for row, other, comparisons, bar in open_comparisons(rows):
            if row.name in names and other.name in names:
                known = pairs.get((row.name, other.name))
                if known is None or comparisons > known[2]:
                    pairs[row.name, other.name] = (row, other, comparisons, bar)
    for row, other, comparisons, bar in pairs.values():
        ratio = pair(row, other)
        logs = [math.log(x) for x in ratio.values] if ratio else []
        found.append(OpenRow(row.name, other.name, len(logs), rounds_needed(
            logs, alpha=anytime.ALPHA / comparisons, bar=bar,
            floor=ratio.log_sd if ratio else None), takeaway=True,
            members=runs_needed(row, other)))
    return found


def runs_needed(row, other):
    """The benchmarks a round must run to add a round to row's comparison
    with other: both, but the reference, when the other's worker pairs
    with it itself."""
    needed = set()
    for this, that in ((row, other), (other, row)):
        if not (this is row.reference and that.pairing == "worker"):
            needed.add(this.name)
    return needed


def choose(still, cost, remaining):
    """The open questions to run in the next round, within ``remaining``
    seconds: those likely to be decided within the budget, rows before the
    takeaways' comparisons (which join for free while such a row runs),
    the cheapest to decide first (rounds still needed times the seconds a
    round of its benchmarks costs), each with the benchmarks it needs; the
    others only when no such question is left, since a budget the user
    gave is there to be spent. ``cost``: the seconds a benchmark's worker
    last took, by name."""
    def to_decide(row):
        return (row.needed - row.rounds) * sum(cost(name) for name in row.members)

    def ranked(questions):
        return sorted(questions, key=lambda row: (to_decide(row), row.needed - row.rounds))

    def hopeful(questions):
        return [row for row in questions if to_decide(row) <= remaining]

    chosen, members, spent = [], set(), 0.0

    def take(row, free_only=False):
        nonlocal spent
        extra = sum(cost(name) for name in row.members - members)
        if spent + extra > remaining or (free_only and extra):
            return
        chosen.append(row)
        members.update(row.members)
        spent += extra
    rows = ranked(row for row in still if not row.takeaway)
    comparisons = ranked(row for row in still if row.takeaway)
    # The rows' verdicts first; the takeaways' comparisons ride along when
    # their benchmarks run anyway, and get benchmarks of their own when no
    # row likely to be decided is in the round; the others last.
    for row in hopeful(rows):
        take(row)
    rows_run = bool(chosen)
    for row in hopeful(comparisons):
        take(row, free_only=rows_run)
    if not chosen:
        for row in rows + comparisons:
            take(row)
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
        target = ("every speedup decided and within +-%g%%" % self.precision
                  if self.precision
                  else "every row decided")
        return "then rounds until %s, within %s in all" % (
            target, format_duration(self.max_time))
