"""Interleaved rounds, paired speedups with intervals, and ties."""

import math
import subprocess
import random

import pyperf
import pytest

from concbench import rules
from concbench.analysis.rows import build_rows
from concbench.report.verdicts import takeaways
from concbench.run.schedule import schedule
from concbench.analysis.stats import paired_ratio
from concbench.analysis.unpaired import unpaired_ratio
from conftest import ROOT, run_bench

SELECTION = ["--preset", "quick", "--workload", "sleep", "--model",
             "sequential,threads-4,asyncio", "--items", "8", "--latency-ms", "2",
             "--jitter-ms", "0", "-n", "1", "-w", "0", "--quiet", "--no-control"]


def rounds_of(path):
    suite = pyperf.BenchmarkSuite.load(str(path))
    found = {}
    for bench in suite.get_benchmarks():
        for run in bench.get_runs():
            meta = run.get_metadata()
            found.setdefault(meta["round"], []).append((meta["date"], bench.get_name()))
    return suite, found


def test_every_round_runs_every_benchmark_once_before_the_next(tmp_path):
    proc = run_bench(SELECTION + ["-p", "3", "--order-seed", "7", "-o", "a.json"],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite, found = rounds_of(tmp_path / "a.json")
    names = suite.get_benchmark_names()
    assert names == ["sleep/sequential", "sleep/threads-4", "sleep/asyncio"]
    assert sorted(found) == [0, 1, 2]
    for number in range(3):
        assert sorted(name for _, name in found[number]) == sorted(names)
    for number in range(2):
        assert max(found[number])[0] < min(found[number + 1])[0]
    meta = suite.get_metadata()
    assert meta["order"] == "interleaved" and meta["order_seed"] == 7
    # The order within each round is the recorded seed's.
    for number in range(3):
        ran = [name for _, name in sorted(found[number])]
        expected = [names[i] for _, i in schedule(3, 3, 7)[3 * number:3 * number + 3]]
        assert ran == expected
    assert "3 benchmarks x 3 interleaved rounds (order seed 7)" in proc.stderr
    assert "round 3/3" in proc.stderr and "[3/3] sleep/" in proc.stderr
    assert "WARNING: the benchmark result may be unstable" not in proc.stdout

    again = run_bench(SELECTION + ["-p", "1", "--append", "a.json"], tmp_path)
    assert again.returncode == 0, again.stderr
    _, found = rounds_of(tmp_path / "a.json")
    assert sorted(found) == [0, 1, 2, 3]
    assert len(found[3]) == 3


def test_pyperf_order_on_request(tmp_path):
    proc = run_bench(SELECTION + ["-p", "2", "--pyperf-order", "-o", "p.json"],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite, found = rounds_of(tmp_path / "p.json")
    assert suite.get_metadata()["order"] == "pyperf"
    runs = sorted(date_name for runs in found.values() for date_name in runs)
    # All processes of one benchmark, then the next.
    assert [name for _, name in runs] == [
        name for name in suite.get_benchmark_names() for _ in range(2)]


@pytest.mark.quick
def test_schedule_is_the_seeds():
    first = schedule(10, 4, 1)
    assert schedule(10, 4, 1) == first
    assert schedule(10, 4, 2) != first
    for number in range(4):
        assert sorted(i for r, i in first if r == number) == list(range(10))
    assert schedule(3, 5, 1, interleave=False) == [(None, 0), (None, 1), (None, 2)]


@pytest.mark.parametrize("argv, message", [
    (["--order-seed", "x"], "argument --order-seed: 'x' is not a whole number"),
    (["--order-seed", "-1"], "argument --order-seed: -1 is out of range [0, 2**32)"),
    (["-p", "0"], "argument -p/--processes: invalid strictly_positive value: '0'"),
])
def test_bad_schedule_options(tmp_path, argv, message):
    proc = run_bench(SELECTION + argv + ["-o", "x.json"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["bench.py: error: " + message]
    assert not (tmp_path / "x.json").exists()


def noisy(values, spread, seed):
    rnd = random.Random(seed)
    return {r: v * math.exp(rnd.gauss(0, spread)) for r, v in enumerate(values)}


@pytest.mark.quick
def test_a_model_twice_as_fast_gets_an_interval_around_2():
    rnd = random.Random(3)
    # The machine drifts by up to 40% between rounds; both runs of a round see it.
    drift = [1 + 0.4 * rnd.random() for _ in range(10)]
    reference = noisy([0.2 * d for d in drift], 0.02, 1)
    model = noisy([0.1 * d for d in drift], 0.02, 2)
    ratio = paired_ratio(reference, model)
    assert ratio.low < 2 < ratio.high
    assert 1.9 < ratio.point < 2.1 and ratio.high - ratio.low < 0.2
    assert ratio.above == ratio.rounds == 10
    assert not ratio.includes_one()
    # Unpaired, the drift widens the interval: pairing is what buys precision.
    loose = unpaired_ratio(list(reference.values()), list(model.values()))
    assert loose.high - loose.low > ratio.high - ratio.low


@pytest.mark.quick
def test_identical_models_get_an_interval_holding_1():
    """A 95% interval holds the truth 19 times in 20: of 40 seeded pairs of
    identical models, at least 36 intervals must hold 1."""
    holding = 0
    for seed in range(40):
        rnd = random.Random(seed)
        drift = [1 + 0.4 * rnd.random() for _ in range(5)]
        a = noisy([0.1 * d for d in drift], 0.03, seed)
        b = noisy([0.1 * d for d in drift], 0.03, seed + 100)
        ratio = paired_ratio(a, b)
        holding += ratio.includes_one()
        assert 0.9 < ratio.point < 1.1
    assert holding >= 36, holding


def suite_of(times_by_model, rounds=5, noise=0.02, seed=1):
    """A bench.py-like file: one run per round per model, with a shared drift."""
    rnd = random.Random(seed)
    drift = [1 + 0.3 * rnd.random() for _ in range(rounds)]
    benchmarks = []
    for model, seconds in times_by_model.items():
        runs = []
        for number in range(rounds):
            value = seconds * drift[number] * math.exp(rnd.gauss(0, noise))
            meta = {"name": "w/" + model, "workload": "w", "workload_kind": "cpu",
                    "model": model, "reference_model": "sequential", "round": number,
                    "items_per_batch": 10, "concurrency": 1, "parallelism": 1,
                    "interpreters": 1, "item_side": "sync", "probe_s": 0.001,
                    "unit": "second"}
            runs.append(pyperf.Run([value], warmups=[(1, value)], metadata=meta,
                                   collect_metadata=False))
        benchmarks.append(pyperf.Benchmark(runs))
    return pyperf.BenchmarkSuite(benchmarks)


def fastest_line(suite):
    rows = build_rows(suite)["w"]
    return takeaways(rows)[0]


# A share of the band (``rules.BAND``): the tests below put their truths and
# their noise in these units, so that they hold for any band.
def band(share):
    return share * rules.BAND


def figures_out(line):
    """A takeaway without the leader's figures, which follow the noise drawn."""
    import re

    return re.sub(r"\(\d[^()]*sequential\)", "(...)", line)


@pytest.mark.quick
def test_takeaways_name_a_winner_only_when_it_is_clear():
    clear = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.2})
    assert fastest_line(clear).startswith("fastest: asyncio (")
    near = 0.1 * (1 + band(0.2))    # uvloop 1% slower, at a band of 5%
    tie = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": near}, noise=band(0.6))
    assert figures_out(fastest_line(tie)) == (
        "fastest: undecided; asyncio leads (...); not told apart from it in 5 shared "
        "rounds: uvloop")
    # The race reads only each comparison's lower end (one-sided, 4% of the
    # race's 5% over 2 comparisons): uvloop's time over asyncio's is shown
    # above 1 - band, so it cannot be faster by more than the band, and the
    # race is answered; its interval (at a band of 5%, [0.97-1.05]) is the
    # two-sided one at 92% / 2 whose lower end that is.
    line = fastest_line(suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": near},
                                 noise=band(0.2)))
    said = "fastest: asyncio (...); not told apart from it, none more than %s faster: " \
        "uvloop (" % rules.BAND_TEXT
    assert figures_out(line).startswith(said), line
    low = float(line.split("[")[1].split("-")[0])
    assert 1 - rules.BAND <= low < 1
    # Too few shared rounds for an interval at 95% over 2 comparisons; at 3,
    # sequential is out and uvloop not told apart.
    assert fastest_line(suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.101},
                                 rounds=2)) == (
        "fastest: undecided; uvloop leads (113 ms, 3.02x sequential); no interval "
        "yet against sequential, asyncio (2 shared rounds; 3 needed at 95% over 2 "
        "comparisons)")
    assert fastest_line(suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": near},
                                 rounds=3)) == (
        "fastest: undecided; asyncio leads (118 ms, 2.99x sequential); not told "
        "apart from it in 3 shared rounds: uvloop")
    # Enough rounds put two even ones within the band of each other: a
    # decided tie; and tell a difference of a fifth of the band apart.
    assert fastest_line(suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": near},
                                 rounds=8, noise=band(0.04))).startswith("fastest: asyncio (")
    same = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.1}, rounds=8,
                    noise=band(0.04))
    assert fastest_line(same).startswith(
        "fastest: asyncio, uvloop: the same within %s (" % rules.BAND_TEXT)
    # Answered with a row that cannot be faster by the band, not yet shown
    # slower: its time against the leader's says how close it is.
    within = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.1 * (1 + band(0.4))},
                      rounds=6, noise=band(0.3))
    assert figures_out(fastest_line(within)).startswith(
        "fastest: asyncio (...); not told apart from it, none more than %s faster: "
        "uvloop (" % rules.BAND_TEXT)
    # Still open because of uvloop, a near tie: trio, slower by 1.6 bands,
    # is shown no more than the band faster already, and is named so, with
    # its interval, not with the rival that holds the race open.
    held = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": near,
                     "trio": 0.1 * (1 + band(2))}, noise=band(0.6))
    assert figures_out(fastest_line(held)).startswith(
        "fastest: undecided; asyncio leads (...); not told apart from it in 5 shared "
        "rounds: uvloop; none more than %s faster: trio (" % rules.BAND_TEXT)


