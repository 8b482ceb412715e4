"""The machine's own ceiling (concbench.run.ceiling, concbench.analysis.ceiling):
N copies of one fixed loop at once at each rung of the ladder, paired in
the worker with the same copies one after the other, in the header and the
scaling chart, never a row."""

import json

import pyperf
import pytest

from concbench.analysis.ceiling import rungs_of
from concbench.analysis.rows import build_rows
from concbench.run import ceiling
from conftest import ROOT, run, run_bench


def listed(tmp_path, *args):
    proc = run_bench(["--list"] + list(args), tmp_path)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line.startswith("ceiling/")]


def test_the_default_preset_measures_every_rung_above_one(tmp_path):
    assert listed(tmp_path, "--workload", "encode", "--cpus", "2") == [
        "ceiling/processes-2-chunk-1-reuse", "ceiling/processes-4-chunk-1-reuse"]
    assert [name.split("-")[1] for name in listed(tmp_path, "--workload", "encode",
                                                   "--cpus", "16")] == [
        "2", "4", "8", "16", "32"]


def test_models_named_outright_leave_it_out_unless_asked(tmp_path):
    assert listed(tmp_path, "--workload", "encode", "--model", "sequential") == []
    assert listed(tmp_path, "--workload", "encode", "--model", "sequential",
                  "--ceiling", "--cpus", "1") == ["ceiling/processes-2-chunk-1-reuse"]
    assert listed(tmp_path, "--workload", "encode", "--no-ceiling") == []
    # IO workloads alone: their counts follow concurrency, not cores.
    assert listed(tmp_path, "--workload", "sleep") == []


@pytest.mark.parametrize("args, message", [
    (["--ceiling", "--no-run-figures"], "--ceiling records its pairs in the per-run figures"),
    (["--ceiling", "--no-ceiling"], "not allowed with argument"),
])
def test_a_ceiling_that_cannot_run_is_one_line_and_exit_2(tmp_path, args, message):
    proc = run_bench(["--workload", "encode", "--list"] + args, tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_a_run_carries_the_ceiling_beside_its_rows_and_the_report_reads_it(tmp_path):
    """One CPU's ladder is 1, 2: the ceiling at 2, paired in its worker
    with one process running both copies; each batch checked as any row's."""
    out = tmp_path / "c.json"
    proc = run_bench(["--workload", "encode", "--model", "sequential", "--items", "200",
                      "--ceiling", "--cpus", "1", "--no-control", "-p", "3",
                      "-o", out], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(out))
    names = suite.get_benchmark_names()
    assert "ceiling/processes-2-chunk-1-reuse" in names
    bench = suite.get_benchmark("ceiling/processes-2-chunk-1-reuse")
    meta = bench.get_metadata()
    assert meta["machine_ceiling"] == "processes" and meta["items_per_batch"] == 2
    assert meta["reference_model"] == "processes-1-chunk-1-reuse"
    assert meta["pairing"] == "worker"
    assert all(len(run.values) == ceiling.VALUES for run in bench.get_runs() if run.values)
    # No row, no race: the table and the questions are the models'.
    assert list(build_rows(suite)) == ["encode"]
    found = rungs_of(suite)["processes"]
    assert [rung.count for rung in found] == [1, 2]
    # Two processes on this machine's CPUs do up to twice the work a second.
    assert 0.3 < found[1].point < 2.6 and found[1].rounds == 3
    report = run([ROOT / "report.py", out], tmp_path)
    assert report.returncode == 0, report.stderr
    assert "ceiling: processes %.2fx at 2" % found[1].point in report.stdout
    assert "processes-2-chunk-1-reuse" not in report.stdout.split("\n\n", 1)[1]
    document = json.loads(run([ROOT / "report.py", out, "--format", "json"],
                              tmp_path).stdout)
    assert list(document["workloads"]) == ["encode"]
    assert document["workloads"]["encode"]["ceiling"]["processes"][1]["workers"] == 2


@pytest.mark.quick
def test_the_work_is_the_same_loop_in_every_copy():
    """A copy's result depends on its length alone, so every copy of a batch
    is checked against one computed outside the timed region."""
    work = ceiling.Ceiling("processes", items=3, work=1000)
    items = work.make_items()
    assert items == [1000] * 3
    assert work.reference(items) == [ceiling.spin(1000)] * 3
    assert ceiling.spin(1000) != ceiling.spin(1001)


def test_a_file_of_the_ceiling_alone_is_one_line_and_exit_2(tmp_path):
    """A file whose every benchmark is the ceiling's has nothing to tabulate."""
    out = tmp_path / "c.json"
    proc = run_bench(["--workload", "encode", "--model", "sequential", "--items", "50",
                      "--ceiling", "--cpus", "1", "--no-control", "-p", "1", "-o", out],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(out))
    alone = pyperf.BenchmarkSuite([suite.get_benchmark("ceiling/processes-2-chunk-1-reuse")])
    alone.dump(str(tmp_path / "alone.json"))
    report = run([ROOT / "report.py", tmp_path / "alone.json"], tmp_path)
    assert report.returncode == 2 and "only the machine's ceiling" in report.stderr
    assert len(report.stderr.strip().splitlines()) == 1
