"""Per-run figures: process-tree memory, CPU, counts, as pyperf JSON."""

import functools
import os
import time

import psutil
import pyperf
import pytest

from concbench import models
from concbench.run import worker
from concbench.run.cell import Cell
from concbench.run.run_figures import RunFigures
from concbench.workloads.base import ITEMS, SEED, Workload
from conftest import TINY_RUNNER, run, run_bench

MIB = 1024 * 1024
TOUCH = 200 * MIB


def touch_memory(item):
    """Allocate and write 200 MiB, hold it a while, free it."""
    block = b"\x01" * TOUCH
    time.sleep(1.0)
    return item + len(block) // TOUCH


def touch_memory_together(meeting, item):
    """Allocate and write 200 MiB, then wait until the other item of the
    batch holds its block too, hold 1 s more, free it. Held a fixed 1 s
    without the wait, the two pool processes' blocks overlapped only in
    part under a 1-CPU quota (363 MiB above the base), since one process
    could wait for the CPU through most of the other's hold. The item a
    model is primed with before the batch (``Model.prime``) meets no one:
    it runs before the batch's marker exists, and does not wait."""
    block = b"\x01" * TOUCH
    if os.path.exists(os.path.join(meeting, "batch")):
        open(os.path.join(meeting, str(item)), "w").close()
        deadline = time.monotonic() + 60
        while len(os.listdir(meeting)) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    time.sleep(1.0)
    return item + len(block) // TOUCH


class Touch(Workload):
    name = "touch"
    kind = "cpu"
    OPTIONS = (ITEMS.with_default(2), SEED)

    def make_items(self):
        return list(range(self.params["items"]))

    def sync_function(self):
        return touch_memory


class TouchTogether(Touch):
    """Two items that hold their blocks at the same time, however the
    machine schedules them; never run one after the other (each would
    wait 60 s for the other)."""
    meeting = None

    def sync_function(self):
        return functools.partial(touch_memory_together, self.meeting)

    def before_batch(self):
        open(os.path.join(self.meeting, "batch"), "w").close()

    def reference(self, items):
        return [item + 1 for item in items]


def helpers():
    """Processes of this pytest process that earlier tests left for its
    lifetime (multiprocessing's resource tracker, a forkserver): in the
    tree measured, as a pyperf worker's own would be; its memory sampler,
    which the tree leaves out, aside."""
    own_sampler = "concbench.run.memory_sampler --sample %d" % os.getpid()
    count = 0
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and \
                    own_sampler not in " ".join(child.cmdline()):
                count += 1
        except psutil.Error:     # gone meanwhile
            pass
    return count


def measure(model_name, workload=None):
    hook = RunFigures()
    cell = Cell(workload or Touch(), models.parse(model_name))
    before = helpers()
    with hook:
        worker.time_batches(1, cell)
    figures = {}
    hook.teardown(figures)
    figures["helpers"] = before
    return figures


@pytest.mark.parametrize("model_name", ["processes-2-chunk-1", "threads-2"])
def test_two_workers_touching_200_mib_show_400_mib(model_name, tmp_path):
    workload = TouchTogether()
    workload.meeting = str(tmp_path)
    figures = measure(model_name, workload)
    print("%s: %s" % (model_name, figures))
    assert figures["mem_method"] == "pss"
    # 400-409 MiB added beside one busy loop (four runs of the suite); under
    # a 1-CPU quota: 400-462 MiB (five runs). With the items meeting, under
    # a 1-CPU quota shared with a busy loop: processes 406-412 MiB, threads
    # 400-407 MiB (five runs of this test).
    assert figures["mem_tree_peak"] - figures["mem_tree_base"] >= 2 * TOUCH * 0.95
    assert figures["mem_tree_peak"] >= 2 * TOUCH
    if model_name.startswith("processes"):
        assert figures["processes_peak"] == 3 + figures["helpers"]
    else:
        assert figures["threads_peak"] >= 3
    assert figures["items"] == 2 and figures["failures"] == 0


def test_sequential_shows_no_more_than_it_uses():
    figures = measure("sequential")
    print("sequential: %s" % figures)
    added = figures["mem_tree_peak"] - figures["mem_tree_base"]
    assert TOUCH * 0.95 <= added <= TOUCH + 30 * MIB
    assert figures["processes_peak"] == 1 + figures["helpers"]


def idle_item(item):
    time.sleep(0.3)
    return item


class Idle(Touch):
    name = "idle"

    def sync_function(self):
        return idle_item

    def reference(self, items):
        # Known without sleeping through every item in turn (9.6 s for 32).
        return list(items)