@pytest.mark.quick
def test_the_report_dates_each_answer_by_the_rounds_that_gave_it():
    """asyncio is three times as fast as sequential and 1.5 times as fast
    as uvloop: the race is answered once its intervals are bounded. The
    report dates it by the file cut after each round, as bench.py read it:
    open with one round fewer, answered from then on."""
    from concbench.analysis.questions import all_questions, answered_after
    from concbench.report.environment import question_lines

    suite = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.15}, rounds=8)
    controls = {}
    groups = build_rows(suite, controls)
    found = all_questions(groups, controls)
    when = answered_after(suite, found)
    assert set(when) == {"w: fastest"}

    def answered(rounds):
        kept = [pyperf.Benchmark([run for run in bench.get_runs()
                                  if run.get_metadata()["round"] < rounds])
                for bench in suite.get_benchmarks()]
        part = pyperf.BenchmarkSuite(kept)
        race = [q for q in all_questions(build_rows(part), {}) if q.kind == "fastest"]
        return race[0].answered

    after = when["w: fastest"]
    assert 3 <= after < 8
    assert not answered(after - 1)
    assert all(answered(rounds) for rounds in range(after, 9))
    assert question_lines(groups, controls, {}, suite) == [
        "answered: fastest in 1 of 1 workload (w after %d rounds)" % after]
    # In pyperf's order a "round" is a benchmark's run, not a moment
    # bench.py read the file at: nothing is dated.
    pyperf_order = pyperf.BenchmarkSuite([
        pyperf.Benchmark([pyperf.Run(run.values, warmups=run.warmups,
                                     metadata=dict(run.get_metadata(), order="pyperf"),
                                     collect_metadata=False)
                          for run in bench.get_runs()])
        for bench in suite.get_benchmarks()])
    assert answered_after(pyperf_order, found) == {}


