"""However a run that uses the local load server ends (it finishes, or gets
SIGINT, SIGTERM, SIGHUP or SIGKILL at any moment: while the server starts,
mid-round, while the results file is written), no process it started is left
(server, workers, pools, sampler) and its -o file is absent or a valid
pyperf JSON of the completed benchmarks. With SIGINT ignored, as under nohup
or in a background job, a Ctrl-C to the process group changes nothing.

Each attempt runs in tests/interrupt_run.py, a subreaper of its own, so that
no process can escape the count; attempts run two at a time."""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyperf
import pytest

ATTEMPT = str(Path(__file__).with_name("interrupt_run.py"))
# The local load server, pyperf workers, a process pool, threads, event
# loops and threads each running one; two rounds, so that an interrupt can
# fall between rounds and inside one.
MODELS = "sequential,threads-8,processes-2-chunk-1,asyncio,hybrid-2"
RUN = ["--preset", "quick", "--workload", "http", "--model", MODELS,
       "--items", "40", "-p", "2", "-n", "1", "-w", "0", "--no-control"]
BENCHMARKS = ["http/" + model for model in MODELS.split(",")]
# bench.py must end this long after the signal, or the attempt fails.
BOUND = 30
SEED = int(os.environ.get("CONCBENCH_INTERRUPT_SEED", "23"))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the attempts reap orphans with a Linux prctl")


def attempt(workdir, signame, moments, target="group", sigint="default",
            append=None, every=None, run=RUN):
    """One run, signalled at ``moments``; what interrupt_run.py saw."""
    workdir.mkdir()
    args = run + ["-o", "out.json"]
    if append:
        shutil.copy(append, workdir / "out.json")
        args = run + ["--append", "out.json"]
    spec = {"workdir": str(workdir), "args": args, "signal": signame,
            "target": target, "sigint": sigint, "moments": moments,
            "every": every, "bound": BOUND}
    proc = subprocess.run([sys.executable, ATTEMPT, json.dumps(spec)],
                          capture_output=True, text=True, timeout=BOUND + 60)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    seen["moments"] = moments
    return seen


