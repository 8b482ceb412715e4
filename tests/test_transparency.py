"""The harness leaves the model as it found it: what bench.py measures of a
model agrees with what a bare script of the same work measures
(research/bare_models.py: no fork, no pinning, no sampler, no probe, no
collection, no priming), on the GIL build and on every free-threaded
build found. One model of each family runs encode's items: threads over
chunks, a process pool, asyncio, and threads each running a loop. The
bare script and bench.py take turns in the same test (bare, bench.py,
bare, bench.py, bare), so that a load that comes and goes (the other
test process) meets both sides alike.

The margin is as wide as a 2-core VM's noise needs on a busy day (a
run's speedup moved by about 10% from one run to the next, its CPUs
switching between two speeds, and hybrid-2's pairs on 3.13t ran either
about 1.0x or 1.6x): it catches a harness that changes a model by a factor
of two or more. On 2 cores that is more than a model loses when the
harness keeps it on one core (at most the second core's 1.6-1.9x), so
what each part of the harness costs a model is measured apart, with
--without, and stated as a figure, not asserted here (docs/figures.md,
"The harness leaves the model as it is"). What a frozen heap did on a
free-threaded 3.13 cost threads from 1.3x (this VM) to 2.7x (another), so
that mechanism is checked on its own as well: after a batch of threads,
the item function is immortal in the worker.
"""

import json
import math
import statistics
import subprocess
import sys

import pyperf
import pytest

from conftest import ROOT, run, skip_or_fail
from test_versions import free_threaded_interpreters, tox

BARE = str(ROOT / "research" / "bare_models.py")
REPORT = str(ROOT / "report.py")
MODELS = ["threads-2-chunk-125", "processes-2-chunk-125", "asyncio", "hybrid-2"]
# 4,000 items: a batch of 100-170 ms. Under a 1-CPU quota (100 ms periods)
# shared with the other test process, a batch of 1,000 items (25-45 ms)
# either ran clear or met the throttled part of a period, so a pair read
# about 0.3x, 1x or 3x, and the median of a worker's six pairs swung both
# ways: threads-2-chunk-125 read 1.69x and 0.38x in bench.py against 0.71x
# and 0.85x in the bare script, in two whole suites. A batch that spans a
# period or more meets the throttle on both sides of its pair alike.
ITEMS = 4000
# bench.py: two turns of one worker a model, each its warm-up pair and 3
# timed pairs (the second --append-ed to the first's file); the bare
# script: three turns, before, between and after them, of 2 rounds of each
# model, each model in a process of its own (a process pool forked after
# threads ran is not the one a script of processes alone forks). Several
# runs a side: most of this machine's noise lies between runs (its CPUs
# switch speeds). With one turn of each before and after bench.py's two
# workers, beside one busy loop, processes-2-chunk-125 on 3.13t read 0.56x
# in bench.py against 0.26x in the bare script once in five whole suites.
TURNS = 2
RUNNER = ["-p", "1", "-n", "3", "-w", "1"]
BARE_ROUNDS = 2
# How far bench.py's speedup may be from the bare script's. The other
# test process runs beside this one and takes a CPU at moments of its own:
# in a whole `make test` on 3.13.5t, processes-2-chunk-125 read 1.10x in
# bench.py against 0.68x in the bare script (a ratio of 1.61), where alone
# the two agree within 15% (docs/figures.md). Under a 1-CPU quota with a
# busy loop inside it, at 4,000 items, the widest gap read in three runs
# of this test was 1.25x (3.13t, threads-2-chunk-125). So the margin
# catches a gross change of the model (the frozen heap's 2.7x on the VM
# that found it; the model's times read 2.2x long fail it: 0.39x-0.55x
# against 0.83x-1.21x); the frozen heap itself is caught on 3.13t by the
# immortality test below, whatever the load.
MARGIN = 2.0


