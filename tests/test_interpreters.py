"""Subinterpreter pools (interpreters-N): verified runs on Python 3.13+, the
GIL each interpreter had, and the waits that must stay bounded.

The suite's own environment may be older than 3.13, so these run in the tox
environments of `make versions` (a 3.13+ build with the GIL, and a
free-threaded one when found), created here if they do not exist yet.
"""

import subprocess
import textwrap

import pyperf
import pytest

from conftest import ROOT, TINY_RUNNER, skip_or_fail
from test_versions import free_threaded_interpreter, interpreters, tox

BENCH = str(ROOT / "bench.py")


def gil_env():
    newest = max(interpreters(), key=lambda v: tuple(map(int, v.split("."))),
                 default=None)
    if newest is None or tuple(map(int, newest.split("."))) < (3, 13):
        skip_or_fail("subinterpreter pools need Python 3.13 or later; the newest "
                     "found is %s" % (newest or "none"))
    return "py" + newest.replace(".", "")


def free_threaded_env():
    found = free_threaded_interpreter()
    if found is None:
        skip_or_fail("the free-threaded path needs python3.13t or python3.14t; "
                     "none found (on PATH or under pyenv)")
    return found[0]


def made(names, tmp_path_factory):
    proc = tox(["-e", ",".join(names), "--notest"], tmp_path_factory.mktemp("notest"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {name: str(ROOT / ".tox" / name / "bin" / "python") for name in names}


@pytest.fixture(scope="module")
def gil_python(tmp_path_factory):
    """The newest 3.13+ build with the GIL: enough for what does not depend
    on the build."""
    return next(iter(made([gil_env()], tmp_path_factory).values()))


@pytest.fixture(scope="module")
def envs(tmp_path_factory, gil_python):
    """Both builds, the GIL one and the free-threaded one."""
    return {gil_env(): gil_python, **made([free_threaded_env()], tmp_path_factory)}


def bench(python, args, cwd, timeout=300):
    return subprocess.run([python, BENCH] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# Its environments and run: 203-211 s beside a busy loop and a second
# suite under a 1-CPU quota, near the suite's 300 s limit.
@pytest.mark.timeout(900)
def test_interpreter_pools_run_verified_with_a_gil_each(envs, tmp_path):
    for env, python in envs.items():
        out = tmp_path / ("%s.json" % env)
        proc = bench(python, ["--preset", "quick", "--workload", "encode,sleep",
                              "--model", "sequential,interpreters-2,"
                              "interpreters-2-chunk-5,interpreters-1-reuse",
                              "--items", "12", "--no-control"] + TINY_RUNNER
                     + ["-o", str(out)],
                     tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        suite = pyperf.BenchmarkSuite.load(str(out))
        assert len(suite.get_benchmark_names()) == 8
        for bench_ in suite.get_benchmarks():
            meta = bench_.get_metadata()
            runs = [r.get_metadata() for r in bench_.get_runs() if r.values]
            assert runs and all(r["items"] == 12 and r["failures"] == 0
                                for r in runs)
            if meta["model_family"] != "interpreters":
                assert "interpreter_gil" not in runs[0]
                continue
            version = tuple(map(int, meta["python_version"].split()[0].split(".")[:2]))
            if version >= (3, 14):
                assert meta["interpreters_impl"].startswith("concurrent.futures")
            else:
                assert meta["interpreters_impl"] == "interpreters-pep-734 0.5.0"
            assert meta["interpreters"] in (1, 2)
            # Each interpreter of the pool was created with a GIL of its own.
            assert {r["interpreter_gil"] for r in runs} == {"own"}, env
            # Its processes: the worker alone, no child process.
            assert {r["processes_peak"] for r in runs} == {1}


def test_a_workload_whose_library_cannot_load_is_left_out(gil_python, tmp_path):
    python = gil_python
    listed = bench(python, ["--list"], tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "encode/interpreters-2-chunk-125" in listed.stdout.split()
    assert "rotate/interpreters-2-chunk-4" not in listed.stdout.split()
    assert ("# rotate/interpreters-2-chunk-4: left out, Pillow does not support "
            "subinterpreters") in listed.stderr
    # The reason is true: Pillow refuses to load in an own-GIL interpreter.
    check = subprocess.run([python, "-c", textwrap.dedent("""
        from concbench.models.interpreters import executor
        cls, _ = executor()
        with cls(1) as pool:
            pool.submit(__import__, "PIL.Image").result(timeout=60)
        """)], capture_output=True, text=True, timeout=120)
    assert check.returncode == 1
    assert "does not support loading in subinterpreters" in check.stderr
    # Named outright: refused, since rotate cannot run it.
    named = bench(python, ["--model", "interpreters-2",
                           "-o", str(tmp_path / "no.json")], tmp_path)
    assert named.returncode == 2 and not (tmp_path / "no.json").exists()
    assert named.stderr.strip().splitlines() == [
        "bench.py: error: interpreters-2 cannot run rotate: Pillow does not "
        "support subinterpreters (its C module declares no "
        "Py_mod_multiple_interpreters slot), so it cannot be imported in an "
        "interpreter with its own GIL"]


HUNG = """
import sys, time
from concbench.models import parse
from concbench.models.base import ModelError

def from_main(item):
    return item

model = parse("interpreters-2")
try:
    model.run(from_main, None, [1, 2, 3])
except ModelError as exc:
    print("refused:", exc, flush=True)
model.wait_limit_s = 2
started = time.monotonic()
model.run(time.sleep, None, [3600, 3600])
print("not reached", time.monotonic() - started)
"""


def test_every_wait_on_an_interpreter_is_bounded(gil_python, tmp_path):
    python = gil_python
    script = tmp_path / "hung.py"
    script.write_text(HUNG)
    proc = subprocess.run([python, str(script)], capture_output=True, text=True,
                          timeout=120)
    # A function from __main__ is refused before any interpreter sees it...
    assert proc.stdout.splitlines() == [
        "refused: interpreters-2 cannot run this workload: its item function "
        "from_main is defined in __main__, which another interpreter cannot "
        "import"]
    # ...and interpreters that never answer end the process, with one line.
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "ERROR: interpreters-2: an interpreter did not answer within 2 s; the "
        "benchmark ends here"]


EAGER = """
import asyncio, sys
from concbench import models
from concbench.item_stamps import Stamped, clock, stamp_async
from concbench.models.base import BatchClock

async def sleeps(milliseconds):
    if milliseconds:
        await asyncio.sleep(milliseconds / 1000)
    return milliseconds

# uvloop imported before any batch, as a worker has it (its model primed
# with one untimed item, models/base.py): its import is no item's time.
import uvloop

items = [60, 0, 20, 40, 5, 10]
for name in ("asyncio-eager", "uvloop-eager"):
    model = models.parse(name)
    assert not model.supports(None), name
    batch = BatchClock()
    stamped = list(model.run(Stamped(abs), stamp_async(sleeps), items, batch))
    over = clock()
    assert [result for result, _, _ in stamped] == items, name
    ends = [ended for _, _, ended in stamped]
    # Every item in progress from the start: each ends after its own sleep
    # (libuv keeps whole milliseconds), and one that never suspends at once;
    # a busy machine may delay any end, so the bound above is loose.
    for ms, ended in zip(items, ends):
        assert batch.began <= ended <= over, name
        assert ms / 1000 - 0.002 <= ended - batch.began < ms / 1000 + 0.25, (name, ms, ends)
    order = sorted(range(len(items)), key=lambda index: items[index])
    assert [ends[index] for index in order] == sorted(ends), name
print("ok")
"""


def test_the_eager_task_models_stamp_each_item_themselves(gil_python, tmp_path):
    """The eager task factory (Python 3.12+) in a 3.13+ environment, for a
    suite older than that: each item's end is its own, and an item that
    never suspends ends as its task is made (tests/test_latency.py runs
    the other event-loop models)."""
    script = tmp_path / "eager.py"
    script.write_text(EAGER)
    proc = subprocess.run([gil_python, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
