"""Rounds until each row is decided: verdicts, the added rounds, the budget.

Mechanics are tested on the sleep workload, whose speedups are set by its
latencies (deterministic to a fraction of a percent), so that whether a row
is decided does not depend on how busy the machine is.
"""

import json
import math
import random
import re
import statistics

import pyperf

from types import SimpleNamespace

import pytest

from concbench.run import added_rounds, allocation, progress
from concbench import rules
from concbench.analysis import anytime, comparisons
from concbench.analysis.questions import all_questions
from concbench.analysis.rows import build_rows
from concbench.report.verdicts import takeaways
from concbench.run.schedule import format_extra, parse_extra, schedule
from concbench.rules import verdict
from concbench.analysis.stats import Ratio, half_width
from conftest import flat, run, run_bench

SLEEP = ["--workload", "sleep", "--model", "sequential,threads-2,asyncio",
         "--items", "4", "--latency-ms", "5", "--jitter-ms", "0",
         "-n", "1", "-w", "0", "--quiet"]


@pytest.mark.quick
def test_verdicts_follow_the_interval():
    assert verdict(Ratio(1.5, 1.2, 1.9, 3, 3)) == "faster"
    assert verdict(Ratio(0.5, 0.4, 0.6, 0, 3)) == "slower"
    assert verdict(Ratio(1.0, 0.97, 1.03, 2, 3)) == "same"
    assert verdict(Ratio(1.1, 0.9, 1.3, 2, 3)) == "undecided"
    assert verdict(Ratio(1.1, None, None, 1, 1)) == "undecided"
    assert verdict(None) == "undecided"
    assert abs(half_width(Ratio(2.0, 1.8, 2.2, 3, 3)) - 0.1) < 1e-9


@pytest.mark.quick
def test_extra_rounds_extend_the_schedule_alike_in_every_process():
    extra = [[0, 2], [2, 0]]
    assert parse_extra(format_extra(extra)) == extra
    tasks = schedule(3, 2, 7, extra=extra)
    assert tasks[:6] == schedule(3, 2, 7)
    assert sorted(tasks[6:8]) == [(2, 0), (2, 2)]
    assert sorted(tasks[8:]) == [(3, 0), (3, 2)]


def file_of(ratios, rounds):
    """A suite whose model 'm' has the given per-round speedups."""
    benchmarks = []
    for model, times in (("sequential", [1.0] * rounds),
                         ("m", [1.0 / ratios[r % len(ratios)] for r in range(rounds)])):
        runs = [pyperf.Run([value], metadata={
            "name": "w/" + model, "workload": "w", "workload_kind": "cpu",
            "model": model, "reference_model": "sequential", "round": number,
            "items_per_batch": 4, "concurrency": 1, "parallelism": 1,
            "interpreters": 1, "item_side": "sync", "unit": "second"},
            collect_metadata=False) for number, value in enumerate(times)]
        benchmarks.append(pyperf.Benchmark(runs))
    return pyperf.BenchmarkSuite(benchmarks)


def opened(suite, precision=None):
    """The open questions of a file, as bench.py reads them between rounds."""
    controls = {}
    groups = build_rows(suite, controls)
    return [(q.label, q.kind) for q in all_questions(groups, controls, precision)
            if not q.answered]


@pytest.mark.quick
def test_open_questions_are_the_undecided_rows_and_the_open_races():
    # Two rounds decide nothing: the interval is unbounded until three.
    assert opened(file_of([2.0, 2.02], 2)) == [("w/m", "row"), ("w: fastest", "fastest")]
    assert opened(file_of([1.3, 0.8, 1.1], 6)) == [("w/m", "row"), ("w: fastest", "fastest")]
    assert opened(file_of([2.0, 2.02, 1.98], 6)) == []
    # Decided, but not within +-1%: open under --precision 1, which asks
    # nothing of the takeaways.
    tight = file_of([2.0, 2.1, 1.9], 6)
    assert opened(tight) == []
    assert opened(tight, precision=1) == [("w/m", "row")]
    # Within +-5% but straddling 1 and the band's end (0.99x [0.95-1.04]):
    # precise enough, yet it says nothing, so it stays open.
    vague = file_of([0.965, 1.015, 0.99], 6)
    assert opened(vague, precision=5) == [("w/m", "row")]
    assert opened(file_of([0.995, 1.005, 1.0], 6), precision=5) == []


@pytest.mark.quick
def test_rounds_needed_grow_with_the_spread_and_near_the_band():
    logs = [math.log(x) for x in (1.3, 1.5, 1.1)]
    # Two rounds are too few to give a question up.
    assert comparisons.rounds_needed(logs[:1], rules.verdict_room) == 2
    assert comparisons.rounds_needed([0.5, -0.5], rules.verdict_room) == 3
    clear = comparisons.rounds_needed(logs, rules.verdict_room)
    noisier = comparisons.rounds_needed([2 * x for x in logs[1:]] + [-0.1],
                                      rules.verdict_room)
    assert 3 < clear < noisier
    near_one = comparisons.rounds_needed([0.06, -0.04, 0.01], rules.verdict_room)
    assert near_one > clear
    assert comparisons.rounds_needed([0.5, -0.5, 0.0], rules.verdict_room) \
        == comparisons.MOST_ROUNDS
    assert comparisons.rounds_needed(logs, comparisons.precision_room(1)) > \
        comparisons.rounds_needed(logs, comparisons.precision_room(10))
    # A stricter level (a race of many rows) needs more rounds.
    assert comparisons.rounds_needed(logs, rules.verdict_room, alpha=0.05 / 16) > clear


