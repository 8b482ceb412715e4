"""Which benchmarks run in the rounds a run adds, and how many values each
worker runs.

After each round the master reads the file as the report will
(``concbench.analysis.questions``): each row's verdict, each workload's fastest
model, the best worker counts, where more workers stopped helping. Each
added round runs only what an open question needs: a row's benchmark (with
its reference where it pairs by round), the leader of a race and the rows
still in contention with it (a row shown slower than the leader stops once
its own verdict is decided), or a rival run beside the leader in one
worker (``concbench.analysis.race``: a benchmark the master adds then),
the two ends of an open step. A workload's A/A
control runs in every round that adds a paired round to any of its rows, so
that it ends with as many rounds as the longest row and can see a bias of
the arrangement as well as any row could. Questions likely to be answered
within the budget go first, the cheapest to answer first (the rounds they
still need times what a round of their benchmarks costs), as a plan: a
question joins a round only while it and every cheaper one could all be
answered in the time left (shortest first, which answers the most
questions by a deadline), so that rounds stay short while cheap answers
are near; one that cannot be answered in time runs only when no other is
open, since a budget the user gave is there to be spent, and one that no
number of rounds would answer at its spread only when nothing else is
open. The run stops when every question is answered, when nothing open
fits in the time left (``--max-time``), or when all that is open is given
up: not even the most favourable reading of its rounds could answer it
in that time (``reachable``). The preset's own rounds run every benchmark
whatever it costs: their workers give up the values beyond one where that
round, and the rounds up to the first whose intervals are bounded, would
not fit in what is left (``calibration.fit``).

Looking after every round and stopping as soon as something is answered
keeps the level because every interval is a confidence sequence
(``concbench.analysis.anytime``). How many values each worker runs, and whether it
warms up, is ``concbench.run.calibration``'s; the loop of added rounds,
and what the console says of them, ``concbench.run.added_rounds``'s.
"""

import math

from concbench.analysis import anytime
from concbench.analysis.comparisons import MOST_ROUNDS
from concbench.run import calibration, costs
from concbench.run.progress import changes, say
from concbench.analysis.questions import all_questions, answered_takeaways
from concbench.run.schedule import BY_ROUND, IN_WORKER, NONE
from concbench.schema import beside_of


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
    if question.parts:
        return set().union(*(members(part) for part in question.parts))
    if question.beside:
        return {question.beside}
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


def hopeless(question):
    """Whether no number of rounds up to MOST_ROUNDS would answer
    ``question`` at its spread."""
    return question.needed >= MOST_ROUNDS


def more_rounds(question):
    """The rounds ``question`` is likely to need beyond those it has: at
    least one, since it is open."""
    return max(1, question.needed - question.rounds)


def planned(pieces, joined, plan=None, rounds=more_rounds):
    """{benchmark: rounds}: ``plan`` grown by ``pieces``, each benchmark they
    run (with what ``joined`` brings along) counted for the most rounds any
    of them still needs of it (``rounds``): what answering all of them
    would run."""
    plan = dict(plan or {})
    for piece in pieces:
        for name in joined(members(piece)):
            plan[name] = max(plan.get(name, 0), rounds(piece))
    return plan


def reachable(question, cost, remaining, joined=lambda names: names):
    """Whether ``question`` could be answered in ``remaining`` seconds were
    its rounds as favourable as they allow (``Question.least``); the run
    gives up one that could not."""
    if question.least >= MOST_ROUNDS:
        return False
    plan = planned([question], joined, rounds=lambda q: max(1, q.least - q.rounds))
    return plan_seconds(plan, cost) <= remaining


def plan_seconds(plan, cost):
    """What running ``plan`` ({benchmark: rounds}) costs, summed exactly
    (``math.fsum``), as ``seconds_of`` sums: the order of a set of names
    changes with each process's string hashes, and a rounding would then
    decide whether a question fits in the time left."""
    return math.fsum(cost(name) * count for name, count in plan.items())


def seconds_of(names, cost):
    """What a round of the benchmarks ``names`` costs, summed exactly."""
    return math.fsum(cost(name) for name in names)


def choose(still, cost, remaining, joined=lambda names: names, give_up=True):
    """The open questions to run in the next round, within ``remaining``
    seconds: those likely to be answered within the budget, the cheapest
    to answer first (rounds still needed times the seconds a round of its
    benchmarks costs), each with the benchmarks it needs, while all of
    them could still be answered in the time left; the others only when
    no such question is left, and of those, one that no number of rounds
    would answer (MOST_ROUNDS) only when no other is open. A race counts
    as its comparisons still open (``Question.parts``): the rows it can
    soon show slower leave it first, whatever its closest contender still
    needs. ``cost``: a benchmark's likely seconds, by name; ``joined``:
    the benchmarks a set of them brings along (the controls); ``give_up``
    False: no question is given up (``research.given_up`` compares)."""
    def to_answer(question):
        return more_rounds(question) * seconds_of(joined(members(question)), cost)

    pieces = parts_of(still)
    ranked = sorted(pieces, key=lambda q: (to_answer(q), q.needed - q.rounds, q.label))
    chosen, names, spent = [], set(), 0.0

    def take(question):
        nonlocal spent, names
        grown = joined(names | members(question))
        extra = seconds_of(grown - names, cost)
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
        # Nothing is likely to be answered in the time left: the budget goes
        # to the questions nearest an answer that could still be answered
        # in it were their rounds as favourable as they allow; one that no
        # number of rounds would answer at its spread waits while any other
        # is open. None such left, the run stops: the rest is given up.
        hopes = [q for q in ranked
                 if not give_up or reachable(q, cost, remaining, joined)]
        for question in ([q for q in hopes if not hopeless(q)]
                         or [q for q in hopes if hopeless(q)]):
            take(question)
    return chosen, names, spent


def demands(questions):
    """{benchmark: calibration.Demand}: the most demanding open question
    each benchmark serves."""
    found = {}
    for question in questions:
        if question.answered or question.room <= 0:
            continue
        # A comparison side by side has one unit a worker, as a row has.
        demand = calibration.Demand(question.room, question.alpha, question.rounds,
                                    1 if question.kind in ("row", "control")
                                    or question.beside else 2)
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
        now = answered_takeaways(self.questions)
        if self.plan.precision is None:
            for line in changes(self.answered, now, rounds, elapsed):
                say(line)
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
        wanted = demands(self.questions)
        self.sizes = calibration.plan_sizes(rows, took, wanted,
                                            remaining, *self.fixed, round_budget=budget)
        by_name = {row.name: row for group in self.groups.values() for row in group}
        horizon = None if remaining is None else remaining / max(1, len(wanted))
        for name in filter(beside_of, wanted):
            # A race's comparison side by side: from its own runs once it
            # has some, else from its model's row.
            own, leader = beside_of(name)
            rival = by_name.get(own)
            if rival is None:
                continue
            ran = rival.beside_runs.get(leader)
            sizes = calibration.beside_sizes(ran or rival, took.get(name if ran else own),
                                             rival, wanted[name], horizon)
            if sizes:
                self.sizes[name] = sizes

    def still(self):
        return [q for q in self.questions if not q.answered]

    def cost(self, took):
        def of(name):
            sizes = self.sizes.get(name)
            if sizes:
                return sizes.seconds
            if name not in took and beside_of(name):
                # Not run yet beside the leader: as long as a worker of
                # the model beside the reference.
                name = beside_of(name)[0]
            return took.get(name, costs.OVERHEAD_S)
        return of

    def joined(self, names):
        return with_controls(names, self.groups, self.controls)