def run_python(python, args, cwd):
    return subprocess.run([str(python)] + [str(a) for a in args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def bare_pairs(python, cwd):
    """{model: [(sequential seconds, the model's seconds)]} of the bare
    script, a process per model."""
    found = {}
    for model in MODELS:
        proc = run_python(python, [BARE, "--items", ITEMS,
                                   "--rounds", BARE_ROUNDS, model], cwd)
        assert proc.returncode == 0, proc.stderr
        found.update(json.loads(proc.stdout))
    return found


def bench_turn(python, folder, out, first):
    """One turn of bench.py: a worker a model, written to ``out`` (the
    first turn) or appended to it."""
    proc = run_python(python, [ROOT / "bench.py", "--workload", "encode", "--items", ITEMS,
                               "--model", ",".join(["sequential"] + MODELS),
                               "--no-control", "--quiet", "-o" if first else "--append", out]
                      + RUNNER, folder)
    assert proc.returncode == 0, proc.stderr


def bench_speedups(folder, out):
    """({model: the speedup bench.py reports}, its runs' metadata)."""
    shown = run([REPORT, out, "--format", "json"], folder)
    assert shown.returncode == 0, shown.stderr
    speedups = {row["benchmark"].split("/", 1)[1]: row["speedup"]
                for row in json.loads(shown.stdout)["workloads"]["encode"]["rows"]}
    runs = [one.get_metadata() for bench in pyperf.BenchmarkSuite.load(str(out))
            .get_benchmarks() for one in bench.get_runs() if one.values]
    return speedups, runs


def geometric_pair(runs):
    """The bare script's speedup: the geometric mean of its pairs' ratios.
    Under a 1-CPU quota beside the other test process, a batch of 25-45 ms
    either ran clear or met the throttled half of the quota's 100 ms
    period, so its pairs read about 0.35x, 1x or 2.8x as the period fell
    on one side, the other or both; a median of twelve read
    threads-2-chunk-125 at 0.52x against 1.09x in bench.py. Alternating
    the order and pausing at random (research/bare_models.py) gives either
    side the throttle as often, which the mean of the logs cancels."""
    logs = [math.log(s / m) for pairs in runs for s, m in pairs]
    return math.exp(statistics.fmean(logs))


def compare(python, folder):
    """{model: (bench.py's speedup, the bare script's)}, bench.py's turns
    between the bare script's, and bench.py's runs' metadata."""
    out = folder / "t.json"
    bare = {model: [] for model in MODELS}
    for turn in range(TURNS + 1):
        for model, pairs in bare_pairs(python, folder).items():
            bare[model].append(pairs)
        if turn < TURNS:
            bench_turn(python, folder, out, first=turn == 0)
    speedups, runs = bench_speedups(folder, out)
    return {model: (speedups[model], geometric_pair(bare[model])) for model in MODELS}, runs


def python_of(build, tmp_path):
    """The interpreter of ``build`` with the project's dependencies."""
    if build == "gil":
        return sys.executable
    env = "py%st" % build.replace(".", "")
    if env not in dict(free_threaded_interpreters()):
        if build == "3.13":
            skip_or_fail("the free-threaded path needs python3.13t; none found "
                         "(on PATH or under pyenv)")
        pytest.skip("no python%st here (on PATH or under pyenv)" % build)
    python = ROOT / ".tox" / env / "bin" / "python"
    if not python.exists():
        proc = tox(["-e", env, "--notest"], tmp_path)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return python


# 45 s alone for both builds, 96 s under a 1-CPU quota with a busy loop in
# it; beside a busy loop 150-202 s on a slow VM (at 1,000 items), and past
# 300 s beside a loop and a second suite under a 1-CPU quota.
@pytest.mark.timeout(900)
@pytest.mark.parametrize("build", ["gil", "3.13", "3.14"])
def test_bench_measures_what_a_bare_script_measures(build, tmp_path):
    found, runs = compare(python_of(build, tmp_path), tmp_path)
    said = "; ".join("%s: bench.py %.2fx, bare %.2fx" % ((model,) + pair)
                     for model, pair in found.items())
    print(said)
    for bench, bare in found.values():
        assert 1 / MARGIN < bench / bare < MARGIN, said
    # Each run of a free-threaded build ran without the GIL.
    assert {meta["gil_enabled"] for meta in runs} == {"no" if build != "gil" else "yes"}


IMMORTAL = """
import sys
from concbench.models import parse
from concbench.run import cell, worker
from concbench.run.run_figures import BatchProbe, RunFigures
from concbench.workloads.encode import Encode, encoded_size

bench = cell.Cell(Encode(items=200), parse("threads-2-chunk-25"), "worker")
bench.round, bench.warmups = 0, 0
with RunFigures():
    worker.time_batches(1, bench)
RunFigures.current = None
print(sys.getrefcount(encoded_size))
bench.partner_process.close()
BatchProbe._sampler.close()
"""


def test_a_free_threaded_313_makes_the_item_function_immortal_in_the_worker(tmp_path):
    """What the harness once undid: a free-threaded 3.13 makes functions,
    code objects and classes immortal when the first thread starts, so
    that threads share them without contending for their reference
    counts; objects gc.freeze() had frozen were left out. After a batch of
    threads in a worker, the item function is immortal (its reference
    count reads 2**32 - 1). 3.14t counts such references in another way
    (deferred reference counting), where no count says so."""
    python = python_of("3.13", tmp_path)
    script = tmp_path / "immortal.py"
    script.write_text(IMMORTAL)
    proc = run_python(python, [script], ROOT)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) == 2 ** 32 - 1, proc.stdout
