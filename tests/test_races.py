"""A race's two models compared in one worker of their own.

Two models that use both CPUs each carry the other CPU's speed in their
speedup over a reference on one; paired with each other in one worker
they see the same machine. A race between rows paired in their worker
runs them so in the rounds bench.py adds, and reads both sources, each at
half the level, only in a run that said beforehand that it would.
"""

import json
import math
import random

import pyperf

from concbench.analysis.comparisons import both_ways, can_race, compare
from concbench.analysis.questions import Race, all_questions, fastest
from concbench.analysis.rows import build_rows
from concbench.analysis.stats import Ratio
from concbench.analysis import anytime
from concbench.run.allocation import members, more_rounds, race_workers, workers_per_round
from conftest import run, run_bench

ROUNDS = 8


def paired_run(name, model, number, logs, **extra):
    """One worker's run: the model's batches of 0.2 s, the other side's
    beside them at exp(log) times as long."""
    meta = {"name": name, "pairing": "worker", "workload": "w", "workload_kind": "cpu", "model": model,
            "reference_model": "sequential", "round": number, "items_per_batch": 4,
            "concurrency": 2, "parallelism": 2, "interpreters": 1, "item_side": "sync",
            "unit": "second",
            "paired_reference_s": " ".join(repr(0.2 * math.exp(x)) for x in logs)}
    meta.update(extra)
    return pyperf.Run([0.2] * len(logs), metadata=meta, collect_metadata=False)


def race_file(racing=True, duel=True, seed=3, rounds=ROUNDS, faster=2.2, workers=1,
              a_threads=2):
    """Rows a (2.0x sequential, on ``a_threads`` threads) and b (2.2x: 10%
    faster, on 2), their speedups spread by 0.2 a round, and a's
    comparison with b in one worker, spread by 0.01, ``workers`` of them in
    each round."""
    rng = random.Random(seed)
    said = {"race_pairing": "worker"} if racing else {}
    runs = {"w/sequential": [], "w/a": [], "w/b": [], "w/a vs b": []}
    for number in range(rounds):
        meta = dict(paired_run("w/sequential", "sequential", number, [0.0], **said)
                    .get_metadata(), pairing="none", concurrency=1, parallelism=1)
        del meta["paired_reference_s"]
        runs["w/sequential"].append(pyperf.Run([0.4], metadata=meta, collect_metadata=False))
        for model, truth in (("a", 2.0), ("b", faster)):
            threads = a_threads if model == "a" else 2
            runs["w/" + model].append(paired_run(
                "w/" + model, model, number,
                [math.log(truth) + rng.gauss(0, 0.2) for _ in range(3)],
                concurrency=threads, parallelism=threads, **said))
        runs["w/a vs b"].extend(paired_run(
            "w/a vs b", "a", number,
            [math.log(2.0 / faster) + rng.gauss(0, 0.01) for _ in range(3)], race_with="b",
            **said) for _ in range(workers))
    names = list(runs) if duel else list(runs)[:-1]
    return pyperf.BenchmarkSuite([pyperf.Benchmark(runs[name]) for name in names])


def test_a_race_reads_the_two_models_compared_in_one_worker():
    rows = {r.model: r for r in build_rows(race_file())["w"]}
    assert set(rows) == {"sequential", "a", "b"}      # the comparison is no row
    assert rows["a"].races["b"].name == "w/a vs b"
    ratio = compare(rows["a"], rows["b"], 2)
    # a's time over b's: 1.10, from the pairs in one worker.
    assert 1.07 < ratio.low and ratio.high < 1.14, ratio
    race = Race(list(rows.values()))
    assert race.leader.model == "b" and race.answered
    # Through the speedups alone (a file whose run did not say it would
    # compare them in one worker, or that has no such comparison), the
    # same rows are not told apart.
    for suite in (race_file(racing=False), race_file(duel=False)):
        alone = {r.model: r for r in build_rows(suite)["w"]}
        assert not Race(list(alone.values())).answered
        assert compare(alone["a"], alone["b"], 2).includes_one()


