"""Per-run figures in the pyperf JSON, through pyperf's hook mechanism.

pyperf creates a hook instance for the warm-up phase and another for the
values phase of each worker process, enters it around every value and calls
``teardown(metadata)`` at the end of the phase; the values phase comes last,
so the run's metadata describes the timed values, not the warm-ups. The timed
function (``concbench.run.worker``, each batch in ``concbench.run.batch``)
finds the phase's hook as ``RunFigures.current``, brackets each batch with a
``BatchProbe`` and adds the checked batch's figures with ``add_batch``.

Memory is sampled by a separate process (``concbench.run.memory_sampler``), not by a
thread of the worker, which would compete for the GIL with the threads being
measured. CPU and context switches come from the kernel's own counters, read
before and after each batch outside the timed region.
"""

import atexit
import os
import resource
import statistics
import subprocess
import sys
import time

from concbench import IMPORT_ROOT, schema
from concbench.run import memory_sampler as sampler_protocol
from concbench.run.interventions import used
from concbench.run.pinning import release
from concbench.thresholds import server_busy

HOOK_NAME = "concbench"
# Run keys whose batches combine into "yes" or "no".
YES_NO = (schema.ANY_YES, schema.ALL_YES)
# Run keys that keep every batch's value until the run's end.
LISTS = (schema.EVERY, schema.MIDDLE)


class RunFigures:
    """The ``concbench`` pyperf hook (entry point group ``pyperf.hook``).

    One instance per phase of a worker process; its figures live on the
    instance, from its creation to its ``teardown``.
    """

    #: The hook of the phase in progress, None outside one (or when the hook
    #: is off): what the timed function records into.
    current = None
    # Metadata keys the previous phase of this process wrote, so that a key
    # only the warm-ups produced (a failure kind) does not outlive them.
    _written = set()

    def __init__(self):
        self.values = {}
        self.timed = 0.0
        self.pairs = 0      # batches paired with the reference's so far

    def __enter__(self):
        RunFigures.current = self
        return self

    def __exit__(self, *exc_info):
        return None

    def add_batch(self, seconds, figures):
        """Add a checked batch of ``seconds`` (the timed region's length):
        ``figures`` maps run keys to the batch's values, each combined with
        the earlier batches' as the schema says (summed, highest, ...)."""
        self.timed += seconds
        for key, value in figures.items():
            how = schema.batches_of(key) or schema.COUNT
            if how == schema.MERGED:
                if key in self.values:
                    self.values[key].merge(value)
                else:
                    self.values[key] = value
            elif how in LISTS:
                self.values.setdefault(key, []).append(value)
            elif key not in self.values:
                self.values[key] = bool(value) if how in YES_NO else value
            elif how == schema.COUNT:
                self.values[key] += value
            elif how == schema.PEAK:
                self.values[key] = max(self.values[key], value)
            elif how == schema.LOW:
                self.values[key] = min(self.values[key], value)
            elif how == schema.LABEL:
                self.values[key] = value
            elif how == schema.ANY_YES:
                self.values[key] = self.values[key] or bool(value)
            elif how == schema.ALL_YES:
                self.values[key] = self.values[key] and bool(value)
            # FIRST: the first batch's value stays.

    def figures(self):
        """The run's metadata keys, as pyperf will store them."""
        merged = {}
        for key, value in self.values.items():
            how = schema.batches_of(key)
            if how in YES_NO:
                value = "yes" if value else "no"
            elif how == schema.EVERY:
                value = " ".join("%.6g" % each for each in value)
            elif how == schema.MIDDLE:
                value = statistics.median(value)
            elif how == schema.MERGED:
                value = value.encode()
            merged[key] = value
        if schema.SERVER_CPU in self.values and self.timed > 0:
            # The share of the batches' wall time the server spent on CPU.
            merged[schema.SERVER_BUSY] = server_busy(self.values[schema.SERVER_CPU],
                                                     self.timed)
        return {key: round(value, 6) if isinstance(value, float) else value
                for key, value in merged.items()}

    def teardown(self, metadata):
        if RunFigures.current is self:
            RunFigures.current = None
        figures = self.figures()
        for key in RunFigures._written - set(figures):
            metadata.pop(key, None)
        metadata.update(figures)
        RunFigures._written = set(figures)


# -- CPU and context switches of the process tree -------------------------------

def _tree(exclude):
    """This process's descendants but ``exclude`` and theirs (the
    reference's process beside the worker has a sampler of its own)."""
    import psutil
    try:
        children = psutil.Process().children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    parents = {}
    for child in children:
        try:
            parents[child.pid] = child.ppid()
        except psutil.NoSuchProcess:
            pass

    def excluded(pid):
        while pid in parents:
            if pid in exclude:
                return True
            pid = parents[pid]
        return pid in exclude
    return [child for child in children if not excluded(child.pid)]


def _own_counters():
    """This process's CPU (every thread, nanosecond resolution) and its
    reaped children's (their own reaped children's included: the kernel adds
    a reaped process's children's times to its parent's), the system part of
    both, and their context switches."""
    cpu = time.process_time()
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (cpu + reaped.ru_utime + reaped.ru_stime, own.ru_stime + reaped.ru_stime,
            own.ru_nvcsw + reaped.ru_nvcsw, own.ru_nivcsw + reaped.ru_nivcsw)


