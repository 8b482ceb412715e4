"""The GIL's state per run, --gil, and the eager and forkserver models."""

import sys
import sysconfig
import warnings

import pyperf
import pytest

from concbench.run import gil
from concbench import models, workloads
from concbench.run.matrix import MatrixError, build_matrix
from concbench.run.options import parser
from conftest import TINY_RUNNER, run_bench

FREE_THREADED = gil.free_threaded_build()


def test_every_run_records_the_gil_state_of_this_build(tmp_path):
    """Every run of this build says whether its GIL was on ("yes" on a GIL
    build, whatever the models). That a run says "no" where the GIL was off,
    and "yes" where a free-threaded build had it forced on, is
    tests/test_versions.py's test_free_threaded_build_runs_without_the_gil,
    which runs one (.ci/run provides it)."""
    proc = run_bench(["--preset", "quick", "--workload", "sleep,rotate", "--model",
                      "sequential,threads-2", "--items", "4", "--image-size", "32"]
                     + TINY_RUNNER + ["-o", "g.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # From the interpreter's build, not from the code under test: a build
    # without Py_GIL_DISABLED always runs with its GIL.
    expected = None if sysconfig.get_config_var("Py_GIL_DISABLED") else "yes"
    assert bool(expected) != FREE_THREADED
    for bench in pyperf.BenchmarkSuite.load(str(tmp_path / "g.json")).get_benchmarks():
        for run in bench.get_runs():
            state = run.get_metadata()["gil_enabled"]
            assert state in ("yes", "no")
            if expected:
                assert state == expected


@pytest.mark.quick
def test_the_import_that_re_enabled_the_gil_is_named():
    gil.watch()
    before = list(gil.GilWatch.modules)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("The global interpreter lock (GIL) has been enabled to load "
                      "module 'fake._ext', which has not declared that it can run "
                      "safely without the GIL. To override this behavior and keep "
                      "the GIL disabled (at your own risk), run with PYTHON_GIL=0 "
                      "or -Xgil=0.", RuntimeWarning, stacklevel=1)
    assert gil.GilWatch.modules == before + ["fake._ext"]
    gil.GilWatch.modules[:] = before


@pytest.mark.skipif(FREE_THREADED, reason="a GIL build refuses --gil")
@pytest.mark.parametrize("state", ["on", "off"])
def test_gil_option_refused_on_a_gil_build(tmp_path, state):
    proc = run_bench(["--gil", state, "--workload", "sleep"] + TINY_RUNNER
                     + ["-o", "x.json"], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "bench.py: error: --gil %s needs a free-threaded build (python3.13t or "
        "later); this Python has the GIL always" % state]
    assert not (tmp_path / "x.json").exists()


@pytest.mark.quick
def test_eager_models_parse_and_say_where_they_cannot_run():
    model = models.parse("uvloop-eager")
    assert model.name == "uvloop-eager" and model.item_side == "async"
    assert model.metadata()["concurrency"] == "unbounded"
    reason = model.supports(workloads.get("sleep")())
    if sys.version_info < (3, 12):
        assert reason == "the eager task factory needs Python 3.12 or later"
        left_out = []
        matrix = build_matrix(parser().parse_args(
            ["--preset", "default", "--workload", "sleep"]), left_out)
        assert "sleep/asyncio-eager" not in [b.name for b in matrix]
        assert ("sleep/asyncio-eager: left out, the eager task factory needs "
                "Python 3.12 or later") in left_out
        with pytest.raises(MatrixError, match="asyncio-eager cannot run sleep: the "
                           "eager task factory needs Python 3.12 or later"):
            build_matrix(parser().parse_args(
                ["--workload", "sleep", "--model", "sequential,asyncio-eager"]))
    else:
        assert reason == ""
    with pytest.raises(models.ModelError, match="asyncio-eager or uvloop-eager"):
        models.parse("asyncio-eager-2")


@pytest.mark.quick
def test_default_preset_has_a_forkserver_pool_beside_fork():
    names = [b.name for b in build_matrix(parser().parse_args(
        ["--preset", "default", "--workload", "rotate"]))]
    assert "rotate/processes-2-chunk-4" in names
    assert "rotate/processes-2-chunk-4-forkserver" in names
