"""dask-N-chunk-C on a local cluster the row's worker starts, and
dask-cluster-chunk-C on a cluster of the user's (--dask-scheduler): each
batch checked, the local cluster's processes counted in the model's tree and
gone after the run (kill -9 included), the user's cluster left as it was;
and bad input (no dask, an address that answers nothing) one line each."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyperf
import pytest

from conftest import BENCH, flat, run_bench, skip_or_fail

HERE = Path(__file__).parent
CLUSTER_RUN = HERE / "dask_cluster_run.py"


SQUARES = '''from concbench.workloads.simple import workload


def numbers(rnd, count):
    return [rnd.randrange(1000) for _ in range(count)]


@workload("squares", items=numbers, count=40)
def square(number):
    return number * number
'''


def missing_dask():
    return any(importlib.util.find_spec(name) is None for name in ("dask", "distributed"))


def need_dask():
    if missing_dask():
        skip_or_fail("dask is not installed here (pip install '.[dask]')")


def runs_of(path, name):
    bench = next(b for b in pyperf.BenchmarkSuite.load(str(path)).get_benchmarks()
                 if b.get_name() == name)
    return [run.get_metadata() for run in bench.get_runs() if run.values], bench


def on_a_cluster(tmp_path, args, env=None, kill=False):
    """bench.py ``args`` on a scheduler and two workers of a network
    namespace of the test's own (tests/dask_cluster_run.py)."""
    need_dask()
    if not sys.platform.startswith("linux"):
        pytest.skip("network namespaces are Linux's")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip_or_fail("no network namespace of the test's own here (unshare -n: %s)"
                     % probe.stderr.strip())
    spec = {"workdir": str(tmp_path), "args": args, "env": env or {}, "kill": kill}
    proc = subprocess.run(["unshare", "-n", sys.executable, str(CLUSTER_RUN), json.dumps(spec)],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_local_cluster_runs_checked_batches_counted_in_the_tree(tmp_path):
    """Every batch of dask-2-chunk-50 is checked against the reference's
    results with no failure, and its two worker processes are the model's:
    the tree it measured had more processes and more memory than the
    sequential row's, as a process pool's has."""
    need_dask()
    proc = run_bench(["--workload", "encode", "--items", "400", "--model",
                      "sequential,dask-2-chunk-50", "-p", "2", "-n", "2", "-w", "0",
                      "--no-control", "-o", "out.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    dask_runs, bench = runs_of(tmp_path / "out.json", "encode/dask-2-chunk-50")
    plain_runs, _ = runs_of(tmp_path / "out.json", "encode/sequential")
    assert len(dask_runs) == 2
    for meta in dask_runs:
        assert meta["failures"] == 0 and meta["items"] == 400 * 2, meta
        assert meta["processes_peak"] >= 3, meta     # the worker and two of the cluster's
    assert bench.get_metadata()["dask_workers"] == 2
    assert (min(m["mem_tree_peak"] for m in dask_runs)
            > max(m["mem_tree_peak"] for m in plain_runs))
    assert (min(m["processes_peak"] for m in dask_runs)
            > max(m["processes_peak"] for m in plain_runs))
    report = subprocess.run([sys.executable, str(HERE.parent / "report.py"), "out.json"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert report.returncode == 0 and "dask-2-chunk-50" in report.stdout, report.stderr


def test_kill_9_leaves_no_process_of_the_local_cluster(tmp_path):
    """kill -9 of bench.py while a local cluster's worker runs, and of the
    pyperf worker that started the cluster: no process of the run is left
    (the cluster's workers follow the process that started them)."""
    need_dask()
    from test_interrupts import attempt

    run = ["--workload", "encode", "--items", "400", "--model", "sequential,dask-2-chunk-25",
           "-p", "3", "-n", "2", "-w", "0", "--no-control"]
    seen = attempt(tmp_path / "main", "SIGKILL", ["pool"], "main", run=run)
    assert seen["sent"] and seen["status"] == -signal.SIGKILL, seen
    assert not seen["left"], "running 5 s after the kill: %s" % seen
    # A worker is caught with its cluster's processes, or while it closes
    # them after its batches (they end on their own then): up to three
    # tries for one that held its cluster when it was killed.
    for index in range(3):
        seen = attempt(tmp_path / ("worker-%d" % index), "SIGKILL", ["pool"], "worker",
                       run=run)
        killed = seen["worker_killed"]
        assert killed and killed["worker"], seen
        assert killed["children_gone"] is not None and killed["children_gone"] < 5.0, killed
        assert not seen["left"], seen
        if any("spawn_main" in name for name in killed["children"]):
            break
    assert any("spawn_main" in name for name in killed["children"]), killed
    print("a killed worker's %d processes (its cluster's among them) were gone %.3f s later"
          % (len(killed["children"]), killed["children_gone"]))


def test_without_dask_a_dask_row_is_one_line_naming_the_extra(tmp_path):
    """dask not importable (a sitecustomize hides it): --model dask-2-chunk-1
    is one line naming the extra, exit 2; the same workload without it
    runs."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nsys.modules['dask'] = sys.modules['distributed'] = None\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, str(HERE.parent / "bench.py"), "--list",
                           "--workload", "encode", "--model", "sequential,dask-2-chunk-1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "concurrency-bench[dask]" in lines[0], proc.stderr
    proc = subprocess.run([sys.executable, str(HERE.parent / "bench.py"), "--list",
                           "--workload", "encode", "--model", "sequential"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "encode/sequential" in proc.stdout, proc.stderr


@pytest.mark.quick
@pytest.mark.parametrize("address", ["http://127.0.0.1:8786", "tcp://127.0.0.1",
                                     "tcp://:8786", "tcp://host:99999", ""])
def test_a_malformed_scheduler_address_is_refused(address):
    from concbench.models.base import ModelError
    from concbench.models.dask import check_address

    with pytest.raises(ModelError, match="expected tcp://HOST:PORT"):
        check_address(address)
    assert check_address("tls://10.0.0.1:8786") == "tls://10.0.0.1:8786"


@pytest.fixture(scope="module", autouse=True)
def unanswered(request, tmp_path_factory):
    """bench.py against an address where nothing listens, started with the
    file's first test where the file's last test, which reads it, is to
    run: its 10 s of waiting for an answer overlap the other tests' work
    instead of adding to the suite's time. Its port, exit status, stderr,
    seconds and folder."""
    import socket
    import threading

    reader = test_a_scheduler_that_answers_nothing_is_one_line_within_30_s.__name__
    if missing_dask() or not any(item.name == reader for item in request.session.items):
        yield None
        return
    folder = tmp_path_factory.mktemp("unanswered")
    # A port bound and never listened on: a connection there is refused,
    # and no other process can take it meanwhile.
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    port = held.getsockname()[1]
    seen = {"port": port, "folder": folder}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, BENCH, "--workload", "encode", "--model",
                             "sequential,dask-cluster-chunk-4", "--dask-scheduler",
                             "tcp://127.0.0.1:%d" % port, "-o", "out.json"],
                            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)

    def wait():
        seen["stderr"] = proc.communicate(timeout=60)[1]
        seen["took"] = time.monotonic() - started
        seen["status"] = proc.returncode

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    yield seen, waiter
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    waiter.join(timeout=10)
    held.close()


def test_the_rows_run_on_a_cluster_of_the_users_and_leave_it_as_it_was(tmp_path):
    """A scheduler and two workers started apart from the run, in a network
    namespace of the test's own (loopback only): --dask-scheduler runs
    dask-cluster-chunk-C on them, each batch checked, the workload a single
    file (--workload-module FILE.py) that the run sends them; the metadata
    names the cluster (its address, 2 workers of 1 thread) and its workers'
    memory and CPU as the scheduler reports them; the scheduler and both
    workers are the same processes after the run, still serving."""
    (tmp_path / "squares.py").write_text(SQUARES)
    seen = on_a_cluster(tmp_path, [
        "--workload-module", str(tmp_path / "squares.py"), "--workload", "squares",
        "--items", "400", "--model", "sequential,dask-cluster-chunk-50", "-p", "2", "-n", "2",
        "-w", "0", "--no-control", "-o", "out.json"])
    assert seen["status"] == 0, seen
    assert seen["cluster_before"] == seen["cluster_after"] and seen["still_serving"], seen
    runs, bench = runs_of(tmp_path / "out.json", "squares/dask-cluster-chunk-50")
    meta = bench.get_metadata()
    assert meta["dask_scheduler"] == seen["address"], meta
    assert meta["interpreters"] == 2 and meta["parallelism"] == 2, meta
    for run in runs:
        assert run["failures"] == 0 and run["items"] == 400 * 2, run
        # The cluster's workers, as its scheduler reports them: two Pythons
        # with distributed imported, far from zero.
        assert run["dask_cluster_memory"] > 2 * 20 * 2**20, run
        assert run["dask_cluster_cpu"] >= 0, run
    assert "dask-cluster-chunk-50" in flat(seen["stderr"]), seen
    # The report's memory column says whose figure the cluster row's is.
    report = subprocess.run([sys.executable, str(HERE.parent / "report.py"), "out.json",
                             "--format", "csv"], cwd=tmp_path, capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    line = next(row for row in report.stdout.splitlines()
                if row.split(",")[1:2] == ["squares/dask-cluster-chunk-50"])
    assert "cluster RSS" in line, line
    # Its workers are not this machine's: the client's CPU it measured is
    # no cost of an item, so it has no cores and no ideal, and the local
    # rows' ideal is not read from it.
    report = subprocess.run([sys.executable, str(HERE.parent / "report.py"), "out.json",
                             "--format", "json"], cwd=tmp_path, capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    rows = {row["model"]: row for row in json.loads(report.stdout)["workloads"]["squares"]["rows"]}
    cluster = rows["dask-cluster-chunk-50"]
    assert cluster["ideal_s"] is None and cluster["cpu_cores"] is None, cluster
    assert rows["sequential"]["ideal_from"] == "sequential", rows["sequential"]


def test_a_cluster_that_dies_mid_batch_ends_its_row_and_the_others_go_on(tmp_path):
    """The user's whole cluster killed (kill -9) while a batch runs on it:
    that batch fails in one line, its row ends there, every other row runs
    all its rounds and is in the file, and bench.py exits 1 saying which
    row ended early."""
    seen = on_a_cluster(tmp_path, [
        "--workload", "encode", "--items", "2000", "--model",
        "sequential,dask-cluster-chunk-1,threads-2", "-p", "3", "-n", "2", "-w", "0",
        "--no-control", "-o", "out.json"], kill=True)
    assert seen["killed"], seen
    assert seen["status"] == 1, seen
    said = flat(seen["stderr"])
    assert said.count("its row ends here; the other rows go on") == 1, said
    assert "1 row(s) ended early, their batches lost outside the run: " \
           "encode/dask-cluster-chunk-1" in said, said
    assert "Traceback" not in seen["stderr"], seen["stderr"]
    for name in ("encode/sequential", "encode/threads-2"):
        runs, _ = runs_of(tmp_path / "out.json", name)
        assert len(runs) == 3, (name, len(runs))


def test_a_package_the_cluster_cannot_import_is_one_line_and_ends_its_row(tmp_path):
    """The workload as a package on this side's path only (a single file is
    sent, as the test above shows): its batch is one line saying the
    workers cannot import it, the row ends, bench.py exits 1."""
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "squares.py").write_text(SQUARES)
    seen = on_a_cluster(tmp_path, ["--workload-module", "squares", "--workload", "squares",
                                   "--model", "sequential,dask-cluster-chunk-10", "-p", "2",
                                   "-n", "1", "-w", "0", "--no-control", "-o", "out.json"],
                        env={"PYTHONPATH": str(folder)})
    assert seen["status"] == 1, seen
    said = flat(seen["stderr"])
    assert ("cannot import squares: install it on its workers, or give it as one file "
            "with --workload-module FILE.py") in said, said
    assert "Traceback" not in seen["stderr"], seen["stderr"]


@pytest.mark.quick
def test_on_a_free_threaded_build_dask_that_turns_the_gil_on_is_left_out(monkeypatch):
    """The master's check, in a Python of its own: where importing dask turns
    the GIL back on, every dask row is left out with that reason; where it
    stays off, none is; on a build with the GIL nothing is asked."""
    import sysconfig
    from types import SimpleNamespace

    from concbench.models import dask as model

    asked = []

    def answer(printed):
        def run(cmd, **kwargs):
            asked.append(cmd)
            return SimpleNamespace(returncode=0, stdout=printed + "\n", stderr="")
        return run

    monkeypatch.setattr(model, "missing", lambda: "")
    monkeypatch.setattr(sysconfig, "get_config_var",
                        lambda name: 1 if name == "Py_GIL_DISABLED" else None)
    monkeypatch.setattr(subprocess, "run", answer("1"))
    assert model.Dask.check_run(SimpleNamespace(), []) == {
        "dask-*": "importing dask and distributed turns the GIL back on in this build"}
    monkeypatch.setattr(subprocess, "run", answer("0"))
    assert model.Dask.check_run(SimpleNamespace(), []) == {}
    assert len(asked) == 2 and "sys._is_gil_enabled()" in asked[0][-1]
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: None)
    assert model.Dask.check_run(SimpleNamespace(), []) == {} and len(asked) == 2


def test_a_scheduler_that_answers_nothing_is_one_line_within_30_s(unanswered):
    """An address where nothing listens: one line naming it, exit 2, within
    30 s (the connection gives up after 10 s); nothing written."""
    need_dask()
    seen, waiter = unanswered
    waiter.join(timeout=60)
    port = seen["port"]
    took, stderr = seen.get("took"), seen.get("stderr", "")
    assert seen.get("status") == 2 and took is not None and took < 30, (seen, stderr)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "127.0.0.1:%d" % port in lines[0], stderr
    assert "no scheduler answered within 10 s" in lines[0]
    assert not (seen["folder"] / "out.json").exists()
