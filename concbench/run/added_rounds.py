"""The rounds added while questions are open, and what the console says
of them: each round's open questions and cost, and when the budget ends,
what the questions still open would need (the rounds their spreads call
for, and which no number of rounds would answer), and the rounds of their
own that run a race's comparisons side by side (``beside_round``,
``io_rounds``). Which benchmarks each round of the matrix runs is
``concbench.run.allocation``'s."""

import math
import time

from concbench.analysis.comparisons import MOST_ROUNDS
from concbench.run.allocation import (choose, hopeless, members, more_rounds, parts_of,
                                      plan_seconds, planned, seconds_of)
from concbench.run.progress import format_duration, say
from concbench.schema import BY_ROUND, NONE
from concbench.formatting import count

# A comparison side by side runs up to this many workers after a round
# that chose it, in rounds of its own, back to back: its unit is the
# worker, and at one worker a round of every open benchmark it would wait
# four such rounds for the four workers its first interval needs.
SIDE_WORKERS = 4


def side_workers(chosen):
    """{benchmark side by side: the workers it is to run in rounds of its
    own, after the round that ran ``chosen``}: each comparison side by side
    chosen up to SIDE_WORKERS in all, as many as it still likely needs."""
    found = {}
    for part in chosen:
        if part.beside:
            found[part.beside] = max(found.get(part.beside, 0),
                                     min(SIDE_WORKERS, more_rounds(part)) - 1)
    return {name: left for name, left in found.items() if left > 0}


def by_round_only(question):
    """Whether ``question`` compares rows paired by round only (a race or
    a step of IO rows): any round that runs its rows is a round of it."""
    return not question.beside and question.kind not in ("row", "control") and all(
        row.pairing in (BY_ROUND, NONE) for pair in question.pairs for row in pair)


def still_open(parts, io_parts):
    """The open ``parts`` (``parts_of``) that ``io_parts`` (``by_round_only``) were:
    the same question and rival, as they stand now (a race's parts run
    every rival still open, so their benchmarks change as rivals leave)."""
    def key(part):
        return part.label, part.rows[-1].name if part.rows else None

    wanted = {key(part) for part in io_parts}
    return [part for part in parts if key(part) in wanted]


def beside_round(still, pending, cost, remaining, io_parts=()):
    """(names, seconds) of the next round of comparisons side by side of
    their own: those of ``still``'s open parts that ``pending``
    (``side_workers``) still gives a worker, if all fit in ``remaining``
    seconds; (set(), 0) when none is left or they do not fit. With them run
    ``io_parts`` (the parts of the last round compared ``by_round_only``, cheapest
    first) still open, while they add no more than the round's own
    seconds: an IO race that waits on its shared rounds gains one for a
    second or so, where it would wait out the round (measured in 15c5f81:
    git show 15c5f81)."""
    parts = parts_of(still)
    names = {part.beside for part in parts if pending.get(part.beside, 0) > 0}
    seconds = seconds_of(names, cost)
    if not names or seconds > remaining:
        return set(), 0.0
    for name in names:
        pending[name] -= 1
    extra, room = set(), min(seconds, remaining - seconds)
    for part in still_open(parts, io_parts):
        grown = extra | members(part)
        if seconds_of(grown - names, cost) <= room:
            extra = grown
    return names | extra, seconds + seconds_of(extra - names, cost)


def io_rounds(chosen, cost, seconds):
    """(io_parts, rounds): the rounds of their own that the IO comparisons
    of a round (its parts compared ``by_round_only``, none given up) get after it, that
    round having chosen ``chosen`` and taken about ``seconds``. Shortest
    first, as the plan is: each, the cheapest to answer first, gets the
    rounds it likely still needs beyond the one it had, while all of them
    add no more than the round's own seconds. A near tie of IO rows needs
    many rounds of a second or two, the CPU rows a few of a minute: run in
    those alone, an IO race would be the last answer of a run, in rounds
    of a few benchmarks after the others (measured in b263dfa: git show
    b263dfa).
    None where the round ran nothing else: its rounds are theirs."""
    io_parts = [part for part in chosen if by_round_only(part) and not hopeless(part)]
    if not io_parts or len(io_parts) == len(chosen):
        return [], 0

    def to_answer(part):
        return more_rounds(part) * seconds_of(members(part), cost)

    taken, plan = [], {}
    for part in sorted(io_parts, key=lambda part: (to_answer(part), part.label)):
        grown = planned([part], lambda names: names, plan,
                        rounds=lambda part: more_rounds(part) - 1)
        if plan_seconds(grown, cost) <= seconds:
            taken.append(part)
            plan = grown
    return taken, max(plan.values(), default=0)


def io_round(still, io_parts, cost, remaining):
    """(names, seconds) of a round of ``io_parts`` alone, those still open,
    if it fits in ``remaining`` seconds; else (set(), 0)."""
    names = set().union(*(members(part) for part in still_open(parts_of(still), io_parts)))
    seconds = seconds_of(names, cost)
    if not names or seconds > remaining:
        return set(), 0.0
    return names, seconds


