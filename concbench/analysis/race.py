"""Which row of a workload, or of a series of worker counts, is the fastest.

A best-arm identification at fixed confidence (Maron & Moore's Hoeffding
races, Even-Dar et al.'s successive elimination, LUCB): the leader is
compared with every other row on the rounds both ran (rows paired by
round: led by the row that reads fastest on those, ``ahead_by_round``).
The answer reads only the lower end of each comparison (the rival's time
over the leader's): a rival is out above 1 (shown slower), and the race is
answered when every rival is out or within the band (an epsilon-good
answer: the leader is the fastest or within the band of it). A rival is
also out, whatever rounds it shares with the leader, when its own
speedup's interval against the reference lies below another row's
(successive elimination's rule); by the same own intervals each
comparison is intersected with the leader's lower end over the rival's
upper and its upper over the rival's lower. ALPHA is split in advance
(``concbench.rules``): ELIMINATION_ALPHA over the rows' own intervals, each
end one-sided at ELIMINATION_ALPHA / rows; SIDE_BY_SIDE_ALPHA over the
comparisons side by side, where the rows pair in their worker
(``side_level``); the rest over the comparisons with the leader through
the speedups, each one-sided at its share / (rows - 1). The true fastest
is then left out of the answer, or more than the band faster than the
leader, with at most ALPHA chance whenever the run stops (the intervals
are confidence sequences), whichever row leads. "The same within the
band" reads both ends, at the same levels two-sided.
"""

import dataclasses
import math
from collections import Counter

from concbench.analysis.comparisons import (Question, compare, joined, least_needed,
                                            rounds_needed, side_question)
from concbench.rules import (ALPHA, ELIMINATION_ALPHA, OPEN, SAME, SIDE_BY_SIDE_ALPHA,
                             SLOWER, WITHIN, race_room, standing)
from concbench import rules
from concbench.analysis.stats import Ratio, ratio_of
from concbench.schema import IN_WORKER, NONE, beside_name

# A rival not told apart from the leader runs beside it once its time
# reads within 10% of the leader's on the rounds they share: one further
# behind is shown slower sooner through the speedups, and would spend a
# comparison's share of the level for little.
NEAR = 1.10


def fastest(rows):
    """The row with the best speedup against the common reference (paired
    by round: rows that ran different rounds are not ranked by their means
    over different moments), or the least mean without speedups."""
    if all(r.speedup for r in rows):
        return max(rows, key=lambda r: (r.speedup, -r.mean))
    return min(rows, key=lambda r: r.mean)


