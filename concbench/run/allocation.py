"""Which benchmarks run in the rounds a run adds, and how many values each
worker runs.

After each round the master reads the file as the report will
(``concbench.analysis.questions``): each row's verdict, each workload's fastest
model, the best worker counts, where more workers stopped helping. Each
added round runs only what an open question needs: a row's benchmark (with
its reference where it pairs by round), the leader of a race and the rows
still in contention with it (a row shown slower than the leader stops once
its own verdict is decided), the two ends of an open step. A workload's A/A
control runs in every round that adds a paired round to any of its rows, so
that it ends with as many rounds as the longest row and can see a bias of
the arrangement as well as any row could. Questions likely to be answered
within the budget go first, the cheapest to answer first (the rounds they
still need times what a round of their benchmarks costs), as a plan: a
question joins a round only while it and every cheaper one could all be
answered in the time left (shortest first, which answers the most
questions by a deadline), so that rounds stay short while cheap answers
are near; one that cannot be answered in time runs only when no other is
open, since a budget the user gave is there to be spent. The run stops
when every question is answered or nothing open fits in the time left
(``--max-time``). The preset's own rounds run every benchmark whatever it
costs: their workers give up the values beyond one where that round, and
the rounds up to the first whose intervals are bounded, would not fit in
what is left (``calibration.fit``).

Looking after every round and stopping as soon as something is answered
keeps the 95% because every interval is a confidence sequence
(``concbench.analysis.anytime``). How many values each worker runs, and whether it
warms up, is ``concbench.run.calibration``'s.
"""

import math
import time

from concbench.analysis import anytime
from concbench.analysis.comparisons import MOST_ROUNDS
from concbench.run import calibration
from concbench.run.progress import format_duration, say
from concbench.analysis.questions import all_questions
from concbench.run.schedule import BY_ROUND, IN_WORKER, NONE


def runs_needed(row, other):
    """The benchmarks a round must run to add a round to row's comparison
    with other: both, but the reference when the other's worker pairs with
    it itself."""
    needed = set()
    for this, that in ((row, other), (other, row)):
        if not (this.pairing == NONE and that.pairing == IN_WORKER):
            needed.add(this.name)
    return needed


def members(question):
    """The benchmarks a round of ``question`` runs: a row, with its
    reference where it pairs by round; both rows of each open comparison
    (rows paired by round compare their own runs of the same round, and
    need no run of the reference)."""
    if question.kind in ("row", "control"):
        row = question.rows[0]
        if row.pairing == BY_ROUND and row.reference is not None:
            return {row.name, row.reference.name}
        return {row.name}
    found = set()
    for row, other in question.pairs:
        found |= runs_needed(row, other)
    return found


def with_controls(names, groups, controls):
    """``names`` and the A/A controls that must join them: a workload's
    control runs in every round that adds a paired round to one of its
    rows (a row paired in its worker runs, or the reference runs for the
    rows paired by round), so that it has as many rounds as its longest
    row."""
    found = set(names)
    for workload, rows in groups.items():
        control = controls.get(workload)
        if control is None or control.reference is None:
            continue
        reference = control.reference
        if any(r.name in names and r.pairing == IN_WORKER for r in rows) or \
                reference.name in names:
            found.add(control.name)
            if control.pairing == BY_ROUND:
                found.add(reference.name)
    return found


def parts_of(still):
    """The open questions as the allocation runs them: a race as its
    comparisons still open (``Question.parts``), any other whole."""
    return [part for question in still for part in (question.parts or [question])]


def more_rounds(question):
    """The rounds ``question`` is likely to need beyond those it has: at
    least one, since it is open."""
    return max(1, question.needed - question.rounds)


def planned(pieces, joined, plan=None):
    """{benchmark: rounds}: ``plan`` grown by ``pieces``, each benchmark they
    run (with what ``joined`` brings along) counted for the most rounds any
    of them still needs of it: what answering all of them would run."""
    plan = dict(plan or {})
    for piece in pieces:
        for name in joined(members(piece)):
            plan[name] = max(plan.get(name, 0), more_rounds(piece))
    return plan


