"""The quick preset tells the same story as the default one.

Both presets run the same few models at their own sizes; their takeaways
must not contradict, and the default preset's main findings must hold in
quick too. A finding is asked of the tool's own verdict (the paired 95%
interval clear of 1), with rounds added until the rows are decided within
a bound, not of a fixed margin after two rounds: on a busy machine two
rounds once gave rotate/threads-2 1.03x against a 1.3x margin.
"""

import json
import sys

import pytest

from concbench.report.load import load
from concbench.report.rows import build_rows
from concbench.report.verdicts import agreement
from conftest import run, run_bench

# The models each finding is about; a model as fast as sequential (asyncio
# on CPU work) would only spend the budget on a row that cannot be decided.
SELECTIONS = [["--workload", "rotate,encode", "--model", "sequential,threads-2"],
              ["--workload", "sleep", "--model", "sequential,threads-2,asyncio"]]
RUNNER = ["-p", "2", "-n", "1", "-w", "1", "--quiet", "--max-time", "90s",
          "--no-control"]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("presets")
    for preset in ("quick", "default"):
        for first, selection in zip((True, False), SELECTIONS):
            output = ["-o" if first else "--append", preset + ".json"]
            proc = run_bench(["--preset", preset] + output + selection + RUNNER, tmp)
            assert proc.returncode == 0, proc.stderr
    return tmp


def rows(tmp, name):
    proc = run(["-m", "concbench.report", str(tmp / name), "--format", "json"], tmp)
    assert proc.returncode == 0, proc.stderr
    return {row["benchmark"]: row
            for workload in json.loads(proc.stdout)["workloads"].values()
            for row in workload["rows"]}


def test_takeaways_do_not_contradict(both):
    quick = build_rows(load(str(both / "quick.json")))
    default = build_rows(load(str(both / "default.json")))
    found = agreement(default, quick)
    assert found["contradictions"] == []


@pytest.mark.parametrize("preset", ["quick", "default"])
def test_the_main_findings_hold(both, preset):
    found = rows(both, preset + ".json")
    # Pillow releases the GIL: threads run rotations in parallel (2x on 2
    # cores measured).
    assert found["rotate/threads-2"]["verdict"] == "faster", found["rotate/threads-2"]
    # Waiting: one event loop beats two threads (set by the latencies).
    assert found["sleep/asyncio"]["speedup_ci_low"] > \
        found["sleep/threads-2"]["speedup_ci_high"], found
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        pytest.skip("encode's finding is about a build with the GIL")
    # Pure-Python work under the GIL: threads are no faster.
    assert found["encode/threads-2"]["verdict"] in ("slower", "same"), \
        found["encode/threads-2"]
