"""The A/A control: the reference run again under its own name, read like any
row; a control that comes out faster or slower marks the run untrusted, and
a file without one says so in one line."""

import json
import math
import random

import pyperf
import pytest

from concbench import rules
from concbench.formatting import fmt_ratio

from conftest import ROOT, flat, run

REPORT = str(ROOT / "report.py")
FACTS = {"workload": "w", "workload_kind": "cpu", "reference_model": "sequential",
         "items_per_batch": 10, "concurrency": 1, "parallelism": 1,
         "interpreters": 1, "item_side": "sync", "unit": "second"}


def write_suite(path, times, rounds=8, noise=0.01, seed=1, control_rounds=None):
    """A bench.py-like file: ``times`` {model: seconds}; "control" gets the
    control's metadata; its rounds may be other than the others'."""
    rnd = random.Random(seed)
    drift = [1 + 0.3 * rnd.random() for _ in range(rounds)]
    benchmarks = []
    for model, seconds in times.items():
        numbers = (control_rounds if model == "control" and control_rounds is not None
                   else range(rounds))
        runs = []
        for number in numbers:
            value = seconds * drift[number % rounds] * math.exp(rnd.gauss(0, noise))
            runs.append(run_of(model, number, value))
        benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return path


def run_of(model, number, value, workload="w"):
    """One run of a bench.py-like file, "control" with the control's metadata."""
    meta = dict(FACTS, workload=workload, name="%s/%s" % (workload, model), model=model,
                round=number)
    if model == "control":
        meta["control_of"] = "sequential"
    return pyperf.Run([value], metadata=meta, collect_metadata=False)


def report(tmp_path, path, *args):
    proc = run([REPORT, str(path)] + list(args), tmp_path)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.quick
def test_a_control_that_holds_is_shown_and_kept_out_of_the_models(tmp_path):
    # Noise of a fifth of the band: 8 rounds show the control the same.
    path = write_suite(tmp_path / "ok.json", {"sequential": 0.3, "control": 0.3,
                                              "asyncio": 0.1}, noise=rules.BAND / 5)
    document = json.loads(report(tmp_path, path, "--format", "json"))
    assert document["trusted"] is True
    entry = document["workloads"]["w"]
    assert [row["model"] for row in entry["rows"]] == ["sequential", "asyncio"]
    control = entry["control"]
    assert control["benchmark"] == "w/control" and control["control_of"] == "sequential"
    assert control["verdict"] == "same" and control["rounds"] == 8
    assert control["speedup_ci_low"] < 1 < control["speedup_ci_high"]
    assert set(control) == {"benchmark", "control_of", "speedup", "speedup_ci_low",
                            "speedup_ci_high", "verdict", "rounds"}
    # Not a candidate of the takeaways, nor counted among the verdicts.
    assert not any("control" in line for line in entry["takeaways"])
    header = "\n".join(document["header"])
    assert "decided: 1 of 1 speedups" in header
    assert ("control: the reference against itself (A/A) is neither faster nor "
            "slower in w (w same)") in header
    text = report(tmp_path, path)
    assert "w/control" not in text.split("control:")[0]
    assert "* control: sequential against itself %s" % fmt_ratio(
        control["speedup"], control["speedup_ci_low"], control["speedup_ci_high"]) in flat(text)
    assert "same after 8 rounds" in flat(text)


def test_a_control_that_reads_faster_marks_the_run_untrusted(tmp_path):
    path = write_suite(tmp_path / "bad.json", {"sequential": 0.3, "control": 0.25,
                                               "asyncio": 0.1})
    document = json.loads(report(tmp_path, path, "--format", "json"))
    assert document["trusted"] is False
    assert document["workloads"]["w"]["control"]["verdict"] == "faster"
    untrusted = [line for line in document["header"] if "UNTRUSTED" in line]
    assert len(untrusted) == 1
    assert untrusted[0].startswith("  UNTRUSTED: w's A/A control (sequential against "
                                   "itself) came out faster, 1.19x [1.16-1.22]")
    assert "after 8 rounds" in untrusted[0]
    text = report(tmp_path, path)
    assert "UNTRUSTED, the intervals do not hold here" in flat(text)
    page = tmp_path / "bad.html"
    report(tmp_path, path, "--html", page)
    html = page.read_text()
    assert "UNTRUSTED" in html and "came out faster" in html