class Race:
    """Which of ``members`` is the fastest: the ``leader``, and for every
    other row its ratio against it and its standing (``entries``)."""

    def __init__(self, members):
        self.members = list(members)
        self.comparisons = max(1, len(self.members) - 1)
        # Whether its rows can run side by side: all paired in their worker
        # (the reference's own batches run in any worker), a choice made by
        # the workload's kind, before any data.
        pairings = [row.pairing for row in self.members]
        self.side_by_side = len(self.members) > 1 and IN_WORKER in pairings and all(
            pairing in (IN_WORKER, NONE) for pairing in pairings)
        # The level of each comparison with the leader through the
        # speedups, one-sided; the two-sided interval whose lower end it reads.
        spent = ELIMINATION_ALPHA + (SIDE_BY_SIDE_ALPHA if self.side_by_side else 0.0)
        self.alpha = rules.split(ALPHA - spent, self.comparisons)
        self.interval_alpha = 2 * self.alpha
        # {id(benchmark side by side): its one-sided level}: the j-th of
        # the race's comparisons side by side, in the order they were
        # opened (their first round, then the file's order, which is the
        # order the master added them in), at SIDE_BY_SIDE_ALPHA / 2 ** j.
        self.levels = {}
        # How many of the race's comparisons side by side each model has.
        self.sides = Counter()
        if self.side_by_side:
            models = {row.model for row in self.members}
            opened = sorted(((found, row.model, leader) for row in self.members
                             for leader, found in getattr(row, "beside_runs", {}).items()
                             if leader in models),
                            key=lambda item: (min(item[0].paired_logs, default=math.inf),
                                              item[0].position))
            for number, (found, model, leader) in enumerate(opened, start=1):
                self.levels[id(found)] = side_level(number)
                self.sides.update((model, leader))
        own = {id(row): own_interval(row, elimination_alpha(len(self.members)))
               for row in self.members}
        self.own = own
        lows = [found[0] for found in own.values() if found]
        # Rows whose own interval lies below another row's.
        self.behind = {key for key, found in own.items()
                       if found and lows and found[1] < max(lows)}
        # The row whose own interval is highest is never behind.
        best = self.kept(fastest([row for row in self.members
                                  if id(row) not in self.behind]))
        if not self.side_by_side:
            best = self.ahead_by_round(best)
        # A row shown faster than it on the rounds they share (they may
        # share other rounds than either shares with the reference) leads;
        # the entries are those against the last leader.
        for _ in self.members:
            entries = self._entries(best)
            ahead = next((row for row, ratio, _ in entries
                          if rules.ahead(ratio) and id(row) not in self.behind),
                         None)
            if ahead is None:
                break
            best = ahead
        else:
            entries = self._entries(best)
        self.leader = best
        self.entries = entries

    def kept(self, best):
        """The leader the race keeps: ``best`` (the highest point), or a
        row near it (not shown slower, within NEAR) that has run side by
        side with more of the race's rows. A near tie's points trade
        places from round to round; a leader that followed them would leave
        the comparisons run beside the last one unread, and open new ones
        at ever smaller levels. Any row may lead."""
        if not self.sides:
            return best
        ahead = [row for row in self.members
                 if self.sides[row.model] > self.sides[best.model]
                 and id(row) not in self.behind]
        near = []
        for row in ahead:
            ratio = self.ratio(row, best)
            if ratio is not None and standing(ratio) != SLOWER and ratio.point <= NEAR:
                near.append(row)
        return max(near, key=lambda row: (self.sides[row.model], -row.position),
                   default=best)

    def ahead_by_round(self, best):
        """The leader of a race whose rows compare their own runs of the
        same rounds: the row that reads faster than ``best`` on the rounds
        they share, for as long as one does. Those rest on every round
        both ran; the speedups that chose ``best``, on the rounds each
        shares with the reference, which a near tie's rows stop needing
        once their verdicts are decided, so that a row may lead on a few
        of those while it reads slower on many more shared ones. A rival
        reading faster than its leader must show itself no more than the
        band faster, where it leads the other needs only to show itself
        not faster than the band, a far nearer end."""
        seen = {id(best)}
        for _ in self.members:
            ahead = []
            for row in self.members:
                if row is best or id(row) in self.behind:
                    continue
                ratio = compare(row, best, alpha=self.interval_alpha)
                if ratio is not None and ratio.point < 1.0:
                    ahead.append((ratio.point, row.position, row))
            if not ahead:
                break
            best = min(ahead, key=lambda item: item[:2])[2]
            if id(best) in seen:
                break
            seen.add(id(best))
        return best

    def _entries(self, best):
        """[(row, its time over best's, its standing)] of every other row."""
        found = []
        for row in self.members:
            if row is not best:
                ratio = self.ratio(row, best)
                state = SLOWER if id(row) in self.behind else standing(ratio)
                if state == SAME and standing(self.ratio(row, best, both=True)) != SAME:
                    state = WITHIN
                found.append((row, ratio, state))
        return found

    def beside(self, row, best):
        """(the benchmark of ``row`` run beside ``best``, or of ``best``
        beside ``row``, with the sign that makes its pairs' logs row's time
        over best's), or (None, None)."""
        for this, that, sign in ((row, best, -1), (best, row, 1)):
            runs = getattr(this, "beside_runs", None)
            found = runs.get(that.model) if runs else None
            if found is not None and id(found) in self.levels:
                return found, sign
        return None, None

    def ratio(self, row, best, both=False):
        """row's time over best's: through the speedups, intersected with
        their pairs side by side where they ran so; each two-sided at twice
        its one-sided level, whose lower end the race reads, or (``both``)
        at that level, whose two ends "the same within the band" reads."""
        scale = 1 if both else 2
        through = compare(row, best, alpha=scale * self.alpha)
        found, sign = self.beside(row, best)
        if found is not None:
            direct = ratio_of({number: math.exp(sign * log)
                               for number, log in found.paired_logs.items()},
                              scale * self.levels[id(found)], floor=found.within_floor)
            through = joined(through, direct)
        if both:
            return through
        return through_own(through, self.own.get(id(row)), self.own.get(id(best)))

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
        the allocation runs: a row far behind needs a round or two to be
        shown slower, a close one many. In a race whose rows can
        run side by side, a row not told apart from the leader and within
        NEAR of it runs beside it (``Question.beside``), as does one that
        already did."""
        alpha = self.interval_alpha
        parts = []
        for row, ratio, state in self.entries:
            if state != OPEN:
                continue
            found, _ = self.beside(row, self.leader)
            if self.side_by_side and (found is not None or (
                    ratio and ratio.point <= NEAR)):
                parts.append(self.side_part(kind, workload, topic, row, ratio, found))
                continue
            logs = [math.log(x) for x in ratio.values] if ratio else []
            floor = ratio.log_sd if ratio else None
            needed = rounds_needed(logs, race_room, alpha, floor)
            room = race_room(math.log(ratio.point) if ratio else 0.0)
            parts.append(Question(
                kind, workload, topic, False, [self.leader, row], len(logs), needed,
                pairs=[(row, self.leader)], alpha=alpha, room=room,
                least=least_needed(logs, race_room, alpha, floor)))
        if not self.side_by_side:
            self.with_rivals(parts)
        return Question(kind, workload, topic, not parts,
                        [self.leader] + [p.rows[1] for p in parts] if parts else [],
                        min((p.rounds for p in parts), default=0),
                        max((p.needed for p in parts), default=0),
                        pairs=[pair for p in parts for pair in p.pairs],
                        room=min((p.room for p in parts), default=0.0), alpha=alpha,
                        parts=parts, race=self)

    def with_rivals(self, parts):
        """Each of ``parts`` runs every open rival with the leader (rows
        paired by round): their comparisons rest on the rounds both ran,
        which parts run alone, or the nearest alone, leave few (measured in
        675ce53: git show 675ce53)."""
        for part in parts:
            part.pairs.extend((other.rows[1], self.leader) for other in parts
                              if other.rows[1] is not part.rows[1])

    def side_part(self, kind, workload, topic, row, ratio, found):
        """The part of a race that runs ``row`` beside the leader (or the
        leader beside it, where ``found``, that benchmark, already ran):
        its rounds are the workers side by side, and those it needs come
        from theirs, at the level the comparison has (or will have once
        opened)."""
        level = (self.levels[id(found)] if found is not None
                 else side_level(len(self.levels) + 1))
        # No interval before first_bounded workers: the plan counts them.
        return side_question(kind, workload, topic, [self.leader, row], (row, self.leader),
                             ratio.side if ratio is not None else None, race_room, 2 * level,
                             found.within_floor if found else None,
                             found.name if found is not None else beside_name(
                                 row.name, self.leader.model))


# -- successive elimination: each row's own interval against the reference,
# which puts a row out whatever rounds it shares with the others, and bounds
# its time over the leader's without any shared round.

def own_interval(row, alpha):
    """(low, high) of the row's speedup against the reference at level
    1 - ``alpha``, as its verdict reads it; (1, 1) for the reference
    itself; None while there is none."""
    if row is getattr(row, "reference", None):
        return 1.0, 1.0
    speedups = row.speedups()
    if not speedups:
        return None
    found = ratio_of(speedups, alpha, floor=getattr(row, "within_floor", None))
    if found is None or found.low is None:
        return None
    return found.low, found.high


def through_own(ratio, mine, theirs):
    """``ratio`` (a rival's time over the leader's) intersected with what
    the two rows' own intervals say of it, ``mine`` (the rival's) and
    ``theirs`` ((low, high) of each speedup): [their low / my high, their
    high / my low]. Only its lower end is read, one-sided, and it rests on
    the same two ends as the elimination rule (the rival's upper, the
    leader's lower), so it spends no level of its own. ``ratio`` unchanged
    where either row has no interval yet, where the own intervals' lower
    end is no higher, or where the two do not meet (one of them has erred,
    and the comparison reads as it did without its rows' own intervals)."""
    if not mine or not theirs:
        return ratio
    low, high = theirs[0] / mine[1], theirs[1] / mine[0]
    if ratio is None:
        return Ratio(math.sqrt(low * high), low, high, 0, 0)
    if ratio.low is not None and (low <= ratio.low or low > ratio.high):
        return ratio
    return dataclasses.replace(ratio, low=low,
                               high=high if ratio.high is None else min(high, ratio.high))


def elimination_alpha(rows):
    """The level of each row's own interval in a race of ``rows`` rows:
    two-sided at twice ELIMINATION_ALPHA / rows, since the true fastest is
    left out only through one end of each row's (its own upper, another's
    lower), each one-sided at ELIMINATION_ALPHA / rows."""
    return 2 * ELIMINATION_ALPHA / rows


def side_level(number):
    """The one-sided level of a race's ``number``-th comparison side by
    side, in the order they opened: SIDE_BY_SIDE_ALPHA / 2 ** number, which
    sum to SIDE_BY_SIDE_ALPHA however many open."""
    return rules.SIDE_BY_SIDE_ALPHA / 2 ** number
