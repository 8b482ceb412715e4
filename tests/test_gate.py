"""report.py --fail-on: a CI gate on two runs, which reads each row's
speedup against its own file's reference (a ratio of ratios), fails only
beyond the band of "the same", and keeps its 5% over every row it compares:
on files of known truth, on simulated runs driven by bench.py's own
decision path, and on two real runs where a model plugin was made slower."""

import json
import math
import random

import pyperf
import pytest

from concbench import rules
from concbench.analysis.gate import gate
from concbench.analysis.unpaired import t_critical
from concbench.report.document import Analysis
from conftest import ROOT, run
from test_control import FACTS
from test_plugins import DEMO, build_wheel, concbench, install

REPORT = str(ROOT / "report.py")


def bench_file(path, times, rounds=8, noise=0.02, machine=1.0, seed=1, workload="w"):
    """A bench.py-like file whose models (``times``: {model: seconds}) pair
    by round with the reference, sequential; every time of the run scaled
    by ``machine`` (a slower machine, or a busier day)."""
    rnd = random.Random(seed)
    benchmarks = []
    for model, seconds in times.items():
        runs = []
        for number in range(rounds):
            value = seconds * machine * math.exp(rnd.gauss(0, noise))
            meta = dict(FACTS, workload=workload, name="%s/%s" % (workload, model),
                        model=model, round=number)
            if model == "control":
                meta["control_of"] = "sequential"
            runs.append(pyperf.Run([value], metadata=meta, collect_metadata=False))
        benchmarks.append(pyperf.Benchmark(runs))
    pyperf.BenchmarkSuite(benchmarks).dump(str(path))
    return path


BASE = {"sequential": 0.3, "control": 0.3, "threads-2": 0.2, "asyncio": 0.1}


def gated(tmp_path, *args):
    return run([REPORT] + [str(a) for a in args], tmp_path)


