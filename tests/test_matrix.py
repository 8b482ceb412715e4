"""The matrix and the options, in process: fast checks of what bench.py builds."""

import re
import subprocess
import sys

import pytest

from concbench.run import tasks
from concbench import models, workloads
from concbench.run.matrix import MatrixError, build_matrix
from concbench.run.options import forward_options, parser, workload_options
from concbench.run.presets import PRESETS
from concbench.analysis.rows import MODEL_FACTS
from concbench.workloads.base import Workload
from conftest import preset_names


def parse(*argv):
    return parser().parse_args(list(argv))


def names(*argv, left_out=None):
    return [bench.name for bench in build_matrix(parse(*argv), left_out)]


@pytest.mark.quick
def test_a_preset_is_its_workloads_own_lists_in_registry_order():
    left_out = []
    got = names("--preset", "quick", left_out=left_out)
    expected, unsupported = [], []
    for name in workloads.REGISTRY:
        for model in preset_names(workloads.get(name), "quick"):
            reason = models.parse(model).supports(workloads.get(name)())
            if reason:     # interpreters-N before Python 3.13
                unsupported.append("%s/%s: left out, %s" % (name, model, reason))
            else:
                expected.append("%s/%s" % (name, model))
            if model == models.reference_name():
                expected.append("%s/control" % name)    # the A/A control
    assert got == expected
    # db too: without --db-url, on a server the run starts.
    assert "db/sequential" in got
    assert left_out == unsupported


@pytest.mark.quick
def test_the_default_keeps_its_races_small_and_wide_holds_every_default_model():
    """Every model of a workload is a rival in its races: at eleven or fewer
    (ten models and eager tasks) a comparison through the speedups is
    bounded from its fourth round, at twelve or more only from its fifth
    (docs/statistics.md), which a default
    run's budget does not reach on a noisy day (docs/figures.md). The wide
    preset is the default's sizes with the variants: nothing of the default
    is lost."""
    from concbench import rules
    from concbench.analysis import anytime
    through = rules.ALPHA - rules.ELIMINATION_ALPHA - rules.SIDE_BY_SIDE_ALPHA
    rivals = 0
    for name in workloads.REGISTRY:
        cls = workloads.get(name)
        default, wide = cls.PRESETS["default"], cls.PRESETS["wide"]
        assert wide["params"] == default["params"], name
        # On any machine: the ladders are sized to its CPUs.
        for cpus in (1, 2, 3, 8, 16, 64, 256):
            kept, every = preset_names(cls, "default", cpus), preset_names(cls, "wide", cpus)
            assert len(kept) <= 10, (name, cpus, kept)
            assert set(kept) < set(every), (name, cpus, set(kept) - set(every))
            rivals = max(rivals, len(kept) + 1)      # with eager tasks
    assert anytime.first_bounded(2 * through / (rivals - 1)) == 4


@pytest.mark.quick
def test_db_joins_with_its_url_and_options_reach_the_workload():
    matrix = build_matrix(parse("--preset", "quick", "--workload", "db,sleep",
                                "--db-url", "postgresql://u@127.0.0.1/x",
                                "--items", "7", "--model", "threads-*"))
    assert [b.name for b in matrix] == ["sleep/threads-4", "db/threads-4"]
    assert {b.workload.params["items"] for b in matrix} == {7}
    assert matrix[1].workload.params["db_url"] == "postgresql://u@127.0.0.1/x"


@pytest.mark.quick
def test_scenarios_state_their_own_workloads():
    for name, preset in PRESETS.items():
        if "workloads" not in preset:
            continue
        argv = ["--preset", name]
        if "db" in preset["workloads"]:
            argv += ["--db-url", "postgresql://u@127.0.0.1/x"]
        expected = ["%s/%s" % (w, m) for w in preset["workloads"]
                    for m in preset_names(workloads.get(w), name)]
        # One or two fixed rounds, which decide nothing: no control.
        assert names(*argv) == expected


@pytest.mark.quick
@pytest.mark.parametrize("argv, message", [
    (["--workload", "nope"], "unknown workload 'nope'"),
    (["--workload", "encode", "--latency-ms", "3"],
     "--latency-ms does not apply to the selected workloads (encode)"),
    (["--workload", "sleep", "--latency-ms", "1", "--jitter-ms", "2"],
     "jitter (2 ms) must be between 0 and the latency (1 ms)"),
    (["--model", "nothing*"], "model pattern 'nothing*' matches no model"),
    (["--model", "threads-0"], "the number of threads must be at least 1"),
    (["--preset", "seeds-002", "--workload", "encode"],
     "preset seeds-002 has no encode workload"),
])
def test_bad_selections_are_one_line(argv, message):
    with pytest.raises(MatrixError, match=re.escape(message)):
        build_matrix(parse(*argv))


@pytest.mark.quick
@pytest.mark.parametrize("argv, message", [
    (["--items", "0"], "--items: 0 is out of range [1, 10000000]"),
    (["--items", "x"], "--items: 'x' is not a number"),
    (["--http-client", "curl"], "--http-client: 'curl' is not one of"),
    (["--server-url", "ftp://x"], "is not an http:// or https:// URL"),
    (["--db-url", "mysql://a:secret@h:99999/x"], "'mysql://a:***@h:99999/x' has an"),
])
def test_bad_option_values_are_refused_by_the_workloads_declarations(
        argv, message, capsys):
    with pytest.raises(SystemExit):
        parse(*argv)
    err = capsys.readouterr().err
    assert message in err and "secret" not in err