@pytest.mark.quick
def test_report_rows_carry_the_interval(tmp_path):
    path = tmp_path / "s.json"
    suite_of({"sequential": 0.3, "threads-2": 0.15}).dump(str(path))
    import json
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "concbench.report", str(path),
                           "--format", "json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["workloads"]["w"]["rows"]
    row = next(r for r in rows if r["benchmark"] == "w/threads-2")
    assert row["speedup_ci_low"] < 2 < row["speedup_ci_high"]
    assert 1.9 < row["speedup"] < 2.1
    assert row["speedup_rounds_faster"] == row["speedup_rounds"] == 5


@pytest.mark.quick
def test_the_same_within_5_percent_reads_both_ends_at_the_whole_level():
    """A race reads each comparison's lower end, one-sided at 98% (4% of its
    5% over 2 comparisons): the interval it computes is two-sided at 92% /
    2. "The same within 5%" needs both ends, so it is said only where the
    two-sided interval at 96% / 2 lies in the band too. Here the first does and the second does
    not: uvloop is named as no more than 5% faster, not as the same.
    (Reading "the same" off the race's own interval says it, and fails.)"""
    from concbench.analysis.comparisons import compare

    suite = suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.1 * (1 + band(0.2))},
                     rounds=6, noise=band(0.14))
    rows = {r.model: r for r in build_rows(suite)["w"]}
    read = compare(rows["uvloop"], rows["asyncio"], alpha=0.04)
    whole = compare(rows["uvloop"], rows["asyncio"], alpha=0.02)
    low, high = rules.SAME_BAND
    assert low <= read.low and read.high <= high
    assert whole.low < low or whole.high > high
    line = fastest_line(suite)
    assert "none more than %s faster: uvloop (" % rules.BAND_TEXT in line, line
    assert rules.standing(read) == rules.SAME and rules.standing(whole) == rules.WITHIN