def _live_counters(exclude):
    """The same of live descendants (a reused pool's workers, a forkserver),
    the CPU of the processes each of them reaped included (/proc/PID/stat's
    cutime and cstime): a forkserver's children are reaped by the
    forkserver, not by this process, so their CPU is only found there.
    Context switches of those reaped processes are kept by no counter this
    process can read: the sampler reads them while they live."""
    import psutil
    cpu = system = voluntary = involuntary = 0
    for child in _tree(exclude):
        try:
            times = child.cpu_times()
            switches = child.num_ctx_switches()
        except psutil.NoSuchProcess:
            continue
        reaped_system = getattr(times, "children_system", 0.0)
        cpu += (times.user + times.system
                + getattr(times, "children_user", 0.0) + reaped_system)
        system += times.system + reaped_system
        voluntary += switches.voluntary
        involuntary += switches.involuntary
    return cpu, system, voluntary, involuntary


def tree_counters(exclude=(), before=True):
    """CPU seconds (all, system), context switches (voluntary, involuntary)
    so far of this process and its tree.

    This process's own counters are read last before a batch and first after
    it, so that the time spent listing descendants is not counted.
    """
    if before:
        live = _live_counters(exclude)
        own = _own_counters()
    else:
        own = _own_counters()
        live = _live_counters(exclude)
    return tuple(a + b for a, b in zip(own, live))


class BatchProbe:
    """Figures of one batch: tree CPU, context switches, sampled memory.

    The sampler process outlives the probe: one per worker process, started
    by its first probe and ended when the worker exits (its pipe closes).
    """

    # This process's sampler: process state, one per process.
    _sampler = None

    @classmethod
    def after_fork(cls):
        """In a process just forked: the sampler it inherited is its
        parent's, so its first probe starts one of its own."""
        cls._sampler = None

    @classmethod
    def close_sampler(cls):
        """Reap this process's sampler, where the process ends without its
        exit handlers."""
        if cls._sampler is not None:
            cls._sampler.close()

    @classmethod
    def start_sampler(cls, partner=None):
        """Start this process's sampler ahead of its first batch, so that
        its interpreter starts while the worker prepares (the reference's
        process forked, the model's pool opened, its first item run), not
        between the batches of the first pair, which each sampler's start
        would hold up (measured in acb185c: git show acb185c)."""
        if cls._sampler is None or not cls._sampler.alive():
            cls._sampler = MemorySampler(os.getpid(), partner)

    def __init__(self, partner=None):
        """``partner``: the pid of the process that runs the reference's
        batches beside this worker's (``concbench.run.partner``): not part of
        the model's tree."""
        sampler = BatchProbe._sampler
        if sampler is None or not sampler.alive():
            sampler = BatchProbe._sampler = MemorySampler(os.getpid(), partner)
        self.sampler = sampler
        self.exclude = {sampler.pid} | ({partner} if partner else set())
        self.base = sampler.start()
        self.counters = tree_counters(exclude=self.exclude)

    def finish(self):
        """Call right after the batch, before anything else."""
        after = tree_counters(exclude=self.exclude, before=False)
        peak = self.sampler.stop()
        cpu, system, voluntary, involuntary = (
            b - a for a, b in zip(self.counters, after))
        # Switches of processes a descendant reaped (a forkserver's
        # children), as the sampler last read them.
        voluntary += peak["reaped_switches"][0]
        involuntary += peak["reaped_switches"][1]
        return {schema.CPU_TREE: cpu, schema.CPU_TREE_SYSTEM: system,
                schema.CTX_SWITCHES_VOLUNTARY: voluntary,
                schema.CTX_SWITCHES_INVOLUNTARY: involuntary,
                schema.MEM_SAMPLES: peak["samples"],
                schema.MEM_TREE_PEAK: max(peak["memory"], self.base["memory"]),
                schema.THREADS_PEAK: max(peak["threads"], self.base["threads"]),
                schema.PROCESSES_PEAK: max(peak["processes"], self.base["processes"]),
                schema.MEM_TREE_BASE: self.base["memory"],
                schema.MEM_METHOD: peak["method"],
                schema.CPU_COMPLETE: not peak["lost"]}


# -- the memory sampler's client --------------------------------------------------

class MemorySampler:
    """Drives ``python -m concbench.run.memory_sampler --sample PID`` over a pipe."""

    def __init__(self, pid, partner=None):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [IMPORT_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "concbench.run.memory_sampler", "--sample", str(pid)]
            + (["--partner", str(partner)] if partner else [])
            + ([] if used("sampler") else ["--ends-only"]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.pid = self.process.pid
        # Not on the CPU a pinned worker's batches run on (concbench.run.pinning).
        release(self.pid)
        atexit.register(self.close)

    def close(self):
        """End the sampler (its pipe closes) and reap it, so that it does
        not outlive this process as a zombie of whoever adopts it."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass

    def alive(self):
        return self.process.poll() is None

    def _ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the memory sampler exited (status %s)"
                               % self.process.poll())
        return sampler_protocol.parse_answer(line)

    def start(self):
        return self._ask("start")

    def stop(self):
        return self._ask("stop")
