"""Adding a workload or a model is one new file plus one registry line.

A copy of the checkout gets a toy workload (squares) and a toy model
(chunked-N) and nothing else: both must appear in --list, run under pyperf,
be verified, and get a correct ideal time and efficiency in the report.
"""

import json
import math
import shutil
import subprocess
import sys

import pyperf
import pytest

from conftest import ROOT, TINY_RUNNER

WORKLOAD = '''"""squares: the sum of squares of seeded integers (a toy CPU workload)."""

import random

from .base import ITEMS, SEED, Workload, preset


def square_sum(numbers):
    return sum(n * n for n in numbers)


class Squares(Workload):
    name = "squares"
    kind = "cpu"
    OPTIONS = (ITEMS.with_default(40), SEED)
    PRESETS = {"quick": preset(["sequential", "threads-2"], items=40)}

    def make_items(self):
        rnd = random.Random(self.params["seed"])
        return [[rnd.randrange(1000) for _ in range(2000)]
                for _ in range(self.params["items"])]

    def sync_function(self):
        return square_sum
'''

MODEL = '''"""chunked-N: N threads, each running one contiguous share of the items."""

import threading

from .base import Model, positive


class Chunked(Model):
    family = "chunked"
    OWNS = r"chunked(-.*)?"
    PATTERN = r"chunked-(?P<threads>\\d+)"
    FORM = "chunked-N, N >= 1"
    timed = "starting N threads, each running its share, joining them"
    PRESETS = {"quick": ["chunked-2"]}

    def __init__(self, threads):
        self.threads = positive("the number of threads", threads)

    @property
    def name(self):
        return "chunked-%d" % self.threads

    @property
    def concurrency(self):
        return self.threads

    @property
    def parallelism(self):
        return self.threads

    def run(self, sync_fn, async_fn, items, clock=None):
        size = -(-len(items) // self.threads)
        results = [None] * len(items)

        def share(start):
            for i in range(start, min(start + size, len(items))):
                results[i] = sync_fn(items[i])
        threads = [threading.Thread(target=share, args=(start,))
                   for start in range(0, len(items), size)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results
'''


def add_line(path, after, line):
    """Insert ``line`` after the line that contains ``after``: the one edit."""
    text = path.read_text()
    assert after in text
    head, tail = text.split(after, 1)
    rest = tail.split("\n", 1)
    path.write_text(head + after + rest[0] + "\n" + line + "\n" + rest[1])


@pytest.fixture(scope="module")
def extended(tmp_path_factory):
    copy = tmp_path_factory.mktemp("checkout") / "concurrency-bench"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    copy.mkdir()
    for name in ("bench.py", "report.py"):
        shutil.copy2(ROOT / name, copy / name)
    for name in ("concbench", "workloads", "models", "servers"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    (copy / "workloads" / "squares.py").write_text(WORKLOAD)
    add_line(copy / "workloads" / "__init__.py", '"db": ".db:Db",',
             '    "squares": ".squares:Squares",')
    (copy / "models" / "chunked.py").write_text(MODEL)
    add_line(copy / "models" / "__init__.py", '".hybrid:Hybrid",',
             '    ".chunked:Chunked",')
    return copy


def run_copy(copy, args, cwd):
    return subprocess.run([sys.executable, str(copy / args[0])] + args[1:],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_new_workload_and_model_are_listed(extended, tmp_path):
    proc = run_copy(extended, ["bench.py", "--preset", "quick", "--list"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    assert names[-4:] == ["squares/sequential", "squares/control",
                          "squares/threads-2", "squares/chunked-2"]
    # The model joins every workload of the preset it names.
    assert "sleep/chunked-2" in names and "encode/chunked-2" in names
    # The original checkout knows neither.
    original = subprocess.run([sys.executable, str(ROOT / "bench.py"), "--preset",
                               "quick", "--list"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
    assert "squares" not in original.stdout and "chunked" not in original.stdout
    help_text = run_copy(extended, ["bench.py", "--help"], tmp_path).stdout
    assert "squares" in help_text


def test_new_workload_and_model_run_verified_with_an_ideal(extended, tmp_path):
    proc = run_copy(extended, ["bench.py", "--preset", "quick", "--workload",
                               "squares,sleep", "--model",
                               "sequential,chunked-2", "--items", "6",
                               "--latency-ms", "10", "--jitter-ms", "0",
                               "--no-control"]
                    + TINY_RUNNER + ["-n", "2", "-o", "out.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "out.json"))
    assert suite.get_benchmark_names() == [
        "sleep/sequential", "sleep/chunked-2", "squares/sequential",
        "squares/chunked-2"]
    for bench in suite.get_benchmarks():
        meta = bench.get_metadata()
        assert meta["reference_model"] == "sequential"
        for run in bench.get_runs():
            if run.values:
                figures = run.get_metadata()
                # Every batch checked: 6 items in each of the 2 values.
                assert figures["items"] == 12 and figures["failures"] == 0
    chunked = suite.get_benchmark("squares/chunked-2").get_metadata()
    assert (chunked["concurrency"], chunked["parallelism"],
            chunked["interpreters"], chunked["item_side"]) == (2, 2, 1, "sync")

    report = run_copy(extended, ["report.py", "out.json", "--format", "json"],
                      tmp_path)
    assert report.returncode == 0, report.stderr
    rows = {row["benchmark"]: row for workload in json.loads(report.stdout)
            ["workloads"].values() for row in workload["rows"]}
    cores = suite.get_metadata().get("cpu_count") or 1
    # The least CPU per item any model of the workload used, on 2 workers.
    least = min(
        sum(r.get_metadata()["cpu_tree"] for r in bench.get_runs() if r.values)
        / sum(r.get_metadata()["items"] for r in bench.get_runs() if r.values)
        for bench in suite.get_benchmarks() if bench.get_name().startswith("squares"))
    toy = rows["squares/chunked-2"]
    assert toy["ideal_s"] == pytest.approx(6 * least / min(2, cores))
    assert toy["efficiency"] == pytest.approx(toy["ideal_s"] / toy["mean_s"])
    # IO: 6 items of 10 ms, 2 at a time, take at least 3 x 10 ms.
    sleep = rows["sleep/chunked-2"]
    assert sleep["ideal_s"] == pytest.approx(math.ceil(6 / 2) * 0.010, rel=0.05)
    assert sleep["efficiency"] == pytest.approx(sleep["ideal_s"] / sleep["mean_s"])
    assert 0 < sleep["efficiency"] <= 1
