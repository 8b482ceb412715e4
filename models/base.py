"""The contract every concurrency model fulfils: what a plugin author reads.

A model knows how to run a batch of items; it never looks inside them. It
receives a picklable sync function, a coroutine function and the items, and
returns one result per item, in item order. It also states, in the
benchmark's metadata, what the report needs to know of it (how many items it
keeps in progress, how many can compute at once, in how many interpreters,
which form of the item it calls), so that the report names no model.

The machinery the built-in models share lives beside it: ``pools`` (a
model that maps items on an executor, fresh or reused) and ``loops`` (event
loops made, run and closed alike for asyncio and uvloop, and tasks gathered
once per pass of the loop).
"""

import re
import time

from concbench import schema
from concbench.item_stamps import clock as latency_clock


class ModelError(ValueError):
    """A model name that does not parse, or parameters out of range."""


class BatchLost(RuntimeError):
    """A batch that could not finish for a cause outside the run (a cluster
    of the user's that went away): the batch fails in one line, and where
    the model runs on something outside the run (``Model.outside``), its
    row alone ends; the other rows go on."""


class Model:
    family = ""
    # OWNS matches every name of the family, malformed ones included; PATTERN
    # matches the well-formed ones, whose named groups go to __init__; FORM
    # describes them for error messages.
    OWNS = None
    PATTERN = None
    FORM = ""
    # What the timed region holds; recorded in metadata and in docs/models.md.
    timed = "the model's run() over every item of the batch"
    # Which form of the item the model calls ("sync" or "async"), and
    # whether items run in other processes than the one that prepared them.
    item_side = "sync"
    runs_in_subprocesses = False
    # The kind of event loop an async model runs its items on.
    loop = "asyncio"
    # True for the model every other model of a workload is compared with.
    is_reference = False
    # Where an item's latency starts (concbench.item_stamps): "item", its own
    # call, for models that take one item after another; "batch", the
    # batch's start, for models handed every item at once.
    latency_from = "batch"
    # Preset name -> model names of this family that join every workload's
    # list in that preset (a workload's own lists are in its PRESETS).
    PRESETS = {}
    # Whether it runs on something the run neither starts nor stops (a
    # user's cluster): a failed batch then ends its row, not the run.
    outside = False

    @classmethod
    def parse(cls, name):
        """Return a model for ``name``, None if it is another family's name.

        Raise ModelError when the name is of this family but malformed.
        """
        if not re.fullmatch(cls.OWNS, name):
            return None
        match = re.fullmatch(cls.PATTERN, name)
        if match is None:
            raise ModelError("model %r: expected %s" % (name, cls.FORM))
        try:
            return cls(**{key: value for key, value in match.groupdict().items()
                          if value is not None})
        except ModelError as exc:
            raise ModelError("model %r: %s" % (name, exc)) from None

    @property
    def name(self):
        raise NotImplementedError

    @property
    def concurrency(self):
        """How many items can be in progress at once (None: unbounded)."""
        return 1

    @property
    def parallelism(self):
        """How many items can compute at once when they release the GIL."""
        return 1

    @property
    def interpreters(self):
        """How many interpreters, each with its own GIL, run items."""
        return 1

    def scaling(self):
        """(what is counted, in the plural and singular, the series' label)
        when the model is one point of a series that varies only its
        parallelism (threads-2, threads-4, ...), else None."""
        return None

    def in_flight(self, items):
        """The most items in progress at once in a batch of ``items``."""
        return min(items, self.concurrency or items)

    def supports(self, workload):
        """Why this model cannot run ``workload`` ("" if it can)."""
        return ""

    def configure(self, args):
        """Take what the run's options say of this model (a cluster's
        address); most models need none."""

    @classmethod
    def check_run(cls, args, models):
        """The master's check, once, before any benchmark, of this family's
        ``models`` in the run: {name pattern: why those are left out} (a
        library that cannot run here); ModelError in one line for what
        stops the run (a cluster it cannot reach)."""
        return {}

    def metadata(self):
        meta = {schema.MODEL: self.name, schema.MODEL_FAMILY: self.family,
                schema.TIMED: self.timed, schema.ITEM_SIDE: self.item_side,
                schema.LATENCY_FROM: self.latency_from,
                schema.CONCURRENCY: self.concurrency or "unbounded",
                schema.PARALLELISM: self.parallelism,
                schema.INTERPRETERS: self.interpreters}
        scaling = self.scaling()
        if scaling:
            meta[schema.SCALING], meta[schema.SCALING_UNIT], series = scaling
            if series:
                meta[schema.SCALING_SERIES] = series
        return meta

    def libraries(self):
        return []

    def run_labels(self):
        """Words about the batch just run that only running it tells (which
        GIL a pool's interpreters had), for the run's metadata."""
        return {}

    def open(self):
        """Create what outlives a batch (a reused pool); not timed."""

    def prime(self, sync_fn, async_fn, item):
        """One item of this model's side, after open() and the workload's
        open(), untimed and unchecked: what a library does on its first call
        only (aiohttp's import; anyio under httpx; netrc under requests; the
        IDNA codec) is then on no batch's clock, as it is on no batch's but
        the first of a worker (measured in ddfe756: git show ddfe756). Items
        that run in other processes are left to them: a forked pool inherits
        open()'s imports, and an item run here would hold this process's own
        connection."""
        if self.runs_in_subprocesses:
            return
        if self.item_side == "sync":
            sync_fn(item)
            return
        from .loops import run_on_new_loop
        run_on_new_loop(self.loop, async_fn, lambda: async_fn(item))

    def close(self):
        """Release what open() created."""

    def run(self, sync_fn, async_fn, items, clock=None):
        """Results of every item, in item order. ``clock`` is the batch's
        BatchClock: only models that run event loops touch it."""
        raise NotImplementedError


class BatchClock:
    """The timed region of one batch.

    time_batches starts it just before Model.run and stops it just after. An
    event-loop model whose async item keeps resources per loop (``open_loop``:
    pooled database connections) restarts it once every loop has opened them,
    and stops it before they close, so that they stay outside the timed
    region as the workload promises.
    """

    def __init__(self):
        self.began = latency_clock()    # where a "batch" item latency starts
        self.started = time.perf_counter()
        self.stopped = None

    def restart(self):
        self.began = latency_clock()
        self.started = time.perf_counter()

    def stop(self):
        if self.stopped is None:
            self.stopped = time.perf_counter()

    @property
    def elapsed(self):
        return self.stopped - self.started


def positive(what, value):
    value = int(value)
    if value < 1:
        raise ModelError("%s must be at least 1, not %d" % (what, value))
    return value