def one_line_error(proc, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.quick
def test_t_critical_values_match_students_table():
    # Two-sided 95% and 99% of Student's t (any statistics table).
    for df, value in ((1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042)):
        assert t_critical(df) == pytest.approx(value, abs=1e-3)
    for df, value in ((1, 63.657), (4, 4.604), (20, 2.845)):
        assert t_critical(df, 0.01) == pytest.approx(value, abs=1e-3)


@pytest.mark.quick
def test_a_model_made_slower_fails_and_is_named(tmp_path):
    base = bench_file(tmp_path / "base.json", BASE, seed=1, noise=0.002)
    slower = bench_file(tmp_path / "new.json", dict(BASE, asyncio=0.2), seed=2, noise=0.002)
    proc = gated(tmp_path, base, slower, "--fail-on", "slower")
    assert proc.returncode == 1, proc.stderr
    assert "1 of 2 rows slower" in proc.stderr
    named = [line for line in proc.stderr.splitlines() if line.lstrip().startswith("w/")]
    assert len(named) == 1 and "w/asyncio: 2.00x slower" in named[0], proc.stderr
    assert "3.00x -> 1.50x" in named[0]
    # The report itself is printed as without the gate.
    assert "w/asyncio" in proc.stdout


@pytest.mark.quick
def test_the_machine_moving_between_runs_cancels(tmp_path):
    """Every time 40% longer in the new run (a busier machine): raw times
    read slower, the speedups do not, and the gate passes."""
    base = bench_file(tmp_path / "base.json", BASE, seed=1)
    busier = bench_file(tmp_path / "new.json", BASE, seed=2, machine=1.4)
    proc = gated(tmp_path, base, busier, "--fail-on", "changed")
    assert proc.returncode == 0, proc.stderr
    assert "none of 2 rows changed" in proc.stderr
    # What raw times would have failed on.
    compared = json.loads(gated(tmp_path, base, busier, "--format", "json").stdout)
    raw = [r["files"][1]["time_ratio"] for r in compared["benchmarks"]]
    assert all(1.3 < ratio < 1.5 for ratio in raw), raw


@pytest.mark.quick
def test_faster_fails_changed_only(tmp_path):
    base = bench_file(tmp_path / "base.json", BASE, seed=1, noise=0.002)
    faster = bench_file(tmp_path / "new.json", dict(BASE, asyncio=0.05), seed=2, noise=0.002)
    assert gated(tmp_path, base, faster, "--fail-on", "slower").returncode == 0
    proc = gated(tmp_path, base, faster, "--fail-on", "changed")
    assert proc.returncode == 1 and "w/asyncio: 2.00x faster" in proc.stderr


@pytest.mark.quick
def test_a_change_inside_the_band_never_fails(tmp_path):
    """Slower by 60% of the band (3% at a band of 5%), known to within a
    fraction of a percent: inside "the same", so neither gate fails, however
    sure the change is."""
    base = bench_file(tmp_path / "base.json", BASE, rounds=30, noise=0.001, seed=1)
    new = bench_file(tmp_path / "new.json", dict(BASE, asyncio=0.1 * (1 + 0.6 * rules.BAND)),
                     rounds=30, noise=0.001, seed=2)
    for fail_on in ("slower", "changed"):
        assert gated(tmp_path, base, new, "--fail-on", fail_on).returncode == 0


@pytest.mark.quick
def test_the_level_is_split_over_the_rows_compared(tmp_path):
    """One row's interval from the gate over 20 rows is wider than the same
    row's over 1: 95% over the 20 together."""
    many = dict({"sequential": 0.3}, **{"m%d" % n: 0.1 for n in range(20)})
    files = [bench_file(tmp_path / ("%d.json" % seed), many, seed=seed) for seed in (1, 2)]
    groups = [Analysis(str(p), pyperf.BenchmarkSuite.load(str(p))).groups for p in files]
    together = {c.name: c.ratio for c in gate(*groups)}
    alone = {c.name: c.ratio for c in gate(*[{"w": [r for r in g["w"] if r.model in (
        "sequential", "m0")]} for g in groups])}
    assert len(together) == 20 and list(alone) == ["w/m0"]
    wide, narrow = together["w/m0"], alone["w/m0"]
    assert wide.point == pytest.approx(narrow.point)
    assert math.log(wide.high / wide.low) > 1.3 * math.log(narrow.high / narrow.low)


@pytest.mark.quick
def test_bad_input_is_one_line_and_exit_2(tmp_path):
    base = bench_file(tmp_path / "base.json", BASE)
    one_line_error(gated(tmp_path, base, "--fail-on", "slower"), "exactly two files")
    one_line_error(gated(tmp_path, base, base, base, "--fail-on", "slower"),
                   "exactly two files", "3 given")
    other = bench_file(tmp_path / "other.json", BASE, workload="v")
    one_line_error(gated(tmp_path, base, other, "--fail-on", "slower"),
                   "no row is in both files", "w/asyncio (only in the base file)")
    unreferenced = bench_file(tmp_path / "noref.json",
                              {k: v for k, v in BASE.items() if k != "sequential"})
    one_line_error(gated(tmp_path, base, unreferenced, "--fail-on", "slower"),
                   "no reference row in the new file")
    one_line_error(gated(tmp_path, base, base, "--fail-on", "worse"), "invalid choice")
    # One round a file: nothing can be judged, and a gate that judged
    # nothing must not pass.
    once = bench_file(tmp_path / "once.json", BASE, rounds=1)
    one_line_error(gated(tmp_path, once, once, "--fail-on", "slower"), "nothing can be judged")
    # A row's reference batches that no float arithmetic can hold (1e308
    # beside its own) leave it without a speedup in that file: named, and
    # no traceback.
    data = json.loads((ROOT / "tests" / "data" / "small.json").read_text())
    for bench in data["benchmarks"]:
        if bench["metadata"].get("name") == "rotate/threads-2":
            for run_ in bench["runs"]:
                meta = run_.get("metadata", {})
                if "paired_reference_s" in meta:
                    meta["paired_reference_s"] = " ".join(["1e308"] * len(run_["values"]))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    proc = gated(tmp_path, ROOT / "tests" / "data" / "small.json", broken, "--fail-on", "changed")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "not compared, no speedup in the new file: rotate/threads-2" in proc.stderr


@pytest.mark.quick
def test_rows_in_one_file_only_are_named(tmp_path):
    base = bench_file(tmp_path / "base.json", BASE)
    fewer = bench_file(tmp_path / "new.json", {k: v for k, v in BASE.items() if k != "asyncio"},
                       seed=2)
    proc = gated(tmp_path, base, fewer, "--fail-on", "slower")
    assert proc.returncode == 0, proc.stderr
    assert "none of 1 rows slower" in proc.stderr
    assert "not compared, only in the base file: w/asyncio" in proc.stderr


@pytest.mark.quick
def test_the_gates_status_stands_when_standard_output_closes_early(tmp_path):
    """A reader that closes the report's standard output before it is written
    (a pipe to head, or to true here): the gate still
    prints its lines and exits 1."""
    import subprocess
    import sys

    base = bench_file(tmp_path / "base.json", BASE, seed=1, noise=0.002)
    slower = bench_file(tmp_path / "new.json", dict(BASE, asyncio=0.2), seed=2, noise=0.002)
    command = "%s %s %s %s --fail-on slower --format json | true; " % (
        sys.executable, REPORT, base, slower)
    proc = subprocess.run(command + "echo status ${PIPESTATUS[0]} >&2",
                          shell=True, executable="/bin/bash", capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert "status 1" in proc.stderr and "w/asyncio: 2.00x slower" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


# -- the error rate, on simulated runs of known truth -------------------------------------

# The cell where the gate's false failures are most likely: long runs (the
# default world's 20 rounds) in the machine's slow periods, which keep their
# sign for several rounds (simulated over every kind of noise: docs/report.md).
WORST = ("drift",)


def null_rates(alpha=None, trials=100):
    from research.simulation import gate_rates

    return gate_rates(trials, 5, noises=WORST, spreads=(0.15,), truths="default",
                      alpha=alpha)


def consistent_with_the_level(rate, trials=100):
    """Whether ``rate`` failures in ``trials`` pairs could come from a gate
    that fails with the level's chance (5%) or less: seeing as many would
    have a chance of 1% or more."""
    from research.doc_numbers import binomial_below

    failures = round(rate * trials)
    return 1 - binomial_below(failures - 1, trials, rules.ALPHA) >= 0.01


def test_two_runs_of_the_same_code_fail_with_at_most_five_percent_chance():
    """Pairs of simulated runs through bench.py's own rows, questions and
    allocation, the same truths twice: the gate (``changed``: either way)
    fails in at most 5% of them, as far as 100 pairs can tell (the table of
    400 pairs a cell: docs/reliability.md)."""
    for cell, (_, changed, _found) in null_rates().items():
        assert consistent_with_the_level(changed), (cell, changed)


def test_a_gate_whose_level_is_not_split_over_the_rows_fails_the_simulation():
    """The mutation: each row at 95% on its own (the level not split over
    the 6 rows a run compares). The same simulation calls a change in more
    than 5% of the runs of one of its cells."""
    worst = max(changed for _, changed, _ in null_rates(alpha=0.05 * 6).values())
    assert not consistent_with_the_level(worst), worst


def test_a_model_made_a_third_slower_is_found_in_most_long_runs():
    from research.simulation import gate_rates

    found = gate_rates(60, 6, noises=("gaussian",), spreads=(0.03,), truths="default",
                       slowed={"w/threads-2": 2 / 3})
    assert found[("gaussian", 0.03)][2] >= 0.8, found


# -- two real runs -----------------------------------------------------------------------

PADDED = '''

class Padded(Model):
    """Runs the items in order, each %(times)d times: a model of known cost."""
    family = "padded"
    OWNS = r"padded(-.*)?"
    PATTERN = r"padded"
    FORM = "padded"

    @property
    def name(self):
        return "padded"

    def run(self, sync_fn, async_fn, items, clock=None):
        for _ in range(%(times)d - 1):
            [sync_fn(item) for item in items]
        return [sync_fn(item) for item in items]
'''


def padded_plugin(tmp_path, times):
    package = "concbench_padded%d" % times
    site = tmp_path / ("site-%d" % times)
    source = DEMO % {"workload": "digit-sums", "family": "backwards"} + PADDED % {"times": times}
    wheel = build_wheel(tmp_path, "concbench-padded", "%d.0" % times, package,
                        {"__init__.py": source},
                        {"concbench.workloads": [("digit-sums", package + ":DigitSums")],
                         "concbench.models": [("padded", package + ":Padded")]})
    install(wheel, site)
    return site


def test_two_real_runs_fail_on_the_model_made_slower_only(tmp_path):
    """The same workload and models run twice, the second time with the
    model plugin ``padded`` doing each item three times: --fail-on slower
    exits 1 naming padded, and not threads-2, whose code did not change."""
    files = []
    for times in (1, 3):
        site = padded_plugin(tmp_path, times)
        out = tmp_path / ("padded-%d.json" % times)
        proc = concbench(["run", "--workload", "digit-sums", "--model",
                          "sequential,threads-2,padded", "-p", "5", "-n", "3", "-w", "0",
                          "--quiet", "-o", out], tmp_path, [site])
        assert proc.returncode == 0, proc.stderr
        files.append(out)
    proc = gated(tmp_path, *files, "--fail-on", "slower", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    named = [line.split(":")[0].strip() for line in proc.stderr.splitlines()
             if line.startswith("  digit-sums/")]
    assert named == ["digit-sums/padded"], proc.stderr
    json.loads(proc.stdout)     # the report as asked, beside the gate's lines
