"""Rounds until each row is decided: verdicts, the added rounds, the budget.

Mechanics are tested on the sleep workload, whose speedups are set by its
latencies (deterministic to a fraction of a percent), so that whether a row
is decided does not depend on how busy the machine is.
"""

import json
import math
import random

import pyperf

from concbench import adaptive
from concbench.report.rows import build_rows
from concbench.report.verdicts import takeaways
from concbench.schedule import format_extra, parse_extra, schedule
from concbench.stats import Ratio, half_width, verdict
from conftest import run, run_bench

SLEEP = ["--workload", "sleep", "--model", "sequential,threads-2,asyncio",
         "--items", "4", "--latency-ms", "5", "--jitter-ms", "0",
         "-n", "1", "-w", "0", "--quiet"]


def test_verdicts_follow_the_interval():
    assert verdict(Ratio(1.5, 1.2, 1.9, 3, 3)) == "faster"
    assert verdict(Ratio(0.5, 0.4, 0.6, 0, 3)) == "slower"
    assert verdict(Ratio(1.0, 0.97, 1.03, 2, 3)) == "same"
    assert verdict(Ratio(1.1, 0.9, 1.3, 2, 3)) == "undecided"
    assert verdict(Ratio(1.1, None, None, 1, 1)) == "undecided"
    assert verdict(None) == "undecided"
    assert abs(half_width(Ratio(2.0, 1.8, 2.2, 3, 3)) - 0.1) < 1e-9


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
    return [(row.label(), row.takeaway) for row in
            adaptive.open_rows(suite, {"w/sequential", "w/m"}, precision)]


def test_open_rows_are_the_undecided_ones_with_their_reference():
    # Two rounds decide nothing: the interval is unbounded until three.
    assert opened(file_of([2.0, 2.02], 2)) == [
        ("w/m", False), ("w/sequential vs w/m", True)]
    assert opened(file_of([1.3, 0.8, 1.1], 6)) == [
        ("w/m", False), ("w/sequential vs w/m", True)]
    assert opened(file_of([2.0, 2.02, 1.98], 6)) == []
    # Decided, but not within +-1%: open under --precision 1, which asks
    # nothing of the takeaways.
    tight = file_of([2.0, 2.1, 1.9], 6)
    assert opened(tight) == []
    assert opened(tight, precision=1) == [("w/m", False)]
    # Within +-5% but straddling 1 and the band's end (0.99x [0.95-1.04]):
    # precise enough, yet it says nothing, so it stays open.
    vague = file_of([0.965, 1.015, 0.99], 6)
    assert opened(vague, precision=5) == [("w/m", False)]
    assert opened(file_of([0.995, 1.005, 1.0], 6), precision=5) == []


def test_rounds_needed_grow_with_the_spread_and_near_the_band():
    logs = [math.log(x) for x in (1.3, 1.5, 1.1)]
    # Two rounds are too few to give a row up.
    assert adaptive.rounds_needed(logs[:1]) == 2
    assert adaptive.rounds_needed([0.5, -0.5]) == 3
    clear = adaptive.rounds_needed(logs)
    noisier = adaptive.rounds_needed([2 * x for x in logs[1:]] + [-0.1])
    assert 3 < clear < noisier
    near_one = adaptive.rounds_needed([0.06, -0.04, 0.01])
    assert near_one > clear
    assert adaptive.rounds_needed([0.5, -0.5, 0.0]) == adaptive.MOST_ROUNDS
    assert adaptive.rounds_needed(logs, precision=1) > adaptive.rounds_needed(
        logs, precision=10)