def test_an_open_race_between_rows_paired_in_their_worker_runs_them_in_one_worker():
    for racing, expected in ((True, {"w/a vs b"}), (False, {"w/a", "w/b"})):
        groups = build_rows(race_file(racing=racing, duel=False))
        fastest = next(q for q in all_questions(groups, {}) if q.kind == "fastest")
        runs = set().union(*[members(part) for part in fastest.parts])
        assert expected <= runs, (racing, runs)
        if racing:
            assert not {"w/a", "w/b"} & runs


def test_several_workers_of_one_round_are_each_a_unit_of_the_comparison():
    rows = {r.model: r for r in build_rows(race_file(rounds=1, workers=5))["w"]}
    race = rows["a"].races["b"]
    assert sorted(race.paired_logs) == [(0, worker) for worker in range(5)]
    ratio = compare(rows["a"], rows["b"], 2)
    assert ratio.rounds == 5 and 1.05 < ratio.low and ratio.high < 1.16, ratio


def test_a_close_comparison_runs_as_many_workers_in_one_round_as_it_needs_to_be_bounded():
    """Before its comparison in one worker has run, a close race asks for
    as many of its workers as its interval needs to be bounded at all, in
    one round; a row far behind leaves the race through a round of the rows
    themselves."""
    def parts(suite):
        """{the row against the leader: its part of the fastest model's race}."""
        race = next(q for q in all_questions(build_rows(suite), {}) if q.kind == "fastest")
        return {p.pairs[0][0].model: p for p in race.parts}

    close = parts(race_file(duel=False, rounds=2))
    # Against sequential, which is no side of a comparison in one worker,
    # the leader's own worker runs.
    assert members(close["sequential"]) == {"w/a"}
    duel = close["b"]
    assert members(duel) == {"w/a vs b"}
    needed = anytime.first_bounded(duel.alpha)
    assert duel.alpha == anytime.ALPHA / 2 / 2 and needed >= 4
    assert workers_per_round(duel) == needed and more_rounds(duel) == 1
    assert race_workers(close.values()) == {"w/a vs b": needed}
    far = parts(race_file(duel=False, rounds=2, faster=4.0))
    assert far and all(members(p) <= {"w/a", "w/b"} for p in far.values()), far
    assert race_workers(far.values()) == {}


def test_the_comparison_in_one_worker_keeps_the_leader_the_speedups_would_change():
    """b is 3% faster than a: too close for either source to show in 3
    rounds, but their comparison in one worker reads it, while the
    speedups' points (spread by 0.2 a round) put a ahead in some runs. The
    race's leader follows the more precise source, so that the comparisons
    run against it stay its own; a reading within 2.5% leaves the leader
    where it is."""
    led_by_a = 0
    for seed in range(10):
        rows = build_rows(race_file(seed=seed, rounds=3, faster=2.06, workers=2))["w"]
        led_by_a += fastest(rows).model == "a"
        assert Race(rows).leader.model == "b", seed
        rows = build_rows(race_file(seed=seed, rounds=3, faster=2.02, workers=2))["w"]
        assert Race(rows).leader is fastest(rows), seed
    assert led_by_a >= 2


def test_the_leader_stays_with_the_row_its_comparisons_ran_against():
    """a, b and c a percent or two apart; a has been compared in one worker
    with b and with c. When b's speedup edges ahead, a stays the leader:
    their comparison reads them within 2.5%, and the ones against a have
    run. Without those comparisons, b leads."""
    rng = random.Random(11)
    said = {"race_pairing": "worker"}
    truths = {"a": 2.0, "b": 2.3, "c": 1.96}     # b's speedups read high
    runs = {"w/sequential": [], "w/a": [], "w/b": [], "w/c": [],
            "w/a vs b": [], "w/a vs c": []}
    for number in range(3):
        meta = dict(paired_run("w/sequential", "sequential", number, [0.0], **said)
                    .get_metadata(), pairing="none", concurrency=1, parallelism=1)
        del meta["paired_reference_s"]
        runs["w/sequential"].append(pyperf.Run([0.4], metadata=meta, collect_metadata=False))
        for model, truth in truths.items():
            runs["w/" + model].append(paired_run(
                "w/" + model, model, number,
                [math.log(truth) + rng.gauss(0, 0.01) for _ in range(3)], **said))
        for other, ratio in (("b", 1.01), ("c", 1.02)):
            runs["w/a vs " + other].extend(paired_run(
                "w/a vs " + other, "a", number,
                [math.log(ratio) + rng.gauss(0, 0.01) for _ in range(3)], race_with=other,
                **said) for _ in range(2))
    suite = pyperf.BenchmarkSuite([pyperf.Benchmark(runs[name]) for name in runs])
    rows = build_rows(suite)["w"]
    assert fastest(rows).model == "b" and Race(rows).leader.model == "a"
    alone = build_rows(pyperf.BenchmarkSuite([pyperf.Benchmark(runs[name])
                                              for name in list(runs)[:4]]))["w"]
    assert Race(alone).leader.model == "b"