@pytest.mark.quick
def test_a_question_is_given_up_only_when_its_most_favourable_reading_is_far():
    """A step whose rounds centre on the 5% it must clear (so that at its
    point estimates no number of rounds answers it) could still be
    answered were its mean one standard error away: the fewest rounds that
    reading needs grows with the rounds it has, and passes 200 only after
    a dozen or more."""
    rnd = random.Random(3)
    least = []
    for count in (3, 5, 8, 12, 20, 40):
        draws = [rnd.gauss(0, 1) for _ in range(count)]
        middle, spread = statistics.mean(draws), statistics.stdev(draws)
        logs = [math.log(rules.HELPED) + 0.1 * (x - middle) / spread for x in draws]
        assert comparisons.rounds_needed(logs, rules.step_room) == comparisons.MOST_ROUNDS
        least.append(comparisons.least_needed(logs, rules.step_room))
    assert least == sorted(least) and least[0] < 50 and least[3] < comparisons.MOST_ROUNDS
    assert least[-1] == comparisons.MOST_ROUNDS
    # A row near its answer: no fewer rounds than it has, none more than
    # its point estimates need; below three rounds, one more.
    logs = [rnd.gauss(0.1, 0.05) for _ in range(6)]
    assert 6 <= comparisons.least_needed(logs, rules.verdict_room) <= \
        comparisons.rounds_needed(logs, rules.verdict_room)
    assert comparisons.least_needed(logs[:2], rules.verdict_room) == 3


class Q:
    """A question as allocation.choose reads it."""

    def __init__(self, label, rounds, needed, names, least=None):
        self.label, self.rounds, self.needed = label, rounds, needed
        self.least = needed if least is None else least
        self.kind, self.parts, self.beside = "fastest", [], None
        self.pairs = [(N(a), N(b)) for a, b in zip(names, names[1:])] or \
            [(N(names[0]), N(names[0]))]
        self.rows = [self.pairs[0][0]] + [pair[1] for pair in self.pairs]


class N:
    pairing = "worker"

    def __init__(self, name):
        self.name = name


@pytest.mark.quick
def test_questions_likely_to_be_answered_go_first_within_the_budget():
    still = [Q("slow-hope", 3, 60, ["w/a"], least=15), Q("soon", 3, 4, ["w/b"]),
             Q("later", 3, 6, ["w/c"])]
    cost = {"w/a": 1.0, "w/b": 1.0, "w/c": 2.0}.get
    chosen, members, spent = allocation.choose(still, cost, remaining=20.0)
    # 57 more rounds of 1 s do not fit in 20 s: left out while others can win.
    assert [q.label for q in chosen] == ["soon", "later"]
    assert members == {"w/b", "w/c"} and spent == 3.0
    chosen, _, _ = allocation.choose(still, cost, remaining=2.5)
    assert [q.label for q in chosen] == ["soon"]
    # Alone, a question unlikely to be answered in time still gets the
    # budget while its most favourable reading (12 more rounds) fits in it.
    chosen, _, _ = allocation.choose(still[:1], cost, remaining=20.0)
    assert [q.label for q in chosen] == ["slow-hope"]
    # When nothing fits, the last rounds go to the answers nearest: one
    # that no number of rounds would answer waits while another is open.
    never = Q("never", 3, allocation.MOST_ROUNDS, ["w/c"], least=10)
    chosen, names, _ = allocation.choose([never, still[0]], cost, remaining=20.0)
    assert [q.label for q in chosen] == ["slow-hope"] and names == {"w/a"}
    assert [q.label for q in allocation.choose([never], cost, 20.0)[0]] == ["never"]
    assert allocation.choose(still, cost, remaining=0.5)[0] == []
    # Given up: one that even its most favourable reading could not answer
    # in the time left (37 more rounds of 1 s in 20 s), or not in 200 rounds
    # (197 more rounds of 2 s do not fit in 300 s).
    assert allocation.choose([Q("far", 3, 60, ["w/a"], least=40)], cost, 20.0)[0] == []
    assert allocation.choose([Q("far", 3, 60, ["w/a"], least=40)], cost, 40.0)[0] != []
    assert allocation.choose([Q("never", 3, allocation.MOST_ROUNDS, ["w/c"])], cost,
                             300.0)[0] == []
    # The cheapest to answer first: 3 rounds of 0.4 s before 1 round of 11 s.
    cheap = [Q("dear", 4, 5, ["w/ref", "w/d"]), Q("a vs b", 4, 7, ["w/a", "w/b"], least=5)]
    cost = {"w/ref": 10.0, "w/d": 1.0, "w/a": 0.2, "w/b": 0.2}.get
    chosen, names, spent = allocation.choose(cheap, cost, remaining=5.0)
    assert [q.label for q in chosen] == ["a vs b"] and spent == pytest.approx(0.4)
    # What a round brings along (the controls) counts in its cost.
    joined = lambda names: names | {"w/control"}
    cost = {"w/a": 0.2, "w/b": 0.2, "w/control": 3.0}.get
    assert allocation.choose(cheap[1:], cost, 3.0, joined)[0] == []
    assert allocation.choose(cheap[1:], cost, 3.5, joined)[1] == {"w/a", "w/b", "w/control"}


@pytest.mark.quick
def test_a_question_that_fits_alone_waits_for_the_cheaper_ones_to_be_answered():
    """Two questions 2 rounds of 1 s from an answer, one 3 rounds of 5 s
    from its own: each fits in 16 s alone, all three do not. The round
    runs the two cheap ones (2 s, not 7 s), which the plan answers first;
    the dear one runs once it is the only one open, the budget being there
    to be spent while its most favourable reading fits in it."""
    still = [Q("cheap a", 3, 5, ["w/a"]), Q("cheap b", 3, 5, ["w/b"]),
             Q("dear", 3, 6, ["w/c"], least=4)]
    cost = {"w/a": 1.0, "w/b": 1.0, "w/c": 5.0}.get
    chosen, names, spent = allocation.choose(still, cost, remaining=16.0)
    assert [q.label for q in chosen] == ["cheap a", "cheap b"]
    assert names == {"w/a", "w/b"} and spent == 2.0
    # With room for all three plans (19 s), all three run.
    assert len(allocation.choose(still, cost, remaining=19.0)[0]) == 3
    chosen, _, _ = allocation.choose(still[2:], cost, remaining=12.0)
    assert [q.label for q in chosen] == ["dear"]