def plan_seconds(plan, cost):
    return sum(cost(name) * count for name, count in plan.items())


def choose(still, cost, remaining, joined=lambda names: names):
    """The open questions to run in the next round, within ``remaining``
    seconds: those likely to be answered within the budget, the cheapest
    to answer first (rounds still needed times the seconds a round of its
    benchmarks costs), each with the benchmarks it needs, while all of
    them could still be answered in the time left; the others only when
    no such question is left. A race counts as its comparisons still
    open (``Question.parts``): the rows it can soon show slower leave it
    first, whatever its closest contender still needs. ``cost``: a
    benchmark's likely seconds, by name; ``joined``: the benchmarks a set
    of them brings along (the controls)."""
    def to_answer(question):
        return more_rounds(question) * sum(cost(name) for name in joined(members(question)))

    pieces = parts_of(still)
    ranked = sorted(pieces, key=lambda q: (to_answer(q), q.needed - q.rounds, q.label))
    chosen, names, spent = [], set(), 0.0

    def take(question):
        nonlocal spent, names
        grown = joined(names | members(question))
        extra = sum(cost(name) for name in grown - names)
        if spent + extra > remaining:
            return False
        chosen.append(question)
        names = grown
        spent += extra
        return True
    # Shortest first, as a plan: a question joins while every question
    # chosen before it could still be answered in the time left, each
    # benchmark counted for the most rounds any of them needs of it. One
    # that fits alone but not after the cheaper ones waits for them, so
    # that rounds stay short while cheap answers are near.
    plan = {}
    for question in ranked:
        grown = planned([question], joined, plan)
        if plan_seconds(grown, cost) <= remaining and take(question):
            plan = grown
    if not chosen:
        for question in ranked:
            take(question)
    return chosen, names, spent


def demands(questions):
    """{benchmark: calibration.Demand}: the most demanding open question
    each benchmark serves."""
    found = {}
    for question in questions:
        if question.answered or question.room <= 0:
            continue
        demand = calibration.Demand(question.room, question.alpha, question.rounds,
                                    1 if question.kind in ("row", "control") else 2)
        for name in members(question):
            found[name] = demand.harder(found.get(name))
    return found


class Allocation:
    """The master's view of the questions between rounds: which are open,
    which were answered and when, and each benchmark's next worker
    (``sizes``)."""

    def __init__(self, plan, fixed_values=None, fixed_warmups=None):
        self.plan = plan
        self.fixed = (fixed_values, fixed_warmups)
        self.sizes = {}
        self.answered = set()
        self.groups, self.controls, self.questions = {}, {}, []

    def read(self, suite, took, rounds, elapsed, fixed_left=0):
        """Read the file after a round: the questions, what was answered
        since the last reading (said on the console), and each benchmark's
        next worker; ``fixed_left``: the preset's rounds still to run, each
        of every benchmark, which share what is left of the budget."""
        from concbench.analysis.rows import build_rows

        if suite is None:
            return
        self.controls = {}
        self.groups = build_rows(suite, self.controls)
        self.questions = all_questions(self.groups, self.controls, self.plan.precision)
        now = {q.label for q in self.questions if q.answered and q.kind not in ("row", "control")}
        fresh = sorted(now - self.answered)
        if fresh and self.plan.precision is None:
            say("answered after %d rounds (%s): %s" % (
                rounds, format_duration(elapsed), "; ".join(fresh)))
        self.answered = now
        rows = {w: g + ([self.controls[w]] if w in self.controls else [])
                for w, g in self.groups.items()}
        remaining = (self.plan.max_time - elapsed) if self.plan.adaptive else None
        budget = None
        if remaining is not None and fixed_left:
            # No interval is bounded before round first_bounded(): the
            # rounds up to it run every row, whatever the preset's count.
            budget = max(0.0, remaining) / max(fixed_left,
                                               anytime.first_bounded() - rounds)
        self.sizes = calibration.plan_sizes(rows, took, demands(self.questions),
                                            remaining, *self.fixed, round_budget=budget)

    def still(self):
        return [q for q in self.questions if not q.answered]

    def cost(self, took):
        def of(name):
            sizes = self.sizes.get(name)
            return sizes.seconds if sizes else took.get(name, calibration.OVERHEAD_S)
        return of

    def joined(self, names):
        return with_controls(names, self.groups, self.controls)