@pytest.mark.quick
def test_explicit_model_runs_even_if_the_preset_lacks_it():
    assert names("--preset", "quick", "--workload", "sleep", "--model",
                 "sequential,threads-64", "--no-control") == [
                     "sleep/sequential", "sleep/threads-64"]


@pytest.mark.quick
def test_the_control_follows_the_reference_and_runs_its_loop():
    assert names("--preset", "quick", "--workload", "sleep", "--model",
                 "threads-64,sequential") == [
                     "sleep/sequential", "sleep/control", "sleep/threads-64"]
    # Without the reference there is nothing to control; named, it runs alone.
    assert names("--preset", "quick", "--workload", "sleep", "--model",
                 "threads-*") == ["sleep/threads-4"]
    assert names("--preset", "quick", "--workload", "sleep", "--model",
                 "control") == ["sleep/control"]
    bench = build_matrix(parse("--preset", "quick", "--workload", "encode",
                               "--model", "sequential"))[1]
    meta = bench.metadata()
    assert meta["model"] == "control" and meta["control_of"] == "sequential"
    reference = build_matrix(parse("--preset", "quick", "--workload", "encode",
                                   "--model", "sequential"))[0].metadata()
    for key in MODEL_FACTS + ("item_side", "reference_model", "workload_params"):
        assert meta[key] == reference[key], key
    try:
        items, expected, sync_fn, async_fn = bench.prepare()
        assert bench.model.run(sync_fn, async_fn, items) == expected
        # Paired in the worker: the reference's batches run in a copy of
        # this process, made before the model ran.
        assert bench.partner_process is not None
        assert bench.partner_process.run(False)[2] == len(items)
    finally:
        if bench.partner_process is not None:
            bench.partner_process.close()


@pytest.mark.quick
def test_workers_receive_the_same_matrix():
    argv = ["--preset", "quick", "--workload", "http,sleep", "--model", "threads-*",
            "--items", "9", "--http-timeout", "2.5", "--server-url",
            "http://127.0.0.1:1", "--no-run-figures"]
    args = parse(*argv)
    forwarded = []
    forward_options(forwarded, args)
    again = parse(*forwarded)
    assert vars(again) == vars(args)
    assert ([b.name for b in build_matrix(again)]
            == [b.name for b in build_matrix(args)])


@pytest.mark.quick
def test_shared_options_are_declared_alike():
    flags = [option.flag for option in workload_options()]
    assert len(flags) == len(set(flags))
    assert {"--items", "--seed", "--latency-ms", "--server-url", "--db-url"} <= set(flags)


@pytest.mark.quick
def test_building_the_matrix_generates_nothing(monkeypatch):
    """A worker builds the whole matrix to find its benchmark by position:
    that must not make inputs or open connections."""
    def forbidden(self, *args):
        raise AssertionError("%s: called while building the matrix" % self.name)
    monkeypatch.setattr(Workload, "make_items", forbidden)
    monkeypatch.setattr(Workload, "metadata", forbidden)
    monkeypatch.setattr(Workload, "preflight", forbidden)
    assert len(names("--preset", "wide", "--db-url",
                     "postgresql://u@127.0.0.1:1/x")) > 70


@pytest.mark.quick
def test_only_the_benchmark_a_worker_runs_gets_its_metadata():
    class Args:
        worker = True
        worker_task = 3
    assert [tasks.runs_here(Args, i) for i in range(5)] == [False] * 3 + [True, False]
    Args.worker_task = None     # --worker alone: every benchmark, in process
    assert tasks.runs_here(Args, 0) and tasks.runs_here(Args, 4)
    Args.worker = False         # the master times nothing
    assert not tasks.runs_here(Args, 0)


@pytest.mark.quick
@pytest.mark.parametrize("name", ["sequential", "threads-4", "threads-4-reuse",
                                  "processes-2-chunk-3", "asyncio",
                                  "uvloop-limit-5", "asyncio-serial", "hybrid-3"])
def test_every_model_states_what_the_report_needs(name):
    meta = models.parse(name).metadata()
    assert set(MODEL_FACTS) <= set(meta)
    assert meta["concurrency"] == "unbounded" or meta["concurrency"] >= 1
    assert meta["parallelism"] >= 1 and meta["interpreters"] >= 1
    assert meta["item_side"] in ("sync", "async")
    for key, value in meta.items():     # pyperf's rule for metadata values
        assert isinstance(value, (int, float)) or (isinstance(value, str) and value), key


@pytest.mark.quick
def test_library_names_are_not_importable_outside_the_checkout(tmp_path):
    for name in ("bench", "report", "presets", "metrics", "models", "servers",
                 "workloads"):
        proc = subprocess.run([sys.executable, "-c", "import " + name],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0 and "No module named %r" % name in proc.stderr
    proc = subprocess.run([sys.executable, "-c", "import concbench.workloads, "
                           "concbench.models, concbench.servers, concbench.report"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
