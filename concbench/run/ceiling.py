"""The machine's own ceiling: what N processes at once can give on it.

A model well short of Nx on N workers may not scale, or the machine may not:
SMT siblings share a core, turbo falls as cores wake, a cgroup quota cuts
the CPU time, a neighbour takes a core. The ceiling tells them apart. For
each rung N of the ladder (``concbench.ladder``) above 1, N copies of one
fixed piece of pure-Python work, sharing nothing, run at once on a pool of
N processes made before the timed batches (and on N threads where the
build has no GIL), against the same N copies one after the other on a pool
of one, in turn in the same worker (pairing "worker", as CPU rows pair with
sequential). The machine's speedup at N is the ratio: N x time(1) / time(N).
A perfect machine of U usable CPUs gives N up to U, and U beyond.

Each rung is a pyperf benchmark of its own (``ceiling/processes-4-chunk-1-reuse``),
run in the preset's rounds like any row and charged to the budget, but it is
no row of the tables and in no race: its metadata says so (``schema.CEILING``),
and the report reads it for the header and the scaling chart alone.
"""

from concbench import ladder, schema
from concbench.workloads.base import ITEMS, Option, Workload

# The loop's length, in iterations: long enough that a batch's dispatch
# hardly counts beside one copy (measured in 48c4c38: git show 48c4c38).
WORK = Option("work", "--ceiling-work", "iterations of the ceiling's loop", int, 1, 10**9,
              default=400_000)
# Batches per worker of a rung (and its warm-up): a batch is N copies at
# once, tens of milliseconds, and the worker's start costs more than three.
VALUES = 3
# The ceiling's benchmarks' workload label, which no workload may take.
LABEL = "ceiling"
# What --list says of the ceiling's benchmarks.
LIST_NOTE = ("ceiling/...: the machine's own speedup at each rung (N copies of one "
             "fixed loop at once, against one process running them in turn): no row, "
             "in no race (--no-ceiling leaves it out)")


def spin(iterations):
    """The fixed work: integer arithmetic in a loop, touching no shared state."""
    value = 0
    for step in range(iterations):
        value = (value * 31 + step) & 0xFFFFFFFF
    return value


class Ceiling(Workload):
    """N copies of ``spin`` at once: one per worker of the rung."""

    name = LABEL
    kind = "cpu"
    OPTIONS = (ITEMS.with_default(1), WORK)
    REPORTED = (schema.ITEMS_PER_BATCH, WORK.param)
    async_form = "sync item called inside a coroutine"

    def __init__(self, family, **params):
        super().__init__(**params)
        self.family = family

    def sync_function(self):
        return spin

    def make_items(self):
        return [self.params[WORK.param]] * self.params[ITEMS.param]

    def reference(self, items):
        # Every item is the same: one computed, the rest copied.
        return [spin(items[0])] * len(items) if items else []

    def metadata(self):
        meta = super().metadata()
        meta[schema.CEILING] = self.family
        return meta


def wanted(args, kinds):
    """Whether the run measures the ceiling: never without the per-run
    figures (--no-run-figures), in which its pairs are recorded; --ceiling,
    --no-ceiling, else
    a preset that does (``PRESETS[...]["ceiling"]``) when the selection is
    not narrowed by --model or --rate and has a CPU workload (``kinds``:
    the selected workloads' kinds)."""
    from concbench.run.presets import PRESETS

    if getattr(args, "no_ceiling", False):
        return False
    if getattr(args, "no_run_figures", False):
        # Its pairs are recorded in the run's figures.
        return False
    if getattr(args, "ceiling", False):
        return True
    return bool(PRESETS[args.preset].get("ceiling") and not args.model
                and not getattr(args, "rate", None) and "cpu" in kinds)


def families(args):
    """The pools the ceiling runs in: processes always; threads too where
    the workers run without the GIL (a free-threaded build, unless --gil on
    or PYTHON_GIL=1)."""
    from concbench.models.processes import Processes
    from concbench.models.threads import Threads
    from concbench.run.suite import expected_gil

    return (Processes,) if expected_gil(args) else (Processes, Threads)


def pool(family, count):
    """A pool of ``count`` workers made before the timed batches, one item a task."""
    return family(count, chunk=1, lifetime="reuse")


def benches(args):
    """The ceiling's benchmarks for this run's ladder: one per rung above 1
    and family, in rung order, each paired in its worker with a pool of one."""
    from concbench.run.cell import Cell

    found = []
    for family in families(args):
        alone = pool(family, 1).name
        for count in ladder.rungs(ladder.sized_for(args)):
            if count > 1:
                found.append(Cell(Ceiling(family.family, items=count), pool(family, count),
                                   "worker", record=False, reference=alone))
    return found


