"""report.py: golden outputs on kept bench.py JSON, comparisons, plots, bad input.

tests/data/small.json and tests/data/slow.json were written by bench.py
(commands in tests/data/README.md). Set CONCBENCH_UPDATE_GOLDEN=1 to rewrite
the golden files after a deliberate change of the report's output.
"""

import json
import math
import random
import os
import re
import statistics

import pyperf
import pytest

from conftest import ROOT, run

REPORT = str(ROOT / "report.py")
DATA = "tests/data"
GOLDEN = ROOT / "tests" / "golden"
UPDATE = os.environ.get("CONCBENCH_UPDATE_GOLDEN") == "1"


def report(*args, cwd=ROOT):
    return run([REPORT] + list(args), cwd)


# A number written in full (CSV, JSON), to 12 significant digits: the last
# digits of a standard deviation differ between Python versions (3.11
# rounds statistics.stdev's square root correctly, 3.10 does not: 1 ulp).
FULL_NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{6,}(?:[eE][-+]?\d+)?")


def significant(text):
    return FULL_NUMBER.sub(lambda number: format(float(number.group()), ".12g"), text)


def check_golden(name, text):
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text)
    assert significant(text) == significant(path.read_text()), \
        "report output changed: %s" % name


@pytest.mark.quick
@pytest.mark.parametrize("fmt, ext", [("text", "txt"), ("markdown", "md"),
                                      ("csv", "csv"), ("json", "json")])
