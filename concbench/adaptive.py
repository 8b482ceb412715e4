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
import re

from concbench.progress import format_duration
from concbench.stats import half_width, verdict

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


def row_state(row, precision=None):
    """(verdict, open): the row's verdict, and whether it still needs rounds
    (undecided, or wider than +-``precision`` percent)."""
    found = verdict(row.ratio)
    if precision is None:
        return found, found == "undecided"
    width = half_width(row.ratio)
    return found, width is None or width > precision / 100.0


def open_rows(suite, names, precision=None):
    """{benchmark name: its reference's name} for the rows among ``names``
    that are still open, read as the report reads them."""
    from concbench.report import build_rows

    found = {}
    for rows in build_rows(suite).values():
        reference = next((r for r in rows
                          if r.model == r.meta.get("reference_model")), None)
        if reference is None:
            continue
        for row in rows:
            if row is reference or row.name not in names or not row.ours:
                continue
            if row_state(row, precision)[1]:
                found[row.name] = reference.name
    return found


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
