"""Worker counts sized to the machine the run is on: the ladder.

For a machine of U usable CPUs (``concbench.cpus``; ``--cpus N`` sizes it as
for another machine) the ladder is 1, the powers of two below U, U itself
and 2U, so that oversubscription shows: 1, 2, 4 for U = 2; 1, 2, 4, 8, 16,
32 for U = 16. A preset's model list names a family over the ladder with a
``Ladder`` entry instead of fixed names; the wide and full presets run every
rung, the default and quick presets U and 2U (sequential stands for 1):
every model more is a rival in its workload's races, whose level it splits
(tests/test_matrix.py holds the default to ten models a workload on any
machine). IO workloads keep their thread counts, which follow concurrency,
not cores; their process pools add U and 2U to fixed counts (``counts``),
``room`` counts in all at most.

A chunk follows the batch: no pool gets fewer chunks than workers (a chunk
of at most items / workers, and 1 where there are fewer items than
workers). Two rows are what the standard library does unasked:
``ThreadPoolExecutor()``'s size and ``ProcessPoolExecutor()``'s, named
``threads-6-default`` and ``processes-2-chunk-1-default`` (on 2
CPUs), computed as the running Python computes them; and ``POOL_MAP``, the
chunk ``multiprocessing.Pool.map`` takes, ceil(items / (4 x workers)).
Names keep stating their counts, so that ``pyperf compare_to`` and the
report match rows across machines by what ran.
"""

import math
import sys
from dataclasses import dataclass

from concbench import cpus as machine_cpus

# Which rungs a preset keeps.
ALL, DEFAULT, QUICK, USABLE = "all", "default", "quick", "usable"
# The chunk of multiprocessing.Pool.map: ceil(items / (4 x workers)).
POOL_MAP = "pool-map"


def rungs(usable):
    """1, the powers of two below ``usable``, ``usable`` and twice it."""
    found = {1, usable, 2 * usable}
    power = 2
    while power < usable:
        found.add(power)
        power *= 2
    return sorted(found)


def kept(usable, which):
    """The rungs a preset keeps of the ladder of ``usable`` CPUs."""
    if which == ALL:
        return rungs(usable)
    if which == USABLE:
        return [usable]
    return sorted({usable, 2 * usable})


def chunk_for(items, workers, asked):
    """The chunk a pool of ``workers`` gets of ``items`` items: ``asked`` at
    most, and no fewer chunks than workers (1 where items are fewer).
    ``items`` None (a workload with no --items, whose batch is known only
    once made): ``asked``, and None for POOL_MAP."""
    if items is None:
        return None if asked == POOL_MAP else asked
    if asked == POOL_MAP:
        return max(1, math.ceil(items / (4 * workers)))
    return max(1, min(asked, items // workers))


@dataclass(frozen=True)
class Ladder:
    """A family's models over the ladder: ``form`` with ``{n}`` for the
    count and ``{chunk}`` for the chunk, ``chunk`` the one asked for at most
    (or POOL_MAP), ``rungs`` which of them, ``counts`` fixed counts kept
    beside them (IO workloads' process pools), in the order given while
    there is ``room``; ``most``: no count above it."""
    form: str
    rungs: str = ALL
    chunk: object = None
    counts: tuple[int, ...] = ()
    room: int | None = None

    def names(self, usable, items, most=None):
        counts = []
        for n in kept(usable, self.rungs) + list(self.counts):
            n = min(n, most) if most else n
            if n not in counts and (self.room is None or len(counts) < self.room):
                counts.append(n)
        counts.sort()
        chunks = [chunk_for(items, n, self.chunk) if self.chunk is not None else ""
                  for n in counts]
        return [self.form.format(n=n, chunk=chunk)
                for n, chunk in zip(counts, chunks) if chunk is not None]


def plural(count, noun):
    return "%d %s%s" % (count, noun, "" if count == 1 else "s")


def ladder(form, rungs=ALL, chunk=None, counts=(), room=None):
    return Ladder(form, rungs, chunk, tuple(counts), room)


@dataclass(frozen=True)
class StdlibDefault:
    """The pool the standard library makes unasked, on the run's machine
    and Python: ``ThreadPoolExecutor`` or ``ProcessPoolExecutor`` (Executor.map's
    chunk of 1, the version's start method)."""
    executor: str

    def names(self, count, most=None):
        """Its name on a machine whose Python counts ``count`` CPUs."""
        if self.executor == "ThreadPoolExecutor":
            return ["threads-%d-default" % min(32, count + 4)]
        if most:
            count = min(count, most)
        method = default_start_method()
        return ["processes-%d-chunk-1%s-default" % (
            count, "" if method == base_start_method() else "-" + method)]


THREAD_POOL_DEFAULT = StdlibDefault("ThreadPoolExecutor")
PROCESS_POOL_DEFAULT = StdlibDefault("ProcessPoolExecutor")


def base_start_method():
    """The start method that process pools' names leave out (models/processes.py)."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def default_start_method(version=None, platform=None):
    """multiprocessing's default on the running Python: fork on Linux up to
    3.13, forkserver from 3.14; spawn on macOS and Windows."""
    version = version or sys.version_info[:2]
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "forkserver" if version >= (3, 14) else "fork"
    return "spawn" if platform in ("darwin", "win32") else "fork"


def stdlib_cpus(machine, version=None):
    """The CPU count the running Python's pools read: ``os.cpu_count()`` up
    to 3.12, ``os.process_cpu_count()`` (the affinity set) from 3.13.
    Neither reads a quota."""
    version = version or sys.version_info[:2]
    return machine.affinity if version >= (3, 13) else machine.logical


# -- the run's machine -------------------------------------------------------------

# The usable CPUs, read once: process state (a run's machine does not change).
_detected = []


def machine(args):
    """The ``Cpus`` of the run: the master's reading, passed to its workers
    (``--usable-cpus``), else read in this process (once)."""
    text = getattr(args, "usable_cpus", None)
    if text:
        return machine_cpus.decode(text)
    if not _detected:
        _detected.append(machine_cpus.detect())
    return _detected[0]


def sized_for(args):
    """The usable CPUs the ladders are sized for: ``--cpus``, else the machine's."""
    return getattr(args, "cpus", None) or machine(args).usable


def resolve(entries, args, items, most=None):
    """A preset's model list with its ladders and defaults made names for
    this run: ``items`` per batch, at most ``most`` workers in a pool. A
    name whose work an earlier one does (``threads-6`` and
    ``threads-6-default``) is left out: the first stands."""
    usable = sized_for(args)
    counted = getattr(args, "cpus", None) or stdlib_cpus(machine(args))
    names, done = [], set()
    for entry in entries:
        if isinstance(entry, StdlibDefault):
            found = entry.names(counted, most)
        elif isinstance(entry, Ladder):
            found = entry.names(usable, items, most)
        else:
            found = [entry]
        for name in found:
            if same_work(name) not in done:
                done.add(same_work(name))
                names.append(name)
    return names


def same_work(name):
    """What a model name runs: ``-default`` is a label, not other work."""
    return name[:-len("-default")] if name.endswith("-default") else name


def describe(args):
    """One line for --list: the ladder, and what it was sized from."""
    machine_ = machine(args)
    usable = sized_for(args)
    source = ("--cpus %d" % usable if getattr(args, "cpus", None)
              else "this machine: %s" % machine_.describe())
    return "worker counts for %s (%s): ladder %s; the default and quick presets keep %s" % (
        plural(usable, "usable CPU"), source, ", ".join(map(str, rungs(usable))),
        ", ".join(map(str, kept(usable, DEFAULT))))