def test_golden_single_file(fmt, ext):
    proc = report(DATA + "/small.json", "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    check_golden("small.%s" % ext, proc.stdout)


@pytest.mark.quick
def test_golden_comparison():
    proc = report(DATA + "/small.json", DATA + "/slow.json")
    assert proc.returncode == 0, proc.stderr
    check_golden("compare.txt", proc.stdout)


@pytest.mark.quick
def test_kept_file_has_several_processes_and_varying_run_metadata():
    suite = pyperf.BenchmarkSuite.load(str(ROOT / DATA / "small.json"))
    bench = suite.get_benchmark("http/asyncio")
    runs = [r for r in bench.get_runs() if r.values]
    assert len(runs) >= 3
    cpu = {r.get_metadata()["cpu_tree"] for r in runs}
    assert len(cpu) > 1
    # pyperf drops what differs between runs; the report must not rely on it.
    assert "cpu_tree" not in bench.get_metadata()


@pytest.mark.quick
def test_rows_are_computed_from_each_run():
    proc = report(DATA + "/small.json", "--format", "json")
    data = json.loads(proc.stdout)
    rows = {r["benchmark"]: r for w in data["workloads"].values() for r in w["rows"]}
    seq = rows["sleep/sequential"]
    assert seq["speedup"] == pytest.approx(1.0)
    assert seq["efficiency"] is not None and 0 < seq["efficiency"] <= 1.05
    assert rows["sleep/asyncio"]["speedup"] > 3
    assert rows["sleep/threads-4"]["speedup"] > 2
    for name, row in rows.items():
        assert row["mem_peak_bytes"] > 10 * 2**20, name
        assert row["cpu_cores"] > 0, name
        assert row["failures"] == 0, name
    suite = pyperf.BenchmarkSuite.load(str(ROOT / DATA / "small.json"))
    bench = suite.get_benchmark("rotate/processes-2-chunk-2")
    peaks = sorted(r.get_metadata()["mem_tree_peak"] for r in bench.get_runs()
                   if r.values)
    median = peaks[len(peaks) // 2]
    assert rows["rotate/processes-2-chunk-2"]["mem_peak_bytes"] == median
    # /usr/bin/time's figures per batch: the runs' sums over their values.
    per_batch = sorted(
        (r.get_metadata()["ctx_switches_voluntary"]
         + r.get_metadata()["ctx_switches_involuntary"]) / len(r.values)
        for r in bench.get_runs() if r.values)
    assert rows["rotate/processes-2-chunk-2"]["ctx_switches_per_batch"] == \
        pytest.approx(statistics.median(per_batch))
    assert rows["sleep/threads-4"]["cpu_s_per_batch"] > 0


@pytest.mark.quick
def test_workload_filter_and_sort():
    proc = report(DATA + "/small.json", "--workload", "sleep", "--sort", "time",
                  "--format", "csv")
    lines = proc.stdout.splitlines()[1:]
    assert all(line.startswith("sleep,") for line in lines)
    times = [float(line.split(",")[2]) for line in lines]
    assert times == sorted(times)


def relabelled(tmp_path, source, like, prefix="", **meta):
    """A copy of ``source`` whose benchmarks carry ``like``'s workload
    description, plus ``meta`` for those whose name starts with ``prefix``:
    what the comparison checks, nothing measured."""
    params = {b.get_name(): b.get_metadata().get("workload_params")
              for b in pyperf.BenchmarkSuite.load(like).get_benchmarks()}
    data = json.loads((ROOT / source).read_text())
    for bench in data["benchmarks"]:
        common = bench.setdefault("metadata", {})
        name = common.get("name") or bench["runs"][0]["metadata"]["name"]
        for run_ in bench["runs"]:
            run_.setdefault("metadata", {}).update(
                workload_params=params[name],
                **(meta if name.startswith(prefix) else {}))
        common.pop("workload_params", None)
    path = tmp_path / os.path.basename(source)
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.quick
def test_comparison_direction_and_significance(tmp_path):
    # Rows whose workload parameters differ are not compared...
    proc = report(DATA + "/small.json", DATA + "/slow.json", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    records = {r["benchmark"]: r for r in json.loads(proc.stdout)["benchmarks"]}
    slow = records["sleep/sequential"]["files"][1]
    assert slow["not_comparable"] == "different workload parameters"
    assert "time_change" not in slow and "mem_change_pct" not in slow
    # ...rows that agree are: slow.json's latency, labelled as small.json's.
    slow_path = relabelled(tmp_path, DATA + "/slow.json", str(ROOT / DATA / "small.json"))
    proc = report(DATA + "/small.json", slow_path, "--format", "json")
    records = {r["benchmark"]: r for r in json.loads(proc.stdout)["benchmarks"]}
    slow = records["sleep/sequential"]["files"][1]
    assert " slower [" in slow["time_change"] and slow["time_ratio"] > 1.5
    assert 1 < slow["time_ci_low"] < slow["time_ratio"] < slow["time_ci_high"]
    assert slow["time_significant"] is True
    same = records["sleep/sequential"]["files"][0]
    assert "time_change" not in same
    # A different server (or its Python) on an http row: not compared either.
    other = relabelled(tmp_path, DATA + "/small.json",
                       str(ROOT / DATA / "small.json"), prefix="http/",
                       http_server_python="3.13.5t")
    # (Markdown: a row a line, its cells unwrapped.)
    proc = report(DATA + "/small.json", other, "--format", "markdown")
    table = [line for line in proc.stdout.splitlines()
             if line.startswith("| http/sequential ")]
    assert len(table) == 1 and "not comparable: different server's Python" in table[0]
    assert [line for line in proc.stdout.splitlines()
            if line.startswith("| sleep/sequential ")][0].count("not comparable") == 0


def known_file(path, times, rounds=10, noise=0.01, seed=5, extra=None):
    """A bench.py-like file of models whose true times are ``times``
    ({model: seconds}), each round slowed alike by the machine's drift;
    ``extra``: more metadata of some models' runs ({model: {key: value}})."""
    rnd = random.Random(seed)
    # The machine the file was measured on, as bench.py records it: the
    # ideal times (and the flags above them) depend on its CPUs, not on
    # those of the machine that reads it.
    facts = {"workload": "w", "workload_kind": "cpu", "reference_model": "sequential",
             "items_per_batch": 10, "item_side": "sync", "interpreters": 1,
             "unit": "second", "cpu_count": 2}
    benchmarks = []
    drift = [1 + 0.3 * rnd.random() for _ in range(rounds)]
    for model, seconds in times.items():
        family, _, count = model.partition("-")
        meta = dict(facts, name="w/" + model, model=model, model_family=family,
                    parallelism=int(count or 1), concurrency=int(count or 1),
                    **(extra or {}).get(model, {}))
        if count:
            meta.update(scaling=family, scaling_unit=family.rstrip("s"))
        runs = [pyperf.Run([seconds * drift[r] * math.exp(rnd.gauss(0, noise))],
                           metadata=dict(meta, round=r), collect_metadata=False)
                for r in range(rounds)]
        benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return str(path)


@pytest.mark.quick
def test_takeaways_name_the_fastest_model(tmp_path):
    """Known times: threads-4 is the fastest model and the best thread
    count, and more threads stopped helping after it; the takeaways name
    them, and follow when the truth changes."""
    path = known_file(tmp_path / "known.json", {
        "sequential": 0.40, "threads-2": 0.22, "threads-4": 0.12, "threads-8": 0.15,
        "asyncio": 0.41})
    # The benchmarks' names and their flags, one line each.
    text = report(path, "--columns", "benchmark,speedup,flags").stdout
    assert "speedup" in text and "note:" not in text, text
    takeaways = [line for line in text.splitlines() if line.startswith("  * ")]
    assert "  * fastest: threads-4 (145 ms, 3.33x sequential)" in takeaways, text
    assert "  * best thread count: 4 (threads-4, 145 ms)" in takeaways, text
    assert "  * more threads stopped helping after 4" in takeaways, text
    # Two CPUs' ideal is half sequential's time (241 ms): the rows below
    # it are flagged, the one above is not.
    flagged = {line.split()[0] for line in text.splitlines()
               if line.startswith("w/") and line.rstrip().endswith("above-ideal")}
    assert flagged == {"w/threads-4", "w/threads-8"}, text
    # The other way round, the takeaways follow.
    path = known_file(tmp_path / "other.json", {
        "sequential": 0.40, "threads-2": 0.22, "threads-4": 0.30, "threads-8": 0.35,
        "asyncio": 0.11})
    text = report(path).stdout
    assert "  * fastest: asyncio (" in text and "  * best thread count: 2 " in text, text


@pytest.mark.quick
def test_files_of_different_truths_contradict_and_of_the_same_do_not(tmp_path):
    """The comparison's agreement: two files whose fastest model and best
    thread count differ contradict on both; two runs of the same truth,
    each decided, on neither."""
    from concbench.report.load import load
    from concbench.analysis.rows import build_rows
    from concbench.report.verdicts import agreement

    truth = {"sequential": 0.40, "threads-2": 0.22, "threads-4": 0.12,
             "threads-8": 0.15, "asyncio": 0.41}
    other = dict(truth, **{"threads-4": 0.30, "threads-8": 0.35, "asyncio": 0.11})
    files = [build_rows(load(known_file(tmp_path / ("%d.json" % seed), times, seed=seed)))
             for seed, times in ((1, truth), (2, truth), (3, other))]
    same = agreement(files[0], files[1])
    assert same["contradictions"] == [] and same["speedups_within_10pct"] == 4, same
    found = agreement(files[0], files[2])
    assert sorted(c.split(":")[0] for c in found["contradictions"]) == [
        "w best thread count", "w fastest"], found


@pytest.mark.quick
def test_a_row_whose_server_was_busy_is_flagged_server_bound(tmp_path):
    """A run whose load server spent more than the limit of its batches'
    time on CPU is flagged, and the takeaways name it; the limit a file
    records is the one that applies."""
    times = {"sequential": 0.40, "threads-4": 0.12, "asyncio": 0.05}
    busy = {"threads-4": {"server_busy": 0.2}, "asyncio": {"server_busy": 0.8}}
    text = report(known_file(tmp_path / "busy.json", times, extra=busy),
                  "--columns", "benchmark,flags").stdout
    flagged = {line.split()[0] for line in text.splitlines()
               if line.startswith("w/") and "server-bound" in line}
    assert flagged == {"w/asyncio"}, text
    assert "  * server-bound (the server, not the model, set the pace): asyncio" in text
    lenient = {model: dict(meta, server_busy_limit=0.9) for model, meta in busy.items()}
    text = report(known_file(tmp_path / "lenient.json", times, extra=lenient)).stdout
    assert "server-bound" not in text, text


def test_plots_are_png(tmp_path):
    proc = report(DATA + "/small.json", "--plot", tmp_path)
    assert proc.returncode == 0, proc.stderr
    from PIL import Image
    pngs = sorted(p.name for p in tmp_path.iterdir())
    assert "rotate.png" in pngs and "rotate-scaling.png" in pngs
    for name in pngs:
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG"
            assert image.size[0] > 300 and image.size[1] > 200
            assert sum(1 for n in image.convert("L").histogram() if n) > 10


@pytest.mark.quick
def test_plot_without_matplotlib_says_how_to_get_it(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; "
            "from concbench import report; sys.exit(report.main([%r, '--plot', %r]))"
            % (str(ROOT / DATA / "small.json"), str(tmp_path)))
    proc = run(["-c", code], ROOT)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "report.py: error: --plot needs matplotlib: pip install -e '.[plot]' "
        "(or pip install matplotlib)")


@pytest.mark.quick
def test_pyperf_file_without_our_metadata(tmp_path):
    bench = pyperf.Benchmark([pyperf.Run([1.0, 1.1, 0.9], metadata={"name": "plain"},
                                         collect_metadata=False)])
    path = tmp_path / "plain.json"
    bench.dump(str(path))
    proc = report(path)
    assert proc.returncode == 0, proc.stderr
    assert "carry no concurrency-bench metadata" in proc.stdout
    assert "plain" in proc.stdout and "1.00 s +- 100 ms" in proc.stdout


@pytest.mark.quick
@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("not json at all", "not a JSON file"),
    ("{\"a\": 1}", "not one written by pyperf"),
    ("[1, 2]", "not one written by pyperf"),
    ("{\"version\": \"1.0\", \"benchmarks\": [{\"runs\": \"x\"}]}", "pyperf cannot read it"),
    ("{\"version\": \"1.0\", \"benchmarks\": [", "not a JSON file"),
])
def test_bad_input_one_line_exit_2(tmp_path, content, message):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_text(content)
    proc = report(path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("report.py: error: "), proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.quick
def test_bad_options(tmp_path):
    proc = report(DATA + "/small.json", "--format", "xml")
    assert proc.returncode == 2 and "invalid choice: 'xml'" in proc.stderr
    proc = report(DATA + "/small.json", "--workload", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("report.py: error: tests/data/small.json: no "
                                   "benchmark of workload nope")


def test_ideal_uses_the_drawn_latencies(tmp_path):
    proc = run([ROOT / "bench.py", "--workload", "sleep", "--model",
                "sequential,threads-4,asyncio", "--items", "12", "--latency-ms",
                "20", "--jitter-ms", "15", "-p", "1", "-n", "1", "-w", "0", "-q",
                "-o", "j.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta = pyperf.BenchmarkSuite.load(str(tmp_path / "j.json")).get_benchmarks()[0] \
        .get_metadata()
    assert meta["latency_max_s"] <= 0.035 and meta["latency_sum_s"] > 0.012
    rows = {r["benchmark"]: r for r in json.loads(report(
        str(tmp_path / "j.json"), "--format", "json").stdout)["workloads"]["sleep"]["rows"]}
    assert rows["sleep/sequential"]["ideal_s"] == pytest.approx(meta["latency_sum_s"])
    assert rows["sleep/threads-4"]["ideal_s"] == pytest.approx(
        max(meta["latency_max_s"], meta["latency_sum_s"] / 4))
    assert rows["sleep/asyncio"]["ideal_s"] == pytest.approx(meta["latency_max_s"])
    for row in rows.values():
        assert row["efficiency"] <= 1.0, row


@pytest.mark.quick
def test_winners_rank_by_paired_speedup_and_decide_on_shared_rounds():
    """A row with 3 rounds against one with 31: its mean over other moments
    must not make it the winner; and whether they differ is decided on the
    rounds they share, not by whether their intervals against the
    reference overlap: 3 shared rounds tell them apart no more than any 3."""
    from types import SimpleNamespace

    from concbench.report.verdicts import winners
    from concbench.analysis.stats import paired_ratio

    slow_days = {r: 0.40 for r in range(3, 31)}
    reference = SimpleNamespace(by_round={0: 0.26, 1: 0.26, 2: 0.26, **slow_days},
                                pairing="none", position=0)
    few = SimpleNamespace(by_round={0: 0.300, 1: 0.302, 2: 0.301},  # 0.86x
                          pairing="round", position=1)
    many = SimpleNamespace(by_round={0: 0.21, 1: 0.22, 2: 0.23,
                                     **{r: 0.33 + 0.001 * r for r in slow_days}},
                           pairing="round", position=2)
    for row in (few, many):
        row.ratio = paired_ratio(reference.by_round, row.by_round)
        row.speedup = row.ratio.point
        row.mean = sum(row.by_round.values()) / len(row.by_round)
        row.speedups = (lambda row=row: {r: reference.by_round[r] / row.by_round[r]
                                         for r in row.by_round})
    reference.speedups = lambda: None
    reference.ratio, reference.speedup = None, 1.0
    reference.mean = sum(reference.by_round.values()) / len(reference.by_round)
    assert few.mean < many.mean     # the trap: fewer rounds, on a fast day
    best, tied = winners([reference, few, many])
    assert best is many
    # The reference shares 31 rounds with the winner: told apart.
    assert [row for row, _ in tied] == [few] and tied[0][1].rounds == 3
    # Three more shared rounds like the first three tell them apart.
    few.by_round.update({3: 0.460, 4: 0.462, 5: 0.461})
    many.by_round.update({3: 0.33, 4: 0.335, 5: 0.34})
    best, tied = winners([reference, few, many])
    assert best is many and tied == []


def test_a_point_outside_its_interval_is_drawn(tmp_path):
    """An interval intersected with its earlier ones may leave its point,
    the rounds' mean, outside it (encode/threads-2 in a default run: 0.53x
    [0.55-0.91]); its charts draw it, where an error bar around the point
    raised, and `make bench` ended without its page."""
    from concbench.report import plots
    from concbench.report.document import Analysis, comparison, single

    suite = pyperf.BenchmarkSuite.load(os.path.join(ROOT, DATA, "small.json"))
    document = single(Analysis("small.json", suite))
    twice = comparison([Analysis("a.json", suite), Analysis("b.json", suite)])
    moved = 0
    for entry in document["workloads"].values():
        for row in entry["rows"]:
            if row["speedup_ci_low"] is not None:
                row["speedup"] = row["speedup_ci_low"] * 0.95
                moved += 1
    for row in twice["benchmarks"]:
        if row.get("time_ci_low") is not None:
            row["time_ratio"] = row["time_ci_high"] * 1.05
            moved += 1
    assert moved > 4
    plt = plots.pyplot()
    charts = plots.all_charts(plt, document) + plots.all_charts(plt, twice)
    for name, chart in charts:
        plots.png(plt, chart, str(tmp_path / (name + ".png")))
    assert len(list(tmp_path.iterdir())) == len(charts) > 2