def test_a_model_on_one_cpu_is_compared_through_its_speedup_alone():
    """Only two models that both run on more than one CPU are compared in
    one worker of their own (a fact of the models, known before any round):
    a model on one thread is kept on its reference's CPU, and its speedup
    is read at the full level."""
    rows = {r.model: r for r in build_rows(race_file(duel=False, rounds=2, a_threads=1))["w"]}
    assert not can_race(rows["a"], rows["b"])
    race = next(q for q in all_questions({"w": list(rows.values())}, {})
                if q.kind == "fastest")
    assert race.alpha == anytime.ALPHA / 2 and not race.races
    assert all(p.alpha == anytime.ALPHA / 2 for p in race.parts)


def test_both_sources_hold_where_they_overlap():
    wide = Ratio(1.05, 0.90, 1.20, 3, 6, (1.0, 1.1), 0.1)
    narrow = Ratio(1.10, 1.02, 1.15, 6, 6, (1.1, 1.1), 0.02)
    found = both_ways(wide, narrow)
    assert (found.low, found.high, found.point) == (1.02, 1.15, 1.10)
    assert both_ways(wide, None) is wide
    # Two that miss each other: one of them missed the truth.
    assert both_ways(Ratio(0.9, 0.8, 0.97, 0, 6), narrow) is narrow


def test_a_race_comparison_runs_checked_in_one_worker_and_is_filed_apart(tmp_path):
    """The comparison of threads-2 and threads-4 in one worker, in a round
    of its own (the one an open race would add; its index is the matrix's
    3 + 1 x 3 + 2): checked like any batch, filed in pyperf's format after
    the matrix's benchmarks, and left out of the report's rows. A run with a
    budget says beforehand that it makes such comparisons."""
    proc = run_bench(["--workload", "rotate", "--model", "sequential,threads-2,threads-4",
                      "--items", "4", "--image-size", "128", "--no-control", "-p", "1",
                      "--extra-rounds", "8", "--quiet", "-o", "r.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "r.json"))
    assert [b.get_name() for b in suite.get_benchmarks()] == ["rotate/sequential", "rotate/threads-2", "rotate/threads-4",
                                 "rotate/threads-2 vs threads-4"]
    race = suite.get_benchmark("rotate/threads-2 vs threads-4")
    for run_ in race.get_runs():
        meta = run_.get_metadata()
        assert meta["race_with"] == "threads-4" and meta["model"] == "threads-2", meta
        assert meta["round"] == 1 and meta["pairing"] == "worker", meta
        assert len(meta["paired_reference_s"].split()) == len(run_.values), meta
        assert meta["failures"] == 0 and meta.get("paired_reference_failures", 0) == 0, meta
    shown = run(["-m", "pyperf", "show", "r.json"], tmp_path)
    assert shown.returncode == 0 and "threads-2 vs threads-4" in shown.stdout
    out = run(["-m", "concbench.report", "r.json", "--format", "json"], tmp_path)
    rows = json.loads(out.stdout)["workloads"]["rotate"]["rows"]
    assert sorted(r["benchmark"] for r in rows) == [
        "rotate/sequential", "rotate/threads-2", "rotate/threads-4"]
    assert "race_pairing" not in suite.get_metadata()       # a fixed count adds no round
    budget = run_bench(["--workload", "sleep", "--model", "sequential,threads-2", "--items",
                        "2", "--latency-ms", "1", "--jitter-ms", "0", "--max-time", "1s",
                        "--quiet", "-o",
                        "b.json"], tmp_path)
    assert budget.returncode == 0, budget.stderr
    said = pyperf.BenchmarkSuite.load(str(tmp_path / "b.json")).get_metadata()
    assert said["race_pairing"] == "worker"
