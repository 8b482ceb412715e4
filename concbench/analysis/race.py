"""Which row of a workload, or of a series of worker counts, is the fastest.

The fastest model, and the best worker count, are a best-arm identification
at fixed confidence (a race: Maron & Moore's Hoeffding races, Even-Dar et
al.'s successive elimination, LUCB). The leader is compared with every
other row on the rounds both ran, each comparison at 95% / (rows - 1), and
a row shown slower is out. Rows paired in their worker carry their
worker's drift in their speedups already, and a row that ran few rounds
must not hold the race open: such a race reads each member's own speedup
over every round it ran as well, and splits its 5% in two: 2.5% / (rows -
1) for each comparison with the leader, 2.5% / rows for each member's
speedup, so that all of them hold together. A row whose speedup's upper
end lies below any member's lower end is out at once, whatever rounds
they share, and a row's ratio to the leader is narrowed to what both
kinds of interval allow. Either way the true fastest is left out of the
answer with at most 5% chance,
whenever the run stops (the intervals are confidence sequences). The
race is answered when no other row can still be more than 5% faster than
the leader (an epsilon-good answer: the leader is the fastest or within
5% of it); the rows not shown slower are named with it.
"""

import math

from concbench.schema import IN_WORKER
from concbench.analysis import anytime
from concbench.analysis.comparisons import Question, compare, race_room, rounds_needed
from concbench.analysis.stats import SAME_BAND, Ratio, ratio_of, verdict


def fastest(rows):
    """The row with the best speedup against the common reference (paired
    by round: rows that ran different rounds are not ranked by their means
    over different moments), or the least mean without speedups."""
    if all(r.speedup for r in rows):
        return max(rows, key=lambda r: (r.speedup, -r.mean))
    return min(rows, key=lambda r: r.mean)


# What a race says of a row against its leader.
SLOWER, SAME, WITHIN, OPEN = "slower", "same", "within", "open"


def standing(ratio):
    """A row's time over the leader's: shown slower; the same within 5%;
    not told apart but no more than 5% faster; or still open."""
    if ratio is None or ratio.low is None:
        return OPEN
    if ratio.low > 1.0:
        return SLOWER
    if SAME_BAND[0] <= ratio.low and ratio.high <= SAME_BAND[1]:
        return SAME
    if ratio.low >= SAME_BAND[0]:
        return WITHIN
    return OPEN


def own_speedup(row, alpha):
    """``row``'s speedup against its reference at level 1 - ``alpha``, from
    every round it ran: (low, high, log mean, [per-round logs], floor);
    (1, 1, 0, [], None) for the reference itself; low and high None while
    the interval is unbounded."""
    if row.reference is row:
        return 1.0, 1.0, 0.0, [], None
    speedups = row.speedups() or {}
    floor = getattr(row, "within_floor", None)
    ratio = ratio_of(speedups, alpha, floor=floor)
    if ratio is None:
        return None, None, None, [], floor
    return (ratio.low, ratio.high, math.log(ratio.point),
            [math.log(x) for x in ratio.values], floor)


def joined(direct, bounded):
    """The comparison on shared rounds narrowed by the one from the rows'
    own bounds: each holds at its share of the race's level, so both hold
    together, and so does their intersection."""
    if bounded is None or bounded.low is None:
        return direct if direct is not None else bounded
    if direct is None or direct.low is None:
        return bounded
    low, high = max(direct.low, bounded.low), min(direct.high, bounded.high)
    if low > high:
        return direct
    return Ratio(direct.point, low, high, direct.above, direct.rounds, direct.values,
                 direct.log_sd)


def by_own_speedups(members):
    """Whether a race reads its members' own speedups: every member but
    the common reference is paired in its worker."""
    references = {id(getattr(r, "reference", None)) for r in members}
    if len(references) != 1 or getattr(members[0], "reference", None) is None:
        return False
    return all(r.pairing == IN_WORKER or r is r.reference for r in members)


