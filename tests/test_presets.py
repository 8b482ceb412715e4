"""The quick preset tells the same story as the default one.

Both presets run the same few models at their own sizes (as few rounds as
a test affords); their takeaways must not contradict, and the default
preset's main findings must hold in quick too, as ratios within each run
with wide margins (the goals, measured on full runs, are in the README).
"""

import json
import sys

import pytest

from concbench import report
from conftest import run, run_bench

SELECTION = ["--workload", "rotate,encode,sleep", "--model",
             "sequential,threads-2,threads-4,asyncio", "-p", "2", "-n", "1",
             "-w", "1", "--quiet"]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("presets")
    for preset in ("quick", "default"):
        proc = run_bench(["--preset", preset, "-o", preset + ".json"] + SELECTION, tmp)
        assert proc.returncode == 0, proc.stderr
    return tmp


def speedups(tmp, name):
    proc = run(["-m", "concbench.report", str(tmp / name), "--format", "json"], tmp)
    assert proc.returncode == 0, proc.stderr
    return {row["benchmark"]: row["speedup"]
            for workload in json.loads(proc.stdout)["workloads"].values()
            for row in workload["rows"]}


def test_takeaways_do_not_contradict(both):
    quick = report.load(str(both / "quick.json"))
    default = report.load(str(both / "default.json"))
    found = report.agreement(default, quick)
    assert found["contradictions"] == []


@pytest.mark.parametrize("preset", ["quick", "default"])
def test_the_main_findings_hold(both, preset):
    speedup = speedups(both, preset + ".json")
    # Pillow releases the GIL: threads run rotations in parallel (2x on 2
    # cores measured; a wide margin here).
    assert speedup["rotate/threads-2"] > 1.3, speedup
    # Waiting: one event loop beats four threads.
    assert speedup["sleep/asyncio"] > speedup["sleep/threads-4"], speedup
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        pytest.skip("encode's finding is about a build with the GIL")
    # Pure-Python work under the GIL: threads are no faster.
    assert speedup["encode/threads-2"] < 1.05, speedup