@pytest.mark.quick
def test_a_spent_budget_says_what_the_open_questions_would_need():
    """Round after round, the benchmarks of the questions that still need
    one: 2 rounds of a and b (3 s), then 3 more of c alone (6 s); a
    question that no 200 rounds would answer is named, not counted."""
    still = [Q("ab", 3, 5, ["w/a", "w/b"]), Q("c", 3, 8, ["w/c"])]
    cost = {"w/a": 1.0, "w/b": 0.5, "w/c": 2.0}.get
    assert added_rounds.still_needs(still, cost) == (2 * 3.5 + 3 * 2.0, [])
    # The controls a round brings along count in every round.
    joined = lambda names: names | {"w/control"}
    cost = {"w/a": 1.0, "w/b": 0.5, "w/c": 2.0, "w/control": 1.0}.get
    assert added_rounds.still_needs(still, cost, joined)[0] == 2 * 4.5 + 3 * 3.0
    hopeless = still + [Q("hopeless", 3, comparisons.MOST_ROUNDS, ["w/d"])]
    assert added_rounds.still_needs(hopeless, cost)[1] == ["hopeless"]
    assert added_rounds.more_needed(hopeless, cost, lambda names: names, 300.0) == (
        "at their spreads the others would need about 13s more (--max-time 6m); "
        "hopeless would need more than 200 rounds")


@pytest.mark.quick
def test_the_console_says_an_answer_that_is_open_again():
    """A race answered after round 8 whose leader changed by round 9 is
    said open again: the console never leaves an answer standing that the
    file no longer holds."""
    before = {"encode: fastest", "encode: best thread count"}
    assert progress.changes(set(), before, 8, 817.0) == [
        "answered after 8 rounds (13m37s): encode: best thread count; encode: fastest"]
    assert progress.changes(before, {"encode: fastest", "sleep: fastest"}, 9, 900.0) == [
        "answered after 9 rounds (15m00s): sleep: fastest",
        "open again after 9 rounds (15m00s): encode: best thread count"]
    assert progress.changes(before, before, 10, 950.0) == []
    # A file appended to may hold answers before this run's first round.
    assert progress.changes(set(), {"sleep: fastest"}, 1, 0.4) == [
        "answered after 1 round (0s): sleep: fastest"]


@pytest.mark.quick
def test_a_race_runs_the_rows_it_can_soon_leave_behind():
    """A race of a leader, a row far behind it (1.25x its time) and one
    close to it, after 3 rounds (IO rows, paired by round): the far one
    needs a round or two more to be shown slower, the close one well over
    a dozen. Its far comparison runs now, beside another question, though
    the whole race cannot be answered in the budget, and with it the close
    one: each part runs every open rival, so that every comparison gains
    the rounds the race gets (they rest on the rounds both rows ran)."""
    from concbench.analysis.race import Race

    def row(name, position, speedup):
        rnd = random.Random(name)
        speedups = {r: speedup * math.exp(rnd.gauss(0, 0.03)) for r in range(3)}
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing="round", speedup=speedup, mean=1 / speedup,
                               within_floor=None, speedups=lambda: speedups,
                               by_round={r: 1 / x for r, x in speedups.items()})
    leader, far, close = row("lead", 0, 2.0), row("far", 1, 1.6), row("close", 2, 1.96)
    race = Race([leader, far, close]).question("fastest", "w", "fastest")
    assert race.parts and not race.answered and race.needed >= 15
    by_row = {part.rows[1].name: part for part in race.parts}
    assert by_row["w/far"].needed <= 5 < 15 <= by_row["w/close"].needed
    assert all(allocation.members(part) == {"w/lead", "w/far", "w/close"}
               for part in race.parts)
    cost = {"w/lead": 1.0, "w/far": 1.0, "w/close": 1.0, "w/b": 1.0}.get
    chosen, names, _ = allocation.choose([race, Q("soon", 3, 4, ["w/b"])], cost, 20.0)
    assert sorted(q.rows[1].name if q in race.parts else q.label for q in chosen) == [
        "soon", "w/far"]
    assert names == {"w/lead", "w/far", "w/close", "w/b"}


def rows_of_a_faster_rival(pairing):
    """A leader picked by its speedup over its 8 rounds, and a rival that
    reads 7% faster on the 3 rounds it shares with it."""
    def row(name, position, speedups):
        speedup = math.exp(statistics.fmean(math.log(x) for x in speedups.values()))
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing=pairing, speedup=speedup, mean=1 / speedup,
                               within_floor=None, reference=None,
                               by_round={r: 1 / x for r, x in speedups.items()},
                               speedups=lambda: speedups)
    rnd = random.Random(5)
    leader = row("lead", 0, {r: (2.0 if r < 3 else 2.4) * math.exp(rnd.gauss(0, 0.02))
                             for r in range(8)})
    rival = row("rival", 1, {r: 2.15 * math.exp(rnd.gauss(0, 0.02)) for r in range(3)})
    return leader, rival


