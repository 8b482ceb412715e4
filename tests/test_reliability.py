"""Faults in the middle of a run, interrupts and resource limits: nothing
lost, nothing left behind. (Bad input is in test_bench_cli.py's table; the
check that no test leaves a process behind is conftest.py's no_orphans.)"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pyperf
import pytest

from conftest import BENCH, ROOT, TINY_RUNNER, default_sigint, need_open_files, run_bench
from test_http import run_http


def start_bench(args, cwd):
    """bench.py in its own session, as in a terminal of its own."""
    return subprocess.Popen([sys.executable, BENCH] + args, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=default_sigint)


def session_processes(sid):
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if os.getsid(proc.pid) == sid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (OSError, psutil.Error):
            pass
    return found


def wait_until(predicate, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def valid_or_absent(path):
    """The -o file: absent, or a pyperf JSON of whole runs."""
    if not path.exists():
        return []
    suite = pyperf.BenchmarkSuite.load(str(path))
    return suite.get_benchmark_names()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_to_the_main_process_only_stops_every_child(tmp_path, signum):
    """kill -INT/-TERM on the main process alone (not a terminal's Ctrl-C):
    pyperf kills its worker, and the worker's pool and sampler must not
    outlive it."""
    proc = start_bench(["--preset", "quick", "--workload", "sleep", "--model",
                        "processes-8-chunk-1", "--items", "400", "--latency-ms",
                        "20", "-p", "1", "-n", "3", "-w", "0", "-o", "out.json"],
                       tmp_path)
    me = psutil.Process(proc.pid)
    pools = wait_until(lambda: len(me.children(recursive=True)) >= 9, 30)
    assert pools, "the worker's pool never started"
    os.kill(proc.pid, signum)
    proc.communicate(timeout=15)
    assert proc.returncode != 0
    assert wait_until(lambda: not session_processes(proc.pid), 5.0), \
        [" ".join(p.cmdline()) for p in session_processes(proc.pid)]
    assert valid_or_absent(tmp_path / "out.json") == []


def test_server_killed_mid_run_stops_the_run(tmp_path):
    proc = start_bench(["--preset", "quick", "--workload", "http", "--model",
                        "sequential,asyncio,threads-8", "--items", "200",
                        "--latency-ms", "20", "--http-timeout", "2", "-p", "2",
                        "-n", "3", "-w", "1", "-o", "out.json"], tmp_path)
    me = psutil.Process(proc.pid)

    def server():
        for child in me.children(recursive=True):
            try:
                if "concbench.servers" in child.cmdline():
                    return child
            except psutil.Error:
                pass
    victim = wait_until(server, 30)
    assert victim, "no load server started"
    time.sleep(3)
    killed = time.monotonic()
    for process in [victim] + victim.children(recursive=True):
        process.kill()      # the server and its worker
    out, err = proc.communicate(timeout=60)
    # Within the request timeout of the batch in progress, plus start-up.
    print("bench.py ended %.2f s after its server was killed" % (time.monotonic() - killed))
    # 0.31-0.37 s beside one busy loop (four runs of the suite); under a
    # 1-CPU quota: 0.29-0.61 s (five runs).
    assert time.monotonic() - killed < 20
    assert proc.returncode == 1, err
    assert "every item of the batch failed (connection" in err
    assert "is the server down?" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("bench.py: error: benchmark http/")
    completed = valid_or_absent(tmp_path / "out.json")
    # Interleaved: whichever ran before the server died, in the matrix's order.
    order = ["http/sequential", "http/threads-8", "http/asyncio"]
    assert completed == [name for name in order if name in completed]


def test_killed_worker_is_reported(tmp_path):
    proc = start_bench(["--preset", "quick", "--workload", "sleep", "--model",
                        "sequential,asyncio", "--items", "300", "--latency-ms",
                        "3", "-p", "3", "-n", "1", "-w", "0", "--pyperf-order",
                        "--no-control", "-o", "out.json"], tmp_path)
    me = psutil.Process(proc.pid)

    def second_worker():
        for child in me.children():
            try:
                if "--worker" in child.cmdline():
                    return child
            except psutil.Error:     # a worker that just ended
                pass
    # Let the first benchmark complete, then kill a worker of the second.
    assert wait_until(lambda: (tmp_path / "out.json").exists(), 60)
    worker = wait_until(second_worker, 30)
    assert worker, "no worker of the second benchmark"
    worker.kill()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("bench.py: error: benchmark sleep/asyncio failed")
    assert "exit code -9" in last
    assert "the runs of 1 benchmark(s) completed before it are in out.json" in last
    assert valid_or_absent(tmp_path / "out.json") == ["sleep/sequential"]


def test_appending_to_a_file_keeps_what_it_held(tmp_path):
    first = run_bench(["--workload", "sleep", "--model", "sequential", "--items",
                       "3", "--no-control", "-o", "out.json"] + TINY_RUNNER, tmp_path)
    assert first.returncode == 0, first.stderr
    more = run_bench(["--workload", "sleep", "--model", "sequential,asyncio",
                      "--items", "3", "--no-control", "--append", "out.json"]
                     + TINY_RUNNER, tmp_path)
    assert more.returncode == 0, more.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "out.json"))
    assert suite.get_benchmark_names() == ["sleep/sequential", "sleep/asyncio"]
    assert suite.get_benchmark("sleep/sequential").get_nrun() == 2


def test_thousand_threads_and_ten_thousand_requests_without_failure():
    """1,000 threads, then 10,000 concurrent asyncio requests, on loopback,
    on each load server, none failing. granian stops accepting past the
    requests it serves at once (backlog / workers by default, 8,192): the
    load server must hold more than that at once, not leave them to the
    clients' retries (20 s against aiohttp.web's 4 s, when it held 8,192).
    There each request waits 8 s at the server, longer than opening 8,192
    takes on a busy machine (4 s here on a quiet one), and the server
    counts how many it held at once."""
    import json
    import urllib.request

    from concbench.servers.process import LocalServer
    need_open_files(10000)
    for kind, held in (("aiohttp", 100.0), ("granian", 8000.0)):
        server = LocalServer(env={"CONCBENCH_SERVER": kind})
        url = server.start()
        try:
            for model, items, latency in (("threads-1000", 1000, 100.0),
                                          ("asyncio", 10000, held)):
                summary = run_http(model, items=items, latency_ms=latency, size_bytes=64,
                                   server_url=url, timeout_s=60.0)
                assert summary["items"] == items
                assert summary["failures"] == 0, summary
            with urllib.request.urlopen(url + "/stats", timeout=10) as reply:
                most = json.load(reply)["most_in_flight"]
        finally:
            server.stop()
        if kind == "granian":
            assert most > 8192, most


def test_a_signal_lost_in_a_finalizer_still_stops_the_run():
    """A handler that runs inside a __del__ (the garbage collector's, while
    a results file is written) has its exception printed and dropped by
    Python: the run raises it again at its next step."""
    script = textwrap.dedent("""
        import os, signal, sys
        sys.path.insert(0, %r)
        from concbench.run.cleanup import exit_on_signals, stop_if_signalled
        exit_on_signals()
        class Finalized:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGHUP)
                sum(range(1000))       # the handler runs here
        Finalized()
        print("went on", flush=True)
        stop_if_signalled()
        print("not stopped", flush=True)
    """ % str(ROOT))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=60, preexec_fn=lambda: signal.signal(
                              signal.SIGHUP, signal.SIG_DFL))     # not nohup's
    assert proc.stdout == "went on\n" and "Exception ignored" in proc.stderr, proc
    assert proc.returncode == 128 + signal.SIGHUP, proc