@pytest.mark.quick
def test_a_tie_of_three_says_each_is_the_same_as_the_leader_not_as_each_other():
    """A race compares each row with the leader only: two rows each within
    5% of it may differ by up to 10% between them, so a tie of three names
    the leader and each row the same within 5% of it, never the three as
    the same. (Naming them together as "the same within 5%" fails.)"""
    line = fastest_line(suite_of({"sequential": 0.3, "asyncio": 0.1, "uvloop": 0.1,
                                  "hybrid-2": 0.1}, rounds=8, noise=band(0.04)))
    assert line.startswith("fastest: ")
    leader = line[len("fastest: "):].split(" (")[0]
    others = [m for m in ("asyncio", "uvloop", "hybrid-2") if m != leader]
    assert len(others) == 2
    assert line.endswith("each the same within %s of it: " % rules.BAND_TEXT + ", ".join(others))
    assert "asyncio, uvloop, hybrid-2: the same" not in line


@pytest.mark.quick
def test_a_rival_whose_own_interval_lies_below_another_rows_is_out_at_once(monkeypatch):
    """Successive elimination's rule: the leader ran 3 rounds, a row at 1.00x
    ran 8 others, so they share none and their comparison has no interval;
    a third row, at 1.90x over all 11, shows through its own interval
    against the reference that the 1.00x row is slower. It is out, and the
    race names the leader and the close row only. (Without the rule, it
    stays open.)"""
    from types import SimpleNamespace

    from concbench.analysis import race as race_module
    from concbench.analysis.race import Race
    from concbench.rules import OPEN, SLOWER

    def row(name, position, speedup, rounds):
        rnd = random.Random(name)
        by_round = {r: speedup * math.exp(rnd.gauss(0, 0.02)) for r in rounds}
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing="worker", speedup=speedup, mean=1 / speedup,
                               within_floor=None, reference=None,
                               speedups=lambda: by_round)
    leader = row("lead", 0, 2.0, range(3))
    far = row("far", 1, 1.0, range(3, 11))
    close = row("close", 2, 1.9, range(11))
    race = Race([leader, far, close])
    states = {r.model: state for r, _, state in race.entries}
    assert race.leader is leader and states["far"] == SLOWER
    assert [r.model for r in race.named()] == ["lead", "close"]
    assert all(p.rows[1] is not far for p in race.question("fastest", "w", "f").parts)
    # Its own interval, as the race reads it, is at 99% / 3 two-sided.
    own = race_module.own_interval(far, race_module.elimination_alpha(3))
    assert own[1] < race_module.own_interval(close, race_module.elimination_alpha(3))[0]
    monkeypatch.setattr(race_module, "own_interval", lambda row, alpha: None)
    assert {r.model: s for r, _, s in Race([leader, far, close]).entries}["far"] == OPEN