@pytest.mark.quick
def test_a_rival_that_reads_faster_than_the_leader_leads():
    """On the 3 rounds a rival shares with the row of the best speedup, it
    reads 7% faster (rows paired by round): those rounds are what the race
    reads, so the rival leads, and the row of the best speedup is the part
    still open, which a few rounds show slower, not MOST_ROUNDS."""
    from concbench.analysis.race import Race

    leader, rival = rows_of_a_faster_rival("round")
    assert leader.speedup > rival.speedup
    race = Race([leader, rival])
    assert race.leader is rival and not race.side_by_side
    [part] = race.question("fastest", "w", "fastest").parts
    assert part.rows == [rival, leader] and part.rounds == 3 and part.beside is None
    assert part.needed < comparisons.MOST_ROUNDS and not allocation.hopeless(part)


@pytest.mark.quick
def test_a_rival_that_reads_over_5_percent_faster_is_not_hopeless():
    """The race's room for a rival that reads more than 5% faster than its
    leader: no number of rounds shows it "no more than 5% faster", but a
    few show it faster, and the race goes on with it in the lead; its part
    needs a few rounds, not MOST_ROUNDS. (With only the first two answers
    counted, it needs 200 and waits while any other question is open.)"""
    logs = [math.log(0.93) + 0.02 * math.sin(i) for i in range(3)]
    assert comparisons.rounds_needed(logs, rules.race_room, 0.04) < \
        comparisons.MOST_ROUNDS
    assert comparisons.least_needed(logs, rules.race_room, 0.04) < \
        comparisons.MOST_ROUNDS


@pytest.mark.quick
def test_a_rival_near_the_leader_runs_beside_it():
    """The same rows paired in their worker: the rival, not told apart from
    the leader and within 10% of it, runs beside it, in a benchmark of its
    own that the allocation runs alone, and the race reads that
    benchmark's pairs. Its first comparison side by side is at 1% one-sided
    (the next would be at 0.5%), and has no interval before 4 workers."""
    from concbench.analysis.race import Race

    leader, rival = rows_of_a_faster_rival("worker")
    race = Race([leader, rival])
    assert race.side_by_side and race.alpha == pytest.approx(0.02)
    [part] = race.question("fastest", "w", "fastest").parts
    assert part.beside == "w/rival beside lead" and part.rounds == 0
    assert part.alpha == pytest.approx(0.02) and part.needed == anytime.first_bounded(0.02) == 4
    assert allocation.members(part) == {"w/rival beside lead"}
    # Its workers ran: the rival a fifth of the band slower than the leader
    # beside it (1% at a band of 5%), each worker's median log(leader's time
    # / rival's) near that.
    rnd = random.Random(3)
    fifth = rules.BAND / 5
    ran = SimpleNamespace(name="w/rival beside lead", position=2, within_floor=fifth,
                          paired_logs={r: -fifth + rnd.gauss(0, fifth / 2) for r in range(3, 9)})
    rival.beside_runs = {"lead": ran}
    race = Race([leader, rival])
    assert race.levels == {id(ran): pytest.approx(0.01)}
    [(_, ratio, state)] = race.entries
    assert ratio.side is not None and ratio.side.rounds == 6
    # Through the speedups alone it is open; beside the leader it is shown
    # the same within the band.
    low, high = rules.SAME_BAND
    through = comparisons.compare(rival, leader, alpha=2 * race.alpha)
    assert through.low is None or through.low < low
    assert state == "same" and low <= ratio.low < 1.0 < ratio.high <= high
    assert race.question("fastest", "w", "fastest").answered


@pytest.mark.quick
def test_comparisons_side_by_side_take_their_levels_in_the_order_they_opened():
    """The j-th comparison side by side a race opened is held to 1% / 2^(j-1)
    one-sided, by the round it first ran, whatever the file's order (a
    file appended to keeps an earlier run's benchmarks first only while
    this run has not added them again): the level of a comparison is fixed
    when it opens, before its own data."""
    from concbench.analysis.race import Race

    leader, rival = rows_of_a_faster_rival("worker")
    other = SimpleNamespace(**{**vars(rival), "name": "w/other", "model": "other",
                               "position": 2})
    first = SimpleNamespace(name="w/other beside lead", position=9, within_floor=0.01,
                            paired_logs={3: -0.01, 4: -0.02})
    later = SimpleNamespace(name="w/rival beside lead", position=8, within_floor=0.01,
                            paired_logs={5: -0.01, 6: -0.02})
    rival.beside_runs, other.beside_runs = {"lead": later}, {"lead": first}
    race = Race([leader, rival, other])
    assert race.levels == {id(first): pytest.approx(0.01), id(later): pytest.approx(0.005)}


@pytest.mark.quick
def test_a_comparison_side_by_side_runs_its_next_workers_in_rounds_of_its_own():
    """A part side by side that a round chose, after 1 of the 5 workers it
    needs, runs 3 more right after, in rounds of its own (4 in all, up to
    SIDE_WORKERS), each only if it fits in the time left and only while
    it is open; a part that needs one more worker runs none of its own."""
    near = Q("near", 1, 5, ["w/a"])
    near.beside = "w/a beside lead"
    last = Q("last", 3, 4, ["w/b"])
    last.beside = "w/b beside lead"
    pending = added_rounds.side_workers([near, last, Q("row", 2, 3, ["w/c"])])
    assert pending == {"w/a beside lead": 3}
    cost = {"w/a beside lead": 4.0}.get
    assert added_rounds.beside_round([near], pending, cost, 3.0) == (set(), 0.0)
    assert pending == {"w/a beside lead": 3}
    for _ in range(2):
        assert added_rounds.beside_round([near, last], pending, cost, 60.0) == (
            {"w/a beside lead"}, 4.0)
    # Answered after 3 workers: its last one does not run.
    assert added_rounds.beside_round([last], pending, cost, 60.0) == (set(), 0.0)
    assert added_rounds.beside_round([near], {"w/a beside lead": 0}, cost, 60.0) == (set(), 0.0)


