"""Per-run figures in the pyperf JSON, through pyperf's hook mechanism.

pyperf creates a hook instance for the warm-up phase and another for the
values phase of each worker process, enters it around every value and calls
``teardown(metadata)`` at the end of the phase; the values phase comes last,
so the run's metadata describes the timed values, not the warm-ups. The timed
function (``concbench.batches``) finds the phase's hook as
``RunFigures.current``, brackets each batch with a ``BatchProbe`` and adds
the checked batch's figures with ``add_batch``.

Memory is sampled by a separate process (``concbench.sampler``), not by a
thread of the worker, which would compete for the GIL with the threads being
measured. CPU and context switches come from the kernel's own counters, read
before and after each batch outside the timed region.
"""

import os
import resource
import subprocess
import sys
import time

from concbench import IMPORT_ROOT
from concbench.thresholds import server_busy

HOOK_NAME = "concbench"


class BatchFigures:
    """One batch's figures, by how they combine over the batches of a run:
    ``counts`` add up (seconds, items, failures), ``peaks`` keep the
    highest, ``lows`` the lowest, ``bases`` keep the first batch's,
    ``labels`` are words, ``any_yes`` are "yes" if any batch's was true
    (else "no"), ``all_yes`` "yes" only if every batch's was."""

    def __init__(self, counts=None, peaks=None, bases=None, labels=None,
                 lows=None, any_yes=None, all_yes=None):
        self.counts = dict(counts or {})
        self.peaks = dict(peaks or {})
        self.bases = dict(bases or {})
        self.labels = dict(labels or {})
        self.lows = dict(lows or {})
        self.any_yes = dict(any_yes or {})
        self.all_yes = dict(all_yes or {})


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
        self.counts = {}
        self.peaks = {}
        self.bases = {}
        self.labels = {}
        self.lows = {}
        self.any_yes = {}
        self.all_yes = {}
        self.timed = 0.0

    def __enter__(self):
        RunFigures.current = self
        return self

    def __exit__(self, *exc_info):
        return None

    def add_batch(self, seconds, figures):
        """Add a checked batch of ``seconds`` (the timed region's length)."""
        self.timed += seconds
        for key, value in figures.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value
        for key, value in figures.peaks.items():
            self.peaks[key] = max(self.peaks.get(key, value), value)
        for key, value in figures.lows.items():
            self.lows[key] = min(self.lows.get(key, value), value)
        for key, value in figures.bases.items():
            self.bases.setdefault(key, value)
        self.labels.update(figures.labels)
        for key, value in figures.any_yes.items():
            self.any_yes[key] = self.any_yes.get(key, False) or bool(value)
        for key, value in figures.all_yes.items():
            self.all_yes[key] = self.all_yes.get(key, True) and bool(value)

    def figures(self):
        """The run's metadata keys, as pyperf will store them."""
        merged = {}
        for part in (self.counts, self.peaks, self.lows, self.bases, self.labels):
            merged.update(part)
        for part in (self.any_yes, self.all_yes):
            merged.update((key, "yes" if value else "no")
                          for key, value in part.items())
        if "server_cpu" in self.counts and self.timed > 0:
            # The share of the batches' wall time the server spent on CPU.
            merged["server_busy"] = server_busy(self.counts["server_cpu"], self.timed)
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
    import psutil
    try:
        return [child for child in psutil.Process().children(recursive=True)
                if child.pid not in exclude]
    except psutil.NoSuchProcess:
        return []


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

    _sampler = None

    def __init__(self):
        sampler = BatchProbe._sampler
        if sampler is None or not sampler.alive():
            sampler = BatchProbe._sampler = Sampler(os.getpid())
        self.sampler = sampler
        self.base = sampler.start()
        self.counters = tree_counters(exclude={sampler.pid})

    def finish(self):
        """Call right after the batch, before anything else."""
        after = tree_counters(exclude={self.sampler.pid}, before=False)
        peak = self.sampler.stop()
        cpu, system, voluntary, involuntary = (
            b - a for a, b in zip(self.counters, after))
        # Switches of processes a descendant reaped (a forkserver's
        # children), as the sampler last read them.
        voluntary += peak["reaped_switches"][0]
        involuntary += peak["reaped_switches"][1]
        return BatchFigures(
            counts={"cpu_tree": cpu, "cpu_tree_system": system,
                    "ctx_switches_voluntary": voluntary,
                    "ctx_switches_involuntary": involuntary,
                    "mem_samples": peak["samples"]},
            peaks={"mem_tree_peak": max(peak["memory"], self.base["memory"]),
                   "threads_peak": max(peak["threads"], self.base["threads"]),
                   "processes_peak": max(peak["processes"], self.base["processes"])},
            bases={"mem_tree_base": self.base["memory"]},
            labels={"mem_method": peak["method"]},
            all_yes={"cpu_complete": not peak["lost"]})


# -- the memory sampler's client --------------------------------------------------

class Sampler:
    """Drives ``python -m concbench.sampler --sample PID`` over a pipe."""

    def __init__(self, pid):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [IMPORT_ROOT] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "concbench.sampler", "--sample", str(pid)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
            bufsize=1)
        self.pid = self.process.pid

    def alive(self):
        return self.process.poll() is None

    def _ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the memory sampler exited (status %s)"
                               % self.process.poll())
        method, memory, threads, processes, samples, lost, voluntary, \
            involuntary = line.split()
        return {"method": method, "memory": int(memory), "threads": int(threads),
                "processes": int(processes), "samples": int(samples),
                "lost": int(lost),
                "reaped_switches": (int(voluntary), int(involuntary))}

    def start(self):
        return self._ask("start")

    def stop(self):
        return self._ask("stop")