class RoundsBetween:
    """The rounds of their own that run between two rounds of the matrix,
    after a round that chose ``chosen`` and was to take ``seconds``: its
    comparisons side by side (``side_workers``, ``beside_round``), then its
    IO comparisons alone (``io_rounds``). bench.py and the simulation
    both run them so."""

    def __init__(self, chosen=(), cost=None, seconds=0.0):
        self.pending = side_workers(chosen)
        self.io_parts = [part for part in chosen if by_round_only(part)]
        self.alone, self.io_rounds_left = io_rounds(chosen, cost, seconds)

    def next_round(self, still, cost, remaining):
        """(names, seconds, what the console calls the round) of the next
        such round, or (set(), 0, None) once none is left: the matrix's
        next round runs then."""
        names, seconds = beside_round(still, self.pending, cost, remaining, self.io_parts)
        if names:
            return names, seconds, "side by side"
        if self.io_rounds_left > 0:
            self.io_rounds_left -= 1
            names, seconds = io_round(still, self.alone, cost, remaining)
            if names:
                return names, seconds, "IO comparisons"
        return set(), 0.0, None


def still_needs(still, cost, joined=lambda names: names):
    """(seconds, lost): what the rounds the open questions are likely
    to need would take if their spreads held, round after round the
    benchmarks of those that still need one (``cost``, ``joined`` as in
    ``choose``); lost: the labels of those no number of rounds up to
    MOST_ROUNDS would answer at their spread."""
    pieces = parts_of(still)
    lost = sorted({piece.label for piece in pieces if hopeless(piece)})
    plan = planned([piece for piece in pieces if not hopeless(piece)], joined)
    return plan_seconds(plan, cost), lost


def more_needed(still, cost, joined, elapsed):
    """'at their spreads they would need about 14m10s more (--max-time
    23m)': what a user can give a run that answers them (its first rounds
    as this one, then theirs)."""
    seconds, lost = still_needs(still, cost, joined)
    found = []
    if seconds:
        found.append("at their spreads %s would need about %s more (--max-time %s)" % (
            "the others" if lost else "they", format_duration(seconds),
            "%dm" % math.ceil((elapsed + seconds) / 60)))
    if lost:
        found.append("%s would need more than %d rounds" % ("; ".join(lost), MOST_ROUNDS))
    return "; ".join(found)


def fits_a_round(still, cost, remaining, joined):
    """Whether one round of some open question fits in ``remaining``
    seconds: if so and none runs, the run gave them up
    (``allocation.reachable``) rather than spent its budget."""
    return any(seconds_of(joined(members(part)), cost) <= remaining
               for part in parts_of(still))


def describe(still):
    """'3 rows; fastest in encode, rotate; best thread count in rotate'."""
    rows = sum(1 for q in still if q.kind in ("row", "control"))
    parts = [count(rows, "rows")] if rows else []
    topics = {}
    for q in still:
        if q.kind not in ("row", "control"):
            topics.setdefault(q.topic, []).append(q.workload)
    parts.extend("%s in %s" % (topic, ", ".join(workloads))
                 for topic, workloads in topics.items())
    return "; ".join(parts) or "none"


def add_rounds(master, allocation):
    """Rounds of the open questions' benchmarks while one fits in the
    budget. ``master``: the cli's, which runs a round (``add_round``) and
    knows the suite, the start, the rounds so far and what each
    benchmark's worker last took (``took``, by name)."""
    plan = allocation.plan
    extra, between = [], RoundsBetween()
    while True:
        elapsed = time.monotonic() - master.start
        rounds = master.rounds_done()
        allocation.read(master.results.suite, master.took_by_name(), rounds, elapsed)
        # A file this run appends to may hold benchmarks of earlier runs
        # that this one does not run: their questions are not this run's.
        # Nor are those that need a row whose batches were lost.
        still = [q for q in allocation.still()
                 if all((name in master.order or master.can_add(name))
                        and name not in master.lost for name in members(q))]
        if not still:
            say("every %s after %s (%s)" % (
                "row is decided and within +-%g%%" % plan.precision if plan.precision
                else "question is answered", count(rounds, "rounds"), format_duration(elapsed)))
            return
        remaining = plan.max_time - elapsed
        cost = allocation.cost(master.took_by_name())
        names, spent, how = between.next_round(still, cost, remaining)
        if names:
            indexes = sorted(master.order[name] for name in names if name in master.order)
            extra.append(indexes)
            say("round %d (added, %s): %s; about %s; %s left of %s" % (
                rounds + 1, how, ", ".join(sorted(names)), format_duration(spent),
                format_duration(max(0, remaining)), format_duration(plan.max_time)))
            master.add_round(indexes, extra)
            continue
        chosen, names, spent = choose(still, cost, remaining, allocation.joined)
        between = RoundsBetween(chosen, cost, spent)
        if not chosen:
            needs = more_needed(still, cost, allocation.joined, elapsed)
            if fits_a_round(still, cost, remaining, allocation.joined):
                say("stopped after %s (%s), %s left of %s: still open: %s, which no "
                    "rounds that fit in that time would answer, even at the most "
                    "favourable reading of their spreads; %s" % (
                        count(rounds, "rounds"), format_duration(elapsed),
                        format_duration(remaining), format_duration(plan.max_time),
                        describe(still), needs))
            else:
                say("time budget (%s) spent after %s: still open: %s; %s" % (
                    format_duration(plan.max_time), count(rounds, "rounds"), describe(still),
                    needs))
            return
        for name in sorted(names):
            if name not in master.order and master.can_add(name):
                master.add_beside(name)
        indexes = sorted(master.order[name] for name in names if name in master.order)
        extra.append(indexes)
        say("round %d (added): open: %s; %d benchmarks in this round, about %s; "
            "%s left of %s" % (rounds + 1, describe(still), len(indexes),
                               format_duration(spent), format_duration(max(0, remaining)),
                               format_duration(plan.max_time)))
        master.add_round(indexes, extra)