@pytest.mark.quick
def test_a_side_round_runs_the_io_comparisons_of_the_last_round_that_fit_in_it():
    """A round of comparisons side by side also runs the parts of the last
    round whose rows pair by round (an IO race: any round that runs its
    rows is a round of it), cheapest first, while they add no more than
    the side round's own seconds and fit in the time left; one answered
    since, or dearer, does not, nor a comparison of rows paired in their
    worker."""
    near = Q("near", 1, 5, ["w/a"])
    near.beside = "w/a beside lead"
    io, dear = Q("io: fastest", 3, 20, ["io/lead", "io/b"]), Q("io2: fastest", 3, 20,
                                                                 ["io2/lead", "io2/b"])
    for question in (io, dear):
        for pair in question.pairs:
            for row in pair:
                row.pairing = "round"
    cpu = Q("cpu: fastest", 3, 20, ["w/c", "w/d"])
    io_parts = [q for q in (near, io, dear, cpu) if added_rounds.by_round_only(q)]
    assert io_parts == [io, dear]
    cost = {"w/a beside lead": 4.0, "io/lead": 1.0, "io/b": 1.5,
            "io2/lead": 2.5, "io2/b": 2.5}.get
    pending = {"w/a beside lead": 3}
    still = [near, io, dear, cpu]
    assert added_rounds.beside_round(still, pending, cost, 60.0, io_parts) == (
        {"w/a beside lead", "io/lead", "io/b"}, 6.5)
    assert added_rounds.beside_round(still, pending, cost, 5.0, io_parts) == (
        {"w/a beside lead"}, 4.0)
    assert added_rounds.beside_round([near, dear], pending, cost, 60.0, io_parts) == (
        {"w/a beside lead"}, 4.0)
    assert pending == {"w/a beside lead": 0}


@pytest.mark.quick
def test_the_io_comparisons_of_a_round_then_run_alone_shortest_first_within_its_seconds():
    """After a round of 60 s, its IO comparisons (paired by round) run in
    rounds of their own, the cheapest to answer first, each as many rounds
    as it still needs beyond the round it had, while all of them add no
    more than the round's seconds: "io" (5 more of 2 s) gets 4 rounds
    (8 s); "far" (40 more of 2 s: 78 s) does not fit after it and waits for
    the rounds of the matrix; one given up gets none, nor do any in a round
    that ran nothing else. Those rounds run what is still open of them,
    and stop when that is all answered."""
    io = Q("io: fastest", 3, 8, ["io/lead", "io/b"])
    far = Q("io2: fastest", 3, 43, ["io2/lead", "io2/b"])
    lost = Q("io3: fastest", 3, 500, ["io3/lead", "io3/b"])
    for question in (io, far, lost):
        for pair in question.pairs:
            for row in pair:
                row.pairing = "round"
    cpu = Q("cpu: fastest", 3, 7, ["w/c", "w/d"])
    cost = lambda name: 1.0
    assert added_rounds.io_rounds([far, io, lost, cpu], cost, 60.0) == ([io], 4)
    assert added_rounds.io_rounds([far, io, cpu], cost, 100.0) == ([io, far], 39)
    assert added_rounds.io_rounds([far, io, cpu], cost, 5.0) == ([], 0)
    assert added_rounds.io_rounds([far, io], cost, 600.0) == ([], 0)
    between = added_rounds.RoundsBetween([far, io, lost, cpu], cost, 60.0)
    rounds = [between.next_round([far, io, cpu], cost, 60.0) for _ in range(5)]
    assert rounds[:4] == [({"io/lead", "io/b"}, 2.0, "IO comparisons")] * 4
    assert rounds[4] == (set(), 0.0, None)
    between = added_rounds.RoundsBetween([far, io, cpu], cost, 60.0)
    assert between.next_round([far, cpu], cost, 60.0) == (set(), 0.0, None)
    assert between.next_round([io], cost, 1.5) == (set(), 0.0, None)
    # The same comparison (question and rival) now runs another rival of
    # its race with it: it runs as it stands now.
    now = Q("io: fastest", 4, 8, ["io/lead", "io/b"])
    now.pairs.append((N("io/c"), N("io/lead")))
    between = added_rounds.RoundsBetween([io, cpu], cost, 60.0)
    assert between.next_round([now, cpu], cost, 60.0) == (
        {"io/lead", "io/b", "io/c"}, 3.0, "IO comparisons")


@pytest.mark.quick
def test_a_race_keeps_a_leader_that_ran_side_by_side():
    """A near tie: "lead" ran beside "b", and "a", which has run beside no
    row, now reads 1% ahead of it through the speedups. The race keeps
    "lead" as its leader (not told apart from "a", within 10% of it), and
    reads its comparison with "b" side by side; following the point
    estimate, it would lead with "a" and leave that comparison unread."""
    from concbench.analysis.race import Race

    def row(name, position, speedup):
        rnd = random.Random(name)
        speedups = {r: speedup * math.exp(rnd.gauss(0, 0.05)) for r in range(5)}
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing="worker", speedup=None, mean=None,
                               within_floor=0.05, reference=None, beside_runs={},
                               by_round={}, speedups=lambda: speedups)
    lead, a, b = row("lead", 0, 2.0), row("a", 1, 2.0), row("b", 2, 1.98)
    for found in (lead, a, b):
        found.speedup = math.exp(statistics.fmean(map(math.log, found.speedups().values())))
        found.mean = 1 / found.speedup
    lead.speedup, a.speedup = 2.00, 2.02
    rnd = random.Random(7)
    b.beside_runs = {"lead": SimpleNamespace(
        name="w/b beside lead", position=3, within_floor=0.01,
        paired_logs={r: -0.01 + rnd.gauss(0, 0.005) for r in range(2, 8)})}
    race = Race([lead, a, b])
    assert race.leader is lead
    by_row = dict((row.model, ratio) for row, ratio, _ in race.entries)
    assert by_row["b"].side is not None and by_row["a"].side is None