def add_rounds(master, allocation):
    """Rounds of the open questions' benchmarks while one fits in the
    budget. ``master``: the cli's, which runs a round (``add_round``) and
    knows the suite, the start, the rounds so far and what each
    benchmark's worker last took (``took``, by name)."""
    plan = allocation.plan
    extra = []
    while True:
        elapsed = time.monotonic() - master.start
        rounds = master.rounds_done()
        allocation.read(master.results.suite, master.took_by_name(), rounds, elapsed)
        # A file this run appends to may hold benchmarks of earlier runs
        # that this one does not run: their questions are not this run's.
        still = [q for q in allocation.still() if members(q) <= set(master.order)]
        if not still:
            say("every %s after %d rounds (%s)" % (
                "row is decided and within +-%g%%" % plan.precision if plan.precision
                else "question is answered", rounds, format_duration(elapsed)))
            return
        remaining = plan.max_time - elapsed
        cost = allocation.cost(master.took_by_name())
        chosen, names, spent = choose(still, cost, remaining, allocation.joined)
        if not chosen:
            say("time budget (%s) spent after %d rounds: still open: %s; %s" % (
                format_duration(plan.max_time), rounds, describe(still),
                more_needed(still, cost, allocation.joined, elapsed)))
            return
        indexes = sorted(master.order[name] for name in names if name in master.order)
        extra.append(indexes)
        say("round %d (added): open: %s; %d benchmarks in this round, about %s; "
            "%s left of %s" % (rounds + 1, describe(still), len(indexes),
                               format_duration(spent), format_duration(max(0, remaining)),
                               format_duration(plan.max_time)))
        master.add_round(indexes, extra)


def still_needs(still, cost, joined=lambda names: names):
    """(seconds, hopeless): what the rounds the open questions are likely
    to need would take if their spreads held, round after round the
    benchmarks of those that still need one (``cost``, ``joined`` as in
    ``choose``); hopeless: the labels of those no number of rounds up to
    MOST_ROUNDS would answer at their spread."""
    pieces = parts_of(still)
    hopeless = sorted({piece.label for piece in pieces if piece.needed >= MOST_ROUNDS})
    plan = planned([piece for piece in pieces if piece.needed < MOST_ROUNDS], joined)
    return plan_seconds(plan, cost), hopeless


def more_needed(still, cost, joined, elapsed):
    """'at their spreads they would need about 14m10s more (--max-time
    23m)': what a user can give a run that answers them (its first rounds
    as this one, then theirs)."""
    seconds, hopeless = still_needs(still, cost, joined)
    found = []
    if seconds:
        found.append("at their spreads %s would need about %s more (--max-time %s)" % (
            "the others" if hopeless else "they", format_duration(seconds),
            "%dm" % math.ceil((elapsed + seconds) / 60)))
    if hopeless:
        found.append("%s would need more than %d rounds" % ("; ".join(hopeless), MOST_ROUNDS))
    return "; ".join(found)


def describe(still):
    """'3 rows; fastest in encode, rotate; best thread count in rotate'."""
    rows = sum(1 for q in still if q.kind in ("row", "control"))
    parts = ["%d row%s" % (rows, "" if rows == 1 else "s")] if rows else []
    topics = {}
    for q in still:
        if q.kind not in ("row", "control"):
            topics.setdefault(q.topic, []).append(q.workload)
    parts.extend("%s in %s" % (topic, ", ".join(workloads))
                 for topic, workloads in topics.items())
    return "; ".join(parts) or "none"