@pytest.mark.quick
def test_a_rival_that_shares_no_round_with_the_leader_is_read_through_both_own_intervals(
        monkeypatch):
    """Rows paired in their worker compare without shared rounds: the
    leader ran rounds 0-7, a rival of the same true speed rounds 8-15, so
    their comparison through the speedups has no interval; their own
    intervals say the rival's time over the leader's is within 1% of 1, so
    it is no more than 5% faster (never "the same": that reads both ends
    at the race's whole level) and the race is answered. (With the own
    intervals left out of the comparison, it stays open.)"""
    from types import SimpleNamespace

    from concbench.analysis import race as race_module
    from concbench.analysis.race import Race
    from concbench.rules import OPEN, WITHIN

    def row(name, position, rounds):
        rnd = random.Random(name)
        by_round = {r: 2.0 * math.exp(rnd.gauss(0, 0.002)) for r in rounds}
        return SimpleNamespace(name="w/" + name, model=name, position=position,
                               pairing="worker", speedup=2.0, mean=0.5,
                               within_floor=None, reference=None,
                               speedups=lambda: by_round)
    leader, rival = row("lead", 0, range(8)), row("rival", 1, range(8, 16))
    race = Race([leader, rival])
    (found, ratio, state), = race.entries
    assert found is rival and state == WITHIN and race.answered
    assert 0.99 < ratio.low < 1 < ratio.high < 1.01
    assert race_module.compare(rival, leader, alpha=0.05) is None
    monkeypatch.setattr(race_module, "through_own", lambda ratio, mine, theirs: ratio)
    assert [state for _, _, state in Race([leader, rival]).entries] == [OPEN]


@pytest.mark.quick
def test_joining_a_comparison_with_its_side_by_side_part_changes_neither():
    """A simulated run hands the same Ratio to every reader of the same
    rounds (``stats.memoized``), so the join that marks which part came
    from side by side makes a Ratio of its own: a later comparison through
    the same speedups with no side-by-side part must not read one. (Were
    the part given marked, this would fail; a Ratio is frozen.)"""
    from concbench.analysis.comparisons import joined
    from concbench.analysis.stats import Ratio

    for through, direct in ((Ratio(1.0, None, None, 0, 2), Ratio(1.02, 0.97, 1.07, 3, 4)),
                            (Ratio(1.0, 0.8, 1.3, 2, 4), Ratio(1.02, None, None, 1, 2)),
                            (Ratio(1.0, 0.8, 0.9, 2, 4), Ratio(1.5, 1.4, 1.6, 4, 4))):
        found = joined(through, direct)
        assert found.side is direct
        assert found is not through and found is not direct
        assert through.side is None and direct.side is None


def test_a_model_runs_beside_a_race_leader_in_its_worker(tmp_path):
    """A race's comparison side by side, as the master adds it (the options
    it passes its workers): sequential run beside threads-4 on 8 items of
    10 ms, whose truth is 4x (sequential waits 80 ms, threads-4 20 ms;
    items of 2 ms read 1.2x and 1.6x beside two busy loops, the threads'
    late wake-ups a large share of so short a wait). Its
    benchmark is in the file pyperf reads, run only in the rounds added,
    each pair's other batch threads-4's (in place of the reference's,
    which sequential is); the report leaves it out of its
    rows and gives it to sequential's row, where the race reads it."""
    proc = run_bench(SELECTION + ["-p", "1", "-n", "5", "--side-by-side", "0:1",
                                  "--latency-ms", "10",
                                  "--extra-rounds", "3/3", "-o", "a.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite, found = rounds_of(tmp_path / "a.json")
    name = "sleep/sequential beside threads-4"
    assert [b.get_name() for b in suite.get_benchmarks()][-1] == name
    assert sorted(n for r in found.values() for _, n in r if n == name) == [name, name]
    assert {r for r, names in found.items() if any(n == name for _, n in names)} == {1, 2}
    beside = suite.get_benchmark(name)
    assert beside.get_metadata()["beside"] == "threads-4"
    assert beside.get_metadata()["pairing"] == "worker"
    rows = build_rows(suite)["sleep"]
    assert name not in [row.name for row in rows]
    [sequential] = [row for row in rows if row.model == "sequential"]
    ran = sequential.beside_runs["threads-4"]
    # Each worker's median log(threads-4's time / sequential's): 2.45x to
    # 2.96x beside two busy loops (three runs of this test alone); beside
    # the reference, which sequential is, it would be 1.
    assert len(ran.paired_logs) == 2
    print("side by side, sequential over threads-4 by worker:",
          [round(math.exp(-log), 2) for log in ran.paired_logs.values()])
    assert all(1.3 < math.exp(-log) < 6.0 for log in ran.paired_logs.values()), ran.paired_logs
    report = subprocess.run([str(ROOT / "report.py"), "a.json"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0 and name not in report.stdout, report.stderr


def test_side_by_side_indexes_outside_the_matrix_are_refused(tmp_path):
    proc = run_bench(SELECTION + ["-p", "1", "--side-by-side", "0:9", "-o", "a.json"], tmp_path)
    assert proc.returncode == 2 and "--side-by-side: '0:9'" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "a.json").exists()