def run_side_by_side(jobs):
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda job: job(), jobs))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One run to its end: how long a run takes, and an earlier results file
    of 1,500 benchmarks for --append, long enough to write that a signal can
    be sent while it is written."""
    base = tmp_path_factory.mktemp("reference")
    seen = attempt(base / "run", None, [])
    assert seen["status"] == 0 and not seen["left"], seen
    assert seen["names"] == BENCHMARKS, seen
    data = json.loads((base / "run" / "out.json").read_text())
    earlier = []
    for copy in range(300):
        for bench in data["benchmarks"]:
            bench = json.loads(json.dumps(bench))
            bench["metadata"]["name"] = "earlier-%03d/%s" % (
                copy, bench["metadata"]["name"].split("/")[1])
            earlier.append(bench)
    data["benchmarks"] = earlier
    (base / "earlier.json").write_text(json.dumps(data))
    return seen["took"], base / "earlier.json"


def check(seen, earlier_names=()):
    """No process left, bench.py ended within the bound, the file is absent
    or valid and holds what it held before."""
    where = "signal at %s s (moment %s): %s" % (seen["sent"], seen["moments"], seen)
    assert not seen["hung"], "bench.py did not end: " + where
    assert not seen["left"], "processes left: " + where
    assert seen["invalid"] is None, "invalid results file: " + where
    assert not seen["temporary"], "temporary file left: " + where
    assert set(earlier_names) <= set(seen["names"]), "earlier results lost: " + where
    if seen["sent"] and seen["status"] < 0:
        # Killed by the signal before it set its handlers: nothing started,
        # nothing said (a traceback would end this way too).
        assert not seen["stderr_tail"], where
    elif seen["sent"] and seen["status"] != 0:
        # It said why it stopped (a worker stopped while it started may print
        # a traceback besides).
        assert seen["said"], where
        # What it says the file keeps is what the file holds.
        kept = re.search(r"the runs of (\d+) benchmark", " ".join(seen["said"]))
        assert not kept or int(kept.group(1)) == len(seen["names"]), where


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_at_ten_moments_leaves_nothing(tmp_path, reference, signame):
    """A Ctrl-C (the whole group), a kill (bench.py alone) or a hangup (either)
    at 10 moments: while the server starts, while the results file is written,
    and 8 at random from start to end."""
    took, earlier = reference
    rnd = random.Random("%s-%d" % (signame, SEED))
    earlier_names = pyperf.BenchmarkSuite.load(str(earlier)).get_benchmark_names()
    jobs = []
    for index in range(10):
        moment = ("server" if index == 0 else "write" if index == 1
                  else round(rnd.uniform(0.0, 1.1 * took), 2))
        target = "group" if signame == "SIGINT" or index % 2 else "main"
        append = earlier if moment == "write" else None
        jobs.append(lambda index=index, moment=moment, target=target, append=append:
                    attempt(tmp_path / str(index), signame, [moment], target,
                            append=append))
    outcomes = run_side_by_side(jobs)
    for seen in outcomes:
        check(seen, earlier_names if seen["moments"] == ["write"] else ())
    print("%s (moment, seconds, target, exit status, benchmarks kept):" % signame,
          [(seen["moments"][0], seen["sent"], seen["status"], len(seen["names"]))
           for seen in outcomes])
    signum = getattr(signal, signame)
    for seen in outcomes:
        if seen["sent"]:
            # Ended by the signal: the shell's status for it, or pyperf's 1
            # for a Ctrl-C that reached its own loop, or killed by it before
            # any handler was set; or, the run complete, it was stopping.
            complete = seen["names"] == BENCHMARKS and seen["status"] == 0
            assert complete or seen["status"] in (128 + signum, 1, -signum), \
                json.dumps(seen)
    # The moments covered the start, the write and the middle of the run:
    # some runs kept nothing, some kept benchmarks.
    assert any(seen["sent"] and not seen["names"] for seen in outcomes), outcomes
    # A write was in progress when the signal came (earlier_names: kept).
    assert all(seen["sent"] for seen in outcomes if seen["moments"] == ["write"]), \
        outcomes
    assert any(seen["sent"] and 0 < len(seen["names"]) for seen in outcomes
               if seen["moments"] != ["write"]), outcomes


DB_RUN = ["--preset", "quick", "--workload", "db", "--model", "sequential,threads-4,asyncio",
          "--items", "20", "-p", "2", "-n", "1", "-w", "0", "--no-control"]


def test_a_signal_while_the_database_starts_or_serves_leaves_nothing(tmp_path):
    """The embedded PostgreSQL stops as the load server does: a Ctrl-C to
    the group or a kill of bench.py as the postmaster starts, and a hangup
    to the group and a kill of bench.py as the first worker starts (the
    database serving): nothing left, bench.py said why it stopped. Moments
    of the run, not seconds: on a VM whose probe read 3.25 us the whole run
    took 2.47 s, and a kill at 2.5 s found it done; a kill as bench.py
    wrote its file, polled for, was missed once in a whole suite."""
    jobs = [lambda index=index, signame=signame, moment=moment, target=target: attempt(
                tmp_path / str(index), signame, [moment], target, run=DB_RUN)
            for index, (signame, moment, target) in enumerate([
                ("SIGINT", "database", "group"), ("SIGTERM", "database", "main"),
                ("SIGHUP", "sampler", "group"), ("SIGTERM", "sampler", "main")])]
    outcomes = run_side_by_side(jobs)
    for seen in outcomes:
        check(seen)
        assert seen["sent"], json.dumps(seen)
    print("db (moment, seconds, exit status, benchmarks kept):",
          [(seen["moments"][0], seen["sent"], seen["status"], len(seen["names"]))
           for seen in outcomes])


def test_with_sigint_ignored_a_ctrl_c_changes_nothing(tmp_path, reference):
    """nohup, a background job of a script, some CI runners: bench.py starts
    with SIGINT ignored, and a Ctrl-C to the whole group, again and again,
    must not reach the server: the run completes and every item is served."""
    took, _ = reference
    # Some 30 Ctrl-Cs over a run as long as the reference's; at least 10 in
    # one up to 3 times shorter (a run here once sent 9 at twice the gaps).
    seen = attempt(tmp_path / "run", "SIGINT", ["server"], sigint="ignore",
                   every=[took / 40, took / 20])
    check(seen)
    assert seen["status"] == 0, seen
    # Beside one busy loop: 25 to 30 sent (four runs of the suite); under a
    # 1-CPU quota: 17 to 44 (five runs).
    assert len(seen["sent"]) >= 10, seen
    assert seen["names"] == BENCHMARKS
    for bench in pyperf.BenchmarkSuite.load(str(tmp_path / "run" / "out.json")) \
            .get_benchmarks():
        assert bench.get_nrun() == 2
        for run in bench.get_runs():
            meta = run.get_metadata()
            assert meta["failures"] == 0, (bench.get_name(), meta)
            assert meta["items"] == meta["server_requests"] == 40, meta
    print("SIGINT ignored: %d Ctrl-Cs to the group from %.2f s to %.2f s; exit "
          "status 0, every run complete" % (len(seen["sent"]), seen["sent"][0],
                                            seen["sent"][-1]))


@pytest.mark.parametrize("moment", ["server", 1.0])
def test_the_server_exits_within_three_seconds_of_a_killed_bench(tmp_path, moment):
    """kill -9 bench.py, while the server starts or mid-run: nothing can stop
    the server for it; the server sees its parent gone and exits (0.2 s to
    notice, 0.5 s of grace by design; 3 s leaves a busy machine its
    scheduling delays)."""
    seen = attempt(tmp_path / "run", "SIGKILL", [moment], target="main")
    assert seen["sent"] and seen["status"] == -signal.SIGKILL, seen
    # The server was there when bench.py was killed, so its exit is one.
    assert seen["server_before"] == [True], seen
    # Measured from the kill to the server's exit; the bound is wide, the
    # figure is in docs/reliability.md.
    # Beside one busy loop: 0.03-0.23 s (four runs of the suite); under a
    # 1-CPU quota: 0.10-0.26 s (five runs). The bound is the design's
    # promise, ten times that.
    assert seen["server_gone"] is not None and seen["server_gone"] < 3.0, seen
    print("kill -9 at %s: the server gone %.2f s later" % (moment, seen["server_gone"]))
    assert seen["invalid"] is None, seen


# -- kill -9: whatever the run started follows it (concbench.run.lifeline) --------

# The load server, pyperf workers with their memory samplers, process pools
# forked by a worker and by a worker's forkserver, and (encode, paired in the
# worker) the processes that run the reference's batches beside a model's.
# And the embedded PostgreSQL of db (servers/postgres.py).
KILL_MODELS = "sequential,processes-2-chunk-1,processes-2-chunk-1-forkserver,asyncio"
KILL_RUN = ["--preset", "quick", "--workload", "http,db,encode", "--model", KILL_MODELS,
            "--items", "60", "-p", "2", "-n", "2", "-w", "1", "--no-control"]


def test_kill_9_at_ten_moments_leaves_nothing_after_two_seconds(tmp_path, reference):
    """SIGKILL to bench.py while the server starts, while the database
    starts, while a sampler lives,
    during a pool batch (forked, and from a forkserver), while the results
    file is written, and at random: 2 s after the kill, and 5 s after it,
    no process the run started is running."""
    took, earlier = reference
    rnd = random.Random("kill-%d" % SEED)
    moments = (["server", "database", "sampler", "pool", "pool", "forkserver pool",
                "forkserver pool", "write"]
               + [round(rnd.uniform(0.2, took), 2) for _ in range(3)])
    jobs = [lambda index=index, moment=moment: attempt(
                tmp_path / str(index), "SIGKILL", [moment], "main",
                append=earlier if moment == "write" else None, run=KILL_RUN)
            for index, moment in enumerate(moments)]
    outcomes = run_side_by_side(jobs)
    for seen in outcomes:
        where = "kill -9 at %s s (moment %s): %s" % (seen["sent"], seen["moments"], seen)
        assert seen["sent"] and seen["status"] == -signal.SIGKILL, where
        # The last process gone 0.24-0.32 s after the kill beside one busy
        # loop (four runs of the suite); under a 1-CPU quota: 0.49-0.82 s
        # (five runs).
        assert seen["left_at_2"] == [], "running 2 s after the kill: " + where
        assert not seen["left"], "running 5 s after the kill: " + where
        assert seen["invalid"] is None and not seen["hung"], where
    print("kill -9 (moment, seconds into the run, last process gone after):",
          [(seen["moments"][0], seen["sent"][0], seen["gone"]) for seen in outcomes])


def test_a_killed_worker_takes_its_pool_and_sampler_with_it(tmp_path):
    """kill -9 of a pyperf worker in a pool batch, bench.py stopped meanwhile
    so that it cannot clean anything up: the worker's pool processes and its
    sampler end on their own; then bench.py reports the failed benchmark."""
    seen = attempt(tmp_path / "run", "SIGKILL", ["pool"], "worker", run=KILL_RUN)
    killed = seen["worker_killed"]
    assert killed and killed["worker"], seen
    assert any("concbench.run.memory_sampler" in c for c in killed["children"]), killed
    assert len(killed["children"]) >= 3, killed      # sampler, 2 pool or partner
    # 0.02-0.15 s beside one busy loop (four runs of the suite); under a
    # 1-CPU quota: 0.02-0.39 s (five runs).
    assert killed["children_gone"] is not None and killed["children_gone"] < 2.0, killed
    assert seen["status"] == 1 and not seen["left"], seen
    print("a killed worker's %d processes were gone %.3f s later"
          % (len(killed["children"]), killed["children_gone"]))


# -- LocalServer.start itself -----------------------------------------------

def server_group_alive(local):
    """Whether a process of the server's group still runs (a zombie, dead
    and waiting to be reaped, does not)."""
    from concbench.servers.process import group_running

    return local.process is not None and group_running(local.process.pid)


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.02, 0.05, 0.1, 0.15, 0.3])
def test_ctrl_c_while_the_server_starts_stops_it(delay):
    """A SIGINT at any moment of LocalServer.start: it raises, and what it
    started is stopped, or the start completes and stop() stops it."""
    from threading import Timer

    from concbench.servers.process import LocalServer

    armed = [True]

    def interrupt(signum, frame):
        if armed[0]:    # a signal late for the test must not stop pytest
            raise KeyboardInterrupt
    local = LocalServer(startup_timeout=20)
    timer = Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    previous = signal.signal(signal.SIGINT, interrupt)
    outcome = None
    try:
        try:
            timer.start()
            local.start()
            outcome = "started"
            timer.join(timeout=5)   # the signal comes after the start
            time.sleep(0.05)
        except KeyboardInterrupt:
            if outcome != "started":
                outcome = "interrupted"
                assert not server_group_alive(local), "the server outlived the interrupt"
    finally:
        armed[0] = False
        timer.cancel()
        timer.join(timeout=5)
        signal.signal(signal.SIGINT, previous)
        local.stop()
    assert not server_group_alive(local)
    print("SIGINT %.2f s into LocalServer.start: %s" % (delay, outcome))
    if delay == 0.0:
        assert outcome == "interrupted"


def test_a_server_that_fails_to_start_is_one_error_and_leaves_nothing():
    from concbench.servers.process import LocalServer

    local = LocalServer(host="192.0.2.1", startup_timeout=20)  # not this machine's
    with pytest.raises(RuntimeError, match="did not start.*exit status 2"):
        local.start()
    assert not server_group_alive(local)
    local.stop()    # again: nothing to do


@pytest.mark.parametrize("signalled", [True, False])
def test_an_error_raised_while_a_signal_unwinds_the_run_reads_as_the_signal(
        monkeypatch, capsys, signalled):
    """Once, beside a busy loop, SIGHUP ended bench.py with a traceback from
    pyperf closing a worker's pipe (EBADF) as the signal unwound it, and no
    word of the signal. The error is reported as the stop it came from; one
    with no signal behind it still propagates."""
    from concbench.run import cli
    from concbench.run.cleanup import Stopped

    def run_bench(program_args, opened):
        read, write = os.pipe()
        os.close(read)
        os.close(write)
        try:
            if signalled:
                raise Stopped(signal.SIGHUP)
        finally:
            os.close(read)      # EBADF
    monkeypatch.setattr(cli, "run_bench", run_bench)
    if signalled:
        with pytest.raises(SystemExit) as stopped:
            cli.main(program_args=[])
        assert stopped.value.code == 128 + signal.SIGHUP
        assert capsys.readouterr().err == "bench.py: stopped by SIGHUP\n"
    else:
        with pytest.raises(OSError):
            cli.main(program_args=[])