def test_rows_likely_to_be_decided_go_first_within_the_budget():
    rows = [adaptive.OpenRow("w/slow-hope", "w/ref", 3, 60),
            adaptive.OpenRow("w/soon", "w/ref", 3, 4),
            adaptive.OpenRow("w/later", "w/ref", 3, 6)]
    cost = {"w/ref": 1.0, "w/soon": 1.0, "w/later": 2.0, "w/slow-hope": 1.0}.get
    chosen, members, spent = adaptive.choose(rows, cost, remaining=20.0)
    # 57 more rounds of 2 s do not fit in 20 s: left out while others can win.
    assert [row.name for row in chosen] == ["w/soon", "w/later"]
    assert members == {"w/ref", "w/soon", "w/later"} and spent == 4.0
    chosen, _, _ = adaptive.choose(rows, cost, remaining=2.5)
    assert [row.name for row in chosen] == ["w/soon"]
    chosen, _, _ = adaptive.choose(rows[:1], cost, remaining=20.0)
    assert [row.name for row in chosen] == ["w/slow-hope"]
    assert adaptive.choose(rows, cost, remaining=1.5)[0] == []
    # The cheapest to decide first: 3 rounds of 0.4 s before 1 round of 11 s.
    cheap = [adaptive.OpenRow("w/dear", "w/ref", 4, 5),
             adaptive.OpenRow("w/a vs w/b", "w/b", 4, 7, takeaway=True)]
    cost = {"w/ref": 10.0, "w/dear": 1.0, "w/a vs w/b": 0.2, "w/b": 0.2}.get
    chosen, _, spent = adaptive.choose(cheap, cost, remaining=5.0)
    assert [row.name for row in chosen] == ["w/a vs w/b"] and spent == 0.4
    # Rows first: a takeaway comparison that needs benchmarks of its own
    # waits while a row runs; one whose benchmarks run anyway rides along.
    mixed = [adaptive.OpenRow("w/a", "w/ref", 4, 5, members={"w/a"}),
             adaptive.OpenRow("w/b", "w/c", 4, 5, takeaway=True),
             adaptive.OpenRow("w/a", "w/ref", 4, 5, takeaway=True, members={"w/a"})]
    cost = {"w/a": 1.0, "w/b": 0.1, "w/c": 0.1, "w/ref": 1.0}.get
    chosen, members, spent = adaptive.choose(mixed, cost, remaining=50.0)
    assert chosen == [mixed[0], mixed[2]] and members == {"w/a"} and spent == 1.0
    chosen, members, _ = adaptive.choose(mixed[1:], cost, remaining=50.0)
    assert members == {"w/a", "w/b", "w/c"}


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
    proc = run_bench(SLEEP + ["-p", "1", "--max-time", "60s", "-o", "a.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "then rounds until every row decided, within 1m00s in all" in proc.stderr
    # The threads-2 and asyncio rows and the control; then the fastest.
    assert "round 2 (added): 3 row(s) and " in proc.stderr
    assert "every row and takeaway is decided after" in proc.stderr
    suite, found = runs_by_round(tmp_path / "a.json")
    assert suite.get_metadata()["max_time_s"] == 60
    rounds = found["sleep/sequential"]
    assert rounds == list(range(len(rounds))) and len(rounds) >= 2
    out = run(["-m", "concbench.report", "a.json", "--format", "json"], tmp_path)
    entry = json.loads(out.stdout)["workloads"]["sleep"]
    verdicts = {row["benchmark"]: row["verdict"] for row in entry["rows"]}
    assert verdicts == {"sleep/sequential": None, "sleep/threads-2": "faster",
                        "sleep/asyncio": "faster"}
    # The A/A control ran in the same rounds, read like any row, and the
    # console said what it found.
    assert entry["control"]["benchmark"] == "sleep/control"
    assert entry["control"]["rounds"] >= 3
    assert found["sleep/control"] == rounds[:len(found["sleep/control"])]
    assert "control: " in proc.stderr.strip().splitlines()[-1]
    assert entry["takeaways"][0].startswith("fastest: asyncio (")
    # --append goes on numbering the rounds.
    more = run_bench(SLEEP + ["-p", "1", "--max-time", "60s", "--append", "a.json"],
                     tmp_path)
    assert more.returncode == 0, more.stderr
    _, after = runs_by_round(tmp_path / "a.json")
    assert after["sleep/sequential"][:len(rounds)] == rounds
    assert after["sleep/sequential"][len(rounds)] == len(rounds)
    assert sorted(set(after["sleep/sequential"])) == after["sleep/sequential"]


def test_the_budget_ends_the_rounds_and_the_report_says_so(tmp_path):
    proc = run_bench(SLEEP + ["-p", "2", "--precision", "0.001", "--max-time", "6s",
                              "-o", "p.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "time budget (6s) spent after" in proc.stderr
    assert "still undecided or imprecise" in proc.stderr
    suite, found = runs_by_round(tmp_path / "p.json")
    assert suite.get_metadata()["precision_target_pct"] == 0.001
    assert len(found["sleep/asyncio"]) >= 3
    out = run(["-m", "concbench.report", "p.json"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "precision: 0 of 2 speedups within +-0.001% (the target)" in out.stdout
    assert "imprecise(+-" in out.stdout


def test_a_fixed_count_adds_no_round(tmp_path):
    proc = run_bench(SLEEP + ["-p", "1", "-o", "f.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "added" not in proc.stderr
    _, found = runs_by_round(tmp_path / "f.json")
    assert found["sleep/threads-2"] == [0]