def test_forked_workers_share_their_parents_pages():
    """Forked workers of a parent holding 200 MiB: the tree's PSS stays near
    200 MiB, while their summed RSS would be about 200 MiB per worker."""
    held = bytearray(b"\x01" * TOUCH)
    hook = RunFigures()
    cell = Cell(Idle(items=32), models.parse("processes-32-chunk-1"))
    with hook:
        worker.time_batches(1, cell)
    figures = {}
    hook.teardown(figures)
    # The pool starts workers as items arrive; most of the 32 start.
    workers = figures["processes_peak"] - 1
    print("32 forked workers: %s" % figures)
    # 32 beside one busy loop (four runs of the suite); under a 1-CPU
    # quota: 31-32 (five runs).
    assert workers >= 8, figures
    # Each worker adds the pages it copies, a few MiB; counting each new
    # worker's PSS at its start counted the shared pages again (720 MiB).
    assert TOUCH <= figures["mem_tree_peak"] <= (figures["mem_tree_base"]
                                                 + workers * 4 * MIB), figures
    assert held[-1] == 1


def test_cpu_of_exited_pool_workers_is_counted():
    hook = RunFigures()
    workload = Cell(SpinWorkload(), models.parse("processes-2-chunk-1"))
    with hook:
        worker.time_batches(1, workload)
    figures = {}
    hook.teardown(figures)
    # Two children each spin 0.3 s of CPU; the worker itself mostly waits.
    assert figures["cpu_tree"] >= 0.5, figures


def spin(item):
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    return item


class SpinWorkload(Touch):
    def sync_function(self):
        return spin


RUN_KEYS = ["mem_tree_peak", "mem_tree_base", "cpu_tree", "ctx_switches_voluntary",
            "ctx_switches_involuntary", "threads_peak", "processes_peak", "items",
            "failures", "mem_method"]
HTTP_KEYS = ["bytes_in", "bytes_out", "server_cpu", "server_requests", "server_busy"]


def test_every_run_carries_the_figures(tmp_path):
    proc = run_bench(["--preset", "quick", "--workload", "rotate,http", "--model",
                      "sequential,threads-2,processes-2-chunk-2,asyncio",
                      "--items", "6", "--image-size", "32", "--latency-ms", "1",
                      "-p", "2", "-n", "1", "-w", "1", "--quiet", "-o", "m.json"],
                     tmp_path)
    assert proc.returncode == 0, proc.stderr
    suite = pyperf.BenchmarkSuite.load(str(tmp_path / "m.json"))
    for benchmark in suite.get_benchmarks():
        runs = [r for r in benchmark.get_runs() if r.values]
        assert len(runs) == 2
        for one in runs:
            meta = one.get_metadata()
            keys = RUN_KEYS + (HTTP_KEYS if benchmark.get_name().startswith("http")
                               else [])
            missing = [key for key in keys if key not in meta]
            assert not missing, (benchmark.get_name(), missing)
            assert meta["items"] == 6 and meta["failures"] == 0
            assert meta["mem_tree_peak"] >= meta["mem_tree_base"] > 0
            if benchmark.get_name().startswith("http"):
                assert meta["bytes_in"] == 6 * 1024
                assert meta["bytes_out"] > 6 * 50
    dump = run(["-m", "pyperf", "dump", "--verbose", "m.json"], tmp_path)
    assert dump.returncode == 0 and "mem_tree_peak" in dump.stdout


def test_no_run_figures_leaves_them_out(tmp_path):
    proc = run_bench(["--preset", "quick", "--workload", "sleep", "--model",
                      "asyncio", "--no-run-figures"] + TINY_RUNNER
                     + ["-o", "n.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    meta = pyperf.Benchmark.load(str(tmp_path / "n.json")).get_runs()[-1].get_metadata()
    assert "mem_tree_peak" not in meta and "hooks" not in meta


@pytest.mark.quick
def test_the_samplers_open_stat_files_follow_the_tree():
    """The sampler keeps a process's /proc stat file open between samples
    (reopening it cost several times the read); one that ends reads as
    gone, and is closed, and so are those of processes no longer listed:
    a fresh pool per batch does not leave a file open per process."""
    import subprocess
    import sys

    from concbench.run import proc_files

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        path = "/proc/%d/stat" % child.pid
        rss, threads, parent = proc_files.stat(child.pid)
        fd = proc_files._open[path]
        deadline = time.monotonic() + 10
        while rss == 0 and time.monotonic() < deadline:    # not started yet
            time.sleep(0.01)
            rss, threads, parent = proc_files.stat(child.pid)
        # The same file, read again, says what is so now.
        assert rss > 0 and threads == 1 and parent == os.getpid()
        assert proc_files._open[path] == fd
    finally:
        child.kill()
        child.wait()
    with pytest.raises(ProcessLookupError):
        proc_files.stat(child.pid)
    assert path not in proc_files._open
    with pytest.raises(OSError):
        os.fstat(fd)
    proc_files.stat(os.getpid())
    proc_files.keep_open(set())
    assert list(proc_files._open) in ([], ["/proc/loadavg"])