@pytest.mark.quick
def test_the_control_joins_every_round_that_adds_to_a_row():
    rows = build_rows(file_of([1.3, 0.8, 1.1], 6))["w"]
    suite_rows = {"w": rows}
    control = SimpleNamespace(name="w/control", reference=rows[0], pairing="round")
    controls = {"w": control}
    # Paired by round: a row's round needs the reference; the control then
    # joins, with the reference.
    assert allocation.with_controls({"w/m"}, suite_rows, controls) == {"w/m"}
    assert allocation.with_controls({"w/m", "w/sequential"}, suite_rows, controls) \
        == {"w/m", "w/sequential", "w/control"}
    # Paired in the worker: any row's round is a round of its speedup.
    for row in rows[1:]:
        row.pairing = "worker"
    control.pairing = "worker"
    assert allocation.with_controls({"w/m"}, suite_rows, controls) == {"w/m", "w/control"}


@pytest.mark.quick
def test_workers_size_themselves_from_the_variance_where_it_lies():
    """More pairs where the spread lies between the pairs of a worker, more
    workers where it lies between workers; at least enough pairs that the
    batches are 75% of a worker's time; no more than that for a question
    the budget cannot answer."""
    from concbench.run.calibration import Demand, least_values, values_for
    from concbench.run.costs import Figures

    rng = random.Random(4)
    pairs = [[rng.gauss(0, 0.15) for _ in range(8)] for _ in range(6)]
    within = Figures(True, pairs, [0.25] * 6, 0.5)
    demand = Demand(math.log(1.05), rounds=3)
    inside = values_for(within, 0.0, demand)
    between = values_for(within, 0.05 ** 2, demand)
    # 0.75 / 0.25 x 0.5 s / 0.25 s; with a warm-up pair, x 0.75 s / 0.25 s.
    assert least_values(within) == 6 and inside > between >= 6
    assert least_values(within, warmups=1) == 9
    assert values_for(within, 0.0, None) == least_values(within)
    assert values_for(within, 0.0, demand, horizon=5.0) == least_values(within)
    assert values_for(within, 0.0, demand, horizon=1e6) == inside
    # Unpaired (IO rows): half the worker's time in batches, within 2.5 s.
    alone = Figures(False, [[0.0, 0.01]] * 3, [0.03] * 3, 1.0)
    assert least_values(alone) == 34 and values_for(alone, 0.0, demand) == 34
    assert least_values(Figures(False, [[0.0]], [0.5], 1.0)) == 2
    # A hard question (a race at 95% / 16) asks for more than an easy one.
    easy = Demand(math.log(1.5), rounds=3)
    hard = Demand(math.log(1.05), alpha=0.05 / 16, rounds=3, rows=2)
    assert values_for(within, 0.0, easy) <= values_for(within, 0.0, hard)


@pytest.mark.quick
def test_a_round_of_every_benchmark_fits_what_is_left_of_the_budget():
    """The preset's rounds run every benchmark: their workers give up the
    values beyond one, largest first, until the round fits its share of
    the budget; where one value each does not fit, one value each."""
    from concbench.run.calibration import Sizes, fit
    from concbench.run.costs import Figures

    figures = {"big": Figures(True, pairs_s=[0.5], overhead_s=0.5),
               "small": Figures(False, pairs_s=[0.05], overhead_s=0.5),
               "alone": Figures(False, pairs_s=[2.0], overhead_s=0.5)}

    def sizes(values):
        return {name: Sizes(count, 0, figures[name].seconds(count))
                for name, count in values.items()}
    found = sizes({"big": 8, "small": 30, "alone": 1})   # 4.5 + 2.0 + 2.5 s
    fit(found, figures, 9.0)
    assert {n: s.values for n, s in found.items()} == {"big": 8, "small": 30, "alone": 1}
    fit(found, figures, 7.0)
    # The largest worker gave up values first (to 2.5 s, the alone's own);
    # the small one kept its 30.
    assert {n: s.values for n, s in found.items()} == {"big": 4, "small": 30, "alone": 1}
    assert sum(s.seconds for s in found.values()) <= 7.0
    fit(found, figures, 1.0)
    assert {n: s.values for n, s in found.items()} == {"big": 1, "small": 1, "alone": 1}


@pytest.mark.quick
def test_a_warm_up_is_kept_only_where_the_first_batch_is_slower():
    from concbench.run.costs import Figures

    slow_first = Figures(True, excess=[(0.3, 0.25), (0.2, 0.3)])
    assert slow_first.keeps_warmup()
    alike = Figures(True, excess=[(0.04, 0.01), (-0.1, -0.02), (0.02, 0.0)])
    assert not alike.keeps_warmup()
    # Unpaired: only the batch against its own values, and a wider margin.
    assert not Figures(False, excess=[(0.08, None)]).keeps_warmup()
    assert Figures(False, excess=[(0.2, None)]).keeps_warmup()
    # No data yet: keep it.
    assert Figures(True).keeps_warmup()
    # A first batch 12% slower, where one pair varies by 12%: a slow moment.
    rng = random.Random(2)
    noisy = [[rng.gauss(0, 0.12) for _ in range(8)] for _ in range(3)]
    assert not Figures(True, noisy, excess=[(0.12, 0.12)]).keeps_warmup()
    assert Figures(True, noisy, excess=[(0.5, 0.4)]).keeps_warmup()


@pytest.mark.quick
def test_a_spread_that_stays_wide_is_said():
    rnd = random.Random(1)
    wide = file_of([math.exp(rnd.gauss(0, 0.5)) for _ in range(12)], 12)
    rows = build_rows(wide)["w"]
    assert rows[1].verdict == "undecided"
    said = [line for line in takeaways(rows) if "undecided after" in line]
    assert said and "per-round speedup" in said[0] and "over 12 rounds" in said[0]