@pytest.mark.quick
@pytest.mark.parametrize("times, rounds, what", [
    ({"sequential": 0.3, "asyncio": 0.1}, None, "none"),
    # A control whose rounds are none of the reference's: nothing to pair.
    ({"sequential": 0.3, "control": 0.3, "asyncio": 0.1}, [20, 21, 22], "unusable"),
])
def test_a_file_without_a_usable_control_says_so_in_one_line(tmp_path, times,
                                                             rounds, what):
    path = write_suite(tmp_path / "x.json", times, control_rounds=rounds)
    document = json.loads(report(tmp_path, path, "--format", "json"))
    assert document["trusted"] is None
    assert document["workloads"]["w"]["control"] is None
    said = [line for line in document["header"] if "control" in line]
    assert said == ["  control: none usable for w (an older bench.py, --no-control, "
                    "plain pyperf, or a control that shares no round with its "
                    "reference): nothing there checks that the verdicts keep "
                    "their 95%"], what
    # Its verdicts are still computed, with the same intervals.
    assert document["workloads"]["w"]["rows"][1]["verdict"] == "faster"


@pytest.mark.quick
def test_a_plain_pyperf_file_has_no_control_and_no_traceback(tmp_path):
    runs = [pyperf.Run([0.1 + 0.001 * i], metadata={"name": "plain"},
                       collect_metadata=False) for i in range(3)]
    path = tmp_path / "plain.json"
    pyperf.BenchmarkSuite([pyperf.Benchmark(runs)]).dump(str(path))
    proc = run([REPORT, str(path)], tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    # No reference, so no control to ask for: plain pyperf benchmarks get
    # no control line (a file of bench.py's without one does).
    assert "control:" not in proc.stdout
    document = json.loads(report(tmp_path, path, "--format", "json"))
    assert document["trusted"] is None


@pytest.mark.parametrize("reference, said", [
    ("nosuch", "bench.py: error: --reference: unknown model 'nosuch'; models are: "),
    ("control", "bench.py: error: --reference: the A/A control is the reference run "
                "again; name the model to compare with"),
    ("asyncio-serial-9", "bench.py: error: --reference: model 'asyncio-serial-9': "
                         "expected asyncio-serial or uvloop-serial"),
])
def test_an_unknown_reference_is_one_line_and_exit_2(tmp_path, reference, said):
    proc = run([str(ROOT / "bench.py"), "--workload", "encode", "--reference", reference,
                "-o", "r.json"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(said) and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "r.json").exists()


def test_a_reference_that_cannot_run_the_workload_is_refused(tmp_path):
    import sys

    # Subinterpreter pools need 3.13; on 3.13+ a pool of them cannot run
    # rotate (Pillow does not load in an interpreter of its own).
    model = "interpreters-2-chunk-4"
    proc = run([str(ROOT / "bench.py"), "--workload", "rotate", "--reference", model,
                "--list"], tmp_path)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith("bench.py: error: --reference %s cannot run rotate: "
                                  % model), proc.stderr
    assert proc.stderr.count("\n") == 1
    assert sys.version_info >= (3, 10)


def test_a_chosen_reference_leads_and_its_control_runs_it_against_itself(tmp_path):
    """--reference threads-2: speedups are against threads-2, the control is
    threads-2 against itself (paired in its worker, a model that uses both
    cores), sequential is a row like any other, and every batch is still
    checked against sequential results."""
    proc = run([str(ROOT / "bench.py"), "--workload", "encode", "--items", "300",
                "--reference", "threads-2", "--model", "sequential,asyncio",
                "-p", "3", "-n", "2", "-w", "0", "--quiet", "-o", "t.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "t.json"))
    assert suite.get_benchmark_names() == ["encode/threads-2", "encode/control",
                                           "encode/sequential", "encode/asyncio"]
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        assert meta["reference_model"] == "threads-2"
        assert meta["batch_check"].startswith("every item's result equals the "
                                              "sequential reference")
        name = bench.get_name()
        assert meta["pairing"] == ("none" if name == "encode/threads-2" else "worker")
        if name == "encode/control":
            assert meta["control_of"] == "threads-2" and meta["parallelism"] == 2
    document = json.loads(report(tmp_path, tmp_path / "t.json", "--format", "json"))
    entry = document["workloads"]["encode"]
    assert entry["reference"] == "threads-2"
    assert entry["control"]["control_of"] == "threads-2"
    rows = {row["model"]: row for row in entry["rows"]}
    assert rows["threads-2"]["speedup"] == 1.0 and rows["sequential"]["speedup"] > 0
    assert "threads-2 against itself" in report(tmp_path, tmp_path / "t.json")


def spread_suite(path, spreads, rounds=30, seed=3):
    """Models of true speedup 1 whose per-round values spread by
    ``spreads[model]`` (log), against a steady reference."""
    rnd = random.Random(seed)
    benchmarks = []
    for model, spread in [("sequential", 0.0)] + list(spreads.items()):
        runs = []
        for number in range(rounds):
            meta = dict(FACTS, name="w/" + model, model=model, round=number)
            if model == "control":
                meta["control_of"] = "sequential"
            value = 0.3 * math.exp(rnd.gauss(0, spread))
            runs.append(pyperf.Run([value], metadata=meta, collect_metadata=False))
        benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return path


@pytest.mark.quick
def test_a_wide_spread_is_the_models_own_only_where_the_control_is_narrower(tmp_path):
    path = spread_suite(tmp_path / "w.json", {"control": 0.1, "wide": 0.4, "alike": 0.1})
    lines = json.loads(report(tmp_path, path, "--format", "json"))["workloads"]["w"]["takeaways"]
    said = [line for line in lines if "still undecided after" in line]
    own = [line for line in said if "the model's own" in line]
    assert len(own) == 1 and "wide (" in own[0] and "alike" not in own[0], said
    # The same spread in the control: the machine's, not the model's.
    path = spread_suite(tmp_path / "m.json", {"control": 0.4, "wide": 0.4})
    lines = json.loads(report(tmp_path, path, "--format", "json"))["workloads"]["w"]["takeaways"]
    said = [line for line in lines if "still undecided after" in line]
    assert said and all("the model's own" not in line for line in said), said
    assert any("the machine's: the A/A control's rounds spread by" in line
               for line in said), said


# A worker's value: the median of its pairs' logs, each pair spread 0.05,
# and a quarter of them straddling a jump of the CPU's speed (0.35 either
# way): a real A/A run's encode workers jumped between about 155 ms and
# 270 ms, with 19-30% of their pairs more than 22% apart
# (docs/figures.md, "A long A/A run").
JUMPS = dict(pairs=5, spread=0.05, straddle=0.25, jump=0.35)


def identical_rows(rnd, count, rounds, pairs, spread, straddle, jump):
    """A control and ``count`` rows of identical code, undecided, each
    value a worker's median pair."""
    from statistics import median
    from types import SimpleNamespace

    def row(model):
        values = [math.exp(median(rnd.gauss(0, spread) + (
            jump * rnd.choice((-1, 1)) if rnd.random() < straddle else 0.0)
            for _ in range(pairs))) for _ in range(rounds)]
        return SimpleNamespace(model=model, verdict="undecided",
                               round_ratios=lambda values=values: values)
    return row("control"), [row("copy-%d" % n) for n in range(count)]


def called_own(runs, seed=11, rows=7, rounds=16, **noise):
    """The share of simulated workloads of identical code in which the
    report's line calls some row's spread its own."""
    from concbench.report.verdicts import wide_lines

    rnd, found = random.Random(seed), 0
    for _ in range(runs):
        control, copies = identical_rows(rnd, rows, rounds, **noise)
        found += any("the model's own" in line for line in wide_lines(copies, control))
    return found / runs


@pytest.mark.parametrize("noise", [dict(JUMPS, straddle=0.0), JUMPS],
                         ids=["gaussian", "jumps"])
def test_identical_code_is_called_wider_than_the_control_in_5_percent_at_most(noise):
    """Seven copies of the control's own code, 16 rounds each, 1,000
    workloads: some copy is called "the model's own" spread in 5.0% of
    them or fewer (3.5% with Gaussian pairs, 1.6% with pairs that straddle
    the CPU's speed jumps). At 1,000 workloads a test erring at 7% reads
    5.0% or less with a chance of 0.59%, under 1%."""
    assert called_own(1000, **noise) <= 0.05


def f_test(row, control, rows=1):
    """The test the line used before: a normal approximation of Fisher's F
    on the two variances, one-sided at 95% for each row."""
    from concbench.report.verdicts import spread

    mine, theirs = len(row.round_ratios()), len(control.round_ratios())
    error = math.sqrt(2 / (mine - 1) + 2 / (theirs - 1))
    return 2 * math.log(spread(row) / spread(control)) > 1.645 * error


@pytest.mark.parametrize("mutation, least", [("f-test", 0.3), ("no split", 0.1)])
def test_a_test_of_the_spread_without_its_split_or_robustness_fails_that_check(
        monkeypatch, mutation, least):
    """The same 1,000 workloads under the jumps, with the line's test
    mutated: the F test per row called some copy wider in 61.5% of them,
    the Brown-Forsythe test at 95% for each row (no split over the seven)
    in 18.6%; the check above fails both."""
    from concbench.report import verdicts

    robust = verdicts.wider
    monkeypatch.setattr(verdicts, "wider", f_test if mutation == "f-test" else
                        lambda row, control, rows=1: robust(row, control))
    assert called_own(1000, **JUMPS) > least


@pytest.mark.quick
def test_the_comparison_names_the_leader_of_an_undecided_race(tmp_path):
    """Two files whose models are not told apart: each file's best is
    "undecided" with the model that leads, not every model of the race."""
    first = write_suite(tmp_path / "a.json", {"sequential": 0.3, "asyncio": 0.1,
                                              "uvloop": 0.1005}, rounds=3, noise=0.05)
    second = write_suite(tmp_path / "b.json", {"sequential": 0.3, "asyncio": 0.1,
                                               "uvloop": 0.0995}, rounds=3, noise=0.05,
                         seed=2)
    text = report(tmp_path, first, str(second))
    best = [line for line in text.splitlines() if "best:" in line]
    assert len(best) == 1
    assert "undecided (" in best[0] and "leads)" in best[0], best
    assert "sequential" not in best[0], best
    document = json.loads(report(tmp_path, first, str(second), "--format", "json"))
    entry = document["best"]["w"][str(first)]
    assert entry["answered"] is False and entry["leader"] in ("asyncio", "uvloop")
    # Decided: the answer itself.
    decided = write_suite(tmp_path / "c.json", {"sequential": 0.3, "asyncio": 0.1},
                          rounds=8, noise=0.01)
    text = report(tmp_path, decided, str(decided))
    assert [line.strip() for line in text.splitlines() if "best:" in line] == [
        "* best: c asyncio; c asyncio"]


def borderline_suite(path, workloads):
    """Each of ``workloads`` has a reference and a control whose per-round
    speedups are exp(0.121 +- 0.05), alternating, over 8 rounds: its
    confidence sequence (its spread widened as a verdict's is) excludes 1
    at 95% and holds it at 97.5%."""
    benchmarks = []
    for workload in workloads:
        for model in ("sequential", "control", "asyncio"):
            runs = []
            for number in range(8):
                shift = 0.121 + (0.05 if number % 2 else -0.05)
                value = {"sequential": 0.3, "asyncio": 0.1,
                         "control": 0.3 * math.exp(-shift)}[model]
                runs.append(run_of(model, number, value, workload))
            benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return path


@pytest.mark.quick
def test_the_controls_of_a_run_share_its_five_percent(tmp_path):
    """With one control, its 95% interval decides; with two, each is held
    to 97.5%, so that a sound run is marked UNTRUSTED with at most 5%
    chance however many workloads it has. (Each control at 95% on its
    own: the two-workload file is untrusted too, and this fails.)"""
    from concbench.analysis import anytime
    from concbench.analysis.stats import ROUND_WIDENING

    spread = 0.05 * math.sqrt(8 / 7) * ROUND_WIDENING
    half = anytime.half_width(8, spread)
    wider = anytime.half_width(8, spread, anytime.ALPHA / 2)
    assert half < 0.121 < wider
    one = json.loads(report(tmp_path, borderline_suite(tmp_path / "one.json", ["w"]),
                            "--format", "json"))
    assert one["trusted"] is False
    assert one["workloads"]["w"]["control"]["verdict"] == "faster"
    two = json.loads(report(tmp_path, borderline_suite(tmp_path / "two.json", ["w", "v"]),
                            "--format", "json"))
    assert two["trusted"] is True
    for workload in ("w", "v"):
        control = two["workloads"][workload]["control"]
        assert control["verdict"] == "undecided"
        assert control["speedup_ci_low"] < 1 < control["speedup_ci_high"]