class Race:
    """Which of ``members`` is the fastest: the ``leader``, and for every
    other row its ratio against it and its standing (``entries``)."""

    def __init__(self, members):
        self.members = list(members)
        self.comparisons = max(1, len(self.members) - 1)
        self.by_rows = len(self.members) > 1 and by_own_speedups(self.members)
        # The level each interval the race reads is held to.
        share = 2 if self.by_rows else 1
        self.alpha = anytime.ALPHA / share / self.comparisons
        self.row_alpha = anytime.ALPHA / share / len(self.members)
        self.own = {id(r): own_speedup(r, self.row_alpha) for r in self.members} \
            if self.by_rows else {}
        best = fastest(self.members)
        # A row shown faster than the leader leads; the entries are those
        # against the last leader.
        for _ in self.members:
            entries = self._entries(best)
            ahead = next((row for row, ratio, _ in entries
                          if verdict(ratio) == "slower"), None)
            if ahead is None:
                break
            best = ahead
        else:
            entries = self._entries(best)
        self.leader = best
        self.entries = entries

    def _entries(self, best):
        """[(row, its time over best's, its standing)] of every other row."""
        found = []
        lows = [(own[0], key) for key, own in self.own.items() if own[0] is not None]
        for row in self.members:
            if row is best:
                continue
            if not self.by_rows:
                ratio = compare(row, best, self.comparisons)
                found.append((row, ratio, standing(ratio)))
                continue
            ratio = joined(compare(row, best, anytime.ALPHA / self.alpha),
                           self._between(row, best))
            state = standing(ratio)
            high = self.own[id(row)][1]
            if high is not None and any(low > high for low, key in lows if key != id(row)):
                state = SLOWER
            found.append((row, ratio, state))
        return found

    def _between(self, row, best):
        """row's time over best's from their own speedups' bounds (no
        shared round: they need none)."""
        low, high, mean, _, _ = self.own[id(row)]
        best_low, best_high, best_mean, _, _ = self.own[id(best)]
        if mean is None or best_mean is None:
            return None
        point = math.exp(best_mean - mean)
        if low is None or best_low is None:
            return Ratio(point, None, None, 0, 0)
        return Ratio(point, best_low / high, best_high / low, 0, 0)

    @property
    def answered(self):
        return all(state != OPEN for _, _, state in self.entries)

    def named(self):
        """The rows the answer names: the leader and every row not shown
        slower, in file order."""
        return sorted([self.leader] + [row for row, _, state in self.entries
                                       if state != SLOWER], key=lambda r: r.position)

    def tied(self):
        """[(row, ratio)] of the rows not shown slower than the leader."""
        return [(row, ratio) for row, ratio, state in self.entries if state != SLOWER]

    def question(self, kind, workload, topic):
        """The race as one question, answered when every row is; its
        ``parts``, one per row still open against the leader, are what
        the allocation runs: a row far behind needs a round or two more to
        be shown slower and leave the race, a close one many, and each
        gets its rounds as it can be answered."""
        alpha = self.alpha
        parts = []
        for row, ratio, state in self.entries:
            if state != OPEN:
                continue
            room = race_room(math.log(ratio.point) if ratio else 0.0)
            if self.by_rows and (ratio is None or not ratio.values):
                rounds, needed = self._needed(row, room)
            else:
                logs = [math.log(x) for x in ratio.values] if ratio else []
                rounds = len(logs)
                needed = rounds_needed(logs, race_room, alpha,
                                       ratio.log_sd if ratio else None)
            parts.append(Question(
                kind, workload, topic, False, [self.leader, row], rounds, needed,
                pairs=[(row, self.leader)], alpha=alpha, room=room))
        found = Question(kind, workload, topic, not parts,
                         [self.leader] + [p.rows[1] for p in parts] if parts else [],
                         min((p.rounds for p in parts), default=0),
                         max((p.needed for p in parts), default=0),
                         pairs=[pair for p in parts for pair in p.pairs],
                         room=min((p.room for p in parts), default=0.0), alpha=alpha)
        found.parts = parts
        return found

    def _needed(self, row, room):
        """(rounds, rounds likely needed) of a rival read from its own and
        the leader's speedups: each interval within half the room."""
        rounds, needed = [], []
        for member in (row, self.leader):
            if member.reference is member:
                continue
            _, _, _, logs, floor = self.own[id(member)]
            rounds.append(len(logs))
            needed.append(rounds_needed(logs, lambda _: room / 2, self.alpha, floor))
        return min(rounds, default=0), max(needed, default=0)