def runs_by_round(path):
    suite = pyperf.BenchmarkSuite.load(str(path))
    found = {}
    for bench in suite.get_benchmarks():
        for run_ in bench.get_runs():
            meta = run_.get_metadata()
            # The worker ran the benchmark it was meant to.
            assert bench.get_name().endswith("/" + meta["model"])
            found.setdefault(bench.get_name(), []).append(meta["round"])
    return suite, found


def test_one_round_then_rounds_until_decided(tmp_path):
    """One round, then rounds for the open questions until they are answered
    (about 15 s here), the budget ends, or what is open is given up (a busy
    machine's 5 ms sleeps can keep the control from "the same" for
    minutes); whatever is decided is the truth (threads-2 twice and asyncio
    four times as fast as sequential)."""
    proc = run_bench(SLEEP + ["-p", "1", "--max-time", "20s", "-o", "a.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "then rounds until every question answered, within 20s in all" in flat(proc.stderr)
    # The threads-2 and asyncio rows and the control, and the fastest.
    assert "round 2 (added): open: 3 rows; fastest in sleep; " in flat(proc.stderr)
    assert "every question is answered after" in flat(proc.stderr) or \
        "time budget (20s) spent after" in flat(proc.stderr) or \
        "which no rounds that fit in that time would answer" in flat(proc.stderr), proc.stderr
    suite, found = runs_by_round(tmp_path / "a.json")
    assert suite.get_metadata()["max_time_s"] == 20
    rounds = found["sleep/sequential"]
    # Every row runs in rounds 1 and 2; an added round that only a race
    # between two other rows needs may run without the reference.
    assert rounds[:2] == [0, 1] and rounds == sorted(set(rounds)) and len(rounds) >= 3
    out = run(["-m", "concbench.report", "a.json", "--format", "json"], tmp_path)
    entry = json.loads(out.stdout)["workloads"]["sleep"]
    verdicts = {row["benchmark"]: row["verdict"] for row in entry["rows"]}
    assert verdicts["sleep/sequential"] is None
    assert verdicts["sleep/threads-2"] in ("faster", "undecided")
    assert verdicts["sleep/asyncio"] in ("faster", "undecided")
    # The A/A control ran in the same rounds, read like any row, and the
    # console said what it found.
    assert entry["control"]["benchmark"] == "sleep/control"
    assert entry["control"]["rounds"] >= 3
    assert entry["control"]["verdict"] in ("same", "undecided")
    # The control runs beside its reference, so that the two pair.
    assert set(found["sleep/control"]) <= set(rounds)
    assert "control: " in proc.stderr.strip().splitlines()[-1]
    # Decided, the fastest is the truth. Undecided, the answer still names
    # asyncio, and leads with a row faster than sequential: beside a busy
    # loop and a suite under a 1-CPU quota, asyncio's 5 ms sleeps once
    # waited for a CPU (p99 36 ms, 13.9 ms +- 10.1 ms a batch), and
    # threads-2 led, not told apart from it.
    takeaway = entry["takeaways"][0]
    assert takeaway.startswith("fastest: asyncio (") or (
        takeaway.startswith(("fastest: undecided; asyncio leads",
                             "fastest: undecided; threads-2 leads"))
        and "asyncio" in takeaway), entry
    # --append goes on numbering the rounds.
    more = run_bench(SLEEP + ["-p", "1", "--append", "a.json"],
                     tmp_path)
    assert more.returncode == 0, more.stderr
    # The file's next round, after the last that any benchmark ran (an
    # added round may run a race's rows without the reference).
    _, after = runs_by_round(tmp_path / "a.json")
    following = 1 + max(number for numbers in found.values() for number in numbers)
    assert after["sleep/sequential"][:len(rounds)] == rounds
    assert after["sleep/sequential"][len(rounds)] == following
    assert sorted(set(after["sleep/sequential"])) == after["sleep/sequential"]


def test_rows_no_round_would_decide_end_the_run_and_the_report_says_so(tmp_path):
    """Rows that no 200 rounds would decide to within 0.001%, even at the
    most favourable reading of their spreads: once three rounds have read
    one, the run gives them up with its budget unspent and says so."""
    proc = run_bench(SLEEP + ["-p", "2", "--precision", "0.001", "--max-time", "60s",
                              "-o", "p.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "still open: " in proc.stderr
    suite, found = runs_by_round(tmp_path / "p.json")
    assert suite.get_metadata()["precision_target_pct"] == 0.001
    # The preset's two rounds always run; whether an added one fits in the
    # rest is the machine's business (a busy machine once ran only two in 8 s).
    assert len(found["sleep/asyncio"]) >= 2
    if len(found["sleep/asyncio"]) >= 3:
        assert re.search(r"stopped after 3 rounds \(\S+\), \S+ left of 1m00s: still open: "
                         r"3 rows, which no rounds that fit", flat(proc.stderr)), proc.stderr
        assert "would need more than 200 rounds" in flat(proc.stderr), proc.stderr
        assert len(found["sleep/asyncio"]) == 3
    else:
        # Two rounds say too little of a spread to give a row up.
        assert "time budget (1m00s) spent after 2 rounds" in flat(proc.stderr), proc.stderr
        assert "would need about" in flat(proc.stderr), proc.stderr
    out = run(["-m", "concbench.report", "p.json"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "precision: 0 of 2 speedups within +-0.001% (the target)" in flat(out.stdout)
    if len(found["sleep/asyncio"]) >= 3:
        # Bounded intervals, each wider than the target (two rounds give
        # none, and say so as undecided).
        assert "imprecise(+-" in out.stdout


def test_the_presets_second_round_fits_what_is_left_of_the_budget(tmp_path):
    """A budget spent by the first round: the second still runs every
    benchmark (the preset's rounds always run), one value each, where the
    floor of half a worker's time in batches would give a 5 ms batch 40."""
    proc = run_bench(["--workload", "sleep", "--model", "sequential,threads-2,asyncio",
                      "--items", "4", "--latency-ms", "5", "--jitter-ms", "0", "--quiet",
                      "--max-time", "1s", "-o", "b.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "time budget (1s) spent after 2 rounds" in flat(proc.stderr), proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "b.json"))
    second = {bench.get_name(): len(run_.values) for bench in suite.get_benchmarks()
              for run_ in bench.get_runs() if run_.get_metadata()["round"] == 1}
    assert second == dict.fromkeys(["sleep/sequential", "sleep/control", "sleep/threads-2",
                                    "sleep/asyncio"], 1)


def test_a_fixed_count_adds_no_round(tmp_path):
    proc = run_bench(SLEEP + ["-p", "1", "-o", "f.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "added" not in proc.stderr
    _, found = runs_by_round(tmp_path / "f.json")
    assert found["sleep/threads-2"] == [0]


@pytest.mark.quick
def test_without_a_warm_up_the_first_pair_tells_whether_one_is_needed():
    """A worker paired with the reference runs no warm-up in the first
    round: its first pair, against the rest, says whether later workers
    need one."""
    from concbench.run.costs import Figures

    def row(first):
        values = [first, 0.2, 0.2, 0.2]
        meta = {"paired_reference_s": "0.3 0.3 0.3 0.3", "round": 0}
        run_ = SimpleNamespace(values=values, warmups=[])
        return SimpleNamespace(pairing="worker", timed_runs=lambda: [(run_, meta)])
    assert Figures.of_row(row(0.4)).keeps_warmup()      # twice as slow at first
    assert not Figures.of_row(row(0.2)).keeps_warmup()


SLOW_PAIRS = '''
import time

from concbench.workloads.simple import workload


@workload("slowpairs", items=lambda rnd, count: list(range(count)), count=9)
def item(number):
    """A batch of 0.45 s or more on any machine: a pair of 0.9 s or more."""
    time.sleep(0.05)
    return number
'''


def test_a_first_round_worker_runs_fewer_pairs_where_its_workloads_pairs_are_slow(tmp_path):
    """The preset's three pairs, until a pair of the workload has taken so
    long that three would not fit in 2.5 s; never fewer than two (the
    spread within a worker, and whether the first pair is slower)."""
    from concbench.run.calibration import first_values
    from concbench.run.costs import pair_seconds

    assert first_values(3, None) == 3 and first_values(3, 0.5) == 3
    assert first_values(3, 0.9) == 2 and first_values(3, 4.0) == 2
    assert first_values(6, 0.5) == 5 and first_values(2, 4.0) == 2
    assert first_values(1, 4.0) == 1
    (tmp_path / "slowpairs.py").write_text(SLOW_PAIRS)
    proc = run_bench(["--workload-module", "slowpairs.py", "--workload", "slowpairs",
                      "--model", "sequential,asyncio-serial", "-p", "1", "--quiet",
                      "-o", "s.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "s.json"))
    paired = sorted((run_.get_metadata()["date"], run_) for bench in suite.get_benchmarks()
                    for run_ in bench.get_runs()
                    if "paired_reference_s" in run_.get_metadata())
    assert len(paired) == 2     # the control and asyncio-serial
    (_, first), (_, second) = paired
    assert len(first.values) == 3
    assert pair_seconds(first) >= 0.9 and len(second.values) == 2


def test_rounds_added_to_an_appended_file_run_only_this_runs_benchmarks(tmp_path):
    """--append to a file whose earlier run left questions open (encode,
    one round): this run (sleep) adds rounds for its own questions only;
    the earlier run's benchmarks are not in its matrix."""
    first = run_bench(["--workload", "encode", "--model", "sequential,threads-2",
                       "--items", "200", "-p", "1", "-n", "1", "-w", "0", "--quiet",
                       "--no-control", "-o", "x.json"], tmp_path)
    assert first.returncode == 0, first.stderr
    more = run_bench(SLEEP + ["-p", "1", "--max-time", "10s", "--no-control",
                              "--append", "x.json"], tmp_path)
    assert more.returncode == 0, more.stderr
    assert "round 2 (added)" in more.stderr, more.stderr
    _, found = runs_by_round(tmp_path / "x.json")
    assert len(found["encode/threads-2"]) == 1 and len(found["sleep/threads-2"]) >= 2


@pytest.mark.quick
def test_a_race_whose_leader_changes_on_its_last_pass_reads_against_the_last():
    """Three rows paired by round, each shown faster than the next on the
    rounds they share, in a circle: the leader changes on every pass, the
    last too. The entries are those against the leader named, and name
    every other row once."""
    from concbench.analysis.race import Race

    def row(name, position, mean, by_round):
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing="round", by_round=by_round, speedup=None,
                               mean=mean, reference=None, within_floor=None,
                               speedups=lambda: None)
    a = row("a", 0, 0.9, {**{r: 1.0 for r in range(6)}, **{r: 0.5 for r in range(12, 18)}})
    b = row("b", 1, 1.0, {**{r: 0.5 for r in range(6)}, **{r: 1.0 for r in range(6, 12)}})
    c = row("c", 2, 1.0, {**{r: 0.5 for r in range(6, 12)}, **{r: 1.0 for r in range(12, 18)}})
    race = Race([a, b, c])
    others = [entry[0] for entry in race.entries]
    assert race.leader not in others
    assert sorted(r.model for r in others + [race.leader]) == ["a", "b", "c"]
